"""Fish-Prawn-Crab money: every bet is against the house; commission is recorded on bet settlements
only; no jackpot pool."""

from __future__ import annotations

from ledger.games.money import BET_MONEY

MONEY = BET_MONEY
