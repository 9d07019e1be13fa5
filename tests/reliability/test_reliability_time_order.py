"""Time disorder: events of a round that go back in time, or a round closed before it opened,
are reported as ``timestamp_disorder`` (severity warning, both times given). A warning leaves
verify's exit code as it was (0 here: warnings and information never make it 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import open_ledger


@pytest.fixture
def cli(cli_in_process):
    """``ledger`` in this process (tests/reliability/conftest.py): these tests check what the
    commands print and exit with, not the process."""
    return cli_in_process


def _first_round(examples: Path) -> list[dict]:
    lines = [json.loads(ln) for ln in (examples / "rl.jsonl").read_text().splitlines() if ln]
    first = lines[0]["round"]
    return [obj for obj in lines if obj["round"] == first]


def _verify(db_url: str, lines: list[dict], cli) -> tuple[int, list[dict]]:
    app = open_ledger(db_url)
    try:
        report = Ingestor(app).ingest(numbered_lines([json.dumps(o) for o in lines]))
        assert report.rejected == []
    finally:
        app.close()
    done = cli(["verify", "--db", db_url, "--json"])
    return done.returncode, json.loads(done.stdout)["findings"]


def test_an_event_back_in_time_is_a_timestamp_disorder_warning(db_url: str, examples: Path, cli) -> None:
    lines = _first_round(examples)
    lines[2]["at"] = "2026-11-20T09:00:00+08:00"  # before the opening and the first bet
    code, findings = _verify(db_url, lines, cli)
    assert code == 0, findings
    found = [f for f in findings if f["code"] == "timestamp_disorder"]
    assert [(f["severity"], f["seq"]) for f in found] == [("warning", 3)]
    assert found[0]["recorded"] == {"at": "2026-11-20T09:00:00+08:00"}
    assert found[0]["expected"]["not_before"] == lines[1]["at"]
    assert lines[1]["at"] in found[0]["message"] and "09:00:00" in found[0]["message"]


def test_a_round_closed_before_it_opened_is_a_timestamp_disorder_warning(
    db_url: str, examples: Path, cli
) -> None:
    lines = _first_round(examples)
    assert lines[-1]["type"] == "round_closed"
    lines[-1]["at"] = "2026-11-19T10:00:00+08:00"
    code, findings = _verify(db_url, lines, cli)
    assert code == 0, findings
    found = [f for f in findings if f["code"] == "timestamp_disorder"]
    assert len(found) == 1 and found[0]["severity"] == "warning"
    assert "before it was opened at 2026-11-20T10:01:00+08:00" in found[0]["message"]
    assert found[0]["recorded"] == {"at": "2026-11-19T10:00:00+08:00"}


def test_clean_examples_have_no_time_disorder(db_url: str, examples: Path, cli) -> None:
    app = open_ledger(db_url)
    try:
        for name in ("rl.jsonl", "sp9.jsonl", "mj.jsonl", "stud.jsonl", "3cb.jsonl", "fpc.jsonl"):
            with open(examples / name, encoding="utf-8") as stream:
                assert Ingestor(app).ingest(numbered_lines(stream)).rejected == []
    finally:
        app.close()
    done = cli(["verify", "--db", db_url, "--json"])
    assert done.returncode == 0 and json.loads(done.stdout)["findings"] == []
