"""Ingest's speed paths give exactly what the plain paths give (issue 17).

- a canonical line is validated from its bytes and stored as they are: same fact, same stored
  bytes as ``parse_line`` + ``content_of``; anything not canonical takes the full path;
- the bulk recorders hand back the notification ids the store really gave, and still refuse a
  second write of the same version;
- ingest's aggregate ids equal and hash like plain ``UUID``s.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from uuid import UUID

import pytest
from eventsourcing.persistence import IntegrityError, StoredEvent

from ledger.codec.ids import fast_round_id as _round_id
from ledger.codec.library import BulkSQLiteRecorder
from ledger.codec.library.postgres import BulkPostgresRecorder
from ledger.codec.openings import OpeningParser
from ledger.codec.parse import MAX_LINE_BYTES, parse_line
from ledger.domain.round import round_id
from ledger.services.ingest import ingest_file
from ledger.storage.store import content_of, open_ledger

GAMES = ("rl", "fpc", "3cb", "sp9", "mj", "stud")


def _lines(examples: Path) -> list[bytes]:
    return [
        line.encode()
        for name in GAMES
        for line in (examples / f"{name}.jsonl").read_text().splitlines()
        if line.strip()
    ]


def test_every_example_line_parses_and_stores_as_the_full_path_does(examples: Path) -> None:
    parser = OpeningParser(MAX_LINE_BYTES)
    lines = _lines(examples)
    for n, line in enumerate(lines, 1):
        fact, content = parser.parse_with_content(line, n)
        assert fact == parse_line(line, n)
        if content is not None:
            # the line itself (canonical), or its members in the canonical order (reordered)
            assert content == content_of(fact)
            assert content == line or sorted(content) == sorted(line)
    assert parser.canonical > len(lines) // 2  # the shortcut did most of the work


def _canonical_line(examples: Path) -> bytes:
    parser = OpeningParser(MAX_LINE_BYTES)
    for n, line in enumerate(_lines(examples), 1):
        if parser.parse_with_content(line, n)[1] is not None:
            return line
    raise AssertionError("no canonical example line")


@pytest.mark.parametrize(
    "change",
    [
        lambda line: line.replace(b'"seq":', b'"seq" :', 1),  # a space
        lambda line: line[:-1] + b',"seq":99}',  # a duplicated key
        lambda line: line.replace(b'"v":1,', b'"v":1,"v":1,', 1),  # a duplicated envelope key
        lambda line: line[:-1] + b',"extra":1}',  # an unknown key
        lambda line: line.replace(b'"table":"', b'"table":"\\u0041', 1),  # an escape
    ],
)
def test_a_line_that_is_not_canonical_takes_the_full_path(examples: Path, change: object) -> None:
    line = change(_canonical_line(examples))  # type: ignore[operator]
    fact, content = OpeningParser(MAX_LINE_BYTES).parse_with_content(line, 7)
    assert content is None
    assert fact == parse_line(line, 7)


def test_ingest_ids_equal_plain_uuids_and_pickle_as_them() -> None:
    fast, plain = _round_id("RL-01", "000001"), round_id("RL-01", "000001")
    assert fast == plain and hash(fast) == hash(plain) and {plain: 1}[fast] == 1
    assert fast.hex == plain.hex and str(fast) == str(plain)
    again = pickle.loads(pickle.dumps(fast))
    assert again == plain and type(again) is UUID


def test_the_bulk_recorder_returns_the_ids_it_wrote_and_refuses_a_rewrite(db_url: str) -> None:
    app = open_ledger(db_url)
    try:
        assert isinstance(app.recorder, (BulkSQLiteRecorder, BulkPostgresRecorder))
        one, two = UUID(int=1), UUID(int=2)
        rows = [
            StoredEvent(originator_id=one, originator_version=v, topic="t", state=b"s%d" % v)
            for v in (1, 2, 3)
        ]
        first = app.recorder.insert_events(rows)
        second = app.recorder.insert_events(
            [StoredEvent(originator_id=two, originator_version=1, topic="t", state=b"x")]
        )
        stored = app.recorder.select_notifications(0, 10)
        assert list(first or []) + list(second or []) == [n.id for n in stored]
        assert [(n.originator_id, n.originator_version, n.state) for n in stored] == [
            (one, 1, b"s1"),
            (one, 2, b"s2"),
            (one, 3, b"s3"),
            (two, 1, b"x"),
        ]
        with pytest.raises(IntegrityError):
            app.recorder.insert_events(
                [StoredEvent(originator_id=two, originator_version=2, topic="t", state=b"y"), rows[0]]
            )
        assert len(app.recorder.select_notifications(0, 10)) == 4  # nothing of the failed save
    finally:
        app.close()


def test_a_feed_ingested_through_the_bulk_path_verifies_clean(
    db_url: str, examples: Path, tmp_path: Path
) -> None:
    from ledger.verify.engine import verify_store

    feed = tmp_path / "all.jsonl"
    feed.write_bytes(b"\n".join(_lines(examples)) + b"\n")
    app = open_ledger(db_url)
    try:
        report = ingest_file(app, feed)
        assert report.exit_code == 0 and report.stored == len(_lines(examples))
        verified = verify_store(app)
        assert verified.integrity_ok and verified.rounds_checked > 0
        assert json.dumps(verified.to_json())  # serialisable, as the CLI prints it
    finally:
        app.close()
