"""The round: the shared life cycle every game records (opened → bets → outcome → settled).

:class:`Round` is the event-sourced aggregate of one round (one Mah-Jong game). It only records
facts — each feed line, in ``seq`` order — and indexes them for the rules: the bets by id, the
table's settlements by bet, how the round ended. Nothing here validates or recomputes; that is
``ledger.verify``'s job, so that replaying an old round never re-runs today's rules.

Its id is derived from the natural key, so any tool can address a round without a lookup.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from decimal import Decimal
from functools import cached_property
from typing import Any, Literal, TypeVar, get_args, get_origin
from uuid import NAMESPACE_URL, UUID, uuid5

from ledger.domain.rulebook import DEFAULT_RULEBOOK, Rulebook
from ledger.feed.envelope import (
    BetIncreased,
    BetPlaced,
    BetSettled,
    CarriedBet,
    FeedEvent,
    RoundOpened,
)

E = TypeVar("E", bound=FeedEvent)


def round_id(table: str, round: str) -> UUID:
    """The aggregate id of a round: ``uuid5`` of its table code and round id."""
    return uuid5(NAMESPACE_URL, f"/ledger/tables/{table}/rounds/{round}")


_OTHER, _ENDING, _PLACED, _CARRIED, _INCREASED, _SETTLED = range(6)
_INDEX: dict[type, int] = {}
"""Which index of :meth:`Round.record` a fact class goes to: the ``isinstance`` tests of the
record, made once per class (each is an ``ABCMeta`` check on pydantic models). Every class a
round has recorded is a key, which :func:`_kinds_of` relies on."""

_ENDINGS = frozenset({"round_closed", "round_voided"})


def _index_of(cls: type) -> int:
    index = (
        _PLACED
        if issubclass(cls, BetPlaced)
        else _CARRIED
        if issubclass(cls, CarriedBet)
        else _INCREASED
        if issubclass(cls, BetIncreased)
        else _SETTLED
        if issubclass(cls, BetSettled)
        else _OTHER
        if _never_ends(cls)
        else _ENDING
    )
    _INDEX[cls] = index
    return index


def _never_ends(cls: type) -> bool:
    """Whether no fact of ``cls`` can end a round: its ``type`` is a ``Literal`` of other types
    (a class with a free ``type`` string, or none declared, is checked fact by fact)."""
    fields = getattr(cls, "model_fields", None)
    declared = fields.get("type") if isinstance(fields, dict) else None
    if declared is None or get_origin(declared.annotation) is not Literal:
        return False
    return not _ENDINGS.intersection(get_args(declared.annotation))


_KINDS: dict[type, tuple[int, tuple[type, ...]]] = {}
"""For a class :meth:`Round.of_type` is asked for: the recorded classes that are subclasses of
it, and how many classes :data:`_INDEX` knew when that was worked out (the answer stands
until a new class is recorded)."""


def _kinds_of(cls: type) -> tuple[type, ...]:
    """The classes recorded so far (by any round) whose facts are instances of ``cls``."""
    known = _KINDS.get(cls)
    if known is None or known[0] != len(_INDEX):
        known = _KINDS[cls] = (len(_INDEX), tuple(k for k in list(_INDEX) if issubclass(k, cls)))
    return known[1]


class Round:
    """One round's recorded facts, in order, with indexes the rules need."""

    def __init__(self, opened: RoundOpened) -> None:
        self._start(opened)
        self.record(opened)

    def _start(self, opened: RoundOpened) -> None:
        """Empty indexes for a round opened by ``opened`` (not recorded yet)."""
        self.version = 0
        self.opened = opened
        # What the opening fixes, kept as plain attributes: the rules read them per bet and
        # per card, and a property is a Python call per read.
        self.table: str = opened.table
        """The table code."""
        self.round: str = opened.round
        """The round id, unique per table."""
        self.game: str = opened.game
        """The game key."""
        self.rules: Rulebook = opened.rules or DEFAULT_RULEBOOK
        """The completed rulebook stored with the round (the defaults if none was stored)."""
        self.events: list[FeedEvent] = []
        self.bets: dict[str, BetPlaced] = {}
        self.duplicate_bets: list[BetPlaced] = []
        self.settlements: dict[str, list[BetSettled]] = {}
        self.carried: dict[str, CarriedBet] = {}
        """Bets restated from the table's previous round (also in :attr:`bets`)."""
        self.increases: dict[str, list[BetIncreased]] = {}
        self.ended_by: FeedEvent | None = None
        self._end_type: str | None = None
        """``ended_by.type``, kept when it is recorded (the rules ask per bet)."""
        self._groups: dict[type, list[FeedEvent]] = {}
        """The facts by class, in order, for :meth:`of_type` (kept by :meth:`record`)."""
        self._grouped = 0
        """How many of :attr:`events` :attr:`_groups` holds."""

    @cached_property
    def id(self) -> UUID:
        """The round's aggregate id (:func:`round_id`), computed when first asked for."""
        return round_id(self.opened.table, self.opened.round)

    @property
    def opened_at(self) -> datetime:
        """When the round was opened."""
        return self.opened.at

    @property
    def is_closed(self) -> bool:
        """Closed normally (``round_closed``)."""
        return self._end_type == "round_closed"

    @property
    def is_voided(self) -> bool:
        """Voided as a whole (``round_voided``)."""
        return self._end_type == "round_voided"

    def record(self, fact: FeedEvent) -> None:
        """Append one fact (the next ``seq``) and index it."""
        self._record((fact,))

    def _record(self, facts: Sequence[FeedEvent], start: int = 0) -> None:
        """Append ``facts[start:]`` (in ``seq`` order) and index them.

        The one loop of :meth:`record` and :meth:`replay`, run once per fact of every round
        verify judges: locals instead of attribute walks, one class lookup per fact, and
        only the bets, raises and settlements reach a branch of their own.
        """
        new = facts[start:] if start else facts
        self.events.extend(new)
        groups, indexes = self._groups, _INDEX
        bets, settlements = self.bets, self.settlements
        fact: Any  # the index tells its class (no ``isinstance`` per fact to narrow it)
        for fact in new:
            kind = fact.__class__
            group = groups.get(kind)
            if group is not None:
                group.append(fact)
                index = indexes[kind]  # a class this round has recorded: known
            else:
                groups[kind] = [fact]
                known = indexes.get(kind)
                index = _index_of(kind) if known is None else known
            if index == _OTHER:
                continue
            if index == _ENDING:
                ending = fact.type
                if ending in _ENDINGS:
                    self.ended_by, self._end_type = fact, ending
            elif index == _PLACED:
                if fact.bet in bets:
                    self.duplicate_bets.append(fact)
                else:
                    bets[fact.bet] = fact
            elif index == _SETTLED:
                settled = settlements.get(fact.bet)
                if settled is None:
                    settlements[fact.bet] = [fact]
                else:
                    settled.append(fact)
            elif index == _CARRIED:
                if fact.bet in bets:
                    self.duplicate_bets.append(fact.as_bet())
                else:
                    self.carried[fact.bet] = fact
                    bets[fact.bet] = fact.as_bet()
            else:
                self.increases.setdefault(fact.bet, []).append(fact)
        if new:
            self.version = new[-1].seq
        self._grouped = len(self.events)

    def stake(self, bet_id: str) -> Decimal:
        """A bet's stake in play: its amount, or the last ``bet_increased`` total (FEED §5)."""
        raised = self.increases.get(bet_id)
        return raised[-1].amount if raised else self.bets[bet_id].amount

    def of_type(self, cls: type[E]) -> Iterator[E]:
        """The facts of one event class, in order."""
        if self._grouped != len(self.events):
            self._regroup()  # facts appended to ``events`` by hand
        groups = self._groups
        kinds = _kinds_of(cls)
        if len(kinds) == 1:  # the usual case: a class of its own, no subclasses
            return iter(groups.get(kinds[0], ()))  # type: ignore[arg-type]
        matching = [group for kind in kinds if (group := groups.get(kind)) is not None]
        if len(matching) == 1:
            return iter(matching[0])  # type: ignore[arg-type]
        if not matching:
            return iter(())
        return (e for e in self.events if isinstance(e, cls))

    def _regroup(self) -> None:
        """Group :attr:`events` by class again (every class made known to :data:`_INDEX`)."""
        groups: dict[type, list[FeedEvent]] = {}
        for fact in self.events:
            kind = fact.__class__
            if kind not in _INDEX:
                _index_of(kind)
            groups.setdefault(kind, []).append(fact)
        self._groups, self._grouped = groups, len(self.events)

    def first(self, *types: str) -> FeedEvent | None:
        """The first fact whose ``type`` is one of ``types``."""
        return next((e for e in self.events if e.type in types), None)

    @classmethod
    def replay(cls, facts: list[FeedEvent]) -> Round:
        """Rebuild a round from its stored facts (the first must be ``round_opened``)."""
        first = facts[0]
        if not isinstance(first, RoundOpened):
            raise ValueError(f"a round starts with round_opened, not {first.type}")
        rnd = cls.__new__(cls)
        rnd._start(first)
        rnd._record(facts)  # the opening and the rest in one pass
        return rnd
