"""NATS JetStream receipt in a process of its own, so the client's cost per message does not
share the follower's interpreter lock.

The NATS client parses every message in Python (about 20 µs each); in the follower's process
that ran under the same lock as storing, and the follower stored at about half the batch
ingest's rate. :class:`Receiver` starts ``python -m ledger.live.receiver`` (a child that imports
only the NATS client, not the ledger) over a socket pair. The child:

- holds the durable pull consumer: it sets the consumer up again from its acknowledged floor
  (:func:`resume_point`), keeps up to two pull requests of :data:`PULL_BATCH` messages open, and
  reads the stream sequence and the server's pending count from each message's reply subject;
  the pulled messages go from the client's protocol parser straight to it, as bytes
  (:class:`_DirectClient`: no message object, header parsing or queue per message);
- hands the messages over in frames (up to :data:`HAND_OVER_LINES`, or what came within
  :data:`HAND_OVER_SECONDS`): one bytes blob of the payloads, their end offsets, stream
  sequences and tables, and the number of the first message (the follower's acknowledgement
  token);
- acknowledges only what the follower says is committed: ``A`` with the number of a batch's
  last message acknowledges it, and with the consumer's "all" policy every one before it (the
  batches are committed in order); ``H`` asks the server to wait longer for a range (``+WPI``,
  while the database cannot be reached); ``S`` flushes the acknowledgements and ends;
- pulls no more while :data:`IN_FLIGHT` messages are handed over and not acknowledged, well
  under the consumer's ``max_ack_pending``.

The child ignores SIGTERM and SIGINT (the follower drains first, then says ``S``) and ends as
soon as its socket closes (and, on Linux, when the follower's process ends, by
``PR_SET_PDEATHSIG``): a follower killed by SIGKILL takes its receiver with it, and what the
receiver held and was not told is committed is simply not acknowledged (it comes again).

The frames (little-endian, each preceded by its length as 4 bytes):

- child to follower: ``R`` ready; ``E`` + text: cannot open (the child ends); ``L`` + text: a
  log line; ``M`` + header (first number, count, pending on the server, tables' length) +
  stream sequences (8 bytes each) + end offsets (4 bytes each) + tables (``\\n``-joined) +
  payloads;
- follower to child: ``A`` + number; ``H`` + first and last number; ``S``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from array import array
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import nats
import nats.errors
import nats.js.errors
from nats.aio.client import Client as NatsClient
from nats.errors import ConnectionClosedError, NoServersError
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy, StorageType, StreamConfig
from nats.js.errors import NotFoundError

ACK_WAIT_SECONDS = 60.0
PULL_BATCH = 2500
"""Messages asked by one pull request."""
PULL_EXPIRES = 2.0
"""Seconds a pull request waits on the server for messages before it ends (status 408)."""
IN_FLIGHT = 20_000
"""No more is pulled while this many messages are received and not acknowledged (with two
requests open, at most 25,000: half the consumer's ``max_ack_pending``)."""
MAX_ACK_PENDING = 50_000
HAND_OVER_LINES = PULL_BATCH
HAND_OVER_SECONDS = 0.01
"""Messages are handed over in frames of :data:`HAND_OVER_LINES`, or what came within
:data:`HAND_OVER_SECONDS` of the oldest one, not one frame per message when they come one by
one: each frame wakes the follower's loop, which then takes the interpreter lock from the
storing thread (and, on a loaded machine, waits for a time slice to do so)."""

START_RETRY_SECONDS = 30.0
"""How long the receiver waits at start for a broker that went away after the follower reached
it (see :meth:`_Child.open`)."""
_LENGTH = struct.Struct("<I")
_HEADER = struct.Struct("<QIQI")
"""A message frame's header: first number, count, pending on the server, tables' length."""
_NUMBER = struct.Struct("<Q")
_RANGE = struct.Struct("<QQ")
_URL_ENV = "LEDGER_RECEIVER_SOURCE"
_ACK_WAIT_ENV = "LEDGER_RECEIVER_ACK_WAIT"
"""How the child is given the source's URL (not on its command line, where ``ps`` shows it:
it may hold a password)."""


class SourceError(Exception):
    """A source cannot be opened or read (exit 2)."""


_RETRYABLE: tuple[type[Exception], ...] = (
    SourceError,
    nats.errors.NoServersError,
    nats.errors.TimeoutError,
    nats.errors.ConnectionClosedError,
    nats.errors.ConnectionReconnectingError,
    nats.errors.NoRespondersError,
    nats.js.errors.ServiceUnavailableError,
    OSError,
    TimeoutError,
)
"""What a broker away (or JetStream not ready yet) raises while the consumer is set up."""


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
    client: Any = None,
) -> Any:
    """A NATS connection that reconnects for ever (a broker restart is waited out, and said
    once through ``say``; ``on_reconnect`` is called once it is back); :class:`SourceError` if
    the server cannot be reached at start. ``client``: an unconnected client to connect (the
    library's own by default)."""
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

    if client is None:
        client = NatsClient()
    try:
        await client.connect(
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
    return client


async def ensure_stream(js: Any, address: NatsAddress) -> None:
    """Create the stream (file storage, subjects ``STREAM.>``) when it does not exist."""
    try:
        await js.stream_info(address.stream)
    except NotFoundError:
        await js.add_stream(
            StreamConfig(name=address.stream, subjects=[address.subjects], storage=StorageType.FILE)
        )


async def resume_point(js: Any, address: NatsAddress, durable: str) -> int:
    """The first stream sequence not acknowledged by the durable consumer (1 if there is no
    consumer yet); the old consumer is removed, to be created again from there. Whatever its
    acknowledgement policy was (a consumer made by hand with the "explicit" one, say), what it
    acknowledged beyond its floor comes again, and is a duplicate."""
    try:
        info = await js.consumer_info(address.stream, durable)
    except NotFoundError:
        return 1
    start = int(info.ack_floor.stream_seq) + 1
    await js.delete_consumer(address.stream, durable)
    return start


def consumer_config(
    address: NatsAddress, durable: str, start: int, ack_wait: float = ACK_WAIT_SECONDS
) -> ConsumerConfig:
    """The follower's durable pull consumer, from stream sequence ``start``: the "all"
    acknowledgement policy (one acknowledgement covers a batch and every message before it),
    messages not acknowledged within ``ack_wait`` seconds delivered again."""
    return ConsumerConfig(
        durable_name=durable,
        ack_policy=AckPolicy.ALL,
        ack_wait=ack_wait,
        max_ack_pending=MAX_ACK_PENDING,
        filter_subject=address.subjects,
        deliver_policy=DeliverPolicy.BY_START_SEQUENCE if start > 1 else DeliverPolicy.ALL,
        opt_start_seq=start if start > 1 else None,
    )


def sequence_and_pending(reply: str | bytes) -> tuple[int, int]:
    """The stream sequence and the number of messages still pending on the server that a
    JetStream message's reply subject carries (``$JS.ACK.<stream>.<consumer>.<delivered>.<stream
    seq>.<consumer seq>.<time>.<pending>``, or the form with a domain and an account hash after
    ``$JS.ACK`` and a token at the end); (0, 0) if it is not one."""
    tokens = reply.split(".") if isinstance(reply, str) else reply.split(b".")
    try:
        if len(tokens) == 9:
            return int(tokens[5]), int(tokens[8])
        return int(tokens[7]), int(tokens[10])
    except (IndexError, ValueError):
        return 0, 0


@dataclass
class Received:
    """One frame of messages, as the follower reads it."""

    first: int
    """The number of its first message (the next ones follow on)."""
    sequences: array[int]
    ends: array[int]
    tables: list[str]
    data: bytes
    pending: int
    """Messages the server still held when the last of them was delivered."""


def _frame(kind: bytes, body: bytes = b"") -> bytes:
    return _LENGTH.pack(len(body) + 1) + kind + body


def decode_messages(frame: bytes) -> Received:
    """An ``M`` frame (its kind, then its body)."""
    first, count, pending, tables_length = _HEADER.unpack_from(frame, 1)
    at = 1 + _HEADER.size
    body = frame
    sequences = array("Q")
    sequences.frombytes(body[at : at + 8 * count])
    at += 8 * count
    ends = array("I")
    ends.frombytes(body[at : at + 4 * count])
    at += 4 * count
    tables = body[at : at + tables_length].decode().split("\n")
    return Received(first, sequences, ends, tables, body[at + tables_length :], pending)


def encode_messages(first: int, pending: int, messages: list[tuple[int, bytes, str]]) -> bytes:
    """An ``M`` frame of (stream sequence, payload, table) messages numbered from ``first``."""
    sequences = array("Q", [m[0] for m in messages])
    ends = array("I")
    end = 0
    for m in messages:
        end += len(m[1])
        ends.append(end)
    tables = "\n".join(m[2] for m in messages).encode()
    body = b"".join(
        (
            _HEADER.pack(first, len(messages), pending, len(tables)),
            sequences.tobytes(),
            ends.tobytes(),
            tables,
            *(m[1] for m in messages),
        )
    )
    return _frame(b"M", body)


async def read_frame(reader: asyncio.StreamReader) -> bytes:
    """The next frame (its kind, then its body); ``IncompleteReadError`` at the end."""
    (length,) = _LENGTH.unpack(await reader.readexactly(_LENGTH.size))
    return await reader.readexactly(length)


# -- the follower's side --------------------------------------------------------------------


class Receiver:
    """The child process receiving one stream for one follower, and its socket."""

    def __init__(self, url: str, durable: str, ack_wait: float = ACK_WAIT_SECONDS) -> None:
        mine, theirs = socket.socketpair()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ledger.live.receiver", str(theirs.fileno()), durable, str(os.getpid())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            env={**env, _URL_ENV: url, _ACK_WAIT_ENV: repr(float(ack_wait))},
            # A session of its own: where the kernel shares the CPU between sessions first
            # (autogroup), receiving does not come out of the storing thread's share. It ignores
            # SIGINT and SIGTERM and dies with the follower either way (``_die_with_parent``).
            start_new_session=True,
        )
        theirs.close()
        self._socket: socket.socket | None = mine
        self.reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def connect(self) -> None:
        """Wrap the socket in the running loop's streams."""
        assert self._socket is not None
        self.reader, self._writer = await asyncio.open_unix_connection(sock=self._socket, limit=1 << 24)
        self._socket = None

    def acknowledge(self, number: int) -> None:
        """Message ``number`` and every one before it are committed."""
        self._send(_frame(b"A", _NUMBER.pack(number)))

    def hold(self, first: int, last: int) -> None:
        """Ask the server to wait longer for messages ``first`` to ``last``."""
        self._send(_frame(b"H", _RANGE.pack(first, last)))

    def _send(self, frame: bytes) -> None:
        if self._writer is not None and not self._writer.is_closing():
            self._writer.write(frame)

    async def close(self, timeout: float = 10.0) -> None:
        """Say stop (the child flushes its acknowledgements), wait for it to end."""
        if self._writer is not None:
            self._send(_frame(b"S"))
            with contextlib.suppress(Exception):
                await self._writer.drain()
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self._writer is not None:
            self._writer.close()
        if self._socket is not None:
            self._socket.close()

    def kill(self) -> None:
        """End the child at once (SIGKILL), acknowledging nothing more."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def discard(self) -> None:
        """After the child ended on its own: reap it, close the socket."""
        self.kill()
        if self._writer is not None:
            self._writer.close()
        if self._socket is not None:
            self._socket.close()


# -- the child ------------------------------------------------------------------------------


class _DirectClient(NatsClient):
    """The NATS client, but the messages of one subscription (:attr:`direct_sid`) go straight
    from the protocol parser to :attr:`direct` as bytes: no message object (two decoded
    strings), no header parsing, no queue and task hop per message. The other subscriptions
    (the library's own requests) are handled as usual."""

    direct_sid = -1
    direct: Callable[[bytes, bytes, bytes, bytes | None], None] | None = None

    async def _process_msg(self, sid: int, subject: bytes, reply: bytes, data: bytes, headers: bytes) -> None:
        if sid == self.direct_sid and self.direct is not None:
            self.direct(subject, reply, data, headers)
            return
        await super()._process_msg(sid, subject, reply, data, headers)


def status_of(headers: bytes | None) -> bytes:
    """The inline status of a message's header block (``NATS/1.0 408 Request Timeout``:
    ``b"408"``); ``b""`` for a plain message, with headers or without."""
    if not headers or headers[8:9] != b" ":
        return b""
    return headers[9:12]


class _Child:
    """The receiving process's state: the consumer, the open pull requests, the messages
    received and not handed over, and those handed over and not acknowledged."""

    def __init__(self, address: NatsAddress, durable: str, writer: asyncio.StreamWriter) -> None:
        self.address = address
        self.durable = durable
        self.writer = writer
        self.nc: Any = None
        self.inbox = ""
        self.buffer: list[tuple[int, bytes, str]] = []
        self.pending = 0
        self.pulls: deque[list[float]] = deque()
        """The open pull requests, oldest first: [messages still to come, when it ends]."""
        self.numbered = 0
        """The number of the last message handed over."""
        self.replies: deque[tuple[int, bytes]] = deque()
        """Messages handed over and not acknowledged: (number, reply subject)."""
        self.tables: dict[bytes, str] = {}
        self._pulling: set[asyncio.Task[None]] = set()
        """Pull requests being made (kept referenced until done)."""
        self.timer: asyncio.TimerHandle | None = None
        self.ack_wait = float(os.environ.pop(_ACK_WAIT_ENV, ACK_WAIT_SECONDS))
        """Seconds the server waits for an acknowledgement before delivering again."""

    def say(self, text: str) -> None:
        self.writer.write(_frame(b"L", text.encode()))

    async def open(self, retry_seconds: float = START_RETRY_SECONDS) -> None:
        """Connect and set the consumer up. The follower has reached the server already (it
        fails at once if it cannot), so a broker away at this moment (restarted, say) is waited
        out for ``retry_seconds``, said once; then the last error is :class:`SourceError`."""
        deadline = time.monotonic() + retry_seconds
        said = False
        while True:
            try:
                await self._open()
                return
            except _RETRYABLE as exc:
                text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                if time.monotonic() >= deadline:
                    raise SourceError(text) from None
                if not said:
                    self.say(f"cannot set up the consumer yet ({text}); retrying")
                    said = True
                if self.nc is not None:
                    with contextlib.suppress(Exception):
                        await self.nc.close()
                    self.nc = None
                await asyncio.sleep(0.5)

    async def _open(self) -> None:
        client = _DirectClient()
        self.nc = await connect_nats(
            self.address.server,
            name=f"ledger follower {self.durable}",
            say=self.say,
            on_reconnect=self.pulls.clear,  # the open requests died with the connection
            client=client,
        )
        js = self.nc.jetstream()
        await ensure_stream(js, self.address)
        start = await resume_point(js, self.address, self.durable)
        await js.add_consumer(
            self.address.stream, consumer_config(self.address, self.durable, start, self.ack_wait)
        )
        self.inbox = self.nc.new_inbox()
        sub = await self.nc.subscribe(self.inbox)
        client.direct = self.received
        client.direct_sid = sub._id

    def received(self, subject: bytes, reply: bytes, data: bytes, headers: bytes | None) -> None:
        """A message of the pull requests' inbox, from the parser: into the buffer (handed
        over once the client has read what came), or a pull request's end."""
        pulls = self.pulls
        status = status_of(headers)
        if status:
            if status != b"100" and pulls:  # 404, 408, 409: the oldest request ended
                pulls.popleft()
                self.pull_soon()
            return
        if pulls:
            pulls[0][0] -= 1
            if pulls[0][0] <= 0:
                pulls.popleft()
                self.pull_soon()
        token = subject[subject.rfind(b".") + 1 :]
        table = self.tables.get(token)
        if table is None:
            table = self.tables[token] = token.decode(errors="replace")
        sequence, self.pending = sequence_and_pending(reply)
        self.buffer.append((sequence, data, table))
        self.numbered += 1
        self.replies.append((self.numbered, reply))
        if len(self.buffer) >= HAND_OVER_LINES:
            self.hand_over()
        elif self.timer is None:
            self.timer = asyncio.get_running_loop().call_later(HAND_OVER_SECONDS, self.hand_over)

    def pull_soon(self) -> None:
        """Ask for more (:meth:`pull`) from the loop, not inside the parser."""
        task = asyncio.ensure_future(self.pull())
        self._pulling.add(task)
        task.add_done_callback(self._pulling.discard)

    def hand_over(self) -> None:
        """Everything received since the last hand-over, as one frame."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.buffer:
            first = self.numbered - len(self.buffer) + 1
            self.writer.write(encode_messages(first, self.pending, self.buffer))
            self.buffer = []

    async def pull(self) -> None:
        """Keep up to two pull requests open while fewer than :data:`IN_FLIGHT` messages are
        unacknowledged."""
        now = time.monotonic()
        pulls = self.pulls
        while pulls and pulls[0][1] < now - 1.0:  # lost (the broker restarted): forget it
            pulls.popleft()
        if len(pulls) >= 2 or len(self.replies) >= IN_FLIGHT:
            return
        request = {"batch": PULL_BATCH, "expires": int(PULL_EXPIRES * 1e9)}
        pulls.append([PULL_BATCH, now + PULL_EXPIRES])
        try:
            await self.nc.publish(
                f"$JS.API.CONSUMER.MSG.NEXT.{self.address.stream}.{self.durable}",
                json.dumps(request).encode(),
                reply=self.inbox,
            )
        except ConnectionClosedError as exc:
            raise SourceError(f"the NATS connection closed: {exc}") from None
        except Exception:  # reconnecting: the request is asked again once it is forgotten
            pulls[-1][1] = now

    async def acknowledge(self, number: int) -> None:
        replies = self.replies
        reply = None
        while replies and replies[0][0] <= number:
            n, subject = replies.popleft()
            if n == number:
                reply = subject
        if reply is not None:
            with contextlib.suppress(ConnectionClosedError):
                await self.nc.publish(reply.decode(), b"+ACK")
        await self.pull()

    async def hold(self, first: int, last: int) -> None:
        for n, subject in self.replies:
            if n > last:
                break
            if n >= first:
                with contextlib.suppress(Exception):
                    await self.nc.publish(subject.decode(), b"+WPI")

    async def serve(self, reader: asyncio.StreamReader) -> None:
        """Pull, and do what the follower says, until it says stop or its socket closes."""
        keeping = asyncio.ensure_future(self.keep_pulling())
        try:
            while True:
                try:
                    frame = await read_frame(reader)
                except (asyncio.IncompleteReadError, ConnectionError):
                    os._exit(0)  # the follower is gone: acknowledge nothing more
                kind = frame[:1]
                if kind == b"A":
                    await self.acknowledge(_NUMBER.unpack_from(frame, 1)[0])
                elif kind == b"H":
                    await self.hold(*_RANGE.unpack_from(frame, 1))
                elif kind == b"S":
                    return
        finally:
            keeping.cancel()

    async def keep_pulling(self) -> None:
        """Ask again every half second: a request lost while the broker was away is made
        again, and pulling goes on once the follower has acknowledged enough."""
        while True:
            await self.pull()
            await asyncio.sleep(0.5)


async def _child_main(fd: int, durable: str, url: str) -> None:
    reader, writer = await asyncio.open_unix_connection(sock=socket.socket(fileno=fd))
    child = _Child(NatsAddress.parse(url), durable, writer)
    try:
        await child.open()
    except SourceError as exc:
        writer.write(_frame(b"E", str(exc).encode()))
        await writer.drain()
        return
    except Exception as exc:  # e.g. the consumer cannot be made: say why, in one line
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        writer.write(_frame(b"E", f"cannot follow {url}: {text}".encode()))
        await writer.drain()
        return
    writer.write(_frame(b"R"))
    try:
        await child.serve(reader)
    except SourceError as exc:
        writer.write(_frame(b"E", str(exc).encode()))
    with contextlib.suppress(Exception):
        await child.nc.flush(timeout=5)  # the acknowledgements are out
    with contextlib.suppress(Exception):
        await child.nc.close()
    with contextlib.suppress(Exception):
        await writer.drain()


def _die_with_parent(parent: int) -> None:
    """On Linux, be killed when the follower ends, even while not reading the socket (the
    consumer being set up, say): ``prctl(PR_SET_PDEATHSIG, SIGKILL)``."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    if os.getppid() != parent:  # it ended before that took effect
        os._exit(0)


if __name__ == "__main__":
    _die_with_parent(int(sys.argv[3]) if len(sys.argv) > 3 else os.getppid())
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    asyncio.run(_child_main(int(sys.argv[1]), sys.argv[2], os.environ.pop(_URL_ENV)))
