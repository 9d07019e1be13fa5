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
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol
from urllib.parse import urlsplit

import nats
from nats.errors import ConnectionClosedError, NoServersError
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy, StorageType, StreamConfig
from nats.js.errors import NotFoundError

from ledger.codec.parse import MAX_LINE_BYTES
from ledger.services.ingest import bounded_lines

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


@dataclass
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


class SourceError(Exception):
    """A source cannot be opened or read (exit 2)."""


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


@dataclass(frozen=True)
class NatsAddress:
    """``nats://HOST:PORT/STREAM``: the server and the stream (subjects ``STREAM.<table>``)."""

    server: str
    stream: str

    @classmethod
    def parse(cls, url: str) -> NatsAddress:
        """Split a NATS source URL; ``ValueError`` with the expected form if it is not one."""
        parts = urlsplit(url)
        stream = parts.path.strip("/")
        if (
            parts.scheme != "nats"
            or not parts.hostname
            or not stream
            or "/" in stream
            or not stream.replace("-", "").replace("_", "").isalnum()
        ):
            raise ValueError(f"{url!r} is not nats://HOST:PORT/STREAM (STREAM: letters, digits, - and _)")
        return cls(f"nats://{parts.netloc}", stream)

    @property
    def subjects(self) -> str:
        """The stream's subjects: one per table."""
        return f"{self.stream}.>"


async def connect_nats(
    server: str,
    *,
    name: str,
    say: Callable[[str], None] | None = None,
    on_reconnect: Callable[[], None] | None = None,
) -> Any:
    """A NATS connection that reconnects for ever (a broker restart is waited out, and said
    once through ``say``; ``on_reconnect`` is called once it is back); :class:`SourceError` if
    the server cannot be reached at start."""
    parts = urlsplit(server)
    try:  # the client retries a first connection for ever too: fail at once instead
        socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 4222), 3).close()
    except OSError as exc:
        raise SourceError(f"cannot reach NATS at {server}: {exc.strerror or exc}") from None
    tell = say if say is not None else (lambda text: None)

    async def error(exc: Exception) -> None:
        tell(f"NATS: {exc or type(exc).__name__}")

    async def disconnected() -> None:
        tell(f"NATS at {server} went away; reconnecting (nothing is acknowledged meanwhile)")

    async def reconnected() -> None:
        tell(f"NATS at {server} is back")
        if on_reconnect is not None:
            on_reconnect()

    try:
        return await nats.connect(
            server,
            name=name,
            connect_timeout=3,
            max_reconnect_attempts=-1,
            reconnect_time_wait=0.5,
            allow_reconnect=True,
            error_cb=error,
            disconnected_cb=disconnected,
            reconnected_cb=reconnected,
        )
    except (NoServersError, OSError, TimeoutError) as exc:
        raise SourceError(f"cannot reach NATS at {server}: {exc or type(exc).__name__}") from None


async def ensure_stream(js: Any, address: NatsAddress) -> None:
    """Create the stream (file storage, subjects ``STREAM.>``) when it does not exist."""
    try:
        await js.stream_info(address.stream)
    except NotFoundError:
        await js.add_stream(
            StreamConfig(name=address.stream, subjects=[address.subjects], storage=StorageType.FILE)
        )


