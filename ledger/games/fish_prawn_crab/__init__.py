"""Fish-Prawn-Crab, Portaria 21/96/M (placeholder: feed models land with their issue)."""

from ledger.feed.envelope import LIFECYCLE_EVENTS
from ledger.games.base import Game

GAME = Game(
    key="FPC",
    name="Fish-Prawn-Crab",
    regulation="Portaria 21/96/M",
    events=LIFECYCLE_EVENTS,
    closes_betting=frozenset({"dice_shown", "die_cocked"}),
)
