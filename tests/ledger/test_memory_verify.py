"""Verify's memory does not grow with the store (issue 31: peak memory flat).

What a pass keeps per round must be dropped when the round closes: the rounds in play, their
openings waiting for the table's start, the chain digests of aggregates that can still grow.
Checks on generated stores of every simulated game: the pass's structures hold nothing of a
closed round at the end, no head per save is kept, and the memory a pass holds once it has read
the whole log (``tracemalloc``, the decoders' bounded caches made small so that they are full on
a small store as on a large one) grows with the rounds by no more than :data:`BYTES_PER_ROUND`.
"""

from __future__ import annotations

import gc
import json
import sqlite3
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import pytest

from ledger.codec import openings
from ledger.codec.chain import CHAIN_ID
from ledger.games import GAMES
from ledger.games.stud_poker import session as stud_session
from ledger.services.ingest import ingest_file
from ledger.storage.store import open_ledger
from ledger.tools.simulate import simulate
from ledger.tools.simulators import SIMULATORS
from ledger.verify.engine import VerifyPass, verify_store
from ledger.verify.integrity import ChainVerifier

ROUNDS_PER_TABLE = 100
"""Rounds of each table of the generated store (two tables per simulated game)."""
BYTES_PER_ROUND = 1024
"""The most a pass may hold per round more on the larger store than on the smaller, both read to
the end. It keeps 8 bytes per ended round (the chain check's id prefixes); the rest of what the
two differ by (about 300 bytes a round here, 0.27 MB in all) does not grow with the store: the
largest dicts' tables and the bounded caches' churn. Anything kept per stored row (45 a round)
or the facts of each round exceed it; the first test names the per-round structures."""


@dataclass(frozen=True)
class Store:
    """The generated store: its URL, rounds and stored rows."""

    url: str
    rounds: int
    rows: int


def _store(folder: Path, rounds_per_table: int) -> Store:
    games = [g for g in GAMES.values() if g.key in SIMULATORS]
    sim = simulate(games, rounds=rounds_per_table, tables=2, seed=7)
    feed = folder / "feed.jsonl"
    feed.write_text("".join(json.dumps(line) + "\n" for line in sim.lines), encoding="utf-8")
    path = folder / "ledger.db"
    app = open_ledger(f"sqlite:///{path}")
    try:
        report = ingest_file(app, feed)
        assert report.stored == len(sim.lines)
    finally:
        app.close()
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT count(*) FROM stored_events").fetchone()[0]
    return Store(f"sqlite:///{path}", sim.rounds, rows)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return _store(tmp_path_factory.mktemp("memory"), ROUNDS_PER_TABLE)


@pytest.fixture(scope="module")
def small_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return _store(tmp_path_factory.mktemp("memory-small"), ROUNDS_PER_TABLE // 4)


def test_a_pass_keeps_nothing_of_a_closed_round(store: Store) -> None:
    app = open_ledger(store.url)
    try:
        chain = ChainVerifier(app.ledger_mapper, heads=False)
        scan = VerifyPass(app.ledger_mapper, chain=chain)
        links = 0
        for page in app.rows():
            links += sum(1 for row in page if row[1] == CHAIN_ID.hex)
            scan.feed(page)
        stream = scan._stream
        # Every round of the generated feed closed: nothing of one is left in play.
        assert stream.gathering == {}
        assert scan._opened_at == {} and scan._selected == set() and scan._unpaired == {}
        # The chain check keeps a digest per aggregate that can still grow (tables, the chain),
        # none per ended round, and no head per save.
        tables = {t for t in scan._newest}
        assert len(chain._last) == len(tables) + 1
        assert links > 10 and chain.heads_seen == set()
        assert len(chain._ended) == scan.report.rounds_checked == store.rounds
        report = scan.finish()
        assert report.integrity_ok and all(f.severity != "error" for f in report.findings)
    finally:
        app.close()


def test_expect_head_is_still_checked_without_every_head_kept(store: Store) -> None:
    app = open_ledger(store.url)
    try:
        earlier = verify_store(app, stop=store.rows // 2).head  # a head in the middle of the log
        assert earlier is not None and earlier != verify_store(app).head
        assert verify_store(app, expect_head=earlier).integrity_ok
        missing = verify_store(app, expect_head="0" * 64)
        assert not missing.integrity_ok
        assert "integrity (--expect-head)" in [f.rule for f in missing.findings]
    finally:
        app.close()


def _held_after_the_pass(store: Store) -> int:
    """The memory a pass over ``store`` holds once it has read every row (every round closed,
    none in play), less what was held before it began, in bytes (``tracemalloc``)."""
    app = open_ledger(store.url)
    tracemalloc.start()
    try:
        # A first pass fills the bounded caches (of the process, of the game sessions); traced
        # from here, what a cache lets go of in the pass measured counts as much as what it takes.
        verify_store(app)
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        scan = VerifyPass(app.ledger_mapper, chain=ChainVerifier(app.ledger_mapper, heads=False))
        for page in app.rows():
            scan.feed(page)
        del page
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
        assert scan._stream.gathering == {}
        return held
    finally:
        tracemalloc.stop()
        app.close()


@pytest.mark.slow
def test_the_memory_a_pass_holds_grows_by_a_few_bytes_per_round(
    store: Store, small_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The decoders' bounded caches, filled at once here as on a large store.
    monkeypatch.setattr(openings, "MAX_TEMPLATES", 4)
    monkeypatch.setattr(openings, "MAX_OPENING_TIMES", 4)
    monkeypatch.setattr(stud_session, "_DUMPED_MAX", 4)
    small, large = _held_after_the_pass(small_store), _held_after_the_pass(store)
    rounds = store.rounds - small_store.rounds
    assert rounds >= 800
    assert large - small <= BYTES_PER_ROUND * rounds, (small, large, (large - small) / rounds)
