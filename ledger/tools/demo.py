"""``ledger demo``: the whole job on the embedded default, in well under a minute.

Simulates a day of every game that has a simulator on a few tables with some injected dealer
errors, ingests the feed, verifies the store, and compares what verify found with what was
injected.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ledger.services.ingest import IngestReport, ingest_file
from ledger.storage.store import open_ledger
from ledger.tools.simulate import Simulation, simulate
from ledger.tools.simulators import simulated_games
from ledger.verify.engine import VerifyReport, verify_store

DEMO_MJ_SHARE = 6
"""A Mah-Jong game is ~100 feed lines against ~20 for a round of the other games (and lasts far
longer at a real table): the demo plays one MJ game for every six rounds of the others."""


@dataclass
class DemoReport:
    """What the demo did and found."""

    games: list[str]
    simulation: Simulation
    ingest: IngestReport
    verify: VerifyReport
    seconds: float
    missed: list[tuple[str, str, str, str | None]] = field(default_factory=list)
    unexpected: list[tuple[str, str, str, str | None]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Verify found exactly the injected errors, and the store's integrity holds."""
        return not self.missed and not self.unexpected and self.verify.integrity_ok


def run_demo(
    workdir: Path,
    *,
    db: str | None = None,
    rounds: int = 300,
    tables: int = 3,
    seed: int = 2026,
    error_rate: float = 0.02,
) -> DemoReport:
    """Run the demo in ``workdir`` (a fresh SQLite file there unless ``db`` is given)."""
    started = time.perf_counter()
    games = simulated_games()
    sim = simulate(
        games,
        rounds=rounds,
        tables=tables,
        seed=seed,
        error_rate=error_rate,
        rounds_for={"MJ": max(1, rounds // DEMO_MJ_SHARE)},
    )
    feed = workdir / "demo-feed.jsonl"
    sim.write(str(feed))
    app = open_ledger(db or f"sqlite:///{workdir / 'demo.db'}")
    try:
        ingest = ingest_file(app, feed)
        verify = verify_store(app)
    finally:
        app.close()
    injected = Counter((i.code, i.table, i.round, i.bet) for i in sim.injected)
    found = Counter((f.code, f.table or "", f.round or "", f.bet) for f in verify.errors)
    return DemoReport(
        games=[g.key for g in games],
        simulation=sim,
        ingest=ingest,
        verify=verify,
        seconds=time.perf_counter() - started,
        missed=sorted((injected - found).elements()),
        unexpected=sorted((found - injected).elements(), key=str),
    )
