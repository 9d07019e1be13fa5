"""3-Card Baccarat feed events (FEED.md §5): the spots, the deal, the shoe and carried bets.

Player places are ``1..7`` in dealing order and the house hand is ``"banker"`` (FEED §1). Every
place in use is dealt, with or without a bet (RULES §8.3 B5).

Only the shape of each line is checked here. A tie bet without a main bet, a card dealt out of
order or a card seen more than ``decks`` times in a shoe are game rules: such lines are stored and
reported by verify (FEED §2, "the game rules versus the feed").
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, StrictInt, StrictStr

from ledger.domain.equipment import CardField
from ledger.feed.cards import CardBurned, CardDealt, CardExposed, DeckShuffled
from ledger.feed.envelope import (
    LIFECYCLE_EVENTS,
    BetIncreased,
    BetPlaced,
    CarriedBet,
    FeedEvent,
    FeedModel,
)
from ledger.feed.types import PlaceSeat, place_or

Place = Annotated[int | Literal["banker"], place_or("banker")]
"""Where a 3CB card goes: a player place ``1..7`` or ``"banker"`` (FEED §5)."""


class HandSpot(FeedModel):
    """The main bet: a place's hand against the banker (3CB art. 6)."""

    kind: Literal["hand"]
    seat: PlaceSeat


class TieSpot(FeedModel):
    """A tie between a place's hand and the banker (3CB art. 8(3))."""

    kind: Literal["tie"]
    seat: PlaceSeat


class ParitySpot(FeedModel):
    """The banker's points odd or even (3CB art. 8(1))."""

    kind: Literal["odd", "even"]


class ThreeFiguresSpot(FeedModel):
    """The banker holds three figures (3CB art. 8(2)(a), RULES §8.3 B8)."""

    kind: Literal["three_figures"]


class PointsSpot(FeedModel):
    """The banker's points, 0–9 (3CB art. 8(2)(b))."""

    kind: Literal["points"]
    points: Annotated[StrictInt, Field(ge=0, le=9)]


ThreeCardSpot = Annotated[
    HandSpot | TieSpot | ParitySpot | ThreeFiguresSpot | PointsSpot, Field(discriminator="kind")
]
"""A 3CB bet spot (FEED §5), told apart by ``kind``."""


class ThreeCardBetPlaced(BetPlaced):
    """``bet_placed`` on the 3CB layout (FEED §5)."""

    spot: ThreeCardSpot


class ThreeCardCardDealt(CardDealt):
    """``card_dealt`` to a place or the banker, one card at a time (FEED §5, 3CB art. 2(2))."""

    to: Place


class ThreeCardCardExposed(CardExposed):
    """``card_exposed`` at a place or the banker's hand (FEED §2)."""

    to: Place


class ShoeClosed(FeedEvent):
    """``shoe_closed``: the shoe or deck ends and is reshuffled or replaced (FEED §5,
    3CB art. 3, RULES §3.3)."""

    TYPE: ClassVar[str] = "shoe_closed"
    type: Literal["shoe_closed"]
    reason: StrictStr = Field(max_length=500)


class DealCorrected(FeedEvent):
    """``deal_corrected``: a misdealt card given to the hand it should have gone to (FEED §5,
    3CB art. 2(4), RULES §3.8)."""

    TYPE: ClassVar[str] = "deal_corrected"
    type: Literal["deal_corrected"]
    card: CardField
    to: Place


class CardsCancelled(FeedEvent):
    """``cards_cancelled``: every card of the round is cancelled; a new deal follows and the bets
    stand (FEED §5, RULES §8.3 B4)."""

    TYPE: ClassVar[str] = "cards_cancelled"
    type: Literal["cards_cancelled"]


class BetCarried(CarriedBet):
    """``bet_carried``: a bet settled ``carry`` in ``from_round`` restated, same id, at the start
    of the table's next round (FEED §5, 3CB art. 7(2), RULES §3.7)."""

    TYPE: ClassVar[str] = "bet_carried"
    type: Literal["bet_carried"]
    spot: ThreeCardSpot

    def as_bet(self) -> ThreeCardBetPlaced:
        """The carried bet as a bet of this round."""
        return ThreeCardBetPlaced.model_construct(
            v=1,
            table=self.table,
            game=self.game,
            round=self.round,
            seq=self.seq,
            at=self.at,
            type="bet_placed",
            bet=self.bet,
            spot=self.spot,
            amount=self.amount,
        )


EVENTS: tuple[type[FeedEvent], ...] = (
    *LIFECYCLE_EVENTS,
    ThreeCardBetPlaced,
    DeckShuffled,
    CardBurned,
    ThreeCardCardDealt,
    ThreeCardCardExposed,
    ShoeClosed,
    DealCorrected,
    CardsCancelled,
    BetCarried,
    BetIncreased,
)
"""Every event type of a 3CB feed (FEED §2, §5)."""
