"""``ledger commission``: commission recorded against commission due, per gaming day."""

from __future__ import annotations

import csv
import sys
from datetime import date
from typing import Annotated

import typer

from cli.context import DbOption, current_view, opened
from cli.contract import fail
from cli.render import out, print_json
from ledger.domain.errors import UsageError
from ledger.report.numbers import text
from projections.commission import (
    GROUPINGS,
    CommissionReport,
    CommissionView,
    Grouping,
    commission_report,
)
from projections.export import csv_cell
from projections.gaming_day import CUTOFF_SETTING, check_cutoff, default_cutoff


def parse_day(value: str | None, option: str) -> date | None:
    """A ``YYYY-MM-DD`` option, or exit 2 naming the option."""
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        fail(f"{option} takes a gaming day as YYYY-MM-DD, not {value!r}")


def cutoff_option(value: int | None) -> int:
    """The cut-off hour given, else the setting; exit 2 if invalid."""
    try:
        return default_cutoff() if value is None else check_cutoff(value)
    except UsageError as exc:
        fail(f"{exc}")


def commission(
    db: DbOption = None,
    by: Annotated[str, typer.Option(help="Group each gaming day by: " + ", ".join(GROUPINGS) + ".")] = "day",
    day_from: Annotated[str | None, typer.Option("--from", help="First gaming day, YYYY-MM-DD.")] = None,
    day_to: Annotated[str | None, typer.Option("--to", help="Last gaming day, YYYY-MM-DD.")] = None,
    cutoff_hour: Annotated[
        int | None,
        typer.Option(help=f"Gaming-day cut-off hour in Macau time (default: {CUTOFF_SETTING} or 6)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="Print CSV lines.")] = False,
) -> None:
    """Commission the tables recorded against commission due by the rules, and the difference,
    per gaming day (Macau time, cut-off hour). Commission whose due cannot be derived (a round
    without an outcome) is shown apart as unjudged, never as 0 due.

    Exit code 0: recorded equals due on every judged item. 1: a difference. 2: usage error.
    """
    if by not in GROUPINGS:
        fail(f"--by must be one of {', '.join(GROUPINGS)}")
    if as_json and as_csv:
        fail("choose --json or --csv, not both")
    first, last = parse_day(day_from, "--from"), parse_day(day_to, "--to")
    cutoff = cutoff_option(cutoff_hour)
    with opened(db) as app:
        rows = current_view(app, CommissionView(), note=not (as_json or as_csv))
    grouping: Grouping = by
    report = commission_report(rows, by=grouping, cutoff_hour=cutoff, day_from=first, day_to=last)
    if as_json:
        print_json(report.to_json())
    elif as_csv:
        _print_csv(report)
    else:
        _print_text(report)
    raise typer.Exit(code=1 if any(t.difference for t in report.totals) else 0)


def _print_csv(report: CommissionReport) -> None:
    """CSV for spreadsheets: the grouping's own column name (``table``, ``game``, ``player``;
    none for ``--by day``), a line per gaming day and group, then one ``total`` line per
    currency. Player ids and table codes go through the export's spreadsheet-safe cells."""
    group = [] if report.by == "day" else [report.by]
    fields = [
        "gaming_day",
        *group,
        "currency",
        "rounds",
        "items",
        "recorded",
        "due",
        "difference",
        "unjudged_recorded",
        "unjudged_items",
    ]
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(fields)
    for line in report.lines:
        row = line.to_json()
        writer.writerow(
            [
                row["gaming_day"],
                *[csv_cell(line.group, "id") for _ in group],
                *[row[f] for f in fields[1 + len(group) :]],
            ]
        )
    for total in report.totals:
        row = total.to_json()
        writer.writerow(["total", *["" for _ in group], *[row[f] for f in fields[1 + len(group) :]]])


def _print_text(report: CommissionReport) -> None:
    head = (
        f"{'gaming day':<10}  {report.by:<12} {'cur':<3} {'rounds':>6} {'recorded':>12} "
        f"{'due':>12} {'difference':>11} {'unjudged':>12}"
    )
    out.print(f"commission by gaming day (cut-off {report.cutoff_hour:02d}:00 Macau time)", markup=False)
    out.print(head, markup=False)
    for line in report.lines:
        unjudged = f"{text(line.unjudged)} ({line.unjudged_items})" if line.unjudged_items else "-"
        out.print(
            f"{line.day.isoformat():<10}  {line.group:<12} {line.currency:<3} "
            f"{line.rounds:>6} {text(line.recorded):>12} {text(line.due):>12} "
            f"{text(line.difference):>11} {unjudged:>12}",
            markup=False,
        )
    for t in report.totals:
        unjudged = f"{text(t.unjudged)} ({t.unjudged_items})" if t.unjudged_items else "-"
        out.print(
            f"{'total':<10}  {'':<12} {t.currency:<3} {t.rounds:>6} "
            f"{text(t.recorded):>12} {text(t.due):>12} "
            f"{text(t.difference):>11} {unjudged:>12}",
            markup=False,
        )
    if any(t.unjudged_items for t in report.totals):
        out.print(
            "unjudged: commission recorded where the rules cannot yet say what was due "
            "(amount, items); not part of the difference",
            markup=False,
        )


ORDER = 61
COMMANDS = [commission]
