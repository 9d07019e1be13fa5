"""The STUD evaluator against STUD art. 4 and art. 8, and over all 2,598,960 hands (RULES §9.6).

The exhaustive tests run ``hands.strength`` — the function verify uses — on every five-card hand
once (a module fixture), then check the category counts of RULES §9.6, the qualification counts,
a pinned SHA-256 of the whole ordering, and that two hands from one deck never tie (the counts
and the proof over the 2.6 million hands with numpy's whole-array operations; the qualification
asked of ``dealer_qualifies`` once per distinct high-card strength, each weighed by its hands).
"""

from __future__ import annotations

import hashlib
import sys
from array import array
from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from ledger.games.stud_poker.hands import HandValue, card_index, decide, evaluate_text, strength
from ledger.games.stud_poker.rules import dealer_qualifies
from ledger.games.stud_poker.tables import (
    ACE_KING_HIGH_HANDS,
    CATEGORY_COUNTS,
    NON_QUALIFYING_HANDS,
    Category,
)

ORDERING_DIGEST = "8448cc5a9a7c6d91ad76dda803e8f507c5cb25cf552aff1ae93062a9a22b8c3a"
"""SHA-256 of every hand sorted by (strength, hand): ``strength << 30 | 5 × 6-bit card indices``,
8 bytes little-endian each."""


def _pack(hand: tuple[int, ...]) -> int:
    return hand[0] | hand[1] << 6 | hand[2] << 12 | hand[3] << 18 | hand[4] << 24


@pytest.fixture(scope="module")
def ordering() -> array[int]:
    """Every hand as ``strength << 30 | packed hand``, sorted: the full ordering."""
    keys = array("Q", (strength(h) << 30 | _pack(h) for h in combinations(range(52), 5)))
    ordered = array("Q")
    ordered.frombytes(np.sort(np.frombuffer(keys, dtype=np.uint64)).tobytes())  # numpy's sort: 4 × faster
    return ordered


def _keys(ordering: array[int]) -> np.ndarray:
    return np.frombuffer(ordering, dtype=np.uint64)


@pytest.mark.slow
def test_category_counts_are_those_of_rules_9_6(ordering: array[int]) -> None:
    categories = np.bincount((_keys(ordering) >> np.uint64(54)).astype(np.int64))
    counts = Counter({Category(c): int(n) for c, n in enumerate(categories) if n})
    assert len(ordering) == 2_598_960
    assert counts == CATEGORY_COUNTS


@pytest.mark.slow
def test_dealer_qualification_counts(ordering: array[int]) -> None:
    keys = _keys(ordering)
    high = keys[(keys >> np.uint64(54)) == Category.HIGH_CARD] >> np.uint64(30)
    strengths, hands = np.unique(high, return_counts=True)
    qualifying = sum(
        int(n) for s, n in zip(strengths, hands, strict=True) if dealer_qualifies(HandValue((), int(s)))[0]
    )
    assert len(high) - qualifying == NON_QUALIFYING_HANDS
    assert qualifying == ACE_KING_HIGH_HANDS


@pytest.mark.slow
def test_the_full_ordering_is_pinned(ordering: array[int]) -> None:
    data = array("Q", ordering)
    if sys.byteorder == "big":
        data.byteswap()
    assert hashlib.sha256(data.tobytes()).hexdigest() == ORDERING_DIGEST


@pytest.mark.slow
def test_two_hands_from_one_deck_never_tie(ordering: array[int]) -> None:
    """Proof over all hands: within each group of equal strength, either one card is common to
    every hand, or every hand holds three cards of one common rank (3 + 3 > 4 cards of a rank
    in one deck). Either way no two hands of a group are disjoint, so disjoint hands never tie.
    (A hand of five cards holds three of at most one rank: the middle one of its sorted ranks.)"""
    keys = _keys(ordering)
    strength_of = keys >> np.uint64(30)
    cards = np.stack([(keys >> np.uint64(6 * i)) & np.uint64(63) for i in range(5)], axis=1)
    masks = np.bitwise_or.reduce(np.left_shift(np.uint64(1), cards), axis=1)
    ranks = np.sort((cards >> np.uint64(2)).astype(np.int64), axis=1)
    middle = ranks[:, 2]
    triple = np.where((ranks == middle[:, None]).sum(axis=1) >= 3, middle, -1)
    starts = np.flatnonzero(np.concatenate(([True], strength_of[1:] != strength_of[:-1])))
    sizes = np.diff(np.append(starts, len(keys)))
    common = np.bitwise_and.reduceat(masks, starts)
    lowest, highest = np.minimum.reduceat(triple, starts), np.maximum.reduceat(triple, starts)
    open_groups = (sizes > 1) & (common == 0)
    one_rank = (lowest == highest) & (lowest >= 0)
    assert not np.any(open_groups & ~one_rank), [
        hex(int(strength_of[starts[g]])) for g in np.flatnonzero(open_groups & ~one_rank)[:5]
    ]
    assert np.any(open_groups)  # the second clause is needed: some groups share no card
    assert len(starts) == 21_489  # distinct strengths: the number of classes of art. 8's order


