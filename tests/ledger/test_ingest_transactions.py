"""Several saves in one transaction (``Ingestor(saves_per_commit=…)``, ten by default on SQLite).

- A transaction of saves commits or not as a whole: an ingest SIGKILLed at a seeded point (a
  line read while saves wait for their commit, before a commit, inside its open transaction,
  just after it) leaves exactly the saves of the transactions that committed; killed again
  while it re-runs, then re-run to the end, the store holds what a clean ingest stores, row
  for row (the chain links aside: where a save ends depends on where the run began), and the
  re-run's report counts what it committed.
- The duplicate check sees the lines of saves not committed yet: a line repeated several saves
  later, inside one transaction, is a duplicate (a conflicting one is rejected), as it is when
  every save commits on its own.
- Another writer committing first makes the whole transaction's lines be examined again.
- Every save is committed when ``ingest`` returns (the live follower calls it batch by batch).

On SQLite and PostgreSQL (where the transaction sends one statement per save).
"""

from __future__ import annotations

import json
import random
import re
import signal
import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from bench.feed import simulated_games
from ledger.services.ingest import SAVES_PER_COMMIT, Ingestor, IngestReport
from ledger.storage.store import LedgerApp, open_ledger
from ledger.tools.simulate import simulate
from ledger.verify.engine import verify_store
from tests.conftest import tiered
from tests.reliability.conftest import driver_cmd

ROOT = Path(__file__).resolve().parents[2]
BATCH = 23
PER_COMMIT = 4
SEED = 20261127


def _clean() -> list[bytes]:
    """A small six-game feed, every line valid."""
    return list(_clean_lines())


@cache
def _clean_lines() -> tuple[bytes, ...]:
    """:func:`_clean`'s lines, simulated once for the tests of both stores."""
    sim = simulate(simulated_games(), rounds=2, tables=2, seed=3, error_rate=0.0)
    return tuple(json.dumps(obj, separators=(",", ":")).encode() for obj in sim.lines)


def _conflicting(line: bytes) -> bytes:
    """The same key at another time: a conflicting duplicate of ``line``."""
    minute = re.search(rb"T\d\d:(\d)", line)
    assert minute is not None
    other = b"1" if minute.group(1) != b"1" else b"2"
    return line[: minute.start(1)] + other + line[minute.end(1) :]


def _feed() -> list[bytes]:
    """The small feed with injected errors, exact and conflicting duplicates, gaps."""
    sim = simulate(simulated_games(), rounds=2, tables=2, seed=3, error_rate=0.2)
    rng = random.Random(9)
    out: list[bytes] = []
    for obj in sim.lines:
        text = json.dumps(obj, separators=(",", ":")).encode()
        r = rng.random()
        if r < 0.03:
            continue  # a gap
        if r < 0.08:
            out.append(text)  # repeated at once
        elif r < 0.10:
            out.append(_conflicting(text))
        out.append(text)
    return out + out[::7]  # lines again, much later: duplicates of saves already made


def _write(lines: list[bytes], path: Path) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def _rows(app: LedgerApp) -> list[tuple[str, int, str, bytes]]:
    """Every stored row but the chain links, in log order."""
    return [
        (str(oid), int(version), str(topic), bytes(state))
        for page in app.rows(page=500)
        for _, oid, version, topic, state in page
        if topic != "chain/linked"
    ]


def _feed_rows(app: LedgerApp) -> int:
    return sum(1 for _, _, topic, _ in _rows(app) if not topic.startswith("table/"))


def _summary(report: IngestReport) -> tuple[Any, ...]:
    return (report.stored, report.duplicates, [(r.line, r.code, r.field) for r in report.rejected])


def _url(db_url: str, tmp_path: Path, name: str) -> str:
    """Another empty store on the same backend as ``db_url``."""
    if db_url.startswith("sqlite"):
        return f"sqlite:///{tmp_path / (name + '.db')}"
    base, schema = db_url.split("?schema=")
    return f"{base}?schema={schema}_{name}"


