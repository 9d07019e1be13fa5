"""The player-held bank per table (Super Pan 9): banker runs, capital posted, each layer's
result, carry-over and every breach, folded from closed rounds in store order.

Each closed (or voided) round of a game with such a bank (``Game.bank_round`` is set) is judged
once, as ``ledger verify`` judges it (``projections.judged``: the game's session with every
earlier round's bank); its breaches are that judgement's error findings, and the layers, runs
and carry are what the same judgement derived (``Game.bank_round`` reads them from the judged
derivation), so the view and verify agree on every run, carried capital and finding.

Rows (decimals as strings):

- ``table:<T>`` — the table: ``rounds``, ``voided``, the current ``banker``, its ``run``,
  its last ``capital``, the ``carry`` it must post if it keeps the bank (``null`` after a lost
  round), ``runs`` (how many banker runs), ``bank_result`` (Σ W), ``bank_commission`` (Σ the
  layers' commission due), ``breaches`` (how many findings) and ``state`` (the fold's state);
- ``table:<T>:round:<n>`` — the table's ``n``-th SP9 round: banker, run, capital, capacity
  ``K``, the bank's result ``W``, each layer (party, capital, share, commission due, and what
  the table recorded), the carry it leaves, and every breach (code, rule, bet, party, message);
- ``table:<T>:run:<n>`` — the ``n``-th banker run: seat, first and last round, rounds,
  whether it was extended, the capital it started and ended with, the banker's net (shares less
  commission).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any, ClassVar

from ledger.domain.round import Round
from ledger.games import GAMES
from ledger.games.base import BankHolder
from projections.base import Row, Rows, View
from projections.judged import judged as judged_round

ZERO = Decimal(0)


def table_key(table: str) -> str:
    """The key of a table's summary row."""
    return f"table:{table}"


def round_key(table: str, n: int) -> str:
    """The key of a table's ``n``-th round row (zero-padded so keys sort in order)."""
    return f"table:{table}:round:{n:012d}"


def run_key(table: str, n: int) -> str:
    """The key of a table's ``n``-th banker run row."""
    return f"table:{table}:run:{n:06d}"


def new_table(table: str, currency: str) -> Row:
    """A table's summary before its first SP9 round."""
    return {
        "table": table,
        "currency": currency,
        "rounds": 0,
        "voided": 0,
        "banker": None,
        "run": 0,
        "capital": None,
        "carry": None,
        "runs": 0,
        "bank_result": "0",
        "bank_commission": "0",
        "breaches": 0,
        "state": None,
    }


class BankView(View):
    """Banker runs, capital, layer results, carry-over and breaches of every SP9 table."""

    name: ClassVar[str] = "bank"
    version: ClassVar[int] = 2

    def apply(self, rnd: Round, rows: Rows) -> None:
        """Fold one closed round of a player-banked game (other games are ignored)."""
        game = GAMES.get(rnd.game)
        if game is None or game.bank_round is None:
            return
        key = table_key(rnd.table)
        summary = dict(rows.get(key) or new_table(rnd.table, rnd.opened.currency))
        judged = judged_round(rnd, rows)
        bank = game.bank_round(rnd, judged.derivation)
        summary["rounds"] += 1
        n = summary["rounds"]
        layers = [
            {
                "party": layer.party,
                "capital": str(layer.capital),
                "share": _text(layer.share),
                "commission": _text(layer.commission),
                "recorded_share": _text(layer.recorded_share),
                "recorded_commission": _text(layer.recorded_commission),
            }
            for layer in bank.layers
        ]
        after = bank.after
        row: dict[str, Any] = {
            "table": rnd.table,
            "round": rnd.round,
            "at": rnd.opened_at.isoformat(),
            "voided": rnd.is_voided,
            "banker": bank.banker,
            "run": bank.run,
            "capital": str(bank.capital),
            "capacity": str(bank.capacity),
            "result": _text(bank.result),
            "layers": layers,
            "carry": None if after is None else _text(after.carry),
            "breaches": [
                {
                    "code": f.code,
                    "rule": f.rule,
                    "bet": f.bet,
                    "party": f.extra.get("party"),
                    "message": f.message,
                }
                for f in judged.findings
                if f.severity == "error"
            ],
        }
        rows.put(round_key(rnd.table, n), row)
        summary["breaches"] += len(row["breaches"])
        if rnd.is_voided:
            summary["voided"] += 1
        if after is not None:
            self._run(rows, summary, row, after)
            summary.update(
                banker=after.banker,
                run=after.run,
                capital=str(after.capital),
                carry=_text(after.carry),
                state=after.state,
            )
            summary["bank_result"] = str(Decimal(summary["bank_result"]) + (bank.result or ZERO))
            summary["bank_commission"] = str(Decimal(summary["bank_commission"]) + bank.commission)
        rows.put(key, summary)

    @staticmethod
    def _run(rows: Rows, summary: Row, row: Row, after: BankHolder) -> None:
        """Open a new banker run, or extend the current one."""
        layer = row["layers"][0] if row["layers"] else None
        net = ZERO
        if layer and layer["share"] is not None:
            net = Decimal(layer["share"]) - Decimal(layer["commission"])
        if after.run == 1 or summary["runs"] == 0:
            summary["runs"] += 1
            run: Row = {
                "table": row["table"],
                "seat": after.banker,
                "first_round": row["round"],
                "last_round": row["round"],
                "rounds": 0,
                "extended": False,
                "capital_start": row["capital"],
                "capital_end": row["capital"],
                "net": "0",
            }
        else:
            run = dict(rows.get(run_key(row["table"], summary["runs"])) or {})
        run["rounds"] += 1
        run["last_round"] = row["round"]
        run["capital_end"] = row["capital"]
        run["net"] = str(Decimal(run["net"]) + net)
        run["extended"] = run["extended"] or after.run > 2
        rows.put(run_key(row["table"], summary["runs"]), run)


def _text(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


# --- reading the view (its keys are this module's business) --------------------------------


def bank_tables(rows: Mapping[str, Row]) -> dict[str, Row]:
    """Each SP9 table's summary row, by table code, in key order."""
    return {r["table"]: r for k, r in sorted(rows.items()) if k == table_key(str(r.get("table")))}


def bank_rounds(rows: Mapping[str, Row], table: str) -> list[Row]:
    """The table's round rows, oldest first."""
    return _under(rows, f"{table_key(table)}:round:")


def bank_runs(rows: Mapping[str, Row], table: str) -> list[Row]:
    """The table's banker-run rows, oldest first."""
    return _under(rows, f"{table_key(table)}:run:")


def _under(rows: Mapping[str, Row], prefix: str) -> list[Row]:
    return [r for k, r in sorted(rows.items()) if k.startswith(prefix)]
