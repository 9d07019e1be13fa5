"""Stud Poker with progressive jackpot («Stud poker», 聯獎撲克), DRE 61/2004 (RULES §6).
Feed models only (FEED §7); the rules land with their issue (``derive`` is None)."""

from ledger.games.base import Game
from ledger.games.stud_poker.feed import EVENTS, is_raise

GAME = Game(
    key="STUD",
    name="Stud Poker",
    regulation="DRE 61/2004",
    events=EVENTS,
    closes_betting=frozenset({"card_burned", "card_dealt"}),
    allowed_after_close=is_raise,
)
