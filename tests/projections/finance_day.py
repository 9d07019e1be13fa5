"""The deterministic finance day of docs/FINANCE.md's worked example, which
docs/examples/meters.csv was written against: every game, 12 rounds on 2 tables, 10 % dealer
errors, three forced jackpot hands (the royal flush empties the pool, which is reset).

It is simulated and stored once per run on SQLite; each module that reads it gets a copy of that
file (SQLite's backup), or on PostgreSQL the day ingested into its own schema."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ledger.games.stud_poker.simulate import force_plan
from ledger.services.ingest import ingest_file
from ledger.storage.store import open_ledger
from ledger.tools.simulate import simulate
from ledger.tools.simulators import simulated_games

FORCED = ["STUD-01/000003:2=royal_flush", "STUD-02/000005:4=flush", "STUD-01/000007:1=straight_flush"]
_STORED: list[Path] = []
"""The SQLite file of the day, once built in this run."""


def simulated_day(folder: Path) -> Path:
    """The day's feed, written to ``folder``."""
    sim = simulate(
        simulated_games(),
        rounds=12,
        tables=2,
        seed=16,
        error_rate=0.1,
        game_state={"STUD": force_plan(FORCED)},
    )
    feed = folder / "day.jsonl"
    sim.write(str(feed))
    return feed


def _ingest(url: str, feed: Path) -> None:
    app = open_ledger(url)
    try:
        assert ingest_file(app, feed).rejected == []
    finally:
        app.close()


def store_day(url: str, factory: pytest.TempPathFactory) -> None:
    """Store the day in the empty store at ``url``."""
    if not url.startswith("sqlite:///"):
        _ingest(url, simulated_day(factory.mktemp("finance-day")))
        return
    if not _STORED:
        folder = factory.mktemp("finance-day")
        _ingest(f"sqlite:///{folder / 'day.db'}", simulated_day(folder))
        _STORED.append(folder / "day.db")
    source, copy = sqlite3.connect(_STORED[0]), sqlite3.connect(url.removeprefix("sqlite:///"))
    try:
        source.backup(copy)
    finally:
        source.close()
        copy.close()
