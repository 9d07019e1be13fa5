"""``ledger ingest --follow FILE`` and ``-``: batches, live findings equal to verify's, rotation,
restart where it stopped, hostile lines, a silent table, one follower per store."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ledger.live import follower as follower_module
from ledger.live.follower import Follower, FollowOptions
from ledger.live.lock import FollowerLock, FollowerRunning
from ledger.live.sources import Batch, Bounds, FileSource
from ledger.merkle.log import MerkleLog
from ledger.merkle.rfc6962 import reference_root
from ledger.merkle.tree import row_leaf
from ledger.storage.store import open_ledger
from ledger.verify.engine import verify_store
from tests.live.conftest import Captured, batch_store, run_follower, store_rows


def _write(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"".join(line + b"\n" for line in lines))


def _without_detected_at(records: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in ("detected_at", "finding_id")} for r in records]


def test_the_tree_extended_beside_the_storing_covers_every_row(
    db_url: str, tmp_path: Path, lines: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tree, extended every 40 rows from the rows the saves returned (on PostgreSQL in a
    thread of its own, while the next batch is stored), ends with one leaf per stored row, in
    row order: its root is the root of every row's leaf."""
    monkeypatch.setattr(follower_module, "TREE_EVERY_ROWS", 40)
    feed = tmp_path / "feed.jsonl"
    _write(feed, lines)
    app = open_ledger(db_url)
    try:
        follower, code = run_follower(app, FileSource(str(feed)), bounds=Bounds(50, 0.05))
        rows = [row for page in app.rows() for row in page]
        leaves = [row_leaf(oid, version, topic, state) for _, oid, version, topic, state in rows]
        with MerkleLog(app) as tree:
            head = tree.head()
    finally:
        app.close()
    assert code == 0 and follower.summary.batches >= len(lines) // 50
    assert head.size == len(leaves) > len(lines)
    assert head.root == reference_root(leaves)


def test_live_findings_are_verify_findings(db_url: str, tmp_path: Path, lines: list[bytes]) -> None:
    feed = tmp_path / "feed.jsonl"
    _write(feed, lines)
    app = open_ledger(db_url)
    try:
        follower, code = run_follower(app, FileSource(str(feed)), bounds=Bounds(50, 0.05))
        live = follower.out.records  # type: ignore[attr-defined]
        report = verify_store(app)
    finally:
        app.close()
    assert code == 0
    assert follower.summary.stored == len(lines)
    assert follower.summary.batches >= len(lines) // 50  # bounded by count
    assert live, "the feed has injected errors: the live judge must find them"
    assert all(r["detected_at"].endswith("+00:00") for r in live)
    assert _without_detected_at(live) == [f.to_json() for f in report.findings]


@pytest.mark.slow
def test_findings_go_out_as_the_round_closes(tmp_path: Path, lines: list[bytes]) -> None:
    """A finding is written in the batch that stores its round's close, not at the end."""
    feed = tmp_path / "feed.jsonl"
    feed.write_bytes(b"")
    app = open_ledger(f"sqlite:///{tmp_path / 'l.db'}")
    out, seen = Captured(), []
    follower = Follower(
        app,
        FileSource(str(feed)),
        out=out,
        log=Captured(),
        options=FollowOptions(Bounds(200, 0.05), idle_exit=1.0),
    )

    async def main() -> None:
        task = asyncio.create_task(follower.run())
        with feed.open("ab") as f:
            for line in lines:
                f.write(line + b"\n")
                f.flush()
                if b'"round_closed"' in line and b'"STUD' in line and len(seen) < 3:
                    await asyncio.sleep(0.3)
                    seen.append(len(out.records))
        await task

    try:
        asyncio.run(main())
    finally:
        app.close()
    assert seen[-1] > 0 and seen[0] < len(out.records)  # findings came out along the way


