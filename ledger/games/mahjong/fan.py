"""Fán counting (MJ art. 6, RULES §4.6): the scoring table as data plus one predicate each.

Every element is a :class:`FanElement` — its code in RULES §4.6 (E1–E12, D1–D12, S1–S3), its
name, its fán and its article — with one predicate over a :class:`WinContext` that says how many
times it applies (E1 counts once per dragon set; every other element 0 or 1 time). The fán of a
hand is additive and capped (RULES §8.4 M2):

- MJ-C: ``min(mj.c.max_fan, Σ fán of the elements found)`` — a 2-fán pattern reaches the cap
  of 2 on its own; a hand with none is a chicken hand («Kai vu», 0 fán);
- MJ-S: ``min(mj.s.max_fan, mj.s.base_fan + number of S1–S3 found)`` (M26).

D3 (double wind) is the E2 + E3 of one wind counted as one 2-fán pattern: E2 and E3 skip a wind
that is both the seat and the round wind, so it is never counted twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

from ledger.games.mahjong.hands import Arrangement
from ledger.games.mahjong.tiles import (
    DRAGONS,
    GREEN_DRAGON,
    HONOURS,
    TERMINALS,
    WINDS,
    Variant,
    suit_of,
)

Source = Literal["self_drawn", "discard", "robbed_kong"]


@dataclass(frozen=True)
class WinContext:
    """Everything scoring needs about one win: the arrangement and how the tile came."""

    variant: Variant
    arrangement: Arrangement
    seat_wind: int
    round_wind: int
    source: Source
    winning_tile: int
    on_replacement: bool = False
    """Self-drawn with the replacement tile after one's own kong (E5)."""
    kong_upon_kong: bool = False
    """That replacement came after a second kong made with the first replacement (D4)."""
    last_tile: bool = False
    """Self-drawn with the last tile of the wall (E9, S2; RULES §8.4 M20)."""
    heavenly: bool = False
    earthly: bool = False
    kankan_selfdraw_only: bool = True


@dataclass(frozen=True)
class FanElement:
    """One line of the fán table: how many times it applies to a win is ``count(ctx)``."""

    code: str
    name: str
    fan: int
    rule: str
    count: Callable[[WinContext], int]


def _pungs(c: WinContext) -> list[int]:
    return [m.first for m in c.arrangement.sets if m.is_pung]


def _all_kinds(c: WinContext) -> list[int]:
    return c.arrangement.kinds()


def _suits(c: WinContext) -> set[int]:
    return {s for k in _all_kinds(c) if (s := suit_of(k)) is not None}


def _has_honours(c: WinContext) -> bool:
    return any(k in HONOURS for k in _all_kinds(c))


def _standard(c: WinContext) -> bool:
    return not c.arrangement.thirteen_orphans


def _no_chow(c: WinContext) -> bool:
    return _standard(c) and all(m.is_pung for m in c.arrangement.sets)


def _only_chows(c: WinContext) -> bool:
    return _standard(c) and all(not m.is_pung for m in c.arrangement.sets)


def _double_wind(c: WinContext) -> int:
    return int(c.seat_wind == c.round_wind and c.seat_wind in _pungs(c))


def _round_wind(c: WinContext) -> int:
    return int(c.round_wind != c.seat_wind and c.round_wind in _pungs(c))


def _seat_wind(c: WinContext) -> int:
    return int(c.round_wind != c.seat_wind and c.seat_wind in _pungs(c))


def _all_chows(c: WinContext) -> int:
    pair = c.arrangement.pair
    return int(_only_chows(c) and pair not in DRAGONS and pair not in (c.round_wind, c.seat_wind))


def _mixed_one_suit(c: WinContext) -> int:
    return int(_standard(c) and len(_suits(c)) == 1 and _has_honours(c))


def _pure_one_suit(c: WinContext) -> int:
    return int(_standard(c) and len(_suits(c)) == 1 and not _has_honours(c))


def _small_three_dragons(c: WinContext) -> int:
    dragon_sets = [k for k in _pungs(c) if k in DRAGONS]
    return int(len(dragon_sets) == 2 and c.arrangement.pair in DRAGONS)


def _small_four_winds(c: WinContext) -> int:
    wind_sets = [k for k in _pungs(c) if k in WINDS]
    return int(len(wind_sets) == 3 and c.arrangement.pair in WINDS)


