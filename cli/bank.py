"""``ledger bank``: the Super Pan 9 bank per table — runs, capital, layer results, breaches."""

from __future__ import annotations

import csv
import sys
from typing import Annotated

import typer

from cli.context import DbOption, current_view, one_format, only, opened
from cli.render import out, print_json
from ledger.store import LedgerApp
from projections.bank import BankView, bank_rounds, bank_runs, bank_tables
from projections.base import Row


def _bank_rows(app: LedgerApp, note: bool = True) -> dict[str, Row]:
    """Every row of the bank view, as of the end of the log (read-only)."""
    return current_view(app, BankView(), note=note).rows


def bank(
    table: Annotated[str | None, typer.Option("--table", help="Only this table, e.g. SP9-01.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="Print CSV, one line per round.")] = False,
    db: DbOption = None,
) -> None:
    """Show each Super Pan 9 table's bank: the banker runs, the capital posted each round, the
    bank's result and each layer's share and commission (due and recorded), the capital the
    banker must carry into its next round, and every breach found (RULES §1.6, §8.1 S6–S11).

    Exit code 0, or 2 on bad usage (an unknown --table, --json with --csv).
    """
    one_format(as_json, as_csv)
    with opened(db) as app:
        rows = _bank_rows(app, note=not (as_json or as_csv))
    tables = only(bank_tables(rows), table, "SP9 table")
    rounds = {t: bank_rounds(rows, t) for t in tables}
    runs = {t: bank_runs(rows, t) for t in tables}
    if as_json:
        print_json({"tables": [{**{k: v for k, v in s.items() if k != "state"},
                                "runs": runs[t], "rounds": rounds[t]}
                               for t, s in tables.items()]})
    elif as_csv:
        _csv(rounds)
    else:
        _text(tables, rounds, runs)


def _layers(row: Row) -> str:
    return " ".join(f"{x['party']}:{x['share']}/{x['commission']}" for x in row["layers"])


def _csv(rounds: dict[str, list[Row]]) -> None:
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["table", "round", "at", "voided", "banker", "run", "capital", "capacity",
                "result", "layers", "carry", "breaches"])
    for rows in rounds.values():
        for r in rows:
            w.writerow([r["table"], r["round"], r["at"], r["voided"], r["banker"], r["run"],
                        r["capital"], r["capacity"], r["result"], _layers(r), r["carry"],
                        " ".join(b["code"] for b in r["breaches"])])


def _text(tables: dict[str, Row], rounds: dict[str, list[Row]], runs: dict[str, list[Row]]) -> None:
    if not tables:
        out.print("no Super Pan 9 table in the store")
        return
    for t, s in tables.items():
        out.print(f"[bold]table {t}[/bold] ({s['currency']})  {s['rounds']} rounds, "
                  f"{s['runs']} banker runs, bank result {s['bank_result']}, bank commission "
                  f"{s['bank_commission']}, {s['breaches']} breaches")
        if s["banker"] is not None:
            out.print(f"  now: seat {s['banker']} in round {s['run']} of its run, capital "
                      f"{s['capital']}" + (f", must carry at least {s['carry']}"
                                           if s["carry"] else ""), markup=False)
        for run in runs[t]:
            out.print(f"  run seat {run['seat']}: {run['first_round']}–{run['last_round']} "
                      f"({run['rounds']} rounds{', extended' if run['extended'] else ''}), "
                      f"capital {run['capital_start']} → {run['capital_end']}, net "
                      f"{run['net']}", markup=False)
        for r in rounds[t]:
            head = (f"    {r['round']}  seat {r['banker']} run {r['run']}  capital "
                    f"{r['capital']} (K {r['capacity']})  W {r['result']}  {_layers(r)}"
                    + (f"  carry {r['carry']}" if r["carry"] else "")
                    + ("  VOIDED" if r["voided"] else ""))
            out.print(head, markup=False)
            for b in r["breaches"]:
                who = f" bet {b['bet']}" if b["bet"] else (f" {b['party']}" if b["party"] else "")
                out.print(f"      ! {b['code']}{who}: {b['message']}  [{b['rule']}]",
                          markup=False)


ORDER = 65
COMMANDS = [bank]
