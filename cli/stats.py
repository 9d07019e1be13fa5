"""``ledger stats``: is each wheel, shaker, shoe and wall fair, and which tables and croupiers
make the most errors (docs/SURVEILLANCE.md)."""

from __future__ import annotations

from datetime import date
from typing import Annotated, NoReturn

import typer

from cli.commission import cutoff_option
from cli.context import DbOption, opened
from cli.contract import EXIT_USAGE, fail
from cli.render import out, print_json
from ledger.feed.types import GAME_KEYS
from ledger.stats.survey import DEFAULT_ALPHA, StatsQuery, StatsReport, survey


def stats(
    db: DbOption = None,
    table: Annotated[str | None, typer.Option(help="Only this table.")] = None,
    game: Annotated[str | None, typer.Option(help="Only this game: " + " ".join(GAME_KEYS) + ".")
                    ] = None,
    start: Annotated[str | None, typer.Option(
        "--from", metavar="YYYY-MM-DD", help="First gaming day (inclusive).")] = None,
    end: Annotated[str | None, typer.Option(
        "--to", metavar="YYYY-MM-DD", help="Last gaming day (inclusive).")] = None,
    alpha: Annotated[float, typer.Option(
        min=1e-9, max=0.5, help="Family-wise level per piece of equipment: flagged when the "
                                "Holm-corrected p-value is below it.")] = DEFAULT_ALPHA,
    cutoff_hour: Annotated[int | None, typer.Option(
        "--cutoff-hour", min=0, max=23, help="Gaming day cut-off hour, Macau time (default: "
                                             "LEDGER_GAMING_DAY_CUTOFF or 6).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Goodness of fit of every wheel, dice shaker, card shoe and Mah-Jong wall against the fair
    distribution (per gaming day and over the period, Holm-corrected per piece of equipment),
    runs tests for streaks, and findings per 1,000 rounds and money involved per table and per
    croupier, ranked. One streaming pass over the store.

    Exit code 0: nothing flagged. 1: some equipment flagged. 2: no store, nothing selected, or
    bad usage.
    """
    if game is not None and game not in GAME_KEYS:
        _usage(f"--game must be one of {' '.join(GAME_KEYS)}")
    first, last = _date(start, "--from"), _date(end, "--to")
    if first and last and first > last:
        _usage("--from is after --to")
    query = StatsQuery(table=table, game=game, start=first, end=last, alpha=alpha,
                       cutoff_hour=cutoff_option(cutoff_hour))
    with opened(db) as app:
        report = survey(app, query)
    if report.rounds == 0:
        _usage("no closed round in the store matches the selection")
    if as_json:
        print_json(report.to_json())
    else:
        _print(report)
    raise typer.Exit(code=1 if report.flagged else 0)


def _usage(message: str) -> NoReturn:
    """One line on stderr (and the error object under ``--json``), exit 2."""
    fail(message, EXIT_USAGE)


def _date(text: str | None, option: str) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        _usage(f"{option} {text!r} is not a date like 2026-11-20")


def _print(report: StatsReport) -> None:
    q = report.query
    period = f"{q.start or 'first day'} to {q.end or 'last day'}"
    valid = [e for e in report.entries if e.result.valid]
    out.print(f"{report.rounds} rounds, {period}: {len(report.entries)} tests "
              f"({len(valid)} with enough outcomes), Holm-corrected per piece of equipment, "
              f"alpha {q.alpha:g}", markup=False)
    flagged = report.flagged_equipment()
    if not flagged:
        out.print("no equipment flagged", markup=False)
    for table, equipment, entries in flagged:
        out.print(f"FLAGGED {table} {equipment}:", markup=False)
        for e in entries:
            r = e.result
            out.print(f"  {e.test} {e.day or 'period'}: {r.method} {r.statistic:.2f}"
                      + (f" df {r.df}" if r.df is not None else "")
                      + f", n {r.n}, p {r.p_value:.3g}, corrected {e.p_adjusted:.3g}", markup=False)
    for title, rates in (("tables", report.tables), ("croupiers", report.croupiers)):
        out.print(f"findings per 1,000 rounds, {title}:", markup=False)
        for rate in rates:
            codes = ", ".join(f"{c} {n}" for c, n in sorted(rate.by_code.items())) or "none"
            money = "; ".join(f"{cur} " + ", ".join(f"{k} {v}" for k, v in m.items() if v)
                              for cur, m in sorted(rate.money.items()))
            out.print(f"  {rate.key:<16} {rate.per_1000:8.2f}  ({rate.findings} in {rate.rounds}"
                      f" rounds: {codes})" + (f"  {money}" if money else ""), markup=False)


ORDER = 38
COMMANDS = [stats]
