"""``ledger jackpot``: the linked progressive pools — meters, balance, and each round's history."""

from __future__ import annotations

import csv
import sys
from decimal import Decimal
from typing import Annotated, Any

import typer

from cli.context import DbOption, current_view, one_format, only, opened
from cli.render import out, print_json
from ledger.report.numbers import plain, plain_amounts, text
from ledger.storage.store import LedgerApp
from projections.base import Row
from projections.jackpot import CATEGORIES, JackpotView, pool_history, pool_meters


def _jackpot_rows(app: LedgerApp, note: bool = True) -> dict[str, Row]:
    """Every row of the jackpot view, as of the end of the log (read-only)."""
    return current_view(app, JackpotView(), note=note).rows


def jackpot(
    pool: Annotated[str | None, typer.Option("--pool", help="Only this pool, e.g. PJ-1.")] = None,
    history: Annotated[
        bool, typer.Option("--history", help="One line per round that touched the pool.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="Print CSV.")] = False,
    db: DbOption = None,
) -> None:
    """Show each linked jackpot pool: its balance and its meters (contributions, awards by
    hand, resets, house-funded sums), never reset; with --history, every round that touched it.

    The balance always equals seed + contributions − pool-funded awards + resets (RULES §6.6).
    Exit code 0, or 2 on bad usage (an unknown --pool, --json with --csv).
    """
    one_format(as_json, as_csv)
    with opened(db) as app:
        rows = _jackpot_rows(app, note=not (as_json or as_csv))
    pools = only(pool_meters(rows), pool, "jackpot pool")
    hist = {p: pool_history(rows, p) for p in pools}
    if as_json:
        print_json(
            {
                "pools": plain_amounts(
                    [{**m, **({"history": hist[p]} if history else {})} for p, m in pools.items()], AMOUNTS
                )
            }
        )
    elif as_csv:
        _csv(pools, hist, history)
    else:
        _text(pools, hist, history)


AMOUNTS = frozenset(
    (
        "seed",
        "balance",
        "contributions",
        "pool_awards",
        "house_funded",
        "resets",
        "amount",
        "from_pool",
        "from_house",
        "start",
        "after_contributions",
        "reset",
        "end",
    )
)
"""The keys of the jackpot's rows that hold amounts: two-decimal strings in JSON and CSV."""


def _csv(pools: dict[str, Row], hist: dict[str, list[Row]], history: bool) -> None:
    w = csv.writer(sys.stdout, lineterminator="\n")
    if history:
        w.writerow(
            [
                "pool",
                "table",
                "round",
                "at",
                "start",
                "contributions",
                "after_contributions",
                "awards",
                "reset",
                "end",
            ]
        )
        for p, rows in hist.items():
            for r in rows:
                awards = " ".join(f"{a['bet']}:{a['hand']}:{plain(a['amount'])}" for a in r["awards"])
                w.writerow(
                    [
                        p,
                        r["table"],
                        r["round"],
                        r["at"],
                        plain(r["start"]),
                        plain(r["contributions"]),
                        plain(r["after_contributions"]),
                        awards,
                        plain(r["reset"]),
                        plain(r["end"]),
                    ]
                )
        return
    head = [
        "pool",
        "currency",
        "seed",
        "balance",
        "contributions",
        "contribution_bets",
        "pool_awards",
        "house_funded",
        "resets",
        "reset_count",
        "rounds",
    ]
    w.writerow(head + [f"{c}_{f}" for c in CATEGORIES for f in ("count", "amount")])
    for m in pools.values():
        w.writerow(
            [plain(m[h]) if h in AMOUNTS else m[h] for h in head]
            + [
                plain(m["awards"][c][f]) if f == "amount" else m["awards"][c][f]
                for c in CATEGORIES
                for f in ("count", "amount")
            ]
        )


def _text(pools: dict[str, Row], hist: dict[str, list[Row]], history: bool) -> None:
    if not pools:
        out.print("no jackpot pool in the store")
        return
    for p, m in pools.items():
        out.print(f"[bold]pool {p}[/bold] ({m['currency']})  balance {text(m['balance'])}")
        lines: list[tuple[str, Any]] = [
            ("seed", text(m["seed"])),
            ("contributions", f"{text(m['contributions'])} ({m['contribution_bets']} bets)"),
            ("awards paid from the pool", text(m["pool_awards"])),
            ("house-funded awards", text(m["house_funded"])),
            ("resets", f"{text(m['resets'])} ({m['reset_count']})"),
            ("rounds", m["rounds"]),
        ]
        for name, value in lines:
            out.print(f"  {name:<28} {value}", markup=False)
        for c in CATEGORIES:
            a = m["awards"][c]
            if a["count"]:
                out.print(
                    f"  {c:<28} {a['count']} × = {text(a['amount'])} (pool "
                    f"{text(a['from_pool'])}, house {text(a['from_house'])})",
                    markup=False,
                )
        if history:
            for r in hist[p]:
                awards = ", ".join(f"{a['hand']} {text(a['amount'])} to {a['bet']}" for a in r["awards"])
                out.print(
                    f"    {r['at']}  {r['table']}/{r['round']}  {text(r['start'])} "
                    f"+{text(r['contributions'])} → {text(r['end'])}"
                    + (f"  [{awards}]" if awards else "")
                    + (f"  reset +{text(r['reset'])}" if Decimal(r["reset"]) else ""),
                    markup=False,
                )


ORDER = 60
COMMANDS = [jackpot]
