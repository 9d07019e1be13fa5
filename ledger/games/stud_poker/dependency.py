"""What a STUD round depends on: its linked jackpot pool and its table's carried jackpot bets.

The state STUD carries between rounds (``StudSession.to_json`` and the carried bets) splits into

- ``STUD/pool/POOL``: the pool's balance and the settings the round that first named it carried
  (RULES §6.6: every table linked to the pool moves it, in store order);
- ``STUD/table/TABLE``: the jackpot bets the table's previous round carried (RULES §6.7).

A round reads and moves its table's key, and its pool's key when its rulebook names a pool.
"""

from __future__ import annotations

from typing import Any

from ledger.domain.round import Round

POOL = "STUD/pool/"
TABLE = "STUD/table/"


def depends_on(rnd: Round) -> list[str]:
    """The round's table, and the pool its rulebook names."""
    jackpot = rnd.rules.jackpot
    keys = [TABLE + rnd.table]
    if jackpot is not None:
        keys.append(POOL + jackpot.pool)
    return keys


def split(state: dict[str, Any]) -> dict[str, Any]:
    """One value per pool (balance, settings) and per table (carried bets)."""
    session = state.get("session") or {}
    balances, settings = session.get("balances", {}), session.get("settings", {})
    parts: dict[str, Any] = {
        POOL + pool: {"balance": balances.get(pool), "settings": settings.get(pool)}
        for pool in sorted(set(balances) | set(settings))
    }
    for table, carried in (state.get("carries") or {}).items():
        parts[TABLE + table] = carried
    return parts


def join(parts: dict[str, Any]) -> dict[str, Any]:
    """The session and carried bets made of the given pools and tables."""
    balances: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    carries: dict[str, Any] = {}
    for key, value in parts.items():
        if key.startswith(POOL):
            pool = key[len(POOL) :]
            if value.get("balance") is not None:
                balances[pool] = value["balance"]
            if value.get("settings") is not None:
                settings[pool] = value["settings"]
        elif key.startswith(TABLE):
            carries[key[len(TABLE) :]] = value
    return {"session": {"balances": balances, "settings": settings}, "carries": carries}
