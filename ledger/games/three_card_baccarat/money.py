"""3-Card Baccarat money: every bet is against the house; commission is recorded on bet settlements
only; no jackpot pool."""

from __future__ import annotations

from ledger.games.base import Money
from ledger.games.money import banked_result, bet_charges, bet_turnover, no_jackpot, seat_payer

MONEY = Money(charges=bet_charges, payer=seat_payer, house_result=banked_result,
              turnover=bet_turnover, jackpot=no_jackpot)
