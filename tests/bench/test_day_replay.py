"""``python -m bench.day_replay`` runs on a tiny store of several days and writes its JSON: the
day report by position prints what the full pass prints, and replay what it printed before."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_day_replay_runs_on_a_tiny_store(tmp_path: Path) -> None:
    out = tmp_path / "day-replay.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.day_replay",
            "--rounds",
            "60",
            "--tables",
            "1",
            "--minutes",
            "90",
            "--runs",
            "1",
            "--workdir",
            str(tmp_path / "work"),
            "--out",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    body = json.loads(out.read_text(encoding="utf-8"))
    assert body["store"]["days"] >= 3
    assert body["days"] and all(day["identical"] for day in body["days"])
    assert body["replay"] and all(row["same"] for row in body["replay"])
