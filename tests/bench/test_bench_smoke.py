"""The benchmark harness runs from the repository root and writes the JSON it documents."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # the whole harness in child processes; the bench.* modules have tests of their own
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


def test_the_table_prints_the_cache_misses_beside_the_bare_figures() -> None:
    """Where valgrind counted with the cache simulated, ``python -m bench`` prints, for ingest
    and verify, the bare figure per event, the ledger's and bare ÷ ledger, in instructions, L1
    data misses and L2 misses (no valgrind run here: the figures are given)."""
    from bench.instructions import ratios, side_by_side
    from bench.run import render

    figures = {
        "bare_append": {"instructions": 225_000.0, "d1_misses": 900.0, "l2_misses": 60.0},
        "ingest": {"instructions": 180_000.0, "d1_misses": 1_000.0, "l2_misses": 40.0},
        "bare_read": {"instructions": 90_000.0, "d1_misses": 400.0, "l2_misses": 10.0},
        "verify": {"instructions": 100_000.0, "d1_misses": 800.0, "l2_misses": 20.0},
    }
    counted = {
        "feed": {"rounds": 12, "lines": 500},
        "per_event": figures,
        "ratios": ratios(figures),
        "side_by_side": side_by_side(figures),
    }
    results = {
        "feed": {"rounds": 12, "lines": 500, "games": ["SP9"]},
        "runs": [{}],
        "median": {"sqlite": {}},
        "verdict": {},
        "instructions": counted,
    }
    text = render(results)
    for row in (
        "| ingest vs bare append: instructions/event | 225,000 | 180,000 | 1.25 |",
        "| ingest vs bare append: L1d misses/event | 900 | 1,000 | 0.90 |",
        "| ingest vs bare append: L2 misses/event | 60 | 40 | 1.50 |",
        "| verify vs bare read+decode: instructions/event | 90,000 | 100,000 | 0.90 |",
        "| verify vs bare read+decode: L1d misses/event | 400 | 800 | 0.50 |",
        "| verify vs bare read+decode: L2 misses/event | 10 | 20 | 0.50 |",
    ):
        assert row in text, row
    # Counted without the cache: the instruction rows only.
    plain = {w: {"instructions": f["instructions"]} for w, f in figures.items()}
    rows = side_by_side(plain)
    assert [r["measure"] for r in rows] == ["instructions", "instructions"]
