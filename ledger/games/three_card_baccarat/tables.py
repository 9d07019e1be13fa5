"""3-Card Baccarat data (Portaria 22/96/M, RULES §3): card points, the 31-level ranking, prizes.

Nothing here computes a settlement; it is the data ``rules.py`` reads. Each entry cites its
article in RULES.md's style.

The ranking (3CB art. 5 and annex, RULES §3.5) is written out as data, best first, one line per
level: the position in :data:`RANKING` is the level. ``rules.level_number`` computes the same
level by the formula ``1`` for three figures, else ``2 + 3 × (9 − points) + (2 − figures)``; the
tests check the two agree on all 22,100 single-deck hands.

>>> RANKING[0].name, RANKING[1].name, RANKING[30].name
('three figures', '9 with two figures', '0 with no figure')
>>> LEVELS[(8, 1)].level
6
>>> PRIZES["three_figures"].prize(Decimal("10"))
Decimal('160')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from types import MappingProxyType
from typing import Final, Literal

from ledger.domain.equipment import Rank

RANKING_RULE: Final = "3CB art. 5 and annex"
MAIN_RULE: Final = "3CB art. 6, art. 9(1), art. 10"
CARRY_RULE: Final = "3CB art. 7(2)"
TIE_BET_RULE: Final = "3CB art. 8(3), art. 9"
PARITY_RULE: Final = "3CB art. 8(1), art. 9(2), art. 10"
PARITY_CARRY_RULE: Final = "3CB art. 8(1)"
THREE_FIGURES_RULE: Final = "3CB art. 8(2)(a), art. 9"
POINTS_RULE: Final = "3CB art. 8(2)(b), art. 9"
POINTS_ON_THREE_FIGURES_RULE: Final = "3CB art. 8(2)(b); RULES §8.3 B1"
DEAL_ORDER_RULE: Final = "3CB art. 2(2)"
BURN_RULE: Final = "3CB art. 2(2)-(3)"
CUT_RULE: Final = "3CB art. 2(1)"
EQUIPMENT_RULE: Final = "3CB art. 1"
SHOE_END_RULE: Final = "3CB art. 3"
MISDEAL_RULE: Final = "3CB art. 2(4); RULES §3.8"
MISDEAL_BETS_RULE: Final = "3CB art. 2(4); RULES §8.3 B4"
PLACES_RULE: Final = "3CB art. 4(1); RULES §8.3 B5"
DUPLICATE_RULE: Final = "3CB art. 1; FEED §5"

SpotKind = Literal["hand", "tie", "odd", "even", "three_figures", "points"]
"""Every 3CB spot kind of the feed (FEED §5)."""

CARD_POINTS: Final[Mapping[Rank, int]] = MappingProxyType(
    {
        Rank.ACE: 1,
        Rank.TWO: 2,
        Rank.THREE: 3,
        Rank.FOUR: 4,
        Rank.FIVE: 5,
        Rank.SIX: 6,
        Rank.SEVEN: 7,
        Rank.EIGHT: 8,
        Rank.NINE: 9,
        Rank.TEN: 0,
        Rank.JACK: 0,
        Rank.QUEEN: 0,
        Rank.KING: 0,
    }
)
"""Card points: A = 1, 2–9 face value, 10 and the figures 0 (3CB art. 5(1), RULES §3.5)."""

FIGURES: Final[frozenset[Rank]] = frozenset({Rank.JACK, Rank.QUEEN, Rank.KING})
"""The figures («figuras», 公): J, Q and K only; the 10 is not a figure (3CB art. 5)."""

CARDS_PER_HAND: Final = 3
"""Every hand, the banker's included, gets three cards (3CB art. 2(2))."""

CARDS_PER_DECK: Final = 52
MAX_PLACES: Final = 7
"""At most 8 places including the banker's (3CB art. 4(1)); FEED numbers them 1–7."""

MARKER_FROM_END: Final[tuple[int, int]] = (30, 40)
"""The last-round blank card sits among the last 30 to 40 cards of a shoe (3CB art. 2(1))."""