class NatsSource:
    """A JetStream stream read through a durable pull consumer.

    Messages are acknowledged only after their lines are committed (the batch's last message,
    with the "all" policy: the batches are committed in stream order). At start the consumer is
    set up again from its acknowledged floor, so what was delivered and not acknowledged before
    a crash comes again at once and in stream order (not after the acknowledgement timeout and
    out of order); those lines are duplicates of what was stored, or new.

    The messages are pulled with the JetStream pull protocol on an inbox of our own: up to two
    pull requests of :attr:`pull_batch` messages are kept open (a new one asked as soon as one
    ends, also while the follower is storing), and every message that comes is put in a buffer
    by the subscription's callback (no task, timer or parsed metadata per message), from which
    :meth:`next_batch` takes what is there at once. The stream sequence, and how many messages
    the server still holds, are read from the message's reply subject.
    """

    ack_wait_seconds = 60.0
    pull_batch = 2500
    buffer_lines = 10_000
    """No more is asked while the buffer holds this many (with two batches in hand and two
    requests open, well under the consumer's ``max_ack_pending``)."""
    pull_expires = 2.0
    """Seconds a pull request waits on the server for messages before it ends (status 408)."""

    def __init__(self, url: str, durable: str = "ledger-follower") -> None:
        self.name = url
        self.address = NatsAddress.parse(url)
        self.durable = durable
        self.nc: Any = None
        self.js: Any = None
        self._sub: Any = None
        self._inbox = ""
        self._buffer: deque[tuple[int, bytes, str, str]] = deque()
        """Messages received and not yet handed out: (stream sequence, data, table, reply)."""
        self._arrived = asyncio.Event()
        self._behind = 0
        """Messages pending on the server when the last one was delivered."""
        self._pulls: deque[list[float]] = deque()
        """The open pull requests, oldest first: [messages still to come, when it ends]."""
        self.say: Callable[[str], None] = lambda text: None
        """Where the connection's events are told (the follower's log)."""

    async def open(self) -> None:
        self.nc = await connect_nats(
            self.address.server,
            name=f"ledger follower {self.durable}",
            say=self.say,
            on_reconnect=self._pulls.clear,  # the open requests died with the connection
        )
        self.js = self.nc.jetstream()
        await ensure_stream(self.js, self.address)
        start = await self._resume_point()
        config = ConsumerConfig(
            durable_name=self.durable,
            ack_policy=AckPolicy.ALL,
            ack_wait=self.ack_wait_seconds,
            max_ack_pending=50_000,
            filter_subject=self.address.subjects,
            deliver_policy=DeliverPolicy.BY_START_SEQUENCE if start > 1 else DeliverPolicy.ALL,
            opt_start_seq=start if start > 1 else None,
        )
        await self.js.add_consumer(self.address.stream, config)
        self._inbox = self.nc.new_inbox()
        self._sub = await self.nc.subscribe(
            self._inbox, cb=self._received, pending_msgs_limit=200_000, pending_bytes_limit=1 << 30
        )

    async def _received(self, msg: Any) -> None:
        """The subscription's callback: a message into the buffer, or a pull request's end."""
        pulls = self._pulls
        headers = msg.headers
        if headers and headers.get("Status"):
            if headers["Status"] != "100" and pulls:  # 404, 408, 409: the oldest request ended
                pulls.popleft()
                await self._pull()
            return
        if pulls:
            pulls[0][0] -= 1
            if pulls[0][0] <= 0:
                pulls.popleft()
                await self._pull()  # at once, not when the follower next reads: it may be storing
        subject = msg.subject
        sequence, self._behind = _sequence_and_pending(msg.reply)
        self._buffer.append(
            (
                sequence,
                msg.data,
                subject.rsplit(".", 1)[-1] if "." in subject else "",
                msg.reply,
            )
        )
        self._arrived.set()

    async def _pull(self) -> None:
        """Keep up to two pull requests open while the buffer is not full."""
        now = time.monotonic()
        pulls = self._pulls
        while pulls and pulls[0][1] < now - 1.0:  # lost (the broker restarted): forget it
            pulls.popleft()
        if len(pulls) >= 2 or len(self._buffer) >= self.buffer_lines:
            return
        request = {"batch": self.pull_batch, "expires": int(self.pull_expires * 1e9)}
        pulls.append([self.pull_batch, now + self.pull_expires])
        try:
            await self.nc.publish(
                f"$JS.API.CONSUMER.MSG.NEXT.{self.address.stream}.{self.durable}",
                json.dumps(request).encode(),
                reply=self._inbox,
            )
        except ConnectionClosedError as exc:
            raise SourceError(f"the NATS connection closed: {exc}") from None
        except Exception:  # reconnecting: the request is asked again once it is forgotten
            pulls[-1][1] = now

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
                sequence, data, table, reply = buffer.popleft()
                batch.lines.append(Line(sequence, data, table, reply))
            await self._pull()
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

    async def _resume_point(self) -> int:
        """The first stream sequence not acknowledged by the durable consumer (1 if there is no
        consumer yet); the old consumer is removed, to be created again from there."""
        try:
            info = await self.js.consumer_info(self.address.stream, self.durable)
        except NotFoundError:
            return 1
        start = int(info.ack_floor.stream_seq) + 1
        await self.js.delete_consumer(self.address.stream, self.durable)
        return start

    async def committed(self, batch: Batch) -> None:
        """Acknowledge the batch's last message: the consumer acknowledges all (every earlier
        one is committed too, in stream order)."""
        if batch.lines:
            with contextlib.suppress(ConnectionClosedError):
                await self.nc.publish(batch.lines[-1].token, b"+ACK")

    async def holding(self, batch: Batch) -> None:
        for line in batch.lines:
            with contextlib.suppress(Exception):
                await self.nc.publish(line.token, b"+WPI")

    async def lag(self) -> float:
        try:
            info = await self.js.consumer_info(self.address.stream, self.durable)
        except Exception:
            return float(len(self._buffer))
        return float(info.num_pending + len(self._buffer))

    async def close(self) -> None:
        if self.nc is not None:
            with contextlib.suppress(Exception):
                await self.nc.flush(timeout=5)  # the acknowledgements are out
            with contextlib.suppress(Exception):
                await self.nc.close()


def _sequence_and_pending(reply: str) -> tuple[int, int]:
    """The stream sequence and the number of messages still pending on the server that a
    JetStream message's reply subject carries (``$JS.ACK.<stream>.<consumer>.<delivered>.<stream
    seq>.<consumer seq>.<time>.<pending>``, or the form with a domain and an account hash after
    ``$JS.ACK`` and a token at the end); (0, 0) if it is not one."""
    tokens = reply.split(".")
    try:
        if len(tokens) == 9:
            return int(tokens[5]), int(tokens[8])
        return int(tokens[7]), int(tokens[10])
    except (IndexError, ValueError):
        return 0, 0


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
