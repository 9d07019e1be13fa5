"""Mah-Jong, Portaria 135/91/M (placeholder: feed models land with their issue)."""

from ledger.feed.envelope import LIFECYCLE_EVENTS
from ledger.games.base import Game

GAME = Game(
    key="MJ",
    name="Mah-Jong",
    regulation="Portaria 135/91/M",
    events=LIFECYCLE_EVENTS,
    closes_betting=frozenset({}),
)