def _drop(url: str) -> None:
    if url.startswith("postgres"):
        import psycopg
        from psycopg import sql

        base, schema = url.split("?schema=")
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def _numbered(lines: list[bytes]) -> list[tuple[int, str | bytes]]:
    return list(enumerate(lines, start=1))


class _Commits:
    """Wraps a store's ``insert_events``: the rows of each transaction, and how many lines
    the ingest had read when it committed."""

    def __init__(self, app: LedgerApp) -> None:
        self.rows: list[int] = []
        self.read_at: list[int] = []
        self.read = 0
        recorder: Any = app.recorder
        inner = recorder.insert_events

        def counted(columns: Any, **kwargs: Any) -> Any:
            ids = inner(columns, **kwargs)
            self.rows.append(len(columns))
            self.read_at.append(self.read)
            return ids

        recorder.insert_events = counted

    def lines(self, lines: list[bytes]) -> Iterator[tuple[int, str | bytes]]:
        for numbered in _numbered(lines):
            self.read += 1
            yield numbered


def _killed(url: str, feed: Path, phase: str, at: int) -> None:
    done = subprocess.run(
        driver_cmd(url, feed, at, phase, BATCH, PER_COMMIT),
        cwd=ROOT,
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()[-2000:]


_CLEAN: dict[str, tuple[_Commits, IngestReport, list[tuple[str, int, str, bytes]]]] = {}


def _clean_ingest(
    db_url: str, lines: list[bytes]
) -> tuple[_Commits, IngestReport, list[tuple[str, int, str, bytes]]]:
    """A clean ingest of ``lines`` on ``db_url``'s backend: its transactions, its report and its
    rows (once per backend: the kill points of the test below compare with the same one)."""
    backend = db_url.split(":")[0]
    if backend not in _CLEAN:
        clean = open_ledger(db_url)
        try:
            commits = _Commits(clean)
            report = Ingestor(clean, batch_events=BATCH, saves_per_commit=PER_COMMIT).ingest(
                commits.lines(lines)
            )
            _CLEAN[backend] = (commits, report, _rows(clean))
        finally:
            clean.close()
    return _CLEAN[backend]


PHASES = ("inside", "line", "before", "after")
"""Where the first kill falls: inside a transaction still open, at a line read while saves wait
for their commit, just before a commit, just after it."""


# The kill inside an open transaction (and the kill during the re-run, at a line) by default, on
# SQLite; the other points, and PostgreSQL (where each save is a statement of the transaction),
# in the slow tier.
@pytest.mark.slow_postgres
@pytest.mark.parametrize("phase", tiered(PHASES, 1))
def test_a_kill_anywhere_loses_whole_transactions_and_a_rerun_stores_what_a_clean_ingest_does(
    db_url: str, tmp_path: Path, phase: str
) -> None:
    lines = _feed()
    feed = _write(lines, tmp_path / "feed.jsonl")
    commits, expected, expected_rows = _clean_ingest(db_url, lines)
    assert len(commits.rows) >= 4 and expected.saves >= 4 * PER_COMMIT - 2
    assert expected.duplicates > 20 and {r.code for r in expected.rejected} >= {"conflicting_duplicate"}
    totals = [sum(commits.rows[:n]) for n in range(len(commits.rows) + 1)]
    rng = random.Random(f"{SEED}:{db_url.split(':')[0]}:{phase}")
    url = _url(db_url, tmp_path, "killed")
    try:
        if phase == "line":
            at = rng.randint(2, len(lines) - BATCH)
            committed = sum(1 for read in commits.read_at if read < at)
        else:
            at = rng.randint(1, len(commits.rows) - 1)
            committed = at if phase == "after" else at - 1
        _killed(url, feed, phase, at)
        app = open_ledger(url)
        try:  # exactly the transactions that committed, whole
            assert app.count_rows(upto=2**62) == totals[committed], (phase, at)
            assert verify_store(app).integrity_ok
            before = _feed_rows(app)
        finally:
            app.close()
        # Killed again while it re-runs, at a line of its own; then re-run to the end.
        _killed(url, feed, "line", rng.randint(2, len(lines) - 1))
        app = open_ledger(url)
        try:
            assert verify_store(app).integrity_ok
            again = _feed_rows(app)
            assert again >= before
            report = Ingestor(app, batch_events=BATCH, saves_per_commit=PER_COMMIT).ingest(_numbered(lines))
            assert _rows(app) == expected_rows, (phase, at)
            assert report.stored == _feed_rows(app) - again == expected.stored - again
            assert [(r.line, r.code) for r in report.rejected] == [
                (r.line, r.code) for r in expected.rejected
            ]
            assert report.stored + report.duplicates == expected.stored + expected.duplicates
            assert verify_store(app).integrity_ok
        finally:
            app.close()
    finally:
        _drop(url)


def test_a_line_repeated_in_a_later_save_of_the_same_transaction_is_a_duplicate(
    db_url: str, tmp_path: Path
) -> None:
    clean = _clean()[:300]
    lines = [*clean[:120], *clean[5:40], *clean[120:], *clean[60:90], _conflicting(clean[50])]
    single_url = _url(db_url, tmp_path, "single")
    grouped, single = open_ledger(db_url), open_ledger(single_url)
    try:
        commits = _Commits(grouped)
        got = Ingestor(grouped, batch_events=10, saves_per_commit=1000).ingest(_numbered(lines))
        assert len(commits.rows) == 1 and got.saves > 25  # every save in one transaction
        want = Ingestor(single, batch_events=10, saves_per_commit=1).ingest(_numbered(lines))
        assert got.duplicates == 35 + 30
        assert [(r.line, r.code) for r in got.rejected] == [(len(lines), "conflicting_duplicate")]
        assert _summary(got) == _summary(want) and got.saves == want.saves
        assert _rows(grouped) == _rows(single)
        assert verify_store(grouped).exit_code == verify_store(single).exit_code
    finally:
        grouped.close()
        single.close()
        _drop(single_url)


def test_another_writer_first_makes_every_save_of_the_transaction_be_examined_again(
    db_url: str, tmp_path: Path
) -> None:
    lines = _clean()[:400]
    reference_url = _url(db_url, tmp_path, "reference")
    ours, theirs, reference = open_ledger(db_url), open_ledger(db_url), open_ledger(reference_url)
    try:
        recorder: Any = ours.recorder
        inner = recorder.insert_events
        calls: list[int] = []

        def other_writer_first(columns: Any, **kwargs: Any) -> Any:
            if not calls:  # before our first transaction: the other writer stores 110 lines
                assert Ingestor(theirs, batch_events=50).ingest(_numbered(lines)[:110]).stored == 110
            calls.append(len(columns))
            return inner(columns, **kwargs)

        recorder.insert_events = other_writer_first
        report = Ingestor(ours, batch_events=20, saves_per_commit=100).ingest(_numbered(lines))
        assert report.retries == 1 and report.rejected == []
        assert report.duplicates == 110 and report.stored == len(lines) - 110
        Ingestor(reference, batch_events=20).ingest(_numbered(lines))
        assert sorted(_rows(ours)) == sorted(_rows(reference))
        assert verify_store(ours).exit_code == 0
    finally:
        ours.close()
        theirs.close()
        reference.close()
        _drop(reference_url)


def test_every_save_is_committed_when_ingest_returns(db_url: str) -> None:
    lines = _numbered(_clean()[:250])
    app = open_ledger(db_url)
    try:
        ingestor = Ingestor(app, batch_events=15, saves_per_commit=50)
        stored = 0
        for start in range(0, len(lines), 70):  # as the follower calls it, batch after batch
            stored += ingestor.ingest(lines[start : start + 70]).stored
            assert _feed_rows(app) == stored
        assert stored == len(lines)
    finally:
        app.close()


def test_the_store_default_groups_saves_on_sqlite_only(db_url: str) -> None:
    app = open_ledger(db_url)
    try:
        expected = SAVES_PER_COMMIT["sqlite" if db_url.startswith("sqlite") else "postgres"]
        assert Ingestor(app).saves_per_commit == expected
    finally:
        app.close()
    assert SAVES_PER_COMMIT["sqlite"] > 1 and SAVES_PER_COMMIT["postgres"] == 1
