"""Ingest's shortcut for the usual line stores what its plain path stores.

- ``Ingestor`` appends the usual line (canonical, the next ``seq`` of an open round) in its
  group loop, and every other line through ``_accept``; the reference parser (``fast=False``)
  gives no canonical bytes, so every line of a reference ingest takes ``_accept``. The two
  ingests of one faulty, mutated feed (duplicates inside a batch, reordered keys, cut lines,
  gaps) must store the same rows and report the same.
- ``bounded_lines`` cuts a longer line and skips its rest; the next line keeps its number.
"""

from __future__ import annotations

import io
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from bench.feed import simulated_games
from ledger.services.ingest import Ingestor, IngestReport, bounded_lines
from ledger.storage.store import LedgerApp, open_ledger
from ledger.tools.simulate import simulate

_AT = re.compile(rb'"at":"[^"]*"')


def _feed() -> list[bytes]:
    """A small six-game feed with injected errors, then mutated line by line."""
    sim = simulate(simulated_games(), rounds=3, tables=2, seed=11, error_rate=0.3)
    rng = random.Random(4)
    out: list[bytes] = []
    for obj in sim.lines:
        text = json.dumps(obj, separators=(",", ":"))
        r = rng.random()
        if r < 0.04:
            text = text[: rng.randrange(len(text))]  # cut
        elif r < 0.08:
            text = json.dumps(dict(reversed(list(obj.items()))), separators=(",", ":"))  # reordered
        elif r < 0.10:
            text = text.replace(",", ", ", 1)  # not canonical, same content
        elif r < 0.12:
            continue  # a gap
        elif r < 0.18:
            out.append(text.encode())  # a duplicate, usually inside the same batch
        elif r < 0.20:
            text = text.replace('"seq":', '"seq":1', 1)  # an out-of-order seq
        elif r < 0.24:
            out.append(text.encode())
            minute = re.search(r"T\d\d:(\d)", text)
            if minute is not None:  # the same line at another time: a conflicting duplicate
                other = "1" if minute.group(1) != "1" else "2"
                text = text[: minute.start(1)] + other + text[minute.end(1) :]
        out.append(text.encode())
    return out + out[: len(out) // 3]  # the start again: duplicates of stored rows


def _rows(app: LedgerApp) -> list[tuple[str, int, str, bytes]]:
    """Every stored row in order; a chain link's wall-clock time and digest blanked."""
    rows = []
    for page in app.rows(page=500):
        for _, oid, version, topic, state in page:
            state = bytes(state)
            if topic == "chain/linked":
                state = _AT.sub(b'"at":""', state)
                state = state[:10] + b"0" * 64 + state[74:]
            rows.append((str(oid), int(version), str(topic), state))
    return rows


def _summary(report: IngestReport) -> tuple[Any, ...]:
    rejected = [(r.line, r.code, r.message, r.field) for r in report.rejected]
    return (report.lines, report.stored, report.duplicates, rejected, report.rounds_opened, report.saves)


def _ingest(app: LedgerApp, lines: list[bytes], *, fast: bool) -> tuple[Any, ...]:
    numbered = list(enumerate(lines, start=1))
    return _summary(Ingestor(app, batch_events=37, fast=fast).ingest(numbered))


# Its SQLite case by default, the PostgreSQL one in the slow tier: the shortcut (the default
# path) runs in every PostgreSQL ingest test, and test_ingest.py rejects lines there by default.
@pytest.mark.slow_postgres
def test_the_usual_line_and_the_plain_path_store_the_same_rows(db_url: str, tmp_path: Path) -> None:
    lines = _feed()
    reference = open_ledger(f"sqlite:///{tmp_path / 'reference.db'}")
    fast = open_ledger(db_url)
    try:
        expected = _ingest(reference, lines, fast=False)
        got = _ingest(fast, lines, fast=True)
        assert got == expected
        stored, duplicates, rejected = expected[1], expected[2], expected[3]
        assert stored > 100 and duplicates > 10 and len(rejected) > 10
        codes = {code for _, code, _, _ in rejected}
        assert {"conflicting_duplicate", "seq_gap"} <= codes
        assert _rows(fast) == _rows(reference)
        # Again: everything is a duplicate now, on both sides alike.
        assert _ingest(fast, lines, fast=True) == _ingest(reference, lines, fast=False)
        assert _rows(fast) == _rows(reference)
    finally:
        reference.close()
        fast.close()


def test_a_long_line_is_cut_and_the_next_line_keeps_its_number() -> None:
    data = b"x" * 300_000 + b"\r\n" + b"y" * 10 + b"\n" + b"z" * 2000
    got = [(n, len(text)) for n, text in bounded_lines(io.BytesIO(data), 1000)]
    assert got == [(1, 1001), (2, 10), (3, 1001)]
