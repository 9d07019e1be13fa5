"""Fish-Prawn-Crab (魚蝦蟹骰寶, "Hoo Hey How"), Portaria 21/96/M: three dice, figures and colours.

The feed (FEED §4) is in ``feed.py``, the faces and prizes of art. 6 in ``tables.py``, the
settlement of each spot in ``rules.py``, the round's derivation (cocked dice, voids) in
``round.py`` and the simulator in ``simulate.py`` (RULES §2).
"""

from ledger.games.base import Game
from ledger.games.fish_prawn_crab.equipment import EQUIPMENT
from ledger.games.fish_prawn_crab.feed import EVENTS
from ledger.games.fish_prawn_crab.money import MONEY
from ledger.games.fish_prawn_crab.round import derive

GAME = Game(
    key="FPC",
    name="Fish-Prawn-Crab",
    regulation="Portaria 21/96/M",
    events=EVENTS,
    money=MONEY,
    equipment=EQUIPMENT,
    closes_betting=frozenset({"dice_shown", "die_cocked"}),
    derive=derive,
    us_per_event=12.4,
)
