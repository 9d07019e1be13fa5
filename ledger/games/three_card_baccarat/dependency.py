"""What a 3CB round depends on: its table's shoe and the bets its previous round carried.

The state 3CB carries between rounds splits into one key per table, ``3CB/table/TABLE``, whose
value holds the table's shoe (``ThreeCardSession``; ``deal.read_deal``) and the bets its
previous round settled ``carry`` (RULES §3.7). A round reads and moves its own table's key.
"""

from __future__ import annotations

from typing import Any

from ledger.domain.round import Round

TABLE = "3CB/table/"


def depends_on(rnd: Round) -> list[str]:
    """The round's table."""
    return [TABLE + rnd.table]


def split(state: dict[str, Any]) -> dict[str, Any]:
    """One value per table: ``shoe`` (when the table has one, possibly ``None``), ``carry``."""
    shoes = state.get("session") or {}
    carries = state.get("carries") or {}
    parts: dict[str, Any] = {}
    for table in sorted(set(shoes) | set(carries)):
        value: dict[str, Any] = {"carry": carries.get(table)}
        if table in shoes:
            value["shoe"] = shoes[table]
        parts[TABLE + table] = value
    return parts


def join(parts: dict[str, Any]) -> dict[str, Any]:
    """The shoes and carried bets of the given tables."""
    shoes: dict[str, Any] = {}
    carries: dict[str, Any] = {}
    for key, value in parts.items():
        table = key[len(TABLE) :]
        if "shoe" in value:
            shoes[table] = value["shoe"]
        if value.get("carry") is not None:
            carries[table] = value["carry"]
    return {"session": shoes, "carries": carries}
