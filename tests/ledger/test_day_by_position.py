"""``ledger report --day`` reads only the checkpoint intervals that hold the day (the signed seal
index), from the checkpoint before it, and gives exactly the figures and findings of a pass over
the whole store — on a store of several days sealed at cuts that fall inside rounds, for the
first, a middle and the last day; an edited index is not used (the whole store is read, and the
summary says so)."""

from __future__ import annotations

import itertools
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from ledger.games import GAMES
from ledger.proof.checkpoints import seal
from ledger.proof.seal import generate_key, public_pem
from ledger.proof.seal_index import INDEX_TABLE
from ledger.report.day import DaySummary, summarize_day
from ledger.report.day_index import DayPlan, plan_day
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.sql import connect
from ledger.storage.store import LedgerApp, open_ledger
from ledger.tools.simulate import simulate
from projections.gaming_day import day_of
from tests.ledger.store_copy import copied

KEY = generate_key()
CUTOFF = 6
GAME_KEYS = ("3CB", "STUD", "SP9", "RL")


def _ingest(app: LedgerApp, lines: list[dict[str, Any]], path: Path) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with open(path, encoding="utf-8") as stream:
        assert Ingestor(app, batch_events=50).ingest(numbered_lines(stream)).rejected == []


@cache
def _simulated(rounds: int) -> tuple[dict[str, Any], ...]:
    """The simulated feed of :func:`_build` (made once per size: each store of that size reads
    the same lines, which nothing changes)."""
    return tuple(
        simulate(
            [GAMES[k] for k in GAME_KEYS],
            rounds=rounds,
            tables=2,
            seed=2,
            error_rate=0.25,
            round_interval=timedelta(hours=3),
        ).lines
    )


