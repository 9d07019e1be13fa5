"""``python -m bench.startup``: the importtime lines read right, and a real measure of
``ledger --version`` (one process; the figures themselves are printed, never asserted as
timings)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.startup import main, parse_importtime, render

IMPORTTIME = """import time: self [us] | cumulative | imported package
import time:       120 |        120 |   _io
import time:       300 |        420 | site
import time:      1000 |       1000 |     ledger.domain.errors
import time:      2000 |       3000 |   cli.contract
import time:      5000 |       8000 | cli.main
some other line on stderr
"""


def test_importtime_is_summed_and_its_top_level_ranked() -> None:
    summary = parse_importtime(IMPORTTIME, top=2)
    assert summary.modules == 5
    assert summary.total_us == 120 + 300 + 1000 + 2000 + 5000
    assert summary.top == [("cli.main", 8000), ("site", 420)]


def test_the_version_is_measured_in_a_real_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One measure, through the command line (the JSON it writes is what ``measure`` returns,
    the tables it prints are ``render``'s): a real ``ledger --version`` and its importtime."""
    out = tmp_path / "s.json"
    assert main(["--runs", "1", "--only=--version", "--json", str(out)]) == 0
    results = json.loads(out.read_text())
    case = results["cases"]["--version"]
    assert case["exit_code"] == 0 and 0 < case["cpu_s"] < 30 and case["target_s"] == 0.15
    assert results["imports"]["--version"]["modules"] > 50
    assert "cli.main" in results["imports"]["--version"]["top_ms"]
    printed = capsys.readouterr().out
    assert "| `ledger --version` |" in render(results) and render(results) in printed
    assert "importtime" in printed and f"wrote {out}" in printed
