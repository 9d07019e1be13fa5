"""``ledger ingest``: append feed lines to the store, exactly as FEED.md §9 says.

- A malformed line is **rejected** with its line number, a stable code and a message, and every
  other line is still stored.
- A line identical to a stored one (same table, round, seq and content) is skipped, so a file
  ingested twice stores nothing twice; same key with other content is ``conflicting_duplicate``.
- Lines are saved in batches (fast) of at most :data:`~ledger.storage.store.SAVE_EVENTS_MAX` events
  (a larger PostgreSQL save can hang forever). Each batch is one atomic save that also appends a
  link to the store-wide chain (``ledger.codec.chain``). If another writer got in first, the batch's
  lines are re-examined against the new state of the store and saved again.
- Several saves may be written in one transaction (:data:`SAVES_PER_COMMIT`, by store): they
  commit or not as a whole, each keeps its own chain link, and until they commit the duplicate
  check finds their lines in memory. Every save of an ``ingest`` call is committed when it
  returns, and its report counts only what committed.

Game rules are *not* checked here: a bet after the dice is stored, because it happened at the
table; ``ledger verify`` reports it.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import BinaryIO
from uuid import UUID

from eventsourcing.persistence import IntegrityError

from ledger.codec.chain import CHAIN_ID, Linked, LinkEntry, frames_ascii, genesis, next_digest_ascii, now
from ledger.codec.facts import content_of, topic_of
from ledger.codec.ids import id_makers
from ledger.codec.library import SaveGroup, StoredColumns, model_with
from ledger.codec.lines import LineParser
from ledger.codec.parse import MAX_LINE_BYTES, Rejection
from ledger.domain.errors import first_line
from ledger.domain.table import RoundStarted
from ledger.feed.envelope import TERMINAL_TYPES, FeedEvent, RoundOpened
from ledger.merkle.log import MerkleLog
from ledger.storage.collector import pass_collector
from ledger.storage.store import SAVE_EVENTS_MAX, LedgerApp, RawRow, Recorded

BATCH_EVENTS = 500
"""Feed events per save: well under the 1,000-event cap, leaving room for table and chain events."""

SAVES_PER_COMMIT = {"sqlite": 10, "postgres": 1}
"""Saves written in one transaction, by store, unless ``Ingestor(saves_per_commit=…)`` says.
SQLite: a commit rewrites every page it touched (the events table's and its index's) and
syncs the log, so ten saves of 500 feed events commit together (about what the bare framework
commits at once, 100 rounds); a crash loses at most those uncommitted saves, which a re-run
stores. PostgreSQL: one, each save commits on its own (its commit costs the client little and
its insert lock is held no longer than a save)."""

SAVE_ATTEMPTS = 20
TREE_EVERY_ROWS = 5000
"""Rows saved between two extensions of the Merkle tree (and once at the end of an ingest):
each extension is a transaction of its own, so fewer, larger ones cost less per row."""


class Accepted(Enum):
    """What became of a valid feed line that was not rejected."""

    STORED = "stored"
    """Added to the batch: it is stored when the batch is saved."""
    DUPLICATE = "duplicate"
    """Already stored with the same content: nothing to do (ingest is idempotent)."""


@dataclass
class IngestReport:
    """What one ingest did."""

    lines: int = 0
    stored: int = 0
    duplicates: int = 0
    rejected: list[Rejection] = field(default_factory=list)
    rounds_opened: int = 0
    saves: int = 0
    retries: int = 0
    seconds: float = 0.0
    tree_size: int = 0
    """Leaves of the store's Merkle tree after the last save (``ledger.merkle.log``)."""
    tree_seconds: float = 0.0
    """Time spent extending the tree (part of ``seconds``)."""
    tree_error: str | None = None
    """Why the tree could not be extended (e.g. a role without the grant); ``ledger seal``
    catches it up. The events were stored all the same."""

    @property
    def exit_code(self) -> int:
        """FEED §9: 0 every line stored (or already stored), 1 some lines rejected."""
        return 1 if self.rejected else 0


@dataclass(slots=True, eq=False)
class _Head:
    """The newest stored (or pending) state of one aggregate: one object per aggregate, updated
    in place as the batch appends to it (no new object, no dict update, per line)."""

    version: int
    digest: bytes
    """The chain digest of ``version``, as the ASCII bytes of its hex (what the next digest
    hashes and the frame stores: no encoding per row)."""
    game: str = ""
    ended: bool = False
    first: int = 0
    """The first version the pending batch writes (valid while the head is in its ``touched``)."""


