"""``ledger reconcile FILE``: external meters (jackpot controller, cage, SP9 capital book)
against the ledger's views, line by line."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from cli.commission import cutoff_option
from cli.context import DbOption, opened
from cli.contract import fail, state
from ledger.domain.money import text as amount_text
from projections.bank import BankView
from projections.commission import CommissionView
from projections.gaming_day import CUTOFF_SETTING
from projections.house import HouseView
from projections.jackpot import JackpotView
from projections.reconcile import (
    SCHEMA_VERSION,
    LedgerFigures,
    Meter,
    MeterFileError,
    Outcome,
    Reconciler,
    exit_code,
    iter_meters,
)
from projections.updater import read_views


def _meters(file: Path) -> Iterator[Meter]:
    """The file's meters, read as a stream; exit 2 naming the file (and line and field)."""
    try:
        with open(file, encoding="utf-8", newline="") as stream:
            yield from iter_meters(stream)
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror or exc}")
    except MeterFileError as exc:
        fail(f"{file}: {exc}")


def _json_stream(cutoff: int, outcomes: Iterator[Outcome], reconciler: Reconciler) -> int:
    """One JSON object (docs/schemas/reconcile.json), written line by line as compared."""
    write = sys.stdout.write
    write(f'{{\n "schema_version": {SCHEMA_VERSION},\n "cutoff_hour": {cutoff},\n "lines": [')
    state.json_printed = True
    for number, outcome in enumerate(outcomes):
        write(("," if number else "") + "\n  " + json.dumps(outcome.to_json(), ensure_ascii=False))
    missing = reconciler.missing()
    write(
        '\n ],\n "missing_from_file": ['
        + ",".join("\n  " + json.dumps(m.to_json(), ensure_ascii=False) for m in missing)
        + "\n ]"
    )
    counts = {
        "matched": reconciler.counts["matched"],
        "variance": reconciler.counts["variance"],
        "unknown": reconciler.counts["unknown"],
        "missing": len(missing),
    }
    write("".join(f',\n "{k}": {v}' for k, v in counts.items()) + "\n}\n")
    return len(missing)


def _text_stream(outcomes: Iterator[Outcome], reconciler: Reconciler) -> int:
    write = sys.stdout.write
    write(
        f"{'line':>4}  {'status':<8} {'what':<21} {'where':<8} {'when':<25} "
        f"{'amount':>13} {'ledger':>13} {'difference':>12}\n"
    )
    for o in outcomes:
        m = o.meter
        ledger = "-" if o.ledger is None else amount_text(o.ledger)
        diff = "-" if o.difference is None else amount_text(o.difference)
        write(
            f"{m.line:>4}  {o.status:<8} {m.what:<21} {m.where:<8} {m.when:<25} "
            f"{amount_text(m.amount):>13} {ledger:>13} {diff:>12}"
            + (f"  {o.reason}" if o.status != "matched" else "")
            + "\n"
        )
    missing = reconciler.missing()
    if missing:
        write("missing from the file (the ledger has these figures):\n")
    for gap in missing:
        write(
            f"   -  missing  {gap.what:<21} {gap.where:<8} {gap.day.isoformat():<25} "
            f"{'-':>13} {amount_text(gap.ledger):>13} {gap.ledger_currency:>12}\n"
        )
    counts = reconciler.counts
    write(
        f"{counts['matched']} matched, {counts['variance']} variance, {counts['unknown']} "
        f"unknown, {len(missing)} missing\n"
    )
    return len(missing)


def reconcile_command(
    file: Annotated[Path, typer.Argument(help="CSV with the header what,where,when,amount,currency[,note].")],
    db: DbOption = None,
    cutoff_hour: Annotated[
        int | None,
        typer.Option(help=f"Gaming-day cut-off hour in Macau time (default: {CUTOFF_SETTING} or 6)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Compare each figure of FILE (commission, hold, turnover per table and gaming day; SP9
    bank commission and capital; jackpot balance, contributions and awards per pool) with the
    ledger's view at that point: matched, variance or unknown per line; then every table or
    pool the ledger has a figure for on a day the file covers and the file left out (missing).

    The file is read as a stream, twice: checked whole first (nothing is compared if a line
    cannot be read), then compared line by line.

    Exit code 0: no variance, nothing missing. 1: a variance, or a figure missing from the
    file. 2: the file cannot be read (line and field given), has no meter line, or bad usage.
    """
    cutoff = cutoff_option(cutoff_hour)
    if sum(1 for _ in _meters(file)) == 0:
        fail(f"{file}: no meter line under the header: nothing to compare")
    with opened(db) as app:
        commission, house, jackpot, bank = (
            got.rows for got in read_views(app, [CommissionView(), HouseView(), JackpotView(), BankView()])
        )  # one pass, read-only
    reconciler = Reconciler(LedgerFigures(commission, house, jackpot, bank, cutoff))
    outcomes = (reconciler.compare(m) for m in _meters(file))
    missing = _json_stream(cutoff, outcomes, reconciler) if as_json else _text_stream(outcomes, reconciler)
    sys.stdout.flush()
    raise typer.Exit(code=exit_code(reconciler.counts["variance"], missing))


reconcile_command.__name__ = "reconcile"
ORDER = 64
COMMANDS = [reconcile_command]
