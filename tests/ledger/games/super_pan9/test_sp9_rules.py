"""Super Pan 9 rules: hand points, comparison (exhaustive, RULES §9.1), the dice count, the deal
and the bank's capped settlement (Hypothesis properties)."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from fractions import Fraction
from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.domain.equipment import Card, Rank, Suit
from ledger.games.super_pan9.bank import (
    Layer,
    Play,
    layer_commissions,
    settle_plays,
    split_result,
)
from ledger.games.super_pan9.rules import (
    ccw_from,
    compare,
    dealing_order,
    first_seat,
    hand_points,
    ranks_high_first,
    settlement_seats,
)
from ledger.games.super_pan9.tables import POINTS, RANKS_HIGH_TO_LOW

DECK = [Card(r, s) for s in Suit for r in Rank]
HANDS = list(combinations(DECK, 2))


def cards(text: str) -> tuple[Card, ...]:
    return tuple(Card.parse(c) for c in text.split())


def test_card_points_and_rank_order_of_art_6() -> None:
    assert [POINTS[r] for r in Rank] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0]
    assert "".join(r.value for r in RANKS_HIGH_TO_LOW) == "KQJT98765432A"


def test_1326_hands_by_points_as_in_rules_9_1() -> None:
    assert len(HANDS) == 1326
    by_points = Counter(hand_points(h) for h in HANDS)
    assert by_points == {0: 190, 1: 128, 3: 128, 5: 128, 7: 128, 9: 128, 2: 124, 4: 124, 6: 124, 8: 124}


def _player_wins(tiebreak: str) -> tuple[int, int]:
    """Exhaustive: ordered (player, banker) pairs of disjoint hands, by comparison class."""
    index = {c: i for i, c in enumerate(DECK)}
    keyed = [
        ((1 << index[a]) | (1 << index[b]), (hand_points((a, b)), ranks_high_first((a, b)))) for a, b in HANDS
    ]
    classes: Counter[tuple[object, object]] = Counter()
    for pmask, pkey in keyed:
        for bmask, bkey in keyed:
            if not pmask & bmask:
                classes[(pkey, bkey)] += 1
    reps: dict[object, tuple[Card, Card]] = {}
    for h in HANDS:
        reps.setdefault((hand_points(h), ranks_high_first(h)), h)
    wins = sum(n for (pk, bk), n in classes.items() if compare(reps[pk], reps[bk], tiebreak).decision)  # type: ignore[arg-type]
    return wins, sum(classes.values())


@pytest.mark.slow  # every pair of disjoint hands, as the next test: a second each
def test_exhaustive_player_wins_805464_of_1624350_with_the_highest_card_tiebreak() -> None:
    wins, pairs = _player_wins("highest_card")
    assert (wins, pairs) == (805_464, 1_624_350)
    assert Fraction(wins, pairs) == Fraction(805_464, 1_624_350)
    assert round(wins / pairs, 5) == 0.49587


@pytest.mark.slow
def test_exhaustive_player_wins_806520_with_the_both_cards_tiebreak() -> None:
    assert _player_wins("both_cards") == (806_520, 1_624_350)


@pytest.mark.parametrize(
    ("player", "banker", "wins", "rule"),
    [
        ("9C KD", "5S 2H", True, "SP9 art. 7"),  # 9 against 7
        ("3D 9H", "9D QH", False, "SP9 art. 7"),  # 2 against 9
        ("KC 8S", "QC 8H", True, "SP9 art. 7(2)"),  # 8 each, K beats Q
        ("TC 8S", "8C TH", False, "SP9 art. 8"),  # 8 each, same top card: banker
        ("5C 5D", "KS TH", False, "SP9 art. 7(2)"),  # 0 each: the banker's K beats 5
        ("AS 9S", "AH 9H", False, "SP9 art. 8"),  # identical ranks: banker
    ],
)
def test_comparison_of_arts_7_and_8(player: str, banker: str, wins: bool, rule: str) -> None:
    verdict = compare(cards(player), cards(banker))
    assert (verdict.decision, verdict.rule) == (wins, rule)


def test_the_both_cards_option_compares_the_second_card() -> None:
    # 0 points each, both top card K; second cards Q against 10.
    player, banker = cards("KS QS"), cards("KH TH")
    assert not compare(player, banker, "highest_card").decision
    assert compare(player, banker, "both_cards").decision
    assert not compare(banker, player, "both_cards").decision


def test_dice_count_from_the_banker_as_1_over_the_hands_in_play() -> None:
    # banker 5 at a table where seats 2, 3, 7, 9 are dealt: ccw list 5, 7, 9, 2, 3
    assert ccw_from(5, [2, 3, 7, 9]) == [5, 7, 9, 2, 3]
    assert [first_seat(t, banker=5, seats=[2, 3, 7, 9]) for t in range(1, 7)] == [5, 7, 9, 2, 3, 5]
    assert first_seat(-3, banker=5, seats=[2, 3, 7, 9]) == 7  # S4: modular for any T
    assert dealing_order(9, banker=5, seats=[2, 3, 7, 9]) == [9, 9, 2, 2, 3, 3, 5, 5, 7, 7]
    assert settlement_seats(9, banker=5, seats=[2, 3, 7, 9]) == [9, 2, 3, 7]


def _plays(draw: list[tuple[int, bool]]) -> list[Play]:
    return [Play(f"b{i}", 2, Decimal(a), w) for i, (a, w) in enumerate(draw)]


PLAYS = st.lists(st.tuples(st.integers(1, 2000), st.booleans()), max_size=12)


@pytest.mark.parametrize("mode", ["sequential", "collect_then_pay", "prorata"])
@given(draw=PLAYS, capacity=st.integers(1, 3000))
def test_the_bank_never_wins_or_loses_more_than_its_capital(
    mode: str, draw: list[tuple[int, bool]], capacity: int
) -> None:
    plays = _plays(draw)
    lines = settle_plays(plays, Decimal(capacity), mode)  # type: ignore[arg-type]
    assert sorted(x.play.bet for x in lines) == sorted(p.bet for p in plays)
    result = sum((x.collected - x.paid for x in lines), Decimal(0))
    assert abs(result) <= capacity
    for x in lines:
        assert 0 <= x.collected <= x.play.amount and 0 <= x.paid <= x.play.amount
        assert x.returned == (x.play.amount if x.play.wins else x.play.amount - x.collected)
        if mode != "prorata":
            assert abs(x.balance) <= capacity
    uncapped = sum((-p.amount if p.wins else p.amount for p in plays), Decimal(0))
    if mode == "prorata" and abs(uncapped) <= capacity:
        assert result == uncapped  # pro rata, the cap only bites when the net passes K
    if mode == "sequential":  # one pass: W stays what it was before any capped bet
        for before, x in zip([Decimal(0)] + [y.balance for y in lines], lines, strict=False):
            full = -x.play.amount if x.play.wins else x.play.amount
            assert x.balance == max(-capacity, min(capacity, before + full))


@given(result=st.integers(-3000, 3000), caps=st.lists(st.integers(1, 1000), min_size=1, max_size=4))
def test_the_layer_split_conserves_w_and_respects_each_capital(result: int, caps: list[int]) -> None:
    layers = [Layer("banker", Decimal(caps[0]))] + [
        Layer(f"seat:{i + 2}", Decimal(c)) for i, c in enumerate(caps[1:])
    ]
    capacity = sum(caps)
    w = Decimal(max(-capacity, min(capacity, result)))
    for mode in ("waterfall", "prorata"):
        shares = split_result(w, layers, mode)  # type: ignore[arg-type]
        assert sum(shares) == w
        assert all(abs(s) <= x.capital for s, x in zip(shares, layers, strict=True))


def test_waterfall_runs_banker_first_then_players_then_the_casino() -> None:
    layers = [Layer("banker", Decimal(300)), Layer("seat:5", Decimal(200)), Layer("casino", Decimal(1000))]
    assert split_result(Decimal(1000), layers) == [300, 200, 500]
    assert split_result(Decimal(-350), layers) == [-300, -50, 0]
    shares = split_result(Decimal(1000), layers)
    assert layer_commissions(shares, layers, Decimal(1000)) == [Decimal("15.00"), Decimal("10.00"), 0]
    assert layer_commissions(shares, layers, Decimal(1000), "none") == [0, 0, 0]
