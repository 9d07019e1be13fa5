"""Shared parts of the live tests: a simulated feed with injected errors, a real NATS server
with JetStream (``LEDGER_TEST_NATS``, default ``nats://127.0.0.1:4222``; skipped without one,
required under ``CI=true``), a unique stream per test, deleted afterwards."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import nats
import pytest

from ledger.codec.chain import CHAIN_TOPIC
from ledger.games import GAMES
from ledger.live.follower import Follower, FollowOptions
from ledger.live.publish import publish_lines
from ledger.live.sources import Bounds, Source
from ledger.services.ingest import Ingestor
from ledger.storage.store import LedgerApp, open_ledger
from ledger.tools.simulate import simulate

NATS_BASE = os.environ.get("LEDGER_TEST_NATS", "nats://127.0.0.1:4222")


def nats_server_and_port() -> tuple[str, int]:
    """Debian's ``nats-server`` (skipped without it; required under ``CI=true``) and a free
    port on 127.0.0.1, for a test that runs a server of its own."""
    server = shutil.which("nats-server")
    if server is None:
        if os.environ.get("CI") == "true":
            pytest.fail("nats-server is required under CI=true")
        pytest.skip("no nats-server")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return server, s.getsockname()[1]


def feed_lines(rounds: int = 6, seed: int = 7, error_rate: float = 0.3) -> list[bytes]:
    """A small simulated property (one table of each game), as feed lines."""
    sim = simulate(
        [GAMES[k] for k in ("RL", "FPC", "3CB", "SP9", "STUD", "MJ")],
        rounds=rounds,
        tables=1,
        seed=seed,
        error_rate=error_rate,
    )
    return [json.dumps(line, separators=(",", ":")).encode() for line in sim.lines]


@pytest.fixture(scope="session")
def lines() -> list[bytes]:
    """The feed most live tests follow: three rounds of each game (922 lines, findings
    included; several batches of every bound the tests set, and the smallest that shows what
    each test checks: each line costs every test that follows it, so six rounds, 1,865 lines,
    made the live tests' default tier a third dearer for nothing more checked)."""
    return feed_lines(rounds=3)


def _nats_problem() -> str | None:
    parts = urlsplit(NATS_BASE)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 4222), 2):
            return None
    except OSError as exc:
        return str(exc)


def require_nats() -> str:
    """The test server's URL; skip without one, or fail under CI=true."""
    problem = _nats_problem()
    if problem is None:
        return NATS_BASE
    if os.environ.get("CI") == "true":
        pytest.fail(f"NATS is required under CI=true and is not reachable at {NATS_BASE}: {problem}")
    pytest.skip(f"no NATS at {NATS_BASE}: {problem}")


@pytest.fixture
def stream() -> Iterator[str]:
    """``nats://HOST:PORT/STREAM`` of a stream unique to the test, deleted afterwards."""
    base = require_nats()
    name = "T" + uuid.uuid4().hex[:12]
    yield f"{base}/{name}"

    async def drop() -> None:
        nc = await nats.connect(base)
        try:
            js = nc.jetstream()
            with contextlib.suppress(Exception):
                await js.delete_stream(name)
        finally:
            await nc.close()

    asyncio.run(drop())


async def publish(url: str, lines: list[bytes]) -> None:
    """Publish feed lines to ``STREAM.<table>`` (the simulator's publisher, at full speed)."""
    await publish_lines(url, lines)


class Captured:
    """A text sink the follower writes its findings (or its log) to."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    @property
    def records(self) -> list[dict[str, Any]]:
        return [json.loads(x) for x in "".join(self.parts).splitlines() if x.strip()]

    @property
    def text(self) -> str:
        return "".join(self.parts)


def run_follower(
    app: LedgerApp, source: Source, *, idle: float = 0.6, bounds: Bounds = Bounds(200, 0.05), **options: Any
) -> tuple[Follower, int]:
    """Run a follower in this process until it is idle for ``idle`` seconds."""
    follower = Follower(
        app,
        source,
        options=FollowOptions(bounds, idle_exit=idle, **options),
        out=Captured(),
        log=Captured(),
        rejects=Captured(),
    )
    code = asyncio.run(follower.run())
    return follower, code


ROOT = Path(__file__).resolve().parents[2]


def start_follower_process(db: str, source: str, cwd: Path) -> subprocess.Popen[bytes]:
    """``ledger ingest --db DB --follow SOURCE`` as a real process, once it says it is following
    (its first line on stderr: its children, receiver or judge, are there by then)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "ingest", "--db", db, "--follow", source],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stderr is not None
    proc.stderr.readline()  # "following …"
    return proc


FORK_SERVER = r"""
import json, os, sys
import cli.main, cli.ingest  # the follower's imports, paid once for every start
from ledger.live import follower, judge_process, judging, publish, receiver, run, sources, told
import nats
for order in sys.stdin:
    argv, out, err, stdin, env = json.loads(order)
    stderr = os.open(err, os.O_WRONLY | os.O_CREAT, 0o644)  # a pipe's reading end is open by then
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.environ.update(env)
            os.dup2(os.open(stdin or os.devnull, os.O_RDONLY), 0)
            os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 1)
            os.dup2(stderr, 2)
            os.close(stderr)
            sys.argv = ["ledger", *argv]
            try:
                cli.main.main()
                code = 0
            except SystemExit as exc:
                code = 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    os.close(stderr)
    print(pid, flush=True)
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
"""


