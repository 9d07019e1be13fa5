"""Verify reads a page of rows in loops (the chain check of every row, then decoding and
gathering, then judging the rounds that closed): the report is the one a pass gives that reads
one row at a time and judges each round the moment it closes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import LedgerApp
from ledger.tools.simulate import simulate
from ledger.tools.simulators import simulated_games
from ledger.verify.engine import VerifyPass, verify_store
from ledger.verify.integrity import ChainVerifier


def _ingest(app: LedgerApp, lines: list[str]) -> None:
    report = Ingestor(app).ingest(numbered_lines(lines))
    assert not report.rejected, report.rejected[:3]


def _one_row_at_a_time(app: LedgerApp) -> dict[str, Any]:
    """The pass of ``verify_store``, fed one row per batch: every round is judged as soon as
    the row that closes it is read, before the next row is checked."""
    scan = VerifyPass(app.ledger_mapper, chain=ChainVerifier(app.ledger_mapper, heads=False))
    for page in app.rows():
        for row in page:
            scan.feed([row])
    return scan.finish().to_json()


def test_a_faulty_store_reads_the_same_in_pages_as_row_by_row(app: LedgerApp) -> None:
    games = simulated_games()
    lines = simulate(games, rounds=5, tables=2, seed=3, error_rate=0.4).lines
    _ingest(app, [json.dumps(line, separators=(",", ":")) for line in lines])
    paged = verify_store(app).to_json()
    assert len(paged["findings"]) >= 5  # the comparison is about something
    assert paged == _one_row_at_a_time(app)


def test_a_round_opened_again_after_it_closed_in_the_same_page(app: LedgerApp, raw, examples: Path) -> None:
    """An insider appends a second opening to a round that closed earlier in the same page:
    the close is settled as it is read, so the pass names the added event, the opening with no
    table start and the round it opens that never ends, and judges the first round once, as
    reading row by row does."""
    _ingest(app, (examples / "fpc.jsonl").read_text().splitlines())
    stored = raw.run(
        "SELECT {id}, originator_id, originator_version, topic, state FROM {events} ORDER BY {id}", fetch=True
    )
    assert len(stored) < 1000  # one page: the close and the added row are read in one batch
    opening = next(r for r in stored if r[3] == "FPC/round_opened")
    last_version = max(r[2] for r in stored if r[1] == opening[1])
    raw.run(
        "INSERT INTO {events} (originator_id, originator_version, topic, state) VALUES ({p}, {p}, {p}, {p})",
        (opening[1], last_version + 1, opening[3], bytes(opening[4])),
    )
    paged = verify_store(app).to_json()
    messages = [f["message"] for f in paged["findings"]]
    assert any("added to a round after it ended" in m for m in messages), messages
    assert any("round_opened event of this round but no table round-start" in m for m in messages), messages
    assert any(m.startswith("no round_closed or round_voided") for m in messages), messages
    assert paged == _one_row_at_a_time(app)