def v(text: str) -> HandValue:
    return evaluate_text(text.split())


@pytest.mark.parametrize(
    ("higher", "lower", "why"),
    [
        ("AS KS QS JS TS", "AH KH QH JH TH", "higher suit"),
        ("AD KD QD JD TD", "KS QS JS TS 9S", "category"),
        ("6C 5C 4C 3C 2C", "5S 4S 3S 2S AS", "top card: 6 beats 5"),
        ("9H 8H 7H 6H 5H", "9C 8C 7C 6C 5C", "♥ beats ♣"),
        ("2S 2H 2C 2D 3S", "AS AH AC KD KS", "category"),
        ("3S 3H 3C 3D 2S", "2C 2H 2D 2S AS", "rank of the four: 3 beats 2"),
        ("AS AH AC 2D 2S", "KS KH KC QD QS", "rank of the three: A beats K"),
        ("AH JH 9H 7H 2H", "AC JC 9C 7C 2C", "♥ beats ♣"),
        ("KH QH 9H 7H 3H", "KD QD 9D 7D 2D", "fifth card: 3 beats 2"),
        ("6S 5D 4C 3H 2H", "5S 4D 3C 2D AS", "top card: 6 beats 5"),
        ("AS KD QC JH TH", "AH KC QD JS TS", "suit of the top card: ♠ beats ♥"),
        ("5S 4D 3C 2D AH", "5H 4C 3D 2S AS", "suit of the top card: ♠ beats ♥"),
        ("9S 9D KC 7H 2D", "9H 9C KD 7S 2C", "best suit: ♠ beats ♥"),
        ("9S 9D KC 7H 3D", "9H 9C KD 7S 2C", "third odd card: 3 beats 2"),
        ("JS JD 4C 4H 9D", "JH JC 4S 4D 9S", "best suit: ♠ beats ♥"),
        ("JS JD 4C 4H 9D", "JH JC 3S 3D KS", "lower pair: 4 beats 3"),
        ("AS 9H 7C 5D 3D", "AH 9S 7D 5C 3C", "highest card: ♠ beats ♥"),
    ],
)
def test_art_8_tie_breaks(higher: str, lower: str, why: str) -> None:
    a, b = v(higher), v(lower)
    assert a.strength > b.strength
    decision = decide(a, b)
    assert decision.first_wins and not decide(b, a).first_wins
    assert why.split(": ")[-1] in decision.text, decision.text


def test_the_wheel_is_the_lowest_straight_and_there_is_no_wrap_around() -> None:
    wheel = v("5D 4C 3H 2S AD")
    assert wheel.category == Category.STRAIGHT and wheel.slots[0] == card_index("5S") >> 2
    assert all(wheel.strength < v(s).strength for s in ("6D 5C 4H 3S 2D", "AS KD QC JH TD", "7D 6C 5H 4S 3D"))
    for wrap in ("QS KD AC 2H 3D", "KS AD 2C 3H 4D", "JS QD KC AH 2D"):
        assert v(wrap).category == Category.HIGH_CARD
    assert v("5S 4S 3S 2S AS").category == Category.STRAIGHT_FLUSH
    assert v("QS KS AS 2S 3S").category == Category.FLUSH


def test_suits_rank_spades_hearts_clubs_diamonds() -> None:
    royals = [v(f"A{s} K{s} Q{s} J{s} T{s}") for s in "SHCD"]
    assert [r.strength for r in royals] == sorted((r.strength for r in royals), reverse=True)


def test_bad_hands_are_refused() -> None:
    with pytest.raises(ValueError, match="five distinct cards"):
        strength([1, 1, 2, 3, 4])
    with pytest.raises(ValueError, match="five distinct cards"):
        strength([1, 2, 3, 4])


def test_dealer_qualifies_with_ace_king_or_better() -> None:
    assert dealer_qualifies(v("AS KD 4C 3H 2D"))[0]
    assert not dealer_qualifies(v("AS QD 4C 3H 2D"))[0]
    assert not dealer_qualifies(v("KS QD JC 9H 2D"))[0]
    assert dealer_qualifies(v("2S 2D 4C 3H 7D"))[0]
