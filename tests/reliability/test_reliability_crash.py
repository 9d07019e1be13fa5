"""Crash safety: ``ledger ingest`` SIGKILLed at seeded points, then re-run, on SQLite and PostgreSQL.

Two kinds of kill, both seeded:

- **in-process** (deterministic): the ingest kills itself at save *n*, before the save, inside
  its open transaction (rows written, not committed), or just after the commit;
- **external**: the real ``ledger ingest`` command, SIGKILLed from outside after a random delay.

The final re-run (of ``ingest``, then of ``projections update``) is the same command in this
process: it is killed by no one, and a real process of it only paid its imports again.

After every kill the store holds, for each round, a prefix of its feed lines (a save is atomic:
no partial save is ever visible) and the chain verifies; after the final re-run every feed line is
stored exactly once and verify finds nothing. If the projection updater is present, it is killed
the same way and its views must equal a rebuild. ``LEDGER_CRASH_RUNS`` scales the number of kills.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from ledger.storage.store import open_ledger
from tests.conftest import tiered

RUNS = int(os.environ.get("LEDGER_CRASH_RUNS", "2"))
SEED = int(os.environ.get("LEDGER_CRASH_SEED", "20261121"))
BATCH = 40


def _feed(harness, tmp_path: Path, rounds: int = 8) -> Path:
    """A simulated RL and FPC feed, written in this process (the kills are the subprocesses)."""
    feed = tmp_path / "feed.jsonl"
    result = harness.run_in_process(
        [
            "simulate",
            "--out",
            str(feed),
            "--rounds",
            str(rounds),
            "--tables",
            "2",
            "--seed",
            "5",
            "--game",
            "RL,FPC",
        ]
    )
    assert result.returncode == 0, result.stderr
    return feed


def _kill_after(cmd: list[str], env: dict[str, str], delay: float) -> int:
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    return proc.returncode


@pytest.mark.slow
def test_ingest_killed_anywhere_then_rerun_stores_every_line_exactly_once(db_url, harness, tmp_path) -> None:
    rng = random.Random(f"{SEED}:{db_url.split(':')[0]}")
    feed = _feed(harness, tmp_path)
    expected = harness.feed_rounds(feed)
    lines = sum(len(v) for v in expected.values())
    saves = lines // BATCH + 1
    env = harness.cli_env()
    stored_before = 0
    outcomes: list[tuple[str, int, int]] = []
    for run in range(RUNS):
        phase = ("inside", "before", "after")[run % 3]
        kill_at = rng.randint(1, max(1, saves // 2))
        proc = subprocess.run(
            harness.driver_cmd(db_url, feed, kill_at, phase, BATCH), env=env, capture_output=True, timeout=120
        )
        assert proc.returncode in (-signal.SIGKILL, 0), proc.stderr.decode()[-2000:]
        app = open_ledger(db_url)
        try:
            stored = harness.assert_prefix_of_feed(app, expected)
        finally:
            app.close()
        assert stored >= stored_before  # nothing committed is ever lost
        stored_before = stored
        outcomes.append((phase, kill_at, stored))
    for _ in range(max(1, RUNS - 1)):  # the real command, killed from outside
        code = _kill_after(harness.cli_cmd("ingest", str(feed), "--db", db_url), env, rng.uniform(0.2, 1.2))
        assert code in (-signal.SIGKILL, 0)
        app = open_ledger(db_url)
        try:
            stored_before = max(stored_before, harness.assert_prefix_of_feed(app, expected))
        finally:
            app.close()
    assert outcomes[-1][2] > 0 or outcomes[0][2] < lines  # some kill landed mid-feed
    final = harness.run_in_process(["ingest", str(feed), "--db", db_url, "--json"])  # the re-run
    assert final.returncode == 0, final.stderr[-2000:]
    app = open_ledger(db_url)
    try:
        harness.assert_exactly_the_feed(app, expected)
    finally:
        app.close()
    _projections_survive_kills(db_url, harness, rng)


def _projections_survive_kills(db_url: str, harness, rng: random.Random) -> None:
    """HOOK (projections): kill ``ledger projections update`` at seeded delays, re-run it, and
    compare every view with a rebuild. Skipped while ``projections.updater`` does not exist."""
    if os.environ.get("LEDGER_CRASH_NO_PROJECTIONS"):
        return  # ingest only (e.g. while another area is mid-change)
    try:
        from projections.registry import registered_views
        from projections.updater import rebuild
    except ImportError:
        return  # the updater has not landed: nothing to crash yet
    env = harness.cli_env()
    for _ in range(max(1, RUNS - 1)):
        code = _kill_after(
            harness.cli_cmd("projections", "update", "--db", db_url), env, rng.uniform(0.2, 0.8)
        )
        assert code in (-signal.SIGKILL, 0)
    done = harness.run_in_process(["projections", "update", "--db", db_url])  # the re-run
    assert done.returncode == 0, done.stderr[-2000:]
    app = open_ledger(db_url)
    try:
        for view in registered_views():
            assert rebuild(app, view).keys == [], view.name
    finally:
        app.close()


# A kill inside the first save's transaction (nothing of it stored) by default; a kill after the
# second save's commit (both saves whole) in the slow tier: one real process each.
@pytest.mark.slow_postgres
@pytest.mark.parametrize(
    ("kill_at", "phase", "stored"), tiered([(1, "inside", 0), (2, "after", 2 * BATCH)], 1)
)
def test_a_kill_inside_the_transaction_leaves_nothing_of_that_save(
    db_url, harness, tmp_path, kill_at: int, phase: str, stored: int
) -> None:
    feed = _feed(harness, tmp_path, rounds=4)
    expected = harness.feed_rounds(feed)
    env = harness.cli_env()
    proc = subprocess.run(
        harness.driver_cmd(db_url, feed, kill_at, phase, BATCH, 1), env=env, capture_output=True, timeout=120
    )  # one save per transaction, so that the kill points are saves
    assert proc.returncode == -signal.SIGKILL
    app = open_ledger(db_url)
    try:
        assert harness.assert_prefix_of_feed(app, expected) == stored  # whole saves only
        if stored == 0:
            assert app.head() is None  # the first save never happened
    finally:
        app.close()
    time.sleep(0)  # (no timing involved: the kill points are save numbers)
