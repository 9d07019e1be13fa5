"""``ledger report``: one round or one gaming day as a self-contained HTML page."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Annotated

import typer

from cli.context import DbOption, opened, round_target
from cli.contract import fail
from cli.render import err, out, print_json, working
from ledger.domain.errors import SealError
from ledger.proof.seal import Checkpoint, read_checkpoint
from ledger.report.day import summarize_day
from ledger.report.html_day import render_day
from ledger.report.html_round import render_round
from ledger.report.provenance import provenance
from ledger.report.surveillance import day_surveillance
from ledger.services.replay import replay_round


def report(
    target: Annotated[
        str | None, typer.Argument(metavar="[TABLE/ROUND]", help="One round, e.g. RL-01/000417.")
    ] = None,
    day: Annotated[
        str | None, typer.Option("--day", metavar="YYYY-MM-DD", help="A gaming day: one row per table.")
    ] = None,
    html: Annotated[
        Path | None, typer.Option("--html", metavar="FILE", help="Write the page to FILE.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the day's figures as JSON (with --day).")
    ] = False,
    cutoff_hour: Annotated[
        int | None,
        typer.Option(
            "--cutoff-hour",
            min=0,
            max=23,
            help="Gaming day cut-off hour, Macau time (default: "
            "LEDGER_GAMING_DAY_CUTOFF or 6), as for "
            "ledger commission.",
        ),
    ] = None,
    checkpoint: Annotated[
        Path | None,
        typer.Option(
            "--checkpoint",
            metavar="FILE",
            help="A signed checkpoint (ledger seal) to name in the "
            "page's footer, with whether the store holds it.",
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Write an inspector's report: one round (`ledger report TABLE/ROUND --html FILE`) or a
    day's summary per table (`ledger report --day D --html FILE`), as one self-contained HTML
    file (inline CSS and SVG, no script, no external resource).

    Exit code 0: written, no finding. 1: written, with findings. 2: no such round or bad usage.
    """
    if (target is None) == (day is None):
        _usage("give either TABLE/ROUND or --day YYYY-MM-DD")
    if html is None and not (as_json and day):
        _usage("give --html FILE" + (" or --json" if day else ""))
    sealed = _checkpoint(checkpoint)
    if target is not None:
        _round(target, html, db, sealed)
    assert day is not None
    _day(day, html, as_json, db, cutoff_hour, sealed)


def _checkpoint(path: Path | None) -> Checkpoint | None:
    if path is None:
        return None
    try:
        return read_checkpoint(str(path))
    except SealError as exc:
        _usage(str(exc))
        raise  # unreachable: _usage exits


def _usage(message: str) -> None:
    fail(f"{message}")


def _round(target: str, html: Path | None, db: str | None, sealed: Checkpoint | None) -> None:
    table, round_ = round_target(target)
    with opened(db) as app:
        try:
            result = replay_round(app, table, round_)
        except SealError as exc:  # an unreadable LEDGER_SEAL_PUBLIC_KEY
            _usage(str(exc))
            raise  # unreachable: _usage exits
        made_from = provenance(app, sealed)
    if result is None:
        _usage(f"no round {table}/{round_} in the store")
    assert result is not None and html is not None
    if result.note:
        err.print(f"note: {result.note}", markup=False)
    _write(html, render_round(result, made_from))
    out.print(
        f"wrote {html}: {result.round.game} round {table}/{round_}, {len(result.errors)} finding(s)",
        markup=False,
    )
    raise typer.Exit(code=1 if result.errors else 0)


def _day(
    text: str,
    html: Path | None,
    as_json: bool,
    db: str | None,
    cutoff_hour: int | None = None,
    sealed: Checkpoint | None = None,
) -> None:
    try:
        day = date.fromisoformat(text)
    except ValueError:
        _usage(f"--day {text!r} is not a date like 2026-11-20")
        raise  # unreachable: _usage exits
    with opened(db) as app, working(f"summarising {day.isoformat()}"):
        summary = summarize_day(app, day, cutoff_hour)
        watch = day_surveillance(app, day, cutoff_hour) if html is not None else None
        made_from = provenance(app, sealed)
    if summary.note:
        err.print(f"note: {summary.note}", markup=False)
    if html is not None:
        _write(html, render_day(summary, made_from, [watch] if watch is not None else []))
    if as_json:
        print_json(summary.to_json())
    elif html is not None:
        errors = sum(len(t.errors) for t in summary.tables)
        out.print(
            f"wrote {html}: {day.isoformat()}, {len(summary.tables)} table(s), "
            f"{sum(t.rounds for t in summary.tables)} round(s), {errors} finding(s)",
            markup=False,
        )
    raise typer.Exit(code=1 if summary.has_errors else 0)


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        _usage(f"cannot write {path}: {exc.strerror or exc}")


ORDER = 36
COMMANDS = [report]
