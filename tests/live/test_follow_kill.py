"""SIGKILL of the follower, again and again, while lines arrive: afterwards the store holds the
same events as one batch ingest of the same lines (byte for byte, chain links aside, whose
batching differs), verify reports the same findings, and every finding was told exactly once:
on standard output (across all the followers' outputs), and on NATS in the stream
``LEDGER_FINDINGS`` (each finding's ``Nats-Msg-Id`` once: a repeat is dropped by the server).

Standard output has one instant in which a kill makes a repeat: between a finding's line being
written and its told row being stored (a single small write, no pause between them; the judging
process does not take SQLite's write lock for the Merkle tree meanwhile). A repeat is the same
line with the same ``finding_id`` (the de-duplication key of docs/FEED.md), so a consumer drops
it: the test checks that every line told again has the ``finding_id`` and the content of one
told before, that dropping repeats by ``finding_id`` leaves exactly the findings of verify (none
lost), that no run tells one twice, that what a killed run told and a later one told again is a
tail of what it told (its told row covers all before), and that repeats stay rare: at most
three of the runs end in such a tail (a kill falls in that instant well under one run in ten,
even on a loaded machine, where the write waits for a core), no finding told more than twice.
NATS must hold each once.

Fifteen kills of a follower of a NATS stream (the issue's fault), ten of a follower of a file
(the same code past the source), while the lines arrive over about a second per kill (the slow
tier; a start, with its judging and receiving children, takes most of that). The kill points are
seeded, one in each equal slice of 0.05 to 0.8 s after the follower says it is following (slices
of 50 and 75 ms, about the 50 ms batch window), so every run kills before, during and after
batches (a batch is stored within 200 ms of its first line). Thirty
uniform draws over that window, as before, left a stretch of 124 ms with no kill; the slices leave
none without one. Each follower is ``ledger ingest --follow`` forked from one interpreter that
imported the command once (``ledger_forks``, tests/live/conftest.py): the imports were most of
what the starts cost, and a kill needs a process, not its start."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import nats
import pytest
from nats.js.api import ConsumerConfig, DeliverPolicy

from ledger.live.judging import LiveJudge
from ledger.live.publish import FINDINGS_STREAM, publish_lines
from ledger.live.sources import FileSource, NatsSource
from ledger.live.told import finding_id, store_identity
from ledger.storage.store import open_ledger
from ledger.verify.engine import verify_store
from tests.live.conftest import NATS_BASE, batch_store, feed_lines, ledger_forks, run_follower, store_rows

KILLS = {"nats": 15, "file": 10}
SECONDS_PER_KILL = 1.0
EARLIEST, LATEST = 0.05, 0.8
"""The kill points' window, in seconds after the follower says it is following."""


def kill_points(kills: int, rng: random.Random) -> list[float]:
    """One point in each of ``kills`` equal slices of the window, in a shuffled order: the whole
    window is covered in every run (slices of 75 ms or less against a 50 ms batch window), where
    as many uniform draws leave gaps of several batches."""
    width = (LATEST - EARLIEST) / kills
    points = [EARLIEST + width * (n + rng.random()) for n in range(kills)]
    rng.shuffle(points)
    return points


ROOT = Path(__file__).resolve().parents[2]


def _feed_file(path: Path, lines: list[bytes], seconds: float) -> threading.Thread:
    def append() -> None:
        with path.open("ab") as f:
            for n, line in enumerate(lines, 1):
                f.write(line + b"\n")
                f.flush()
                if n % 20 == 0:
                    time.sleep(seconds * 20 / len(lines))

    return threading.Thread(target=append, daemon=True)


