"""Stud Poker feed events (FEED.md §7): ante, jackpot and raise spots, folds, the deal, awards.

Player places are ``1..7`` in dealing order and the house hand is ``"dealer"`` (FEED §1). The
raise is a ``bet_placed`` after the deal — the only bet allowed after betting closes (FEED §10);
:func:`is_raise` tells verify so.

Only the shape of each line is checked here. A raise that is not twice the ante, a jackpot bet
without an ante or a wrong award are game rules: such lines are stored and reported by verify
(FEED §2, "the game rules versus the feed"). The jackpot pool is never sent; the ledger derives
it (FEED §7).
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from ledger.feed.cards import CardBurned, CardDealt, CardExposed, DeckShuffled
from ledger.feed.envelope import LIFECYCLE_EVENTS, BetPlaced, CarriedBet, FeedEvent, FeedModel
from ledger.feed.types import Code, Money, PlaceSeat, place_or

Place = Annotated[int | Literal["dealer"], place_or("dealer")]
"""Where a STUD card goes: a player place ``1..7`` or ``"dealer"`` (FEED §7)."""

JackpotHand = Literal["royal_flush", "straight_flush", "four_of_a_kind", "full_house", "flush"]
"""The hands the progressive jackpot pays (FEED §7, STUD art. 10(2))."""


class AnteSpot(FeedModel):
    """The ante every participating hand must place (STUD art. 6(2))."""

    kind: Literal["ante"]
    seat: PlaceSeat


class JackpotSpot(FeedModel):
    """The progressive jackpot bet, only with an ante and before the first card
    (STUD art. 6(3), 10(1))."""

    kind: Literal["jackpot"]
    seat: PlaceSeat


class RaiseSpot(FeedModel):
    """The additional bet after the deal, twice the ante (STUD art. 6(5)–(7))."""

    kind: Literal["raise"]
    seat: PlaceSeat


StudSpot = Annotated[AnteSpot | JackpotSpot | RaiseSpot, Field(discriminator="kind")]
"""A STUD bet spot (FEED §7), told apart by ``kind``."""


class StudBetPlaced(BetPlaced):
    """``bet_placed`` on a STUD place: ante, jackpot or raise (FEED §7)."""

    spot: StudSpot


def is_raise(bet: BetPlaced) -> bool:
    """Whether ``bet`` is a raise: the only bet allowed after betting closes (FEED §7, §10)."""
    return isinstance(bet.spot, RaiseSpot)


class HandFolded(FeedEvent):
    """``hand_folded``: the player folds; the croupier takes the cards and the ante (FEED §7,
    STUD art. 6(5)–(7))."""

    TYPE: ClassVar[str] = "hand_folded"
    type: Literal["hand_folded"]
    seat: PlaceSeat


class StudCardDealt(CardDealt):
    """``card_dealt`` to a place or the dealer (FEED §7, STUD art. 7): the dealer last in each
    pass (shoe) or after all places (shuffler), his fifth card face up."""

    to: Place


class StudCardExposed(CardExposed):
    """``card_exposed``: a card shown by mistake during the deal (FEED §2, STUD art. 11(1)–(2))."""

    to: Place


class JackpotPaid(FeedEvent):
    """``jackpot_paid``: a jackpot award to one bet for its player's ``hand`` (FEED §7,
    STUD art. 10). The bet's own ``bet_settled`` repeats the award as ``won``."""

    TYPE: ClassVar[str] = "jackpot_paid"
    type: Literal["jackpot_paid"]
    bet: Code
    hand: JackpotHand
    amount: Money


class JackpotCarried(CarriedBet):
    """``jackpot_carried``: a jackpot bet carried, same id, from a void round (FEED §7,
    STUD art. 11(1), 11(4))."""

    TYPE: ClassVar[str] = "jackpot_carried"
    type: Literal["jackpot_carried"]
    seat: PlaceSeat

    def as_bet(self) -> StudBetPlaced:
        """The carried jackpot bet as a bet of this round."""
        return StudBetPlaced.model_construct(
            v=1,
            table=self.table,
            game=self.game,
            round=self.round,
            seq=self.seq,
            at=self.at,
            type="bet_placed",
            bet=self.bet,
            spot=JackpotSpot(kind="jackpot", seat=self.seat),
            amount=self.amount,
            seat=self.seat,
        )


EVENTS: tuple[type[FeedEvent], ...] = (
    *LIFECYCLE_EVENTS,
    StudBetPlaced,
    HandFolded,
    DeckShuffled,
    CardBurned,
    StudCardDealt,
    StudCardExposed,
    JackpotPaid,
    JackpotCarried,
)
"""Every event type of a STUD feed (FEED §2, §7)."""
