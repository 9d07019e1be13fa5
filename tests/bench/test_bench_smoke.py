"""The benchmark harness runs from the repository root and writes the JSON it documents."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_harness_runs_on_a_tiny_feed_and_writes_its_json(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--rounds", "40", "--tables", "1", "--no-pg",
         "--memory", "20,40", "--runs", "1", "--jobs", "2", "--workdir", str(tmp_path), "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    body = json.loads(out.read_text())
    sqlite = body["median"]["sqlite"]
    for key in ("raw_write_rows_s", "raw_read_rows_s", "bare_append_events_s",
                "bare_read_decode_events_s", "ingest_events_s", "verify_events_s",
                "verify_rounds_s", "ratio_ingest_vs_bare_append",
                "ratio_verify_vs_bare_read_decode", "ratio_jobsN_vs_jobs1",
                "ingest_cpu_us_event", "verify_cpu_us_event"):
        assert sqlite[key] > 0, key
    assert sqlite["jobs_identical_findings"] is True
    assert body["feed"]["rounds"] >= 40 and body["feed"]["games"]
    memory = body["memory"]["40"]
    assert "verify peak RSS 40 / 20 rounds" in body["verdict"]
    assert memory["verify"]["exit_code"] == 0 and memory["ingest"]["rejected"] == 0
    assert memory["verify"]["peak_rss_mb"] > 0
    assert set(body["verdict"]) >= {"sqlite ingest / bare append",
                                    "sqlite verify / bare read+decode"}
    assert "| ledger ingest (events/s) |" in done.stdout
    assert not list(tmp_path.glob("ledger-bench-*"))  # the work folder is removed
