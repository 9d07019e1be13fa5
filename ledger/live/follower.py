"""``ledger ingest --follow``: store lines as they come, judge each round as it closes.

The loop of one :class:`Follower`:

1. take the next :class:`~ledger.live.sources.Batch` from the source, read while the previous
   batch is being stored: it closes at 5,000 lines, 200 ms after its first line, or 10 ms after
   it once the previous batch is stored, so batches grow while the follower is behind and stay
   small (quick) when it is not (:class:`~ledger.live.sources.Bounds`); it is handed to the
   database thread at once, behind the batch being stored (which it follows without waiting
   for this loop to see that one committed), and stored only once that one is;
2. store it with the batch ingest's :class:`~ledger.services.ingest.Ingestor` (the same validation,
   chain, duplicate rules and bulk recorder; a line stored before is an exact duplicate and is
   skipped), in one or a few atomic saves; while the database cannot be reached, wait and retry
   the same batch, saying so (nothing is acknowledged meanwhile). The Merkle tree is extended
   by the judging process from the rows it reads to judge (``ledger.live.tree``), so the
   storing process does not hash them; with judging in a thread (no judging process), every
   5,000 rows and whenever the follower has caught up, from the rows the saves returned,
   while the next batch is stored;
3. only then acknowledge it to the source (:meth:`~ledger.live.sources.Source.committed`);
4. judge the rows stored since the last judging (:class:`~ledger.live.judging.LiveJudge`) and
   send each finding at once, as one JSON line (the finding plus ``detected_at``) on standard
   output and, from a NATS source, through JetStream on ``ledger.findings.<table>`` (stream
   ``LEDGER_FINDINGS``, a ``Nats-Msg-Id`` per finding, the acknowledgement awaited); rejected
   lines go to the rejects file and to ``ledger.rejects.<table>``. While the follower is behind
   (a full batch), judging is put off, at most ``judge_every`` seconds, so storing catches up
   first; then the row through which findings were told is stored (``ledger.live.told``), so a
   follower started again tells none of them twice;
5. every ``seal_every`` seconds, store an incremental checkpoint
   (:func:`ledger.proof.checkpoints.seal`) and hand it to :attr:`Follower.on_sealed`; with witnesses,
   have them cosign it (:class:`~ledger.live.witnessing.Cosigner`).

SIGTERM or SIGINT ends the loop after the batch in hand is stored and acknowledged (exit 0).
SIGKILL at any point loses nothing (what was not acknowledged comes again) and doubles nothing
(what comes again is a duplicate); the findings told before it are not told again (but those
told in the few milliseconds before their row is stored, which NATS then deduplicates).
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ledger.codec.parse import Rejection
from ledger.domain.errors import first_line as _first_line
from ledger.live.judge_process import RemoteJudge, warm_up
from ledger.live.judging import LiveFinding, LiveJudge
from ledger.live.metrics import FollowerMetrics
from ledger.live.publish import Outgoing, ensure_findings_stream, publish_acked, subject_token
from ledger.live.sources import Batch, Bounds, Line, NatsSource, Source
from ledger.live.told import ToldMark, reject_id, store_identity
from ledger.live.tree import TreeKeeper, store_errors
from ledger.live.witnessing import Cosigner
from ledger.proof import checkpoints
from ledger.proof.seal import SealError
from ledger.services.ingest import Ingestor, IngestReport
from ledger.storage.store import LedgerApp, RawRow


def _rows_ingestor(app: LedgerApp, *, keep: bool = True) -> Ingestor:
    """The batch ingest's :class:`~ledger.services.ingest.Ingestor`, never extending the Merkle
    tree itself (after every call: every batch). ``keep``: keeping the rows it saves (with the
    ids the store gave them) for the follower to extend the tree with every
    :data:`TREE_EVERY_ROWS` rows and when idle, without reading them back from the store (on
    PostgreSQL that reading back cost a quarter of the follower's time storing;
    ``ledger.merkle.log`` checks that they are exactly the rows after its last leaf, and reads
    them when not). Not kept when the judging process extends the tree."""
    return Ingestor(app, extend_tree=keep, tree_by_caller=True)


class TextSink(Protocol):
    """Where findings (one JSON line each) or the follower's log lines are written."""

    def write(self, text: str, /) -> int:
        """Write text."""

    def flush(self) -> None:
        """Push what was written out."""


