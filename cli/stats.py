"""``ledger stats``: is each wheel, shaker, shoe and wall fair, and which tables and croupiers
make the most errors (docs/SURVEILLANCE.md)."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from cli.commission import cutoff_option
from cli.context import DbOption, opened
from cli.contract import EXIT_USAGE, fail
from cli.render import out, print_json
from ledger.domain.money import text as amount_text
from ledger.feed.types import GAME_KEYS
from ledger.report.surveillance import stats_page
from ledger.stats.survey import DEFAULT_ALPHA, Entry, StatsQuery, StatsReport, survey

UNDECIDED = 10
"""Undecided tests printed at most (the closest to deciding first)."""


def stats(
    db: DbOption = None,
    table: Annotated[str | None, typer.Option(help="Only this table.")] = None,
    game: Annotated[str | None, typer.Option(help="Only this game: " + " ".join(GAME_KEYS) + ".")] = None,
    start: Annotated[
        str | None, typer.Option("--from", metavar="YYYY-MM-DD", help="First gaming day (inclusive).")
    ] = None,
    end: Annotated[
        str | None, typer.Option("--to", metavar="YYYY-MM-DD", help="Last gaming day (inclusive).")
    ] = None,
    alpha: Annotated[
        float,
        typer.Option(
            min=1e-9,
            max=0.5,
            help="Family-wise level per piece of equipment over the "
            "period: flagged when the corrected p-value (discrete weighted "
            "Bonferroni) is at most it (the nightly CUSUM has its own stated "
            "false-alarm rate).",
        ),
    ] = DEFAULT_ALPHA,
    cutoff_hour: Annotated[
        int | None,
        typer.Option(
            "--cutoff-hour",
            min=0,
            max=23,
            help="Gaming day cut-off hour, Macau time (default: LEDGER_GAMING_DAY_CUTOFF or 6).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            metavar="FILE",
            help="Also write an HTML page: pockets on the wheel, dice faces, the sequential paths.",
        ),
    ] = None,
) -> None:
    """Is each wheel, dice shaker, card shoe and Mah-Jong wall fair, and which tables and
    croupiers make more errors than the others.

    Over the period, one family of tests per piece of equipment (discrete weighted
    Bonferroni): the hottest pocket, the hottest sector of the wheel, the hottest face of one
    die and of all dice, a missing or extra card per shoe and deck or tile per wall,
    chi-square and runs for the rest. Night by night, a CUSUM per wheel, shaker, shoe and wall
    with a stated false-alarm rate. Error rates per table and
    croupier tested with the rounds each dealt. One streaming pass over the store.

    Exit code 0: nothing flagged. 1: some equipment, sequential alarm or error rate flagged.
    2: no store, nothing selected, or bad usage.
    """

    if game is not None and game not in GAME_KEYS:
        _usage(f"--game must be one of {' '.join(GAME_KEYS)}")
    first, last = _date(start, "--from"), _date(end, "--to")
    if first and last and first > last:
        _usage("--from is after --to")
    if html is not None and not html.parent.is_dir():
        _usage(f"--html {html}: no such folder {html.parent}")
    query = StatsQuery(
        table=table, game=game, start=first, end=last, alpha=alpha, cutoff_hour=cutoff_option(cutoff_hour)
    )
    with opened(db) as app:
        report = survey(app, query)
    if report.rounds == 0:
        _usage("no closed round in the store matches the selection")
    if html is not None:
        _write_html(html, report)
    if as_json:
        print_json(report.to_json())
    else:
        _print(report)
    raise typer.Exit(code=1 if report.anything_flagged else 0)


def _write_html(path: Path, report: StatsReport) -> None:
    try:
        path.write_text(stats_page(report), encoding="utf-8")
    except OSError as exc:
        _usage(f"--html {path}: cannot write ({exc.strerror or exc})")


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
    _line(
        f"{report.rounds} rounds, {period}: {len(report.entries)} tests ({len(valid)} with "
        f"enough outcomes), one family per piece of equipment, discrete weighted Bonferroni, "
        f"alpha {q.alpha:g}"
    )
    flagged = report.flagged_equipment()
    if not flagged:
        _line("no equipment flagged over the period")
    for table, equipment, entries in flagged:
        _line(f"FLAGGED {table} {equipment}:")
        for e in entries:
            _line("  " + _entry(e))
    undecided = sorted(
        (
            (e.more_needed(q.alpha), e)
            for e in report.entries
            if e.more_needed(q.alpha) and (e.p_adjusted or 1.0) < 0.5
        ),
        key=lambda pair: pair[0] or 0,
    )[:UNDECIDED]
    if undecided:
        _line("undecided (leaning towards a fault, not flagged):")
        for more, e in undecided:
            _line(
                f"  {e.table} {e.equipment} {_entry(e)}: about {more:,} more "
                f"{'spins' if e.equipment == 'wheel' else 'throws'} to decide"
            )
    _sequential(report)
    _rates(report)


def _entry(e: Entry) -> str:
    r = e.result
    d = r.detail
    if d:
        low, high = d["effect_ci"]
        return (
            f"{e.test}: {e.where()}, {d['observed']} observed vs {float(d['expected']):.1f} "
            f"expected, effect {float(d['effect']):.2f}x (95 % CI {low:.2f}-{high:.2f}), "
            f"p {r.p_value:.2g}, adjusted {_adjusted(e):.2g}"
        )
    return (
        f"{e.test}: {r.method} {r.statistic:.2f}"
        + (f" df {r.df}" if r.df is not None else "")
        + f", n {r.n}, p {r.p_value:.3g}, adjusted {_adjusted(e):.3g}"
    )


def _adjusted(e: Entry) -> float:
    """The adjusted p-value (1 when the test took no part in the correction)."""
    return 1.0 if e.p_adjusted is None else e.p_adjusted


def _sequential(report: StatsReport) -> None:
    pieces = report.sequential
    if not pieces:
        return
    _line(
        f"sequential (CUSUM night by night, {len(pieces)} wheels, shakers, shoes and walls): "
        + (
            ", ".join(
                f"ALARM {s.table} {s.equipment} on {s.cusum.alarm} ({s.where(s.cusum.path[-1][2])})"
                for s in report.alarms
            )
            or "no alarm"
        )
    )
    prop = report.property_false_alarms()
    kinds = {s.equipment for s in pieces} | {"wheel", "shaker"}
    for kind in (k for k in ("wheel", "shaker", "shoe", "wall") if k in kinds):
        p = prop[kind]
        _line(
            f"  a fair {kind}: one false alarm in {p['in_control_nights']:,.0f} nights "
            f"({p['in_control_years']} years) at its nominal volume; a property of 500 "
            f"{kind}s: {p['per_night_at_500']} a night, {p['per_30_nights_at_500']} a month"
        )


def _rates(report: StatsReport) -> None:
    for title, rates in (("tables", report.tables), ("croupiers", report.croupiers)):
        _line(
            f"errors by {title[:-1]} (rounds with an error; exact test against the others of "
            f"the same game, Holm):"
        )
        sizes: dict[str, int] = {}
        for rate in rates:
            sizes[rate.group] = sizes.get(rate.group, 0) + 1
        for rate in rates:
            t = rate.test
            codes = ", ".join(f"{c} {n}" for c, n in sorted(rate.by_code.items())) or "none"
            money = "; ".join(
                f"{cur} " + ", ".join(f"{k} {amount_text(v)}" for k, v in m.items() if v)
                for cur, m in sorted(rate.money.items())
            )
            test = ""
            if t is not None:
                test = (
                    f" rate {t.rate:.2%} (CI {t.rate_ci[0]:.2%}-{t.rate_ci[1]:.2%}), "
                    f"expected {t.expected:.1f}, p {t.p_value:.2g}, adjusted "
                    f"{t.p_adjusted:.2g}, rank {t.rank} of {sizes[rate.group]} in {rate.group} "
                    f"(could be {t.rank_range[0]}-{t.rank_range[1]})" + (" FLAGGED" if t.flagged else "")
                )
            _line(
                f"  {rate.key:<16} {rate.error_rounds} of {rate.rounds} rounds,{test}; "
                f"{rate.per_1000:.2f} findings per 1,000 ({codes})" + (f"  {money}" if money else "")
            )


def _line(text: str) -> None:
    out.print(text, markup=False)


ORDER = 38
COMMANDS = [stats]
