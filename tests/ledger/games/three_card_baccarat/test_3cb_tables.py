"""3CB ranking and odds by exhaustive enumeration (RULES §3.5, §9.3).

Every one of the C(52,3) = 22,100 single-deck hands is valued twice — by the formula in
``rules.py`` and by the annex data in ``tables.py`` — and the counts per level, the banker's
points, and the exact house edges of RULES §9.3 are reproduced as ``Fraction``. The whole
ranking is pinned by a SHA-256 digest, so any change to it must be deliberate.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from fractions import Fraction
from functools import cache
from itertools import combinations

import pytest

from ledger.domain.equipment import Card, Rank, Suit
from ledger.games.three_card_baccarat.rules import (
    HandValue,
    evaluate,
    is_figure,
    level_number,
    level_of,
)
from ledger.games.three_card_baccarat.tables import LEVELS, PRIZES, RANKING

DECK = [Card(rank, suit) for suit in Suit for rank in Rank]
Hand = tuple[Card, Card, Card]

RANKING_DIGEST = "09827e935c69c9d87960765fd30247e8db249c8ef5e665cfa1ab86df353dc8e1"
"""SHA-256 of every hand, sorted by level (``NN AS 2S 3S`` lines, deck order within a level)."""


def all_hands() -> Iterator[Hand]:
    return combinations(DECK, 3)  # type: ignore[return-value]


@cache
def valued(three_figures: str = "any") -> tuple[tuple[Hand, HandValue], ...]:
    return tuple((h, evaluate(h, three_figures)) for h in all_hands())  # type: ignore[arg-type]


def level_counts(three_figures: str = "any") -> Counter[int]:
    return Counter(v.level.level for _, v in valued(three_figures))


# --- The ranking --------------------------------------------------------------------------


def test_the_annex_has_31_levels_best_first_with_distinct_kinds() -> None:
    assert [lv.level for lv in RANKING] == list(range(1, 32))
    assert len({(lv.points, lv.figures) for lv in RANKING}) == 31
    assert RANKING[0].points is None and RANKING[0].figures == 3
    assert len(LEVELS) == 30


@pytest.mark.parametrize("points", range(10))
@pytest.mark.parametrize("figures", range(3))
def test_the_formula_gives_the_level_written_in_the_annex(points: int, figures: int) -> None:
    assert level_number(points, figures) == LEVELS[(points, figures)].level


def test_formula_and_annex_data_agree_on_every_single_deck_hand() -> None:
    """Points, figures and the level are recomputed here from the definitions of RULES §3.5."""
    for hand, value in valued():
        points = sum(min(c.rank.number, 10) % 10 for c in hand) % 10
        figures = sum(1 for c in hand if c.rank in (Rank.JACK, Rank.QUEEN, Rank.KING))
        assert (value.points, value.figures) == (points, figures), hand
        if figures == 3:
            assert value.level == RANKING[0]
        else:
            assert (
                value.level == level_of(points, figures) == RANKING[2 + 3 * (9 - points) + (2 - figures) - 1]
            )


def test_ranking_level_counts_reproduce_rules_9_3() -> None:
    counts = level_counts()
    assert sum(counts.values()) == 22_100
    assert counts[1] == 220
    for lv in RANKING[1:]:
        expected = {2: 264, 0: 988}.get(lv.figures)
        if expected is None:  # exactly one figure
            assert lv.points is not None
            expected = 960 if lv.points % 2 else 912
        assert counts[lv.level] == expected, lv


def test_a_zero_with_two_figures_always_holds_a_ten() -> None:
    for hand, value in valued():
        if value.level.level == 29:
            assert [c.rank for c in hand if not is_figure(c)] == [Rank.TEN]


def test_the_full_ranking_is_pinned_by_its_digest() -> None:
    ordered = sorted(valued(), key=lambda hv: hv[1].level.level)
    text = "\n".join(f"{v.level.level:02d} {' '.join(str(c) for c in h)}" for h, v in ordered)
    assert hashlib.sha256(text.encode()).hexdigest() == RANKING_DIGEST


def test_kqj_only_counts_64_three_figure_hands_and_ranks_the_rest_as_zero_with_figures() -> None:
    """RULES §8.3 B8: 220 vs 64; a K-K-J under kqj_only ranks with the 0-with-figures hands."""
    counts = level_counts("kqj_only")
    assert counts[1] == 64
    assert counts[29] == 264 + 220 - 64
    assert sum(counts.values()) == 22_100
    kkj = evaluate([Card.parse("KS"), Card.parse("KH"), Card.parse("JD")], "kqj_only")
    assert (kkj.three_figures, kkj.level.level) == (False, 29)


# --- The banker's points and the side bets ------------------------------------------------


def banker_points() -> Counter[int | str]:
    return Counter("3F" if v.three_figures else v.points for _, v in valued())


def test_banker_points_counts_reproduce_rules_9_3() -> None:
    counts = banker_points()
    assert counts["3F"] == 220
    for p in range(10):
        assert counts[p] == (2212 if p % 2 else 2164), p
    assert sum(counts[p] for p in (1, 3, 5, 7, 9)) == 11_060
    assert sum(counts[p] for p in (0, 2, 4, 6, 8)) == 10_820


def edge_of(win: int, lose: int, prize: Fraction, total: int = 22_100) -> Fraction:
    """House edge per unit staked: losses minus the net prize of wins (carries count 0)."""
    return (lose - prize * win) / total


NET_EVEN_MONEY = 1 - Fraction(PRIZES["odd"].commission_rate)


def test_odd_and_even_house_edges_are_exact() -> None:
    counts = banker_points()
    odd = sum(counts[p] for p in (1, 3, 5, 7, 9))
    even = sum(counts[p] for p in (0, 2, 4, 6, 8))
    assert Fraction(95, 100) == NET_EVEN_MONEY
    assert edge_of(odd, even, NET_EVEN_MONEY) == Fraction(313, 22_100)
    assert edge_of(even, odd, NET_EVEN_MONEY) == Fraction(781, 22_100)
    assert round(float(Fraction(313, 22_100)) * 100, 2) == 1.42
    assert round(float(Fraction(781, 22_100)) * 100, 2) == 3.53


def test_points_and_three_figures_house_edges_are_exact() -> None:
    counts = banker_points()
    prize = Fraction(PRIZES["points"].to_win)
    for p in range(10):
        edge = edge_of(counts[p], 22_100 - counts[p], prize)
        assert edge == (Fraction(2192, 22_100) if p % 2 else Fraction(2624, 22_100)), p
    three = edge_of(220, 22_100 - 220, Fraction(PRIZES["three_figures"].to_win))
    assert three == Fraction(18_360, 22_100)
    assert round(float(three) * 100, 1) == 83.1
    assert round(float(Fraction(2192, 22_100)) * 100, 2) == 9.92
    assert round(float(Fraction(2624, 22_100)) * 100, 2) == 11.87


def disjoint_pairs() -> tuple[int, int, int]:
    """(place wins, ties, banker wins) over every banker hand and every disjoint place hand.

    For a banker hand B, the place hands at level L that share no card with B are counted by
    inclusion–exclusion over B's cards (407,170,400 pairs without enumerating them).
    """
    hands = valued()
    count: Counter[int] = Counter()
    with_card: Counter[tuple[int, Card]] = Counter()
    with_pair: Counter[tuple[int, tuple[Card, Card]]] = Counter()
    for hand, value in hands:
        lv = value.level.level
        count[lv] += 1
        for card in hand:
            with_card[(lv, card)] += 1
        for pair in combinations(hand, 2):
            with_pair[(lv, pair)] += 1  # type: ignore[index]
    wins = ties = loses = 0
    for banker, value in hands:
        pairs = list(combinations(banker, 2))
        for lv in range(1, 32):
            n = (
                count[lv]
                - sum(with_card[(lv, c)] for c in banker)
                + sum(with_pair[(lv, p)] for p in pairs)  # type: ignore[index]
                - (1 if value.level.level == lv else 0)
            )
            if lv < value.level.level:
                wins += n
            elif lv == value.level.level:
                ties += n
            else:
                loses += n
    return wins, ties, loses


@pytest.mark.slow  # 407 million pairs of hands, counted by class: 2.6 s
def test_tie_and_main_bet_house_edges_over_disjoint_hands_are_exact() -> None:
    wins, ties, loses = disjoint_pairs()
    total = wins + ties + loses
    assert total == 22_100 * 18_424 == 407_170_400
    assert ties == 15_373_920
    assert wins == loses == 195_898_240  # the place and the banker are symmetric
    tie_edge = 1 - Fraction(ties, total) * (PRIZES["tie"].to_win + 1)
    assert tie_edge == Fraction(75_284, 363_545)
    assert round(float(tie_edge) * 100, 1) == 20.7
    main_edge = Fraction(loses, total) - NET_EVEN_MONEY * Fraction(wins, total)
    assert main_edge == Fraction(306_091, 12_724_075)
    assert round(float(main_edge) * 100, 2) == 2.41
