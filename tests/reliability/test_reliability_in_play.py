"""``verify`` while ``ingest`` runs: a round still being dealt when the log is read is in play
(information), never ``invalid_deal`` or any other error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ledger.services.ingest import Ingestor
from ledger.storage.store import open_ledger
from ledger.verify.engine import verify_store

EXAMPLES = Path(os.environ["LEDGER_EXAMPLES"])  # set by tests/conftest.py


@pytest.mark.parametrize(
    "name", ["rl.jsonl", "fpc.jsonl", "3cb.jsonl", "sp9.jsonl", "mj.jsonl", "stud.jsonl"]
)
def test_verify_after_every_line_of_an_ingest_finds_no_error(tmp_path: Path, name: str) -> None:
    lines = (EXAMPLES / name).read_text(encoding="utf-8").splitlines()
    rounds: list[str] = []
    app = open_ledger(f"sqlite:///{tmp_path / 'l.db'}")
    try:
        ingestor = Ingestor(app, batch_events=1)
        for number, line in enumerate(lines, start=1):
            report = ingestor.ingest([(number, line)])
            assert report.rejected == []
            key = line.split('"round":"')[1].split('"')[0]
            if key not in rounds:
                rounds.append(key)
            if len(rounds) > 3:
                break
            found = verify_store(app)
            errors = [f.to_json() for f in found.findings if f.severity == "error"]
            assert errors == [], (number, errors)
            assert found.exit_code == 0
    finally:
        app.close()
