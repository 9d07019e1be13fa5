"""Reading the log as rounds: stored rows → (position, decoded facts) → closed rounds.

:class:`RoundStream` takes the rows of :meth:`ledger.store.LedgerApp.rows` (plain tuples, in
notification order), decodes the feed facts with the fast decoder (:func:`all_kinds`: each model's
native twin, ``ledger.feed.fast``; ``OpeningDecoder`` for ``round_opened``), gathers them per round
and hands over each round when its closing event (``round_closed`` / ``round_voided``) is read.
Rows of other aggregates (tables, the chain) are passed over.

Every reader of the log that gathers rounds reads through it: ``ledger verify`` (which taps
every row for the integrity chain and pairs openings with table starts,
``ledger.verify.engine``), and through verify ``ledger replay`` and ``ledger recall``; the views,
the day report and surveillance (``projections.base.closed_rounds``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ledger.chain import CHAIN_TOPIC, FrameError
from ledger.feed.envelope import TERMINAL_TYPES, FeedEvent, RoundOpened
from ledger.feed.fast import fast_validate_json, native_validate_json
from ledger.games import GAMES
from ledger.openings import OpeningDecoder
from ledger.store import TOPICS, LedgerMapper, RawRow
from ledger.table import TABLE_TOPIC

TERMINAL_SUFFIXES = tuple("/" + t for t in TERMINAL_TYPES)
OPENING_SUFFIX = "/round_opened"

Kind = tuple[Callable[[bytes], Any], type, bool]
"""A feed topic's decoder, its class, and whether its event ends a round."""


PassKind = tuple[Callable[[bytes], Any], type, bool, Callable[[bytes], Any]]
"""A :data:`Kind` with its decoder's native validator alone, which the pass calls directly (one
Python call less per row); only what it refuses goes through the decoder."""

_KINDS: dict[str, Kind] = {}
"""The fast decoder of every feed topic but ``round_opened``, by topic, of the games loaded so
far (:func:`_load_kinds`)."""
_PASS_KINDS: dict[str, PassKind] = {}
""":data:`_KINDS` as the pass reads them (:data:`PassKind`)."""
_KINDS_LOADED: set[str] = set()
"""The games whose topics are in :data:`_KINDS`."""


def _load_kinds(topic: str) -> bool:
    """Add the kinds of the game ``topic`` belongs to, if not yet there: whether any were added.

    Each feed topic but the openings gets its decoder, its class, whether it ends a round. The
    decoder is the model's native twin (``ledger.feed.fast``): the same model, its feed field
    types checked in Rust; it accepts what ``model_validate_json`` accepts, with equal results,
    and a row it refuses is decoded again by ``model_validate_json`` (its error is what is
    reported). A game's models are built on the first row of that game the process reads, so a
    pass over a store without STUD rounds never imports STUD.
    """
    key = topic.partition("/")[0]
    if key in _KINDS_LOADED or key not in GAMES:
        return False
    _KINDS_LOADED.add(key)
    for cls in GAMES[key].events:
        name = f"{key}/{cls.TYPE}"
        if name.endswith(OPENING_SUFFIX) or not issubclass(cls, FeedEvent) or issubclass(cls, RoundOpened):
            continue
        decode = fast_validate_json(cls)
        ends = name.endswith(TERMINAL_SUFFIXES)
        _KINDS[name] = (decode, cls, ends)
        _PASS_KINDS[name] = (decode, cls, ends, native_validate_json(cls))
    return True


def _kind(topic: str) -> Kind | None:
    """The kind of ``topic``, its game's kinds loaded first if need be (``None``: not a kind)."""
    kind = _KINDS.get(topic)
    if kind is None and _load_kinds(topic):
        kind = _KINDS.get(topic)
    return kind


def all_kinds() -> dict[str, Kind]:
    """The fast decoder of every feed topic of every game but ``round_opened``, by topic (every
    game loaded)."""
    for key in GAMES:
        _load_kinds(f"{key}/")
    return dict(_KINDS)


def __getattr__(name: str) -> Any:
    """``KINDS``: :func:`all_kinds`, for readers that want them all (PEP 562: loading every game
    only when asked)."""
    if name == "KINDS":
        return all_kinds()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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

Check = Callable[[str, int, str, bytes], "bytes | None"]
"""A tap every row passes through first (``ledger verify``'s chain check): given (aggregate,
version, topic, stored state), the row's content, or ``None`` to pass the row over."""


def _skip(position: int, aggregate: str, version: int, topic: str, why: Exception) -> None:
    """The default: pass over it (``ledger verify`` is the one place that reports damage)."""


