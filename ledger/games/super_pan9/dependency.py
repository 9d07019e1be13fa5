"""What an SP9 round depends on: its table's bank as the table's last closed round left it.

The state SP9 carries between rounds (``BankSession``: runs, carried capital, the bettors of the
previous round, the deck) splits into one key per table, ``SP9/table/TABLE``, whose value is the
table's ``TableBank`` as JSON. A round reads and moves its own table's key.
"""

from __future__ import annotations

from typing import Any

from ledger.domain.round import Round

TABLE = "SP9/table/"


def depends_on(rnd: Round) -> list[str]:
    """The round's table."""
    return [TABLE + rnd.table]


def split(state: dict[str, Any]) -> dict[str, Any]:
    """One value per table: its bank."""
    return {TABLE + table: bank for table, bank in sorted((state.get("session") or {}).items())}


def join(parts: dict[str, Any]) -> dict[str, Any]:
    """The banks of the given tables."""
    banks = {key[len(TABLE) :]: value for key, value in parts.items() if value is not None}
    return {"session": banks, "carries": {}}
