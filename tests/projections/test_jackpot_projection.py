"""The jackpot view over a simulated day with forced hits: GLI-12-style meters that conserve.

A day on three linked tables, with royal and straight flushes forced into a few rounds, is
ingested; the view must satisfy balance = seed + contributions − pool awards + resets, agree
with verify's STUD session on the final balance, and ``ledger jackpot`` must print it.
"""

from __future__ import annotations

import json
import random
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app as cli_app
from ledger.codec.parse import parse_object
from ledger.domain.round import Round
from ledger.feed.envelope import FeedEvent
from ledger.games.stud_poker.session import StudSession
from ledger.games.stud_poker.simulate import FORCE_KEY, POOL, finish_feed, simulate_round
from ledger.games.stud_poker.tables import Category
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import open_ledger
from ledger.tools.simulate import DEFAULT_START, RoundBuilder
from projections.base import MemoryRows, closed_rounds, fold_store
from projections.jackpot import JackpotView, conservation_gap
from tests.conftest import tiered

FORCED = {
    ("STUD-01", "000010"): [(1, Category.ROYAL_FLUSH), (5, Category.ROYAL_FLUSH)],
    ("STUD-02", "000010"): [(2, Category.STRAIGHT_FLUSH)],
    ("STUD-03", "000020"): [(3, Category.STRAIGHT_FLUSH), (4, Category.ROYAL_FLUSH)],
    ("STUD-02", "000030"): [(1, Category.FOUR_OF_A_KIND)],
}


def a_day(rounds: int = 40) -> list[dict[str, Any]]:
    game_state: dict[str, Any] = {FORCE_KEY: FORCED}
    lines: list[tuple[str, int, int, dict[str, Any]]] = []
    for t in range(1, 4):
        rng, table_state = random.Random(t), dict[str, Any]()
        for r in range(1, rounds + 1):
            b = RoundBuilder(
                f"STUD-{t:02d}",
                "STUD",
                f"{r:06d}",
                DEFAULT_START + timedelta(seconds=90 * r + 7 * t),
                table_state=table_state,
                game_state=game_state,
            )
            simulate_round(b, rng, None)
            lines += [(x["at"], t, n, x) for n, x in enumerate(b.lines)]
    merged = [x for *_, x in sorted(lines, key=lambda k: k[:3])]
    assert finish_feed(merged, []) == []
    return merged


# 24 rounds a table hold every royal and straight flush forced above (and a reset); the whole
# day of 40 rounds in the slow tier.
@pytest.mark.parametrize("rounds", tiered([24, 40], 1))
def test_the_meters_conserve_and_match_verify(tmp_path: Path, rounds: int) -> None:
    url = f"sqlite:///{tmp_path / 'jp.db'}"
    app = open_ledger(url)
    try:
        Ingestor(app).ingest(numbered_lines([json.dumps(x) for x in a_day(rounds)]))
        meters = fold_store(app, JackpotView()).rows[f"pool:{POOL}"]
        session = StudSession()
        for _, rnd in closed_rounds(app):
            session.derive(rnd)
    finally:
        app.close()
    assert conservation_gap(meters) == 0
    assert Decimal(meters["balance"]) == session.balances[POOL]
    assert meters["awards"]["royal_flush"]["count"] == 3
    assert meters["awards"]["straight_flush"]["count"] == 2
    assert meters["reset_count"] >= 1
    assert Decimal(meters["pool_awards"]) > 0
    result = CliRunner().invoke(cli_app, ["jackpot", "--db", url, "--json", "--history"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["pools"][0]["balance"] == meters["balance"]
    assert len(data["pools"][0]["history"]) == meters["rounds"]
    csv_out = CliRunner().invoke(cli_app, ["jackpot", "--db", url, "--csv"])
    assert csv_out.output.splitlines()[1].startswith(f"{POOL},HKD,20000.00,{meters['balance']},")
    bad = CliRunner().invoke(cli_app, ["jackpot", "--db", url, "--pool", "NOPE"])
    assert bad.exit_code == 2


def test_a_voided_round_leaves_the_pool_alone_and_its_carried_bet_counts_once() -> None:
    rounds: dict[tuple[str, str], list[FeedEvent]] = {}
    for no, line in enumerate(a_day(25), start=1):
        fact = parse_object(line, no)
        assert isinstance(fact, FeedEvent)
        rounds.setdefault((fact.table, fact.round), []).append(fact)
    view, rows = JackpotView(), MemoryRows()
    voided = carried = 0
    for facts in rounds.values():
        rnd = Round.replay(facts)
        before = json.dumps(rows.rows, sort_keys=True)
        view.apply(rnd, rows)
        if rnd.is_voided and any(s[0].result == "carry" for s in rnd.settlements.values()):
            voided += 1
            assert json.dumps(rows.rows, sort_keys=True) == before
        if rnd.carried:
            carried += 1
            assert json.dumps(rows.rows, sort_keys=True) != before
    assert voided and carried
