"""``ledger replay`` and ``ledger recall`` start at the nearest stored checkpoint before a round
of a game whose rules span rounds (3CB, SP9, STUD), and judge it exactly as a pass from the
start of the store does — carried bets, banks and linked pools across the checkpoint included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ledger.games import GAMES
from ledger.proof.checkpoints import seal
from ledger.proof.seal import generate_key, public_pem
from ledger.report.recall import recall
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.services.replay import judge_in_store, replay_round
from ledger.storage.store import LedgerApp
from ledger.tools.simulate import simulate
from ledger.verify.engine import Selection
from tests.conftest import tiered

SPACING = 300
"""Feed lines between two checkpoints after the first one (on the full-size feed; the
developer's tier runs a third of it, 8 rounds a table, with checkpoints every 80 lines: as many
checkpoints, 30 rounds after the first one, each replayed from its nearest)."""

KEY = generate_key()


@pytest.fixture(autouse=True)
def _sealing_public_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's sealing public key: replay and recall start only at checkpoints it checks."""
    path = tmp_path / "seal.key.pub"
    path.write_bytes(public_pem(KEY.public_key()))
    monkeypatch.setenv("LEDGER_SEAL_PUBLIC_KEY", str(path))


def _ingest(app: LedgerApp, lines: list[dict[str, Any]], path: Path) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with open(path, encoding="utf-8") as stream:
        assert Ingestor(app, batch_events=60).ingest(numbered_lines(stream)).rejected == []


def _without_start(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k != "judged_from"}


@pytest.mark.slow_postgres
@pytest.mark.parametrize(("rounds_per_table", "spacing"), tiered([(8, 80), (24, SPACING)], 1))
def test_replay_and_recall_from_the_nearest_checkpoint_equal_a_pass_from_the_start(
    app: LedgerApp, tmp_path: Path, rounds_per_table: int, spacing: int
) -> None:
    """Linear in the store: every round after the first checkpoint is judged from the start in
    one pass (``judge_in_store`` over all of them), and replayed from its nearest checkpoint,
    sealed every ``SPACING`` lines so that each of those passes is short."""
    sim = simulate(
        [GAMES["3CB"], GAMES["STUD"], GAMES["SP9"]], rounds=rounds_per_table, tables=2, seed=3, error_rate=0.2
    )
    cut = len(sim.lines) * 2 // 5
    key = KEY
    _ingest(app, sim.lines[:cut], tmp_path / "a.jsonl")
    seal(app, key)
    for n, at in enumerate(range(cut, len(sim.lines), spacing)):
        _ingest(app, sim.lines[at : at + spacing], tmp_path / f"b{n}.jsonl")
        seal(app, key)
    rounds = sorted({(line["table"], line["round"]) for line in sim.lines[cut:]})
    whole = {
        (r.round.table, r.round.round): r for r in judge_in_store(app, Selection(), rounds, from_start=True)
    }
    assert set(whole) == set(rounds) and all(r.judged_from is None for r in whole.values())
    from_checkpoint = 0
    for table, rnd in rounds:
        near = replay_round(app, table, rnd)
        assert near is not None
        assert _without_start(near.to_json()) == _without_start(whole[table, rnd].to_json()), (table, rnd)
        from_checkpoint += near.judged_from is not None
    assert from_checkpoint > len(rounds) // 2  # most rounds after the cut start at a checkpoint
    window = rounds_per_table * 5 // 12  # the last 10 rounds of a table of 24: after the cut
    for table in sorted({t for t, _ in rounds}):
        near_recall = recall(app, table, window)
        whole_recall = recall(app, table, window, from_start=True)
        assert near_recall is not None and whole_recall is not None
        assert [_without_start(r) for r in near_recall.to_json()["rounds"]] == [
            _without_start(r) for r in whole_recall.to_json()["rounds"]
        ]
        assert any(
            r.judged_from is not None for r in near_recall.rounds if GAMES[r.round.game].follows_rounds
        )
