"""What a Mah-Jong round page shows (a game has no bets): the payments between players and
each seat's commission, derived against what the table recorded (MJ arts. 7, 8, 10).
``GAME.money_tables``.

The payments due are the derivation's (``Derivation.payments``, set for an ended game): the page
reads the judged round and derives nothing again.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from ledger.domain.money import ZERO
from ledger.domain.round import Round
from ledger.games.base import ComparedField, Derivation, MoneyRow, MoneyTable


def money_tables(rnd: Round, derivation: Derivation) -> list[MoneyTable]:
    """The payment and commission tables, those with rows."""
    return [t for t in (_payments(rnd, derivation), _commissions(derivation)) if t.rows]


def _payments(rnd: Round, derivation: Derivation) -> MoneyTable:
    table = MoneyTable(
        "Payments: derived against recorded",
        ["from", "to"],
        ["amount", "reason", "shortfall"],
        "MJ arts. 7, 10; RULES §4.7–4.9",
    )
    if rnd.ended_by is None:
        return table
    due = {(p.frm, p.to): p for p in derivation.payments or ()}
    paid: dict[tuple[str, str], Decimal] = defaultdict(lambda: ZERO)
    reasons: dict[tuple[str, str], set[str]] = defaultdict(set)
    short: dict[tuple[str, str], Decimal] = defaultdict(lambda: ZERO)
    for e in rnd.events:
        key = (str(getattr(e, "from_", "")), str(getattr(e, "to", "")))
        if e.type == "payment_made":
            paid[key] += getattr(e, "amount", ZERO)
            reasons[key].add(str(getattr(e, "reason", "")))
        elif e.type == "payment_shortfall":
            short[key] += getattr(e, "amount", ZERO)
    for key in dict.fromkeys([*due, *paid, *short]):
        p = due.get(key)
        table.rows.append(
            MoneyRow(
                list[str | Decimal](key),
                [
                    ComparedField(p.amount if p else None, paid.get(key)),
                    ComparedField(
                        p.reason if p else None, "/".join(sorted(reasons[key])) if key in paid else None
                    ),
                    ComparedField(p.shortfall if p else ZERO, short.get(key, ZERO)),
                ],
            )
        )
    return table


def _commissions(derivation: Derivation) -> MoneyTable:
    table = MoneyTable(
        "Commission: derived against recorded", ["seat"], ["commission"], "MJ art. 8; RULES §4.10"
    )
    for c in derivation.commissions:
        table.rows.append(MoneyRow([c.party], [ComparedField(c.due, c.recorded)]))
    if derivation.commissions:
        table.rule = derivation.commissions[0].rule
    return table
