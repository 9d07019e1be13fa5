"""The upgrade path of the state counters: a store sealed before they existed, then sealed again.

Stores sealed before the ``ledger/state`` line kept no ``moves`` in their snapshots (and no state
line in their notes). After the upgrade the first seal continues from such a snapshot, and a
later ``seal --full`` counts from the start of the log. Neither may make a segment of the full
audit (``verify --jobs 2``) or ``verify --since last`` report a mismatch the rows do not have.
The old version is reproduced by the two functions it lacked: the judge's JSON without its
counters and a note without its state line.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app as cli
from ledger.merkle import sealing
from ledger.proof.seal import generate_key, private_pem, public_pem
from ledger.tools.simulate import simulate
from ledger.tools.simulators import simulated_games
from ledger.verify.judge import RoundJudge

GAMES = ("3CB", "SP9", "STUD")  # the games whose rounds move signed state
IN_PLAY = {"round_incomplete", "carry_outstanding"}  # information: rounds the cut left open


def _parts(count: int) -> list[list[str]]:
    """A clean simulated feed of the games with state, cut into ``count`` parts at round ends."""
    games = [g for g in simulated_games() if g.key in GAMES]
    sim = simulate(games, rounds=8, tables=2, seed=11, error_rate=0.0)
    lines = [json.dumps(line, separators=(",", ":")) for line in sim.lines]
    ends = [i + 1 for i, line in enumerate(sim.lines) if line["type"] in ("round_closed", "round_voided")]
    cuts = [ends[len(ends) * k // count - 1] for k in range(1, count)] + [len(lines)]
    return [lines[a:b] for a, b in zip([0, *cuts[:-1]], cuts, strict=True)]


def _old_judge_json(self: RoundJudge) -> dict:
    data = _NEW_JUDGE_JSON(self)
    data.pop("moves", None)
    return data


_NEW_JUDGE_JSON = RoundJudge.to_json


@pytest.mark.slow_postgres
def test_a_store_sealed_before_the_counters_then_sealed_in_full_has_no_false_mismatch(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = generate_key()
    (tmp_path / "seal.key").write_bytes(private_pem(key))
    (tmp_path / "seal.key.pub").write_bytes(public_pem(key.public_key()))
    runner = CliRunner()

    def run(*args: str) -> tuple[int, str]:
        result = runner.invoke(cli, [*args, "--db", db_url])
        return result.exit_code, result.stdout + (result.stderr if result.stderr_bytes is not None else "")

    def ingest(lines: list[str], name: str) -> None:
        feed = tmp_path / name
        feed.write_text("\n".join(lines) + "\n", encoding="utf-8")
        code, out = run("ingest", str(feed))
        assert code == 0, out

    def seal(*extra: str) -> None:
        code, out = run("seal", "--key", str(tmp_path / "seal.key"), *extra)
        assert code == 0, out

    code, out = run("init", "--seal-public-key", str(tmp_path / "seal.key.pub"))  # --jobs: by segments
    assert code == 0, out
    parts = _parts(5)
    # The old version: snapshots without counters, notes without the state line.
    monkeypatch.setattr(RoundJudge, "to_json", _old_judge_json)
    monkeypatch.setattr(sealing, "state_line", lambda _state: None)
    ingest(parts[0], "a.jsonl")
    seal()
    ingest(parts[1], "b.jsonl")
    seal()
    monkeypatch.undo()
    # The upgrade: an incremental seal from the old snapshot, then a full one.
    ingest(parts[2], "c.jsonl")
    seal()
    ingest(parts[3], "d.jsonl")
    seal("--full")
    code, out = run("seal", "--list", "--json", "--public-key", str(tmp_path / "seal.key.pub"))
    assert code == 0, out
    assert len(json.loads(out)["checkpoints"]) == 4

    code, out = run("verify", "--jobs", "2", "--json")
    assert code == 0, out
    body = json.loads(out)
    assert body["integrity"] == "ok" and _codes(body) <= IN_PLAY, body["findings"]
    for segment in _segments(db_url, tmp_path):
        code, out = run(
            "verify", "--segment", segment, "--json", "--public-key", str(tmp_path / "seal.key.pub")
        )
        assert code == 0, (segment, out)
    # And on: the next day after the full seal.
    ingest(parts[4], "e.jsonl")
    code, out = run("verify", "--since", "last", "--json", "--public-key", str(tmp_path / "seal.key.pub"))
    assert code == 0, out
    assert _codes(json.loads(out)) <= IN_PLAY, out
    seal()
    code, out = run("verify", "--jobs", "2", "--json")
    assert code == 0, out
    assert _codes(json.loads(out)) <= IN_PLAY, out


def _codes(body: dict) -> set[str]:
    return {f["code"] for f in body["findings"]}


def _segments(db_url: str, tmp_path: Path) -> list[str]:
    """Every segment between consecutive stored checkpoints, by number, ``0`` to ``head``."""
    result = CliRunner().invoke(
        cli, ["seal", "--list", "--json", "--db", db_url, "--public-key", str(tmp_path / "seal.key.pub")]
    )
    numbers = [str(row["number"]) for row in json.loads(result.stdout)["checkpoints"]]
    ends = ["0", *numbers, "head"]
    return [f"{a}..{b}" for a, b in itertools.pairwise(ends)]
