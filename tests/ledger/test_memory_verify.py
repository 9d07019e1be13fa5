"""Verify's memory does not grow with the store (issue 31: peak memory flat).

What a pass keeps per round must be dropped when the round closes: the rounds in play, their
openings waiting for the table's start, the chain digests of aggregates that can still grow.
Checks on a generated store of every simulated game: the pass's structures hold nothing of a
closed round at the end, no head per save is kept, and the memory one pass holds
(``tracemalloc``) grows from the end of the store's first part to the end of the log, two points
with no round in play and no row waiting for a chain link, by no more than
:data:`BYTES_PER_ROUND` a round. The bounded caches, which hold as much on any large store, are
kept from counting: the decoders' own made small, the ``functools`` ones emptied at both points,
the JSON decoder's strings filled from the store before the pass.
"""

from __future__ import annotations

import functools
import gc
import json
import sqlite3
import tracemalloc
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from ledger.codec import openings
from ledger.codec.chain import CHAIN_ID
from ledger.codec.rows import RowDecoder
from ledger.games import GAMES
from ledger.games.stud_poker import session as stud_session
from ledger.services.ingest import BATCH_EVENTS, Ingestor, bounded_lines
from ledger.storage.store import LedgerApp, open_ledger
from ledger.tools.simulate import DEFAULT_START, simulate
from ledger.tools.simulators import SIMULATORS
from ledger.verify.engine import VerifyPass, verify_store
from ledger.verify.integrity import ChainVerifier

ROUND_INTERVAL = timedelta(seconds=90)

FIRST_ROUNDS, LATER_ROUNDS = 25, 75
"""Rounds of each table of the generated store: its first part, then its second part, played
later on tables of their own (so that no round is in play between the two)."""
SMALL_ROUNDS = 3, 6
"""The same, for the store of the tests that check what a pass keeps at its end rather than how
it grows: every game, both parts, a few rounds each (saves of :data:`SMALL_BATCH` events, so
that the log still holds many chain links)."""
SMALL_BATCH = 50
TABLES = 2
"""Tables of each simulated game in each part of the generated store."""
BYTES_PER_ROUND = 64
"""The most a pass may hold per round more at the end of the log than at the end of the store's
first part. It keeps 8 bytes per ended round on purpose (the chain check's id prefixes), and some
state per table (the second part's tables are new): 19-28 bytes a round in all here. Keeping the
id of each closed round (110 bytes a round measured), its chain digest (270) or its facts
(75,000) exceeds it."""


@dataclass(frozen=True)
class Store:
    """The generated store: its URL, its rounds, and the rounds of its first part and the id of
    its last row (a chain link)."""

    url: str
    rounds: int
    first_rounds: int
    first_rows: int


def _store(folder: Path, first_rounds: int, later_rounds: int, batch_events: int = BATCH_EVENTS) -> Store:
    games = [g for g in GAMES.values() if g.key in SIMULATORS]
    first = simulate(games, rounds=first_rounds, tables=TABLES, seed=7)
    later = simulate(
        games,
        rounds=later_rounds,
        tables=TABLES,
        seed=8,
        start=DEFAULT_START + ROUND_INTERVAL * (first_rounds + 1),
        round_interval=ROUND_INTERVAL,
    )
    path = folder / "ledger.db"
    app = open_ledger(f"sqlite:///{path}")
    first_rows = 0
    try:
        # Two ingests: the first part's last save ends with a chain link of its own.
        for part, lines in (("first", first.lines), ("later", [_on_own_table(x) for x in later.lines])):
            feed = folder / f"{part}.jsonl"
            feed.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
            with open(feed, "rb") as stream:
                report = Ingestor(app, batch_events=batch_events).ingest(bounded_lines(stream))
            assert report.stored == len(lines) and not report.rejected
            if not first_rows:
                with sqlite3.connect(path) as db:
                    first_rows = db.execute("SELECT max(rowid) FROM stored_events").fetchone()[0]
    finally:
        app.close()
    return Store(f"sqlite:///{path}", first.rounds + later.rounds, first.rounds, first_rows)