_Row = tuple[UUID, int, str, bytes, bytes]
"""An event of the batch: aggregate, version, topic, content bytes, chain digest (ASCII)."""


@dataclass(slots=True)
class _Batch:
    """Lines accepted but not yet saved, and the events they make."""

    lines: list[tuple[int, str | bytes, FeedEvent, bytes | None]] = field(default_factory=list)
    """The accepted lines (number, text, fact, stored bytes if canonical), to re-examine them if
    another writer saves first."""
    events: list[_Row] = field(default_factory=list)
    pending: dict[tuple[str, str, int], FeedEvent] = field(default_factory=dict)
    """The batch's facts by ``(table, round, seq)``, for the duplicate check: filled from
    :attr:`lines` only when a duplicate is looked up (:meth:`pending_fact`), never per line."""
    indexed: int = 0
    """How many of :attr:`lines` :attr:`pending` holds."""
    touched: dict[_Head, UUID] = field(default_factory=dict)
    """Each aggregate the batch writes, in the order it was first written (keyed by its head:
    an identity hash, not a ``UUID``'s), for the chain link's entries."""
    feed_events: int = 0
    rounds_opened: int = 0
    columns: StoredColumns | None = None
    """The save's rows, chain link included, once the batch is closed (:meth:`Ingestor._close`)."""

    def pending_fact(self, key: tuple[str, str, int]) -> FeedEvent | None:
        """The batch's fact with this ``(table, round, seq)``, if it holds one."""
        lines, pending = self.lines, self.pending
        for _, _, fact, _ in lines[self.indexed :]:
            pending[(fact.table, fact.round, fact.seq)] = fact
        self.indexed = len(lines)
        return pending.get(key)


_OPENING: dict[type, bool] = {}
"""Whether a fact class is a ``round_opened`` (an ``ABCMeta`` check, made once per class)."""


def _opens(cls: type) -> bool:
    known = _OPENING.get(cls)
    if known is None:
        known = _OPENING[cls] = issubclass(cls, RoundOpened)
    return known


_UNKNOWN = _Head(0, b"")
"""``_heads.get`` default: the aggregate's head is not known yet (``None`` is "none stored")."""


RejectSink = Callable[[Rejection, str | bytes], None]
_Parsed = tuple[int, str | bytes, FeedEvent | Rejection, bytes | None]
"""A parsed line: number, text, event or rejection, stored bytes if the line was canonical."""


