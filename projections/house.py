"""The house's own movements besides commission: jackpot contributions and awards, and the
casino's share of SP9 bank results — the figures the Beancount journal books per gaming day.

- **Jackpot contribution** (RULES §8.6 P4, STUD art. 10): the round's ``jackpot.contribution_rate``
  times the stake of each jackpot bet the table settled ``win`` or ``lose`` (a ``void`` or
  ``carry`` bet is not settled yet and contributes nothing), rounded per the round's rulebook
  (RULES §8 G1). Booked to the round's ``jackpot.pool``.
- **Jackpot award**: each ``jackpot_paid`` amount, as the table paid it (FEED §7).
- **Casino bank result** (SP9 art. 5(5), RULES §1.6–1.7): the signed ``result`` of the
  ``bank_settled`` line of the ``casino`` layer, before commission (the casino's layer pays none).

Rows per Macau hour: ``j|<hour>|<table>|<currency>|<pool>`` (``contributions``, ``awards``,
``hits``) and ``b|<hour>|<table>|<currency>`` (``casino_result``, ``rounds``). Amounts are the
recorded facts, not re-derived awards: ``ledger verify`` is where awards are judged.
"""

from __future__ import annotations

from decimal import Decimal
from typing import ClassVar

from ledger.money import round_money
from ledger.round import Round
from projections.base import Row, Rows, View
from projections.gaming_day import hour_of

ZERO = Decimal(0)
CONTRIBUTING_RESULTS = frozenset({"win", "lose"})


def jackpot_contributions(rnd: Round) -> Decimal:
    """The round's contribution to its jackpot pool (0 without a jackpot)."""
    book = rnd.rules.jackpot
    if book is None:
        return ZERO
    total = ZERO
    for bet_id, bet in rnd.bets.items():
        if getattr(bet.spot, "kind", None) != "jackpot":
            continue
        settled = rnd.settlements.get(bet_id)
        if not settled or settled[0].result not in CONTRIBUTING_RESULTS:
            continue
        total += round_money(rnd.stake(bet_id) * book.contribution_rate,
                             mode=rnd.rules.rounding.mode, increment=rnd.rules.rounding.increment)
    return total


def _add(row: Row, name: str, amount: Decimal) -> None:
    row[name] = str(Decimal(row.get(name, "0")) + amount)


class HouseView(View):
    """Jackpot contributions and awards per pool, and the casino's SP9 bank results, per hour."""

    name: ClassVar[str] = "house"
    version: ClassVar[int] = 1

    def apply(self, rnd: Round, rows: Rows) -> None:
        """Book the round's jackpot and bank movements (see the module docstring)."""
        hour = hour_of(rnd.opened_at)
        where = f"{hour}|{rnd.table}|{rnd.opened.currency}"
        base: Row = {"hour": hour, "table": rnd.table, "game": rnd.game,
                     "currency": rnd.opened.currency}
        contributed = jackpot_contributions(rnd)
        awards = [Decimal(getattr(f, "amount", 0)) for f in rnd.events if f.type == "jackpot_paid"]
        book = rnd.rules.jackpot
        if book is not None and (contributed or awards):
            key = f"j|{where}|{book.pool}"
            row = dict(rows.get(key) or {**base, "pool": book.pool, "contributions": "0",
                                         "awards": "0", "hits": 0})
            _add(row, "contributions", contributed)
            _add(row, "awards", sum(awards, ZERO))
            row["hits"] += len(awards)
            rows.put(key, row)
        casino = [Decimal(getattr(f, "result", 0)) for f in rnd.events
                  if f.type == "bank_settled" and getattr(f, "party", None) == "casino"]
        if casino:
            key = f"b|{where}"
            row = dict(rows.get(key) or {**base, "casino_result": "0", "rounds": 0})
            _add(row, "casino_result", sum(casino, ZERO))
            row["rounds"] += 1
            rows.put(key, row)
