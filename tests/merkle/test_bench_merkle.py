"""``python -m bench.merkle`` runs on a tiny feed (SQLite only) and reports every figure."""

from __future__ import annotations

import json
import math
from pathlib import Path

from bench.merkle import main


def test_the_merkle_bench_on_a_tiny_feed(tmp_path: Path, capsys: object) -> None:
    out = tmp_path / "merkle.json"
    assert (
        main(["--rounds", "12", "--runs", "1", "--no-pg", "--workdir", str(tmp_path), "--out", str(out)]) == 0
    )
    found = json.loads(out.read_text())
    sqlite = found["stores"]["sqlite"]
    assert sqlite["rows"] > 0 and sqlite["new_rows"] == sqlite["rehashed"] > 0
    assert sqlite["tree_us_per_row"] > 0 and sqlite["seal_note_us_per_new_row"] > 0
    proofs = {row["rows"]: row for row in found["proofs"]}
    assert proofs[10**8]["inclusion_hashes"] == math.ceil(math.log2(10**8)) == 27
    assert proofs[10**8]["bundle_merkle_bytes"] < 4096
    bundle = sqlite["bundle"]
    assert 0 < bundle["packed_200_bytes"] < proofs[10**8]["bundle_200_events_bytes"]
    assert "| log rows |" in capsys.readouterr().out  # type: ignore[attr-defined]