def _mixed_terminals(c: WinContext) -> int:
    kinds = _all_kinds(c)
    only = _no_chow(c) and all(k in TERMINALS or k in HONOURS for k in kinds)
    return int(only and any(k in TERMINALS for k in kinds) and any(k in HONOURS for k in kinds))


def _mixed_one_suit_all_chows(c: WinContext) -> int:
    pair = c.arrangement.pair
    return int(
        _only_chows(c) and len(_suits(c)) == 1 and pair in WINDS and pair not in (c.round_wind, c.seat_wind)
    )


def _all_concealed_pungs(c: WinContext) -> int:
    sets = c.arrangement.sets
    ok = _no_chow(c) and all(m.kind == "pung" and m.concealed for m in sets)
    return int(ok and (c.source == "self_drawn" or not c.kankan_selfdraw_only))


def _big_three_dragons(c: WinContext) -> int:
    return int(all(d in _pungs(c) for d in DRAGONS))


def _big_four_winds(c: WinContext) -> int:
    return int(all(w in _pungs(c) for w in WINDS))


def _pure_terminals(c: WinContext) -> int:
    return int(_standard(c) and all(k in TERMINALS for k in _all_kinds(c)))


def _all_honours(c: WinContext) -> int:
    return int(_standard(c) and all(k in HONOURS for k in _all_kinds(c)))


A1 = "MJ art. 6(a)(2)"
A2 = "MJ art. 6(a)(3)"

CONVENTIONAL: Final[tuple[FanElement, ...]] = (
    FanElement(
        "E1",
        "dragon set (番子)",
        1,
        f"{A1}; RULES §4.6 E1",
        lambda c: sum(1 for k in _pungs(c) if k in DRAGONS),
    ),
    FanElement("E2", "round-wind set", 1, f"{A1}; RULES §4.6 E2", _round_wind),
    FanElement("E3", "seat-wind set", 1, f"{A1}; RULES §4.6 E3", _seat_wind),
    FanElement(
        "E4",
        "robbing the kong «Ch'éong kóng» (搶槓)",
        1,
        f"{A1}; RULES §4.6 E4",
        lambda c: int(c.source == "robbed_kong"),
    ),
    FanElement(
        "E5",
        "win on the kong replacement «Kóng seong fá» (槓上花)",
        1,
        f"{A1}; RULES §4.6 E5",
        lambda c: int(c.on_replacement),
    ),
    FanElement(
        "E6", "all pungs «Tò-i-tò-i-vu» (對對糊)", 1, f"{A1}; RULES §4.6 E6", lambda c: int(_no_chow(c))
    ),
    FanElement("E7", "all chows «P'èng vu» (平糊)", 1, f"{A1}; RULES §4.6 E7", _all_chows),
    FanElement(
        "E8", "mixed one suit «Wân iat sêk» (混一色)", 1, f"{A1}; RULES §4.6 E8, §8.4 M21", _mixed_one_suit
    ),
    FanElement(
        "E9",
        "last tile «Hoi tai lau yuet» (海底撈月)",
        1,
        f"{A1}; RULES §4.6 E9, §8.4 M20",
        lambda c: int(c.last_tile),
    ),
    FanElement(
        "E10", "small three dragons «Siu sam un» (小三元)", 1, f"{A1}; RULES §4.6 E10", _small_three_dragons
    ),
    FanElement(
        "E11", "small four winds «Siu sei hei» (小四喜)", 1, f"{A1}; RULES §4.6 E11", _small_four_winds
    ),
    FanElement(
        "E12", "mixed terminals and honours «Fá iu-kau» (混么)", 1, f"{A1}; RULES §4.6 E12", _mixed_terminals
    ),
    FanElement(
        "D1",
        "heavenly hand «t'in vu» (天糊)",
        2,
        "MJ art. 5(a)(1), 6(a)(3); RULES §4.6 D1",
        lambda c: int(c.heavenly),
    ),
    FanElement(
        "D2",
        "earthly hand «tei vu» (地糊)",
        2,
        "MJ art. 5(a)(2), 6(a)(3); RULES §4.6 D2",
        lambda c: int(c.earthly),
    ),
    FanElement("D3", "double wind «Seong fán» (雙番門風)", 2, f"{A2}; RULES §4.6 D3", _double_wind),
    FanElement(
        "D4",
        "kong upon kong «Kóng seong kóng» (槓上槓)",
        2,
        f"{A2}; RULES §4.6 D4",
        lambda c: int(c.kong_upon_kong),
    ),
    FanElement(
        "D5",
        "mixed-one-suit all chows «Wân iat sêk p'èng vu» (混一色平糊)",
        2,
        f"{A2}; RULES §4.6 D5",
        _mixed_one_suit_all_chows,
    ),
    FanElement("D6", "pure one suit «Ch'èng iat sêk» (清一色)", 2, f"{A2}; RULES §4.6 D6", _pure_one_suit),
    FanElement(
        "D7",
        "thirteen orphans «Sap-sám iu» (十三么)",
        2,
        f"{A2}; RULES §4.6 D7",
        lambda c: int(c.arrangement.thirteen_orphans),
    ),
    FanElement(
        "D8",
        "all concealed pungs «Kan-kan vu» (坎坎糊)",
        2,
        f"{A2}; RULES §4.6 D8, §8.4 M15",
        _all_concealed_pungs,
    ),
    FanElement(
        "D9", "big three dragons «Tai sam un» (大三元)", 2, f"{A2}; RULES §4.6 D9", _big_three_dragons
    ),
    FanElement("D10", "big four winds «Tai sei hei» (大四喜)", 2, f"{A2}; RULES §4.6 D10", _big_four_winds),
    FanElement("D11", "pure terminals «Cheng iu» (清么)", 2, f"{A2}; RULES §4.6 D11", _pure_terminals),
    FanElement("D12", "all honours «Chun chu» (全字)", 2, f"{A2}; RULES §4.6 D12", _all_honours),
)
"""The MJ-C fán table (art. 6(a)): the twelve 1-fán elements, then the twelve 2-fán patterns."""

