"""``ledger reconcile FILE``: external meters (jackpot controller, cage, SP9 capital book)
against the ledger's views, line by line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cli.commission import cutoff_option
from cli.context import DbOption, opened
from cli.contract import fail
from cli.render import out, print_json
from projections.bank import BankView
from projections.commission import CommissionView, money_text
from projections.gaming_day import CUTOFF_SETTING
from projections.house import HouseView
from projections.jackpot import JackpotView
from projections.reconcile import LedgerFigures, MeterFileError, read_meters, reconcile
from projections.updater import read_views


def reconcile_command(
    file: Annotated[Path, typer.Argument(help="CSV with the header what,where,when,amount,"
                                              "currency[,note].")],
    db: DbOption = None,
    cutoff_hour: Annotated[int | None, typer.Option(
        help=f"Gaming-day cut-off hour in Macau time (default: {CUTOFF_SETTING} or 6).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Compare each figure of FILE (commission, hold, turnover per table and gaming day; SP9
    bank commission and capital; jackpot balance, contributions and awards per pool) with the
    ledger's view at that point: matched, variance or unknown per line.

    Exit code 0: no variance. 1: a variance. 2: the file cannot be read (line and field given),
    has no meter line, or bad usage.
    """
    cutoff = cutoff_option(cutoff_hour)
    try:
        meters = read_meters(file.read_text(encoding="utf-8"))
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror or exc}")
    except UnicodeDecodeError:
        fail(f"{file} is not UTF-8 text")
    except MeterFileError as exc:
        fail(f"{file}: {exc}")
    if not meters:
        fail(f"{file}: no meter line under the header: nothing to compare")
    with opened(db) as app:
        commission, house, jackpot, bank = (got.rows for got in read_views(
            app, [CommissionView(), HouseView(), JackpotView(), BankView()]))  # one pass, read-only
        figures = LedgerFigures(commission, house, jackpot, bank, cutoff)
    result = reconcile(meters, figures)
    if as_json:
        print_json(result.to_json())
    else:
        out.print(f"{'line':>4}  {'status':<8} {'what':<21} {'where':<8} {'when':<25} "
                  f"{'amount':>13} {'ledger':>13} {'difference':>12}", markup=False)
        for o in result.outcomes:
            m = o.meter
            ledger = "-" if o.ledger is None else money_text(o.ledger)
            diff = "-" if o.difference is None else money_text(o.difference)
            out.print(f"{m.line:>4}  {o.status:<8} {m.what:<21} {m.where:<8} {m.when:<25} "
                      f"{money_text(m.amount):>13} {ledger:>13} {diff:>12}"
                      + (f"  {o.reason}" if o.status != "matched" else ""), markup=False)
        out.print(f"{result.count('matched')} matched, {result.count('variance')} variance, "
                  f"{result.count('unknown')} unknown", markup=False)
    raise typer.Exit(code=result.exit_code)


reconcile_command.__name__ = "reconcile"
ORDER = 64
COMMANDS = [reconcile_command]