class RoundStream:
    """Rows of the log, oldest first, gathered into rounds (see the module docstring).

    The one reader of the log. Its parts that differ between readers are small methods a reader
    overrides (:meth:`admit`, :meth:`opened`, :meth:`started`), and one tap:

    - ``check``, if given, sees every row first, also the chain's and those of unknown topics
      (``ledger verify`` checks the integrity chain there), and gives the row's content;
    - ``partial`` (the views' default) also hands over rounds whose opening was not among the
      rows (``complete`` false), so a reader that starts mid-log sees every round close;
      without it, only rounds whose opening was read (and :meth:`opened` accepted) are
      gathered, and rows of other rounds are passed over undecoded;
    - ``keep_content`` keeps the stored content of the rounds in play beside their facts
      (:attr:`contents`), so the state of a pass can be written down and resumed
      (``ledger.verify.snapshot``).
    """

    def __init__(
        self,
        mapper: LedgerMapper,
        *,
        on_unreadable: Unreadable = _skip,
        check: Check | None = None,
        partial: bool = True,
        keep_content: bool = False,
        probe: bool = True,
    ) -> None:
        self.mapper = mapper
        self.probe = probe
        """Open rows nobody needs (table starts, unknown topics) anyway, so that an unreadable
        one is told (the views' check for a missing or wrong key)."""
        self.on_unreadable = on_unreadable
        self.check = check
        self.partial = partial
        self.decoder = OpeningDecoder()
        self.gathering: dict[str, list[FeedEvent]] = {}
        """Facts of the rounds in play, by aggregate id."""
        self.contents: dict[str, list[tuple[str, bytes]]] | None = {} if keep_content else None
        """With ``keep_content``: (topic, stored content) of each fact in :attr:`gathering`."""
        self.position = 0
        """The notification id of the last row read."""
        self.opened_rows = 0
        """Rows opened (decrypted and unframed) so far."""
        self.link: tuple[int, int] | None = None
        """(notification id, version) of the last chain link row read."""

    # -- what a reader may override ---------------------------------------------------------

    def admit(self, content: bytes) -> bool:
        """Whether to decode a ``round_opened`` row at all (its stored content given)."""
        return True

    def opened(self, position: int, aggregate: str, fact: FeedEvent) -> bool:
        """A round opened; whether to gather its facts."""
        return True

    def started(self, position: int, aggregate: str, version: int, content: bytes) -> None:
        """A table's ``round_started`` row (default: nothing to do)."""

    def wants_table_rows(self, aggregate: str) -> bool:
        """Whether :meth:`started` wants the rows of this table aggregate (default: no; they
        are still opened, so that an unreadable one is told)."""
        return False

    # -- the pass ---------------------------------------------------------------------------

    def closed(self, rows: Iterable[RawRow]) -> Iterator[ClosedRound]:
        """Each round closed within ``rows``, when its closing row is read."""
        gathering = self.gathering
        contents = self.contents
        kinds = _PASS_KINDS
        check = self.check
        partial = self.partial
        for nid, oid, version, topic, state in rows:
            self.position = nid
            content: bytes | None
            if check is not None:
                content = check(oid, version, topic, state)
                if content is None:
                    continue
                if topic == CHAIN_TOPIC:
                    self.link = (nid, version)
                    continue
            elif topic == CHAIN_TOPIC:
                self.link = (nid, version)
                continue
            else:
                content = None
            kind = kinds.get(topic)
            if kind is None and _load_kinds(topic):  # the first row of a game not yet loaded
                kind = kinds.get(topic)
            if kind is not None:
                facts = gathering.get(oid)
                if facts is None and not partial:
                    continue
                if content is None:
                    content = self._content(nid, oid, version, topic, state)
                    if content is None:
                        continue
                try:
                    fact = kind[3](content)
                except ValueError:  # refused natively: the decoder gives the model's own error
                    try:
                        fact = kind[0](content)
                    except (ValidationError, ValueError) as exc:
                        self.on_unreadable(nid, oid, version, topic, exc)
                        continue
                if facts is not None:
                    facts.append(fact)
                    if contents is not None:
                        contents[oid].append((topic, content))
                if kind[2]:
                    if facts is not None:
                        del gathering[oid]
                        if contents is not None:
                            del contents[oid]
                        yield ClosedRound(nid, oid, facts, facts[0].seq == 1)
                    else:
                        yield ClosedRound(nid, oid, [fact], False)
                continue
            if topic == TABLE_TOPIC:
                wanted = self.wants_table_rows(oid)
                if content is None and (wanted or self.probe):
                    content = self._content(nid, oid, version, topic, state)
                if wanted and content is not None:
                    self.started(nid, oid, version, content)
                continue
            if not topic.endswith(OPENING_SUFFIX):
                if oid in gathering:  # an event of a round in play that no model reads
                    self.on_unreadable(nid, oid, version, topic, ValueError(f"unknown topic {topic!r}"))
                elif self.probe and check is None and topic in TOPICS:
                    self._content(nid, oid, version, topic, state)  # readable? (a key problem)
                continue
            if content is None:
                content = self._content(nid, oid, version, topic, state)
                if content is None:
                    continue
            if not self.admit(content):
                continue
            try:
                cls = TOPICS.get(topic)
                if cls is None:
                    raise ValueError(f"unknown topic {topic!r}")
                opening = self.decoder.decode(cls, content)
            except (ValidationError, ValueError) as exc:
                self.on_unreadable(nid, oid, version, topic, exc)
                continue
            if self.opened(nid, oid, opening):
                gathering[oid] = [opening]
                if contents is not None:
                    contents[oid] = [(topic, content)]

    def decode(self, topic: str, content: bytes) -> FeedEvent:
        """One stored feed fact, decoded as the pass decodes it (``ValueError`` if it cannot
        be)."""
        kind = _kind(topic)
        if kind is not None:
            fact: FeedEvent = kind[0](content)
            return fact
        cls = TOPICS.get(topic)
        if cls is None or not topic.endswith(OPENING_SUFFIX):
            raise ValueError(f"unknown topic {topic!r}")
        opening: FeedEvent = self.decoder.decode(cls, content)
        return opening

    def resume(self, rounds: dict[str, list[tuple[str, bytes]]]) -> None:
        """Take up the rounds in play of an earlier pass: each aggregate's (topic, stored
        content), oldest first (what :attr:`contents` held)."""
        for oid, stored in rounds.items():
            self.gathering[oid] = [self.decode(topic, content) for topic, content in stored]
            if self.contents is not None:
                self.contents[oid] = list(stored)

    def _content(self, nid: int, oid: str, version: int, topic: str, state: bytes) -> bytes | None:
        try:
            content = self.mapper.open_state(state)[1]
        except FrameError as exc:
            self.on_unreadable(nid, oid, version, topic, exc)
            return None
        self.opened_rows += 1
        return content
