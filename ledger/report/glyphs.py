"""The outcome facts of a round as glyphs: cards, dice, Fish-Prawn-Crab figures, tiles, the wheel.

:func:`outcome_lines` reads the facts every game records the same way (FEED §2–§8) — a
``card_dealt`` ``card``, the ``dice`` of ``dice_shown`` / ``dice_thrown``, the ``number`` of
``spin_result``, the ``tile`` of Mah-Jong events — from each event's own fields, so it works for
every game, including games whose rules are still landing. An event it does not know, or one
whose fields are not what it expects, gives no glyph and never an error: it is still listed,
plainly, among the round's events.

>>> card("TD").text, card("AS").text, card("10H").text
('10♦', 'A♠', '10♥')
>>> die(5).text, fpc_face(4).text, tile("1C").text, tile("RD").text
('⚄', '4 coin', '🀇', '🀄')
>>> wheel(0).tone, wheel(17).tone, wheel(20).tone
('green', 'black', 'black')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ledger.domain.equipment import FPC_FACES
from ledger.domain.round import Round
from ledger.feed.envelope import FeedEvent

SUITS = {
    "S": ("♠", "spades", "black"),
    "H": ("♥", "hearts", "red"),
    "D": ("♦", "diamonds", "red"),
    "C": ("♣", "clubs", "black"),
}
RANKS = {
    "A": ("A", "ace"),
    "T": ("10", "ten"),
    "10": ("10", "ten"),
    "J": ("J", "jack"),
    "Q": ("Q", "queen"),
    "K": ("K", "king"),
    **{str(n): (str(n), str(n)) for n in range(2, 10)},
}
_CARD_BASE = {"S": 0x1F0A0, "H": 0x1F0B0, "D": 0x1F0C0, "C": 0x1F0D0}
_CARD_OFFSET = {
    "A": 1,
    "T": 10,
    "10": 10,
    "J": 11,
    "Q": 13,
    "K": 14,
    **{str(n): n for n in range(2, 10)},
}  # 12 is the knight, not in a 52-card deck
DICE = "⚀⚁⚂⚃⚄⚅"
TILE_SUITS = {
    "C": (0x1F007, "characters", "red"),
    "B": (0x1F010, "bamboo", "green"),
    "D": (0x1F019, "circles", "blue"),
}
TILE_HONOURS = {
    "EW": ("🀀", "east wind"),
    "SW": ("🀁", "south wind"),
    "WW": ("🀂", "west wind"),
    "NW": ("🀃", "north wind"),
    "RD": ("🀄", "red dragon"),
    "GD": ("🀅", "green dragon"),
    "WD": ("🀆", "white dragon"),
}
RL_RED = frozenset({1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36})
"""The red numbers of the single-zero wheel (the roulette tables hold the same set)."""


@dataclass(frozen=True)
class Glyph:
    """One thing shown: its feed code, a short text (a Unicode glyph where one exists), a spoken
    label, and a tone the page colours it with."""

    kind: str
    """``card``, ``die``, ``fpc``, ``tile`` or ``wheel``."""
    code: str
    text: str
    label: str
    tone: str
    unicode: str = ""
    """The Unicode character of the thing (a playing card, a tile), when there is one."""


@dataclass
class OutcomeLine:
    """One line of a round's outcome: who or what (``seat 2``, ``banker``, ``dice``), the glyphs,
    and a note (``face down``, ``cocked: not read``)."""

    label: str
    glyphs: list[Glyph] = field(default_factory=list)
    note: str = ""

    @property
    def text(self) -> str:
        """The line as plain text, for the terminal."""
        body = " ".join(g.text for g in self.glyphs)
        return f"{self.label}: {body}" + (f" ({self.note})" if self.note else "")

    def to_json(self) -> dict[str, Any]:
        """``{"label", "codes", "text", "note"}``."""
        return {
            "label": self.label,
            "codes": [g.code for g in self.glyphs],
            "text": " ".join(g.text for g in self.glyphs),
            "note": self.note,
        }


def card(code: str) -> Glyph:
    """A card in FEED notation (``"AS"``, ``"TD"``; ``"10H"`` is read too)."""
    rank, suit = code[:-1], code[-1:]
    if rank not in RANKS or suit not in SUITS:
        raise ValueError(f"{code!r} is not a card")
    symbol, suit_name, tone = SUITS[suit]
    shown, rank_name = RANKS[rank]
    unicode = chr(_CARD_BASE[suit] + _CARD_OFFSET[rank])
    return Glyph("card", code, f"{shown}{symbol}", f"{rank_name} of {suit_name}", tone, unicode)


def die(value: int) -> Glyph:
    """A plain die face, 1–6 (SP9 and Mah-Jong dice)."""
    if not 1 <= value <= 6:
        raise ValueError(f"{value!r} is not a die face")
    return Glyph("die", str(value), DICE[value - 1], f"die {value}", "black", DICE[value - 1])


def fpc_face(value: int) -> Glyph:
    """A Fish-Prawn-Crab face: its number, figure and colour (FPC art. 1 [S])."""
    if value not in FPC_FACES:
        raise ValueError(f"{value!r} is not a face")
    figure, colour = FPC_FACES[value]
    return Glyph("fpc", str(value), f"{value} {figure}", f"{figure} ({colour})", colour, DICE[value - 1])


def tile(code: str) -> Glyph:
    """A Mah-Jong tile in FEED notation (``"5B"``, ``"EW"``, ``"RD"``)."""
    if code in TILE_HONOURS:
        glyph, name = TILE_HONOURS[code]
        tone = "red" if code == "RD" else "green" if code == "GD" else "black"
        return Glyph("tile", code, glyph, name, tone, glyph)
    if len(code) == 2 and code[0] in "123456789" and code[1] in TILE_SUITS:
        base, suit_name, tone = TILE_SUITS[code[1]]
        glyph = chr(base + int(code[0]) - 1)
        return Glyph("tile", code, glyph, f"{code[0]} of {suit_name}", tone, glyph)
    raise ValueError(f"{code!r} is not a tile")


def wheel(number: int) -> Glyph:
    """A roulette number with its colour (0 is green)."""
    if not 0 <= number <= 36:
        raise ValueError(f"{number!r} is not on the wheel")
    tone = "green" if number == 0 else "red" if number in RL_RED else "black"
    return Glyph("wheel", str(number), str(number), f"{number} {tone}", tone)


def outcome_lines(rnd: Round) -> list[OutcomeLine]:
    """The round's outcome facts, grouped into lines in the order they first occur."""
    lines: dict[str, OutcomeLine] = {}
    for event in rnd.events:
        reader = _READERS.get(event.type)
        if reader is None:
            continue
        try:
            reader(_fields(event), event, lines)
        except (KeyError, TypeError, ValueError, AttributeError):
            continue  # a shape we do not know: the event still shows as a plain row
    return list(lines.values())


