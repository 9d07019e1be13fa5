"""Super Pan 9 data: card points and ranks, the commission rate, and the articles (RULES §1).

Each constant carries the article it rests on, with RULES.md's markers ([I] = our
interpretation, listed in RULES §8.1).

>>> POINTS[Rank.KING], POINTS[Rank.ACE], POINTS[Rank.SEVEN]
(0, 1, 7)
>>> RANK_HIGH[Rank.KING] > RANK_HIGH[Rank.TEN] > RANK_HIGH[Rank.NINE] > RANK_HIGH[Rank.ACE]
True
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from types import MappingProxyType
from typing import Final

from ledger.domain.equipment import Rank

RANKS_HIGH_TO_LOW: Final[tuple[Rank, ...]] = (
    Rank.KING,
    Rank.QUEEN,
    Rank.JACK,
    Rank.TEN,
    Rank.NINE,
    Rank.EIGHT,
    Rank.SEVEN,
    Rank.SIX,
    Rank.FIVE,
    Rank.FOUR,
    Rank.THREE,
    Rank.TWO,
    Rank.ACE,
)
"""Card rank for tie-breaks, high to low; suits have no rank (SP9 art. 6(1))."""

RANK_HIGH: Final[Mapping[Rank, int]] = MappingProxyType(
    {rank: len(RANKS_HIGH_TO_LOW) - i for i, rank in enumerate(RANKS_HIGH_TO_LOW)}
)
"""A rank's tie-break strength: K = 13 down to A = 1 (SP9 art. 6(1))."""

POINTS: Final[Mapping[Rank, int]] = MappingProxyType(
    {rank: (0 if rank in (Rank.TEN, Rank.JACK, Rank.QUEEN, Rank.KING) else rank.number) for rank in Rank}
)
"""Card points: 10, J, Q, K are 0; A is 1; 2–9 their face value (SP9 art. 6(1))."""

COMMISSION_RATE: Final = Decimal("0.05")
"""5% of every winning play (SP9 art. 9)."""

MAX_HANDS: Final = 26
"""52 cards, two per hand (RULES §1.2, §8.1 S14)."""

# The articles, as cited in steps and findings.
POINTS_RULE: Final = "SP9 art. 6"
COMPARE_RULE: Final = "SP9 art. 7"
TIE_RULE: Final = "SP9 art. 8"
BOTH_CARDS_RULE: Final = "SP9 art. 7(2), art. 8; RULES §8.1 S2 [I]"
DICE_RULE: Final = "SP9 art. 2(2)-(3); RULES §8.1 S3-S4 [I]"
RETHROW_RULE: Final = "SP9 art. 2(4)"
DEAL_RULE: Final = "SP9 art. 2(3)"
DECK_RULE: Final = "SP9 art. 1(1), art. 2(1)"
PAYOUT_RULE: Final = "SP9 art. 7; RULES §8.1 S1 [I]"
CAP_RULE: Final = "SP9 art. 5(3); RULES §8.1 S6 [I]"
ORDER_RULE: Final = "SP9 art. 2(3), art. 5(5); RULES §8.1 S5-S6 [I]"
SPLIT_RULE: Final = "SP9 art. 5(5); RULES §8.1 S7 [I]"
COMMISSION_RULE: Final = "SP9 art. 9; RULES §8.1 S9"
BANK_COMMISSION_RULE: Final = "SP9 art. 9; RULES §8.1 S8 [I]"
COBANKER_BET_RULE: Final = "SP9 art. 5(5)"
BANKER_SEAT_BET_RULE: Final = "RULES §8.1 S15 [I]"
CAPITAL_BEFORE_DICE_RULE: Final = "SP9 art. 5(3)"
RUN_RULE: Final = "SP9 art. 5(1); RULES §8.1 S12"
REFUSAL_RULE: Final = "SP9 art. 5(2)"
CARRY_RULE: Final = "SP9 art. 5(4); RULES §8.1 S10 [I]"
MIN_BANK_RULE: Final = "RULES §8.1 S11 [I]"
