"""Broker faults, on a real nats-server: the broker killed (SIGKILL) mid-stream and started again
on the same store directory, and an outage longer than the consumer's ack wait (JetStream
redelivers what the follower holds while it is blocked on its database). Either way the store
ends equal to one batch ingest of the same lines (nothing lost, nothing doubled), and the
findings told are verify's, each once."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ledger.live.follower import Follower, FollowOptions
from ledger.live.publish import publish_lines
from ledger.live.sources import Bounds, NatsSource
from ledger.storage.store import open_ledger
from ledger.verify.engine import verify_store
from tests.live.conftest import Captured, batch_store, nats_server_and_port, store_rows

pytestmark = pytest.mark.nats


def _plain(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in ("detected_at", "finding_id")} for r in records]


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[tuple[str, Callable[[], None], Callable[[], None]]]:
    """A nats-server of the test's own (JetStream, its store in ``tmp_path``) on a free port:
    its base URL, a function that kills it with SIGKILL and one that starts it again on the same
    store directory."""
    server, port = nats_server_and_port()
    procs: list[subprocess.Popen[bytes]] = []

    def start() -> None:
        procs.append(
            subprocess.Popen(
                [server, "-js", "-a", "127.0.0.1", "-p", str(port), "-sd", str(tmp_path / "js")],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        for _ in range(100):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                return
            time.sleep(0.1)
        raise AssertionError("nats-server did not start")

    def kill() -> None:
        procs[-1].kill()
        procs[-1].wait()

    start()
    try:
        yield f"nats://127.0.0.1:{port}", kill, start
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@pytest.mark.slow
def test_the_broker_killed_mid_stream_loses_nothing_and_doubles_nothing(
    broker: tuple[str, Callable[[], None], Callable[[], None]], tmp_path: Path, lines: list[bytes]
) -> None:
    base, kill, start = broker
    url = f"{base}/KILLED"
    db = f"sqlite:///{tmp_path / 'l.db'}"
    split = len(lines) * 2 // 3
    asyncio.run(publish_lines(url, lines[:split]))
    app = open_ledger(db)
    log = Captured()
    follower = Follower(
        app, NatsSource(url), out=Captured(), log=log, options=FollowOptions(Bounds(50, 0.05), idle_exit=3.0)
    )
    at_kill = 0

    async def main() -> None:
        nonlocal at_kill
        task = asyncio.create_task(follower.run())
        while follower.summary.stored < 300:  # killed while it reads: some stored, more waiting
            await asyncio.sleep(0.002)
        kill()
        at_kill = follower.summary.stored
        await asyncio.sleep(1.0)
        start()
        await publish_lines(url, lines[split:])
        await task

    try:
        asyncio.run(main())
        report = verify_store(app)
    finally:
        app.close()
    assert at_kill < split  # the kill fell mid-stream
    assert "went away; reconnecting" in log.text, log.text
    assert follower.summary.stored == len(lines) and follower.summary.unstored == 0
    assert store_rows(db) == store_rows(batch_store(tmp_path / "batch.db", lines))
    assert _plain(follower.out.records) == [f.to_json() for f in report.findings]  # type: ignore[attr-defined]


@pytest.mark.slow
def test_an_outage_longer_than_the_ack_wait_doubles_nothing(
    stream: str, tmp_path: Path, lines: list[bytes]
) -> None:
    """The follower's database blocked (another connection holds SQLite's write lock) for three
    times the consumer's ack wait while it holds a batch: JetStream redelivers the messages it
    has not acknowledged; each comes again as a duplicate, never a second event."""
    path = tmp_path / "l.db"
    db = f"sqlite:///{path}"
    half = len(lines) // 2
    asyncio.run(publish_lines(stream, lines[:half]))
    app = open_ledger(db)
    source = NatsSource(stream)
    source.ack_wait_seconds = 1.0
    follower = Follower(
        app, source, out=Captured(), log=Captured(), options=FollowOptions(Bounds(50, 0.05), idle_exit=2.0)
    )

    def block() -> None:  # in a thread: the follower's loop may itself wait on the lock
        while follower.summary.stored < 200:
            time.sleep(0.002)
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN EXCLUSIVE")  # the follower's next write waits on it
        asyncio.run(publish_lines(stream, lines[half:]))
        time.sleep(3 * source.ack_wait_seconds)
        blocker.execute("ROLLBACK")
        blocker.close()

    async def main() -> None:
        thread = threading.Thread(target=block, daemon=True)
        thread.start()
        await follower.run()
        thread.join()

    try:
        asyncio.run(main())
        report = verify_store(app)
    finally:
        app.close()
    s = follower.summary
    assert s.duplicates > 0  # the broker did redeliver what was held
    assert s.stored == len(lines) and s.unstored == 0
    assert store_rows(db) == store_rows(batch_store(tmp_path / "batch.db", lines))
    assert _plain(follower.out.records) == [f.to_json() for f in report.findings]  # type: ignore[attr-defined]