def _build(app: LedgerApp, tmp_path: Path, rounds: int = 24) -> list[date]:
    """Three to four gaming days (two to three with 12 ``rounds``), sealed at the start of each
    day (the nightly seal) and in the middle of each (a cut inside rounds). With this seed the
    last 3CB round of a table on a day that is not the last carries a bet into the next day's
    first round."""
    lines = list(_simulated(rounds))
    days = [day_of(datetime_of(line["at"]), CUTOFF) for line in lines]
    starts = [n for n in range(1, len(days)) if days[n] != days[n - 1]]
    bounds = [0, *starts, len(days)]
    cuts = sorted({*bounds, *((a + b) // 2 for a, b in itertools.pairwise(bounds))})
    for n, (a, b) in enumerate(itertools.pairwise(cuts)):
        _ingest(app, lines[a:b], tmp_path / f"part{n}.jsonl")
        seal(app, KEY)
    return sorted(set(days))


def datetime_of(at: Any) -> Any:
    from datetime import datetime

    return at if isinstance(at, datetime) else datetime.fromisoformat(str(at).replace("Z", "+00:00"))


def _everything(summary: DaySummary) -> Any:
    """The JSON and every finding (information too, which the JSON leaves out)."""
    return summary.to_json(), [(t.table, [f.to_json() for f in t.findings]) for t in summary.tables]


def _full_pass(app: LedgerApp, day: date, monkeypatch: pytest.MonkeyPatch) -> DaySummary:
    with monkeypatch.context() as m:
        m.delenv("LEDGER_SEAL_PUBLIC_KEY", raising=False)
        return summarize_day(app, day, CUTOFF)


@dataclass(frozen=True)
class Built:
    """A store built by :func:`_build` once per test module and backend, and its gaming days."""

    url: str
    days: list[date]


@pytest.fixture(scope="module")
def built(module_db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The store the tests read (built once per backend); a test that edits it edits a copy
    (:func:`_copy`)."""
    app = open_ledger(module_db_url)
    try:
        return Built(module_db_url, _build(app, tmp_path_factory.mktemp("days")))
    finally:
        app.close()


@pytest.fixture
def built_app(built: Built) -> Iterator[LedgerApp]:
    app = open_ledger(built.url)
    yield app
    app.close()


@pytest.fixture
def keyed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "seal.key.pub"
    path.write_bytes(public_pem(KEY.public_key()))
    monkeypatch.setenv("LEDGER_SEAL_PUBLIC_KEY", str(path))


# Its SQLite case runs by default; on PostgreSQL, the encrypted store's test below reads a day by
# position and compares it with the full pass (on a smaller store) by default.
@pytest.mark.slow_postgres
def test_each_day_by_position_equals_the_full_pass(
    built: Built, built_app: LedgerApp, keyed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    app, days = built_app, built.days
    assert len(days) >= 3
    middle = days[len(days) // 2]
    plan = plan_day(app, middle, CUTOFF)
    assert isinstance(plan, DayPlan) and plan.start is not None and plan.stop is not None  # by position
    for day in [days[0] - timedelta(days=1), *days, days[-1] + timedelta(days=1)]:
        near = summarize_day(app, day, CUTOFF)
        assert near.note is None, day
        # A day no line of the feed falls on (``days`` is every line's): a pass over the whole
        # store gives the empty summary, so that is compared instead of a pass that finds it.
        whole = _full_pass(app, day, monkeypatch) if day in days else DaySummary(day, [])
        assert json.dumps(_everything(near)) == json.dumps(_everything(whole)), day
    assert any(t.findings for t in summarize_day(app, middle, CUTOFF).tables)  # errors were injected


@pytest.mark.slow_postgres  # its SQLite case runs by default; the encrypted store's test covers PostgreSQL
def test_an_edited_index_is_not_used(
    built: Built, tmp_path: Path, keyed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An insider rewrites every interval to say no round closed there (so the day would look
    empty): the signatures no longer hold, the index is not used, the whole store is read."""
    with copied(built.url, tmp_path, built.days, lambda app: _build(app, tmp_path)) as (app, days):
        _edit_the_index_and_read(app, days, monkeypatch)


def _edit_the_index_and_read(app: LedgerApp, days: list[date], monkeypatch: pytest.MonkeyPatch) -> None:
    middle = days[len(days) // 2]
    db = connect(app)
    table = db.dialect.qualified(INDEX_TABLE)
    p = db.dialect.p
    try:
        with db.write() as cur:
            if db.dialect.is_sqlite:
                cur.execute("DROP TRIGGER ledger_seal_index_no_update")
            else:
                cur.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        rows = db.read(f"SELECT number, body FROM {table} WHERE kind = 'interval'")
        with db.write() as cur:
            for number, body in rows:
                plain = json.loads(zlib.decompress(bytes(body)))
                forged = zlib.compress(json.dumps({**plain, "first": None, "last": None}).encode())
                cur.execute(
                    f"UPDATE {table} SET body = {p} WHERE kind = 'interval' AND number = {p}",
                    (forged, number),
                )
    finally:
        db.close()
    assert isinstance(plan_day(app, middle, CUTOFF), str)
    near = summarize_day(app, middle, CUTOFF)
    assert near.note is not None and "whole store" in near.note
    assert near.tables
    assert json.dumps(_everything(near)) == json.dumps(_everything(_full_pass(app, middle, monkeypatch)))


@pytest.mark.slow_postgres  # its SQLite case runs by default; the encrypted store's test covers PostgreSQL
def test_without_a_sealing_key_the_whole_store_is_read_and_said(
    built: Built, built_app: LedgerApp, keyed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LEDGER_SEAL_PUBLIC_KEY")
    summary = summarize_day(built_app, built.days[1], CUTOFF)
    assert summary.note is not None and "no sealing public key" in summary.note
    assert summary.tables


def test_an_encrypted_store_is_read_by_position_too(
    db_url: str, tmp_path: Path, keyed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``LEDGER_CIPHER_KEY`` the index rows are stored encrypted, and read back with it."""
    from eventsourcing.cryptography import AESCipher

    from ledger.storage.store import open_ledger

    monkeypatch.setenv("LEDGER_CIPHER_KEY", AESCipher.create_key(32))
    app = open_ledger(db_url)
    try:
        days = _build(app, tmp_path, rounds=12)  # what is read is the index: a day or two are enough
        middle = days[len(days) // 2]
        assert isinstance(plan_day(app, middle, CUTOFF), DayPlan)
        db = connect(app)
        try:
            bodies = db.read(f"SELECT body FROM {db.dialect.qualified(INDEX_TABLE)}")
        finally:
            db.close()
        assert bodies and not any(_inflates(bytes(b)) for (b,) in bodies)  # not plain zlib
        near = summarize_day(app, middle, CUTOFF)
        assert near.note is None and near.tables
        assert json.dumps(_everything(near)) == json.dumps(_everything(_full_pass(app, middle, monkeypatch)))
    finally:
        app.close()


def _inflates(data: bytes) -> bool:
    try:
        zlib.decompress(data)
    except zlib.error:
        return False
    return True