class Forked:
    """One ``ledger`` command forked by :class:`LedgerForks`: its process id, the reading end
    of its standard error, SIGKILL and the wait for its exit code."""

    def __init__(self, server: subprocess.Popen[str], pid: int, stderr: Any) -> None:
        self._server = server
        self.pid = pid
        self.stderr = stderr

    def kill(self) -> None:
        """SIGKILL, as ``Popen.send_signal(SIGKILL)``."""
        os.kill(self.pid, signal.SIGKILL)

    def wait(self) -> int:
        """Its exit code (``-9`` when killed), once it has ended."""
        assert self._server.stdout is not None
        reply = self._server.stdout.readline()
        assert reply, "the fork server ended"
        self.stderr.close()
        return int(reply)


class LedgerForks:
    """``ledger ARGS`` started again and again as real processes that are forks of one
    interpreter which has imported the command and the follower's modules once.

    Each start of ``python -m cli.main`` pays about 0.6 s of CPU in imports before it does
    anything; a test that starts the follower forty times to SIGKILL it paid that forty times.
    A fork is a process of its own as the command's is (own pid, own store connections, the
    judging and receiving children it starts itself, SIGKILL as the only end), running the same
    ``cli.main.main`` with the same arguments, working folder and environment; only the
    interpreter's start and imports are shared. The forks are children of the server, which
    this process waits for, so their CPU is counted in this process's children as before."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self._scratch = Path(tempfile.mkdtemp(prefix="ledger-forks-"))
        """The pipes and captured outputs of the forks (not in ``cwd``, which may be the checkout)."""
        self._count = 0
        self._server = subprocess.Popen(
            [sys.executable, "-c", FORK_SERVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=cwd,
            env=env,
            text=True,
        )

    def start(self, args: list[str], stdout: Path) -> Forked:
        """Fork ``ledger ARGS`` with standard output to ``stdout`` (truncated) and standard
        error to a pipe of its own (``Forked.stderr``), as ``Popen(..., stderr=PIPE)``."""
        self._count += 1
        fifo = self._scratch / f"stderr-{self._count}"
        os.mkfifo(fifo)
        self._order(args, stdout, fifo)
        stderr = fifo.open("rb")  # the server opens the writing end before it forks
        fifo.unlink()
        return Forked(self._server, self._reply(), stderr)

    def run(
        self, args: list[str], *, stdin: bytes = b"", env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        """Fork ``ledger ARGS`` with ``stdin`` on its standard input and ``env`` added to its
        environment, wait for it, and return its exit code and output, as ``subprocess.run``
        with ``capture_output=True``."""
        self._count += 1
        given, out, err = (self._scratch / f"{self._count}.{x}" for x in ("in", "out", "err"))
        given.write_bytes(stdin)
        self._order(args, out, err, given, env)
        self._reply()  # its process id
        code = self._reply()
        done = subprocess.CompletedProcess(args, code, out.read_bytes(), err.read_bytes())
        for path in (given, out, err):
            path.unlink()
        return done

    def _order(
        self,
        args: list[str],
        out: Path,
        err: Path,
        stdin: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        assert self._server.stdin is not None
        order = [args, str(out), str(err), None if stdin is None else str(stdin), env or {}]
        self._server.stdin.write(json.dumps(order) + "\n")
        self._server.stdin.flush()

    def _reply(self) -> int:
        assert self._server.stdout is not None
        reply = self._server.stdout.readline()
        assert reply, "the fork server ended"
        return int(reply)

    def close(self) -> None:
        """End the server (after its last fork has ended) and wait for it."""
        assert self._server.stdin is not None
        self._server.stdin.close()
        try:
            self._server.wait(30)
        finally:
            if self._server.poll() is None:
                self._server.kill()
                self._server.wait()
            if self._server.stdout is not None:
                self._server.stdout.close()
            shutil.rmtree(self._scratch, ignore_errors=True)


@contextlib.contextmanager
def ledger_forks(cwd: Path) -> Iterator[LedgerForks]:
    """A :class:`LedgerForks` working in ``cwd`` with this checkout first on the path, closed
    afterwards."""
    forks = LedgerForks(cwd, {**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        yield forks
    finally:
        forks.close()


def children_of(pid: int) -> list[int]:
    """The processes ``pid`` started (Linux ``/proc``)."""
    return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def process_ended(pid: int) -> bool:
    """Wait (30 s at most) for a process to be gone or a zombie no one has reaped yet."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if "State:\tZ" in Path(f"/proc/{pid}/status").read_text():
                return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def store_rows(url: str) -> list[tuple[str, int, str, bytes]]:
    """Every stored row but the chain links (whose batching differs): aggregate, version,
    topic and content, in aggregate and version order."""
    app = open_ledger(url, create=False)
    try:
        rows = [
            (oid, version, topic, app.ledger_mapper.open_state(state)[1])
            for page in app.rows()
            for _, oid, version, topic, state in page
            if topic != CHAIN_TOPIC
        ]
    finally:
        app.close()
    return sorted(rows)


def batch_store(path: Path, lines: list[bytes]) -> str:
    """A store made by one batch ingest of ``lines``; its URL."""
    url = f"sqlite:///{path}"
    app = open_ledger(url)
    try:
        Ingestor(app).ingest(enumerate(lines, 1))
    finally:
        app.close()
    return url
