"""Card events shared by the card games SP9, 3CB and STUD (FEED.md §2).

``card_dealt.to`` and ``card_exposed.to`` are narrowed by each game to its own places
(a seat number, ``"banker"`` or ``"dealer"``).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, StrictBool, StrictInt, StrictStr

from ledger.domain.equipment import CardField
from ledger.feed.envelope import FeedEvent
from ledger.feed.types import Code


class DeckShuffled(FeedEvent):
    """``deck_shuffled``: a new shoe or deck (3CB art. 2, STUD art. 3, SP9 art. 2)."""

    TYPE: ClassVar[str] = "deck_shuffled"

    type: Literal["deck_shuffled"]
    decks: StrictInt = Field(ge=1, le=8)
    method: Literal["hand", "machine"]
    deck: Code | None = None
    cut: StrictInt | None = Field(default=None, ge=0, le=416)
    cut_by: Code | None = None
    marker_from_end: StrictInt | None = Field(default=None, ge=0, le=416)


class CardBurned(FeedEvent):
    """``card_burned``: one burned card, its face given when the device read it."""

    TYPE: ClassVar[str] = "card_burned"

    type: Literal["card_burned"]
    card: CardField | None = None


class CardDealt(FeedEvent):
    """``card_dealt``: one card to one place, in the order dealt."""

    TYPE: ClassVar[str] = "card_dealt"

    type: Literal["card_dealt"]
    to: StrictInt | StrictStr
    card: CardField
    face_up: StrictBool


class CardExposed(FeedEvent):
    """``card_exposed``: a card turned face up by accident (SP9 art. 4, STUD art. 11)."""

    TYPE: ClassVar[str] = "card_exposed"

    type: Literal["card_exposed"]
    to: StrictInt | StrictStr
    card: CardField


CARD_EVENTS: tuple[type[FeedEvent], ...] = (DeckShuffled, CardBurned, CardDealt, CardExposed)
