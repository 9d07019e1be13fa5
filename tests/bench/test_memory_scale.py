"""``python -m bench.memory scale`` grows one store through its sizes and measures each."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_scale_grows_one_store_and_measures_ingest_and_verify_at_each_size(tmp_path: Path) -> None:
    log = tmp_path / "scale.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.memory",
            "scale",
            "--sizes",
            "40,100",
            "--games",
            "FPC,RL",
            "--tables",
            "2",
            "--workdir",
            str(tmp_path),
            "--log",
            str(log),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    sizes = result["sizes"]
    assert list(sizes) == ["40", "100"]
    # The second step adds rounds on tables of its own: the store then holds both steps.
    assert sizes["40"]["rounds"] == sizes["40"]["verify"]["rounds"] >= 40
    assert sizes["100"]["rounds"] == sizes["100"]["verify"]["rounds"] >= 100
    for size in sizes.values():
        assert size["ingest"]["rejected"] == 0 and size["ingest"]["stored"] == size["ingest"]["lines"]
        assert size["verify"]["findings"] == 0 and size["verify"]["exit_code"] == 0
        assert size["verify"]["peak_rss_mb"] > 0
    ratio = sizes["100"]["verify"]["peak_rss_mb"] / sizes["40"]["verify"]["peak_rss_mb"]
    assert result["verify_peak_ratio"] == round(ratio, 3)
    assert len(log.read_text(encoding="utf-8").splitlines()) == 5  # 2 ingests, 2 verifies, the result
    assert not list(tmp_path.glob("scale-*.db")) and not list(tmp_path.glob("*.fifo"))
