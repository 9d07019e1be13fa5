"""Roulette data (RULES §5.2, §5.4, §9.5): the wheel, the layout and the prizes check themselves.

The house edge of every spot is computed exactly, as a ``Fraction``, by settling a bet on each of
the 37 pockets with ``rules.settle``: the data and the rules are cross-checked every run.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from fractions import Fraction
from itertools import pairwise

import pytest

from ledger.domain.rulebook import complete_rulebook
from ledger.games.roulette.feed import GroupSpot, NumbersSpot, OutsideSpot
from ledger.games.roulette.rules import Spot, covered_numbers, settle, spot_problem
from ledger.games.roulette.tables import (
    BLACK_NUMBERS,
    COLUMNS,
    DOZENS,
    LAYOUT_SPOTS,
    OUTSIDE,
    PAYOUTS,
    POCKETS,
    RED_NUMBERS,
    ROWS,
    SPOT_SIZES,
    WHEEL_ORDER,
    ZERO_SPOTS,
)

NINE = (1, 2, 3, 4, 5, 6, 7, 8, 9)
TWELVE = (25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36)
SECTOR_BOOK = complete_rulebook({"rl": {"sectors": {"nine": [list(NINE)], "twelve": [list(TWELVE)]}}})
STAKE = Decimal("100")


def all_valid_spots() -> Iterator[Spot]:
    """Every spot of the standard layout, plus one authorised sector of each size."""
    for n in POCKETS:
        yield NumbersSpot(kind="straight", numbers=(n,))
    for kind, shapes in LAYOUT_SPOTS.items():
        for shape in sorted(tuple(sorted(s)) for s in shapes):
            yield NumbersSpot(kind=kind, numbers=shape)
    yield NumbersSpot(kind="nine", numbers=NINE)
    yield NumbersSpot(kind="twelve", numbers=TWELVE)
    for which in (1, 2, 3):
        yield GroupSpot(kind="column", which=which)
        yield GroupSpot(kind="dozen", which=which)
    for outside in OUTSIDE:
        yield OutsideSpot(kind=outside)


def spot_id(spot: Spot) -> str:
    numbers = getattr(spot, "numbers", None)
    which = getattr(spot, "which", None)
    suffix = "-".join(map(str, numbers)) if numbers else (str(which) if which else "")
    return f"{spot.kind}:{suffix}" if suffix else spot.kind


VALID_SPOTS = list(all_valid_spots())


def house_edge(spot: Spot) -> Fraction:
    """The house's exact expected gain per unit staked, over the 37 equally likely pockets."""
    player = Fraction(0)
    for pocket in POCKETS:
        due = settle(spot, STAKE, pocket)
        player += Fraction(due.won) if due.result == "win" else -Fraction(STAKE)
    return -player / (len(POCKETS) * Fraction(STAKE))


def test_the_wheel_has_37_pockets_in_the_european_order() -> None:
    assert sorted(WHEEL_ORDER) == list(range(37))
    assert WHEEL_ORDER[:5] == (0, 32, 15, 19, 4)
    assert WHEEL_ORDER[-1] == 26


def test_18_red_and_18_black_numbers_and_zero_has_no_colour() -> None:
    assert len(RED_NUMBERS) == len(BLACK_NUMBERS) == 18
    assert frozenset(range(1, 37)) == RED_NUMBERS | BLACK_NUMBERS
    assert not RED_NUMBERS & BLACK_NUMBERS
    assert 0 not in RED_NUMBERS | BLACK_NUMBERS


def test_colours_alternate_around_the_wheel() -> None:
    """The red set and the pocket order agree: after 0, red and black alternate (RULES §5.2)."""
    colours = ["red" if n in RED_NUMBERS else "black" for n in WHEEL_ORDER[1:]]
    assert all(a != b for a, b in pairwise(colours))


@pytest.mark.parametrize("groups", [COLUMNS, DOZENS], ids=["columns", "dozens"])
def test_columns_and_dozens_partition_1_to_36(groups: dict[int, frozenset[int]]) -> None:
    assert sorted(groups) == [1, 2, 3]
    assert all(len(g) == 12 for g in groups.values())
    assert frozenset().union(*groups.values()) == frozenset(range(1, 37))


@pytest.mark.parametrize(
    ("which", "first_four"),
    [(1, [1, 4, 7, 10]), (2, [2, 5, 8, 11]), (3, [3, 6, 9, 12])],
    ids=["c1", "c2", "c3"],
)
def test_column_membership(which: int, first_four: list[int]) -> None:
    assert sorted(COLUMNS[which])[:4] == first_four
    assert max(COLUMNS[which]) == 33 + which


