"""3CB settlement of each spot (3CB arts. 6–10, RULES §3.6–§3.7, §8.3 B1/B8), bet by bet."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.domain.equipment import Card
from ledger.domain.rulebook import DEFAULT_RULEBOOK, complete_rulebook
from ledger.games.base import Settlement
from ledger.games.three_card_baccarat.deal import dealing_order
from ledger.games.three_card_baccarat.feed import (
    HandSpot,
    ParitySpot,
    PointsSpot,
    ThreeFiguresSpot,
    TieSpot,
)
from ledger.games.three_card_baccarat.rules import (
    HandValue,
    Spot,
    compare,
    describe_spot,
    evaluate,
    settle,
)
from ledger.games.three_card_baccarat.tables import (
    CARRY_RULE,
    PARITY_CARRY_RULE,
    POINTS_ON_THREE_FIGURES_RULE,
)


def hand(text: str, three_figures: str = "any") -> HandValue:
    return evaluate([Card.parse(c) for c in text.split()], three_figures)  # type: ignore[arg-type]


def money(s: Settlement) -> tuple[str, str, str, str]:
    return s.result, str(s.returned), str(s.won), str(s.commission)


BANKER_9_1F = hand("KH TH 9C")  # 9 with one figure, level 3
BANKER_3F = hand("KH QH JH")  # three figures, level 1
BANKER_6_2F = hand("JD JC 6D")  # 6 with two figures, level 11
HUNDRED = Decimal("100")


@pytest.mark.parametrize(
    ("cards", "level", "name"),
    [
        ("KH QH JH", 1, "three figures"),
        ("KS KH KD", 1, "three figures"),
        ("QS JD 9C", 2, "9 with two figures"),
        ("KH TH 9C", 3, "9 with one figure"),
        ("9S TS TD", 4, "9 with no figure"),
        ("AS 2S 5S", 7, "8 with no figure"),
        ("JD JC 6D", 11, "6 with two figures"),
        ("6H QS 4C", 30, "0 with one figure"),
        ("KS QD TC", 29, "0 with two figures"),
        ("TS TH TD", 31, "0 with no figure"),
        ("5S 5H TS", 31, "0 with no figure"),
    ],
)
def test_hand_levels_follow_the_annex(cards: str, level: int, name: str) -> None:
    value = hand(cards)
    assert (value.level.level, value.level.name) == (level, name)


def test_suits_and_card_ranks_never_break_a_tie() -> None:
    """Same level is a tie, whatever the cards (3CB art. 7(1))."""
    assert compare(hand("9S TS TD"), hand("4C 5C TH")) == "tie"
    assert compare(hand("QS JD 9C"), hand("KS KD 9H")) == "tie"
    assert compare(hand("QS JD 9C"), hand("KH TH 9C")) == "win"
    assert compare(hand("AS 2S 5S"), hand("KH TH 9C")) == "lose"


@pytest.mark.parametrize(
    ("spot", "banker", "place", "expected", "rule"),
    [
        (
            HandSpot(kind="hand", seat=1),
            BANKER_9_1F,
            hand("QS JD 9C"),
            ("win", "100", "100", "5.00"),
            "3CB art. 6, art. 9(1), art. 10",
        ),
        (
            HandSpot(kind="hand", seat=1),
            BANKER_9_1F,
            hand("AS 2S 5S"),
            ("lose", "0", "0", "0"),
            "3CB art. 6, art. 9(1), art. 10",
        ),
        (HandSpot(kind="hand", seat=1), BANKER_9_1F, hand("QS 4D 5D"), ("carry", "0", "0", "0"), CARRY_RULE),
        (HandSpot(kind="hand", seat=1), BANKER_3F, hand("KS QD JC"), ("carry", "0", "0", "0"), CARRY_RULE),
        (
            TieSpot(kind="tie", seat=1),
            BANKER_9_1F,
            hand("QS 4D 5D"),
            ("win", "100", "2000", "0"),
            "3CB art. 8(3), art. 9",
        ),
        (
            TieSpot(kind="tie", seat=1),
            BANKER_9_1F,
            hand("QS JD 9C"),
            ("lose", "0", "0", "0"),
            "3CB art. 8(3), art. 9",
        ),
        (
            ParitySpot(kind="odd"),
            BANKER_9_1F,
            None,
            ("win", "100", "100", "5.00"),
            "3CB art. 8(1), art. 9(2), art. 10",
        ),
        (
            ParitySpot(kind="even"),
            BANKER_9_1F,
            None,
            ("lose", "0", "0", "0"),
            "3CB art. 8(1), art. 9(2), art. 10",
        ),
        (
            ParitySpot(kind="even"),
            BANKER_6_2F,
            None,
            ("win", "100", "100", "5.00"),
            "3CB art. 8(1), art. 9(2), art. 10",
        ),
        (
            ParitySpot(kind="even"),
            hand("KS QD TC"),
            None,
            ("win", "100", "100", "5.00"),
            "3CB art. 8(1), art. 9(2), art. 10",
        ),
        (ParitySpot(kind="odd"), BANKER_3F, None, ("carry", "0", "0", "0"), PARITY_CARRY_RULE),
        (ParitySpot(kind="even"), BANKER_3F, None, ("carry", "0", "0", "0"), PARITY_CARRY_RULE),
        (
            ThreeFiguresSpot(kind="three_figures"),
            BANKER_3F,
            None,
            ("win", "100", "1600", "0"),
            "3CB art. 8(2)(a), art. 9",
        ),
        (
            ThreeFiguresSpot(kind="three_figures"),
            hand("KS QD TC"),
            None,
            ("lose", "0", "0", "0"),
            "3CB art. 8(2)(a), art. 9",
        ),
        (
            PointsSpot(kind="points", points=6),
            BANKER_6_2F,
            None,
            ("win", "100", "800", "0"),
            "3CB art. 8(2)(b), art. 9",
        ),
        (
            PointsSpot(kind="points", points=9),
            BANKER_6_2F,
            None,
            ("lose", "0", "0", "0"),
            "3CB art. 8(2)(b), art. 9",
        ),
        (
            PointsSpot(kind="points", points=0),
            BANKER_3F,
            None,
            ("lose", "0", "0", "0"),
            POINTS_ON_THREE_FIGURES_RULE,
        ),
        (
            PointsSpot(kind="points", points=0),
            hand("KS QD TC"),
            None,
            ("win", "100", "800", "0"),
            "3CB art. 8(2)(b), art. 9",
        ),
    ],
    ids=lambda v: str(v) if isinstance(v, tuple) else None,
)
def test_settlement_of_each_spot(
    spot: Spot, banker: HandValue, place: HandValue | None, expected: tuple[str, str, str, str], rule: str
) -> None:
    due = settle(spot, HUNDRED, banker, place)
    assert money(due) == expected
    assert due.rule == rule


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ("lose", ("lose", "0", "0", "0")),
        ("win", ("win", "100", "800", "0")),
        ("push", ("push", "100", "0", "0")),
    ],
)
def test_points_zero_on_three_figures_follows_option_b1(option: str, expected: tuple[str, ...]) -> None:
    book = complete_rulebook({"tcb": {"points0_on_three_figures": option}})
    due = settle(PointsSpot(kind="points", points=0), HUNDRED, BANKER_3F, None, book)
    assert money(due) == expected
    assert due.rule == POINTS_ON_THREE_FIGURES_RULE
    other = settle(PointsSpot(kind="points", points=3), HUNDRED, BANKER_3F, None, book)
    assert other.result == "lose"


def test_kqj_only_makes_three_kings_a_zero_and_odd_even_settles() -> None:
    """RULES §8.3 B8 = kqj_only: K-K-K is 0 with figures (level 29): even wins, no carry."""
    banker = hand("KS KH KD", "kqj_only")
    assert (banker.three_figures, banker.level.level) == (False, 29)
    assert settle(ParitySpot(kind="even"), HUNDRED, banker, None).result == "win"
    assert settle(ThreeFiguresSpot(kind="three_figures"), HUNDRED, banker, None).result == "lose"


def test_commission_is_rounded_half_up_to_the_cent_or_down_by_the_rulebook() -> None:
    """5% of a 10.30 prize is 0.515: 0.52 half-up (G1 default), 0.51 rounded down."""
    stake = Decimal("10.30")
    due = settle(ParitySpot(kind="odd"), stake, BANKER_9_1F, None)
    assert (due.won, due.commission) == (Decimal("10.30"), Decimal("0.52"))
    down = complete_rulebook({"rounding": {"mode": "down"}})
    assert settle(ParitySpot(kind="odd"), stake, BANKER_9_1F, None, down).commission == Decimal("0.51")


@given(st.integers(min_value=1, max_value=10**6))
def test_commission_never_exceeds_five_percent_of_the_prize(cents: int) -> None:
    stake = Decimal(cents) / 100
    due = settle(HandSpot(kind="hand", seat=2), stake, BANKER_9_1F, hand("QS JD 9C"))
    assert due.won == stake and due.returned == stake
    assert Decimal(0) <= due.commission <= stake * Decimal("0.05") + Decimal("0.005")


def test_a_hand_bet_needs_the_hand_of_its_seat() -> None:
    with pytest.raises(ValueError, match="seat 3"):
        settle(HandSpot(kind="hand", seat=3), HUNDRED, BANKER_9_1F, None)


def test_a_hand_has_three_cards() -> None:
    with pytest.raises(ValueError, match="3 cards, not 2"):
        evaluate([Card.parse("AS"), Card.parse("2S")])


def test_dealing_order_is_three_passes_with_the_banker_last() -> None:
    assert dealing_order([2, 5, 7]) == [2, 5, 7, "banker"] * 3
    assert dealing_order([]) == ["banker"] * 3


def test_describe_spot() -> None:
    assert [
        describe_spot(s)
        for s in (
            HandSpot(kind="hand", seat=3),
            TieSpot(kind="tie", seat=2),
            ParitySpot(kind="odd"),
            ThreeFiguresSpot(kind="three_figures"),
            PointsSpot(kind="points", points=6),
        )
    ] == ["hand 3", "tie 2", "odd", "three figures", "points 6"]
    assert DEFAULT_RULEBOOK.tcb.points0_on_three_figures == "lose"
