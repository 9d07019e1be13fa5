"""Mah-Jong data: wall and deal, hand sizes, units per fán, false-win penalties, commission.

Each entry carries its article (RULES §4, §8.4, §9.4).

>>> unit(Decimal("25"), 2)
Decimal('100')
>>> COMMISSION["conventional"]["25/50"], COMMISSION["simplified"]["1000/2000"]
(Decimal('10'), Decimal('200'))
>>> len(deal_order("conventional", ("E", "S", "W", "N"))), len(deal_order("simplified", ("E", "S")))
(53, 9)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from types import MappingProxyType
from typing import Final

from ledger.games.mahjong.feed import STAKE_ROWS
from ledger.games.mahjong.tiles import Variant


@dataclass(frozen=True)
class Layout:
    """One variant's equipment and hand shape (MJ arts. 2–4, RULES §4.1, §4.3–4.4)."""

    tiles: int
    dice: int
    stacks_per_wall: int
    sets: int
    """Sets in a winning hand besides the pair: 4 (MJ-C) or 1 (MJ-S)."""
    deal_rounds: int
    """Passes of the deal in which each player takes ``deal_take`` tiles."""
    deal_take: int
    banker_extra: int
    """Tiles the banker takes after the passes (2 in MJ-C, 1 in MJ-S)."""
    others_extra: int
    """Tiles each other player takes after the banker's extra (1 in MJ-C, 0 in MJ-S)."""
    rule: str

    @property
    def hand(self) -> int:
        """Tiles held between turns, a kong counting as 3 (13 or 4)."""
        return 3 * self.sets + 1


LAYOUTS: Final[Mapping[Variant, Layout]] = MappingProxyType(
    {
        "conventional": Layout(136, 3, 17, 4, 3, 4, 2, 1, "MJ art. 2(a), 3(a), 4(a); RULES §4.3"),
        "simplified": Layout(112, 2, 14, 1, 2, 2, 1, 0, "MJ art. 2(b), 3(b), 4(b); RULES §4.3"),
    }
)


def deal_order(variant: Variant, seats: Sequence[str]) -> list[str]:
    """Who takes each dealt tile, in order (MJ art. 3, RULES §4.3): MJ-C E S W N take 4 tiles
    each three times, then E takes 2 and S W N 1 each (14 + 3 × 13 = 53); MJ-S E S W N take 2
    each twice, then E takes 1 (5 + 3 × 4 = 17 with four players)."""
    lay = LAYOUTS[variant]
    order = [s for _ in range(lay.deal_rounds) for s in seats for _ in range(lay.deal_take)]
    order += [seats[0]] * lay.banker_extra
    order += [s for s in seats[1:] for _ in range(lay.others_extra)]
    return order


UNIT_RULE: Final = "MJ art. 7, 8; RULES §4.7, §8.4 M1 (u = A × 2^fán)"


def unit(single: Decimal, fan: int) -> Decimal:
    """The single share of an ``fan``-fán hand at stake ``A/B``: ``u(f) = A × 2^f`` (M1)."""
    return single * Decimal(2**fan)


COMMISSION: Final[Mapping[Variant, Mapping[str, Decimal]]] = MappingProxyType(
    {
        "conventional": MappingProxyType(
            {row: Decimal(row.split("/")[0]) * 4 / 10 for row in STAKE_ROWS["conventional"]}
        ),
        "simplified": MappingProxyType(
            {row: Decimal(row.split("/")[0]) * 2 / 10 for row in STAKE_ROWS["simplified"]}
        ),
    }
)
"""The fixed commission charged to the winner per stake row (MJ art. 8, RULES §4.10): 0.4 × A
in MJ-C and 0.2 × A in MJ-S in every row of the table (RULES §9.4)."""

COMMISSION_RULE: Final = "MJ art. 8; RULES §4.10"
NO_COMMISSION_RULE: Final = "MJ art. 8; RULES §8.4 M7 (no commission on a drawn or void game)"


@dataclass(frozen=True)
class Penalty:
    """What a false winner pays each other seat: the single share of an ``fan``-fán hand."""

    to_banker: int
    to_others: int
    rule: str


FALSE_WIN: Final[Mapping[tuple[Variant, bool], Penalty]] = MappingProxyType(
    {
        ("conventional", True): Penalty(2, 2, "MJ art. 10(a)(8); RULES §4.9, §8.4 M18"),
        ("conventional", False): Penalty(2, 1, "MJ art. 10(a)(8); RULES §4.9, §8.4 M18"),
        ("simplified", True): Penalty(1, 1, "MJ art. 10(b)(3); RULES §4.9, §8.4 M18"),
        ("simplified", False): Penalty(1, 1, "MJ art. 10(b)(3); RULES §4.9, §8.4 M18"),
    }
)
"""False-win penalties by (variant, the false winner is the banker) (RULES §4.9): the banker's
double is already built in and not applied on top (M18). ``to_banker`` is unused when the
false winner is the banker himself."""
