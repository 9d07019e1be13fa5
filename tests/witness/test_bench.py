"""`python -m bench.witness` runs: two witness processes, every checkpoint cosigned, figures
printed (a tiny run; the figures themselves are in bench/README.md)."""

from __future__ import annotations

import json

from bench.witness import main


def test_the_witness_bench_times_one_witness_and_a_quorum(capsys):
    main(["--rounds", "3", "--rows", "5", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert result["log_size"] == 3 * 5 + 3
    for name in ("one_witness", "quorum_2_of_2"):
        assert 0 < result[name]["median_ms"] <= result[name]["p90_ms"] <= result[name]["max_ms"]
