"""``python -m bench.memory scale`` grows one store through its sizes and measures each."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # seven real processes (two ingests, four verifies, the compare); the feed it
# grows is checked by default below, and the bench's processes in tests/bench/test_day_replay.py
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
            "--trace",
            str(tmp_path / "snaps"),
            "--trace-frames",
            "4",
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
        # Measured at the end of the pass, where it holds the most: no more than its peak.
        verify = size["verify"]
        assert 0 < verify["rss_end_of_pass_mb"] <= verify["peak_rss_mb"]
        assert verify["pymalloc_arenas_mb"] > 0 and "traced_mb" not in verify
        assert size["trace"]["rounds"] == size["rounds"] and size["trace"]["traced_mb"] > 0
    ratio = sizes["100"]["verify"]["peak_rss_mb"] / sizes["40"]["verify"]["peak_rss_mb"]
    assert result["verify_peak_ratio"] == round(ratio, 3)
    # 2 ingests, 2 verifies, 2 traced verifies, the result
    assert len(log.read_text(encoding="utf-8").splitlines()) == 7
    assert not list(tmp_path.glob("scale-*.db")) and not list(tmp_path.glob("*.fifo"))
    compared = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.memory",
            "compare",
            str(tmp_path / "snaps" / "40.snap"),
            str(tmp_path / "snaps" / "100.snap"),
            "--rounds",
            str(sizes["100"]["rounds"] - sizes["40"]["rounds"]),
            "--top",
            "3",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    total, *top = (json.loads(line) for line in compared.stdout.splitlines())
    assert total["total_bytes_per_round"] == round(
        total["total_bytes"] / (sizes["100"]["rounds"] - sizes["40"]["rounds"]), 2
    )
    assert len(top) == 3 and all(row["traceback"] for row in top)
    # Largest first, by how much it changed.
    assert [abs(row["bytes"]) for row in top] == sorted((abs(row["bytes"]) for row in top), reverse=True)


def test_a_copied_feed_is_the_simulated_feed_for_its_first_chunk_and_plays_later_chunks_alike(
    tmp_path: Path,
) -> None:
    from bench.feed import write_feed
    from bench.memory import write_replicated

    copied, simulated = str(tmp_path / "copied.jsonl"), str(tmp_path / "simulated.jsonl")
    for chunk in (0, 3):
        a = write_replicated(copied, 60, tables=2, seed=1, games=["FPC", "RL"], first_chunk=chunk)
        b = write_feed(simulated, 60, tables=2, seed=1, games=["FPC", "RL"], first_chunk=chunk)
        assert (a.rounds, a.games, a.tables) == (b.rounds, b.games, b.tables)
        if chunk == 0:  # the one chunk simulated: the same bytes
            assert Path(copied).read_bytes() == Path(simulated).read_bytes()
        # Every chunk: the same tables, rounds and round openings at the same times.
        assert _openings(copied) == _openings(simulated)
        assert all(table.endswith(f"-c{chunk}") == bool(chunk) for table, _ in _openings(copied))


def _openings(path: str) -> dict[tuple[str, str], str]:
    lines = (json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines())
    return {(x["table"], x["round"]): x["at"] for x in lines if x["type"] == "round_opened"}
