"""Stud Poker data (DRE 61/2004, RULES §6): the hand ranking, the raise prizes, the jackpot hands.

Nothing here computes a settlement; ``hands.py`` evaluates five cards and ``rules.py`` /
``pool.py`` settle them. The ranking is declared weakest first (STYLE §4.4): position is
strength, so comparing two categories is comparing two integers.

>>> HAND_RANKING[-1], Category.FLUSH > Category.STRAIGHT
(<Category.ROYAL_FLUSH: 9>, True)
>>> RAISE_PAYS[Category.FULL_HOUSE]
RaisePay(to_win=7, capped=False, rule='STUD art. 9(5)')
>>> SUIT_ORDER
('D', 'C', 'H', 'S')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from types import MappingProxyType
from typing import Final

RANKING_RULE: Final = "STUD art. 4, art. 8"
"""Where the card and hand ranking comes from (RULES §6.3)."""


class Category(IntEnum):
    """The ten hand categories of STUD art. 8, weakest first (value = strength)."""

    HIGH_CARD = 0
    ONE_PAIR = 1
    TWO_PAIRS = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8
    ROYAL_FLUSH = 9

    @property
    def key(self) -> str:
        """The snake_case name used in the feed (``jackpot_paid.hand``) and in the rulebook."""
        return _KEYS[self]

    @property
    def label(self) -> str:
        """The category in words, with its Portuguese and Chinese names (RULES §6.3)."""
        return _LABELS[self]


_KEYS: Final[dict[Category, str]] = {
    Category.HIGH_CARD: "high_card",
    Category.ONE_PAIR: "one_pair",
    Category.TWO_PAIRS: "two_pairs",
    Category.THREE_OF_A_KIND: "three_of_a_kind",
    Category.STRAIGHT: "straight",
    Category.FLUSH: "flush",
    Category.FULL_HOUSE: "full_house",
    Category.FOUR_OF_A_KIND: "four_of_a_kind",
    Category.STRAIGHT_FLUSH: "straight_flush",
    Category.ROYAL_FLUSH: "royal_flush",
}

_LABELS: Final[dict[Category, str]] = {
    Category.HIGH_CARD: "high card («cinco cartas diferentes» / 五張散牌)",
    Category.ONE_PAIR: "one pair («par» / 一對)",
    Category.TWO_PAIRS: "two pairs («dois pares» / 兩對)",
    Category.THREE_OF_A_KIND: "three of a kind («três cartas iguais» / 三條)",
    Category.STRAIGHT: "straight («sequência» / 順)",
    Category.FLUSH: "flush («naipe ou cor» / 同花)",
    Category.FULL_HOUSE: "full house («trio-par» / 夫盧)",
    Category.FOUR_OF_A_KIND: "four of a kind («quatro cartas iguais» / 四條)",
    Category.STRAIGHT_FLUSH: "straight flush («sequência de naipe» / 同花順)",
    Category.ROYAL_FLUSH: "royal flush («naipe real» / 黃袍麒麟)",
}

HAND_RANKING: Final[tuple[Category, ...]] = tuple(Category)
"""The categories weakest first (STUD art. 8, RULES §6.3)."""

RANK_LETTERS: Final = "23456789TJQKA"
"""Ranks low to high (STUD art. 4(2)); a rank's strength is its index. The ace counts low only
in the straight 5-4-3-2-A, the lowest straight (art. 4(3))."""

SUIT_ORDER: Final[tuple[str, ...]] = ("D", "C", "H", "S")
"""Suits low to high: diamonds < clubs < hearts < spades (STUD art. 4(1))."""

SUIT_NAMES: Final[Mapping[str, str]] = MappingProxyType({"S": "♠", "H": "♥", "C": "♣", "D": "♦"})

CATEGORY_COUNTS: Final[Mapping[Category, int]] = MappingProxyType(
    {
        Category.ROYAL_FLUSH: 4,
        Category.STRAIGHT_FLUSH: 36,
        Category.FOUR_OF_A_KIND: 624,
        Category.FULL_HOUSE: 3_744,
        Category.FLUSH: 5_108,
        Category.STRAIGHT: 10_200,
        Category.THREE_OF_A_KIND: 54_912,
        Category.TWO_PAIRS: 123_552,
        Category.ONE_PAIR: 1_098_240,
        Category.HIGH_CARD: 1_302_540,
    }
)
"""How many of the C(52,5) = 2,598,960 five-card hands fall in each category (RULES §9.6)."""

NON_QUALIFYING_HANDS: Final = 1_135_260
"""Five-card hands with which the dealer does not qualify (RULES §9.6, art. 9(1)–(3))."""

ACE_KING_HIGH_HANDS: Final = 167_280
"""High-card hands holding an ace and a king: the weakest that qualify (RULES §9.6)."""


@dataclass(frozen=True)
class RaisePay:
    """What a winning raise pays by the player's category: ``to_win`` to 1, the stake returned
    (RULES §0.3). ``capped`` prizes are subject to the house maximum per game (art. 9(5), P2)."""

    to_win: int
    capped: bool = False
    rule: str = "STUD art. 9(5)"


RAISE_PAYS: Final[Mapping[Category, RaisePay]] = MappingProxyType(
    {
        Category.HIGH_CARD: RaisePay(1),
        Category.ONE_PAIR: RaisePay(1),
        Category.TWO_PAIRS: RaisePay(2),
        Category.THREE_OF_A_KIND: RaisePay(3),
        Category.STRAIGHT: RaisePay(4),
        Category.FLUSH: RaisePay(5),
        Category.FULL_HOUSE: RaisePay(7),
        Category.FOUR_OF_A_KIND: RaisePay(20, capped=True),
        Category.STRAIGHT_FLUSH: RaisePay(50, capped=True),
        Category.ROYAL_FLUSH: RaisePay(50, capped=True, rule="STUD art. 9(5), art. 13; RULES §8.6 P3"),
    }
)
"""The raise prize by the player's category (STUD art. 9(5)). The royal-flush multiple is the
rulebook's ``stud.rf_multiple`` (50–100, P3); the table's 50 is its default."""

JACKPOT_HANDS: Final[tuple[Category, ...]] = (
    Category.FLUSH,
    Category.FULL_HOUSE,
    Category.FOUR_OF_A_KIND,
    Category.STRAIGHT_FLUSH,
    Category.ROYAL_FLUSH,
)
"""The hands the progressive jackpot pays (STUD art. 10(2))."""

FIXED_FUNDED_BY_HOUSE: Final[tuple[Category, ...]] = (
    Category.FLUSH,
    Category.FULL_HOUSE,
    Category.FOUR_OF_A_KIND,
)
"""Fixed-sum awards paid by the house unless ``jackpot.fixed_from_pool`` (RULES §8.6 P5)."""

SF_SHARE: Final = "0.10"
"""A straight flush wins at least 10 % of the pool (STUD art. 10(2))."""