@dataclass(frozen=True)
class Level:
    """One of the 31 levels of the annex: ``level`` 1 is best; ``points`` is ``None`` for three
    figures; ``figures`` counts the J/Q/K in the hand (3CB art. 5 and annex)."""

    level: int
    points: int | None
    figures: int
    name: str


RANKING: Final[tuple[Level, ...]] = (
    Level(1, None, 3, "three figures"),
    Level(2, 9, 2, "9 with two figures"),
    Level(3, 9, 1, "9 with one figure"),
    Level(4, 9, 0, "9 with no figure"),
    Level(5, 8, 2, "8 with two figures"),
    Level(6, 8, 1, "8 with one figure"),
    Level(7, 8, 0, "8 with no figure"),
    Level(8, 7, 2, "7 with two figures"),
    Level(9, 7, 1, "7 with one figure"),
    Level(10, 7, 0, "7 with no figure"),
    Level(11, 6, 2, "6 with two figures"),
    Level(12, 6, 1, "6 with one figure"),
    Level(13, 6, 0, "6 with no figure"),
    Level(14, 5, 2, "5 with two figures"),
    Level(15, 5, 1, "5 with one figure"),
    Level(16, 5, 0, "5 with no figure"),
    Level(17, 4, 2, "4 with two figures"),
    Level(18, 4, 1, "4 with one figure"),
    Level(19, 4, 0, "4 with no figure"),
    Level(20, 3, 2, "3 with two figures"),
    Level(21, 3, 1, "3 with one figure"),
    Level(22, 3, 0, "3 with no figure"),
    Level(23, 2, 2, "2 with two figures"),
    Level(24, 2, 1, "2 with one figure"),
    Level(25, 2, 0, "2 with no figure"),
    Level(26, 1, 2, "1 with two figures"),
    Level(27, 1, 1, "1 with one figure"),
    Level(28, 1, 0, "1 with no figure"),
    Level(29, 0, 2, "0 with two figures"),
    Level(30, 0, 1, "0 with one figure"),
    Level(31, 0, 0, "0 with no figure"),
)
"""The annex's 31 levels, best first (RULES §3.5). Same level is a tie: there is no further
tie-break, suits and single card ranks never count (3CB art. 7(1))."""

LEVELS: Final[Mapping[tuple[int, int], Level]] = MappingProxyType(
    {(lv.points, lv.figures): lv for lv in RANKING if lv.points is not None}
)
"""The level of a hand that is not three figures, by ``(points, figures)``."""

THREE_FIGURES: Final[Level] = RANKING[0]


@dataclass(frozen=True)
class Odds:
    """A prize of ``to_win`` to 1 with the stake returned (3CB art. 9, RULES §0.3), and the
    commission rate on the prize (3CB art. 10).

    >>> Odds(1, Decimal("0.05"), "x").prize(Decimal("100"))
    Decimal('100')
    """

    to_win: int
    commission_rate: Decimal
    rule: str

    def prize(self, stake: Decimal) -> Decimal:
        """The prize paid on top of the returned stake."""
        return stake * self.to_win


COMMISSION_RATE: Final = Decimal("0.05")
"""5% of the prize of the main and odd/even bets (3CB art. 10)."""

PRIZES: Final[Mapping[SpotKind, Odds]] = MappingProxyType(
    {
        "hand": Odds(1, COMMISSION_RATE, MAIN_RULE),
        "odd": Odds(1, COMMISSION_RATE, PARITY_RULE),
        "even": Odds(1, COMMISSION_RATE, PARITY_RULE),
        "three_figures": Odds(16, Decimal(0), THREE_FIGURES_RULE),
        "points": Odds(8, Decimal(0), POINTS_RULE),
        "tie": Odds(20, Decimal(0), TIE_BET_RULE),
    }
)
"""The prize and commission of every spot kind (3CB arts. 8–10, RULES §3.6)."""
