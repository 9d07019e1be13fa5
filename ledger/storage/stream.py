"""Reading the log as rounds: stored rows → (position, decoded facts) → closed rounds.

:class:`RoundStream` takes the rows of :meth:`ledger.storage.store.LedgerApp.rows` (plain tuples, in
notification order), decodes the feed facts with the codec (``ledger.codec.rows.RowDecoder``,
fast unless told otherwise), gathers them per round and hands over each round when its closing
event (``round_closed`` / ``round_voided``) is read. Rows of other aggregates (tables, the
chain) are passed over.

Every reader of the log that gathers rounds reads through it: ``ledger verify`` (which taps
every row for the integrity chain and pairs openings with table starts,
``ledger.verify.engine``), and through verify ``ledger replay`` and ``ledger recall``; the views,
the day report and surveillance (``projections.base.closed_rounds``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from ledger.codec.chain import CHAIN_TOPIC, FrameError
from ledger.codec.facts import TOPICS
from ledger.codec.rows import OPENING_SUFFIX as OPENING_SUFFIX
from ledger.codec.rows import TERMINAL_SUFFIXES as TERMINAL_SUFFIXES
from ledger.codec.rows import Kind, RowDecoder
from ledger.domain.table import TABLE_TOPIC
from ledger.feed.envelope import FeedEvent
from ledger.storage.store import LedgerMapper, RawRow


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

Check = Callable[[Sequence[RawRow]], "list[bytes | None]"]
"""A tap every row passes through first (``ledger verify``'s chain check): given the rows of a
batch, each one's content, or ``None`` to pass that row over. :meth:`RoundStream.closed` taps all
the rows it is handed, in order, before it decodes any of them."""


def _skip(position: int, aggregate: str, version: int, topic: str, why: Exception) -> None:
    """The default: pass over it (``ledger verify`` is the one place that reports damage)."""


class RoundStream:
    """Rows of the log, oldest first, gathered into rounds (see the module docstring).

    The one reader of the log. Its parts that differ between readers are small methods a reader
    overrides (:meth:`admit`, :meth:`opened`, :meth:`started`), and one tap:

    - ``check``, if given, sees every row first, also the chain's and those of unknown topics
      (``ledger verify`` checks the integrity chain there), and gives the row's content: all the
      rows of a batch before any of them is decoded;
    - ``partial`` (the views' default) also hands over rounds whose opening was not among the
      rows (``complete`` false), so a reader that starts mid-log sees every round close;
      without it, only rounds whose opening was read (and :meth:`opened` accepted) are
      gathered, and rows of other rounds are passed over undecoded;
    - ``keep_content`` keeps the stored content of the rounds in play beside their facts
      (:attr:`contents`), so the state of a pass can be written down and resumed
      (``ledger.verify.snapshot``);
    - ``fast=False`` decodes with the codec's reference mode.
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
        fast: bool = True,
    ) -> None:
        self.mapper = mapper
        self.probe = probe
        """Open rows nobody needs (table starts, unknown topics) anyway, so that an unreadable
        one is told (the views' check for a missing or wrong key)."""
        self.on_unreadable = on_unreadable
        self.check = check
        self.partial = partial
        self.codec = RowDecoder(fast=fast)
        """How rows become facts (``fast=False``: the reference decoders)."""
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
        """Each round closed within ``rows``, when its closing row is read.

        With a tap, every row of ``rows`` goes through it first, in order, before any of them
        is decoded: one tight loop of chain checks, then one of decoding and gathering (each
        loop keeps its own working set in the processor's caches; interleaved row by row, they
        evicted each other's). The usual row of a verify pass — a feed fact of a round being
        gathered, its content given by the tap, no content kept — is decoded and gathered in
        this loop itself, as a compact fact (``ledger.codec.compact``: a slotted twin of the
        model whose ``__class__`` is the model, equal to the model instance; fewer objects per
        fact, plain attribute reads); every other row goes to :meth:`_row`.
        :attr:`position` is the row's before each round handed over and the last row's at
        the end."""
        check = self.check
        if check is None:
            yield from self._rows(rows, None)
            return
        if not isinstance(rows, list):
            rows = list(rows)
        contents = check(rows)
        if self.contents is not None:
            yield from self._rows(rows, contents)
            return
        kinds = self.codec.kinds
        gathering = self.gathering
        row = self._row
        nid = self.position
        for (nid, oid, version, topic, state), content in zip(rows, contents, strict=True):
            if content is None:  # the tap passed the row over
                continue
            kind = kinds.get(topic)
            if kind is not None:
                facts = gathering.get(oid)
                if facts is not None:
                    try:
                        fact = kind.compact(content)
                    except ValueError:  # refused natively: the full path below decides
                        pass
                    else:
                        facts.append(fact)
                        if kind.ends:
                            self.position = nid
                            yield self._ended(nid, oid, facts, fact)
                        continue
            ended = row(nid, oid, version, topic, state, content)
            if ended is not None:
                yield ended
        self.position = nid

    def _rows(self, rows: Iterable[RawRow], contents: list[bytes | None] | None) -> Iterator[ClosedRound]:
        """:meth:`closed` of a pass without a tap (the views; ``contents`` ``None``), or one that
        keeps content (``contents``: what the tap gave for each row): each row by its kind, the
        feed facts (nearly every row) dispatched here."""
        kinds = self.codec.kinds
        feed_row = self._feed_row
        nid = self.position
        given = iter(contents) if contents is not None else None
        for nid, oid, version, topic, state in rows:
            content = None
            if given is not None:
                content = next(given)
                if content is None:
                    continue
            kind = kinds.get(topic)
            if kind is not None:
                self.position = nid
                ended = feed_row(kind, nid, oid, version, topic, state, content)
                if ended is not None:
                    yield ended
                continue
            ended = self._row(nid, oid, version, topic, state, content)
            if ended is not None:
                yield ended
        self.position = nid

    def _row(
        self, nid: int, oid: str, version: int, topic: str, state: bytes, content: bytes | None
    ) -> ClosedRound | None:
        """Any row, by its kind (``content`` given if the tap opened it); the round it ends."""
        self.position = nid
        if topic == CHAIN_TOPIC:
            self.link = (nid, version)
            return None
        kind = self.codec.kinds.get(topic)
        if kind is None:
            kind = self.codec.kind(topic)  # the first row of a game not yet loaded
        if kind is not None:
            return self._feed_row(kind, nid, oid, version, topic, state, content)
        if topic == TABLE_TOPIC:
            self._table_row(nid, oid, version, topic, state, content)
        elif topic.endswith(OPENING_SUFFIX):
            self._opening_row(nid, oid, version, topic, state, content)
        else:
            self._other_row(nid, oid, version, topic, state)
        return None

    def _feed_row(
        self, kind: Kind, nid: int, oid: str, version: int, topic: str, state: bytes, content: bytes | None
    ) -> ClosedRound | None:
        """A feed fact other than an opening: decoded and gathered; the round if it ends."""
        facts = self.gathering.get(oid)
        if facts is None and not self.partial:
            return None
        if content is None:
            content = self._content(nid, oid, version, topic, state)
            if content is None:
                return None
        try:
            fact = kind.first(content)
        except ValueError:  # refused natively: the decoder gives the model's own error
            try:
                fact = kind.decode(content)
            except (ValidationError, ValueError) as exc:
                self.on_unreadable(nid, oid, version, topic, exc)
                return None
        if facts is not None:
            facts.append(fact)
            if self.contents is not None:
                self.contents[oid].append((topic, content))
        if not kind.ends:
            return None
        return self._ended(nid, oid, facts, fact)

    def _ended(self, nid: int, oid: str, facts: list[FeedEvent] | None, fact: FeedEvent) -> ClosedRound:
        """The round ``fact`` ends, its facts no longer in play."""
        if facts is None:
            return ClosedRound(nid, oid, [fact], False)
        del self.gathering[oid]
        if self.contents is not None:
            del self.contents[oid]
        return ClosedRound(nid, oid, facts, facts[0].seq == 1)

    def _table_row(
        self, nid: int, oid: str, version: int, topic: str, state: bytes, content: bytes | None
    ) -> None:
        """A table's ``round_started``: to :meth:`started` if wanted, else opened to probe it."""
        wanted = self.wants_table_rows(oid)
        if content is None and (wanted or self.probe):
            content = self._content(nid, oid, version, topic, state)
        if wanted and content is not None:
            self.started(nid, oid, version, content)

    def _other_row(self, nid: int, oid: str, version: int, topic: str, state: bytes) -> None:
        """A row of a topic no feed model reads: unreadable if its round is in play."""
        if oid in self.gathering:  # an event of a round in play that no model reads
            self.on_unreadable(nid, oid, version, topic, ValueError(f"unknown topic {topic!r}"))
        elif self.probe and self.check is None and topic in TOPICS:
            self._content(nid, oid, version, topic, state)  # readable? (a key problem)

    def _opening_row(
        self, nid: int, oid: str, version: int, topic: str, state: bytes, content: bytes | None
    ) -> None:
        """A ``round_opened``: decoded, and its round gathered if :meth:`opened` says so."""
        if content is None:
            content = self._content(nid, oid, version, topic, state)
            if content is None:
                return
        if not self.admit(content):
            return
        try:
            opening = self.codec.opening(topic, content)
        except (ValidationError, ValueError) as exc:
            self.on_unreadable(nid, oid, version, topic, exc)
            return
        if self.opened(nid, oid, opening):
            self.gathering[oid] = [opening]
            if self.contents is not None:
                self.contents[oid] = [(topic, content)]

    def decode(self, topic: str, content: bytes) -> FeedEvent:
        """One stored feed fact, decoded as the pass decodes it (``ValueError`` if it cannot
        be)."""
        return self.codec.feed_fact(topic, content)

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
