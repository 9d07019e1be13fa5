"""Resumable verification gives the findings of a full verify (issue 15), for all six games.

A simulated day of every game (3CB carried bets, SP9 bank runs, linked STUD pools, Mah-Jong
sessions, with injected dealer errors) is ingested in pieces cut at random lines, so rounds,
carried bets, banks and pools are in play across each cut; a checkpoint is sealed after each
piece (at a chain link). Then, for several seeds:

- ``verify --since`` each checkpoint reports exactly the findings a full verify reports for the
  rounds that close after it (and what only the end of the log reveals), in the same order;
- the segments ``0..1, 1..2, …, k..head`` merged equal a full verify (findings, order, counts,
  events, head), and so does ``--jobs 2`` by segments;
- every segment ends with the state it derived equal to the next checkpoint's snapshot.
"""

from __future__ import annotations

import json
import random
from functools import cache
from pathlib import Path

import pytest

from ledger.proof.checkpoints import CheckpointStore, listing, seal
from ledger.proof.seal import generate_key, public_pem
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.services.segments import (
    finding_keys,
    merge,
    plan,
    verify_parallel_segments,
    verify_segment,
)
from ledger.storage.store import LedgerApp
from ledger.tools.simulate import simulate
from ledger.tools.simulators import simulated_games
from ledger.verify.engine import VerifyReport, verify_store
from tests.conftest import tiered

SEEDS = [3, 11, 29]
KEY = generate_key()


@pytest.fixture(autouse=True)
def _sealing_public_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's sealing public key (LEDGER_SEAL_PUBLIC_KEY): segments, --jobs and replay
    use only checkpoints it checks."""
    path = tmp_path / "seal.key.pub"
    path.write_bytes(public_pem(KEY.public_key()))
    monkeypatch.setenv("LEDGER_SEAL_PUBLIC_KEY", str(path))


def _lines(seed: int) -> list[str]:
    return list(_simulated(seed))


@cache
def _simulated(seed: int) -> tuple[str, ...]:
    """The simulated day of ``seed``, made once for the tests of both stores."""
    sim = simulate(simulated_games(), rounds=6, tables=2, seed=seed, error_rate=0.3)
    return tuple(json.dumps(line, separators=(",", ":")) for line in sim.lines)


def _ingest(app: LedgerApp, lines: list[str]) -> None:
    report = Ingestor(app, batch_events=60).ingest(numbered_lines(lines))
    assert not report.rejected, report.rejected[:3]


def _build(app: LedgerApp, seed: int, cuts: int = 3) -> list[str]:
    """Ingest a simulated day in ``cuts + 1`` pieces, sealing after each but the last."""
    lines = _lines(seed)
    rng = random.Random(seed)
    points = sorted(rng.sample(range(20, len(lines) - 20), cuts))
    key = KEY
    start = 0
    for point in points:
        _ingest(app, lines[start:point])
        sealed = seal(app, key)
        assert sealed.new
        start = point
    _ingest(app, lines[start:])
    return lines


def _after(report: VerifyReport, position: int) -> list[dict[str, object]]:
    """A full report's findings about what happens after row ``position`` (single-pass order)."""
    return [
        f.to_json()
        for f, key in zip(report.findings, finding_keys(report), strict=True)
        if key[0] > 1 or key[1] > position
    ]


def _seeds(db_url: str) -> list[int]:
    return SEEDS if db_url.startswith("sqlite") else SEEDS[:1]


@pytest.mark.slow_postgres
@pytest.mark.parametrize("seed", tiered(SEEDS, 1))
def test_since_each_checkpoint_equals_a_full_verify_after_it(db_url: str, app: LedgerApp, seed: int) -> None:
    if seed not in _seeds(db_url):
        pytest.skip("one seed on PostgreSQL")
    _build(app, seed)
    full = verify_store(app)
    assert full.integrity_ok
    assert {f.code for f in full.findings} - {"round_incomplete", "carry_outstanding"}
    stored = listing(app)
    assert len(stored) == 3
    with CheckpointStore(app, create=False) as table:
        for checkpoint in stored:
            snapshot = table.snapshot(checkpoint)
            resumed = verify_store(app, start=snapshot)
            assert resumed.integrity_ok and resumed.head == full.head
            assert [f.to_json() for f in resumed.findings] == _after(full, checkpoint.position)
            assert resumed.events < full.events


@pytest.mark.parametrize("seed", tiered(SEEDS, 1))
def test_segments_merged_equal_a_full_verify(db_url: str, app: LedgerApp, seed: int) -> None:
    if seed not in _seeds(db_url):
        pytest.skip("one seed on PostgreSQL")
    _build(app, seed)
    full = verify_store(app).to_json()
    bounds: list[tuple[int, int | None]] = [(0, 1), (1, 2), (2, 3), (3, None)]
    parts = [verify_segment(app, a, b) for a, b in bounds]
    assert all(p.report.integrity_ok for p in parts)
    assert sum(p.report.events for p in parts) == full["events"]
    assert merge(list(reversed(parts))).to_json() == full
    # coarser cuts too: 0..2, 2..head
    assert merge([verify_segment(app, 0, 2), verify_segment(app, 2, None)]).to_json() == full
    assert verify_parallel_segments(db_url, jobs=2).to_json() == full


@pytest.mark.slow  # a third simulated store, sealed twice
def test_jobs_split_by_segments_only_where_checkpoints_cut_evenly(db_url: str, app: LedgerApp) -> None:
    lines = _lines(5)
    key = KEY
    half = len(lines) // 2
    _ingest(app, lines[:half])
    seal(app, key)
    _ingest(app, lines[half : len(lines) - 30])
    assert plan(app, 2) == [(0, 1), (1, None)]
    full = verify_store(app).to_json()
    assert verify_parallel_segments(db_url, jobs=2).to_json() == full
    seal(app, key)  # checkpoint 2 near the end: 2 jobs still cut at 1, 4 jobs cannot cut evenly
    _ingest(app, lines[len(lines) - 30 :])
    assert plan(app, 2) == [(0, 1), (1, None)]
    assert plan(app, 4) is None
    assert verify_parallel_segments(db_url, jobs=4).to_json() == verify_store(app).to_json()
