"""Equipment: the value types of what is dealt, thrown or drawn at a table.

Cards (``"AS"``, ``"TD"``), dice faces (1–6) and Mah-Jong tiles (``"5B"``, ``"EW"``, ``"RD"``),
in the notation of FEED.md §1. Each type parses from and formats to that notation, and is
hashable and ordered so rules can use them in sets and sorted hands.

>>> Card.parse("TD")
Card(rank=<Rank.TEN: 'T'>, suit=<Suit.DIAMONDS: 'D'>)
>>> str(Card.parse("as"))
Traceback (most recent call last):
...
ValueError: 'as' is not a card: expected a rank of A23456789TJQK then a suit of SHCD, like 'AS'
>>> Tile.parse("RD").is_honour
True
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, NamedTuple, TypeVar

from pydantic import PlainSerializer, PlainValidator
from pydantic_core import PydanticCustomError


class Rank(StrEnum):
    """A card rank in FEED notation; ``value`` is the letter, ``points`` its number (A = 1)."""

    ACE = "A"
    TWO = "2"
    THREE = "3"
    FOUR = "4"
    FIVE = "5"
    SIX = "6"
    SEVEN = "7"
    EIGHT = "8"
    NINE = "9"
    TEN = "T"
    JACK = "J"
    QUEEN = "Q"
    KING = "K"

    @property
    def number(self) -> int:
        """1 for the ace up to 13 for the king."""
        return _RANK_ORDER.index(self) + 1


_RANK_ORDER = tuple(Rank)


class Suit(StrEnum):
    """A card suit in FEED notation."""

    SPADES = "S"
    HEARTS = "H"
    CLUBS = "C"
    DIAMONDS = "D"


class Card(NamedTuple):
    """One playing card."""

    rank: Rank
    suit: Suit

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse FEED notation: rank letter then suit letter, upper case."""
        if isinstance(text, str) and len(text) == 2:
            try:
                return cls(Rank(text[0]), Suit(text[1]))
            except ValueError:
                pass
        raise ValueError(
            f"{text!r} is not a card: expected a rank of A23456789TJQK then a suit of SHCD, like 'AS'"
        )

    def __str__(self) -> str:
        text = _CARD_TEXT.get(self)  # every card game's judge asks, per card: a lookup
        return text if text is not None else self.rank.value + self.suit.value


_CARD_TEXT: dict[Card, str] = {Card(r, s): r.value + s.value for r in Rank for s in Suit}
"""FEED notation of each of the 52 cards."""


_WINDS = ("EW", "SW", "WW", "NW")
_DRAGONS = ("RD", "GD", "WD")


class Tile(NamedTuple):
    """One Mah-Jong tile, kept in its FEED notation (``"1B"``…``"9D"``, winds, dragons)."""

    code: str

    @classmethod
    def parse(cls, text: str) -> Tile:
        """Parse FEED notation; raise ``ValueError`` naming the accepted forms otherwise."""
        if isinstance(text, str):
            if len(text) == 2 and text[0] in "123456789" and text[1] in "BCD":
                return cls(text)
            if text in _WINDS or text in _DRAGONS:
                return cls(text)
        raise ValueError(f"{text!r} is not a tile: expected 1B-9B, 1C-9C, 1D-9D, EW SW WW NW or RD GD WD")

    @property
    def is_honour(self) -> bool:
        """Winds and dragons."""
        return self.code in _WINDS or self.code in _DRAGONS

    @property
    def is_wind(self) -> bool:
        """East, South, West or North wind."""
        return self.code in _WINDS

    @property
    def is_dragon(self) -> bool:
        """Red, green or white dragon."""
        return self.code in _DRAGONS

    @property
    def suit(self) -> str | None:
        """``"B"``, ``"C"`` or ``"D"`` for suited tiles, ``None`` for honours."""
        return None if self.is_honour else self.code[1]

    @property
    def number(self) -> int | None:
        """1–9 for suited tiles, ``None`` for honours."""
        return None if self.is_honour else int(self.code[0])

    def __str__(self) -> str:
        return self.code


FPC_FACES = {
    1: ("fish", "red"),
    2: ("prawn", "green"),
    3: ("calabash", "blue"),
    4: ("coin", "blue"),
    5: ("crab", "green"),
    6: ("rooster", "red"),
}
"""Fish-Prawn-Crab die faces: number → (figure, colour) (FPC art. 1 [S], RULES §2.2)."""


_CARDS: dict[object, Card] = {f"{r.value}{s.value}": Card(r, s) for r in Rank for s in Suit}
"""Every card by its FEED notation: parsing a stored card is one lookup."""
_TILES: dict[object, Tile] = {
    code: Tile(code) for code in (*(f"{n}{s}" for s in "BCD" for n in "123456789"), *_WINDS, *_DRAGONS)
}
"""Every tile by its FEED notation."""

_Piece = TypeVar("_Piece", Card, Tile)


def _parser(
    kind: type[_Piece], table: dict[object, _Piece], code: str, example: str
) -> Callable[[object], _Piece]:
    """The pydantic validator of one kind of equipment: an instance as it is, its FEED
    notation by one lookup in ``table``, anything else through ``kind.parse``, whose refusal
    becomes the error ``code`` (a value that is not a string is shown ``example``)."""
    noun = kind.__name__.lower()
    parse = kind.parse

    def validate(value: object) -> _Piece:
        if isinstance(value, kind):
            return value
        known = table.get(value) if value.__class__ is str else None
        if known is not None:
            return known
        try:
            if not isinstance(value, str):
                raise ValueError(f"a {noun} is a string like {example!r}, not {type(value).__name__}")
            return parse(value)
        except ValueError as exc:
            raise PydanticCustomError(code, str(exc)) from None

    validate.__name__ = validate.__qualname__ = f"_parse_{noun}"
    return validate


_parse_card = _parser(Card, _CARDS, "bad_card", "AS")
"""A card from FEED notation (pydantic's ``bad_card`` if it is not one)."""
_parse_tile = _parser(Tile, _TILES, "bad_tile", "5B")
"""A tile from FEED notation (pydantic's ``bad_tile`` if it is not one)."""

CardField = Annotated[Card, PlainValidator(_parse_card), PlainSerializer(str, return_type=str)]
"""A pydantic field holding a :class:`Card`, written in FEED notation."""

TileField = Annotated[Tile, PlainValidator(_parse_tile), PlainSerializer(str, return_type=str)]
"""A pydantic field holding a :class:`Tile`, written in FEED notation."""
