"""Super Pan 9, Portaria 261/96/M (placeholder: feed models land with their issue)."""

from ledger.feed.envelope import LIFECYCLE_EVENTS
from ledger.games.base import Game

GAME = Game(
    key="SP9",
    name="Super Pan 9",
    regulation="Portaria 261/96/M",
    events=LIFECYCLE_EVENTS,
    closes_betting=frozenset({"dice_thrown"}),
)
