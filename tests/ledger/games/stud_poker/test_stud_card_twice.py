"""A STUD hand holding the same card twice: reported as a duplicate card, not as an unreadable
store (the hand cannot be valued, so the deal is unusable, like a hand of the wrong size)."""

from __future__ import annotations

import json
from pathlib import Path

from bench.feed import write_feed
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import open_ledger
from ledger.verify.engine import verify_store


def _feed_with_a_card_twice(folder: Path) -> tuple[list[str], str]:
    """A small STUD feed whose first round deals one place its own first card again."""
    feed = write_feed(str(folder / "stud.jsonl"), 1, tables=1, games=["STUD"])
    lines = Path(feed.path).read_text().splitlines()
    first: dict[str, str] = {}
    for i, line in enumerate(lines):
        fact = json.loads(line)
        if fact["type"] != "card_dealt" or fact["round"] != "000001" or fact["to"] == "dealer":
            continue
        if fact["to"] not in first:
            first[fact["to"]] = fact["card"]
        else:
            fact["card"] = first[fact["to"]]
            lines[i] = json.dumps(fact, separators=(",", ":"))
            return lines, fact["card"]
    raise AssertionError("the feed deals no place two cards")


def test_a_hand_dealt_one_card_twice_is_a_finding(tmp_path: Path) -> None:
    lines, card = _feed_with_a_card_twice(tmp_path)
    app = open_ledger(f"sqlite:///{tmp_path / 'ledger.db'}")
    try:
        report = Ingestor(app).ingest(numbered_lines(lines))
        assert not report.rejected
        verified = verify_store(app)
    finally:
        app.close()
    assert verified.integrity_ok
    assert not [f for f in verified.findings if f.code == "chain_broken"]
    twice = [f for f in verified.findings if f"card {card} dealt twice" in f.message]
    assert [(f.table, f.round) for f in twice] == [("STUD-01", "000001")]
    assert verified.rounds_checked >= 1
