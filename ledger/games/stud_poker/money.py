"""Stud Poker money: antes, raises and jackpot bets are against the house; no commission; the
linked jackpot pool (RULES §6.6) is funded by contributions and pays its awards.

The house result leaves out what a jackpot bet won by its hand: that award is paid by the pool
(or, past its balance and for fixed sums, by the house as a jackpot expense), and is booked
from the round's jackpot movement, which the pool's own arithmetic derives in context
(``session.StudSession``)."""

from __future__ import annotations

from decimal import Decimal

from ledger.domain.round import Round
from ledger.games.base import Derivation, JackpotMovement, Money
from ledger.games.money import banked_result, bet_charges, bet_turnover, seat_payer
from ledger.games.stud_poker.feed import JackpotPaid


def house_result(rnd: Round) -> Decimal:
    """Stakes kept less prizes paid, jackpot awards left to the pool."""
    return banked_result(rnd, prizes_of=frozenset(p.bet for p in rnd.of_type(JackpotPaid)))


def jackpot(rnd: Round, derivation: Derivation) -> JackpotMovement | None:
    """The pool movement the round's derivation holds (contributions, awards, reset)."""
    return derivation.jackpot


MONEY = Money(
    charges=bet_charges, payer=seat_payer, house_result=house_result, turnover=bet_turnover, jackpot=jackpot
)
