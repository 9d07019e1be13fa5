"""``python -m bench.instructions``: valgrind's counts read right, and a real count of verify.

The real count needs valgrind (``apt-get install valgrind``): skipped without it, required under
``CI=true`` (``.ci/run`` installs it). It takes minutes of CPU, so it belongs to the ``slow``
tier (``pytest -m slow``, ``pytest --all``, CI). The ``--cache`` run (cachegrind, twice the
cost) runs whole with a stand-in valgrind that prints known counts, in the ``slow`` tier too
(a few seconds, in child processes); the rest of this file is instant.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.instructions import cache_sizes, parse_counts, per_event, ratios, render, side_by_side

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
BRANCHES = """==11326== I   refs:      88,107,134
==11326== I1  misses:       875,005
==11326== LLi misses:        35,654
==11326== I1  miss rate:       0.99%
==11326== LLi miss rate:       0.04%
==11326==
==11326== D   refs:      37,469,488  (25,234,705 rd   + 12,234,783 wr)
==11326== D1  misses:     1,418,891  ( 1,287,214 rd   +    131,677 wr)
==11326== LLd misses:       415,834  (   347,068 rd   +     68,766 wr)
==11326== D1  miss rate:        3.8% (       5.1%     +        1.1%  )
==11326== LLd miss rate:        1.1% (       1.4%     +        0.6%  )
==11326==
==11326== LL refs:        2,293,896  ( 2,162,219 rd   +    131,677 wr)
==11326== LL misses:        451,488  (   382,722 rd   +     68,766 wr)
==11326== LL miss rate:         0.4% (       0.3%     +        0.6%  )
==11326==
==11326== Branches:      15,438,465  (13,306,267 cond +  2,132,198 ind)
==11326== Mispredicts:    1,563,198  (   993,486 cond +    569,712 ind)
==11326== Mispred rate:        10.1% (       7.5%     +       26.7%   )
"""
"""The closing summary of valgrind 3.19's cachegrind with ``--cache-sim=yes --branch-sim=yes``
(``python -c pass``), as captured."""


def test_the_summary_lines_of_callgrind_and_cachegrind_are_read() -> None:
    assert parse_counts(CALLGRIND) == {"instructions": 1_234_567_890}
    # Without --branch-sim: no mispredictions, and no key for them.
    assert parse_counts(CACHEGRIND) == {
        "instructions": 11_636_072_668,
        "i1_misses": 228_475_292,
        "d1_misses": 120_229_060,
        "l2_misses": 831_327,
    }


def test_the_l1i_misses_and_the_mispredicted_branches_are_read() -> None:
    assert parse_counts(BRANCHES) == {
        "instructions": 88_107_134,
        "i1_misses": 875_005,  # not the LLi line
        "d1_misses": 1_418_891,
        "l2_misses": 415_834,  # the data misses (LLd), not all LL misses
        "mispredicts": 1_563_198,
        "mispredicts_cond": 993_486,
        "mispredicts_ind": 569_712,
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
    caches = ("l1i", "l1d", "l2") if "l1i_bytes" in sizes else ("l1d", "l2")
    assert set(sizes) == {f"{c}_{p}" for c in caches for p in ("bytes", "ways", "line")}
    assert sizes["l2_bytes"] > sizes["l1d_bytes"] > 0 and sizes["l1d_line"] == 64


def _sys_cache(base: Path, index: int, level: str, kind: str, size: str, ways: str = "8") -> None:
    folder = base / f"index{index}"
    folder.mkdir(parents=True)
    for name, value in (
        ("level", level),
        ("type", kind),
        ("size", size),
        ("ways_of_associativity", ways),
        ("coherency_line_size", "64"),
    ):
        (folder / name).write_text(value + "\n")


def test_cache_sizes_read_each_cache_of_sys_by_level_and_type(tmp_path: Path) -> None:
    # This machine's /sys (an AMD EPYC under KVM): 32K 8-way L1d and L1i, 1024K 8-way L2, and
    # an L3 that is not simulated (cachegrind's last level is given the L2).
    _sys_cache(tmp_path, 0, "1", "Data", "32K")
    _sys_cache(tmp_path, 1, "1", "Instruction", "32K")
    _sys_cache(tmp_path, 2, "2", "Unified", "1024K")
    _sys_cache(tmp_path, 3, "3", "Unified", "32768K", ways="16")
    assert cache_sizes(str(tmp_path)) == {
        "l1i_bytes": 32_768,
        "l1i_ways": 8,
        "l1i_line": 64,
        "l1d_bytes": 32_768,
        "l1d_ways": 8,
        "l1d_line": 64,
        "l2_bytes": 1_048_576,
        "l2_ways": 8,
        "l2_line": 64,
    }


def test_cache_sizes_fall_back_cache_by_cache(tmp_path: Path) -> None:
    # No L1i entry: no l1i keys (cachegrind simulates its default). An L2 whose set count is not
    # a power of two (3 MiB, 16-way: 3,072 sets), which cachegrind refuses: the default L2.
    # An unreadable entry before the L1d does not stop the L1d from being read.
    (tmp_path / "index0").mkdir()
    _sys_cache(tmp_path, 1, "1", "Data", "48K", ways="12")
    _sys_cache(tmp_path, 2, "2", "Unified", "3M", ways="16")
    sizes = cache_sizes(str(tmp_path))
    assert "l1i_bytes" not in sizes
    assert (sizes["l1d_bytes"], sizes["l1d_ways"]) == (48 * 1024, 12)
    assert (sizes["l2_bytes"], sizes["l2_ways"], sizes["l2_line"]) == (2 * 1024 * 1024, 16, 64)
    assert cache_sizes(str(tmp_path / "absent"))["l1d_bytes"] == 48 * 1024


def test_render_shows_the_l1i_misses_and_the_mispredictions_side_by_side() -> None:
    figures = {
        "bare_read": {
            "instructions": 88_435.0,
            "i1_misses": 1_983.0,
            "d1_misses": 934.0,
            "l2_misses": 42.0,
            "mispredicts": 1_520.0,
            "mispredicts_cond": 650.0,
            "mispredicts_ind": 870.0,
        },
        "verify": {
            "instructions": 84_715.0,
            "i1_misses": 1_826.0,
            "d1_misses": 1_249.0,
            "l2_misses": 117.0,
            "mispredicts": 1_472.0,
            "mispredicts_cond": 716.0,
            "mispredicts_ind": 756.0,
        },
    }
    result = {
        "feed": {"rounds": 120, "lines": 5_377},
        "per_event": figures,
        "ratios": ratios(figures),
        "side_by_side": side_by_side(figures),
    }
    text = render(result)
    for row in (
        "| bare_read | 88,435 | 1,983 | 934 | 42 | 1,520 (650 + 870) |",
        "| verify | 84,715 | 1,826 | 1,249 | 117 | 1,472 (716 + 756) |",
        "| verify vs bare read+decode: instructions/event | 88,435 | 84,715 | 1.04 |",
        "| verify vs bare read+decode: L1i misses/event | 1,983 | 1,826 | 1.09 |",
        "| verify vs bare read+decode: L1d misses/event | 934 | 1,249 | 0.75 |",
        "| verify vs bare read+decode: L2 misses/event | 42 | 117 | 0.36 |",
        "| verify vs bare read+decode: mispredicted branches/event | 1,520 | 1,472 | 1.03 |",
        "| verify vs bare read+decode: mispredicted conditional branches/event | 650 | 716 | 0.91 |",
        "| verify vs bare read+decode: mispredicted indirect branches/event | 870 | 756 | 1.15 |",
    ):
        assert row in text, row
    # The keys the harness and its tests read stay as they were; the new ones are added.
    assert [r["measure"] for r in result["side_by_side"]] == [
        "instructions",
        "i1_misses",
        "d1_misses",
        "l2_misses",
        "mispredicts",
        "mispredicts_cond",
        "mispredicts_ind",
    ]
    # Counted without the branch predictor: a dash, not a zero, in its column.
    plain = {w: {k: v for k, v in f.items() if not k.startswith("mispredicts")} for w, f in figures.items()}
    assert "| verify | 84,715 | 1,826 | 1,249 | 117 | - |" in render({**result, "per_event": plain})


FAKE_VALGRIND = """#!{python}
import json, os, sys