@dataclass
class _Done:
    """A batch's database work: what the ingest did, the rejects for NATS, the seconds it took
    (and of them, the seconds its thread waited for a core)."""

    report: IngestReport
    rejects: list[Outgoing]
    seconds: float
    queued: float = 0.0


class _NotStored(Exception):
    """A batch's turn came before an earlier batch was stored (that one failed and is tried
    again): it was not touched, and is handed to the database thread again after it."""


def run_queue_seconds() -> float:
    """Seconds the calling thread has waited for a core since it started (Linux's
    ``/proc/thread-self/schedstat``, second field; 0 where there is none)."""
    try:
        with open("/proc/thread-self/schedstat", "rb") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


SealHook = Callable[[checkpoints.Sealed], None]
"""Told of each checkpoint the follower stores."""

RETRY_SECONDS = (0.5, 1.0, 2.0, 5.0)
"""Waits between attempts to store a batch while the database cannot be reached."""

FINDINGS_SUBJECT = "ledger.findings"
REJECTS_SUBJECT = "ledger.rejects"
TREE_EVERY_ROWS = 5000
"""Lines stored between two extensions of the Merkle tree (and whenever the follower is idle)."""
MARK_EVERY_SECONDS = 1.0
"""How often the told row is stored when no finding was told (after findings: at once)."""
MARK_WAIT_SECONDS = 5.0
"""At the end, how long the follower waits for the told row's last write (each write gives up
after :data:`ledger.live.told.BUSY_MS` on a lock; the pool's wait for a connection comes on top)."""


@dataclass
class FollowOptions:
    """How a follower runs."""

    bounds: Bounds = field(default_factory=Bounds)
    seal_every: float | None = None
    """Seconds between checkpoints (``None``: the follower does not seal)."""
    seal_key: Ed25519PrivateKey | None = None
    witnesses: tuple[str, ...] = ()
    """Witnesses (URL or directory) to cosign each timed checkpoint, as ``ledger seal --witness``."""
    quorum: int | None = None
    """How many of ``witnesses`` must cosign (default: all)."""
    store_label: str = ""
    idle_exit: float | None = None
    """Stop (exit 0) once no line came for this many seconds (tests, one-off catch-ups)."""
    resume: bool = True
    """Start the judge from the newest checkpoint's snapshot (else from the start of the log)."""
    judge_every: float = 1.0
    """While the follower is behind (more lines waiting), judge at most this often (seconds)."""
    told_copy: str | None = None
    """A file of the follower's own for a copy of the told row (``ledger.live.told``): on a
    store with a sealing public key, a follower without the key then does not tell every
    finding again at each restart."""
    judge_process: str | None = None
    """The store's URL: judge in a process of its own, on another core
    (:class:`~ledger.live.judge_process.RemoteJudge`), which also extends the Merkle tree;
    ``None``: in a thread of the follower (the follower extends the tree)."""


@dataclass
class FollowSummary:
    """What a follower did, for its last line."""

    stored: int = 0
    duplicates: int = 0
    rejected: int = 0
    findings: int = 0
    batches: int = 0
    seals: int = 0
    unstored: int = 0
    """Lines read but not stored when the follower stopped (the database was unreachable)."""
    first_line_at: float | None = None
    last_commit_at: float | None = None
    last_judged_at: float | None = None
    """``time.monotonic()`` of the first line read, of the last batch committed and of the last
    judging that read new rows."""
    storing_cpu: float = 0.0
    """CPU seconds of the follower's process (every thread of it; not its children) from the
    first line read to the last batch committed: what storing the lines cost it, start-up, idle
    time and shutdown left out (``bench.live`` sets it beside the batch ingest's)."""
    storing_queued: float = 0.0
    """Seconds the storing thread, while storing, was ready to run and waited for a core
    (Linux's ``/proc/thread-self/schedstat``; 0 elsewhere): on a machine whose cores are busy,
    the part of the storing time that is the machine's, not the follower's."""


