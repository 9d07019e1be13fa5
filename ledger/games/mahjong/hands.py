"""Winning-hand structure and decomposition (MJ art. 4, art. 6, RULES §4.4).

A hand is its concealed tiles (a 34-slot count vector, ``tiles.counts``) plus the sets it has
already fixed: exposed chows, pungs and kongs, and concealed kongs. A winning hand is

- MJ-C: 4 sets + 1 pair, kongs counting as sets (art. 4(a), 5(a)(5)), or thirteen orphans
  (art. 6(a)(3)); no other irregular hand (RULES §8.4 M19);
- MJ-S: 1 set + 1 pair (art. 4(b)).

:func:`arrangements` lists every way the concealed tiles complete the hand, so that scoring can
pick the best one (a hand like ``111222333B`` is three pungs or three chows).

>>> from ledger.games.mahjong.tiles import counts, index
>>> hand = counts(index(t) for t in "1B 1B 1B 2B 2B 2B 3B 3B 3B 5D 5D 5D 9C 9C".split())
>>> sorted(a.describe() for a in arrangements(hand, (), 4))
['111B 222B 333B 555D 99C', '123B 123B 123B 555D 99C']
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from ledger.games.mahjong.tiles import KINDS, ORPHANS, code, number_of, suit_of

MeldKind = Literal["chow", "pung", "kong"]


@dataclass(frozen=True)
class Meld:
    """A set: ``first`` is the kind of its lowest tile; ``concealed`` if nothing was claimed and
    nothing shown (a concealed kong, or a set formed in hand)."""

    kind: MeldKind
    first: int
    concealed: bool

    @property
    def kinds(self) -> tuple[int, ...]:
        """The tiles of the set, by kind."""
        if self.kind == "chow":
            return (self.first, self.first + 1, self.first + 2)
        return (self.first,) * (4 if self.kind == "kong" else 3)

    @property
    def is_pung(self) -> bool:
        """A pung or a kong (a kong counts as a pung, MJ art. 5(a)(5))."""
        return self.kind != "chow"

    def describe(self) -> str:
        """``123B``, ``555D``, ``RD RD RD``: suited sets compactly, honours tile by tile."""
        first = code(self.first)
        if first[0].isdigit():
            nums = "".join(code(k)[0] for k in self.kinds)
            return nums + first[1]
        return " ".join(code(k) for k in self.kinds)


@dataclass(frozen=True)
class Arrangement:
    """One reading of a complete hand: its sets and pair, or thirteen orphans."""

    sets: tuple[Meld, ...]
    pair: int | None
    thirteen_orphans: bool = False

    def describe(self) -> str:
        """Sets then the pair, compactly."""
        if self.thirteen_orphans:
            return "thirteen orphans"
        pair = "" if self.pair is None else _pair_text(code(self.pair))
        return " ".join([*(m.describe() for m in self.sets), pair]).strip()

    def kinds(self) -> list[int]:
        """Every tile of the hand, by kind (thirteen orphans: the 13 kinds, pair not known)."""
        out = [k for m in self.sets for k in m.kinds]
        if self.pair is not None:
            out += [self.pair, self.pair]
        return out


def _pair_text(tile: str) -> str:
    return tile[0] * 2 + tile[1] if tile[0].isdigit() else f"{tile} {tile}"


def _melds(tiles: list[int], start: int) -> Iterator[list[Meld]]:
    """Every way to split ``tiles`` (a count vector) into concealed pungs and chows."""
    i = start
    while i < KINDS and tiles[i] == 0:
        i += 1
    if i == KINDS:
        yield []
        return
    if tiles[i] >= 3:
        tiles[i] -= 3
        for rest in _melds(tiles, i):
            yield [Meld("pung", i, True), *rest]
        tiles[i] += 3
    if i < 27 and i % 9 <= 6 and tiles[i + 1] and tiles[i + 2]:
        for k in (i, i + 1, i + 2):
            tiles[k] -= 1
        for rest in _melds(tiles, i):
            yield [Meld("chow", i, True), *rest]
        for k in (i, i + 1, i + 2):
            tiles[k] += 1


def arrangements(concealed: Sequence[int], fixed: Sequence[Meld], sets: int) -> list[Arrangement]:
    """Every arrangement of a hand into ``sets`` sets + a pair (4 in MJ-C, 1 in MJ-S).

    ``concealed`` is the count vector of the tiles in hand (with the winning tile); ``fixed`` the
    exposed melds and concealed kongs. Thirteen orphans is not included (see
    :func:`is_thirteen_orphans`).
    """
    needed = sets - len(fixed)
    if needed < 0 or sum(concealed) != 3 * needed + 2:
        return []
    tiles = list(concealed)
    seen: set[tuple[tuple[Meld, ...], int]] = set()
    found: list[Arrangement] = []
    for p in range(KINDS):
        if tiles[p] < 2:
            continue
        tiles[p] -= 2
        for melds in _melds(tiles, 0):
            key = (tuple(sorted(melds, key=_order)), p)
            if key not in seen:
                seen.add(key)
                found.append(Arrangement((*fixed, *key[0]), p))
        tiles[p] += 2
    return found


def _order(m: Meld) -> tuple[int, str]:
    return (m.first, m.kind)


def is_thirteen_orphans(concealed: Sequence[int], fixed: Sequence[Meld]) -> bool:
    """One each of the 13 orphans plus a duplicate of one of them, all in hand (MJ art. 6(a)(3))."""
    if fixed or sum(concealed) != 14:
        return False
    return all(concealed[k] >= 1 for k in ORPHANS) and sum(concealed[k] for k in ORPHANS) == 14


def is_complete(concealed: Sequence[int], fixed_count: int, sets: int, orphans_allowed: bool) -> bool:
    """Whether the hand is a winning hand at all (a fast check, without listing arrangements)."""
    needed = sets - fixed_count
    if needed < 0 or sum(concealed) != 3 * needed + 2:
        return False
    if orphans_allowed and fixed_count == 0 and is_thirteen_orphans(concealed, ()):
        return True
    if min(concealed) < 0:  # only a replay after a finding gets here: search the whole hand
        return _has_pair_and_sets(list(concealed))
    pairs = 0
    for lo in (0, 9, 18):
        suit = tuple(concealed[lo : lo + 9])
        rest = sum(suit) % 3
        if rest == 1 or not _suit_reading(suit)[rest == 2]:
            return False
        pairs += rest == 2
    for k in range(27, KINDS):
        rest = concealed[k] % 3
        if rest == 1:
            return False
        pairs += rest == 2
    return pairs == 1


def _has_pair_and_sets(tiles: list[int]) -> bool:
    """The search over the whole hand: some pair, then sets of everything else."""
    for p in range(KINDS):
        if tiles[p] >= 2:
            tiles[p] -= 2
            ok = _all_sets(tiles, 0)
            tiles[p] += 2
            if ok:
                return True
    return False


@lru_cache(maxsize=1 << 16)
def _suit_reading(suit: tuple[int, ...]) -> tuple[bool, bool]:
    """Whether one suit's nine counts split into sets alone, and into sets and one pair.

    Chows never cross suits and honours form only pungs and a pair, so a hand is complete
    exactly when every suit and honour splits and one of them holds the pair; the answer for a
    suit is the same search as before, done once per distinct suit and then looked up."""
    tiles = [*suit, *([0] * (KINDS - 9))]
    sets_only = _all_sets(tiles, 0)
    with_pair = False
    for p in range(9):
        if tiles[p] >= 2:
            tiles[p] -= 2
            with_pair = _all_sets(tiles, 0)
            tiles[p] += 2
            if with_pair:
                break
    return sets_only, with_pair


def _all_sets(tiles: list[int], i: int) -> bool:
    while i < KINDS and tiles[i] == 0:
        i += 1
    if i == KINDS:
        return True
    if tiles[i] >= 3:
        tiles[i] -= 3
        ok = _all_sets(tiles, i)
        tiles[i] += 3
        if ok:
            return True
    if i < 27 and i % 9 <= 6 and tiles[i + 1] and tiles[i + 2]:
        for k in (i, i + 1, i + 2):
            tiles[k] -= 1
        ok = _all_sets(tiles, i)
        for k in (i, i + 1, i + 2):
            tiles[k] += 1
        return ok
    return False


def waits(
    concealed: Sequence[int], fixed_count: int, sets: int, orphans_allowed: bool, kinds: Sequence[int]
) -> list[int]:
    """The kinds that would complete a hand one tile short of winning ("ready", 聽)."""
    out = []
    tiles = list(concealed)
    for k in kinds:
        if tiles[k] >= 4:
            continue
        tiles[k] += 1
        if is_complete(tiles, fixed_count, sets, orphans_allowed):
            out.append(k)
        tiles[k] -= 1
    return out


def is_ready(
    concealed: Sequence[int], fixed_count: int, sets: int, orphans_allowed: bool, kinds: Sequence[int]
) -> bool:
    """Whether some kind of ``kinds`` completes the hand: ``bool(waits(...))``, answered by
    suit instead of by a whole-hand test per kind.

    Adding one tile changes one suit (or one honour) only, so each suit's reading is worked out
    once and each candidate re-reads its own suit alone; the answer is :func:`is_complete`'s
    for every candidate, and the search stops at the first candidate that completes."""
    needed = sets - fixed_count
    if needed < 0 or sum(concealed) + 1 != 3 * needed + 2:
        return False  # every candidate adds one tile: none reaches a winning count
    if min(concealed) < 0:  # only a replay after a finding gets here: the plain search
        return bool(waits(concealed, fixed_count, sets, orphans_allowed, kinds))
    if orphans_allowed and fixed_count == 0:
        tiles = list(concealed)
        for k in kinds:
            if k in _ORPHAN_SET and tiles[k] < 4:
                tiles[k] += 1
                found = is_thirteen_orphans(tiles, ())
                tiles[k] -= 1
                if found:
                    return True
    suits = [tuple(concealed[lo : lo + 9]) for lo in (0, 9, 18)]
    states = [_suit_state(suit) for suit in suits]
    bad = pairs = 0
    for ok, pair in states:
        bad += not ok
        pairs += pair
    for k in range(27, KINDS):
        rest = concealed[k] % 3
        bad += rest == 1
        pairs += rest == 2
    if bad > 1:
        return False  # one tile changes one suit or honour: another stays wrong
    for k in kinds:
        count = concealed[k]
        if count >= 4:
            continue
        if k >= KINDS:  # a kind outside the suits and honours: the rest of the hand decides
            now_bad, now_pairs = bad, pairs
        elif k < 27:
            suit = suits[k // 9]
            ok, pair = states[k // 9]
            if ok and bad:
                continue  # the wrong suit or honour is elsewhere
            added = list(suit)
            added[k % 9] += 1
            new_ok, new_pair = _suit_state(tuple(added))
            now_bad = bad - (not ok) + (not new_ok)
            now_pairs = pairs - pair + new_pair
        else:
            rest, new_rest = count % 3, (count + 1) % 3
            now_bad = bad - (rest == 1) + (new_rest == 1)
            now_pairs = pairs - (rest == 2) + (new_rest == 2)
        if now_bad == 0 and now_pairs == 1:
            return True
    return False


_ORPHAN_SET = frozenset(ORPHANS)


def _suit_state(suit: tuple[int, ...]) -> tuple[bool, bool]:
    """Whether one suit's counts fit a winning hand (sets alone, or sets and the pair), and
    whether it holds the pair: :func:`is_complete`'s test of one suit."""
    rest = sum(suit) % 3
    if rest == 1:
        return False, False
    return _suit_reading(suit)[rest == 2], rest == 2


def is_chow(kinds: Sequence[int]) -> bool:
    """Three suited tiles of one suit with consecutive numbers."""
    ks = sorted(kinds)
    if len(ks) != 3 or any(suit_of(k) is None for k in ks):
        return False
    if len({suit_of(k) for k in ks}) != 1:
        return False
    n = [number_of(k) for k in ks]
    return n[1] == n[0] + 1 and n[2] == n[1] + 1  # type: ignore[operator]
