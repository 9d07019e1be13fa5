"""``ledger ingest --follow``: store lines as they come, judge each round as it closes.

The loop of one :class:`Follower`:

1. take the next :class:`~ledger.live.sources.Batch` from the source (bounded by count and by
   time, 500 lines or 200 ms by default);
2. store it with the batch ingest's :class:`~ledger.ingest.Ingestor` (the same validation,
   chain and duplicate rules; a line stored before is an exact duplicate and is skipped), in
   one or a few atomic saves; while the database cannot be reached, wait and retry the same
   batch, saying so (nothing is acknowledged meanwhile);
3. only then acknowledge it to the source (:meth:`~ledger.live.sources.Source.committed`);
4. judge the rows stored since the last batch (:class:`~ledger.live.judging.LiveJudge`) and
   send each finding at once, as one JSON line (the finding plus ``detected_at``) on standard
   output and, from a NATS source, on ``ledger.findings.<table>``; rejected lines go to the
   rejects file and to ``ledger.rejects.<table>``;
5. every ``seal_every`` seconds, store an incremental checkpoint
   (:func:`ledger.checkpoints.seal`) and hand it to :attr:`Follower.on_sealed` (the place a
   witness cosigning step plugs in).

SIGTERM or SIGINT ends the loop after the batch in hand is stored and acknowledged (exit 0).
SIGKILL at any point loses nothing (what was not acknowledged comes again) and doubles nothing
(what comes again is a duplicate).
"""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from eventsourcing.persistence import PersistenceError

from ledger import checkpoints
from ledger.errors import StoreError
from ledger.feed.parse import Rejection
from ledger.ingest import Ingestor, IngestReport
from ledger.live.judging import LiveFinding, LiveJudge
from ledger.live.metrics import FollowerMetrics
from ledger.live.sources import Batch, Bounds, Line, NatsSource, Source
from ledger.seal import SealError
from ledger.store import LedgerApp


class TextSink(Protocol):
    """Where findings (one JSON line each) or the follower's log lines are written."""

    def write(self, text: str, /) -> int:
        """Write text."""

    def flush(self) -> None:
        """Push what was written out."""


@dataclass
class _Done:
    """A batch's database work: what the ingest did, the findings, the seconds it took."""

    report: IngestReport
    found: list[LiveFinding]
    seconds: float


SealHook = Callable[[checkpoints.Sealed], None]
"""Told of each checkpoint the follower stores (a witness cosigns it there)."""

RETRY_SECONDS = (0.5, 1.0, 2.0, 5.0)
"""Waits between attempts to store a batch while the database cannot be reached."""

FINDINGS_SUBJECT = "ledger.findings"
REJECTS_SUBJECT = "ledger.rejects"


def store_errors() -> tuple[type[Exception], ...]:
    """What an unreachable or locked database raises through the store or beside it."""
    import psycopg

    return (
        PersistenceError,
        StoreError,
        sqlite3.OperationalError,
        psycopg.OperationalError,
        psycopg.InterfaceError,
        OSError,
    )


def subject_token(name: str | None) -> str:
    """A table code made safe as one NATS subject token (``_store`` for a store-wide finding)."""
    if not name:
        return "_store"
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


