"""Reading the log as rounds: stored rows → (position, decoded facts) → closed rounds.

:class:`RoundStream` takes the rows of :meth:`ledger.store.LedgerApp.rows` (plain tuples, in
notification order), decodes the feed facts with the fast decoder (:data:`KINDS`: each model's
own ``model_validate_json``; ``OpeningDecoder`` for ``round_opened``), gathers them per round
and hands over each round when its closing event (``round_closed`` / ``round_voided``) is read.
Rows of other aggregates (tables, the chain) are passed over.

``ledger verify`` reads the same rows with the same decoder table (:data:`KINDS`) in its own
loop, because it also checks the chain of every row and pairs openings with table starts; the
views (``projections.base.closed_rounds``) read through :class:`RoundStream`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ledger.chain import CHAIN_TOPIC, FrameError
from ledger.feed.envelope import TERMINAL_TYPES, FeedEvent, RoundOpened
from ledger.feed.fast import fast_validate_json
from ledger.openings import OpeningDecoder
from ledger.store import TOPICS, LedgerMapper, RawRow
from ledger.table import TABLE_TOPIC

TERMINAL_SUFFIXES = tuple("/" + t for t in TERMINAL_TYPES)
OPENING_SUFFIX = "/round_opened"

Kind = tuple[Callable[[bytes], Any], type, bool]
"""A feed topic's decoder, its class, and whether its event ends a round."""


def _kinds() -> dict[str, Kind]:
    """Every feed topic but the openings: its decoder, its class, whether it ends a round.

    The decoder is the model's native twin (``ledger.feed.fast``): the same model, its feed
    field types checked in Rust; it accepts what ``model_validate_json`` accepts, with equal
    results, and a row it refuses is decoded again by ``model_validate_json`` (its error is
    what is reported).
    """
    kinds: dict[str, Kind] = {}
    for topic, cls in TOPICS.items():
        if (topic in (TABLE_TOPIC, CHAIN_TOPIC) or topic.endswith(OPENING_SUFFIX)
                or not issubclass(cls, FeedEvent) or issubclass(cls, RoundOpened)):
            continue
        kinds[topic] = (fast_validate_json(cls), cls, topic.endswith(TERMINAL_SUFFIXES))
    return kinds


KINDS = _kinds()
"""The fast decoder of every feed topic but ``round_opened``, by topic."""


@dataclass(frozen=True)
class ClosedRound:
    """A round whose closing event was read at ``position``. ``complete`` is false when the
    round opened before the rows began, so ``facts`` holds only what the rows carried."""

    position: int
    aggregate: str
    """The round's aggregate id, as ``UUID.hex``."""
    facts: list[FeedEvent]
    complete: bool


Unreadable = Callable[[int, str, int, str, Exception], None]
"""Told of a row that cannot be opened or decoded: (position, aggregate, version, topic, why)."""


def _skip(position: int, aggregate: str, version: int, topic: str, why: Exception) -> None:
    """The default: pass over it (``ledger verify`` is the one place that reports damage)."""


class RoundStream:
    """Rows of the log, oldest first, gathered into rounds (see the module docstring)."""

    def __init__(self, mapper: LedgerMapper, *, on_unreadable: Unreadable = _skip) -> None:
        self.mapper = mapper
        self.on_unreadable = on_unreadable
        self.decoder = OpeningDecoder()
        self.gathering: dict[str, list[FeedEvent]] = {}
        """Facts of the rounds in play, by aggregate id."""
        self.position = 0
        """The notification id of the last row read."""
        self.opened = 0
        """Rows opened (decrypted and unframed) so far."""

    def closed(self, rows: Iterable[RawRow]) -> Iterator[ClosedRound]:
        """Each round closed within ``rows``, when its closing row is read."""
        gathering = self.gathering
        kinds = KINDS
        for nid, oid, version, topic, state in rows:
            self.position = nid
            if topic == CHAIN_TOPIC or topic not in TOPICS:
                continue
            kind = kinds.get(topic)
            if kind is None and (topic == TABLE_TOPIC or not topic.endswith(OPENING_SUFFIX)):
                self._content(nid, oid, version, topic, state)  # readable? (a key problem)
                continue
            content = self._content(nid, oid, version, topic, state)
            if content is None:
                continue
            try:
                if kind is None:
                    fact = self.decoder.decode(TOPICS[topic], content)
                    gathering[oid] = [fact]
                    continue
                fact = kind[0](content)
            except (ValidationError, ValueError) as exc:
                self.on_unreadable(nid, oid, version, topic, exc)
                continue
            facts = gathering.get(oid)
            if facts is not None:
                facts.append(fact)
            if kind[2]:
                gathering.pop(oid, None)
                if facts is not None and facts[0].seq == 1:
                    yield ClosedRound(nid, oid, facts, True)
                else:
                    yield ClosedRound(nid, oid, facts or [fact], False)

    def _content(self, nid: int, oid: str, version: int, topic: str,
                 state: bytes) -> bytes | None:
        try:
            content = self.mapper.open_state(state)[1]
        except FrameError as exc:
            self.on_unreadable(nid, oid, version, topic, exc)
            return None
        self.opened += 1
        return content
