"""Super Pan 9 feed events (FEED.md §6): the bank, the dice, the bets on seats and the deal.

Seats are the player places ``1..N``, numbered counter-clockwise (FEED §1); the banker holds one
of them. A bank layer is named by a *party*: ``"banker"`` (the seat holding the bank),
``"casino"`` or ``"seat:N"`` (a player co-banker, FEED §6 ``bank_joined``).

Only the shape of each line is checked here. Whether a bet may stand on a seat, whether the bank
may be held a third time or whether a layer's result is right are game rules: such lines are
stored and reported by verify (FEED §2, "the game rules versus the feed").
"""

from __future__ import annotations

import re
from typing import Annotated, ClassVar, Literal

from pydantic import AfterValidator, Field, StrictBool, StrictInt, StrictStr, field_validator
from pydantic_core import PydanticCustomError

from ledger.feed.cards import CardBurned, CardDealt, CardExposed, DeckShuffled
from ledger.feed.envelope import LIFECYCLE_EVENTS, BetPlaced, FeedEvent, FeedModel
from ledger.feed.types import Die, Money, SignedMoney, SP9Seat

_SEAT = r"seat:(?:[1-9]|1[0-9]|2[0-6])"
_JOINING_PARTY = re.compile(rf"casino|{_SEAT}")
_LAYER_PARTY = re.compile(rf"banker|casino|{_SEAT}")


def _party_check(pattern: re.Pattern[str], expected: str) -> AfterValidator:
    def check(value: str) -> str:
        if not pattern.fullmatch(value):
            raise PydanticCustomError(
                "invalid_value",
                "expected {expected}, got {value}",
                {"expected": expected, "value": repr(value)},
            )
        return value

    return AfterValidator(check)


JoiningParty = Annotated[StrictStr, _party_check(_JOINING_PARTY, '"casino" or "seat:N" with N from 1 to 26')]
"""Who joins the bank (FEED §6 ``bank_joined``): ``"casino"`` or ``"seat:N"``."""

LayerParty = Annotated[
    StrictStr,
    _party_check(_LAYER_PARTY, '"banker", "casino" or "seat:N" with N from 1 to 26'),
]
"""A bank layer (FEED §6 ``bank_settled``): ``"banker"``, ``"casino"`` or ``"seat:N"``."""


def party_seat(party: str) -> int | None:
    """The seat number of a ``"seat:N"`` party; ``None`` for ``"banker"`` and ``"casino"``.

    >>> party_seat("seat:12"), party_seat("casino")
    (12, None)
    """
    return int(party[5:]) if party.startswith("seat:") else None


class HandSpot(FeedModel):
    """The only SP9 spot: a player seat's hand against the bank (FEED §6, SP9 art. 3(2))."""

    kind: Literal["hand"]
    seat: SP9Seat


class SuperPan9BetPlaced(BetPlaced):
    """``bet_placed`` on a player seat (FEED §6). A bet on the banker's seat is stored and
    reported by verify (RULES §8.1 S15), not rejected."""

    spot: HandSpot


class BankTaken(FeedEvent):
    """``bank_taken``: a seat holds the bank this round with the whole ``capital`` it posted
    (carried winnings plus any top-up; FEED §6, SP9 art. 5(1), 5(3))."""

    TYPE: ClassVar[str] = "bank_taken"
    type: Literal["bank_taken"]
    seat: SP9Seat
    capital: Money


class BankRefused(FeedEvent):
    """``bank_refused``: the seat whose turn it was passes the bank (FEED §6, SP9 art. 5(2))."""

    TYPE: ClassVar[str] = "bank_refused"
    type: Literal["bank_refused"]
    seat: SP9Seat


class BankExtended(FeedEvent):
    """``bank_extended``: the other seats consent to a third or later round of the same banker
    (FEED §6, SP9 art. 5(1), RULES §8.1 S12)."""

    TYPE: ClassVar[str] = "bank_extended"
    type: Literal["bank_extended"]
    consents: tuple[SP9Seat, ...] = Field(min_length=1, max_length=25)

    @field_validator("consents")
    @classmethod
    def _distinct(cls, consents: tuple[int, ...]) -> tuple[int, ...]:
        if len(set(consents)) != len(consents):
            raise PydanticCustomError(
                "invalid_value",
                "each consenting seat is listed once, got {consents}",
                {"consents": list(consents)},
            )
        return consents


class BankJoined(FeedEvent):
    """``bank_joined``: the casino or a player co-banks with ``capital`` (FEED §6, SP9 art. 5(5)).

    Player co-bankers settle in the order of these lines, the casino layer always last wherever
    its line stands.
    """

    TYPE: ClassVar[str] = "bank_joined"
    type: Literal["bank_joined"]
    party: JoiningParty
    capital: Money


class DiceAdjustmentDeclared(FeedEvent):
    """``dice_adjustment_declared``: the banker's signed ``points`` added to the dice total,
    declared before the throw (FEED §6, SP9 art. 2(3), RULES §8.1 S4)."""

    TYPE: ClassVar[str] = "dice_adjustment_declared"
    type: Literal["dice_adjustment_declared"]
    points: StrictInt = Field(ge=-1000, le=1000)


class SuperPan9DiceThrown(FeedEvent):
    """``dice_thrown``: the four dice (FEED §6, SP9 art. 2(2)). ``valid: false`` — a die cocked
    or out of the cup — means a rethrow follows (art. 2(4)). The first throw closes betting."""

    TYPE: ClassVar[str] = "dice_thrown"
    type: Literal["dice_thrown"]
    dice: tuple[Die, ...] = Field(min_length=4, max_length=4)
    valid: StrictBool


class SuperPan9CardDealt(CardDealt):
    """``card_dealt`` to a seat number (FEED §6); the banker's seat is dealt in its turn."""

    to: SP9Seat


class SuperPan9CardExposed(CardExposed):
    """``card_exposed`` at a seat: it stays valid, recorded for audit only (SP9 art. 4)."""

    to: SP9Seat


class BankSettled(FeedEvent):
    """``bank_settled``: one bank layer's share of the bank's result before commission, signed,
    and the commission it paid (FEED §6, RULES §1.6–1.7)."""

    TYPE: ClassVar[str] = "bank_settled"
    type: Literal["bank_settled"]
    party: LayerParty
    result: SignedMoney
    commission: Money


EVENTS: tuple[type[FeedEvent], ...] = (
    *LIFECYCLE_EVENTS,
    SuperPan9BetPlaced,
    BankTaken,
    BankRefused,
    BankExtended,
    BankJoined,
    DiceAdjustmentDeclared,
    SuperPan9DiceThrown,
    DeckShuffled,
    CardBurned,
    SuperPan9CardDealt,
    SuperPan9CardExposed,
    BankSettled,
)
"""Every event type of an SP9 feed (FEED §2, §6)."""
