"""The follower's two children run in sessions of their own (where the kernel shares the CPU
between sessions first, their work then does not come out of the storing thread's share), and
still end with the follower."""

from __future__ import annotations

import os
from pathlib import Path

from ledger.live.judge_process import RemoteJudge
from ledger.live.receiver import Receiver
from ledger.storage.store import open_ledger
from tests.live.conftest import process_ended


def test_the_judging_process_runs_in_a_session_of_its_own_and_ends_with_the_follower(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'judge.db'}"
    open_ledger(url).close()
    judge = RemoteJudge(url, tree=True)
    pid = judge._process.pid
    try:
        judge.resume_from_checkpoint(None)  # it answers: it is up
        assert os.getsid(pid) == pid != os.getsid(0)
    finally:
        judge.close()
    assert process_ended(pid)


def test_the_receiving_process_runs_in_a_session_of_its_own(stream: str) -> None:
    receiver = Receiver(stream, "sessions")
    pid = receiver.process.pid
    try:
        assert os.getsid(pid) == pid != os.getsid(0)
    finally:
        receiver.discard()