@pytest.mark.slow
def test_rotation_and_restart_where_it_stopped(tmp_path: Path, lines: list[bytes]) -> None:
    feed = tmp_path / "feed.jsonl"
    half = len(lines) // 2
    _write(feed, lines[:half])
    url = f"sqlite:///{tmp_path / 'l.db'}"
    app = open_ledger(url)
    follower = Follower(
        app,
        FileSource(str(feed)),
        out=Captured(),
        log=Captured(),
        options=FollowOptions(Bounds(100, 0.05), idle_exit=1.0),
    )

    async def main() -> None:
        task = asyncio.create_task(follower.run())
        await asyncio.sleep(0.5)
        os.rename(feed, tmp_path / "feed.jsonl.1")  # logrotate: move away, create again
        _write(feed, lines[half : half + 100])
        await task

    try:
        asyncio.run(main())
        assert follower.summary.stored == half + 100
        with feed.open("ab") as f:  # appended while no follower runs
            f.write(b"".join(line + b"\n" for line in lines[half + 100 :]))
        again, code = run_follower(app, FileSource(str(feed)))
    finally:
        app.close()
    assert code == 0
    # Started again: it continues at its recorded offset (nothing read twice).
    assert (again.summary.stored, again.summary.duplicates) == (len(lines) - half - 100, 0)
    assert store_rows(url) == store_rows(batch_store(tmp_path / "batch.db", lines))


@pytest.mark.slow
def test_a_lost_offset_only_reads_duplicates(tmp_path: Path, lines: list[bytes]) -> None:
    """Without its state file (or with a state older than the store) the follower reads lines
    already stored: each is a duplicate, nothing is stored twice."""
    feed = tmp_path / "feed.jsonl"
    _write(feed, lines)
    url = f"sqlite:///{tmp_path / 'l.db'}"
    app = open_ledger(url)
    try:
        run_follower(app, FileSource(str(feed)))
        (tmp_path / "feed.jsonl.follow.json").unlink()
        again, _ = run_follower(app, FileSource(str(feed)))
    finally:
        app.close()
    assert (again.summary.stored, again.summary.duplicates) == (0, len(lines))
    assert store_rows(url) == store_rows(batch_store(tmp_path / "batch.db", lines))


def test_hostile_lines_are_rejected_with_their_code_and_the_stream_goes_on(
    tmp_path: Path, lines: list[bytes]
) -> None:
    hostile = [
        b"not json",
        b'{"v":1,"table":"RL-01"}',
        b"x" * 300_000,
        b'{"v":1,"table":"RL-01","round":"000001","seq":1,"type":"round_opened"}',
        lines[0].replace(b'"seq":1', b'"seq":1,"seq":2'),
    ]
    feed = tmp_path / "feed.jsonl"
    _write(feed, lines[:50] + hostile + lines[50:])
    app = open_ledger(f"sqlite:///{tmp_path / 'l.db'}")
    try:
        follower, code = run_follower(app, FileSource(str(feed)))
    finally:
        app.close()
    codes = [r["code"] for r in follower.rejects.records]  # type: ignore[union-attr]
    assert code == 0 and follower.summary.stored == len(lines)
    assert len(codes) == len(hostile) and "line_too_long" in codes and "invalid_json" in codes
    assert {r["line"] for r in follower.rejects.records} == set(range(51, 51 + len(hostile)))  # type: ignore[union-attr]


@pytest.mark.slow
def test_a_silent_table_leaves_its_round_in_play_not_a_finding(tmp_path: Path, lines: list[bytes]) -> None:
    last_close = max(i for i, line in enumerate(lines) if b'"RL-01"' in line and b'"round_closed"' in line)
    silent = [line for i, line in enumerate(lines) if i != last_close]  # RL-01 stops mid-round
    feed = tmp_path / "feed.jsonl"
    _write(feed, silent)
    app = open_ledger(f"sqlite:///{tmp_path / 'l.db'}")
    try:
        follower, _ = run_follower(app, FileSource(str(feed)))
        last_round = json.loads(lines[last_close])["round"]
        report = verify_store(app)
    finally:
        app.close()
    live = follower.out.records  # type: ignore[attr-defined]
    assert not [r for r in live if r["table"] == "RL-01" and r["round"] == last_round]
    # verify, at the end of the log, calls the same round in play (information, not an error)
    assert [f.severity for f in report.findings if f.table == "RL-01" and f.round == last_round] in (
        [],
        ["info"],
    )


def test_a_second_follower_on_one_store_is_refused(db_url: str) -> None:
    first = FollowerLock(db_url)
    first.acquire()
    try:
        with pytest.raises(FollowerRunning, match="another follower"):
            FollowerLock(db_url).acquire()
    finally:
        first.release()
    again = FollowerLock(db_url)
    again.acquire()  # released: the next one may start
    again.release()


