"""``ledger bank``: the Super Pan 9 bank per table — runs, capital, layer results, breaches."""

from __future__ import annotations

import csv
import sys
from decimal import Decimal
from typing import Annotated

import typer

from cli.context import DbOption, current_view, one_format, only, opened
from cli.render import out, print_json
from ledger.report.numbers import plain, plain_amounts, text
from ledger.storage.store import LedgerApp
from projections.bank import BankView, bank_rounds, bank_runs, bank_tables
from projections.base import Row

AMOUNTS = frozenset(
    (
        "capital",
        "capacity",
        "result",
        "carry",
        "share",
        "commission",
        "recorded_share",
        "recorded_commission",
        "capital_start",
        "capital_end",
        "net",
        "bank_result",
        "bank_commission",
        "recorded_result",
        "bank_result_recorded",
        "bank_commission_recorded",
        "commission_recorded",
        "result_recorded",
    )
)
"""The keys of the bank's rows that hold amounts: written two-decimal in JSON and CSV."""


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
    rounds = {t: [_with_recorded(r) for r in bank_rounds(rows, t)] for t in tables}
    runs = {t: bank_runs(rows, t) for t in tables}
    tables = {t: _table_recorded(s, rounds[t]) for t, s in tables.items()}
    if as_json:
        print_json(
            {
                "tables": plain_amounts(
                    [
                        {**{k: v for k, v in s.items() if k != "state"}, "runs": runs[t], "rounds": rounds[t]}
                        for t, s in tables.items()
                    ],
                    AMOUNTS,
                )
            }
        )
    elif as_csv:
        _csv(rounds)
    else:
        _text(tables, rounds, runs)


def _sum(values: list[str | None]) -> str | None:
    """The sum of recorded amounts; ``None`` when none was recorded."""
    found = [Decimal(v) for v in values if v is not None]
    return str(sum(found, Decimal(0))) if found else None


def _with_recorded(row: Row) -> Row:
    """A round with its layers' commission summed (derived, ``commission``) beside what the
    table recorded (``result_recorded``, ``commission_recorded``: from its ``bank_settled``)."""
    layers = row["layers"]
    return {
        **row,
        "commission": _sum([x["commission"] for x in layers]),
        "result_recorded": _sum([x["recorded_share"] for x in layers]),
        "commission_recorded": _sum([x["recorded_commission"] for x in layers]),
    }


def _table_recorded(summary: Row, rounds: list[Row]) -> Row:
    """A table's totals: ``bank_result`` and ``bank_commission`` are derived by the rules;
    ``bank_result_recorded`` and ``bank_commission_recorded`` are the tables' own records."""
    live = [r for r in rounds if not r["voided"]]
    return {
        **summary,
        "bank_result_recorded": _sum([r["result_recorded"] for r in live]) or "0",
        "bank_commission_recorded": _sum([r["commission_recorded"] for r in live]) or "0",
    }


def _agrees(row: Row) -> bool:
    """Whether the table recorded the derived result and commission of a round."""
    pairs = ((row["result"], row["result_recorded"]), (row["commission"], row["commission_recorded"]))
    return all(a is not None and b is not None and Decimal(a) == Decimal(b) for a, b in pairs)


def _layers(row: Row) -> str:
    return " ".join(f"{x['party']}:{plain(x['share'])}/{plain(x['commission'])}" for x in row["layers"])


def _csv(rounds: dict[str, list[Row]]) -> None:
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(
        [
            "table",
            "round",
            "at",
            "voided",
            "banker",
            "run",
            "capital",
            "capacity",
            "result",
            "layers",
            "carry",
            "breaches",
            "commission",
            "result_recorded",
            "commission_recorded",
        ]
    )
    for rows in rounds.values():
        for r in rows:
            w.writerow(
                [
                    r["table"],
                    r["round"],
                    r["at"],
                    r["voided"],
                    r["banker"],
                    r["run"],
                    plain(r["capital"]),
                    plain(r["capacity"]),
                    plain(r["result"]),
                    _layers(r),
                    plain(r["carry"]),
                    " ".join(b["code"] for b in r["breaches"]),
                    plain(r["commission"]),
                    plain(r["result_recorded"]),
                    plain(r["commission_recorded"]),
                ]
            )


def _text(tables: dict[str, Row], rounds: dict[str, list[Row]], runs: dict[str, list[Row]]) -> None:
    if not tables:
        out.print("no Super Pan 9 table in the store")
        return
    for t, s in tables.items():
        out.print(
            f"[bold]table {t}[/bold] ({s['currency']})  {s['rounds']} rounds, "
            f"{s['runs']} banker runs, {s['breaches']} breaches"
        )
        out.print(
            f"  bank result      derived {text(s['bank_result']):>12}  recorded "
            f"{text(s['bank_result_recorded']):>12}",
            markup=False,
        )
        out.print(
            f"  bank commission  derived {text(s['bank_commission']):>12}  recorded "
            f"{text(s['bank_commission_recorded']):>12}",
            markup=False,
        )
        if s["banker"] is not None:
            out.print(
                f"  now: seat {s['banker']} in round {s['run']} of its run, capital "
                f"{text(s['capital'])}" + (f", must carry at least {text(s['carry'])}" if s["carry"] else ""),
                markup=False,
            )
        for run in runs[t]:
            out.print(
                f"  run seat {run['seat']}: {run['first_round']}–{run['last_round']} "
                f"({run['rounds']} rounds{', extended' if run['extended'] else ''}), "
                f"capital {text(run['capital_start'])} → {text(run['capital_end'])}, net "
                f"{text(run['net'])}",
                markup=False,
            )
        for r in rounds[t]:
            recorded = (
                ""
                if _agrees(r)
                else (
                    f" (recorded W {text(r['result_recorded'])}, commission {text(r['commission_recorded'])})"
                )
            )
            head = (
                f"    {r['round']}  seat {r['banker']} run {r['run']}  capital "
                f"{text(r['capital'])} (K {text(r['capacity'])})  W {text(r['result'])}  "
                f"commission {text(r['commission'])}{recorded}  {_layers(r)}"
                + (f"  carry {text(r['carry'])}" if r["carry"] else "")
                + ("  VOIDED" if r["voided"] else "")
            )
            out.print(head, markup=False)
            for b in r["breaches"]:
                who = f" bet {b['bet']}" if b["bet"] else (f" {b['party']}" if b["party"] else "")
                out.print(f"      ! {b['code']}{who}: {b['message']}  [{b['rule']}]", markup=False)


ORDER = 65
COMMANDS = [bank]