class Ingestor:
    """Appends validated feed events to one ledger, keeping the chain heads it needs in memory."""

    def __init__(
        self,
        app: LedgerApp,
        *,
        batch_events: int = BATCH_EVENTS,
        max_line_bytes: int = MAX_LINE_BYTES,
        extend_tree: bool = True,
        tree_by_caller: bool = False,
        fast: bool = True,
        saves_per_commit: int | None = None,
    ) -> None:
        """``fast=False`` parses and keys the lines with the codec's reference mode
        (``ledger.codec``): the same rows, more slowly. ``tree_by_caller``: keep the rows saved
        (with their ids) for the caller to extend the Merkle tree with (:meth:`take_saved_rows`)
        instead of extending it here (the live follower extends it on a timer of its own).
        ``saves_per_commit``: saves of ``batch_events`` feed events written in one transaction
        (default: :data:`SAVES_PER_COMMIT` of the store); every save is committed by the time
        :meth:`ingest` returns, whatever the number."""
        if not 1 <= batch_events <= SAVE_EVENTS_MAX // 2:
            raise ValueError(f"batch_events must be 1-{SAVE_EVENTS_MAX // 2}")
        if saves_per_commit is None:
            saves_per_commit = SAVES_PER_COMMIT[app.dialect.name]
        if saves_per_commit < 1:
            raise ValueError("saves_per_commit must be at least 1")
        self.saves_per_commit = saves_per_commit
        self._unsaved: list[_Batch] = []
        """Closed batches (saves) not committed yet, oldest first."""
        self.app = app
        self.batch_events = batch_events
        self.max_line_bytes = max_line_bytes
        self._heads: dict[UUID, _Head | None] = {}
        self._batch = _Batch()
        self._parser = LineParser(max_line_bytes, fast=fast)
        self._round_id, self._table_id = id_makers(fast)
        self._tree: MerkleLog | None = None
        self._tree_pending = 0
        self._tree_rows: list[RawRow] = []
        """The rows saved since the last extension, with their ids, where the store gives them."""
        self._tree_failed = not extend_tree
        """No (more) extending of the Merkle tree after each save: off, or it failed once."""
        self._tree_by_caller = tree_by_caller

    def ingest(
        self,
        lines: Iterable[tuple[int, str | bytes]],
        *,
        on_reject: RejectSink | None = None,
        on_progress: Callable[[int], None] | None = None,
    ) -> IngestReport:
        """Ingest numbered lines; blank lines are ignored. Returns what happened."""
        report = IngestReport()
        started = time.perf_counter()
        group: list[_Parsed] = []
        parse = self._parser.parse
        batch_events = self.batch_events
        if on_progress is not None:
            lines = _told(lines, on_progress)
        try:
            with pass_collector():  # lines are freed by reference counting: see ledger.storage.collector
                for line_no, text in lines:
                    if not text or text.isspace():  # what ``not text.strip()`` says, with no copy
                        continue
                    fact, content = parse(text, line_no)
                    group.append((line_no, text, fact, content))
                    if len(group) >= batch_events:
                        report.lines += len(group)  # a group holds every line counted since the last
                        self._take(group, report, on_reject)
                        group = []
                report.lines += len(group)
                self._take(group, report, on_reject)
                self._flush(report, on_reject, commit=True)
        except BaseException:
            # Nothing uncommitted may outlive the call: forget it, and every head it moved.
            self._heads.clear()
            self._batch = _Batch()
            self._unsaved = []
            raise
        if self._tree_pending:
            self._extend_tree(report)
        if self._tree is not None:
            self._tree.close()
            self._tree = None
        report.seconds = time.perf_counter() - started
        return report

    def take_saved_rows(self) -> list[RawRow]:
        """The rows saved since the last call, in order, with their ids (``tree_by_caller``)."""
        rows, self._tree_rows = self._tree_rows, []
        self._tree_pending = 0
        return rows

    def _extend_tree(self, report: IngestReport) -> None:
        """Append the rows saved since the last extension to the Merkle tree, in a transaction
        of its own after the saves: a failure (no grant, a lock timeout) leaves the events
        stored and the tree behind, for ``ledger seal`` to catch up, and is not tried again in
        this ingest."""
        if self._tree_by_caller:
            return
        self._tree_pending = 0
        known, self._tree_rows = self._tree_rows, []
        if self._tree_failed:
            return
        started = time.perf_counter()
        try:
            if self._tree is None:
                self._tree = MerkleLog(self.app)
            report.tree_size = self._tree.extend(known).size
        except Exception as exc:  # a database's refusal, whichever the driver
            self._tree_failed = True
            report.tree_error = first_line(exc)
        report.tree_seconds += time.perf_counter() - started

    def _take(self, group: list[_Parsed], report: IngestReport, on_reject: RejectSink | None) -> None:
        """Decide a group of parsed lines in order, their heads loaded in one query first.

        The usual line — canonical, the next ``seq`` of a round whose head is known, open and
        of the same game, not a ``round_opened`` — is appended here, step for step what
        :meth:`_accept` and :meth:`_append` do with it (no call, no new tuple for the batch's
        lines); every other line goes through :meth:`_accept`."""
        oids = self._prefetch(group)
        batch_events = self.batch_events
        heads = self._heads
        opening = _OPENING
        terminal = TERMINAL_TYPES
        sha256 = hashlib.sha256
        batch = self._batch
        touched, events, accepted = batch.touched, batch.events, batch.lines
        for item, oid in zip(group, oids, strict=True):
            line_no, text, parsed, content = item
            if oid is None:
                assert isinstance(parsed, Rejection)
                self._reject(report, parsed, text, on_reject)
                continue
            head = heads.get(oid)
            if (
                content is not None
                and head is not None
                and opening.get(parsed.__class__) is False
                and not head.ended
                and parsed.seq == head.version + 1  # type: ignore[union-attr]
                and parsed.game == head.game  # type: ignore[union-attr]
            ):
                version = head.version = head.version + 1
                # next_digest_ascii(head.digest, content), written out: no call per line
                digest = head.digest = sha256(head.digest + content).hexdigest().encode()
                if head not in touched:
                    head.first = version
                    touched[head] = oid
                kind = parsed.type  # type: ignore[union-attr]
                head.ended = kind in terminal
                events.append((oid, version, f"{head.game}/{kind}", content, digest))
                accepted.append(item)  # type: ignore[arg-type]
                batch.feed_events += 1
            else:
                outcome = self._accept(line_no, text, parsed, content, oid)  # type: ignore[arg-type]
                if outcome is not Accepted.STORED:
                    if outcome is Accepted.DUPLICATE:
                        report.duplicates += 1
                    else:
                        self._reject(report, outcome, text, on_reject)
            if batch.feed_events >= batch_events:
                self._flush(report, on_reject)
                batch = self._batch
                touched, events, accepted = batch.touched, batch.events, batch.lines

    def _prefetch(self, group: list[_Parsed]) -> list[UUID | None]:
        """Load the stored heads of every aggregate the group names and we do not know yet;
        the round id of each line (``None`` for a rejection)."""
        wanted: dict[UUID, None] = {}
        heads = self._heads
        round_key, table_key = self._round_id, self._table_id
        oids: list[UUID | None] = []
        opening = _OPENING
        for _, _, parsed, _ in group:
            if isinstance(parsed, Rejection):
                oids.append(None)
                continue
            oid = round_key(parsed.table, parsed.round)
            oids.append(oid)
            if oid not in heads:
                wanted[oid] = None
            cls = parsed.__class__
            opens = opening.get(cls)
            if opens is None:
                opens = _opens(cls)
            if opens:
                tid = table_key(parsed.table)
                if tid not in heads:
                    wanted[tid] = None
        if wanted:
            found = self.app.heads(list(wanted))
            for oid in wanted:
                rec = found.get(oid)
                heads[oid] = None if rec is None else _head_of(rec)
        return oids

    @staticmethod
    def _reject(
        report: IngestReport, rejection: Rejection, text: str | bytes, on_reject: RejectSink | None
    ) -> None:
        report.rejected.append(rejection)
        if on_reject is not None:
            on_reject(rejection, text)

    # -- deciding one line ------------------------------------------------------------------

    def _accept(
        self,
        line_no: int,
        text: str | bytes,
        event: FeedEvent,
        content: bytes | None = None,
        oid: UUID | None = None,
    ) -> Rejection | Accepted:
        """Add one valid event to the batch, or say why not; :attr:`Accepted.DUPLICATE` if it is
        already stored.

        ``content``, if given, is the event's stored bytes (the parser found the line canonical);
        ``oid``, if given, the round's aggregate id.
        """
        if oid is None:
            oid = self._round_id(event.table, event.round)
        head = self._heads.get(oid, _UNKNOWN)
        if head is _UNKNOWN:
            head = self._head(oid)
        if head is not None and event.seq <= head.version:
            return self._duplicate(line_no, oid, event)
        opening = _opens(event.__class__)
        if head is None:
            if event.seq != 1 or not opening:
                return Rejection(
                    line_no,
                    "not_opened",
                    f"round {event.table}/{event.round} has no stored round_opened; "
                    f"its first line must be round_opened with seq 1",
                    "seq",
                )
        elif head.ended:
            return Rejection(
                line_no,
                "event_after_close",
                f"round {event.table}/{event.round} is already closed or voided",
                "type",
            )
        elif event.seq != head.version + 1:
            return Rejection(
                line_no,
                "seq_gap",
                f"seq {event.seq} follows stored seq {head.version} of round {event.table}/{event.round}",
                "seq",
            )
        elif event.game != head.game:
            return Rejection(
                line_no,
                "game_mismatch",
                f"round {event.table}/{event.round} was opened as {head.game}, this line says {event.game}",
                "game",
            )
        self._append(oid, event, head, content)
        self._batch.lines.append((line_no, text, event, content))
        if opening:
            assert isinstance(event, RoundOpened)
            self._start_round(event)
        return Accepted.STORED

    def _duplicate(self, line_no: int, oid: UUID, event: FeedEvent) -> Rejection | Accepted:
        key = event.key
        stored = self._batch.pending_fact(key)
        if stored is None:
            for unsaved in self._unsaved:  # saves not committed yet: only here, not in the store
                stored = unsaved.pending_fact(key)
                if stored is not None:
                    break
        if stored is None:
            found = self.app.stored(oid, gt=event.seq - 1, lte=event.seq)
            stored = found[0].fact if found else None  # type: ignore[assignment]
        if stored is not None and stored.feed_fields() == event.feed_fields():
            return Accepted.DUPLICATE
        return Rejection(
            line_no,
            "conflicting_duplicate",
            f"{event.table}/{event.round} seq {event.seq} is already stored with "
            f"other content; the stored event stays",
            "seq",
        )

    def _append(
        self,
        oid: UUID,
        fact: FeedEvent | RoundStarted | Linked,
        head: _Head | None,
        content: bytes | None = None,
    ) -> None:
        self._append_to(self._batch, oid, fact, head, content)

    def _append_to(
        self,
        batch: _Batch,
        oid: UUID,
        fact: FeedEvent | RoundStarted | Linked,
        head: _Head | None,
        content: bytes | None = None,
    ) -> None:
        if content is None:
            content = content_of(fact)
        if head is None:
            version = 1
            digest = next_digest_ascii(genesis(oid).encode("ascii"), content)
            head = self._heads[oid] = _Head(version, digest, first=1)
            batch.touched[head] = oid
        else:
            version = head.version = head.version + 1
            digest = head.digest = next_digest_ascii(head.digest, content)
            if head not in batch.touched:
                head.first = version
                batch.touched[head] = oid
        if isinstance(fact, FeedEvent):  # topic_of's first case, with one class test
            topic = f"{fact.game}/{fact.type}"
            head.game = fact.game
            head.ended = fact.type in TERMINAL_TYPES
            batch.feed_events += 1
        else:
            topic = topic_of(fact)
            head.ended = False
        batch.events.append((oid, version, topic, content, digest))

    def _start_round(self, opened: RoundOpened) -> None:
        tid = self._table_id(opened.table)
        started = RoundStarted(table=opened.table, round=opened.round, game=opened.game, at=opened.at)
        self._append(tid, started, self._head(tid))
        self._batch.rounds_opened += 1

    def _head(self, oid: UUID) -> _Head | None:
        if oid in self._heads:
            return self._heads[oid]
        last = self.app.stored(oid, desc=True, limit=1)
        head = _head_of(last[0]) if last else None
        self._heads[oid] = head
        return head

    # -- saving -----------------------------------------------------------------------------

    def _flush(self, report: IngestReport, on_reject: RejectSink | None, *, commit: bool = False) -> None:
        """Close the batch into a save; commit the saves not committed yet once there are
        :attr:`saves_per_commit` of them, or when ``commit``."""
        self._close()
        if self._unsaved and (commit or len(self._unsaved) >= self.saves_per_commit):
            self._commit(report, on_reject)

    def _close(self) -> None:
        """End the batch: append its chain link, build its rows, keep it for the commit."""
        batch = self._batch
        self._batch = _Batch()
        if not batch.events:
            return
        self._append_to(
            batch, CHAIN_ID, Linked(at=now(), entries=_entries(batch.touched)), self._head(CHAIN_ID)
        )
        assert len(batch.events) <= SAVE_EVENTS_MAX
        oids, versions, topics, contents, digests = (
            list(column) for column in zip(*batch.events, strict=True)
        )
        mapper = self.app.ledger_mapper
        if mapper.compressor is None and mapper.cipher is None:
            states = frames_ascii(digests, contents)
        else:
            states = [mapper.stored_event(*e[:4], e[4].decode("ascii")).state for e in batch.events]
        batch.columns = StoredColumns(oids, versions, topics, states)
        self._unsaved.append(batch)

    def _commit(self, report: IngestReport, on_reject: RejectSink | None) -> None:
        """Write every closed save in one transaction: all of them commit, or none."""
        for attempt in range(SAVE_ATTEMPTS):
            saves = self._unsaved
            if not saves:
                return
            each = [b.columns for b in saves if b.columns is not None]
            columns = each[0] if len(each) == 1 else SaveGroup(each)
            try:
                # Straight to the library's recorder: one transaction, one bulk statement per
                # save, the rows as four columns (``ledger.codec.library``); ``Application.save``
                # would add a ``Recording`` and a ``Notification`` object per event that nothing
                # here reads.
                ids = self.app.recorder.insert_events(columns)
            except IntegrityError:
                # Another writer saved first: forget what we believed and re-examine the lines
                # of every save of the transaction, in order, into new saves.
                report.retries += 1
                self._heads.clear()
                self._unsaved = []
                self._batch = _Batch()
                for batch in saves:
                    for line_no, text, event, _ in batch.lines:
                        outcome = self._accept(line_no, text, event)
                        if isinstance(outcome, Rejection):
                            self._reject(report, outcome, text, on_reject)
                        elif outcome is Accepted.DUPLICATE:
                            report.duplicates += 1
                        if self._batch.feed_events >= self.batch_events:
                            self._close()
                self._close()
                time.sleep(0.01 * attempt)
                continue
            report.saves += len(saves)
            self._tree_pending += len(columns)
            if ids and not self._tree_failed:  # the store gives the ids: no reading them back
                self._tree_rows += zip(
                    ids, columns.hexes, columns.versions, columns.topics, columns.states, strict=True
                )
            heads = self._heads
            for batch in saves:
                report.stored += batch.feed_events
                report.rounds_opened += batch.rounds_opened
                # Ended rounds take no more lines: forget them (once committed: until then the
                # store does not know them) so memory stays flat on long feeds.
                for head, oid in batch.touched.items():
                    if head.ended:
                        heads.pop(oid, None)
            self._unsaved = []
            if self._tree_pending >= TREE_EVERY_ROWS:
                self._extend_tree(report)
            return
        raise RuntimeError(f"could not save a batch after {SAVE_ATTEMPTS} attempts")


