"""Fish-Prawn-Crab data: the faces of the dice and the prizes of art. 6 (RULES §2.2, §2.4).

Every prize is "N to 1": a winning bet gets its stake back plus N × stake (RULES §0.3). Each
entry carries the article it rests on, with RULES.md's markers: art. 5 a)–g) are
reconstructed [R] from the prize names of art. 6 (RULES §2.1, §8.2 F1).

>>> FACES[5]
Face(number=5, figure='crab', colour='green')
>>> PRIZES["three_colours"].odds, TOTAL_PRIZES[4].odds, FIGURE_PRIZES[2].odds
(20, 50, 2)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, NamedTuple

from ledger.domain.equipment import FPC_FACES
from ledger.games.fish_prawn_crab.feed import Colour


class Face(NamedTuple):
    """One face of an FPC die: its number, figure and colour (FPC art. 1 [S])."""

    number: int
    figure: str
    colour: str


FACES: Final[Mapping[int, Face]] = MappingProxyType(
    {n: Face(n, figure, colour) for n, (figure, colour) in FPC_FACES.items()}
)
"""Face number → face. Opposite faces add up to 7, so each colour is on two opposite faces."""

COLOURS: Final[tuple[Colour, ...]] = ("red", "green", "blue")
"""The colours a colour bet can name (FPC art. 1 [S])."""

SMALL_TOTALS: Final = range(4, 11)
"""Small: 4 ≤ S ≤ 10 (FPC art. 5 a) [R]); Big is 11 ≤ S ≤ 17 (art. 5 b) [R])."""

BIG_TOTALS: Final = range(11, 18)
"""Big: 11 ≤ S ≤ 17 (FPC art. 5 b) [R])."""


@dataclass(frozen=True)
class Prize:
    """Pays ``odds`` to 1, the stake returned (RULES §0.3), under the article ``rule``."""

    odds: int
    rule: str


PRIZES: Final[Mapping[str, Prize]] = MappingProxyType(
    {
        "small": Prize(1, "FPC art. 5 a) [R], art. 6"),
        "big": Prize(1, "FPC art. 5 b) [R], art. 6"),
        "one_colour": Prize(1, "FPC art. 5 d) [R], art. 6"),
        "two_colours": Prize(3, "FPC art. 5 e) [R], art. 6"),
        "three_colours": Prize(20, "FPC art. 5 f) [R], art. 6"),
        "any_three_colour": Prize(7, "FPC art. 5 g) [R], art. 6"),
        "specific_triple": Prize(150, "FPC art. 5 h), art. 6"),
        "any_triple": Prize(24, "FPC art. 5 i), art. 6"),
    }
)
"""The prize of each spot kind with one fixed prize (figure and total are below)."""

FIGURE_PRIZES: Final[Mapping[int, Prize]] = MappingProxyType(
    {
        1: Prize(1, "FPC art. 5 c) [R], art. 6"),
        2: Prize(2, "FPC art. 5 c) [R], art. 6"),
        3: Prize(3, "FPC art. 5 c) [R], art. 6"),
    }
)
"""One chosen figure: the prize by how many dice show it (none showing: the bet loses)."""

_TOTAL_ODDS: Final = {4: 50, 5: 18, 6: 14, 7: 12, 8: 8, 9: 6, 10: 6}

TOTAL_PRIZES: Final[Mapping[int, Prize]] = MappingProxyType(
    {
        total: Prize(odds, "FPC art. 5 j), art. 6")
        for low, odds in _TOTAL_ODDS.items()
        for total in (low, 21 - low)  # the table is symmetric: 4 and 17, 5 and 16, …
    }
)
"""Totals 4–17 (FPC art. 5 j)): the prize of a bet on each total."""

SMALL_BIG_LOSE_ON_TRIPLES: Final = "FPC art. 7"
"""«Figuras iguais» (全骰): Small and Big lose whenever the three dice show the same figure."""

TOTALS_ON_TRIPLES: Final = "FPC art. 5 j), art. 6; RULES §8.2 F3 [I]"
"""Totals are not affected by triples: 2-2-2 pays the total-6 bet (F3)."""
