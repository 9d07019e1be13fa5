"""Stud Poker with progressive jackpot («Stud poker», 聯獎撲克), DRE 61/2004 (RULES §6).

The feed (FEED §7) is in ``feed.py``; the ranking and prizes in ``tables.py``; the hand
evaluator in ``hands.py``; the settlement rules in ``rules.py``; a round's derivation in
``round.py``; the linked jackpot pool's arithmetic in ``pool.py``, driven across tables and
rounds by the verify session in ``session.py``; the simulator in ``simulate.py``.
"""

from ledger.games.base import Game
from ledger.games.stud_poker.feed import EVENTS, is_raise
from ledger.games.stud_poker.money import MONEY
from ledger.games.stud_poker.round import derive
from ledger.games.stud_poker.session import StudSession

GAME = Game(
    key="STUD",
    name="Stud Poker",
    regulation="DRE 61/2004",
    events=EVENTS,
    money=MONEY,
    closes_betting=frozenset({"card_burned", "card_dealt"}),
    allowed_after_close=is_raise,
    derive=derive,
    us_per_event=21.2,
    session=StudSession,
    carries_bets=True,
)