class Follower:
    """One follower of one source into one ledger (see the module docstring)."""

    def __init__(
        self,
        app: LedgerApp,
        source: Source,
        *,
        options: FollowOptions | None = None,
        out: TextSink | None = None,
        log: TextSink | None = None,
        rejects: TextSink | None = None,
        metrics: FollowerMetrics | None = None,
    ) -> None:
        self.app = app
        self.source = source
        self.options = options or FollowOptions()
        self.out = out if out is not None else sys.stdout
        self.log = log if log is not None else sys.stderr
        self.rejects = rejects
        self.metrics = metrics or FollowerMetrics()
        self.judge: LiveJudge | RemoteJudge = LiveJudge(app)
        self.summary = FollowSummary()
        self.on_sealed: list[SealHook] = []
        """Called with each stored checkpoint."""
        self.cosigner: Cosigner | None = None
        self._tree_by_judge = self.options.judge_process is not None
        """The judging process extends the Merkle tree from the rows it judges (else this
        process does, from the rows its saves return)."""
        self._ingestor = _rows_ingestor(app, keep=not self._tree_by_judge)
        self._stop = asyncio.Event()
        self._last_line = time.monotonic()
        self._first_line_cpu = 0.0
        self._last_seal = time.monotonic()
        self._waiting = False
        self._last_tick = 0.0
        self._js: Any = None
        self._told: ToldMark | None = None
        self._store_id = store_identity(app)
        self._marked = 0
        self._marked_at = 0.0
        self._unjudged = 0
        """Lines stored since the last judging."""
        self._judged_at = time.monotonic()
        self._tree = TreeKeeper(app, self._tree_error)
        """The tree as this process extends it (not with a judging process); an extension that
        failed with the database away is tried again at the next idle moment."""
        self._tree_pending = 0
        self._tree_rows: list[RawRow] = []
        """The rows stored since the tree's last extension, with their ids (those of a batch
        whose store failed part way are not there: the tree then reads what it lacks)."""
        self._db = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ledger-follow-db")
        """Storing and sealing run in this one thread, in order."""
        self._handed = 0
        """Batches handed to the database thread (each gets the next number, its turn)."""
        self._turn = 0
        """The number of the batch to be stored next: batches are stored in the order they were
        read, each once, whatever failed (:meth:`_store_batch`)."""
        self._treeing = (
            self._db
            if app.dialect.is_sqlite
            else ThreadPoolExecutor(max_workers=1, thread_name_prefix="ledger-follow-tree")
        )
        """The Merkle tree is extended in this one, one extension at a time, in order. On
        PostgreSQL a thread of its own, on the tree's own connection, while the next batch is
        stored (it took a quarter of the storing thread's time); on SQLite, where one writer at
        a time holds the file, the database thread, after the batch it was due with (the batch
        is acknowledged without waiting for it)."""
        self._judging = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ledger-follow-judge")
        """Judging runs in this one, beside the storing (off its path)."""
        self._telling = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ledger-follow-told")
        """The told row is written in this one: never on the event loop, which a locked row or a
        pool waiting for a connection would otherwise hold."""
        self._marking = 0
        """The position the told row is being written with (or is to be, once the write under
        way is done)."""
        self._mark_task: asyncio.Task[None] | None = None
        self._judge_task: asyncio.Task[None] | None = None

    def stop(self) -> None:
        """Finish the batch in hand, then end (what SIGTERM does)."""
        self._stop.set()

    # -- the loop ---------------------------------------------------------------------------

    async def run(self) -> int:
        """Follow until stopped, the input ends, or it is idle for ``idle_exit``; the exit
        code (0, or 2 when lines read could not be stored).

        Storing a batch runs in the follower's database thread while the loop reads the next
        batch; batches are stored and acknowledged one after the other, in order. Judging runs
        in a thread of its own after each commit (one judging at a time, each reading every row
        committed since the last), so a batch is never kept waiting for the judge."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                loop.add_signal_handler(sig, self.stop)
            except (RuntimeError, ValueError):  # not the main thread (tests): stop() is there
                break
        if isinstance(self.source, NatsSource):
            self.source.say = self._say
            self.source.on_error = self.metrics.error
        self._set_up_cosigner()
        await self.source.open()
        try:
            if self.options.judge_process is not None:
                self.judge = RemoteJudge(self.options.judge_process, tree=True)
            if isinstance(self.source, NatsSource):
                self._js = self.source.nc.jetstream()
                try:
                    await ensure_findings_stream(self._js)
                except Exception as exc:  # e.g. another stream already holds the subjects
                    self._say(
                        f"the stream LEDGER_FINDINGS cannot be created ({_first_line(exc)}); "
                        "findings go to whichever stream holds ledger.findings.>"
                    )
            await asyncio.get_running_loop().run_in_executor(self._db, warm_up)
            found = await asyncio.get_running_loop().run_in_executor(self._judging, self._start_judging)
            if self.judge.note:
                self._say(self.judge.note)
            self._say(
                f"following {self.source.name}"
                + (
                    f" (judging from checkpoint {self.judge.resumed_from})"
                    if self.judge.resumed_from is not None
                    else ""
                )
            )
            await self._tell_all(found)
            # --idle-exit counts from here: the start (the broker, a resumed judge's replay from
            # its snapshot, a slow machine) is not time in which nothing came.
            self._last_line = time.monotonic()
            await self._loop()
            await self._judged_all()
            await self._last_mark()
            if self.cosigner is not None:
                await self.cosigner.drain()
        finally:
            await self.source.close()
            if self._judge_task is not None:
                await asyncio.gather(self._judge_task, return_exceptions=True)
            self._telling.shutdown(wait=True)
            if self._treeing is not self._db:
                self._treeing.shutdown(wait=True)
            await asyncio.get_running_loop().run_in_executor(self._db, self._close_db)
            self._db.shutdown(wait=True)
            self._judging.shutdown(wait=True)
            if isinstance(self.judge, RemoteJudge):
                self.judge.close()
        s = self.summary
        self._say(
            f"stopped: {s.stored} stored, {s.duplicates} already stored, {s.rejected} "
            f"rejected, {s.findings} findings, {s.seals} checkpoints"
            + (f"; {s.unstored} lines read were not stored" if s.unstored else "")
        )
        return 2 if s.unstored else 0

    def _set_up_cosigner(self) -> None:
        o = self.options
        if o.witnesses and o.seal_key is not None:
            quorum = o.quorum if o.quorum is not None else len(o.witnesses)
            self.cosigner = Cosigner(
                self.app, o.seal_key, o.witnesses, quorum, metrics=self.metrics, say=self._say
            )

    async def _loop(self) -> None:
        """Read a batch while the one before is stored, and hand it to the database thread at
        once, behind that one (not after the loop has seen that one committed): the thread goes
        from one batch to the next without waiting for this loop to get a core. Each batch is
        acknowledged after its commit, in order (:meth:`_finish`)."""
        held: tuple[Batch, asyncio.Future[_Done], int] | None = None
        idle: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        idle.set_result(None)  # no batch in hand: the database is idle
        while True:
            batch = None
            if not self._stop.is_set():
                batch = await self.source.next_batch(self.options.bounds, held[1] if held else idle)
            queued = None
            if batch is not None and batch.lines:
                self._last_line = time.monotonic()
                if self.summary.first_line_at is None:
                    self.summary.first_line_at = self._last_line
                    self._first_line_cpu = time.process_time()
                if held is None or _not_failed(held[1]):
                    queued = self._hand(batch)
            if held is not None:
                if not await self._finish(*held):
                    self.summary.unstored += len(held[0].lines) + (
                        len(batch.lines) if batch is not None else 0
                    )
                    if queued is not None:  # not stored either (its turn never came)
                        await asyncio.gather(queued[1], return_exceptions=True)
                    return
                held = None
            if batch is None:
                return
            if batch.lines:
                held = queued if queued is not None else self._hand(batch)
            else:
                await self._catch_up()
                if self._idle():
                    return
            await self._every_second()

    def _hand(self, batch: Batch, turn: int | None = None) -> tuple[Batch, asyncio.Future[_Done], int]:
        """Hand a batch to the database thread (``turn``: again, with its number)."""
        if turn is None:
            turn, self._handed = self._handed, self._handed + 1
        work = asyncio.get_running_loop().run_in_executor(self._db, self._store_batch, batch, turn)
        return batch, work, turn

    def _start_judging(self) -> list[LiveFinding]:
        told = None
        try:
            self._told = ToldMark(self.app, self.options.seal_key, self.options.told_copy)
            for note in self._told.notes:
                self._say(note)
            checked = self._told.read()
            if checked.problem is not None:
                self._say(checked.problem)
                self.metrics.error("told", checked.problem)
            told = checked.position
        except store_errors() as exc:
            self._told = None
            self._say(
                f"cannot keep the told row ({str(exc).splitlines()[0]}): findings since the "
                "newest checkpoint are told again after a restart"
            )
        if self.options.resume:
            self.judge.resume_from_checkpoint(told)
        self.judge.told_through = self._marked = told or 0
        return self._advance()

    async def _catch_up(self) -> None:
        """Nothing came: judge what was put off, extend the tree."""
        self._judge_soon(force=True)
        if self._tree_pending or self._tree.behind:
            rows = self._take_tree_rows()  # no batch is being stored: the rows are this loop's
            await asyncio.get_running_loop().run_in_executor(self._treeing, self._extend_tree, rows)

    def _judge_soon(self, *, force: bool = False, behind: bool = False) -> None:
        """Start judging what was committed since the last judging, unless a judging is under
        way (the next commit asks again) or, while the follower is ``behind``, the last one was
        less than ``judge_every`` ago (storing catches up first)."""
        if self._judge_task is not None and not self._judge_task.done():
            return
        if not (self._unjudged or force):
            return
        if behind and not force and time.monotonic() - self._judged_at < self.options.judge_every:
            return
        self._judge_task = asyncio.ensure_future(self._judge_and_tell())

    async def _judge_and_tell(self) -> None:
        found = await asyncio.get_running_loop().run_in_executor(self._judging, self._advance)
        await self._tell_all(found)

    async def _judged_all(self) -> None:
        """At the end: wait for the judging under way, then judge what is left."""
        if self._judge_task is not None:
            await asyncio.gather(self._judge_task, return_exceptions=True)
        self._judge_soon(force=True)
        if self._judge_task is not None:
            await asyncio.gather(self._judge_task, return_exceptions=True)
        if self._tree_pending or self._tree.behind:
            rows = self._take_tree_rows()  # no batch is being stored: the rows are this loop's
            await asyncio.get_running_loop().run_in_executor(self._treeing, self._extend_tree, rows)

    async def _every_second(self) -> None:
        """What need not be done per batch: the lag (a request to the broker), the seal."""
        now = time.monotonic()
        if now - self._last_tick < 1.0:
            return
        self._last_tick = now
        self.metrics.lag.set(await self.source.lag())
        await self._seal_if_due()

    def _idle(self) -> bool:
        idle = self.options.idle_exit
        return idle is not None and time.monotonic() - self._last_line >= idle

    # -- storing ----------------------------------------------------------------------------

    def _store_batch(self, batch: Batch, turn: int) -> _Done:
        """In the database thread: store the batch (and extend the tree when it is due), if it
        is its ``turn``: the batch before it is stored. If not (that one failed, and is tried
        again), :class:`_NotStored`, nothing touched."""
        if turn != self._turn:
            raise _NotStored
        started = time.perf_counter()
        queued = run_queue_seconds()
        rejects: list[Outgoing] = []
        lines = batch.lines

        by_number: dict[int, Line] = {}  # made at the first reject (most batches have none)

        def rejected(rejection: Rejection, text: str | bytes) -> None:
            if not by_number:
                by_number.update((line.number, line) for line in lines)
            rejects.extend(self._rejected(rejection, text, by_number.get(rejection.line)))

        try:
            report = self._ingestor.ingest(((line.number, line.text) for line in lines), on_reject=rejected)
        except BaseException:
            self._ingestor = _rows_ingestor(self.app, keep=not self._tree_by_judge)  # stale heads
            raise
        if not self._tree_by_judge:
            self._tree_rows += self._ingestor.take_saved_rows()
            self._tree_pending += report.stored
            if self._tree_pending >= TREE_EVERY_ROWS:
                self._treeing.submit(self._extend_tree, self._take_tree_rows())
        self._turn += 1
        return _Done(report, rejects, time.perf_counter() - started, run_queue_seconds() - queued)

    def _take_tree_rows(self) -> list[RawRow]:
        """The rows stored since the last extension was handed to the tree thread."""
        rows, self._tree_rows = self._tree_rows, []
        self._tree_pending = 0
        return rows

    def _extend_tree(self, known: list[RawRow]) -> None:
        """In the tree thread: append the rows stored since the last extension to the Merkle
        tree (``known``: those rows with their ids, so they need not be read back; the tree
        reads what it lacks)."""
        self._tree.extend(known)

    def _tree_error(self, kind: str, message: str) -> None:
        """A tree extension failed, here or in the judging process: the database away (counted,
        tried again) or anything else (e.g. no grant: said once, not tried again; ``ledger
        seal`` catches the tree up)."""
        self.metrics.error(kind, message)
        if kind == "tree":
            self._say(f"the Merkle tree is not extended ({message}); `ledger seal` catches it up")

    def _close_db(self) -> None:
        self._tree.close()
        if self._told is not None:
            self._told.close()

    async def _store(self, batch: Batch) -> bool:
        """Store and judge one batch (without acknowledging it): False if stopped first."""
        if not await self._finish(*self._hand(batch), acknowledge=False):
            return False
        await self._judged_all()
        return True

    async def _finish(
        self, batch: Batch, work: asyncio.Future[_Done], turn: int, *, acknowledge: bool = True
    ) -> bool:
        """Wait for a batch's database work (retrying while the database cannot be reached;
        handing it over again when its turn came before the batch before it was stored), then
        acknowledge it and tell its findings; False if stopped before it was stored."""
        attempt = 0
        while True:
            try:
                done = await work
                break
            except _NotStored:  # the batch before it is stored now (it was awaited first)
                work = self._hand(batch, turn)[1]
            except store_errors() as exc:
                wait = RETRY_SECONDS[min(attempt, len(RETRY_SECONDS) - 1)]
                attempt += 1
                self._unreachable(exc, wait)
                await self.source.holding(batch)
                try:
                    await asyncio.wait_for(self._stop.wait(), wait)
                    return False
                except TimeoutError:
                    work = self._hand(batch, turn)[1]
        if self._waiting:
            self._waiting = False
            self.metrics.up.set(1)
            self._say("the database is reachable again; storing")
        self._count(done)
        if acknowledge:
            await self.source.committed(batch)
        self.summary.last_commit_at = time.monotonic()
        self.summary.storing_cpu = time.process_time() - self._first_line_cpu
        self.summary.storing_queued += done.queued
        self._unjudged += done.report.stored
        self._judge_soon(behind=batch.more)
        if done.rejects and self._js is not None:
            self._published(await publish_acked(self._js, done.rejects))
        return True

    def _count(self, done: _Done) -> None:
        report = done.report
        self.metrics.commit_seconds.observe(done.seconds)
        s = self.summary
        s.batches += 1
        s.stored += report.stored
        s.duplicates += report.duplicates
        s.rejected += len(report.rejected)
        self.metrics.lines.labels("stored").inc(report.stored)
        self.metrics.lines.labels("duplicate").inc(report.duplicates)
        self.metrics.lines.labels("rejected").inc(len(report.rejected))
        self.metrics.unjudged.set(self._unjudged)

    def _unreachable(self, exc: BaseException, wait: float) -> None:
        message = _first_line(exc)
        self.metrics.error("database", message)
        self.metrics.up.set(0)
        if not self._waiting:
            self._say(
                f"cannot store: {message}; waiting for the database (retrying every "
                f"{wait:g}s or more; nothing is acknowledged meanwhile)"
            )
        self._waiting = True

    def _rejected(self, rejection: Rejection, text: str | bytes, line: Line | None) -> list[Outgoing]:
        """In the database thread: a rejected line to the rejects file; its NATS copy."""
        record = {"source": self.source.name, **rejection.as_dict(text)}
        table = line.table if line is not None and line.table else _table_in(text)
        payload = json.dumps(record, ensure_ascii=False)
        if self.rejects is not None:
            self.rejects.write(payload + "\n")
            self.rejects.flush()
        if not isinstance(self.source, NatsSource):
            return []
        subject = f"{REJECTS_SUBJECT}.{subject_token(table)}"
        msg_id = reject_id(self.source.name, rejection.line, rejection.code)
        return [Outgoing(subject, payload.encode(), msg_id)]

    # -- judging and telling ----------------------------------------------------------------

    def _advance(self) -> list[LiveFinding]:
        """In the judging thread: judge the rows stored since the last call. A database error
        here is counted and left: the next judging goes on from where this one stopped."""
        before = self.judge.position
        self._unjudged = 0
        try:
            found = self.judge.advance()
        except store_errors() as exc:
            self.metrics.error("database", _first_line(exc))
            return []
        finally:
            if isinstance(self.judge, RemoteJudge):
                errors, self.judge.tree_errors = self.judge.tree_errors, []
                for kind, message in errors:
                    self._tree_error(kind, message)
        self._judged_at = time.monotonic()
        if self.judge.position != before:
            self.summary.last_judged_at = self._judged_at
        self.metrics.rounds.inc(self.judge.rounds)
        self.judge.rounds = 0
        return found

    async def _tell_all(self, found: list[LiveFinding]) -> None:
        """Tell the findings, then store how far they go: JetStream first (acknowledged; a
        repeat is dropped by the server), then standard output and, with no pause between
        them, the told row, handed to its thread (so a kill in between, which tells them again,
        has only the instant that write takes)."""
        if not found:
            await self._mark()
            return
        records = [live.to_json(self._store_id) for live in found]
        texts = [json.dumps(r, ensure_ascii=False, default=str) for r in records]  # once, for both
        if self._js is not None:
            outgoing = [
                Outgoing(
                    f"{FINDINGS_SUBJECT}.{subject_token(live.finding.table)}",
                    text.encode(),
                    record["finding_id"],
                )
                for live, record, text in zip(found, records, texts, strict=True)
            ]
            self._published(await publish_acked(self._js, outgoing))
        self.out.write("".join(text + "\n" for text in texts))
        self.out.flush()
        self._write_mark(self.judge.position)
        self.summary.findings += len(found)
        for severity, count in Counter(live.finding.severity for live in found).items():
            self.metrics.findings.labels(severity).inc(count)

    async def _mark(self) -> None:
        """Store the row through which findings are told, when no finding was told: at most
        every :data:`MARK_EVERY_SECONDS` (at the end: :meth:`_last_mark`)."""
        if time.monotonic() - self._marked_at >= MARK_EVERY_SECONDS:
            self._write_mark(self.judge.position)

    def _write_mark(self, position: int) -> None:
        """Have the told row written with ``position``, in the told thread (the loop goes on at
        once): one write at a time, the newest position written once the one under way is done;
        a write that gave up (a lock held elsewhere) is made again at the next call."""
        if self._told is None:
            self._told_written(position)
            return
        self._marking = max(self._marking, position)
        if self._marking > self._marked and (self._mark_task is None or self._mark_task.done()):
            self._mark_task = asyncio.ensure_future(self._write_marks())

    async def _write_marks(self) -> None:
        loop = asyncio.get_running_loop()
        while self._told is not None and self._marking > self._marked:
            position = self._marking
            try:
                await loop.run_in_executor(self._telling, self._told.write, position)
            except store_errors() as exc:  # locked or away: counted, made at the next call
                self.metrics.error("database", _first_line(exc))
                self._told_written(position)
                return
            self._marked, self._marked_at = position, time.monotonic()
            self._told_written(position)

    def _told_written(self, position: int) -> None:
        """The told row is written through ``position`` (or could not be): the judging process
        may take the write lock for the Merkle tree now (``ledger.live.judge_process``), not
        while the told row waits for it."""
        if isinstance(self.judge, RemoteJudge):
            self.judge.told(position)

    async def _last_mark(self) -> None:
        """At the end: the told row written through the last judged row, waiting
        :data:`MARK_WAIT_SECONDS` at most (a write under way that gives up is made again)."""
        deadline = time.monotonic() + MARK_WAIT_SECONDS
        self._write_mark(self.judge.position)
        while self._mark_task is not None and (left := deadline - time.monotonic()) > 0:
            await asyncio.wait({self._mark_task}, timeout=left)
            if not self._mark_task.done() or self._marking <= self._marked:
                return
            await asyncio.sleep(0.1)
            self._write_mark(self.judge.position)  # it gave up: once more, while time is left

    def _published(self, errors: list[str]) -> None:
        if errors:  # the broker away for long: on standard output (and the rejects file) only
            self.metrics.error("broker", errors[0])
            self._say(f"{len(errors)} finding(s) or reject(s) not acknowledged by JetStream: {errors[0]}")

    # -- sealing ----------------------------------------------------------------------------

    async def _seal_if_due(self) -> None:
        every = self.options.seal_every
        if every is None or time.monotonic() - self._last_seal < every:
            return
        self._last_seal = time.monotonic()
        assert self.options.seal_key is not None
        key, label = self.options.seal_key, self.options.store_label
        try:
            sealed = await asyncio.get_running_loop().run_in_executor(
                self._db, lambda: checkpoints.seal(self.app, key, store=label)
            )
        except checkpoints.SealRefused as exc:
            self.metrics.error("seal", str(exc))
            self._say(f"integrity broken: not sealed: {exc}")
            return
        except (SealError, *store_errors()) as exc:  # type: ignore[misc]
            self.metrics.error("seal", str(exc))
            return
        self.metrics.last_seal.set(time.time())
        if sealed.new:
            self.summary.seals += 1
            for hook in self.on_sealed:
                hook(sealed)
            if self.cosigner is not None:
                self.cosigner.offer(sealed, self._db)

    def _say(self, text: str) -> None:
        self.log.write(f"ledger follow: {text}\n")
        self.log.flush()


def _not_failed(work: asyncio.Future[Any]) -> bool:
    """A batch's database work is under way or succeeded (the next batch may be handed over
    behind it; behind one that failed it would only come back as :class:`_NotStored`)."""
    return not work.done() or (not work.cancelled() and work.exception() is None)


def _table_in(text: str | bytes) -> str:
    """The table a rejected line names, if it is readable JSON with one."""
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError):
        return ""
    table = data.get("table") if isinstance(data, dict) else None
    return table if isinstance(table, str) else ""


__all__ = ["FollowOptions", "FollowSummary", "Follower", "store_errors", "subject_token"]
