"""3-Card Baccarat («3 — Card Baccarat Game», 三公百家樂), Portaria 22/96/M (RULES §3).
Feed models only (FEED §5); the rules land with their issue (``derive`` is None)."""

from ledger.games.base import Game
from ledger.games.three_card_baccarat.feed import EVENTS

GAME = Game(
    key="3CB",
    name="3-Card Baccarat",
    regulation="Portaria 22/96/M",
    events=EVENTS,
    closes_betting=frozenset({"card_burned", "card_dealt"}),
)