SIMPLIFIED: Final[tuple[FanElement, ...]] = (
    FanElement(
        "S1", "robbing a kong", 1, "MJ art. 6(b); RULES §4.6 S1", lambda c: int(c.source == "robbed_kong")
    ),
    FanElement("S2", "last tile", 1, "MJ art. 6(b); RULES §4.6 S2, §8.4 M20", lambda c: int(c.last_tile)),
    FanElement(
        "S3",
        "winning on the green dragon «fát chói» (食糊牌為發財)",
        1,
        "MJ art. 6(b); RULES §4.6 S3",
        lambda c: int(c.winning_tile == GREEN_DRAGON),
    ),
)
"""The MJ-S fán table (art. 6(b)); the minimum hand itself is worth ``mj.s.base_fan`` (M26)."""

CHICKEN_RULE: Final = "MJ art. 6(a)(1); RULES §4.6 (minimum hand «Kai vu», 雞糊), §8.4 M3"
SIMPLIFIED_BASE_RULE: Final = "MJ art. 6(b); RULES §8.4 M26 (the minimum hand is «um fán»)"
CAP_RULE: Final = "MJ art. 6(a)(3) (double fán is the maximum); RULES §8.4 M2"


@dataclass(frozen=True)
class Found:
    """An element found in a hand, and how many times it counts."""

    element: FanElement
    times: int

    @property
    def fan(self) -> int:
        """The fán it adds before the cap."""
        return self.element.fan * self.times


@dataclass(frozen=True)
class Score:
    """The fán of one arrangement: the elements found, the raw sum and the capped total."""

    arrangement: Arrangement
    found: tuple[Found, ...]
    base: int
    raw: int
    fan: int


def score(ctx: WinContext, *, cap: int, base: int = 0) -> Score:
    """Every element of the variant's table that applies, and the capped, additive fán."""
    table = CONVENTIONAL if ctx.variant == "conventional" else SIMPLIFIED
    found = tuple(Found(e, n) for e in table if (n := e.count(ctx)) > 0)
    raw = base + sum(f.fan for f in found)
    return Score(ctx.arrangement, found, base, raw, min(cap, raw))


def best(scores: list[Score]) -> Score:
    """The best-scoring arrangement: most fán, then the highest raw sum, then the most elements.

    Ties beyond that are equal for payment; the first listed (a stable order) is shown.
    """
    return max(scores, key=lambda s: (s.fan, s.raw, len(s.found)))
