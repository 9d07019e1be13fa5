"""Stud Poker, DRE 61/2004 (placeholder: feed models land with their issue)."""

from ledger.feed.envelope import LIFECYCLE_EVENTS
from ledger.games.base import Game

GAME = Game(
    key="STUD",
    name="Stud Poker",
    regulation="DRE 61/2004",
    events=LIFECYCLE_EVENTS,
    closes_betting=frozenset({"card_burned", "card_dealt"}),
)
