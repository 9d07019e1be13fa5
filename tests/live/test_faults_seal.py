"""SIGKILL of the follower while it seals on a timer (``--seal-every``). Before each of eight
followers starts, a ninth of the day is appended to the followed file; each stores it and seals
at once (a seal verifies the rows since the previous checkpoint, then stores the checkpoint and,
in a separate write, its seal index). Every other follower is killed at random (seeded) in its
first 1.2 s, mostly during that seal; the others the moment their new checkpoint row is seen
(between the checkpoint and its seal index). Afterwards (a last follower stores the rest) the
store verifies clean, every stored checkpoint is valid under the store's sealing public key and
they chain (numbers and rows rising), the newest agrees with the store, and the store equals a
batch ingest of the lines: nothing doubled. Each follower is ``ledger ingest --follow`` forked from
one interpreter that imported the command once (``ledger_forks``, tests/live/conftest.py)."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from ledger.live.sources import FileSource
from ledger.proof import checkpoints
from ledger.proof.seal import generate_key, private_pem
from ledger.storage.store import open_ledger
from ledger.verify.engine import verify_store
from tests.live.conftest import batch_store, ledger_forks, run_follower, store_rows

KILLS = 8
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_kill_9_during_timed_seals_leaves_a_valid_chain_of_checkpoints(
    tmp_path: Path, lines: list[bytes]
) -> None:
    key = generate_key()
    pem = tmp_path / "seal.pem"
    pem.write_bytes(private_pem(key))
    path = tmp_path / "live.db"
    db = f"sqlite:///{path}"
    app = open_ledger(db)
    try:
        checkpoints.CheckpointStore(app).close()
        checkpoints.name_sealing_key(app, key.public_key())
    finally:
        app.close()
    feed = tmp_path / "feed.jsonl"
    feed.write_bytes(b"")
    step = len(lines) // (KILLS + 1) + 1
    command = ["ingest", "--db", db, "--follow", str(feed)]
    command += ["--batch-window", "50ms", "--seal-every", "100ms", "--seal-key", str(pem)]
    rng = random.Random(20261127)
    with ledger_forks(tmp_path) as forks:
        for n in range(KILLS):
            with feed.open("ab") as f:  # new lines for each follower to store and seal
                f.write(b"".join(line + b"\n" for line in lines[n * step : (n + 1) * step]))
            proc = forks.start(command, stdout=Path(os.devnull))
            proc.stderr.readline()  # "following …"; the first timed seal starts at once
            if n % 2:
                time.sleep(rng.uniform(0.0, 1.2))  # most often while it seals (verifies, then writes)
            else:
                _stored_one_more(path, within=5.0)  # just after a checkpoint, before its seal index
            proc.kill()
            assert proc.wait() == -signal.SIGKILL
    with feed.open("ab") as f:
        f.write(b"".join(line + b"\n" for line in lines[KILLS * step :]))
    app = open_ledger(db)
    try:
        follower, code = run_follower(app, FileSource(str(feed)), idle=1.0, seal_every=0.1, seal_key=key)
        report = verify_store(app)
        stored = checkpoints.read_checkpoints(app)
        newest = stored.latest()
        assert newest is not None
        problems = checkpoints.resume_findings(app, newest.checkpoint)
    finally:
        app.close()
    assert code == 0 and follower.summary.stored < len(lines)  # the killed ones stored part of it
    assert report.integrity_ok
    assert stored.trusted and stored.invalid == [] and len(stored.valid) > KILLS // 2
    numbers = [s.number for s in stored.valid]
    positions = [s.position for s in sorted(stored.valid, key=lambda s: s.number)]
    assert numbers == sorted(numbers) and positions == sorted(set(positions)), (numbers, positions)
    assert problems == []
    assert store_rows(db) == store_rows(batch_store(tmp_path / "batch.db", lines))


def _stored_one_more(path: Path, within: float) -> None:
    """Wait (at most ``within`` seconds) until the follower has stored one more checkpoint."""
    conn = sqlite3.connect(path, timeout=5)
    try:
        before = _count(conn)
        deadline = time.monotonic() + within
        while _count(conn) == before and time.monotonic() < deadline:
            time.sleep(0.002)
    finally:
        conn.close()


def _count(conn: sqlite3.Connection) -> int:
    while True:
        try:
            return int(conn.execute("SELECT COUNT(*) FROM ledger_checkpoints").fetchone()[0])
        except sqlite3.OperationalError:  # locked for a moment
            time.sleep(0.01)
