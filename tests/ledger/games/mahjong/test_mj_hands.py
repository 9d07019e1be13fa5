"""Hand decomposition and fán: cross-checked with the ``mahjong`` package (riichi rules) as an
independent oracle of "4 sets + a pair", and the best-scoring arrangement of ambiguous hands."""

from __future__ import annotations

import random

import pytest
from mahjong.agari import Agari

from ledger.games.mahjong.fan import WinContext, best, score
from ledger.games.mahjong.hands import arrangements, is_complete, is_thirteen_orphans
from ledger.games.mahjong.tiles import KINDS, ORPHANS, counts, index

# Our kinds 0–8 bamboo, 9–17 characters, 18–26 circles, then winds and dragons; the oracle's
# 34-array is man 0–8, pin 9–17, sou 18–26, winds 27–30, dragons 31–33. Only the grouping into
# suits matters for the structure, so we map suit to suit and honour to honour.
ORACLE = [*range(18, 27), *range(0, 9), *range(9, 18), 27, 28, 29, 30, 33, 32, 31]


def oracle(hand: list[int]) -> bool:
    arr = [0] * KINDS
    for k, n in enumerate(hand):
        arr[ORACLE[k]] += n
    return bool(Agari.is_agari(arr))


def seven_pairs(hand: list[int]) -> bool:
    return sorted(n for n in hand if n) == [2] * 7


def random_hand(rng: random.Random) -> list[int]:
    wall = [k for k in range(KINDS) for _ in range(4)]
    return counts(rng.sample(wall, 14))


def generated_hand(rng: random.Random) -> list[int]:
    """Four random sets and a pair, sometimes with one tile changed: near-wins and wins."""
    while True:
        tiles: list[int] = []
        for _ in range(4):
            if rng.random() < 0.5:
                k = rng.randrange(27)
                k -= k % 9 - min(k % 9, 6)
                tiles += [k, k + 1, k + 2]
            else:
                tiles += [rng.randrange(KINDS)] * 3
        tiles += [rng.randrange(KINDS)] * 2
        if rng.random() < 0.3:
            tiles[rng.randrange(14)] = rng.randrange(KINDS)
        hand = counts(tiles)
        if max(hand) <= 4:
            return hand


@pytest.mark.parametrize("make", [random_hand, generated_hand])
def test_four_sets_and_a_pair_agrees_with_the_oracle(make: object) -> None:
    rng = random.Random(135)
    checked = wins = 0
    for _ in range(4000):
        hand = make(rng)  # type: ignore[operator]
        if seven_pairs(hand) or is_thirteen_orphans(hand, ()):
            continue  # seven pairs is not a hand here (M19); thirteen orphans is checked apart
        ours = bool(arrangements(hand, (), 4))
        assert ours == oracle(hand), hand
        assert ours == is_complete(hand, 0, 4, orphans_allowed=False)
        checked += 1
        wins += ours
    assert checked > 3500
    if make is generated_hand:
        assert wins > 1000


def test_thirteen_orphans_agrees_with_the_oracle() -> None:
    for extra in ORPHANS:
        hand = counts([*ORPHANS, extra])
        assert is_thirteen_orphans(hand, ()) and oracle(hand)
        assert is_complete(hand, 0, 4, orphans_allowed=True)
        assert not arrangements(hand, (), 4)


def test_seven_pairs_is_not_a_winning_hand() -> None:
    pairs = ("1B", "3B", "5C", "7C", "9D", "EW", "RD")
    hand = counts(index(t) for t in pairs for _ in range(2))
    assert oracle(hand) and not is_complete(hand, 0, 4, orphans_allowed=True)


def ctx(hand: str, **kw: object) -> list[WinContext]:
    h = counts(index(t) for t in hand.split())
    base = dict(
        variant="conventional",
        seat_wind=28,
        round_wind=27,
        source="self_drawn",
        winning_tile=index(hand.split()[-1]),
    )
    base.update(kw)
    return [WinContext(arrangement=a, **base) for a in arrangements(h, (), 4)]  # type: ignore[arg-type]


def test_the_best_arrangement_is_chosen_when_several_exist() -> None:
    """111222333B 55D 789D: three concealed pungs (all pungs fails on 789D) or three chows (all
    chows, E7): the chows score 1 fán, the pungs 0."""
    scores = [score(c, cap=2) for c in ctx("1B 1B 1B 2B 2B 2B 3B 3B 3B 7D 8D 9D 5D 5D")]
    assert sorted(s.fan for s in scores) == [0, 1]
    top = best(scores)
    assert top.fan == 1 and [f.element.code for f in top.found] == ["E7"]


def test_fan_is_additive_and_capped_at_two() -> None:
    """Big three dragons (D9, 2) + three dragon sets (E1 × 3) + all pungs (E6): raw 6, paid 2."""
    [c] = ctx("RD RD RD GD GD GD WD WD WD 2B 2B 2B 5C 5C")
    s = score(c, cap=2)
    assert {f.element.code: f.times for f in s.found} == {"E1": 3, "E6": 1, "D8": 1, "D9": 1}
    assert (s.raw, s.fan) == (8, 2)


def test_double_wind_is_counted_once_as_d3() -> None:
    [c] = ctx("EW EW EW 1B 2B 3B 4C 5C 6C 7D 8D 9D 5D 5D", seat_wind=27, round_wind=27)
    assert [f.element.code for f in score(c, cap=2).found] == ["D3"]


def test_all_concealed_pungs_needs_a_self_drawn_tile_by_default() -> None:
    hand = "1B 1B 1B 4C 4C 4C 7D 7D 7D 9D 9D 9D 5D 5D"
    [drawn] = ctx(hand)
    [claimed] = ctx(hand, source="discard")
    assert "D8" in [f.element.code for f in score(drawn, cap=2).found]
    assert "D8" not in [f.element.code for f in score(claimed, cap=2).found]
