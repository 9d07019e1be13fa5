"""3-Card Baccarat («3 — Card Baccarat Game», 三公百家樂), Portaria 22/96/M (RULES §3).

The feed (FEED §5) is in ``feed.py``; the card points, the 31-level ranking and the prizes in
``tables.py``; the ranking formula and the settlement of each spot in ``rules.py``; the shoe's
life cycle and the deal in ``deal.py``; the round's derivation in ``round.py``; the per-table
shoe session in ``session.py``; the simulator in ``simulate.py``. Ties and odd/even on three
figures are carried into the table's next round (``carries_bets``, RULES §3.7).
"""

from ledger.games.base import Game
from ledger.games.three_card_baccarat.feed import EVENTS
from ledger.games.three_card_baccarat.money import MONEY
from ledger.games.three_card_baccarat.round import derive
from ledger.games.three_card_baccarat.session import ThreeCardSession

GAME = Game(
    key="3CB",
    name="3-Card Baccarat",
    regulation="Portaria 22/96/M",
    events=EVENTS,
    money=MONEY,
    closes_betting=frozenset({"card_burned", "card_dealt"}),
    derive=derive,
    us_per_event=19.0,
    session=ThreeCardSession,
    carries_bets=True,
)
