"""The STUD simulator on linked tables: every injected error is found exactly, nothing else.

The feed goes through the real ingest and a full verify (store order, game session, carry
tracker), so the simulator, ``finish_feed``'s pool arithmetic and the rules are tested together.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from ledger.games.stud_poker import GAME
from ledger.games.stud_poker.simulate import INJECTABLE, STUD_ERRORS
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import LedgerApp, open_ledger
from ledger.tools.simulate import simulate
from ledger.tools.simulators import SIMULATORS
from ledger.verify.engine import verify_store
from tests.conftest import tiered


def test_the_game_record_wires_rules_session_and_simulator() -> None:
    assert GAME.session is not None and GAME.derive is not None and GAME.carries_bets
    assert SIMULATORS["STUD"].finish_feed is not None and SIMULATORS["STUD"].simulate_round is not None
    assert set(SIMULATORS["STUD"].injectable) == set(INJECTABLE) == set(STUD_ERRORS)


def test_same_seed_same_feed() -> None:
    a = simulate([GAME], rounds=20, tables=2, seed=5)
    b = simulate([GAME], rounds=20, tables=2, seed=5)
    assert a.lines == b.lines and a.injected == b.injected


# 25 rounds of seed 3 meet a void, a carried and a paid jackpot and every injected kind; the
# original day of 80 rounds in the slow tier.
@pytest.mark.parametrize(("rounds", "seed"), tiered([(25, 3), (80, 11)], 1))
def test_a_day_on_three_linked_tables_verifies_to_exactly_the_injected_errors(
    tmp_path: Path, rounds: int, seed: int
) -> None:
    sim = simulate([GAME], rounds=rounds, tables=3, seed=seed, error_rate=0.15)
    types = Counter(line["type"] for line in sim.lines)
    assert types["round_voided"] > 0 and types["jackpot_carried"] > 0
    assert types["jackpot_paid"] > 0
    assert {i.code for i in sim.injected} >= {"jackpot_mismatch", "invalid_bet", "settlement_mismatch"}
    app: LedgerApp = open_ledger(f"sqlite:///{tmp_path / 'stud.db'}")
    try:
        Ingestor(app).ingest(numbered_lines([json.dumps(x) for x in sim.lines]))
        found = sorted((f.code, f.table, f.round, f.bet) for f in verify_store(app).findings)
    finally:
        app.close()
    assert found == sorted((i.code, i.table, i.round, i.bet) for i in sim.injected)
