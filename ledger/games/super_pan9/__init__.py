"""Super Pan 9 («Super Pan 9», 九家樂), Portaria 261/96/M: a player-banked two-card game
(RULES §1).

The feed (FEED §6) is in ``feed.py``; card points, ranks and articles in ``tables.py``; hand
value, comparison, the dice count and the deal in ``rules.py``; the bank's capped settlement,
layer split and commission in ``bank.py``; one round's derivation in ``round.py``; the rules
that span rounds (bank runs, carried capital, refusals) in ``session.py``; the simulator in
``simulate.py``.
"""

from ledger.games.base import Game
from ledger.games.super_pan9.bank_view import bank_round
from ledger.games.super_pan9.compare import compare
from ledger.games.super_pan9.equipment import EQUIPMENT
from ledger.games.super_pan9.feed import EVENTS
from ledger.games.super_pan9.money import MONEY
from ledger.games.super_pan9.page import money_tables
from ledger.games.super_pan9.round import derive
from ledger.games.super_pan9.session import BankSession

GAME = Game(
    key="SP9",
    name="Super Pan 9",
    regulation="Portaria 261/96/M",
    events=EVENTS,
    money=MONEY,
    equipment=EQUIPMENT,
    closes_betting=frozenset({"dice_thrown"}),
    derive=derive,
    us_per_event=15.9,
    compare=compare,
    bank_round=bank_round,
    money_tables=money_tables,
    session=BankSession,
)
