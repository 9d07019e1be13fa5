"""The round: the shared life cycle every game records (opened → bets → outcome → settled).

:class:`Round` is the event-sourced aggregate of one round (one Mah-Jong game). It only records
facts — each feed line, in ``seq`` order — and indexes them for the rules: the bets by id, the
table's settlements by bet, how the round ended. Nothing here validates or recomputes; that is
``ledger.verify``'s job, so that replaying an old round never re-runs today's rules.

Its id is derived from the natural key, so any tool can address a round without a lookup.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from functools import cached_property
from typing import TypeVar
from uuid import NAMESPACE_URL, UUID, uuid5

from ledger.feed.envelope import (
    BetIncreased,
    BetPlaced,
    BetSettled,
    CarriedBet,
    FeedEvent,
    RoundOpened,
)
from ledger.rulebook import DEFAULT_RULEBOOK, Rulebook

E = TypeVar("E", bound=FeedEvent)


def round_id(table: str, round: str) -> UUID:
    """The aggregate id of a round: ``uuid5`` of its table code and round id."""
    return uuid5(NAMESPACE_URL, f"/ledger/tables/{table}/rounds/{round}")


_OTHER, _PLACED, _CARRIED, _INCREASED, _SETTLED = range(5)
_INDEX: dict[type, int] = {}
"""Which index of :meth:`Round.record` a fact class goes to: the ``isinstance`` tests of the
record, made once per class (each is an ``ABCMeta`` check on pydantic models)."""


def _index_of(cls: type) -> int:
    index = (_PLACED if issubclass(cls, BetPlaced) else _CARRIED if issubclass(cls, CarriedBet)
             else _INCREASED if issubclass(cls, BetIncreased)
             else _SETTLED if issubclass(cls, BetSettled) else _OTHER)
    _INDEX[cls] = index
    return index


_SUBCLASS: dict[tuple[type, type], bool] = {}


def _is_subclass(kind: type, cls: type) -> bool:
    """``issubclass``, remembered (an ``ABCMeta`` check on pydantic models)."""
    known = _SUBCLASS.get((kind, cls))
    if known is None:
        known = _SUBCLASS[(kind, cls)] = issubclass(kind, cls)
    return known


class Round:
    """One round's recorded facts, in order, with indexes the rules need."""

    def __init__(self, opened: RoundOpened) -> None:
        self.version = 0
        self.opened = opened
        self.events: list[FeedEvent] = []
        self.bets: dict[str, BetPlaced] = {}
        self.duplicate_bets: list[BetPlaced] = []
        self.settlements: dict[str, list[BetSettled]] = {}
        self.carried: dict[str, CarriedBet] = {}
        """Bets restated from the table's previous round (also in :attr:`bets`)."""
        self.increases: dict[str, list[BetIncreased]] = {}
        self.ended_by: FeedEvent | None = None
        self._groups: dict[type, list[FeedEvent]] | None = None
        """The facts by class, for :meth:`of_type` (built when first asked for)."""
        self._grouped = 0
        self.record(opened)

    @cached_property
    def id(self) -> UUID:
        """The round's aggregate id (:func:`round_id`), computed when first asked for."""
        return round_id(self.opened.table, self.opened.round)

    @property
    def table(self) -> str:
        """The table code."""
        return self.opened.table

    @property
    def round(self) -> str:
        """The round id, unique per table."""
        return self.opened.round

    @property
    def game(self) -> str:
        """The game key."""
        return self.opened.game

    @property
    def rules(self) -> Rulebook:
        """The completed rulebook stored with the round (the defaults if none was stored)."""
        return self.opened.rules or DEFAULT_RULEBOOK

    @property
    def opened_at(self) -> datetime:
        """When the round was opened."""
        return self.opened.at

    @property
    def is_closed(self) -> bool:
        """Closed normally (``round_closed``)."""
        return self.ended_by is not None and self.ended_by.type == "round_closed"

    @property
    def is_voided(self) -> bool:
        """Voided as a whole (``round_voided``)."""
        return self.ended_by is not None and self.ended_by.type == "round_voided"

    def record(self, fact: FeedEvent) -> None:
        """Append one fact (the next ``seq``) and index it."""
        self.events.append(fact)
        self.version = fact.seq
        index = _INDEX.get(fact.__class__)
        if index is None:
            index = _index_of(fact.__class__)
        if index == _OTHER:
            if fact.type in ("round_closed", "round_voided"):
                self.ended_by = fact
        elif index == _PLACED:
            assert isinstance(fact, BetPlaced)
            if fact.bet in self.bets:
                self.duplicate_bets.append(fact)
            else:
                self.bets[fact.bet] = fact
        elif index == _SETTLED:
            assert isinstance(fact, BetSettled)
            self.settlements.setdefault(fact.bet, []).append(fact)
        elif index == _CARRIED:
            assert isinstance(fact, CarriedBet)
            if fact.bet in self.bets:
                self.duplicate_bets.append(fact.as_bet())
            else:
                self.carried[fact.bet] = fact
                self.bets[fact.bet] = fact.as_bet()
        else:
            assert isinstance(fact, BetIncreased)
            self.increases.setdefault(fact.bet, []).append(fact)

    def stake(self, bet_id: str) -> Decimal:
        """A bet's stake in play: its amount, or the last ``bet_increased`` total (FEED §5)."""
        raised = self.increases.get(bet_id)
        return raised[-1].amount if raised else self.bets[bet_id].amount

    def of_type(self, cls: type[E]) -> Iterator[E]:
        """The facts of one event class, in order."""
        groups = self._groups
        if groups is None or self._grouped != len(self.events):
            groups = self._groups = {}
            for e in self.events:
                group = groups.get(e.__class__)
                if group is None:
                    groups[e.__class__] = [e]
                else:
                    group.append(e)
            self._grouped = len(self.events)
        matching = [group for kind, group in groups.items() if _is_subclass(kind, cls)]
        if len(matching) == 1:
            return iter(matching[0])  # type: ignore[arg-type]
        if not matching:
            return iter(())
        return (e for e in self.events if isinstance(e, cls))

    def first(self, *types: str) -> FeedEvent | None:
        """The first fact whose ``type`` is one of ``types``."""
        return next((e for e in self.events if e.type in types), None)

    @classmethod
    def replay(cls, facts: list[FeedEvent]) -> Round:
        """Rebuild a round from its stored facts (the first must be ``round_opened``)."""
        first = facts[0]
        if not isinstance(first, RoundOpened):
            raise ValueError(f"a round starts with round_opened, not {first.type}")
        rnd = cls(first)
        for fact in facts[1:]:
            rnd.record(fact)
        return rnd
