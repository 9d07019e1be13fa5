"""Roulette feed events (FEED.md §3): the bet spots and the spin.

A spot of a known kind is accepted here whatever numbers it names; whether those numbers are a
real split, street or corner of the layout is a *game* rule, checked by verify (``invalid_bet``),
because the table did take the bet (FEED §3).
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, StrictInt, StrictStr

from ledger.feed.envelope import LIFECYCLE_EVENTS, BetPlaced, FeedEvent, FeedModel

Pocket = Annotated[StrictInt, Field(ge=0, le=36)]

NumbersKind = Literal["straight", "split", "street", "corner", "line", "nine", "twelve"]
OutsideKind = Literal["red", "black", "even", "odd", "low", "high"]


class NumbersSpot(FeedModel):
    """An inside bet (or a sector) naming the numbers it covers."""

    kind: NumbersKind
    numbers: tuple[Pocket, ...] = Field(min_length=1, max_length=12)


class GroupSpot(FeedModel):
    """A column or a dozen, 1–3."""

    kind: Literal["column", "dozen"]
    which: Literal[1, 2, 3]


class OutsideSpot(FeedModel):
    """An even-money bet."""

    kind: OutsideKind


class RouletteBetPlaced(BetPlaced):
    """``bet_placed`` on the roulette layout."""

    spot: Annotated[NumbersSpot | GroupSpot | OutsideSpot, Field(discriminator="kind")]


class SpinResult(FeedEvent):
    """``spin_result``: the pocket the ball came to rest in."""

    TYPE: ClassVar[str] = "spin_result"
    type: Literal["spin_result"]
    number: Pocket


class SpinVoided(FeedEvent):
    """``spin_voided``: «golpe nulo» — bets stand, the ball is launched again (RULES §5.6)."""

    TYPE: ClassVar[str] = "spin_voided"
    type: Literal["spin_voided"]
    reason: StrictStr = Field(max_length=500)


EVENTS: tuple[type[FeedEvent], ...] = (*LIFECYCLE_EVENTS, RouletteBetPlaced, SpinResult, SpinVoided)
