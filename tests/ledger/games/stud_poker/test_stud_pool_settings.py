"""A linked pool has one set of settings: a round that names the pool with others is reported."""

from __future__ import annotations

import json
from pathlib import Path

from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import LedgerApp
from ledger.verify.engine import verify_store


def _rounds_with_pool(lines: list[str]) -> list[str]:
    return [json.loads(ln)["round"] for ln in lines if '"round_opened"' in ln and '"jackpot"' in ln]


def test_a_round_with_other_settings_for_the_same_pool_is_a_jackpot_mismatch(
    app: LedgerApp, examples: Path
) -> None:
    lines = (examples / "stud.jsonl").read_text().splitlines()
    rounds = _rounds_with_pool(lines)
    assert len(rounds) >= 2
    changed = rounds[1]
    edited = []
    for line in lines:
        event = json.loads(line)
        if event["type"] == "round_opened" and event["round"] == changed:
            event["rulebook"]["jackpot"]["contribution_rate"] = "0.30"
            line = json.dumps(event)
        edited.append(line)
    report = Ingestor(app).ingest(numbered_lines(edited))
    assert report.rejected == []
    found = [
        (f.code, f.round, f.bet)
        for f in verify_store(app).errors
        if f.code == "jackpot_mismatch" and "configured differently" in f.message
    ]
    assert found == [("jackpot_mismatch", changed, None)]


def test_the_example_pool_has_one_set_of_settings(app: LedgerApp, examples: Path) -> None:
    lines = (examples / "stud.jsonl").read_text().splitlines()
    Ingestor(app).ingest(numbered_lines(lines))
    assert verify_store(app).errors == []
