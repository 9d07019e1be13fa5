"""Where a follower reads feed lines: a file being appended, standard input, or a NATS
JetStream stream.

Every source hands out :class:`Batch` es of lines, bounded by count and by time
(:class:`Bounds`), and is told when a batch is committed (:meth:`Source.committed`): only then
does a file source record how far it has read, and a NATS source acknowledge the messages. A
line read again after a crash is stored already and is skipped by the ingest as an exact
duplicate (FEED §9), so a source may deliver a line twice but never loses one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from ledger.codec.parse import MAX_LINE_BYTES
from ledger.live.receiver import (
    ACK_WAIT_SECONDS,
    NatsAddress,
    Receiver,
    SourceError,
    connect_nats,
    decode_messages,
    ensure_stream,
    read_frame,
)
from ledger.services.ingest import bounded_lines

RECEIVER_STEADY_SECONDS = 60.0
"""A receiver that lasted this long before it ended starts the count of restarts afresh."""
BEHIND_LINES = 1000
"""Lines waiting at the source (or, for a file, 200 bytes each) from which a follower counts
as behind: its batches then grow to their count, and judging is put off a little."""


@dataclass(frozen=True)
class Bounds:
    """How big a batch may grow: at most ``lines`` lines, closed ``seconds`` after its first at
    the latest."""

    lines: int = 5000
    seconds: float = 0.2
    linger: float = 0.01
    """How long a batch waits for more lines when the database is idle: a batch closes at its
    count, ``seconds`` after its first line, or ``linger`` after it once the previous batch is
    stored, so it grows while the follower is behind and stays small (quick) when it is not."""


@dataclass(slots=True)
class Line:
    """One feed line and where it came from: its number (file line, or stream sequence) and
    the table the source names for it (the NATS subject's last token; ``""`` for files)."""

    number: int
    text: bytes
    table: str = ""
    token: Any = None
    """What the source needs to acknowledge it (a NATS message)."""


@dataclass
class Batch:
    """Lines read together, committed together."""

    lines: list[Line] = field(default_factory=list)
    position: Any = None
    """Where the source stands after these lines (a file offset)."""
    more: bool = False
    """More lines were there at once when the batch closed: the follower is behind."""


class Source(Protocol):
    """What the follower reads from."""

    name: str

    async def open(self) -> None:
        """Connect or open; :class:`SourceError` if it cannot."""

    async def next_batch(self, bounds: Bounds, ready: asyncio.Future[Any] | None = None) -> Batch | None:
        """The next lines (an empty batch when none came within the bounds); ``None`` when the
        source has ended (standard input closed). ``ready``: the previous batch's database work
        (the batch is closed soon after it is done, see :func:`batch_wait`)."""

    async def committed(self, batch: Batch) -> None:
        """The batch is stored: acknowledge it, or record how far the source was read."""

    async def holding(self, batch: Batch) -> None:
        """The batch cannot be stored yet (database unreachable): keep it from expiring."""

    async def lag(self) -> float:
        """How far the follower is behind the source (lines or bytes not read yet)."""

    async def close(self) -> None:
        """Disconnect or close."""


# -- a file being appended ------------------------------------------------------------------


class FileSource:
    """A file that is being appended, followed across rotation (renamed away and created
    again, or truncated).

    Where it has read is recorded after each committed batch in ``STATE`` (JSON: the file's
    device and inode, and the byte offset), written atomically; a follower started again
    continues there if the file is the same, else from the start of the file now at the path.
    """

    poll_seconds = 0.05

    def __init__(self, path: str, state_path: str | None = None) -> None:
        self.name = path
        self.path = Path(path)
        self.state_path = Path(state_path) if state_path else Path(path + ".follow.json")
        self._file: BinaryIO | None = None
        self._identity: tuple[int, int] = (0, 0)
        self._offset = 0
        self._line_no = 0
        self._partial = b""

    async def open(self) -> None:
        try:
            self._open_at_path()
        except OSError as exc:
            raise SourceError(f"cannot open {self.name}: {exc.strerror or exc}") from None
        saved = self._saved()
        if saved is not None and tuple(saved["file"]) == self._identity:
            assert self._file is not None
            self._offset = int(saved["offset"])
            self._line_no = int(saved["line"])
            self._file.seek(self._offset)

    def _open_at_path(self) -> None:
        file = open(self.path, "rb")  # noqa: SIM115 - held for the follower's life
        st = os.fstat(file.fileno())
        if self._file is not None:
            self._file.close()
        self._file, self._identity = file, (st.st_dev, st.st_ino)
        self._offset, self._line_no, self._partial = 0, 0, b""

    def _saved(self) -> dict[str, Any] | None:
        try:
            data = json.loads(self.state_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise SourceError(f"cannot read the follow state {self.state_path}: {exc}") from None
        if not isinstance(data, dict) or not {"file", "offset", "line"} <= data.keys():
            raise SourceError(f"the follow state {self.state_path} is not a follower's")
        return data

    async def next_batch(self, bounds: Bounds, ready: asyncio.Future[Any] | None = None) -> Batch | None:
        batch = Batch()
        called = time.monotonic()
        started: float | None = None
        while len(batch.lines) < bounds.lines:
            line = self._read_line()
            if line is not None:
                batch.lines.append(line)
                if started is None:
                    started = time.monotonic()
                continue
            if self._rotated():
                continue
            wait = batch_wait(bounds, called, started, time.monotonic(), ready)
            if wait <= 0:
                break
            await asyncio.sleep(min(self.poll_seconds, wait))
        batch.position = (self._identity, self._offset, self._line_no)
        batch.more = len(batch.lines) >= bounds.lines or self._unread() >= BEHIND_LINES * 200
        return batch

    def _read_line(self) -> Line | None:
        assert self._file is not None
        chunk = self._file.readline(MAX_LINE_BYTES + 1 - len(self._partial))
        if not chunk:
            return None
        text = self._partial + chunk
        if not text.endswith(b"\n") and len(text) <= MAX_LINE_BYTES:
            self._partial = text  # a line still being written: wait for its end
            return None
        self._partial = b""
        self._offset += len(text)
        self._line_no += 1
        if not text.endswith(b"\n"):  # too long: cut (rejected as such), skip the rest of it
            while (rest := self._file.readline(1 << 20)) and not rest.endswith(b"\n"):
                self._offset += len(rest)
            self._offset += len(rest)
        return Line(self._line_no, text.rstrip(b"\r\n"))

    def _rotated(self) -> bool:
        """At the end of the open file: if another file now sits at the path (or this one was
        truncated), go on with it from its start."""
        assert self._file is not None
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return False  # moved away, not created again yet
        if (st.st_dev, st.st_ino) != self._identity:
            self._open_at_path()
            return True
        if st.st_size < self._offset:
            self._file.seek(0)
            self._offset, self._line_no, self._partial = 0, 0, b""
            return True
        return False

    async def committed(self, batch: Batch) -> None:
        if batch.position is None:
            return
        identity, offset, line = batch.position
        temp = self.state_path.with_name(self.state_path.name + ".tmp")
        temp.write_text(
            json.dumps({"file": list(identity), "offset": offset, "line": line}), encoding="utf-8"
        )
        os.replace(temp, self.state_path)

    async def holding(self, batch: Batch) -> None:
        return None

    async def lag(self) -> float:
        return float(self._unread())

    def _unread(self) -> int:
        """Bytes of the open file not read yet."""
        try:
            return max(0, os.fstat(self._file.fileno()).st_size - self._offset) if self._file else 0
        except OSError:
            return 0

    async def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


# -- standard input -------------------------------------------------------------------------


class StdinSource:
    """Standard input, read by a thread (reads block) into a queue; ends when the input
    closes. Nothing is recorded: a follower started again reads what it is then given."""

    def __init__(self, stream: BinaryIO | None = None) -> None:
        self.name = "-"
        self._stream = stream if stream is not None else sys.stdin.buffer
        self._queue: asyncio.Queue[Line | None] = asyncio.Queue()
        self._ended = False

    async def open(self) -> None:
        loop = asyncio.get_running_loop()
        threading.Thread(target=self._read, args=(loop,), daemon=True).start()

    def _read(self, loop: asyncio.AbstractEventLoop) -> None:
        for number, text in bounded_lines(self._stream):
            loop.call_soon_threadsafe(self._queue.put_nowait, Line(number, text))
        loop.call_soon_threadsafe(self._queue.put_nowait, None)

    async def next_batch(self, bounds: Bounds, ready: asyncio.Future[Any] | None = None) -> Batch | None:
        if self._ended:
            return None
        batch = Batch()
        called = time.monotonic()
        started: float | None = None
        queue = self._queue
        while len(batch.lines) < bounds.lines:
            if queue.empty():
                wait = batch_wait(bounds, called, started, time.monotonic(), ready)
                if wait <= 0:
                    break
                try:
                    line = await asyncio.wait_for(queue.get(), wait)
                except TimeoutError:
                    continue
            else:
                line = queue.get_nowait()
            if line is None:
                self._ended = True
                break
            batch.lines.append(line)
            if started is None:
                started = time.monotonic()
        batch.more = queue.qsize() >= BEHIND_LINES
        return batch

    async def committed(self, batch: Batch) -> None:
        return None

    async def holding(self, batch: Batch) -> None:
        return None

    async def lag(self) -> float:
        return float(self._queue.qsize())

    async def close(self) -> None:
        return None


# -- NATS JetStream -------------------------------------------------------------------------


class NatsSource:
    """A JetStream stream read through a durable pull consumer, received in a process of its
    own (:class:`~ledger.live.receiver.Receiver`): the NATS client's cost per message does not
    share the follower's interpreter lock.

    Messages are acknowledged only after their lines are committed (the batch's last message,
    with the "all" policy: the batches are committed in stream order). At start the consumer is
    set up again from its acknowledged floor, so what was delivered and not acknowledged before
    a crash comes again at once and in stream order (not after the acknowledgement timeout and
    out of order); those lines are duplicates of what was stored, or new.

    The receiver hands the messages over in frames (one blob of payloads, their offsets, stream
    sequences and tables) as they come, also while the follower is storing; they wait in a
    buffer, from which :meth:`next_batch` takes what is there at once. This process keeps a
    connection of its own for the findings and rejects it publishes and for the lag.
    """

    restart_waits: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0)
    """Seconds waited before each start of a new receiver after one ended on its own, in a row
    (the count starts again once one has lasted :data:`RECEIVER_STEADY_SECONDS`)."""
    ack_wait_seconds = ACK_WAIT_SECONDS
    """Seconds the server waits for a message's acknowledgement before delivering it again
    (the consumer's ``ack_wait``; a test shortens it)."""

    def __init__(self, url: str, durable: str = "ledger-follower") -> None:
        self.name = url
        self.address = NatsAddress.parse(url)
        self.durable = durable
        self.nc: Any = None
        self.js: Any = None
        self.receiver: Receiver | None = None
        self._buffer: deque[Line] = deque()
        """Lines handed over and not yet taken into a batch."""
        self._arrived = asyncio.Event()
        self._behind = 0
        """Messages pending on the server when the last one was delivered."""
        self._reading: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[str | None] | None = None
        self._ended: str | None = None
        """Why the receiver ended (it is read no more)."""
        self.say: Callable[[str], None] = lambda text: None
        """Where the connection's events are told (the follower's log)."""
        self.on_error: Callable[[str, str], None] = lambda kind, text: None
        """Where errors waited out are counted (kind, message: the follower's metrics)."""
        self._generation = 0
        """How many times the receiver was started again: a line's token is (this, its number)."""
        self._closing = False

    async def open(self) -> None:
        self.receiver = Receiver(self.name, self.durable, self.ack_wait_seconds)
        try:
            await self.receiver.connect()
            self._ready = asyncio.get_running_loop().create_future()
            self._reading = asyncio.ensure_future(self._read())
            self.nc = await connect_nats(
                self.address.server, name=f"ledger follower {self.durable} (publish)"
            )
            self.js = self.nc.jetstream()
            problem = await self._ready
        except BaseException:
            self.receiver.kill()  # e.g. the server cannot be reached: this process said so at once
            await self.close()
            raise
        if problem is not None:
            await self.close()
            raise SourceError(problem)

    async def _read(self) -> None:
        """Read the receivers' frames into the buffer: the first receiver's, then, each time
        one ends on its own after it was ready (killed, say), a new one's, after a wait
        (:attr:`restart_waits`; said, and counted as an error of kind ``receiver``). What the
        ended one held and was not acknowledged comes again from the new one's consumer, set
        up again from its acknowledged floor: the lines not yet in a batch are dropped here,
        and a batch of the ended one's lines is stored but not acknowledged (its lines come
        again, as duplicates). Gives up (the follower then exits 2) when the waits are spent
        without a receiver lasting :data:`RECEIVER_STEADY_SECONDS`."""
        assert self.receiver is not None
        problem = await self._frames(self.receiver)
        restarts = 0
        started = time.monotonic()
        while not self._closing and self._ready is not None and self._ready.done():
            if self._ready.result() is not None:
                break  # the first receiver never became ready: open() says why
            if time.monotonic() - started >= RECEIVER_STEADY_SECONDS:
                restarts = 0
            if restarts >= len(self.restart_waits):
                problem = f"{problem}; given up after {restarts} restart(s)"
                self.on_error("receiver", problem)
                self.say(problem)
                break
            wait = self.restart_waits[restarts]
            restarts += 1
            self.on_error("receiver", problem)
            self.say(
                f"{problem}; starting another in {wait:g}s (restart {restarts} of "
                f"{len(self.restart_waits)}; what was not acknowledged comes again)"
            )
            await asyncio.sleep(wait)
            if self._closing:
                break
            self.receiver.discard()
            self._generation += 1
            self._buffer.clear()
            started = time.monotonic()
            try:
                self.receiver = Receiver(self.name, self.durable, self.ack_wait_seconds)
                await self.receiver.connect()
            except OSError as exc:  # no process or socket to be had now: counts as one that ended
                problem = f"the NATS receiver cannot be started: {exc.strerror or exc}"
                continue
            problem = await self._frames(self.receiver)
        self._ended = problem
        self._resolve(problem)
        self._arrived.set()

    async def _frames(self, receiver: Receiver) -> str:
        """Read one receiver's frames into the buffer until it ends; why it ended."""
        assert receiver.reader is not None
        reader, buffer, arrived, generation = receiver.reader, self._buffer, self._arrived, self._generation
        problem = "the NATS receiver ended"
        try:
            while True:
                frame = await read_frame(reader)
                kind = frame[:1]
                if kind == b"M":
                    got = decode_messages(frame)
                    data, start, number = got.data, 0, got.first
                    for sequence, end, table in zip(got.sequences, got.ends, got.tables, strict=True):
                        buffer.append(Line(sequence, data[start:end], table, (generation, number)))
                        start = end
                        number += 1
                    self._behind = got.pending
                    arrived.set()
                elif kind == b"L":
                    self.say(frame[1:].decode())
                elif kind == b"R":
                    self._resolve(None)
                elif kind == b"E":
                    problem = frame[1:].decode()
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            try:  # its socket closed as it died: its exit status follows at once
                code = await asyncio.to_thread(receiver.process.wait, 1.0)
            except subprocess.TimeoutExpired:
                code = None
            if code is not None and code < 0:
                problem = f"the NATS receiver ended (signal {-code})"
        return problem

    def _resolve(self, problem: str | None) -> None:
        if self._ready is not None and not self._ready.done():
            self._ready.set_result(problem)

    async def next_batch(self, bounds: Bounds, ready: asyncio.Future[Any] | None = None) -> Batch | None:
        """What is in the buffer, up to ``bounds.lines``; when it holds less, wait for more until
        ``bounds.seconds`` after the first line, or (once ``bounds.linger`` has passed) until
        ``ready`` (the previous batch's database work) is done."""
        batch = Batch()
        buffer = self._buffer
        called = time.monotonic()
        started: float | None = None
        while len(batch.lines) < bounds.lines:
            while buffer and len(batch.lines) < bounds.lines:
                batch.lines.append(buffer.popleft())
            if self._ended is not None and not buffer:
                raise SourceError(self._ended)
            now = time.monotonic()
            if batch.lines and started is None:
                started = now
            behind = self._behind + len(buffer) >= BEHIND_LINES
            wait = batch_wait(bounds, called, started, now, None if behind else ready)
            if wait <= 0 or len(batch.lines) >= bounds.lines:
                break
            self._arrived.clear()
            if buffer:
                continue
            try:
                await asyncio.wait_for(self._arrived.wait(), wait)
            except TimeoutError:
                if started is None:
                    break
        batch.more = self._behind + len(buffer) >= BEHIND_LINES
        return batch

    async def committed(self, batch: Batch) -> None:
        """Acknowledge the batch's last message: the consumer acknowledges all (every earlier
        one is committed too, in stream order). Not when it came from a receiver that has
        ended since (its numbers are not the new one's): those lines come again."""
        if batch.lines and self.receiver is not None:
            generation, number = batch.lines[-1].token
            if generation == self._generation:
                self.receiver.acknowledge(number)

    async def holding(self, batch: Batch) -> None:
        if self.receiver is None:
            return
        numbers = [n for g, n in (line.token for line in batch.lines) if g == self._generation]
        if numbers:
            self.receiver.hold(numbers[0], numbers[-1])

    async def lag(self) -> float:
        """Messages not yet stored: pending on the server, and received but not in a batch.

        While messages come, the pending count the last one carried (its reply subject) says
        it, at no cost. The server is asked (``consumer_info``) only when that count is 0, i.e.
        the follower had caught up: asked every second while thousands of messages were
        pending, the server slowed its deliveries to the consumer to a trickle (a tenth of
        the rate, for seconds; the follower then stored half as fast)."""
        if self._behind or self._buffer:
            return float(self._behind + len(self._buffer))
        try:
            info = await self.js.consumer_info(self.address.stream, self.durable)
        except Exception:
            return float(len(self._buffer))
        return float(info.num_pending + len(self._buffer))

    async def close(self) -> None:
        self._closing = True
        if self.receiver is not None:
            await self.receiver.close()  # the acknowledgements are out
        if self._reading is not None:
            self._reading.cancel()
            await asyncio.gather(self._reading, return_exceptions=True)
        if self.nc is not None:
            with contextlib.suppress(Exception):
                await self.nc.flush(timeout=5)  # the findings and rejects are out
            with contextlib.suppress(Exception):
                await self.nc.close()


def batch_wait(
    bounds: Bounds, called: float, started: float | None, now: float, ready: asyncio.Future[Any] | None
) -> float:
    """How much longer a batch may wait for more lines (0 or less: close it now). Before its
    first line: until ``bounds.seconds`` after the call (then it goes empty). After: until
    ``bounds.seconds`` after the first line; but with ``ready`` (the previous batch's database
    work): for as long as it is pending (the batch could not be stored sooner anyway; checked
    every 20 ms), then ``bounds.linger`` at most. So a batch grows while the previous one is
    being stored, and goes at once when nothing is."""
    if started is None:
        return called + bounds.seconds - now
    if ready is None:
        return started + bounds.seconds - now
    if ready.done():
        return min(started + bounds.linger, started + bounds.seconds) - now
    return 0.02


def open_source(spec: str, *, state: str | None = None, durable: str = "ledger-follower") -> Source:
    """The source a ``--follow`` value names: ``-``, ``nats://…``, or a file path."""
    if spec == "-":
        return StdinSource()
    if spec.startswith("nats://"):
        try:
            return NatsSource(spec, durable)
        except ValueError as exc:
            raise SourceError(str(exc)) from None
    return FileSource(spec, state)


__all__ = [
    "Batch",
    "Bounds",
    "FileSource",
    "Line",
    "NatsAddress",
    "NatsSource",
    "Source",
    "SourceError",
    "StdinSource",
    "batch_wait",
    "connect_nats",
    "ensure_stream",
    "open_source",
]
