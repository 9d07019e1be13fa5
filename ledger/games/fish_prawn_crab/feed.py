"""Fish-Prawn-Crab feed events (FEED.md §4): the bet spots, the shaker and the dice.

Every spot of FEED §4 is a model here, told apart by ``kind`` (a discriminated union), so a
spot that names a face, colour or total outside the layout (face 7, total 18, colour "gold") is
rejected at ingest with the field that is wrong: the FPC layout has no spot that could be taken
and then found invalid, unlike the roulette splits.

The dice are recorded as face numbers 1–6 (FEED §1); figure and colour follow from the face
(FPC art. 1 [S], ``ledger.games.fish_prawn_crab.tables``).
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, StrictInt

from ledger.feed.envelope import LIFECYCLE_EVENTS, BetPlaced, FeedEvent, FeedModel
from ledger.feed.types import Die

Colour = Literal["red", "green", "blue"]
"""The three colours of the faces (FPC art. 1 [S])."""

Total = Annotated[StrictInt, Field(ge=4, le=17)]
"""A total that can be bet on: 4–17 (FPC art. 5 j); 3 and 18 are not on the layout)."""

Dice = tuple[Die, Die, Die]
"""The three faces shown, in the order the table reported them."""


class EvenSpot(FeedModel):
    """Small or Big, 1 to 1 (FPC art. 5 a)–b) [R]); both lose on any triple (art. 7)."""

    kind: Literal["small", "big"]


class FigureSpot(FeedModel):
    """One chosen figure (art. 5 c) [R]) or three of it, the specific triple (art. 5 h))."""

    kind: Literal["figure", "specific_triple"]
    face: Die


class ColourSpot(FeedModel):
    """Exactly one, exactly two or three dice of a chosen colour (art. 5 d)–f) [R], §2.5)."""

    kind: Literal["one_colour", "two_colours", "three_colours"]
    colour: Colour


class AnySpot(FeedModel):
    """Three dice of the same colour (art. 5 g) [R]) or of the same figure (art. 5 i))."""

    kind: Literal["any_three_colour", "any_triple"]


class TotalSpot(FeedModel):
    """The sum of the three faces equals ``total`` (art. 5 j))."""

    kind: Literal["total"]
    total: Total


Spot = Annotated[EvenSpot | FigureSpot | ColourSpot | AnySpot | TotalSpot, Field(discriminator="kind")]
"""Any spot of the FPC layout (FEED §4)."""

SpotKind = Literal[
    "small",
    "big",
    "figure",
    "one_colour",
    "two_colours",
    "three_colours",
    "any_three_colour",
    "specific_triple",
    "any_triple",
    "total",
]
"""Every ``kind`` of :data:`Spot`; the keys of ``limits`` in an FPC rulebook (RULES §8 G3)."""


class FishPrawnCrabBetPlaced(BetPlaced):
    """``bet_placed`` on the Fish-Prawn-Crab layout."""

    spot: Spot


class DicePressed(FeedEvent):
    """``dice_pressed``: the shaker was pressed three times, before betting opens (art. 2 [S])."""

    TYPE: ClassVar[str] = "dice_pressed"
    type: Literal["dice_pressed"]


class DiceShown(FeedEvent):
    """``dice_shown``: the shaker was opened and the three faces read (art. 3 B) [S])."""

    TYPE: ClassVar[str] = "dice_shown"
    type: Literal["dice_shown"]
    dice: Dice


class DieCocked(FeedEvent):
    """``die_cocked``: a die is not lying flat; the result is not read (art. 3 C) [S], F2)."""

    TYPE: ClassVar[str] = "die_cocked"
    type: Literal["die_cocked"]


EVENTS: tuple[type[FeedEvent], ...] = (
    *LIFECYCLE_EVENTS,
    FishPrawnCrabBetPlaced,
    DicePressed,
    DiceShown,
    DieCocked,
)
"""Every event type an FPC feed may carry."""
