"""Integrity: changing, removing or reordering stored events is detected (exit code 3).

Each attack is played with plain SQL against the real database, on SQLite and PostgreSQL.
Truncating the newest save is invisible from inside the store; ``--expect-head`` catches it.
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger.services.ingest import Ingestor, ingest_file, numbered_lines
from ledger.storage.store import LedgerApp, open_ledger
from ledger.verify.engine import verify_store


def _fill(app: LedgerApp, examples: Path) -> None:
    for name in ("rl.jsonl", "fpc.jsonl"):
        with open(examples / name, encoding="utf-8") as stream:
            assert Ingestor(app, batch_events=40).ingest(numbered_lines(stream)).rejected == []


def _codes(app: LedgerApp, **kw: str) -> tuple[int, list[str]]:
    report = verify_store(app, **kw)  # type: ignore[arg-type]
    return report.exit_code, sorted({f.code for f in report.findings})


def test_an_untouched_store_verifies_clean(app, raw, examples) -> None:
    _fill(app, examples)
    assert _codes(app) == (0, [])


def test_changing_an_amount_in_the_stored_bytes_is_detected(app, raw, examples) -> None:
    _fill(app, examples)
    rows = raw.rows()
    target = next((i, s) for i, s in rows if b'"amount":"100"' in s)
    raw.set_state(target[0], target[1].replace(b'"amount":"100"', b'"amount":"900"'))
    assert _codes(app) == (3, ["chain_broken"])


def test_removing_an_event_is_detected(app, raw, examples) -> None:
    _fill(app, examples)
    rows = raw.rows()
    raw.delete(rows[len(rows) // 2][0])
    assert _codes(app)[0] == 3


def test_swapping_two_events_is_detected(app, raw, examples) -> None:
    _fill(app, examples)
    rows = raw.rows()
    (a, sa), (b, sb) = rows[3], rows[4]
    raw.set_state(a, sb)
    raw.set_state(b, sa)
    assert _codes(app)[0] == 3


def test_a_rewritten_event_with_a_recomputed_digest_still_breaks_the_next_link(app, raw, examples) -> None:
    from ledger.codec.chain import frame, next_digest, unframe

    _fill(app, examples)
    rows = raw.rows()
    (_, s0), (i1, s1) = rows[0], rows[2]  # round_opened and the first bet (1 is the table's)
    d0, _ = unframe(s0)
    _, c1 = unframe(s1)
    forged = c1.replace(b'"amount":"150"', b'"amount":"10"')
    assert forged != c1
    raw.set_state(i1, frame(next_digest(d0, forged), forged))
    assert _codes(app)[0] == 3


def test_truncating_the_newest_save_is_caught_only_against_a_kept_head(app, raw, examples) -> None:
    _fill(app, examples)
    head_before = verify_store(app).head
    rows = raw.rows()
    # The newest save is the events after the previous chain link: remove them all.
    last_link = max(i for i, s in rows if b'"type":"linked"' in s and i != rows[-1][0])
    for i, _ in rows:
        if i > last_link:
            raw.delete(i)
    code, _ = _codes(app)
    assert code in (0, 1)  # the shorter store is self-consistent …
    report = verify_store(app, expect_head=head_before)
    assert report.exit_code == 3  # … but no longer contains the head kept elsewhere
    assert "chain_broken" in {f.code for f in report.findings}


def test_the_head_of_a_grown_store_still_contains_an_older_head(app, examples) -> None:
    ingest_file(app, examples / "rl.jsonl")
    old = verify_store(app).head
    ingest_file(app, examples / "fpc.jsonl")
    assert verify_store(app, expect_head=old).exit_code == 0


def _sqlite_store(tmp: Path, examples: Path) -> tuple[bytes, list[bytes]]:
    path = tmp / "base.db"
    app = open_ledger(f"sqlite:///{path}")
    _fill(app, examples)
    app.close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        states = [bytes(r[0]) for r in conn.execute("SELECT state FROM stored_events")]
    return path.read_bytes(), states


_BASE: dict[str, tuple[bytes, list[bytes]]] = {}


@settings(
    max_examples=min(60, settings.default.max_examples),  # the dev profile: fewer by default
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(which=st.integers(min_value=0), offset=st.integers(min_value=0), bit=st.integers(0, 7))
def test_one_flipped_byte_of_any_stored_event_in_the_sqlite_file_exits_3(
    tmp_path: Path, examples: Path, which: int, offset: int, bit: int
) -> None:
    if "db" not in _BASE:
        _BASE["db"] = _sqlite_store(tmp_path, examples)
    data, states = _BASE["db"]
    state = states[which % len(states)]
    at = data.find(state)
    assert at >= 0
    flipped = bytearray(data)
    flipped[at + offset % len(state)] ^= 1 << bit
    target = tmp_path / f"flip-{random.random()}.db"
    target.write_bytes(bytes(flipped))
    app = open_ledger(f"sqlite:///{target}")
    try:
        assert verify_store(app).exit_code == 3
    finally:
        app.close()
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(f"{target}{suffix}"):
                os.remove(f"{target}{suffix}")
    shutil.rmtree(tmp_path / "unused", ignore_errors=True)
