"""A told row held by another PostgreSQL session (``SELECT … FOR UPDATE``, never committed) does
not stall the follower: the row is written in a thread of its own, each write gives up after
its lock timeout (counted as a database error) and the next findings write it again, while the
lines go on being stored and judged. Once the lock is let go, the row is written."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import psycopg
import pytest

from ledger.live.follower import Follower, FollowOptions
from ledger.live.sources import Bounds, FileSource
from ledger.live.told import TOLD_TABLE
from ledger.storage.store import open_ledger
from ledger.verify.engine import verify_store
from tests.conftest import _empty_url
from tests.live.conftest import Captured, run_follower

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg_url(tmp_path: Path) -> Iterator[str]:
    """An empty ledger in a fresh PostgreSQL schema, dropped afterwards."""
    yield from _empty_url("postgres", tmp_path)


def _write(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"".join(line + b"\n" for line in lines))


def _told_position(base: str, table: str) -> int:
    with psycopg.connect(base, autocommit=True) as conn:
        row = conn.execute(f"SELECT position FROM {table} WHERE id = 1").fetchone()
    return int(row[0]) if row else 0


def test_a_locked_told_row_does_not_stall_ingest(pg_url: str, tmp_path: Path, lines: list[bytes]) -> None:
    feed = tmp_path / "feed.jsonl"
    half = len(lines) // 2
    _write(feed, lines[:half])
    base = pg_url.split("?")[0]
    table = f'"{parse_qs(urlsplit(pg_url).query)["schema"][0]}".{TOLD_TABLE}'
    app = open_ledger(pg_url)
    try:
        first, _ = run_follower(app, FileSource(str(feed)), idle=0.3)
        assert first.out.records  # type: ignore[attr-defined]
        told_before = _told_position(base, table)
        assert told_before > 0
        _write(feed, lines)  # the rest of the day, with findings of its own

        locker = psycopg.connect(base)  # a transaction left open, holding the row's lock
        locker.execute(f"SELECT position FROM {table} WHERE id = 1 FOR UPDATE")
        follower = Follower(
            app,
            FileSource(str(feed)),
            options=FollowOptions(Bounds(100, 0.05), idle_exit=0.5),
            out=Captured(),
            log=Captured(),
        )
        ran: list[int] = []
        thread = threading.Thread(target=lambda: ran.append(__import__("asyncio").run(follower.run())))
        started = time.monotonic()
        thread.start()
        try:
            # Every line of the second half stored, and its findings told, while the row stays
            # locked; a write of the row gave up on the lock meanwhile.
            deadline = started + 20.0
            gave_up = follower.metrics.errors.labels("database")
            while time.monotonic() < deadline and not (
                follower.summary.stored == len(lines) - half
                and follower.summary.findings
                and gave_up._value.get()
            ):
                time.sleep(0.02)
            stored_while_locked = follower.summary.stored
            judged_while_locked = follower.summary.findings
            gave_up_while_locked = gave_up._value.get()
            took = time.monotonic() - started
        finally:
            locker.rollback()
            locker.close()
        thread.join(30.0)
        assert not thread.is_alive()
        expected = [f.to_json() for f in verify_store(app).findings]
    finally:
        app.close()
    assert stored_while_locked == len(lines) - half, (stored_while_locked, took)
    assert judged_while_locked > 0  # findings told, their row not writable meanwhile
    assert gave_up_while_locked >= 1  # a write gave up after its lock timeout, and was counted
    assert took < 10.0  # a few batches of 100 lines, not a write lock's wait per batch
    assert ran == [0]
    assert "lock timeout" in follower.metrics.text()
    told = first.out.records + follower.out.records  # type: ignore[attr-defined]
    assert [{k: v for k, v in r.items() if k not in ("detected_at", "finding_id")} for r in told] == expected
    # The lock let go: the last write (at the end) stored the row through the last judged row.
    assert _told_position(base, table) > told_before
