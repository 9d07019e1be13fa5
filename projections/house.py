"""The house's books per table and hour: turnover, hold, commission recorded, and each jackpot
pool's movements — the figures the day report, the exports and the Beancount journal book.

Every closed (or voided) round is judged as ``ledger verify`` judges it
(``projections.judged``), and each figure comes from the round's game's money hooks
(``ledger.games.<game>.money``), never from a branch on a game or an event type here:

- ``t|<hour>|<table>|<currency>`` — ``rounds``, ``turnover`` (what was staked, or paid between
  Mah-Jong players), ``hold`` (the house's own result before commission: stakes kept less
  prizes paid on house-banked games; the casino layer's share of an SP9 bank; nothing on
  Mah-Jong; STUD jackpot awards are the pool's, below), ``commission`` (every commission
  recorded) and its parts ``commission_bet`` (bet settlements), ``commission_bank`` (SP9 bank
  layers), ``commission_fee`` (Mah-Jong fees);
- ``j|<hour>|<table>|<currency>|<pool>`` — the round's jackpot movements as the pool's own
  arithmetic derives them in context (RULES §6.6): ``seed`` (the pool opened here),
  ``contributions``, ``from_pool`` (awards paid out of the pool), ``from_house`` (awards or
  parts of them the house funded: an expense), ``resets`` (what the house added to restart an
  emptied pool), ``hits``. ``seed + contributions − from_pool + resets`` summed over every row
  of a pool is its balance in ``ledger jackpot``.
"""

from __future__ import annotations

from decimal import Decimal
from typing import ClassVar

from ledger.domain.round import Round
from ledger.games import GAMES
from ledger.games.money import money_of
from projections.base import Row, Rows, View
from projections.gaming_day import hour_of
from projections.judged import judged

ZERO = Decimal(0)
COMMISSION_KINDS = ("bet", "bank", "fee")
"""``Charge.kind``: on bet settlements, SP9 bank layers, Mah-Jong fees."""
JACKPOT_FIELDS = ("seed", "contributions", "from_pool", "from_house", "resets")


def _add(row: Row, name: str, amount: Decimal) -> None:
    row[name] = str(Decimal(row.get(name, "0")) + amount)


class HouseView(View):
    """Turnover, hold and commission per table and hour; jackpot movements per pool."""

    name: ClassVar[str] = "house"
    version: ClassVar[int] = 2

    def apply(self, rnd: Round, rows: Rows) -> None:
        """Book the round's figures (see the module docstring)."""
        judgement = judged(rnd, rows)
        money = money_of(GAMES[rnd.game])
        hour = hour_of(rnd.opened_at)
        where = f"{hour}|{rnd.table}|{rnd.opened.currency}"
        base: Row = {"hour": hour, "table": rnd.table, "game": rnd.game, "currency": rnd.opened.currency}
        key = f"t|{where}"
        row = dict(
            rows.get(key)
            or {
                **base,
                "rounds": 0,
                "turnover": "0",
                "hold": "0",
                "commission": "0",
                **{f"commission_{k}": "0" for k in COMMISSION_KINDS},
            }
        )
        row["rounds"] += 1
        _add(row, "turnover", money.turnover(rnd))
        _add(row, "hold", money.house_result(rnd))
        for charge in money.charges(rnd):
            _add(row, "commission", charge.amount)
            _add(row, f"commission_{charge.kind}", charge.amount)
        rows.put(key, row)
        moved = money.jackpot(rnd, judgement.derivation)
        if moved is None:
            return
        key = f"j|{where}|{moved.pool}"
        row = dict(
            rows.get(key) or {**base, "pool": moved.pool, "hits": 0, **{f: "0" for f in JACKPOT_FIELDS}}
        )
        _add(row, "seed", moved.seed if moved.opened else ZERO)
        _add(row, "contributions", moved.contributed)
        _add(row, "from_pool", moved.from_pool)
        _add(row, "from_house", moved.from_house)
        _add(row, "resets", moved.reset)
        row["hits"] += moved.hits
        rows.put(key, row)
