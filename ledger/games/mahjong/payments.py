"""Who pays whom at the end of a Mah-Jong game (MJ arts. 7–10, RULES §4.7–4.10).

- A win (art. 7): the single share is ``u(f) = A × 2^f`` (M1); a non-banker winner receives
  ``u`` from each other non-banker and ``2u`` from the banker; the banker as winner ``2u`` from
  each player — self-drawn or on a discard alike.
- Liability (art. 10, M17): the liable seat pays everything the others owed plus his own share;
  the others pay nothing.
- The winner's capital cap (art. 9(a)(4), (b)(3), M5): if the total due exceeds the winner's
  capital on the table, every payment is cut pro rata, each rounded down to the increment, and
  the remainder goes to the first payer in turn order from the discarder (or the banker) (G1).
- A payer who cannot cover his share pays his capital and the rest is a shortfall (M6).
- A false win (art. 10(a)(8), (b)(3), M18): fixed penalties from the false winner; no cap.
- Commission (art. 8): the fixed amount of the stake row, from the winner of a won game only;
  none on a drawn or void game (M7).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Literal

from ledger.domain.money import CENT, ZERO, RoundingMode, round_money, text
from ledger.games.base import PaymentDue
from ledger.games.mahjong.tables import (
    COMMISSION,
    COMMISSION_RULE,
    FALSE_WIN,
    UNIT_RULE,
    unit,
)
from ledger.games.mahjong.tiles import Variant

Reason = Literal["win", "liability", "false_win"]

CAP_RULE = "MJ art. 9(a)(4), (b)(3); RULES §4.7, §8.4 M5, §8 G1"
LIABLE_RULE = "MJ art. 10; RULES §4.8, §8.4 M17"
SHORTFALL_RULE = "RULES §8.4 M6"
UNDUE_RULE = "MJ arts. 7, 10; RULES §4.7–4.9"
"""A payment recorded that the rules do not call for."""


def shares(order: Sequence[str], winner: str, single: Decimal, fan: int) -> dict[str, Decimal]:
    """What each other seat owes the winner before liability and the cap (art. 7)."""
    banker = order[0]
    u = unit(single, fan)
    return {p: (2 * u if banker in (p, winner) else u) for p in order if p != winner}


def win_payments(
    order: Sequence[str],
    winner: str,
    single: Decimal,
    fan: int,
    *,
    liable: str | None,
    cap: Decimal,
    start: str,
    payer_capital: Mapping[str, Decimal],
    rounding: RoundingMode = "down",
    increment: Decimal = CENT,
) -> list[PaymentDue]:
    """The payments to ``winner`` of an ``fan``-fán hand.

    ``start`` is where the remainder of a capped split goes first (the discarder, or the banker
    on a self-drawn win); ``cap`` is the winner's capital on the table.
    """
    owed = shares(order, winner, single, fan)
    reason: Reason = "win"
    rule = UNIT_RULE
    if liable is not None:
        owed = {liable: sum(owed.values(), ZERO)}
        reason, rule = "liability", LIABLE_RULE
    total = sum(owed.values(), ZERO)
    notes = {p: f"{fan} fán: u = {text(unit(single, fan))}" for p in owed}
    if total > cap:
        owed = _prorata(owed, cap, _from(order, start, owed), increment)
        notes = {p: f"{n}; cut pro rata to the winner's capital {text(cap)}" for p, n in notes.items()}
        rule = f"{rule}; {CAP_RULE}"
    out = []
    for p in order:
        if p not in owed:
            continue
        amount, short = owed[p], ZERO
        if amount > payer_capital.get(p, amount):
            amount, short = payer_capital[p], owed[p] - payer_capital[p]
        out.append(
            PaymentDue(
                p, winner, amount, reason, rule + (f"; {SHORTFALL_RULE}" if short else ""), notes[p], short
            )
        )
    return out


def _from(order: Sequence[str], start: str, payers: Mapping[str, Decimal]) -> list[str]:
    i = order.index(start)
    rotated = [*order[i:], *order[:i]]
    return [p for p in rotated if p in payers]


def _prorata(
    owed: Mapping[str, Decimal], cap: Decimal, order: list[str], increment: Decimal
) -> dict[str, Decimal]:
    total = sum(owed.values(), ZERO)
    cut = {p: round_money(a * cap / total, mode="down", increment=increment) for p, a in owed.items()}
    cut[order[0]] += cap - sum(cut.values(), ZERO)
    return cut


def false_win_payments(
    order: Sequence[str], false_winner: str, variant: Variant, single: Decimal
) -> list[PaymentDue]:
    """The false winner's penalties to every other seat (art. 10(a)(8), (b)(3), RULES §4.9)."""
    banker = order[0]
    penalty = FALSE_WIN[(variant, false_winner == banker)]
    out = []
    for p in order:
        if p == false_winner:
            continue
        fan = penalty.to_banker if p == banker else penalty.to_others
        out.append(
            PaymentDue(
                false_winner,
                p,
                unit(single, fan),
                "false_win",
                penalty.rule,
                f"the value of a {fan}-fán hand",
            )
        )
    return out


def commission_due(variant: Variant, stake: str) -> tuple[Decimal, str]:
    """The fixed commission on a won game at this stake row (art. 8)."""
    return COMMISSION[variant][stake], COMMISSION_RULE
