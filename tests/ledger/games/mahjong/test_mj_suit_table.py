"""``is_complete`` reads each suit from a table of suit splits: it must agree with the plain
search over the whole hand (some pair, then sets of the rest) on every hand it can meet."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from ledger.games.mahjong.hands import _has_pair_and_sets, is_complete, is_thirteen_orphans
from ledger.games.mahjong.tiles import KINDS
from tests.conftest import tiered


def _search(concealed: list[int], fixed: int, sets: int, orphans: bool) -> bool:
    """The former ``is_complete``: the size check, thirteen orphans, then the whole search."""
    needed = sets - fixed
    if needed < 0 or sum(concealed) != 3 * needed + 2:
        return False
    if orphans and fixed == 0 and is_thirteen_orphans(concealed, ()):
        return True
    return _has_pair_and_sets(list(concealed))


def _suits(total: int, slots: int, cap: int) -> Iterator[tuple[int, ...]]:
    if slots == 1:
        if total <= cap:
            yield (total,)
        return
    for n in range(min(total, cap) + 1):
        for rest in _suits(total - n, slots - 1, cap):
            yield (n, *rest)


# Every hand of up to eight tiles by default; the eleven-tile hands (most of the count) slow.
@pytest.mark.parametrize(("total", "sets"), tiered([(2, 0), (5, 1), (8, 2), (11, 3)], 3))
def test_every_one_suit_hand_of_up_to_eleven_tiles(total: int, sets: int) -> None:
    for suit in _suits(total, 9, 4):
        hand = [*suit, *([0] * (KINDS - 9))]
        assert is_complete(hand, 0, sets, False) == _search(hand, 0, sets, False), suit


def test_random_hands_with_honours_and_replays_after_a_finding() -> None:
    rng = random.Random(17)
    for _ in range(20_000):
        fixed = rng.randrange(5)
        hand = [0] * KINDS
        start = rng.randrange(KINDS - 3)
        pool = range(start, min(KINDS, start + rng.randrange(3, 12)))
        for _ in range(3 * (4 - fixed) + 2):
            hand[rng.choice(pool)] += 1
        if rng.random() < 0.05:  # a replay after a finding can take a tile not held
            hand[rng.randrange(KINDS)] -= 1
        for sets in (4, 1):
            assert is_complete(hand, fixed, sets, True) == _search(hand, fixed, sets, True), hand
