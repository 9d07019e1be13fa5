"""Fish-Prawn-Crab tables, checked exhaustively over the 216 ordered throws (RULES §9.2).

Each number here is copied from RULES §9.2, not computed from the code under test, so an edit to
a prize, a face or a winning condition changes a house edge and fails loudly; the golden digest
pins every payout of every spot on every throw.
"""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter
from decimal import Decimal
from fractions import Fraction
from typing import Literal

import pytest

from ledger.games.fish_prawn_crab.feed import (
    AnySpot,
    ColourSpot,
    Dice,
    EvenSpot,
    FigureSpot,
    Spot,
    TotalSpot,
)
from ledger.games.fish_prawn_crab.rules import colour_count, figure_count, is_triple, settle
from ledger.games.fish_prawn_crab.tables import (
    BIG_TOTALS,
    COLOURS,
    FACES,
    FIGURE_PRIZES,
    PRIZES,
    SMALL_TOTALS,
    TOTAL_PRIZES,
)

OUTCOMES: list[Dice] = [(a, b, c) for a, b, c in itertools.product(range(1, 7), repeat=3)]
"""All 216 ordered throws of three dice."""

ALL_SPOTS: list[Spot] = [
    EvenSpot(kind="small"),
    EvenSpot(kind="big"),
    *(FigureSpot(kind="figure", face=f) for f in range(1, 7)),
    *(
        ColourSpot(kind=k, colour=c)
        for k in ("one_colour", "two_colours", "three_colours")
        for c in ("red", "green", "blue")
    ),
    AnySpot(kind="any_three_colour"),
    *(FigureSpot(kind="specific_triple", face=f) for f in range(1, 7)),
    AnySpot(kind="any_triple"),
    *(TotalSpot(kind="total", total=t) for t in range(4, 18)),
]
"""Every spot of the FPC layout (FEED §4): 39 of them."""

TOTALS_TABLE = {
    3: 1,
    4: 3,
    5: 6,
    6: 10,
    7: 15,
    8: 21,
    9: 25,
    10: 27,
    11: 27,
    12: 25,
    13: 21,
    14: 15,
    15: 10,
    16: 6,
    17: 3,
    18: 1,
}
"""RULES §9.2: how many of the 216 throws give each total."""

TOTAL_EDGES = {
    4: Fraction(7, 24),
    5: Fraction(17, 36),
    6: Fraction(11, 36),
    7: Fraction(7, 72),
    8: Fraction(1, 8),
    9: Fraction(41, 216),
    10: Fraction(1, 8),
}
"""RULES §9.2: house edge on the totals (symmetric: 17 as 4, 16 as 5, …)."""

KIND_EDGES = {
    "small": Fraction(1, 36),
    "big": Fraction(1, 36),
    "figure": Fraction(17, 216),
    "one_colour": Fraction(1, 9),
    "two_colours": Fraction(1, 9),
    "three_colours": Fraction(2, 9),
    "any_three_colour": Fraction(1, 9),
    "specific_triple": Fraction(65, 216),
    "any_triple": Fraction(11, 36),
}
"""RULES §9.2: house edge per bet kind."""

GOLDEN_DIGEST = "4c9bdf94dc34178c5b325e4bb571483d430ceaa827d6a1fe1ed3fe2e1c73337f"


def spot_id(spot: Spot) -> str:
    return "-".join(str(v) for v in spot.model_dump().values())


def expected_edge(spot: Spot) -> Fraction:
    if isinstance(spot, TotalSpot):
        return TOTAL_EDGES[min(spot.total, 21 - spot.total)]
    return KIND_EDGES[spot.kind]


def net_per_unit(spot: Spot, dice: Dice) -> Fraction:
    """What the player gains on a stake of 1: the prize if it wins, −1 if it loses."""
    due = settle(spot, Decimal(1), dice)
    return Fraction(due.returned) + Fraction(due.won) - 1


def test_there_are_216_throws_56_unordered_and_6_triples() -> None:
    assert len(OUTCOMES) == 216
    assert len({tuple(sorted(o)) for o in OUTCOMES}) == 56
    assert sum(1 for o in OUTCOMES if is_triple(o)) == 6


def test_totals_distribution_matches_rules_9_2() -> None:
    assert Counter(sum(o) for o in OUTCOMES) == TOTALS_TABLE


@pytest.mark.parametrize("kind", ["small", "big"])
def test_small_and_big_each_win_105_of_216(kind: Literal["small", "big"]) -> None:
    spot = EvenSpot(kind=kind)
    wins = sum(1 for o in OUTCOMES if settle(spot, Decimal(1), o).result == "win")
    assert Fraction(wins, 216) == Fraction(105, 216)


