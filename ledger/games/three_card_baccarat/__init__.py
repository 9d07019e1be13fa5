"""3-Card Baccarat, Portaria 22/96/M (placeholder: feed models land with their issue)."""

from ledger.feed.envelope import LIFECYCLE_EVENTS
from ledger.games.base import Game

GAME = Game(
    key="3CB",
    name="3-Card Baccarat",
    regulation="Portaria 22/96/M",
    events=LIFECYCLE_EVENTS,
    closes_betting=frozenset({"card_burned", "card_dealt"}),
)