def test_dozen_membership() -> None:
    assert (min(DOZENS[1]), max(DOZENS[1])) == (1, 12)
    assert (min(DOZENS[2]), max(DOZENS[2])) == (13, 24)
    assert (min(DOZENS[3]), max(DOZENS[3])) == (25, 36)


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("even", set(range(2, 37, 2))),
        ("odd", set(range(1, 37, 2))),
        ("low", set(range(1, 19))),
        ("high", set(range(19, 37))),
    ],
)
def test_even_money_sets(kind: str, expected: set[int]) -> None:
    assert OUTSIDE[kind] == expected  # type: ignore[index]


def test_layout_has_57_splits_12_streets_22_corners_11_lines() -> None:
    counts = {kind: len(shapes) for kind, shapes in LAYOUT_SPOTS.items()}
    assert counts == {"split": 57, "street": 12, "corner": 22, "line": 11}
    for kind, shapes in LAYOUT_SPOTS.items():
        assert all(len(s) == SPOT_SIZES[kind] and 0 not in s for s in shapes), kind
    assert set(LAYOUT_SPOTS["street"]) == set(ROWS)


def test_zero_combinations_cover_zero_and_have_the_right_size() -> None:
    for kind, shapes in ZERO_SPOTS.items():
        assert all(0 in s and len(s) == SPOT_SIZES[kind] for s in shapes), kind
    assert sum(len(s) for s in ZERO_SPOTS.values()) == 6


@pytest.mark.parametrize(
    ("kind", "to_win"),
    [
        ("straight", 35),
        ("split", 17),
        ("street", 11),
        ("corner", 8),
        ("line", 5),
        ("nine", 3),
        ("twelve", 2),
        ("column", 2),
        ("dozen", 2),
        ("red", 1),
        ("black", 1),
        ("even", 1),
        ("odd", 1),
        ("low", 1),
        ("high", 1),
    ],
)
def test_prize_of_each_kind_is_36_over_n_minus_1(kind: str, to_win: int) -> None:
    """RL art. 7 as tabulated in RULES §5.4 and §9.5."""
    odds = PAYOUTS[kind]  # type: ignore[index]
    assert (odds.to_win, odds.per) == (to_win, 1)
    assert odds.rule == "RL art. 7"
    assert Fraction(36, SPOT_SIZES[kind]) - 1 == to_win  # type: ignore[index]


def test_every_spot_kind_has_a_prize_and_a_size() -> None:
    assert set(PAYOUTS) == set(SPOT_SIZES)
    assert len(PAYOUTS) == 15


def test_tables_are_read_only() -> None:
    with pytest.raises(TypeError):
        PAYOUTS["straight"] = PAYOUTS["split"]  # type: ignore[index]
    with pytest.raises(TypeError):
        COLUMNS[1] = frozenset()  # type: ignore[index]


def test_odds_prize_is_exact_decimal() -> None:
    assert PAYOUTS["straight"].prize(Decimal("12.50")) == Decimal("437.50")
    assert PAYOUTS["dozen"].prize(Decimal("0.01")) == Decimal("0.02")


def test_valid_spot_enumeration_is_complete() -> None:
    """37 straights + 102 layout spots + 2 sectors + 3 columns + 3 dozens + 6 even-money."""
    assert len(VALID_SPOTS) == 37 + 57 + 12 + 22 + 11 + 2 + 6 + 6
    assert all(spot_problem(s, SECTOR_BOOK) is None for s in VALID_SPOTS)


@pytest.mark.parametrize("spot", VALID_SPOTS, ids=spot_id)
def test_every_valid_spot_covers_n_numbers_paying_36_over_n(spot: Spot) -> None:
    covered = len(covered_numbers(spot, SECTOR_BOOK))
    odds = PAYOUTS[spot.kind]
    assert covered == SPOT_SIZES[spot.kind]
    assert covered * (odds.to_win + 1) == 36 * odds.per


@pytest.mark.parametrize("spot", VALID_SPOTS, ids=spot_id)
def test_every_valid_spot_has_a_house_edge_of_1_in_37(spot: Spot) -> None:
    """RULES §9.5: only a straight-up on 0 wins on 0, so every bet's edge is exactly 1/37."""
    assert house_edge(spot) == Fraction(1, 37)


@pytest.mark.parametrize("kind", sorted(PAYOUTS))
def test_every_kind_has_a_house_edge_of_1_in_37(kind: str) -> None:
    spots = [s for s in VALID_SPOTS if s.kind == kind]
    assert spots, kind
    assert {house_edge(s) for s in spots} == {Fraction(1, 37)}


def test_a_zero_combination_has_a_worse_edge_under_art_8() -> None:
    """RULES §8.5 R3: why 0-combinations are not offered by default — 0 is covered but loses."""
    split_0_1 = NumbersSpot(kind="split", numbers=(0, 1))
    assert house_edge(split_0_1) == Fraction(19, 37)
