"""Super Pan 9 («Super Pan 9», 九家樂), Portaria 261/96/M: a player-banked two-card game
(RULES §1). Feed models only (FEED §6); the rules land with their issue (``derive`` is None)."""

from ledger.games.base import Game
from ledger.games.super_pan9.feed import EVENTS

GAME = Game(
    key="SP9",
    name="Super Pan 9",
    regulation="Portaria 261/96/M",
    events=EVENTS,
    closes_betting=frozenset({"dice_thrown"}),
)