_ENTRY_FIELDS = frozenset(("aggregate", "first", "last", "digest"))


def _entries(touched: dict[_Head, UUID]) -> tuple[LinkEntry, ...]:
    """The chain link's entries of a batch: ``link_entries`` of its events, from the heads it
    moved (first version written, last version and its digest), in the order it first wrote
    to each; built as ``model_construct`` builds them (the values are the writer's own)."""
    return tuple(
        model_with(
            LinkEntry,
            {"aggregate": oid, "first": head.first, "last": head.version, "digest": head.digest.decode()},
            _ENTRY_FIELDS,
        )
        for head, oid in touched.items()
    )


def _head_of(rec: Recorded) -> _Head:
    fact = rec.fact
    game = fact.game if isinstance(fact, FeedEvent) else ""
    ended = isinstance(fact, FeedEvent) and fact.type in TERMINAL_TYPES
    return _Head(rec.originator_version, rec.digest.encode("ascii"), game, ended)


def ingest_file(app: LedgerApp, path: str | os.PathLike[str]) -> IngestReport:
    """Ingest one feed file, reading its lines as ``ledger ingest`` does (bounded memory)."""
    with open(path, "rb") as stream:
        return Ingestor(app).ingest(bounded_lines(stream))


def numbered_lines(stream: Iterable[str]) -> Iterable[tuple[int, str]]:
    """Number the lines of a text stream from 1, without their line ends."""
    for number, line in enumerate(stream, start=1):
        yield number, line.rstrip("\r\n")


def _told(
    lines: Iterable[tuple[int, str | bytes]], on_progress: Callable[[int], None]
) -> Iterator[tuple[int, str | bytes]]:
    """The lines, each told to ``on_progress`` (its length and its line end) as it is read."""
    for numbered in lines:
        on_progress(len(numbered[1]) + 1)
        yield numbered


def bounded_lines(stream: BinaryIO, max_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes]]:
    """Number the lines of a binary stream, never holding more than ``max_bytes`` of one line.

    A longer line is yielded cut to ``max_bytes + 1`` bytes (so it is rejected as too long) and
    the rest of it is skipped: a 1 GB file with no newline costs no more memory than a line.
    """
    number = 0
    while True:
        chunk = stream.readline(max_bytes + 1)
        if not chunk:
            return
        number += 1
        if len(chunk) > max_bytes and not chunk.endswith(b"\n"):
            while (rest := stream.readline(1 << 20)) and not rest.endswith(b"\n"):
                pass
        yield number, chunk.rstrip(b"\r\n")
