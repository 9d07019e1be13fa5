"""Mah-Jong (麻雀), Portaria 135/91/M: players against each other, conventional (MJ-C) or
simplified (MJ-S) (RULES §4).

The feed (FEED §8) is in ``feed.py``; the tiles and seats in ``tiles.py``; the wall, deal, units,
penalties and commission in ``tables.py``; hand decomposition in ``hands.py``; the fán table in
``fan.py``; the tile-log state machine in ``state.py``; the end of a game (winner, false win,
liability) in ``rules.py``; payments in ``payments.py``; the derivation in ``round.py``; the
simulator in ``simulate.py``. A feed "round" is one game (局). Nothing is staked on a layout, so
no event closes betting.
"""

from ledger.games.base import Game
from ledger.games.mahjong.compare import compare
from ledger.games.mahjong.equipment import EQUIPMENT
from ledger.games.mahjong.feed import EVENTS
from ledger.games.mahjong.money import MONEY
from ledger.games.mahjong.page import money_tables
from ledger.games.mahjong.round import derive

GAME = Game(
    key="MJ",
    name="Mah-Jong",
    regulation="Portaria 135/91/M",
    events=EVENTS,
    money=MONEY,
    equipment=EQUIPMENT,
    closes_betting=frozenset(),
    derive=derive,
    takes_bets=False,
    us_per_event=19.8,
    compare=compare,
    money_tables=money_tables,
)
