"""The feed's envelope and the events common to all games (FEED.md §1–§2).

Every feed line is one :class:`FeedEvent`: the envelope keys plus the fields of its ``type``.
Models are frozen and strict — an unknown key is an error (FEED §1: "a typo must not pass
silently"). Game folders subclass these where a game narrows a field (the bet ``spot``, the
``to`` of a dealt card) and add their own event types; ``ledger.feed.registry`` maps each
``(game, type)`` pair to its class.

The same models are the ledger's stored facts: a round's events are exactly its feed lines as
validated, plus, on ``round_opened``, the completed rulebook and its hash (``ledger.domain.rulebook``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from ledger.domain.rulebook import Rulebook
from ledger.feed.types import Code, GameKey, Money, Seq, Timestamp

Result = Literal["win", "lose", "push", "void", "carry"]
"""A bet's fate as the table reported it (FEED §2 ``bet_settled``)."""


class FeedModel(BaseModel):
    """Base of every feed model: frozen, strict about keys."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class FeedEvent(FeedModel):
    """One feed line: the envelope of FEED §1 plus a ``type``."""

    TYPE: ClassVar[str] = ""

    v: Literal[1]
    table: Code
    game: GameKey
    round: Code
    seq: Seq
    at: Timestamp
    type: str

    @property
    def key(self) -> tuple[str, str, int]:
        """``(table, round, seq)``: the identity of the line."""
        return (self.table, self.round, self.seq)

    def feed_fields(self) -> dict[str, Any]:
        """The fields as the feed sent them (derived fields left out), for duplicate checks."""
        return self.model_dump(exclude=set(self.DERIVED), exclude_none=True)

    DERIVED: ClassVar[tuple[str, ...]] = ()


class RoundOpened(FeedEvent):
    """``round_opened``: always ``seq`` 1; carries the currency and the table's rulebook."""

    TYPE: ClassVar[str] = "round_opened"
    DERIVED: ClassVar[tuple[str, ...]] = ("rules", "rules_hash")

    type: Literal["round_opened"]
    currency: Literal["MOP", "HKD"]
    rulebook: dict[str, Any] | None = None
    croupier: Code | None = None
    """Optional: who ran the table for this round (an extension of FEED v1, docs/FEED.md)."""
    # Derived at ingest, stored with the round, never sent by a table:
    rules: Rulebook | None = None
    rules_hash: str | None = None


class BetPlaced(FeedEvent):
    """``bet_placed``: a stake on a spot. Games narrow ``spot`` to their layout."""

    TYPE: ClassVar[str] = "bet_placed"

    type: Literal["bet_placed"]
    bet: Code
    spot: FeedModel
    amount: Money
    seat: StrictInt | Code | None = None
    player: Code | None = None


class CarriedBet(FeedEvent):
    """A bet restated, same id, at the start of the table's next round (3CB ``bet_carried``,
    STUD ``jackpot_carried``). The round counts it as one of its bets (:meth:`as_bet`); verify
    matches it against the ``carry`` settlement of the table's previous round."""

    bet: Code
    from_round: Code
    amount: Money

    def as_bet(self) -> BetPlaced:
        """The carried bet as a bet of this round (same id, spot and amount)."""
        raise NotImplementedError


class BetIncreased(FeedEvent):
    """``bet_increased``: a carried bet raised to the new total ``amount`` (FEED §5). A lower
    total is a game rule broken, stored and reported by verify."""

    TYPE: ClassVar[str] = "bet_increased"
    type: Literal["bet_increased"]
    bet: Code
    amount: Money


class BettingClosed(FeedEvent):
    """``betting_closed``: no new bet after this, except the STUD raise."""

    TYPE: ClassVar[str] = "betting_closed"
    type: Literal["betting_closed"]


class BetSettled(FeedEvent):
    """``bet_settled``: what the table actually did with one bet."""

    TYPE: ClassVar[str] = "bet_settled"

    type: Literal["bet_settled"]
    bet: Code
    result: Result
    returned: Money
    won: Money
    commission: Money


class RoundClosed(FeedEvent):
    """``round_closed``: the round is complete."""

    TYPE: ClassVar[str] = "round_closed"
    type: Literal["round_closed"]


class RoundVoided(FeedEvent):
    """``round_voided``: the whole round is void; each bet's fate was reported before it."""

    TYPE: ClassVar[str] = "round_voided"
    type: Literal["round_voided"]
    reason: StrictStr = Field(max_length=500)


class Irregularity(FeedEvent):
    """``irregularity``: anything inspectors should see that changes no outcome."""

    TYPE: ClassVar[str] = "irregularity"
    type: Literal["irregularity"]
    code: Code
    detail: StrictStr = Field(max_length=2000)


LIFECYCLE_EVENTS: tuple[type[FeedEvent], ...] = (
    RoundOpened,
    BetSettled,
    BettingClosed,
    RoundClosed,
    RoundVoided,
    Irregularity,
)
"""Events every game accepts; games add ``bet_placed`` with their own spot."""

TERMINAL_TYPES = frozenset({"round_closed", "round_voided"})
"""After one of these, a round accepts no more lines (FEED §9)."""
