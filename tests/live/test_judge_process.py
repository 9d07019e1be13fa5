"""The judge in a process of its own: the same findings as the judge in the follower's process
(both stores), told once across a restart, and gone with the follower when it is killed."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from ledger.live.judge_process import RemoteJudge
from ledger.live.judging import LiveJudge
from ledger.live.sources import Bounds, FileSource
from ledger.merkle.log import MerkleLog
from ledger.services.ingest import Ingestor
from ledger.storage.store import open_ledger
from tests.live.conftest import children_of, process_ended, run_follower, start_follower_process


# The judge process reads the store through the same reader as the judge in the follower's
# process, whose PostgreSQL case (test_follow_file's live findings) runs by default.
@pytest.mark.slow_postgres
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_the_judge_process_ends_when_the_follower_is_killed(tmp_path: Path, lines: list[bytes]) -> None:
    feed = tmp_path / "feed.jsonl"
    feed.write_bytes(b"".join(line + b"\n" for line in lines))
    proc = start_follower_process(f"sqlite:///{tmp_path / 'l.db'}", str(feed), tmp_path)
    judges = children_of(proc.pid)  # the judge process answered
    assert len(judges) == 1
    assert b"ledger.live.judge_process" in Path(f"/proc/{judges[0]}/cmdline").read_bytes()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert process_ended(judges[0])  # gone (or a zombie no one has reaped yet)


def test_after_findings_the_tree_waits_until_they_are_told(tmp_path: Path, lines: list[bytes]) -> None:
    """On SQLite the tree's write holds the lock the told row waits for: after an answer that
    carries findings, the judging process extends the tree only once the follower says their
    told row is written, not in the instant in which a kill would make them told again."""
    url = f"sqlite:///{tmp_path / 'l.db'}"
    app = open_ledger(url)
    try:
        Ingestor(app, extend_tree=False).ingest(enumerate(lines, 1))
        stored = sum(len(page) for page in app.rows())
        judge = RemoteJudge(url, tree=True)
        try:
            judge.resume_from_checkpoint(None)
            found = judge.advance()
            assert judge.advance() == []  # a round trip: the child did what followed the first answer
            with MerkleLog(app) as tree:
                waiting = tree.head().size
            judge.told(judge.position)
            judge.advance()  # a round trip after the told: it has been handled
            with MerkleLog(app) as tree:
                told = tree.head().size
        finally:
            judge.close()
    finally:
        app.close()
    assert found and waiting == 0 and told == stored
