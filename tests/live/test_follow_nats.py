"""``ledger ingest --follow nats://HOST:PORT/STREAM`` against a real NATS server with
JetStream: acknowledged only after commit, a redelivered message is a duplicate, findings on
``ledger.findings.<table>``, rejects on ``ledger.rejects.<table>``, metrics."""

from __future__ import annotations

import asyncio
import json
from functools import partial
from pathlib import Path

import nats

from ledger.live.follower import Follower, FollowOptions
from ledger.live.judging import LiveJudge
from ledger.live.sources import Bounds, NatsAddress, NatsSource
from ledger.live.told import finding_id, reject_id, store_identity
from ledger.storage.store import open_ledger
from ledger.verify.engine import verify_store
from tests.live.conftest import Captured, batch_store, publish, run_follower, store_rows


def test_follow_a_stream_acks_after_commit_and_a_redelivery_is_a_duplicate(
    stream: str, tmp_path: Path, lines: list[bytes]
) -> None:
    asyncio.run(publish(stream, lines))
    url = f"sqlite:///{tmp_path / 'l.db'}"
    app = open_ledger(url)

    async def crash_after_commit_before_ack() -> int:
        source = NatsSource(stream)
        await source.open()
        batch = await source.next_batch(Bounds(150, 1.0))
        assert batch is not None and len(batch.lines) == 150
        follower = Follower(app, source, out=Captured(), log=Captured())
        assert await follower._store(batch)  # committed ...
        await source.nc.close()  # ... and the process dies before acknowledging
        return follower.summary.stored

    try:
        first = asyncio.run(crash_after_commit_before_ack())
        follower, code = run_follower(app, NatsSource(stream))
        report = verify_store(app)
    finally:
        app.close()
    assert (first, code) == (150, 0)
    # The 150 come again (at once, in order): duplicates, never second events.
    assert (follower.summary.duplicates, follower.summary.stored) == (150, len(lines) - 150)
    assert store_rows(url) == store_rows(batch_store(tmp_path / "batch.db", lines))
    assert report.integrity_ok


def test_findings_and_rejects_are_published_per_table(
    stream: str, tmp_path: Path, lines: list[bytes]
) -> None:
    hostile = b'{"v":1,"table":"RL-01","round":"000001","seq":"x","type":"bet_placed"}'
    address = NatsAddress.parse(stream)
    findings: list[tuple[str, dict, str | None]] = []
    rejects: list[tuple[str, dict, str | None]] = []

    async def main() -> Follower:
        nc = await nats.connect(address.server)
        await nc.subscribe("ledger.findings.>", cb=partial(_append, findings))
        await nc.subscribe("ledger.rejects.>", cb=partial(_append, rejects))
        await publish(stream, [*lines[:30], hostile, *lines[30:]])
        app = open_ledger(f"sqlite:///{tmp_path / 'l.db'}")
        follower = Follower(
            app,
            NatsSource(stream),
            out=Captured(),
            log=Captured(),
            rejects=Captured(),
            options=FollowOptions(Bounds(200, 0.05), idle_exit=0.6),
        )
        try:
            await follower.run()
        finally:
            app.close()
        await nc.flush()
        await asyncio.sleep(0.2)
        await nc.close()
        return follower

    follower = asyncio.run(main())
    printed = follower.out.records  # type: ignore[attr-defined]
    # The subjects are the property's, not this test's: keep only this store's messages (by their
    # Nats-Msg-Id), so that another follower on the same server cannot be heard here.
    ours = _finding_ids(f"sqlite:///{tmp_path / 'l.db'}")
    findings = [(s, r) for s, r, msg_id in findings if msg_id in ours]
    rejected = reject_id(NatsSource(stream).name, 31, "unknown_game")
    rejects = [(s, r) for s, r, msg_id in rejects if msg_id == rejected]
    assert printed and [r for _, r in findings] == printed
    assert all(subject == f"ledger.findings.{r['table']}" for subject, r in findings)
    assert [(s, r["code"], r["line"]) for s, r in rejects] == [("ledger.rejects.RL-01", "unknown_game", 31)]
    metrics = follower.metrics.text()
    assert f'ledger_follow_lines_total{{outcome="stored"}} {float(len(lines))}' in metrics
    assert 'ledger_follow_lines_total{outcome="rejected"} 1.0' in metrics
    assert f'ledger_follow_findings_total{{severity="error"}} {float(len(printed))}' in metrics


async def _append(into: list[tuple[str, dict, str | None]], msg: nats.aio.msg.Msg) -> None:
    into.append((msg.subject, json.loads(msg.data), (msg.headers or {}).get("Nats-Msg-Id")))


def _finding_ids(url: str) -> set[str]:
    """The ``Nats-Msg-Id`` of every finding of the store at ``url``, from a judge run over it."""
    app = open_ledger(url, create=False)
    try:
        return {finding_id(store_identity(app), f.key, f.index) for f in LiveJudge(app).advance()}
    finally:
        app.close()