def _feed_stream(url: str, lines: list[bytes], seconds: float) -> threading.Thread:
    return threading.Thread(
        target=lambda: asyncio.run(publish_lines(url, lines, rate=len(lines) / seconds)), daemon=True
    )


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["file", pytest.param("nats", marks=pytest.mark.nats)])
def test_kill_9_loses_nothing_and_doubles_nothing(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    kills = KILLS[kind]
    lines = feed_lines(rounds=10, seed=11)
    db = f"sqlite:///{tmp_path / 'live.db'}"
    if kind == "nats":
        source = request.getfixturevalue("stream")
        feeder = _feed_stream(source, lines, SECONDS_PER_KILL * kills)
    else:
        source = str(tmp_path / "feed.jsonl")
        Path(source).write_bytes(b"")
        feeder = _feed_file(Path(source), lines, SECONDS_PER_KILL * kills)
    feeder.start()
    rng = random.Random(20261126)
    runs: list[list[dict]] = []
    began = datetime.now(UTC)
    command = ["ingest", "--db", db, "--follow", source, "--batch-window", "50ms"]
    with ledger_forks(tmp_path) as forks:
        for delay in kill_points(kills, rng):
            out = tmp_path / "out.jsonl"
            proc = forks.start(command, stdout=out)
            proc.stderr.readline()  # "following …": started, judged what was stored
            time.sleep(delay)
            proc.kill()
            assert proc.wait() == -signal.SIGKILL
            runs.append([json.loads(x) for x in out.read_text().splitlines() if x.endswith("}")])
    feeder.join(60)
    app = open_ledger(db)
    try:
        follower, code = run_follower(
            app, NatsSource(source) if kind == "nats" else FileSource(source), idle=1.0
        )
        live = verify_store(app)
    finally:
        app.close()
    runs.append(follower.out.records)  # type: ignore[attr-defined]
    told = [r for run in runs for r in run]
    batch = batch_store(tmp_path / "batch.db", lines)
    assert code == 0
    assert follower.summary.stored < len(lines)  # the killed ones had stored part of it
    assert store_rows(db) == store_rows(batch)
    once = open_ledger(batch, create=False)
    try:
        expected = [f.to_json() for f in verify_store(once).findings]
    finally:
        once.close()
    assert [f.to_json() for f in live.findings] == expected and live.integrity_ok
    # Dropping repeats by finding_id (docs/FEED.md) leaves each finding of verify once, in order:
    # none lost, none made up; a repeat is the same finding under the same id.
    first: dict[str, dict] = {}
    for r in told:
        plain = {k: v for k, v in r.items() if k not in ("detected_at", "finding_id")}
        assert first.setdefault(r["finding_id"], plain) == plain, r
    ids = _finding_ids(db)
    assert expected and list(first) == ids and list(first.values()) == expected
    # No run tells one twice; a kill in the one instant between a line written and its told row
    # stored repeats that line once, after the restart (see above). A follower that forgot what
    # it told would repeat every earlier finding at each restart.
    assert all(len({r["finding_id"] for r in run}) == len(run) for run in runs)
    seen = Counter(r["finding_id"] for r in told)
    extra = {i: n - 1 for i, n in seen.items() if n > 1}
    assert all(more == 1 for more in extra.values()), extra
    tails = []
    for n, run in enumerate(runs):
        later = {r["finding_id"] for after in runs[n + 1 :] for r in after}
        again = [r["finding_id"] in later for r in run]
        assert again == sorted(again), (n, again)  # told again: a tail of the run (False… then True…)
        tails += [n] if any(again) else []
    assert len(tails) <= 3, (tails, extra)
    if kind == "nats":
        published = asyncio.run(_published_ids(began))
        assert {i: published[i] for i in ids} == dict.fromkeys(ids, 1)


def _finding_ids(db: str) -> list[str]:
    """The ``Nats-Msg-Id`` of every finding of the store, from a judge run over it."""
    app = open_ledger(db, create=False)
    try:
        judge = LiveJudge(app)
        return [finding_id(store_identity(app), f.key, f.index) for f in judge.advance()]
    finally:
        app.close()


async def _published_ids(since: datetime) -> Counter[str]:
    """How many times each message id is kept in ``LEDGER_FINDINGS`` since ``since``."""
    nc = await nats.connect(NATS_BASE)
    counts: Counter[str] = Counter()
    try:
        js = nc.jetstream()
        sub = await js.pull_subscribe(
            "ledger.findings.>",
            stream=FINDINGS_STREAM,
            config=ConsumerConfig(deliver_policy=DeliverPolicy.BY_START_TIME, opt_start_time=since),
        )
        while True:
            try:
                msgs = await sub.fetch(1000, timeout=1.0)
            except (nats.errors.TimeoutError, TimeoutError):  # the client raises either at the end
                break
            for msg in msgs:
                counts[(msg.headers or {}).get("Nats-Msg-Id", "")] += 1
        await sub.unsubscribe()
    finally:
        await nc.close()
    return counts
