"""``is_ready`` answers what ``bool(waits(...))`` answers, suit by suit (issue 31).

The liability rules ask whether a hand was ready (聽) before a discard and after it. Verify
asked :func:`waits` for every kind and kept only whether the list was empty; :func:`is_ready`
reads each suit once and re-reads only the suit a candidate tile changes. These tests hold it to
the whole-hand search on random hands near a win (both variants' set counts and kinds, fixed
sets, thirteen-orphan hands, hands of the wrong size, and a replay's negative counts), and on the
waits the rules' own examples name.
"""

from __future__ import annotations

import random

from ledger.games.mahjong.hands import is_ready, waits
from ledger.games.mahjong.state import log_line
from ledger.games.mahjong.tiles import KINDS, ORPHANS, counts, index, kinds_of


def _hand(rng: random.Random, sets: int, fixed: int) -> list[int]:
    size = 3 * (sets - fixed) + 1 + rng.choice((0, 0, 0, 0, 1, -1))
    pool = (
        list(ORPHANS)
        if rng.random() < 0.1
        else list(range(KINDS))
        if rng.random() < 0.5
        else rng.sample(range(KINDS), rng.randint(1, 8))
    )
    hand = [0] * KINDS
    for _ in range(max(size, 0)):
        k = rng.choice(pool)
        if hand[k] < 4:
            hand[k] += 1
    if rng.random() < 0.02:
        hand[rng.randrange(KINDS)] -= 1  # a replay after a finding can take a tile not held
    return hand


def test_is_ready_agrees_with_the_whole_hand_search() -> None:
    rng = random.Random(31)
    ready = 0
    for _ in range(20_000):
        sets = rng.choice((4, 1))
        fixed = rng.randint(0, sets)
        hand = _hand(rng, sets, fixed)
        orphans = rng.random() < 0.5
        for variant in ("conventional", "simplified"):
            kinds = kinds_of(variant)
            got = is_ready(hand, fixed, sets, orphans, kinds)
            assert got == bool(waits(hand, fixed, sets, orphans, kinds)), (hand, fixed, sets, orphans)
            ready += got
    assert 2_000 < ready < 38_000  # both answers are well represented


def test_is_ready_on_named_waits() -> None:
    def hand(text: str) -> list[int]:
        return counts(index(t) for t in text.split())

    every = kinds_of("conventional")
    # Three chows of one suit, a pung and a single tile: the single is the only wait.
    single = hand("1B 2B 3B 4B 5B 6B 7B 8B 9B RD RD RD 5C")
    assert is_ready(single, 0, 4, True, every)
    assert waits(single, 0, 4, True, every) == [index("5C")]
    # Thirteen orphans, one short: ready on the missing orphan only.
    orphans = hand("1B 9B 1C 9C 1D 9D EW SW WW NW RD GD WD")
    assert is_ready(orphans, 0, 4, True, every)
    assert not is_ready(orphans, 0, 4, False, every)
    # Two wrong suits cannot both be mended by one tile.
    assert not is_ready(hand("1B 2B 4B 5C 7C 9C RD RD RD WW WW WW EW"), 0, 4, True, every)
    # A candidate already held four times is not a candidate.
    four = hand("5C 5C 5C 5C 1B 2B 3B 4B 5B 6B 7B 8B 9B")
    assert waits(four, 0, 4, True, every) == []
    assert not is_ready(four, 0, 4, True, every)


def test_log_lines_read_as_the_texts_written_at_once() -> None:
    assert log_line(("E", "+", index("5B"), "")) == "E+5B"
    assert log_line(("S", "+", index("7C"), "(tail)")) == "S+7C(tail)"
    assert log_line(("W", "-", index("RD"), "")) == "W-RD"
    assert log_line("E withdraws a pung call") == "E withdraws a pung call"
