"""Mah-Jong money: the players pay each other; the house holds nothing but the fixed commission
it charges (``commission_charged``, MJ art. 8, RULES §4.10). Turnover is what the players paid
each other."""

from __future__ import annotations

from decimal import Decimal

from ledger.domain.round import Round
from ledger.games.base import Charge, Money
from ledger.games.mahjong.feed import CommissionCharged, MahjongRoundOpened, PaymentMade
from ledger.games.money import ZERO, no_jackpot


def payer(rnd: Round, party: str) -> str:
    """The player at a wind, else ``seat:<wind>``."""
    opened = rnd.opened
    players = opened.players if isinstance(opened, MahjongRoundOpened) else {}
    return str(players.get(party, f"seat:{party}"))  # type: ignore[call-overload]


def charges(rnd: Round) -> list[Charge]:
    """Each ``commission_charged``, in the order recorded."""
    return [Charge(payer(rnd, c.seat), c.seat, c.amount, "fee") for c in rnd.of_type(CommissionCharged)]


def house_result(rnd: Round) -> Decimal:
    """Nothing: the players play against each other."""
    return ZERO


def turnover(rnd: Round) -> Decimal:
    """The payments the players made each other."""
    return sum((p.amount for p in rnd.of_type(PaymentMade)), ZERO)


MONEY = Money(
    charges=charges,
    payer=payer,
    house_result=house_result,
    turnover=turnover,
    jackpot=no_jackpot,
    banks_bets=False,
)
