"""The 3CB simulator: seeded, realistic shoes and carried bets, and every injected error is
exactly one finding.

Single rounds go through the real parser and ``check_round``; whole tables go through the
:class:`~ledger.verify.judge.RoundJudge` in feed order (the shoe session and the carry tracker),
and one simulation through a real store and ``verify_store``.
"""

from __future__ import annotations

import io
import json
import random
from collections import Counter
from typing import Any

import pytest

from ledger.codec.parse import Rejection, parse_line
from ledger.domain.findings import Finding
from ledger.domain.round import Round
from ledger.feed.envelope import FeedEvent
from ledger.games.three_card_baccarat import GAME
from ledger.games.three_card_baccarat.round import derive
from ledger.games.three_card_baccarat.session import ThreeCardSession
from ledger.games.three_card_baccarat.simulate import INJECTABLE, LIMITS, simulate_round
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import LedgerApp
from ledger.tools.builder import Injected
from ledger.tools.simulate import DEFAULT_START, ERROR_KINDS, RoundBuilder, Simulation, simulate
from ledger.tools.simulators import SIMULATORS
from ledger.verify.checks import check_round
from ledger.verify.engine import verify_store
from ledger.verify.judge import RoundJudge
from tests.conftest import tiered

SEEDS = range(30)
Key = tuple[str, str | None, str | None, str | None]


def play(seed: int, inject: str | None) -> tuple[RoundBuilder, list[Injected]]:
    builder = RoundBuilder("3CB-01", "3CB", f"{seed:06d}", DEFAULT_START)
    return builder, simulate_round(builder, random.Random(seed), inject)


def parse(lines: list[dict[str, Any]]) -> list[FeedEvent]:
    events: list[FeedEvent] = []
    for no, line in enumerate(lines, start=1):
        event = parse_line(json.dumps(line), no)
        assert not isinstance(event, Rejection), (event, line)
        events.append(event)
    return events


def finding_keys(findings: list[Finding]) -> list[Key]:
    """Error findings only: injected errors are errors; a carry still in play at the end of the
    log is information."""
    return sorted((f.code, f.table, f.round, f.bet) for f in findings if f.severity == "error")


def injected_keys(injected: list[Injected]) -> list[Key]:
    return sorted((i.code, i.table, i.round, i.bet) for i in injected)


def judge_all(sim: Simulation) -> list[Finding]:
    """Judge every round in the order its closing line comes in the feed, as verify does."""
    rounds: dict[tuple[str, str], list[dict[str, Any]]] = {}
    judge = RoundJudge()
    findings: list[Finding] = []
    for line in sim.lines:
        key = (line["table"], line["round"])
        rounds.setdefault(key, []).append(line)
        if line["type"] in ("round_closed", "round_voided"):
            findings += judge.judge(parse(rounds.pop(key))).findings
    assert rounds == {}
    return findings + judge.finish()


def test_the_game_record_wires_rules_session_carries_and_simulator() -> None:
    assert GAME.derive is derive
    assert GAME.session is ThreeCardSession
    assert GAME.carries_bets and GAME.follows_rounds
    assert SIMULATORS["3CB"].simulate_round is simulate_round
    assert SIMULATORS["3CB"].injectable == INJECTABLE
    assert (
        set(INJECTABLE)
        == {"wrong_payout", "late_bet", "missing_settlement", "wrong_commission"}
        <= set(ERROR_KINDS)
    )


@pytest.mark.parametrize("inject", [None, *INJECTABLE])
def test_same_seed_same_lines(inject: str | None) -> None:
    first, _ = play(7, inject)
    again, _ = play(7, inject)
    other, _ = play(8, inject)
    assert first.lines == again.lines
    assert first.lines != other.lines


@pytest.mark.parametrize("seed", SEEDS)
def test_a_clean_round_has_no_findings(seed: int) -> None:
    builder, injected = play(seed, None)
    assert injected == []
    assert check_round(Round.replay(parse(builder.lines)), GAME) == []


@pytest.mark.parametrize("inject", list(INJECTABLE))
@pytest.mark.parametrize("seed", SEEDS)
def test_an_injected_error_is_exactly_one_finding(seed: int, inject: str) -> None:
    builder, injected = play(seed, inject)
    assert len(injected) == 1
    assert injected[0].code == ERROR_KINDS[inject] and injected[0].bet is not None
    findings = check_round(Round.replay(parse(builder.lines)), GAME)
    assert finding_keys(findings) == injected_keys(injected)


