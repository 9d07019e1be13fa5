"""Mah-Jong (麻雀), Portaria 135/91/M: players against each other, conventional or simplified
(RULES §4). Feed models only (FEED §8); the rules land with their issue (``derive`` is None).
Nothing is staked on a layout, so no event closes betting."""

from ledger.games.base import Game
from ledger.games.mahjong.feed import EVENTS

GAME = Game(
    key="MJ",
    name="Mah-Jong",
    regulation="Portaria 135/91/M",
    events=EVENTS,
    closes_betting=frozenset(),
)
