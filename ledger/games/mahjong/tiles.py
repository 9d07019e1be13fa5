"""Mah-Jong tiles as indices, the two tile sets, seats and winds (MJ art. 2–3, RULES §4.1–4.2).

Rules work on tile *kinds* as small integers so that a hand is a 34-slot count vector:

- ``0–8`` bamboo 1–9 (``1B``–``9B``), ``9–17`` characters (``1C``–``9C``), ``18–26`` circles
  (``1D``–``9D``);
- ``27–30`` the winds East, South, West, North (``EW SW WW NW``);
- ``31–33`` the dragons red, green, white (``RD GD WD``).

>>> index("5C"), code(31), len(tile_set("conventional")), len(tile_set("simplified"))
(13, 'RD', 136, 112)
>>> turn_order(("E", "S", "W")), next_seat("W", ("E", "S", "W"))
(('E', 'S', 'W'), 'E')
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final, Literal

Variant = Literal["conventional", "simplified"]

CODES: Final[tuple[str, ...]] = (
    *(f"{n}{s}" for s in "BCD" for n in range(1, 10)),
    "EW",
    "SW",
    "WW",
    "NW",
    "RD",
    "GD",
    "WD",
)
"""Tile code of each kind index (FEED §1 notation)."""

_INDEX: Final[dict[str, int]] = {c: i for i, c in enumerate(CODES)}
KINDS: Final = 34
WINDS: Final[tuple[int, ...]] = (27, 28, 29, 30)
DRAGONS: Final[tuple[int, ...]] = (31, 32, 33)
GREEN_DRAGON: Final = 32
HONOURS: Final[frozenset[int]] = frozenset((*WINDS, *DRAGONS))
TERMINALS: Final[frozenset[int]] = frozenset((0, 8, 9, 17, 18, 26))
ORPHANS: Final[tuple[int, ...]] = (0, 8, 9, 17, 18, 26, *WINDS, *DRAGONS)
"""The thirteen kinds of thirteen orphans (MJ art. 6(a)(3), RULES §4.4)."""

SIMPLIFIED_KINDS: Final[tuple[int, ...]] = (*range(27), GREEN_DRAGON)
"""MJ-S uses the three suits and the green dragon only: 28 kinds (MJ art. 2(b))."""

SEATS: Final[tuple[str, ...]] = ("E", "S", "W", "N")
"""The winds in turn order, counter-clockwise from the banker (MJ art. 3, RULES §4.2)."""

WIND_OF_SEAT: Final[dict[str, int]] = {"E": 27, "S": 28, "W": 29, "N": 30}

COPIES: Final = 4


def index(tile: str) -> int:
    """The kind index of a tile code."""
    return _INDEX[tile]


def code(kind: int) -> str:
    """The tile code of a kind index."""
    return CODES[kind]


def kinds_of(variant: Variant) -> tuple[int, ...]:
    """The kinds in play: 34 in MJ-C, 28 in MJ-S (RULES §4.1)."""
    return tuple(range(KINDS)) if variant == "conventional" else SIMPLIFIED_KINDS


def tile_set(variant: Variant) -> list[int]:
    """The full set, 4 of each kind: 136 tiles (MJ-C) or 112 (MJ-S) (RULES §9.4)."""
    return [k for k in kinds_of(variant) for _ in range(COPIES)]


def suit_of(kind: int) -> int | None:
    """0, 1, 2 for bamboo, characters, circles; ``None`` for honours."""
    return None if kind >= 27 else kind // 9


def number_of(kind: int) -> int | None:
    """1–9 for suited kinds, ``None`` for honours."""
    return None if kind >= 27 else kind % 9 + 1


def counts(tiles: Iterable[int]) -> list[int]:
    """A 34-slot count vector of the given kinds."""
    out = [0] * KINDS
    for t in tiles:
        out[t] += 1
    return out


def turn_order(seats: Iterable[str]) -> tuple[str, ...]:
    """The seats present, in turn order E → S → W → N."""
    present = set(seats)
    return tuple(s for s in SEATS if s in present)


def next_seat(seat: str, seats: Sequence[str]) -> str:
    """The seat after ``seat`` in turn order among the seats present (on his right)."""
    return seats[(seats.index(seat) + 1) % len(seats)]


def distance(frm: str, to: str, seats: Sequence[str]) -> int:
    """How many places ``to`` sits after ``frm`` in turn order (1 = the next player)."""
    return (seats.index(to) - seats.index(frm)) % len(seats)


def show(kinds: Iterable[int]) -> str:
    """Tiles in FEED notation, sorted, space-separated."""
    return " ".join(code(k) for k in sorted(kinds))
