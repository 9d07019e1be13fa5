"""Roulette data (DRE 60/2004, RULES §5): the wheel, the layout and the prizes.

Nothing here computes a settlement; it is the data the rules in ``rules.py`` read. Each entry
cites its source in RULES.md's style. Facts taken from no text are marked [I] (RULES §0.2):

- the pocket order and the red set are the standard European ones (RULES §5.2, §8.5 R5);
- the layout is the standard three-column table, twelve rows 1-2-3 … 34-35-36 (RULES §5.4,
  §8.5 R1); a split is two numbers side by side in a row or one above the other in a column,
  a street a row of three, a corner four numbers meeting at a point, a line two adjacent rows;
- the combinations with 0, when a table profile offers them (RULES §8.5 R3), are the usual
  ones along the zero: splits 0-1, 0-2, 0-3, streets 0-1-2 and 0-2-3, and the corner 0-1-2-3.

The prizes are RL art. 7: every prize is ``36/n − 1`` to 1 for a spot covering ``n`` numbers,
which :data:`PAYOUTS` satisfies by construction and the tests check.

>>> PAYOUTS["split"]
Odds(to_win=17, per=1, rule='RL art. 7', name='«cavalo» / 兩門騎綫')
>>> sorted(COLUMNS[2])[:4]
[2, 5, 8, 11]
>>> len(LAYOUT_SPOTS["split"]), len(LAYOUT_SPOTS["corner"])
(57, 22)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from types import MappingProxyType
from typing import Final, Literal

from ledger.games.roulette.feed import NumbersKind, OutsideKind

GroupKind = Literal["column", "dozen"]
BetKind = NumbersKind | GroupKind | OutsideKind
"""Every spot kind of the feed (FEED §3)."""

LayoutKind = Literal["split", "street", "corner", "line"]
"""The inside combinations whose numbers must form a shape on the layout."""

POCKETS: Final[tuple[int, ...]] = tuple(range(37))
"""The 37 numbered pockets, 0 to 36 (RL art. 1 [S])."""

WHEEL_ORDER: Final[tuple[int, ...]] = (
    0,
    32,
    15,
    19,
    4,
    21,
    2,
    25,
    17,
    34,
    6,
    27,
    13,
    36,
    11,
    30,
    8,
    23,
    10,
    5,
    24,
    16,
    33,
    1,
    20,
    14,
    31,
    9,
    22,
    18,
    29,
    7,
    28,
    12,
    35,
    3,
    26,
)
"""The pockets clockwise from 0, standard European order [I] (RULES §5.2, §8.5 R5)."""

RED_NUMBERS: Final[frozenset[int]] = frozenset(
    {1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36}
)
"""The red numbers, standard European [I] (RULES §5.2, §8.5 R5); 0 has no colour (RL art. 1)."""

BLACK_NUMBERS: Final[frozenset[int]] = frozenset(range(1, 37)) - RED_NUMBERS
"""The other 18 numbers 1–36 (RULES §5.2)."""

ROWS: Final[tuple[frozenset[int], ...]] = tuple(
    frozenset({3 * r - 2, 3 * r - 1, 3 * r}) for r in range(1, 13)
)
"""The twelve rows of the layout, 1-2-3 to 34-35-36: the streets [I] (RULES §5.4)."""

COLUMNS: Final[Mapping[int, frozenset[int]]] = MappingProxyType(
    {c: frozenset(range(c, 37, 3)) for c in (1, 2, 3)}
)
"""«coluna» 1: 1, 4, …, 34; 2: 2, 5, …, 35; 3: 3, 6, …, 36 (RULES §5.4)."""

DOZENS: Final[Mapping[int, frozenset[int]]] = MappingProxyType(
    {d: frozenset(range(12 * d - 11, 12 * d + 1)) for d in (1, 2, 3)}
)
"""«pequeno» 1–12, «médio» 13–24, «grande» 25–36 (RULES §5.4)."""

OUTSIDE: Final[Mapping[OutsideKind, frozenset[int]]] = MappingProxyType(
    {
        "red": RED_NUMBERS,
        "black": BLACK_NUMBERS,
        "even": frozenset(range(2, 37, 2)),
        "odd": frozenset(range(1, 37, 2)),
        "low": frozenset(range(1, 19)),
        "high": frozenset(range(19, 37)),
    }
)
"""The even-money bets: «encarnado»/«preto», «par»/«ímpar», «menor»/«maior» (RULES §5.4)."""

SPOT_SIZES: Final[Mapping[BetKind, int]] = MappingProxyType(
    {
        "straight": 1,
        "split": 2,
        "street": 3,
        "corner": 4,
        "line": 6,
        "nine": 9,
        "twelve": 12,
        "column": 12,
        "dozen": 12,
        "red": 18,
        "black": 18,
        "even": 18,
        "odd": 18,
        "low": 18,
        "high": 18,
    }
)
"""How many numbers each kind of spot covers (RL art. 7, RULES §5.4)."""


@dataclass(frozen=True)
class Odds:
    """Pays ``to_win`` for every ``per`` staked, and the stake is returned (RL art. 7).

    >>> Odds(35).prize(Decimal("100"))
    Decimal('3500')
    """

    to_win: int
    per: int = 1
    rule: str = "RL art. 7"
    name: str = ""

    def prize(self, stake: Decimal) -> Decimal:
        """The prize paid on top of the returned stake (RULES §0.3, §8.0 G4)."""
        return stake * self.to_win / self.per


def _odds(to_win: int, name: str) -> Odds:
    return Odds(to_win=to_win, rule="RL art. 7", name=name)


_EVEN_MONEY = _odds(1, "«par»/«ímpar», «menor»/«maior», «encarnado»/«preto» / 雙單 小大 紅黑")

PAYOUTS: Final[Mapping[BetKind, Odds]] = MappingProxyType(
    {
        "straight": _odds(35, "«pleno» / 孤丁"),
        "split": _odds(17, "«cavalo» / 兩門騎綫"),
        "street": _odds(11, "«rua» / 三門一列"),
        "corner": _odds(8, "«quadro» / 四門騎綫"),
        "line": _odds(5, "«linha» / 六門"),
        "nine": _odds(3, "«sector» de nove números / 九門"),
        "twelve": _odds(2, "«sector de doze números» / 十二門"),
        "column": _odds(2, "«coluna» / 直綫十二門"),
        "dozen": _odds(2, "«pequeno», «médio», «grande» / 小, 中, 大"),
        "red": _EVEN_MONEY,
        "black": _EVEN_MONEY,
        "even": _EVEN_MONEY,
        "odd": _EVEN_MONEY,
        "low": _EVEN_MONEY,
        "high": _EVEN_MONEY,
    }
)
"""The prize of each spot kind, N to 1 (RL art. 7); every one is ``36/n − 1`` (RULES §9.5)."""


def _splits() -> frozenset[frozenset[int]]:
    across = {frozenset({n, n + 1}) for n in range(1, 37) if n % 3 != 0}
    down = {frozenset({n, n + 3}) for n in range(1, 34)}
    return frozenset(across | down)


def _corners() -> frozenset[frozenset[int]]:
    return frozenset(frozenset({n, n + 1, n + 3, n + 4}) for n in range(1, 33) if n % 3 != 0)


def _lines() -> frozenset[frozenset[int]]:
    return frozenset(ROWS[r] | ROWS[r + 1] for r in range(11))


LAYOUT_SPOTS: Final[Mapping[LayoutKind, frozenset[frozenset[int]]]] = MappingProxyType(
    {
        "split": _splits(),
        "street": frozenset(ROWS),
        "corner": _corners(),
        "line": _lines(),
    }
)
"""Every split (57), street (12), corner (22) and line (11) of the layout without 0 [I]."""

ZERO_SPOTS: Final[Mapping[LayoutKind, frozenset[frozenset[int]]]] = MappingProxyType(
    {
        "split": frozenset({frozenset({0, 1}), frozenset({0, 2}), frozenset({0, 3})}),
        "street": frozenset({frozenset({0, 1, 2}), frozenset({0, 2, 3})}),
        "corner": frozenset({frozenset({0, 1, 2, 3})}),
        "line": frozenset(),
    }
)
"""The combinations with 0, offered only under ``rl.zero_combinations`` [I] (RULES §8.5 R3)."""