args = sys.argv[1:]
with open(os.environ["FAKE_VALGRIND_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(args) + "\\n")
child = args.index("--child")
work, feed, passes = args[child + 1], args[child + 3], int(args[child + 4])
with open(feed, encoding="utf-8") as f:
    lines = sum(1 for _ in f)
# Per event and pass: a figure of its own for each count and workload; plus a fixed start-up.
scale = {{"bare_read": 1, "verify": 2}}[work] * passes * lines
n = lambda per_event: f"{{1_000_000 + per_event * scale:,}}"
say = sys.stderr.write
say(f"==1== I   refs:      {{n(45_000)}}\\n")
if "--tool=cachegrind" in args:
    say(f"==1== I1  misses:    {{n(1_000)}}\\n==1== LLi misses:    {{n(7)}}\\n")
    say(f"==1== D1  misses:    {{n(500)}}  ({{n(400)}} rd + {{n(100)}} wr)\\n")
    say(f"==1== LLd misses:    {{n(20)}}  ({{n(15)}} rd + {{n(5)}} wr)\\n")
    say(f"==1== LL misses:     {{n(27)}}  ({{n(22)}} rd + {{n(5)}} wr)\\n")
    if "--branch-sim=yes" in args:
        say(f"==1== Branches:      {{n(9_000)}}  ({{n(8_000)}} cond + {{n(1_000)}} ind)\\n")
        say(f"==1== Mispredicts:   {{n(750)}}  ({{n(300)}} cond + {{n(450)}} ind)\\n")
"""
"""A stand-in for valgrind: it logs its arguments and prints a summary whose counts grow by a
known figure per event and pass, without running the workload."""


@pytest.mark.slow
def test_the_cache_run_passes_the_l1i_and_the_branch_predictor_and_reports_them(
    tmp_path: Path,
) -> None:
    """``python -m bench.instructions --only bare_read,verify --cache``, as bench/README.md
    shows it, with a stand-in valgrind first on ``PATH``: the options cachegrind is given, and
    every count carried through to the JSON and the tables (seconds, not the minutes of the
    real count below)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "valgrind"
    fake.write_text(FAKE_VALGRIND.format(python=sys.executable))
    fake.chmod(0o755)
    log, out = tmp_path / "valgrind.log", tmp_path / "instr.json"
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", FAKE_VALGRIND_LOG=str(log))
    done = _instructions(
        tmp_path, out, "--rounds", "2", "--only", "bare_read,verify", "--cache", env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    cache = [args for args in runs if "--tool=cachegrind" in args]
    assert len(runs) == 8 and len(cache) == 4  # two workloads, one and two passes, two tools
    sizes = cache_sizes()
    for args in cache:
        assert "--cache-sim=yes" in args and "--branch-sim=yes" in args
        assert f"--D1={sizes['l1d_bytes']},{sizes['l1d_ways']},{sizes['l1d_line']}" in args
        if "l1i_bytes" in sizes:
            assert f"--I1={sizes['l1i_bytes']},{sizes['l1i_ways']},{sizes['l1i_line']}" in args
        else:
            assert not [a for a in args if a.startswith("--I1=")]
    body = json.loads(out.read_text())
    per_pass = {"instructions": 45_000, "i1_misses": 1_000, "d1_misses": 500, "l2_misses": 20}
    per_pass |= {"mispredicts": 750, "mispredicts_cond": 300, "mispredicts_ind": 450}
    assert body["per_event"]["bare_read"] == {k: float(v) for k, v in per_pass.items()}
    assert body["per_event"]["verify"] == {k: 2.0 * v for k, v in per_pass.items()}
    assert body["cache"] == sizes
    assert "| bare_read | 45,000 | 1,000 | 500 | 20 | 750 (300 + 450) |" in done.stdout
    assert "| verify vs bare read+decode: mispredicted indirect branches/event | 450 | 900 | 0.50 |" in (
        done.stdout
    )


@pytest.mark.slow
@pytest.mark.instructions
def test_verify_is_counted_under_valgrind(tmp_path: Path) -> None:
    if shutil.which("valgrind") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("valgrind is required under CI=true (apt-get install valgrind)")
        pytest.skip("valgrind is not installed")
    out = tmp_path / "instr.json"
    done = _instructions(tmp_path, out, "--rounds", "6", "--only", "verify", timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    body = json.loads(out.read_text())
    # A warm verify of a six-game store executes tens of thousands of instructions per event
    # (about 95,000 on this code): a count near zero or in the millions would be a wrong
    # difference of the two runs, not a measure.
    assert 20_000 < body["per_event"]["verify"]["instructions"] < 1_000_000
    assert body["feed"]["lines"] > 0 and body["ratios"] == {}
    assert "| verify |" in done.stdout
    assert not list(tmp_path.glob("ledger-instr-*"))  # the work folder is removed


def _instructions(
    tmp_path: Path, out: Path, *args: str, env: dict[str, str] | None = None, timeout: int
) -> subprocess.CompletedProcess[str]:
    """``python -m bench.instructions ARGS`` on one table per game, its work folder in
    ``tmp_path`` and its JSON in ``out``."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.instructions",
            *args,
            "--tables",
            "1",
            "--workdir",
            str(tmp_path),
            "--out",
            str(out),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
