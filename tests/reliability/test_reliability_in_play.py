"""``verify`` while ``ingest`` runs: a round still being dealt when the log is read is in play
(information), never ``invalid_deal`` or any other error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ledger.services.ingest import Ingestor
from ledger.storage.store import open_ledger
from ledger.verify.engine import verify_store
from tests.conftest import tiered

EXAMPLES = Path(os.environ["LEDGER_EXAMPLES"])  # set by tests/conftest.py


# Verify after each line is quadratic in a feed's first rounds: the three cheapest feeds by
# default, MJ, 3CB and STUD in the slow tier.
@pytest.mark.parametrize(
    "name", tiered(["rl.jsonl", "fpc.jsonl", "sp9.jsonl", "mj.jsonl", "3cb.jsonl", "stud.jsonl"], 3)
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
