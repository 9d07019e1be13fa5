"""``ledger ingest --follow nats://HOST:PORT/STREAM`` against a real NATS server with
JetStream: acknowledged only after commit, a redelivered message is a duplicate, findings on
``ledger.findings.<table>``, rejects on ``ledger.rejects.<table>``, metrics."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from functools import partial
from pathlib import Path

import nats
import pytest
from nats.js.api import AckPolicy, ConsumerConfig

from bench.live import store_finding_ids
from ledger.live.follower import Follower, FollowOptions
from ledger.live.sources import Bounds, NatsAddress, NatsSource
from ledger.live.told import reject_id
from ledger.storage.store import open_ledger
from ledger.verify.engine import verify_store
from tests.live.conftest import (
    Captured,
    batch_store,
    children_of,
    process_ended,
    publish,
    run_follower,
    start_follower_process,
    store_rows,
)


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
        while batch is not None and not batch.lines:  # nothing came yet (a loaded machine)
            batch = await source.next_batch(Bounds(150, 1.0))
        assert batch is not None and len(batch.lines) == 150
        follower = Follower(app, source, out=Captured(), log=Captured())
        assert await follower._store(batch)  # committed ...
        assert source.receiver is not None
        source.receiver.kill()  # ... and the process dies before acknowledging
        await source.nc.close()
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


@pytest.mark.slow
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
    ours = store_finding_ids(f"sqlite:///{tmp_path / 'l.db'}")
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


@pytest.mark.slow
def test_an_old_consumer_with_explicit_acks_is_taken_over(
    stream: str, tmp_path: Path, lines: list[bytes]
) -> None:
    """A durable consumer left by another set-up (the "explicit" policy, acknowledgements with a
    gap): the follower makes it again with the "all" policy from its acknowledged floor; what
    was stored comes again as duplicates, nothing is lost."""
    address = NatsAddress.parse(stream)
    url = f"sqlite:///{tmp_path / 'l.db'}"
    batch_store(tmp_path / "l.db", lines[:150])  # stored by the earlier follower ...

    async def old_consumer() -> None:
        await publish(stream, lines)
        nc = await nats.connect(address.server)
        try:
            js = nc.jetstream()
            sub = await js.pull_subscribe(
                f"{address.stream}.>",
                durable="ledger-follower",
                stream=address.stream,
                config=ConsumerConfig(ack_policy=AckPolicy.EXPLICIT),
            )
            got: list[nats.aio.msg.Msg] = []
            while len(got) < 150:
                got += await sub.fetch(150 - len(got), timeout=5)
            for msg in got[:100] + got[120:150]:  # ... which acknowledged these, not 101-120
                await msg.ack()
            await nc.flush()
        finally:
            await nc.close()

    async def policy() -> tuple[AckPolicy | None, int]:
        nc = await nats.connect(address.server)
        try:
            info = await nc.jetstream().consumer_info(address.stream, "ledger-follower")
        finally:
            await nc.close()
        return info.config.ack_policy, info.ack_floor.stream_seq

    asyncio.run(old_consumer())
    app = open_ledger(url)
    try:
        follower, code = run_follower(app, NatsSource(stream))
    finally:
        app.close()
    assert code == 0
    assert (follower.summary.duplicates, follower.summary.stored) == (50, len(lines) - 150)
    assert store_rows(url) == store_rows(batch_store(tmp_path / "batch.db", lines))
    assert asyncio.run(policy()) == (AckPolicy.ALL, len(lines))


def _receiver_of(pid: int) -> int:
    """The follower's receiving process (one of its children)."""
    for child in children_of(pid):
        if b"ledger.live.receiver" in Path(f"/proc/{child}/cmdline").read_bytes():
            return child
    raise AssertionError("no receiver process")


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
@pytest.mark.slow
def test_the_receiver_ends_with_its_follower(
    how: signal.Signals, stream: str, tmp_path: Path, lines: list[bytes]
) -> None:
    """SIGTERM drains (exit 0, everything stored is acknowledged); SIGKILL acknowledges nothing
    more. Either way the receiving process does not outlive the follower."""
    asyncio.run(publish(stream, lines))
    db = f"sqlite:///{tmp_path / 'l.db'}"
    proc = start_follower_process(db, stream, tmp_path)  # the receiver is there
    receiver = _receiver_of(proc.pid)
    deadline = time.monotonic() + 60
    while len(store_rows(db)) < len(lines) and time.monotonic() < deadline:
        time.sleep(0.2)
    proc.send_signal(how)
    code = proc.wait(60)
    assert process_ended(receiver)
    if how == signal.SIGTERM:
        assert code == 0
        address = NatsAddress.parse(stream)

        async def floor() -> int:
            nc = await nats.connect(address.server)
            try:
                info = await nc.jetstream().consumer_info(address.stream, "ledger-follower")
            finally:
                await nc.close()
            return int(info.ack_floor.stream_seq)

        assert asyncio.run(floor()) == len(lines)
