"""Super Pan 9 money: a player seat banks the game; the casino may join the bank as a layer
(RULES §1.6–1.7). Commission is recorded on bet settlements and on each bank layer's
``bank_settled``; the house's own result is the casino layer's share of the bank's result."""

from __future__ import annotations

from decimal import Decimal

from ledger.domain.round import Round
from ledger.games.base import Charge, Money
from ledger.games.money import ZERO, bet_charges, bet_turnover, no_jackpot
from ledger.games.super_pan9.feed import BankSettled

CASINO = "casino"


def payer(rnd: Round, party: str) -> str:
    """A bank layer as a payer: ``bank:<party>``."""
    return f"bank:{party}"


def charges(rnd: Round) -> list[Charge]:
    """Bet commissions, then each bank layer's, in the order recorded."""
    return bet_charges(rnd) + [
        Charge(payer(rnd, b.party), b.party, b.commission, "bank") for b in rnd.of_type(BankSettled)
    ]


def house_result(rnd: Round) -> Decimal:
    """The casino layer's signed share of the bank's result, before commission."""
    return sum((b.result for b in rnd.of_type(BankSettled) if b.party == CASINO), ZERO)


MONEY = Money(
    charges=charges,
    payer=payer,
    house_result=house_result,
    turnover=bet_turnover,
    jackpot=no_jackpot,
    banks_bets=False,
)
