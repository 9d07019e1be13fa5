"""Super Pan 9 rules as pure functions: hand value, comparison, the dice count and the deal.

- A hand's points are the last digit of its two cards' points (SP9 art. 6(2)).
- A player seat beats the banker on higher points; on equal points the hand holding the higher
  single highest card wins (art. 7(2)); still equal, the banker wins (art. 8). With
  ``sp9.tiebreak = "both_cards"`` the second cards are compared before the banker takes the
  tie (RULES §8.1 S2). There is no push.
- The first seat dealt is position ``((T − 1) mod N) + 1`` counting counter-clockwise from the
  banker as 1 over the ``N`` hands in play, ``T`` the dice plus the declared adjustment
  (art. 2(2)–(3), S3–S4); each seat then gets two consecutive cards, counter-clockwise.

>>> hand_points((Card.parse("9D"), Card.parse("QH")))
9
>>> compare((Card.parse("TC"), Card.parse("8S")), (Card.parse("8C"), Card.parse("TH"))).decision
False
>>> first_seat(14, banker=1, seats=[1, 2, 3, 4])
2
>>> dealing_order(2, banker=1, seats=[1, 2, 3, 4])
[2, 2, 3, 3, 4, 4, 1, 1]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from ledger.domain.equipment import Card
from ledger.games.base import Verdict
from ledger.games.super_pan9.tables import (
    BOTH_CARDS_RULE,
    COMPARE_RULE,
    POINTS,
    RANK_HIGH,
    TIE_RULE,
)

Hand = tuple[Card, Card]
Tiebreak = Literal["highest_card", "both_cards"]


def hand_points(hand: Sequence[Card]) -> int:
    """Points of a hand: the sum of the card points, last digit only (SP9 art. 6(2))."""
    return sum(POINTS[c.rank] for c in hand) % 10


def ranks_high_first(hand: Sequence[Card]) -> tuple[int, ...]:
    """The tie-break strengths of the cards, highest first (SP9 art. 6(1))."""
    return tuple(sorted((RANK_HIGH[c.rank] for c in hand), reverse=True))


def describe(hand: Sequence[Card]) -> str:
    """``9D QH = 9 points``."""
    return f"{' '.join(map(str, hand))} = {hand_points(hand)} points"


SeatVerdict = Verdict[bool]
"""A player seat against the banker: whether the seat wins, under which article, and why."""


def compare(
    player: Sequence[Card], banker: Sequence[Card], tiebreak: Tiebreak = "highest_card"
) -> SeatVerdict:
    """Compare a player seat's hand with the banker's (SP9 arts. 7–8, RULES §8.1 S2)."""
    p, b = hand_points(player), hand_points(banker)
    if p != b:
        return Verdict(
            p > b,
            COMPARE_RULE,
            f"{p} against the banker's {b}: the {'player' if p > b else 'banker'} has more points",
        )
    pr, br = ranks_high_first(player), ranks_high_first(banker)
    if pr[0] != br[0]:
        return Verdict(
            pr[0] > br[0],
            COMPARE_RULE + "(2)",
            f"{p} points each: the {'player' if pr[0] > br[0] else 'banker'} holds the higher single card",
        )
    if tiebreak == "both_cards" and pr[1] != br[1]:
        return Verdict(
            pr[1] > br[1],
            BOTH_CARDS_RULE,
            f"{p} points each and the same highest card: the "
            f"{'player' if pr[1] > br[1] else 'banker'} holds the higher second card",
        )
    return Verdict(False, TIE_RULE, f"{p} points each and the same highest card: the banker wins the tie")


def ccw_from(banker: int, seats: Iterable[int]) -> list[int]:
    """The seats counter-clockwise starting at the banker's (seats are numbered
    counter-clockwise, FEED §1): the banker, the higher numbers, then the lower ones."""
    distinct = set(seats) | {banker}
    return sorted(distinct, key=lambda s: (s < banker, s))


def first_seat(total: int, *, banker: int, seats: Iterable[int]) -> int:
    """The seat dealt first: ``((T − 1) mod N) + 1`` counting the banker as 1 (RULES §1.3 8)."""
    order = ccw_from(banker, seats)
    return order[(total - 1) % len(order)]


def dealing_order(first: int, *, banker: int, seats: Iterable[int]) -> list[int]:
    """Who receives each card: two consecutive cards per seat, counter-clockwise from ``first``
    (SP9 art. 2(3))."""
    order = ccw_from(banker, seats)
    start = order.index(first)
    return [s for s in order[start:] + order[:start] for _ in range(2)]


def settlement_seats(first: int, *, banker: int, seats: Iterable[int]) -> list[int]:
    """The player seats in settlement order: counter-clockwise from the first-dealt player seat,
    the banker skipped (RULES §1.6, §8.1 S5)."""
    return [s for s in dealing_order(first, banker=banker, seats=seats)[::2] if s != banker]