def test_a_round_looks_like_a_3cb_round() -> None:
    """Bets within the limits, the deal of FEED §5 in three passes, one settlement per bet."""
    for seed in SEEDS:
        builder, _ = play(seed, None)
        types = [line["type"] for line in builder.lines]
        bets = [line for line in builder.lines if line["type"] == "bet_placed"]
        assert types[0] == "round_opened" and types[-1] == "round_closed"
        assert types.index("betting_closed") == len(bets) + 1
        assert types.count("bet_settled") == len(bets)
        assert any(b["spot"]["kind"] in ("points", "three_figures") for b in bets)
        dealt = [line for line in builder.lines if line["type"] == "card_dealt"]
        seats = sorted({d["to"] for d in dealt if d["to"] != "banker"})
        assert [d["to"] for d in dealt] == [*seats, "banker"] * 3
        for bet in bets:
            lo, hi = LIMITS[bet["spot"]["kind"]]
            assert lo <= int(bet["amount"]) <= hi


# 600 rounds each: in the slow tier (single rounds and a store of 180 rounds run by default)
@pytest.mark.parametrize("seed", tiered([1, 2, 3, 2026], 0))
def test_whole_tables_verify_with_exactly_the_injected_findings(seed: int) -> None:
    sim = simulate([GAME], rounds=150, tables=4, seed=seed, error_rate=0.3)
    assert finding_keys(judge_all(sim)) == injected_keys(sim.injected)
    assert {i.code for i in sim.injected} == {ERROR_KINDS[k] for k in INJECTABLE}


@pytest.mark.slow  # a long simulation, to meet every table feature at least once
def test_tables_carry_ties_and_odd_even_and_run_shoes_of_one_and_more_decks() -> None:
    sim = simulate([GAME], rounds=200, tables=6, seed=5, error_rate=0.0)
    types = Counter(line["type"] for line in sim.lines)
    carried = Counter(line["spot"]["kind"] for line in sim.lines if line["type"] == "bet_carried")
    decks = Counter(line["decks"] for line in sim.lines if line["type"] == "deck_shuffled")
    settled = Counter(line["result"] for line in sim.lines if line["type"] == "bet_settled")
    assert carried["hand"] > 20 and carried["odd"] + carried["even"] > 0
    assert types["bet_increased"] > 0 and types["shoe_closed"] > 0
    assert 1 in decks and set(decks) - {1}
    last = max(line["round"] for line in sim.lines)
    carried_at_the_end = sum(
        1
        for line in sim.lines
        if line["type"] == "bet_settled" and line["result"] == "carry" and line["round"] == last
    )
    # Every carry is restated in its table's next round; the last round has none after it.
    assert settled["carry"] == types["bet_carried"] + carried_at_the_end
    findings = judge_all(sim)
    assert [f for f in findings if f.code != "carry_outstanding"] == []
    assert len(findings) == carried_at_the_end  # each still in play, reported as information
    assert all(f.severity == "info" for f in findings)


def test_a_carried_bet_settles_in_the_next_round_under_its_restated_id() -> None:
    sim = simulate([GAME], rounds=120, tables=2, seed=9)
    restated = [line for line in sim.lines if line["type"] == "bet_carried"]
    assert restated
    for line in restated:
        settled = [
            s
            for s in sim.lines
            if s["type"] == "bet_settled" and s["bet"] == line["bet"] and s["table"] == line["table"]
        ]
        rounds = [s["round"] for s in settled]
        assert line["from_round"] in rounds and line["round"] in rounds


@pytest.mark.slow_postgres
@pytest.mark.parametrize("rounds", tiered([20, 60], 1))  # 60 rounds a table in the slow tier
def test_a_simulated_feed_ingested_into_the_store_verifies_to_the_injected_errors(
    app: LedgerApp, rounds: int
) -> None:
    sim = simulate([GAME], rounds=rounds, tables=3, seed=11, error_rate=0.25)
    text = "".join(json.dumps(line) + "\n" for line in sim.lines)
    assert Ingestor(app).ingest(numbered_lines(io.StringIO(text))).rejected == []
    report = verify_store(app)
    assert report.rounds_checked == 3 * rounds
    assert sim.injected and finding_keys(report.findings) == injected_keys(sim.injected)
