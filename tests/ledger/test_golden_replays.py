"""Golden round transcripts: ``ledger replay --json`` of every example round, pinned.

Each example feed of ``shared/examples`` is ingested and every round replayed; the transcript
(events, derivation steps with their articles, each bet derived next to recorded, findings) must
equal the file in ``tests/golden/``. A change in any rule's wording, article or figure shows up
here as a diff to review. After an intended change, regenerate with
``UPDATE_GOLDEN=1 python -m pytest tests/ledger/test_golden_replays.py`` and read the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ledger.services.ingest import ingest_file
from ledger.services.replay import replay_round
from ledger.storage.store import open_ledger

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
FEEDS = ["rl.jsonl", "fpc.jsonl", "sp9.jsonl", "3cb.jsonl", "stud.jsonl", "mj.jsonl"]


@pytest.mark.parametrize("name", FEEDS)
def test_replay_transcripts_match_the_golden_files(name: str, examples: Path, tmp_path: Path) -> None:
    app = open_ledger(f"sqlite:///{tmp_path / 'golden.db'}")
    ingest_file(app, examples / name)
    keys = sorted(
        {
            (json.loads(line)["table"], json.loads(line)["round"])
            for line in (examples / name).read_text().splitlines()
            if line.strip()
        }
    )
    transcripts = []
    for table, round_ in keys:
        replay = replay_round(app, table, round_)
        assert replay is not None
        transcripts.append(replay.to_json())
    app.close()
    text = json.dumps(transcripts, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    golden = GOLDEN / (name.removesuffix(".jsonl") + ".json")
    if os.environ.get("UPDATE_GOLDEN") == "1":
        golden.write_text(text, encoding="utf-8")
    assert golden.exists(), f"no golden file {golden.name}: run with UPDATE_GOLDEN=1 once"
    assert text == golden.read_text(encoding="utf-8")
