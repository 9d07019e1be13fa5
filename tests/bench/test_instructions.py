"""``python -m bench.instructions``: valgrind's counts read right, and a real count of verify.

The real count needs valgrind (``apt-get install valgrind``): skipped without it, required under
``CI=true`` (``.ci/run`` installs it). It takes minutes of CPU, so it belongs to the ``slow``
tier (``pytest -m slow``, ``pytest --all``, CI); the rest of this file is instant.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.instructions import cache_sizes, parse_counts, per_event, ratios

ROOT = Path(__file__).resolve().parents[2]

CALLGRIND = """==4242== Events    : Ir
==4242== Collected : 1234567890
==4242==
==4242== I   refs:      1,234,567,890
"""
CACHEGRIND = """==77== I   refs:      11,636,072,668
==77== I1  misses:       228,475,292
==77== D   refs:       4,986,821,328  (3,376,416,798 rd   + 1,610,404,530 wr)
==77== D1  misses:       120,229,060  (  102,927,061 rd   +    17,301,999 wr)
==77== LLd misses:           831,327  (      123,135 rd   +       708,192 wr)
==77== LL misses:            864,352  (      156,160 rd   +       708,192 wr)
"""


def test_the_summary_lines_of_callgrind_and_cachegrind_are_read() -> None:
    assert parse_counts(CALLGRIND) == {"instructions": 1_234_567_890}
    assert parse_counts(CACHEGRIND) == {
        "instructions": 11_636_072_668,
        "d1_misses": 120_229_060,
        "l2_misses": 831_327,
    }


def test_a_report_without_a_count_is_an_error_not_a_zero() -> None:
    with pytest.raises(RuntimeError, match="no instruction count"):
        parse_counts("==1== error: could not start\n")


def test_one_pass_is_the_two_pass_run_less_the_one_pass_run() -> None:
    one = {"instructions": 1_000_000, "d1_misses": 500}
    two = {"instructions": 1_900_000, "d1_misses": 1_400}
    assert per_event(one, two, 100) == {"instructions": 9_000.0, "d1_misses": 9.0}


def test_ratios_are_bare_over_ledger_and_named_as_the_harness_targets() -> None:
    figures = {
        "bare_append": {"instructions": 300.0},
        "ingest": {"instructions": 150.0},
        "bare_read": {"instructions": 90.0},
        "verify": {"instructions": 100.0},
    }
    assert ratios(figures) == {"ingest_vs_bare_append": 2.0, "verify_vs_bare_read_decode": 0.9}
    assert ratios({"verify": {"instructions": 1.0}}) == {}  # a pair is needed


def test_cache_sizes_are_whole_numbers() -> None:
    sizes = cache_sizes()
    assert set(sizes) == {f"{c}_{p}" for c in ("l1d", "l2") for p in ("bytes", "ways", "line")}
    assert sizes["l2_bytes"] > sizes["l1d_bytes"] > 0 and sizes["l1d_line"] == 64


@pytest.mark.slow
@pytest.mark.instructions
def test_verify_is_counted_under_valgrind(tmp_path: Path) -> None:
    if shutil.which("valgrind") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("valgrind is required under CI=true (apt-get install valgrind)")
        pytest.skip("valgrind is not installed")
    out = tmp_path / "instr.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.instructions",
            "--rounds",
            "6",
            "--tables",
            "1",
            "--only",
            "verify",
            "--workdir",
            str(tmp_path),
            "--out",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    body = json.loads(out.read_text())
    # A warm verify of a six-game store executes tens of thousands of instructions per event
    # (about 95,000 on this code): a count near zero or in the millions would be a wrong
    # difference of the two runs, not a measure.
    assert 20_000 < body["per_event"]["verify"]["instructions"] < 1_000_000
    assert body["feed"]["lines"] > 0 and body["ratios"] == {}
    assert "| verify |" in done.stdout
    assert not list(tmp_path.glob("ledger-instr-*"))  # the work folder is removed