def _on_own_table(line: dict[str, Any]) -> dict[str, Any]:
    """A line of the second part: its own table and its own jackpot pool."""
    line = {**line, "table": f"{line['table']}-b"}
    rulebook = line.get("rulebook")
    jackpot = rulebook.get("jackpot") if isinstance(rulebook, dict) else None
    if isinstance(rulebook, dict) and isinstance(jackpot, dict) and isinstance(jackpot.get("pool"), str):
        line["rulebook"] = {**rulebook, "jackpot": {**jackpot, "pool": f"{jackpot['pool']}-b"}}
    return line


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """A small store: what a pass keeps at its end does not depend on the store's size."""
    return _store(tmp_path_factory.mktemp("memory"), *SMALL_ROUNDS, batch_events=SMALL_BATCH)


@pytest.fixture(scope="module")
def large_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """A store large enough for the growth per round to stand out of the fixed costs."""
    return _store(tmp_path_factory.mktemp("memory-large"), FIRST_ROUNDS, LATER_ROUNDS)


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
        links = app.stored(CHAIN_ID)
        earlier = links[len(links) // 2].digest  # a head in the middle of the log
        assert earlier != app.head()
        assert verify_store(app, expect_head=earlier).integrity_ok
        missing = verify_store(app, expect_head="0" * 64)
        assert not missing.integrity_ok
        assert "integrity (--expect-head)" in [f.rule for f in missing.findings]
    finally:
        app.close()


def _held_growth(store: Store) -> tuple[int, int]:
    """What one pass over ``store`` holds more at the end of the log than at the end of its
    first part (``tracemalloc``, in bytes), and how many rounds it closed between the two.

    Traced from before the pass begins: what a bounded cache lets go of between the two points
    counts as much as what it takes."""
    app = open_ledger(store.url)
    tracemalloc.start()
    try:
        _decode_every_row(app)
        scan = VerifyPass(app.ledger_mapper, chain=ChainVerifier(app.ledger_mapper, heads=False))
        for page in app.rows():
            scan.feed(row for row in page if row[0] <= store.first_rows)
            if page[-1][0] >= store.first_rows:
                break
        del page
        assert scan.report.rounds_checked == store.first_rounds
        assert scan._stream.gathering == {} and scan._opened_at == {}
        first = _held()
        for page in app.rows(after=store.first_rows):
            scan.feed(page)
        del page
        last = _held()
        assert scan._stream.gathering == {} and scan.report.rounds_checked == store.rounds
        return last - first, store.rounds - store.first_rounds
    finally:
        tracemalloc.stop()
        app.close()


def _decode_every_row(app: LedgerApp) -> None:
    """Decode every stored row once, as a pass does: the JSON decoder's own bounded cache of
    strings (in pydantic-core, out of reach) then holds the store's strings, as many as it
    will hold in the pass measured, which only swaps them (traced: what it lets go counts)."""
    chain, codec = ChainVerifier(app.ledger_mapper, heads=False), RowDecoder()
    for page in app.rows():
        for _, oid, version, topic, state in page:
            content = chain.check_raw(oid, version, topic, state)
            if content is not None:
                codec.fact(topic, content)


def _held() -> int:
    """The memory traced now, the bounded ``functools`` caches emptied first: a cache bounded
    by its size holds as much on any large store and would count here as it fills (an
    unbounded one is left: it counts)."""
    for cached in gc.get_objects():
        if isinstance(cached, functools._lru_cache_wrapper) and cached.cache_info().maxsize:
            cached.cache_clear()
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


@pytest.mark.slow
def test_the_memory_a_pass_holds_grows_by_a_few_bytes_per_round(
    large_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The decoders' own bounded caches made small: full after a few rounds, as on a large store.
    monkeypatch.setattr(openings, "MAX_TEMPLATES", 4)
    monkeypatch.setattr(openings, "MAX_OPENING_TIMES", 4)
    monkeypatch.setattr(stud_session, "_DUMPED_MAX", 4)
    grown, rounds = _held_growth(large_store)
    assert rounds >= 800
    assert grown <= BYTES_PER_ROUND * rounds, (grown, rounds, grown / rounds)