def test_a_chosen_figure_shows_0_1_2_3_times_in_125_75_15_1_throws() -> None:
    for face in range(1, 7):
        assert Counter(figure_count(o, face) for o in OUTCOMES) == {0: 125, 1: 75, 2: 15, 3: 1}


@pytest.mark.parametrize("colour", COLOURS)
def test_a_chosen_colour_shows_0_1_2_3_times_in_8_12_6_1_of_27(colour: str) -> None:
    counts = Counter(colour_count(o, colour) for o in OUTCOMES)
    assert {n: Fraction(c, 216) for n, c in counts.items()} == {
        0: Fraction(8, 27),
        1: Fraction(12, 27),
        2: Fraction(6, 27),
        3: Fraction(1, 27),
    }


def test_at_least_one_colour_would_give_the_player_an_edge() -> None:
    """RULES §2.5: "at least one" of a colour at 1 to 1 returns +40.7 %, so "exactly" is meant."""
    wins = sum(1 for o in OUTCOMES if colour_count(o, "red") >= 1)
    assert Fraction(wins, 216) * 2 - 1 == Fraction(11, 27)  # +40.7 %


@pytest.mark.parametrize("spot", ALL_SPOTS, ids=spot_id)
def test_exact_house_edge_of_every_spot_matches_rules_9_2(spot: Spot) -> None:
    edge = -sum(net_per_unit(spot, o) for o in OUTCOMES) / 216
    assert edge == expected_edge(spot)


def test_golden_digest_of_every_payout_on_every_throw() -> None:
    """SHA-256 of all 216 throws with the payout of each of the 39 spots on a stake of 1."""
    rows = []
    for o in OUTCOMES:
        cells = []
        for spot in ALL_SPOTS:
            due = settle(spot, Decimal(1), o)
            cells.append(f"{spot_id(spot)}={due.result}:{due.returned}:{due.won}")
        rows.append("".join(map(str, o)) + " " + " ".join(cells))
    digest = hashlib.sha256("\n".join(rows).encode()).hexdigest()
    assert digest == GOLDEN_DIGEST


def test_faces_have_figure_and_colour_and_opposites_share_a_colour() -> None:
    assert [(f.figure, f.colour) for f in FACES.values()] == [
        ("fish", "red"),
        ("prawn", "green"),
        ("calabash", "blue"),
        ("coin", "blue"),
        ("crab", "green"),
        ("rooster", "red"),
    ]
    for n, face in FACES.items():
        assert face.number == n
        assert FACES[7 - n].colour == face.colour


def test_prizes_are_the_art_6_odds() -> None:
    assert {k: p.odds for k, p in PRIZES.items()} == {
        "small": 1,
        "big": 1,
        "one_colour": 1,
        "two_colours": 3,
        "three_colours": 20,
        "any_three_colour": 7,
        "specific_triple": 150,
        "any_triple": 24,
    }
    assert {n: p.odds for n, p in FIGURE_PRIZES.items()} == {1: 1, 2: 2, 3: 3}
    assert {t: p.odds for t, p in TOTAL_PRIZES.items()} == {
        4: 50,
        17: 50,
        5: 18,
        16: 18,
        6: 14,
        15: 14,
        7: 12,
        14: 12,
        8: 8,
        13: 8,
        9: 6,
        10: 6,
        11: 6,
        12: 6,
    }
    assert list(SMALL_TOTALS) == list(range(4, 11))
    assert list(BIG_TOTALS) == list(range(11, 18))


def test_every_prize_cites_its_article() -> None:
    prizes = [*PRIZES.values(), *FIGURE_PRIZES.values(), *TOTAL_PRIZES.values()]
    assert all(p.rule.startswith("FPC art. 5 ") and "art. 6" in p.rule for p in prizes)
    reconstructed = {"small", "big", "one_colour", "two_colours", "three_colours", "any_three_colour"}
    assert {k for k, p in PRIZES.items() if "[R]" in p.rule} == reconstructed
    assert PRIZES["small"].rule == "FPC art. 5 a) [R], art. 6"


def test_tables_are_frozen() -> None:
    with pytest.raises(TypeError):
        PRIZES["small"] = PRIZES["big"]  # type: ignore[index]
    with pytest.raises(TypeError):
        TOTAL_PRIZES[3] = TOTAL_PRIZES[4]  # type: ignore[index]
    with pytest.raises(AttributeError):
        PRIZES["small"].odds = 2  # type: ignore[misc]