@dataclass
class FollowOptions:
    """How a follower runs."""

    bounds: Bounds = field(default_factory=Bounds)
    seal_every: float | None = None
    """Seconds between checkpoints (``None``: the follower does not seal)."""
    seal_key: Ed25519PrivateKey | None = None
    store_label: str = ""
    idle_exit: float | None = None
    """Stop (exit 0) once no line came for this many seconds (tests, one-off catch-ups)."""
    resume: bool = True
    """Start the judge from the newest checkpoint's snapshot (else from the start of the log)."""


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
    """``time.monotonic()`` of the first line read and of the last batch committed."""


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
        self.judge = LiveJudge(app)
        self.summary = FollowSummary()
        self.on_sealed: list[SealHook] = []
        """Called with each stored checkpoint: the hook for a witness's cosignature."""
        self._ingestor = Ingestor(app)
        self._stop = asyncio.Event()
        self._last_line = time.monotonic()
        self._last_seal = time.monotonic()
        self._waiting = False
        self._pending: list[Any] = []
        self._last_tick = 0.0
        self._db = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ledger-follow-db")
        """Every database call of the follower runs in this one thread, in order."""

    def stop(self) -> None:
        """Finish the batch in hand, then end (what SIGTERM does)."""
        self._stop.set()

    # -- the loop ---------------------------------------------------------------------------

    async def run(self) -> int:
        """Follow until stopped, the input ends, or it is idle for ``idle_exit``; the exit
        code (0, or 2 when lines read could not be stored).

        The database work of a batch (store, then judge) runs in the follower's one database
        thread while the loop reads the next batch; batches are still stored, acknowledged and
        judged one after the other, in order."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                loop.add_signal_handler(sig, self.stop)
            except (RuntimeError, ValueError):  # not the main thread (tests): stop() is there
                break
        if isinstance(self.source, NatsSource):
            self.source.say = self._say
        await self.source.open()
        try:
            await self._in_db(self._start_judging)
            self._say(
                f"following {self.source.name}"
                + (
                    f" (judging from checkpoint {self.judge.resumed_from})"
                    if self.judge.resumed_from is not None
                    else ""
                )
            )
            await self._loop()
        finally:
            await self.source.close()
            self._db.shutdown(wait=True)
        s = self.summary
        self._say(
            f"stopped: {s.stored} stored, {s.duplicates} already stored, {s.rejected} "
            f"rejected, {s.findings} findings, {s.seals} checkpoints"
            + (f"; {s.unstored} lines read were not stored" if s.unstored else "")
        )
        return 2 if s.unstored else 0

    async def _loop(self) -> None:
        held: tuple[Batch, asyncio.Future[_Done]] | None = None
        while True:
            batch = None
            if not self._stop.is_set():
                batch = await self.source.next_batch(self.options.bounds)
            if held is not None:
                if not await self._finish(*held):
                    self.summary.unstored += len(held[0].lines) + (
                        len(batch.lines) if batch is not None else 0
                    )
                    return
                held = None
            if batch is None:
                return
            if batch.lines:
                self._last_line = time.monotonic()
                if self.summary.first_line_at is None:
                    self.summary.first_line_at = self._last_line
                held = (
                    batch,
                    asyncio.get_running_loop().run_in_executor(self._db, self._store_and_judge, batch),
                )
            elif self._idle():
                return
            await self._every_second()

    def _start_judging(self) -> list[LiveFinding]:
        if self.options.resume:
            self.judge.resume_from_checkpoint()
        return self._advance()

    async def _in_db(self, work: Callable[[], list[LiveFinding]]) -> None:
        """Run database work in the database thread, then tell the findings it made."""
        found = await asyncio.get_running_loop().run_in_executor(self._db, work)
        await self._tell_all(found)

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

    def _store_and_judge(self, batch: Batch) -> _Done:
        """In the database thread: store the batch, then judge what is new in the store."""
        started = time.perf_counter()
        by_number = {line.number: line for line in batch.lines}
        try:
            report = self._ingestor.ingest(
                [(line.number, line.text) for line in batch.lines],
                on_reject=lambda r, text: self._rejected(r, text, by_number.get(r.line)),
            )
        except BaseException:
            self._ingestor = Ingestor(self.app)  # what it believed of the heads may be stale
            raise
        return _Done(report, self._advance(), time.perf_counter() - started)

    async def _finish(self, batch: Batch, work: asyncio.Future[_Done], *, acknowledge: bool = True) -> bool:
        """Wait for a batch's database work (retrying while the database cannot be reached),
        then acknowledge it and tell its findings; False if stopped before it was stored."""
        attempt = 0
        while True:
            try:
                done = await work
                break
            except store_errors() as exc:
                wait = RETRY_SECONDS[min(attempt, len(RETRY_SECONDS) - 1)]
                attempt += 1
                self._unreachable(exc, wait)
                await self.source.holding(batch)
                try:
                    await asyncio.wait_for(self._stop.wait(), wait)
                    return False
                except TimeoutError:
                    work = asyncio.get_running_loop().run_in_executor(self._db, self._store_and_judge, batch)
        if self._waiting:
            self._waiting = False
            self.metrics.up.set(1)
            self._say("the database is reachable again; storing")
        self._count(done)
        if acknowledge:
            await self.source.committed(batch)
        await self._tell_all(done.found)
        self.summary.last_commit_at = time.monotonic()
        return True

    async def _store(self, batch: Batch) -> bool:
        """Store and judge one batch (without acknowledging it): False if stopped first."""
        work = asyncio.get_running_loop().run_in_executor(self._db, self._store_and_judge, batch)
        return await self._finish(batch, work, acknowledge=False)

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

    def _unreachable(self, exc: BaseException, wait: float) -> None:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        self.metrics.error("database", message)
        self.metrics.up.set(0)
        if not self._waiting:
            self._say(
                f"cannot store: {message}; waiting for the database (retrying every "
                f"{wait:g}s or more; nothing is acknowledged meanwhile)"
            )
        self._waiting = True

    def _rejected(self, rejection: Rejection, text: str | bytes, line: Line | None) -> None:
        record = {"source": self.source.name, **rejection.as_dict(text)}
        table = line.table if line is not None and line.table else _table_in(text)
        if self.rejects is not None:
            self.rejects.write(json.dumps(record, ensure_ascii=False) + "\n")
            self.rejects.flush()
        self._publish(f"{REJECTS_SUBJECT}.{subject_token(table)}", record)

    # -- judging and telling ----------------------------------------------------------------

    def _advance(self) -> list[LiveFinding]:
        """In the database thread: judge the rows stored since the last call. A database error
        here is counted and left: the next batch judges from where this one stopped."""
        try:
            found = self.judge.advance()
        except store_errors() as exc:
            self.metrics.error("database", str(exc).splitlines()[0] if str(exc) else repr(exc))
            return []
        self.metrics.rounds.inc(self.judge.rounds)
        self.judge.rounds = 0
        return found

    async def _tell_all(self, found: list[LiveFinding]) -> None:
        for live in found:
            self._tell(live)
        if self._pending:
            await self._flush_publish()

    def _tell(self, live: LiveFinding) -> None:
        record = live.to_json()
        self.out.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        self.out.flush()
        self.summary.findings += 1
        self.metrics.findings.labels(live.finding.severity).inc()
        self._publish(f"{FINDINGS_SUBJECT}.{subject_token(live.finding.table)}", record)

    def _publish(self, subject: str, record: dict[str, Any]) -> None:
        nc = self.source.nc if isinstance(self.source, NatsSource) else None
        if nc is None:
            return
        payload = json.dumps(record, ensure_ascii=False, default=str).encode()
        self._pending.append(nc.publish(subject, payload))

    async def _flush_publish(self) -> None:
        pending, self._pending = self._pending, []
        for publish in pending:
            try:
                await publish
            except Exception as exc:  # the broker away: the finding is on stdout already
                self.metrics.error("broker", str(exc) or type(exc).__name__)

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
        if sealed.new:
            self.summary.seals += 1
            self.metrics.last_seal.set(time.time())
            for hook in self.on_sealed:
                hook(sealed)
        else:
            self.metrics.last_seal.set(time.time())

    def _say(self, text: str) -> None:
        self.log.write(f"ledger follow: {text}\n")
        self.log.flush()


def _table_in(text: str | bytes) -> str:
    """The table a rejected line names, if it is readable JSON with one."""
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError):
        return ""
    table = data.get("table") if isinstance(data, dict) else None
    return table if isinstance(table, str) else ""
