"""The try-out of docs/OPERATIONS.md ("Live: following the tables") runs as shown: a follower,
a simulated property published in real time, a finding per injected error on standard output,
the same findings from ``ledger verify``. The NATS address is the test server's and the stream
one of the test's own; the block's own ``nats-server`` line is left out (the server runs)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def tryout() -> str:
    text = (ROOT / "docs" / "OPERATIONS.md").read_text(encoding="utf-8")
    section = text.split("## Live: following the tables", 1)[1]
    found = re.search(r"^### Try it\n.*?^```sh\n(.*?)^```$", section, re.S | re.M)
    assert found, "the try-out block is missing"
    return found.group(1)


@pytest.mark.slow
def test_the_tryout_runs_as_shown(stream: str, tmp_path: Path) -> None:
    body = tryout()
    assert body.startswith("nats-server -js ")
    body = "\n".join(body.splitlines()[1:]).replace("nats://127.0.0.1:4222/TRYOUT", stream)
    bindir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    assert shutil.which("ledger", path=env["PATH"]), "the ledger command is not installed"
    done = subprocess.run(
        [shutil.which("dash") or "/bin/sh", "-ec", body],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    live = [json.loads(x) for x in (tmp_path / "findings.jsonl").read_text().splitlines()]
    verified = json.loads((tmp_path / "verify.json").read_text())["findings"]
    plain = [{k: v for k, v in f.items() if k not in ("detected_at", "finding_id")} for f in live]
    assert live and plain == verified
    assert "injected errors" in done.stderr and f"{len(live)} findings" in done.stderr
