"""Ingest (FEED §9): every good line stored, every bad line rejected with line, code and field."""

from __future__ import annotations

import io
import json

import pytest

from ledger.codec.parse import REJECT_CODES
from ledger.services.ingest import Ingestor, bounded_lines, numbered_lines
from ledger.storage.store import LedgerApp
from ledger.verify.engine import verify_store


def line(seq: int, type_: str, round_: str = "R1", **fields: object) -> str:
    return json.dumps(
        {
            "v": 1,
            "table": "RL-07",
            "game": "RL",
            "round": round_,
            "seq": seq,
            "at": f"2026-11-21T20:00:{seq:02d}+08:00",
            "type": type_,
            **fields,
        }
    )


CLEAN = [
    line(1, "round_opened", currency="HKD"),
    line(2, "bet_placed", bet="b1", spot={"kind": "straight", "numbers": [17]}, amount="100"),
    line(3, "bet_placed", bet="b2", spot={"kind": "black"}, amount="500"),
    line(4, "betting_closed"),
    line(5, "spin_result", number=17),
    line(6, "bet_settled", bet="b1", result="win", returned="100", won="3500", commission="0"),
    line(7, "bet_settled", bet="b2", result="win", returned="500", won="500", commission="0"),
    line(8, "round_closed"),
]


def ingest(app: LedgerApp, lines: list[str]):
    return Ingestor(app).ingest(numbered_lines(lines))


def test_a_file_with_broken_lines_stores_every_good_line(app: LedgerApp) -> None:
    lines = list(CLEAN)
    lines.insert(2, '{"v":1, not json')
    lines.insert(4, line(3, "bet_placed", bet="b9", spot={"kind": "red"}, amount=500))
    lines.insert(6, "")
    lines.insert(7, line(4, "bet_placed", bet="b8", spot={"kind": "red"}, amount="1", colour="x"))
    report = ingest(app, lines)
    assert report.stored == len(CLEAN)
    assert [(r.line, r.code, r.field) for r in report.rejected] == [
        (3, "invalid_json", None),
        (5, "bad_money", "amount"),
        (8, "unknown_key", "colour"),
    ]
    assert report.exit_code == 1
    assert verify_store(app).exit_code == 0


def test_a_conflicting_duplicate_is_rejected_and_the_stored_event_stays(app: LedgerApp) -> None:
    ingest(app, CLEAN)
    changed = line(6, "bet_settled", bet="b1", result="win", returned="100", won="3400", commission="0")
    report = ingest(app, [*CLEAN, changed])
    assert report.stored == 0 and report.duplicates == len(CLEAN)
    assert [(r.line, r.code) for r in report.rejected] == [(9, "conflicting_duplicate")]
    assert app.load_round("RL-07", "R1").settlements["b1"][0].won == 3500


@pytest.mark.parametrize(
    "lines, code",
    [
        ([line(2, "bet_placed", bet="b1", spot={"kind": "red"}, amount="5")], "not_opened"),
        ([line(1, "spin_result", number=3)], "not_opened"),
        ([CLEAN[0], line(3, "betting_closed")], "seq_gap"),
        ([*CLEAN, line(9, "irregularity", code="late", detail="after close")], "event_after_close"),
        ([CLEAN[0], json.dumps({**json.loads(line(2, "dice_pressed")), "game": "FPC"})], "game_mismatch"),
    ],
    ids=["first-line-not-opened", "opened-not-first", "seq-skips", "after-close", "game-changes"],
)
def test_life_cycle_violations_are_rejected_with_their_code(
    app: LedgerApp, lines: list[str], code: str
) -> None:
    report = ingest(app, lines)
    assert [r.code for r in report.rejected] == [code]
    assert code in REJECT_CODES


def test_a_round_may_arrive_across_several_ingests(app: LedgerApp) -> None:
    for chunk in (CLEAN[:3], CLEAN[3:5], CLEAN[5:]):
        assert ingest(app, chunk).rejected == []
    result = verify_store(app)
    assert result.exit_code == 0 and result.rounds_checked == 1


def test_an_endless_line_is_rejected_in_bounded_memory(app: LedgerApp) -> None:
    stream = io.BytesIO(b"x" * 3_000_000 + b"\n" + CLEAN[0].encode() + b"\n")
    lines = list(bounded_lines(stream, max_bytes=1000))
    assert [n for n, _ in lines] == [1, 2] and len(lines[0][1]) == 1001
    report = Ingestor(app, max_line_bytes=1000).ingest(lines)
    assert [(r.line, r.code) for r in report.rejected] == [(1, "line_too_long")]
    assert report.stored == 1


@pytest.mark.parametrize(
    "text, code",
    [
        ('{"v":1,"x":NaN}', "invalid_json"),
        ("[1,2]", "not_an_object"),
        ("[" * 100_000 + "]" * 100_000, "invalid_json"),
        (
            line(1, "round_opened", currency="HKD", rulebook={"rl": {"sectors": {"nine": [[1, 2]]}}}),
            "bad_rulebook",
        ),
        (line(1, "round_opened", currency="EUR"), "invalid_value"),
        (line(2, "bet_placed", bet="b1", spot={"kind": "red"}, amount="1e3"), "bad_money"),
        (line(2, "bet_placed", bet="b1", spot={"kind": "red"}, amount="1.005"), "bad_money"),
        (line(2, "bet_placed", bet="b 1", spot={"kind": "red"}, amount="1"), "bad_code"),
    ],
)
def test_hostile_lines_are_rejected_never_raised(app: LedgerApp, text: str, code: str) -> None:
    report = ingest(app, [text])
    assert [r.code for r in report.rejected] == [code]
