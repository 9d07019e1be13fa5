"""The linked progressive jackpot: GLI-12-style meters per pool and a history of its rounds.

Every closed STUD round whose rulebook names a ``jackpot.pool`` and that settled jackpot bets is
folded, in store order, through ``ledger.games.stud_poker.pool.settle_pool`` — the same pure
function verify's STUD session uses, so the view and verify agree on every balance
(RULES §6.6, FEED §7 "order of record"). Voided rounds settle no jackpot bet (they are carried,
STUD art. 11) and leave the pool alone.

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

from decimal import Decimal
from typing import Any, ClassVar

from ledger.games.stud_poker.pool import PoolRound, settle_pool
from ledger.games.stud_poker.round import analyse
from ledger.round import Round
from projections.base import Row, Rows, View

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
        "pool": pool, "currency": currency, "seed": str(seed), "balance": str(seed),
        "contributions": "0", "contribution_bets": 0, "pool_awards": "0", "house_funded": "0",
        "resets": "0", "reset_count": 0, "rounds": 0,
        "awards": {c: {"count": 0, "amount": "0", "from_pool": "0", "from_house": "0"}
                   for c in CATEGORIES},
    }


def _plus(row: dict[str, Any], key: str, amount: Decimal) -> None:
    row[key] = str(Decimal(row[key]) + amount)


class JackpotView(View):
    """Meters and history of every linked jackpot pool (RULES §6.6)."""

    name: ClassVar[str] = "jackpot"
    version: ClassVar[int] = 1

    def apply(self, rnd: Round, rows: Rows) -> None:
        """Fold one ended round into its pool's meters and history (module docstring)."""
        if rnd.game != "STUD" or not rnd.is_closed:
            return
        opts = rnd.rules.jackpot
        if opts is None:
            return
        analysed = analyse(rnd)
        if not analysed.stakes:
            return
        key = pool_key(opts.pool)
        existing = rows.get(key)
        balance = None if existing is None else Decimal(existing["balance"])
        pooled = settle_pool(balance, opts, rnd.rules.rounding, analysed.stakes, analysed.hits)
        meters = _copy(existing or new_meters(opts.pool, opts.seed, rnd.opened.currency))
        self._meter(meters, pooled)
        rows.put(key, meters)
        rows.put(history_key(opts.pool, meters["rounds"]), self._history(rnd, pooled))

    @staticmethod
    def _meter(m: Row, p: PoolRound) -> None:
        m["rounds"] += 1
        _plus(m, "contributions", p.contributed)
        m["contribution_bets"] += len(p.contributions)
        for a in p.awards:
            cat = m["awards"][a.category.key]
            cat["count"] += 1
            for field, amount in (("amount", a.amount), ("from_pool", a.from_pool),
                                  ("from_house", a.from_house)):
                _plus(cat, field, amount)
        _plus(m, "pool_awards", p.paid_from_pool)
        _plus(m, "house_funded", p.paid_by_house)
        if p.reset:
            _plus(m, "resets", p.reset)
            m["reset_count"] += 1
        m["balance"] = str(p.end)

    @staticmethod
    def _history(rnd: Round, p: PoolRound) -> Row:
        return {
            "table": rnd.table, "round": rnd.round, "at": rnd.opened_at.isoformat(),
            "start": str(p.start), "contributions": str(p.contributed),
            "contribution_bets": len(p.contributions),
            "after_contributions": str(p.after_contributions),
            "awards": [{"bet": a.bet, "seat": a.seat, "hand": a.category.key,
                        "amount": str(a.amount), "from_pool": str(a.from_pool),
                        "from_house": str(a.from_house)} for a in p.awards],
            "reset": str(p.reset), "end": str(p.end),
        }


def _copy(row: Row) -> Row:
    out = dict(row)
    out["awards"] = {c: dict(v) for c, v in row["awards"].items()}
    return out


def conservation_gap(meters: Row) -> Decimal:
    """``balance − (seed + contributions − pool_awards + resets)``: always 0 (RULES §6.6)."""
    expected = (Decimal(meters["seed"]) + Decimal(meters["contributions"])
                - Decimal(meters["pool_awards"]) + Decimal(meters["resets"]))
    return Decimal(meters["balance"]) - expected
