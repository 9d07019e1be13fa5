"""The judge in a process of its own: the same findings as the judge in the follower's process
(both stores), told once across a restart, and gone with the follower when it is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ledger.live.judge_process import RemoteJudge
from ledger.live.judging import LiveJudge
from ledger.live.sources import Bounds, FileSource
from ledger.services.ingest import Ingestor
from ledger.storage.store import open_ledger
from tests.live.conftest import run_follower

ROOT = Path(__file__).resolve().parents[2]


def test_the_remote_judge_finds_what_the_judge_in_process_finds(db_url: str, lines: list[bytes]) -> None:
    app = open_ledger(db_url)
    try:
        Ingestor(app).ingest(enumerate(lines[: len(lines) // 2], 1))
        here = LiveJudge(app)
        there = RemoteJudge(db_url)
        try:
            there.resume_from_checkpoint(None)
            first = [(f.finding.to_json(), f.key, f.index) for f in there.advance()]
            Ingestor(app).ingest(enumerate(lines, 1))  # the rest (the first half: duplicates)
            second = [(f.finding.to_json(), f.key, f.index) for f in there.advance()]
            position = there.position
        finally:
            there.close()
        expected = [(f.finding.to_json(), f.key, f.index) for f in here.advance()]
    finally:
        app.close()
    assert first and second and first + second == expected
    assert position == here.position


def test_a_follower_with_the_judge_process_tells_each_finding_once_across_a_restart(
    tmp_path: Path, lines: list[bytes]
) -> None:
    feed = tmp_path / "feed.jsonl"
    feed.write_bytes(b"".join(line + b"\n" for line in lines))
    url = f"sqlite:///{tmp_path / 'l.db'}"
    app = open_ledger(url)
    try:
        first, _ = run_follower(app, FileSource(str(feed)), bounds=Bounds(300, 0.05), judge_process=url)
        again, code = run_follower(app, FileSource(str(feed), str(tmp_path / "lost.json")), judge_process=url)
    finally:
        app.close()
    assert code == 0 and first.out.records  # type: ignore[attr-defined]
    assert again.summary.duplicates == len(lines) and again.out.records == []  # type: ignore[attr-defined]


def _children(pid: int) -> list[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(x) for x in text.split()]


def test_the_judge_process_ends_when_the_follower_is_killed(tmp_path: Path, lines: list[bytes]) -> None:
    feed = tmp_path / "feed.jsonl"
    feed.write_bytes(b"".join(line + b"\n" for line in lines))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cli.main",
            "ingest",
            "--db",
            f"sqlite:///{tmp_path / 'l.db'}",
            "--follow",
            str(feed),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stderr is not None
    proc.stderr.readline()  # "following …": the judge process answered
    judges = _children(proc.pid)
    assert len(judges) == 1
    assert b"ledger.live.judge_process" in Path(f"/proc/{judges[0]}/cmdline").read_bytes()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 30
    while Path(f"/proc/{judges[0]}").exists() and time.monotonic() < deadline:
        status = Path(f"/proc/{judges[0]}/status").read_text() if Path(f"/proc/{judges[0]}").exists() else ""
        if "State:\tZ" in status:
            break
        time.sleep(0.05)
    status = Path(f"/proc/{judges[0]}/status").read_text() if Path(f"/proc/{judges[0]}").exists() else ""
    assert not status or "State:\tZ" in status  # gone (or a zombie no one has reaped yet)