@pytest.mark.slow
def test_stdin_follow_a_second_is_refused_sigterm_drains_and_exits_0(
    tmp_path: Path, lines: list[bytes]
) -> None:
    """The command itself: lines piped in are stored and judged; a second follower on the same
    store is refused (exit 2); SIGTERM ends the first with 0 and every line read is stored."""
    db = f"sqlite:///{tmp_path / 'l.db'}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "ingest", "--db", db, "--follow", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )
    assert proc.stdin is not None
    proc.stdin.write(b"".join(line + b"\n" for line in lines))
    proc.stdin.flush()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        time.sleep(0.3)
        if len(store_rows(db)) >= len(lines) if Path(tmp_path / "l.db").exists() else False:
            break
    second = subprocess.run(
        [sys.executable, "-m", "cli.main", "ingest", "--db", db, "--follow", "-"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
        timeout=30,
    )
    assert second.returncode == 2 and b"another follower is running" in second.stderr
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err.decode()
    assert b"stopped:" in err
    findings = [json.loads(x) for x in out.splitlines()]
    assert findings and all("detected_at" in f for f in findings)
    assert store_rows(db) == store_rows(batch_store(tmp_path / "batch.db", lines))


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--follow", "nats://127.0.0.1:1/S"], "cannot reach NATS at nats://127.0.0.1:1"),
        (["--follow", "nats://127.0.0.1:4222/a.b"], "is not nats://HOST:PORT/STREAM"),
        (["--follow", "/no/such/feed.jsonl"], "no such file: /no/such/feed.jsonl"),
        (["--follow", "-", "--seal-every", "5m"], "--seal-every needs the sealing key"),
        (["--follow", "-", "--batch-window", "0"], "is not a duration"),
        (["--follow", "-", "feed.jsonl"], "either FILE... or --follow SOURCE"),
        ([], "give FILE..."),
    ],
)
def test_follow_usage_errors_are_one_line_and_exit_2(tmp_path: Path, args: list[str], says: str) -> None:
    from typer.testing import CliRunner

    from cli.main import app

    done = CliRunner().invoke(
        app, ["ingest", "--db", f"sqlite:///{tmp_path / 'l.db'}", *args], env={"LEDGER_SEAL_KEY": ""}
    )
    assert done.exit_code == 2, done.output
    assert says in done.output and len(done.output.strip().splitlines()) == 1


def test_simulate_out_dash_plays_the_feed_on_stdout_at_its_rate(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from cli.main import app

    runner = CliRunner()
    whole = runner.invoke(
        app,
        ["simulate", "--game", "RL", "--rounds", "2", "--tables", "1", "--out", str(tmp_path / "f.jsonl")],
    )
    started = time.monotonic()
    played = runner.invoke(
        app, ["simulate", "--game", "RL", "--rounds", "2", "--tables", "1", "--out", "-", "--rate", "100"]
    )
    seconds = time.monotonic() - started
    assert whole.exit_code == played.exit_code == 0
    lines = (tmp_path / "f.jsonl").read_text().splitlines()
    assert played.stdout.splitlines() == lines  # the same feed, byte for byte
    assert seconds >= (len(lines) - 1) / 100  # paced, not dumped
    refused = runner.invoke(app, ["simulate", "--out", str(tmp_path / "g.jsonl"), "--rate", "5"])
    assert refused.exit_code == 2 and "--rate plays the feed in real time" in refused.output


class _SlowToStart(FileSource):
    """A file source whose start takes longer than the follower's ``--idle-exit`` (a broker far
    away, a loaded machine) and whose first read finds nothing yet."""

    def __init__(self, path: str, start_seconds: float) -> None:
        super().__init__(path)
        self.start_seconds = start_seconds
        self._empty_first = True

    async def open(self) -> None:
        await asyncio.sleep(self.start_seconds)
        await super().open()

    async def next_batch(self, bounds: Bounds, ready: asyncio.Future[Any] | None = None) -> Batch | None:
        if self._empty_first:
            self._empty_first = False
            return Batch()
        return await super().next_batch(bounds, ready)


def test_idle_exit_counts_from_the_start_of_following_not_from_the_start_of_the_process(
    tmp_path: Path, lines: list[bytes]
) -> None:
    """A start slower than ``--idle-exit`` is not idleness: every line is still stored."""
    feed = tmp_path / "feed.jsonl"
    _write(feed, lines[:300])
    app = open_ledger(f"sqlite:///{tmp_path / 'l.db'}")
    try:
        follower, code = run_follower(app, _SlowToStart(str(feed), 0.5), idle=0.3)
    finally:
        app.close()
    assert (code, follower.summary.stored) == (0, 300)
