"""The benchmark harness runs from the repository root and writes the JSON it documents."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_harness_runs_on_a_tiny_feed_and_writes_its_json(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "--rounds",
            "40",
            "--tables",
            "1",
            "--no-pg",
            "--memory",
            "20,40",
            "--runs",
            "1",
            "--jobs",
            "2",
            "--workdir",
            str(tmp_path),
            "--out",
            str(out),
            "--resumable",
            "2500,600,900",
            "--instructions",
            "off",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    body = json.loads(out.read_text())
    sqlite = body["median"]["sqlite"]
    for key in (
        "raw_write_rows_s",
        "raw_read_rows_s",
        "bare_append_events_s",
        "bare_read_decode_events_s",
        "ingest_events_s",
        "verify_events_s",
        "verify_rounds_s",
        "ratio_ingest_vs_bare_append",
        "ratio_verify_vs_bare_read_decode",
        "ratio_jobsN_vs_jobs1",
        "ingest_cpu_us_event",
        "verify_cpu_us_event",
    ):
        assert sqlite[key] > 0, key
    assert sqlite["jobs_identical_findings"] is True
    assert body["feed"]["rounds"] >= 40 and body["feed"]["games"]
    memory = body["memory"]["40"]
    assert "verify peak RSS 40 / 20 rounds" in body["verdict"]
    assert memory["verify"]["exit_code"] == 0 and memory["ingest"]["rejected"] == 0
    assert memory["verify"]["peak_rss_mb"] > 0
    assert set(body["verdict"]) >= {"sqlite ingest / bare append", "sqlite verify / bare read+decode"}
    assert "| ledger ingest (events/s) |" in done.stdout
    # Where the CPU goes: every stage measured, and the stages add up to the whole.
    stages = sqlite["verify_stages_cpu_us_event"]
    assert list(stages) == ["read", "chain", "decode + gather", "judge"]
    assert all(v >= 0 for v in stages.values()) and stages["read"] > 0
    assert sum(stages.values()) >= sqlite["verify_cpu_us_event"] * 0.99
    assert list(sqlite["ingest_stages_cpu_us_event"]) == ["parse + validate", "store"]
    assert "| verify: client CPU µs/event by stage | sqlite |" in done.stdout
    # Issue 15's targets ride along (bench.resumable, tiny sizes here).
    resumable = body["resumable"]["stores"]["sqlite"]
    assert resumable["segments2_identical"] is True and resumable["segments2_rows_once"] is True
    assert 0 < resumable["since_rows"] < resumable["full_rows"]
    assert any(name.startswith("issue 15: sqlite verify --since") for name in body["verdict"])
    assert "| verify --since last: s (CPU s), rows read |" in done.stdout
    assert "instructions" not in body  # off: bench.instructions has its own test
    assert not list(tmp_path.glob("ledger-bench-*"))  # the work folder is removed


@pytest.mark.slow
def test_the_resumable_bench_alone(tmp_path: Path) -> None:
    """``python -m bench.resumable``: its help, and a tiny run of every measurement."""
    helped = subprocess.run(
        [sys.executable, "-m", "bench.resumable", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert helped.returncode == 0 and "--base-events" in helped.stdout
    assert "--small" in helped.stdout
    out = tmp_path / "resumable.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.resumable",
            "--base-events",
            "2500",
            "--new-events",
            "600",
            "--mid-events",
            "900",
            "--tables",
            "1",
            "--new-tables",
            "1",
            "--repeat",
            "1",
            "--no-pg",
            "--workdir",
            str(tmp_path),
            "--out",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    body = json.loads(out.read_text())
    fig = body["stores"]["sqlite"]
    # Only the new rows are read by --since, and as many as a store of them alone holds.
    assert fig["since_rows"] == fig["fresh_rows"] < fig["full_rows"]
    # Two segments, each row read once, the findings of one pass.
    assert len(fig["segments"]) == 2 and sum(fig["segment_rows"]) == fig["full_rows"]
    assert fig["jobs2_rows"] == fig["full_rows"] == fig["store_rows"]
    assert fig["segments2_identical"] is True
    # Replay and recall from the checkpoint say what reading from the start says.
    assert set(fig["rounds"]) == {"STUD", "3CB"}
    for one in fig["rounds"].values():
        assert one["replay_same"] is True and one["recall_same"] is True
        assert one["replay_judged_from"] is not None  # it did start at a checkpoint
    assert [n["resumed_from"] for n in fig["nights"]] == [None, 1, 2, 3]
    assert fig["memory"]["big"]["exit_code"] == 0 and fig["memory"]["mid"]["exit_code"] == 0
    assert fig["memory"]["big"]["events"] == fig["memory"]["mid"]["events"] == fig["since_rows"]
    assert len(body["verdict"]) == 7 and all("met" in v for v in body["verdict"].values())
    assert "| target | value (wall) | client CPU | met |" in done.stdout
    assert not list(tmp_path.glob("ledger-resumable-*"))