def _fields(event: FeedEvent) -> dict[str, Any]:
    return event.model_dump(mode="json", by_alias=True, exclude_none=True)


def _line(lines: dict[str, OutcomeLine], key: str, label: str | None = None) -> OutcomeLine:
    if key not in lines:
        lines[key] = OutcomeLine(label or key)
    return lines[key]


def _place(to: object) -> str:
    return f"seat {to}" if isinstance(to, int) else str(to)


def _card_dealt(d: dict[str, Any], e: FeedEvent, lines: dict[str, OutcomeLine]) -> None:
    glyph = card(str(d["card"]))
    line = _line(lines, f"hand:{d['to']}", _place(d["to"]))
    line.glyphs.append(glyph)


def _card_other(d: dict[str, Any], e: FeedEvent, lines: dict[str, OutcomeLine]) -> None:
    if "card" not in d:
        _line(lines, e.type, e.type.replace("_", " ")).note = "face not read"
        return
    label = "burned" if e.type == "card_burned" else f"exposed ({_place(d.get('to'))})"
    _line(lines, f"{e.type}:{d.get('to', '')}", label).glyphs.append(card(str(d["card"])))


def _dice_shown(d: dict[str, Any], e: FeedEvent, lines: dict[str, OutcomeLine]) -> None:
    line = _line(lines, f"dice:{e.seq}", f"dice (seq {e.seq})")
    line.glyphs += [fpc_face(int(v)) for v in d["dice"]]


def _die_cocked(d: dict[str, Any], e: FeedEvent, lines: dict[str, OutcomeLine]) -> None:
    shown = [k for k in lines if k.startswith("dice:")]
    if shown:
        lines[shown[-1]].note = f"a die cocked at seq {e.seq}: not read"


def _dice_thrown(d: dict[str, Any], e: FeedEvent, lines: dict[str, OutcomeLine]) -> None:
    line = _line(lines, f"dice:{e.seq}", f"dice (seq {e.seq})")
    line.glyphs += [die(int(v)) for v in d["dice"]]
    if d.get("valid") is False:
        line.note = "not valid: rethrown"


def _spin(d: dict[str, Any], e: FeedEvent, lines: dict[str, OutcomeLine]) -> None:
    _line(lines, f"spin:{e.seq}", f"spin (seq {e.seq})").glyphs.append(wheel(int(d["number"])))


def _spin_voided(d: dict[str, Any], e: FeedEvent, lines: dict[str, OutcomeLine]) -> None:
    _line(lines, f"spin:{e.seq}", f"spin (seq {e.seq})").note = "golpe nulo: spin voided"


def _tiles(verb: str) -> Callable[[dict[str, Any], FeedEvent, dict[str, OutcomeLine]], None]:
    def read(d: dict[str, Any], e: FeedEvent, lines: dict[str, OutcomeLine]) -> None:
        codes = d["tiles"] if "tiles" in d else [d["tile"]]
        line = _line(lines, f"{verb}:{d['seat']}", f"{d['seat']} {verb}")
        line.glyphs += [tile(str(c)) for c in codes]
        if e.type == "win_declared":
            line.note = str(d.get("source", "")).replace("_", " ")

    return read


_READERS: dict[str, Callable[[dict[str, Any], FeedEvent, dict[str, OutcomeLine]], None]] = {
    "card_dealt": _card_dealt,
    "card_burned": _card_other,
    "card_exposed": _card_other,
    "dice_shown": _dice_shown,
    "die_cocked": _die_cocked,
    "dice_thrown": _dice_thrown,
    "spin_result": _spin,
    "spin_voided": _spin_voided,
    "tile_drawn": _tiles("drew"),
    "tile_discarded": _tiles("discarded"),
    "meld_claimed": _tiles("melded"),
    "kong_declared": _tiles("declared kong"),
    "win_declared": _tiles("wins on"),
}
