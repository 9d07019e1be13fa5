"""The NATS receipt process (``ledger.live.receiver``) killed on its own, by SIGKILL, mid-stream,
on the real ``nats-server``: the follower starts another (said on standard error, counted as an
error of kind ``receiver``), and afterwards the store equals one batch ingest of the same lines
(nothing lost, nothing doubled: JetStream delivers again what was not acknowledged) and the
findings told are verify's, each once. Receivers that keep dying are started again a bounded
number of times; then the follower gives up (exit 2)."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from ledger.live.follower import Follower, FollowOptions
from ledger.live.publish import publish_lines
from ledger.live.sources import Bounds, NatsSource, SourceError
from ledger.storage.store import open_ledger
from ledger.verify.engine import verify_store
from tests.live.conftest import Captured, batch_store, store_rows

pytestmark = pytest.mark.nats


def _plain(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in ("detected_at", "finding_id")} for r in records]


async def _kill_receiver(source: NatsSource, follower: Follower, after: int, killed: list[int]) -> None:
    """SIGKILL the receiver once ``after`` lines are stored and it is not one killed before."""
    while follower.summary.stored < after or source.receiver is None or source.receiver.process.pid in killed:
        await asyncio.sleep(0.002)
    pid = source.receiver.process.pid
    os.kill(pid, signal.SIGKILL)
    killed.append(pid)


@pytest.mark.slow
def test_a_receiver_killed_mid_stream_is_started_again_and_nothing_is_lost_or_doubled(
    stream: str, tmp_path: Path, lines: list[bytes]
) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    split = len(lines) * 2 // 3
    asyncio.run(publish_lines(stream, lines[:split]))
    app = open_ledger(db)
    source = NatsSource(stream)
    source.restart_waits = (0.1, 0.2)
    log = Captured()
    follower = Follower(
        app, source, out=Captured(), log=log, options=FollowOptions(Bounds(50, 0.05), idle_exit=2.0)
    )
    killed: list[int] = []

    async def main() -> int:
        task = asyncio.create_task(follower.run())
        await _kill_receiver(source, follower, 300, killed)  # some stored, more held
        at_kill = follower.summary.stored
        await _kill_receiver(source, follower, at_kill + 200, killed)  # the new one too
        await publish_lines(stream, lines[split:])
        code = await task
        assert at_kill < split  # the first kill fell mid-stream
        return code

    try:
        code = asyncio.run(main())
        report = verify_store(app)
    finally:
        app.close()
    assert code == 0, log.text
    assert log.text.count("the NATS receiver ended (signal 9); starting another") == 2, log.text
    assert follower.metrics.errors.labels("receiver")._value.get() == 2
    assert follower.summary.stored == len(lines) and follower.summary.unstored == 0
    assert store_rows(db) == store_rows(batch_store(tmp_path / "batch.db", lines))
    assert _plain(follower.out.records) == [f.to_json() for f in report.findings]  # type: ignore[attr-defined]


def test_receivers_that_keep_dying_are_started_again_a_bounded_number_of_times(
    stream: str, tmp_path: Path, lines: list[bytes]
) -> None:
    asyncio.run(publish_lines(stream, lines))
    app = open_ledger(f"sqlite:///{tmp_path / 'l.db'}")
    source = NatsSource(stream)
    source.restart_waits = (0.05,)
    log = Captured()
    follower = Follower(
        app, source, out=Captured(), log=log, options=FollowOptions(Bounds(50, 0.05), idle_exit=5.0)
    )

    async def main() -> None:
        task = asyncio.create_task(follower.run())
        killed: list[int] = []
        await _kill_receiver(source, follower, 100, killed)
        await _kill_receiver(source, follower, 0, killed)
        await asyncio.wait_for(task, 30)

    try:
        with pytest.raises(SourceError, match="given up"):  # `ledger ingest --follow`: exit 2
            asyncio.run(main())
        stored = follower.summary.stored
    finally:
        app.close()
    assert "given up after 1 restart(s)" in log.text, log.text
    assert follower.metrics.errors.labels("receiver")._value.get() == 2
    assert 0 < stored < len(lines)
