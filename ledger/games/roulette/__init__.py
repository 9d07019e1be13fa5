"""Roulette («Roleta», 輪盤), DRE 60/2004: single zero, banked by the house (RULES §5)."""

from ledger.games.base import Game
from ledger.games.roulette.equipment import EQUIPMENT
from ledger.games.roulette.feed import EVENTS
from ledger.games.roulette.money import MONEY
from ledger.games.roulette.round import derive

GAME = Game(
    key="RL",
    name="Roulette",
    regulation="DRE 60/2004",
    events=EVENTS,
    money=MONEY,
    equipment=EQUIPMENT,
    closes_betting=frozenset({"spin_result", "spin_voided"}),
    derive=derive,
    us_per_event=17.7,
)
