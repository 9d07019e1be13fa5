"""The linked progressive jackpot: GLI-12-style meters per pool and a history of its rounds.

Every closed round is judged as ``ledger verify`` judges it (``projections.judged``: the STUD
session with the pool where every earlier round left it, in store order, RULES §6.6, FEED §7
"order of record"), and the round's jackpot movement — its game's money hook ``jackpot`` over
that judgement — is folded into the pool's meters, so the view and verify agree on every
balance. Voided rounds settle no jackpot bet (they are carried, STUD art. 11) and leave the
pool alone.

Rows (decimals as strings):

- ``pool:<P>`` — the meters, cumulative and never reset: ``seed``; ``contributions`` and
  ``contribution_bets``; ``awards`` by category (``count``, ``amount``, ``from_pool``,
  ``from_house``); ``pool_awards`` (paid out of the pool); ``house_funded`` (fixed sums and
  excesses the house paid); ``resets`` and ``reset_count``; ``rounds``; and ``balance``, which
  always equals ``seed + contributions − pool_awards + resets`` (RULES §6.6);
- ``pool:<P>:history:<n>`` — one row per round that touched the pool (``n`` counts from 1):
  table, round, time, the balance before, after contributions and after, each award and reset.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any, ClassVar

from ledger.domain.round import Round
from ledger.games import GAMES
from ledger.games.base import JackpotMovement
from ledger.games.money import money_of
from projections.base import Row, Rows, View
from projections.judged import judged

ZERO = Decimal(0)
CATEGORIES = ("royal_flush", "straight_flush", "four_of_a_kind", "full_house", "flush")


def pool_key(pool: str) -> str:
    """The key of a pool's meters row."""
    return f"pool:{pool}"


def history_key(pool: str, n: int) -> str:
    """The key of a pool's ``n``-th history row (zero-padded so keys sort in order)."""
    return f"pool:{pool}:history:{n:012d}"


def new_meters(pool: str, seed: Decimal, currency: str) -> Row:
    """A pool's meters before its first round: the balance is the seed."""
    return {
        "pool": pool,
        "currency": currency,
        "seed": str(seed),
        "balance": str(seed),
        "contributions": "0",
        "contribution_bets": 0,
        "pool_awards": "0",
        "house_funded": "0",
        "resets": "0",
        "reset_count": 0,
        "rounds": 0,
        "awards": {c: {"count": 0, "amount": "0", "from_pool": "0", "from_house": "0"} for c in CATEGORIES},
    }


def _plus(row: dict[str, Any], key: str, amount: Decimal) -> None:
    row[key] = str(Decimal(row[key]) + amount)


class JackpotView(View):
    """Meters and history of every linked jackpot pool (RULES §6.6)."""

    name: ClassVar[str] = "jackpot"
    version: ClassVar[int] = 2

    def apply(self, rnd: Round, rows: Rows) -> None:
        """Fold one ended round into its pool's meters and history (module docstring)."""
        if not rnd.is_closed or rnd.rules.jackpot is None:
            return  # no pool named: nothing to move (and nothing a later pool round needs)
        moved = money_of(GAMES[rnd.game]).jackpot(rnd, judged(rnd, rows).derivation)
        if moved is None:
            return
        key = pool_key(moved.pool)
        existing = rows.get(key)
        meters = _copy(existing or new_meters(moved.pool, moved.seed, rnd.opened.currency))
        self._meter(meters, moved)
        rows.put(key, meters)
        rows.put(history_key(moved.pool, meters["rounds"]), self._history(rnd, moved))

    @staticmethod
    def _meter(m: Row, p: JackpotMovement) -> None:
        m["rounds"] += 1
        _plus(m, "contributions", p.contributed)
        m["contribution_bets"] += p.contribution_bets
        for a in p.awards:
            cat = m["awards"][a.hand]
            cat["count"] += 1
            for field, amount in (
                ("amount", a.amount),
                ("from_pool", a.from_pool),
                ("from_house", a.from_house),
            ):
                _plus(cat, field, amount)
        _plus(m, "pool_awards", p.from_pool)
        _plus(m, "house_funded", p.from_house)
        if p.reset:
            _plus(m, "resets", p.reset)
            m["reset_count"] += 1
        m["balance"] = str(p.end)

    @staticmethod
    def _history(rnd: Round, p: JackpotMovement) -> Row:
        return {
            "table": rnd.table,
            "round": rnd.round,
            "at": rnd.opened_at.isoformat(),
            "start": str(p.start),
            "contributions": str(p.contributed),
            "contribution_bets": p.contribution_bets,
            "after_contributions": str(p.after_contributions),
            "awards": [
                {
                    "bet": a.bet,
                    "seat": a.seat,
                    "hand": a.hand,
                    "amount": str(a.amount),
                    "from_pool": str(a.from_pool),
                    "from_house": str(a.from_house),
                }
                for a in p.awards
            ],
            "reset": str(p.reset),
            "end": str(p.end),
        }


def _copy(row: Row) -> Row:
    out = dict(row)
    out["awards"] = {c: dict(v) for c, v in row["awards"].items()}
    return out


def conservation_gap(meters: Row) -> Decimal:
    """``balance − (seed + contributions − pool_awards + resets)``: always 0 (RULES §6.6)."""
    expected = (
        Decimal(meters["seed"])
        + Decimal(meters["contributions"])
        - Decimal(meters["pool_awards"])
        + Decimal(meters["resets"])
    )
    return Decimal(meters["balance"]) - expected


# --- reading the view (its keys are this module's business) --------------------------------


def pool_meters(rows: Mapping[str, Row]) -> dict[str, Row]:
    """Each pool's meters row, by pool id, in key order."""
    return {r["pool"]: r for k, r in sorted(rows.items()) if k == pool_key(str(r.get("pool")))}


def pool_history(rows: Mapping[str, Row], pool: str) -> list[Row]:
    """The pool's history rows (one per round that moved it), oldest first."""
    prefix = f"{pool_key(pool)}:history:"
    return [r for k, r in sorted(rows.items()) if k.startswith(prefix)]
