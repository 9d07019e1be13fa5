"""The roulette simulator: seeded, realistic, and every injected error is exactly one finding.

Each simulated line goes through the real ingest parser (``parse_line``) and the round through
``check_round``, so the simulator, the rules and the generic checks are tested together.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from typing import Any

import pytest

from ledger.codec.parse import Rejection, parse_line
from ledger.domain.findings import Finding
from ledger.domain.round import Round
from ledger.feed.envelope import FeedEvent
from ledger.games.roulette import GAME
from ledger.games.roulette.round import derive
from ledger.games.roulette.simulate import LIMITS, simulate_round
from ledger.tools.builder import Injected
from ledger.tools.simulate import COMMON_KINDS, DEFAULT_START, ERROR_KINDS, RoundBuilder, simulate
from ledger.tools.simulators import SIMULATORS
from ledger.verify.checks import check_round

SEEDS = range(40)
Key = tuple[str, str | None, str | None, str | None]


def play(seed: int, inject: str | None) -> tuple[RoundBuilder, list[Injected]]:
    builder = RoundBuilder("RL-01", "RL", f"{seed:06d}", DEFAULT_START)
    return builder, simulate_round(builder, random.Random(seed), inject)


def to_round(lines: list[dict[str, Any]]) -> Round:
    events: list[FeedEvent] = []
    for no, line in enumerate(lines, start=1):
        event = parse_line(json.dumps(line), no)
        assert not isinstance(event, Rejection), (event, line)
        events.append(event)
    return Round.replay(events)


def finding_keys(findings: list[Finding]) -> list[Key]:
    return sorted((f.code, f.table, f.round, f.bet) for f in findings)


def injected_keys(injected: list[Injected]) -> list[Key]:
    return sorted((i.code, i.table, i.round, i.bet) for i in injected)


def test_the_game_record_wires_the_rules_and_the_simulator() -> None:
    assert GAME.derive is derive
    assert SIMULATORS["RL"].simulate_round is simulate_round
    assert SIMULATORS["RL"].injectable == COMMON_KINDS
    assert (GAME.key, GAME.regulation) == ("RL", "DRE 60/2004")


@pytest.mark.parametrize("inject", [None, *COMMON_KINDS])
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
    assert check_round(to_round(builder.lines), GAME) == []


@pytest.mark.parametrize("inject", list(COMMON_KINDS))
@pytest.mark.parametrize("seed", SEEDS)
def test_an_injected_error_is_exactly_one_finding(seed: int, inject: str) -> None:
    builder, injected = play(seed, inject)
    assert len(injected) == 1
    assert injected[0].code == ERROR_KINDS[inject]
    assert injected[0].bet is not None
    findings = check_round(to_round(builder.lines), GAME)
    assert finding_keys(findings) == injected_keys(injected)


def test_a_round_looks_like_a_roulette_round() -> None:
    """3–8 players, bets within the limits, one settlement per bet, the FEED §3 order."""
    for seed in SEEDS:
        builder, _ = play(seed, None)
        types = [line["type"] for line in builder.lines]
        bets = [line for line in builder.lines if line["type"] == "bet_placed"]
        assert types[0] == "round_opened" and types[-1] == "round_closed"
        assert types.index("betting_closed") == len(bets) + 1
        assert types.count("spin_result") == 1
        assert types.count("bet_settled") == len(bets)
        assert 3 <= len({b["player"] for b in bets}) <= 8
        for bet in bets:
            lo, hi = LIMITS[bet["spot"]["kind"]]
            assert lo <= int(bet["amount"]) <= hi
        opened = builder.lines[0]
        assert opened["currency"] == "HKD"
        assert set(opened["rulebook"]["limits"]) >= {b["spot"]["kind"] for b in bets}


def test_over_many_rounds_every_spot_kind_void_spins_and_zero_appear() -> None:
    kinds: Counter[str] = Counter()
    types: Counter[str] = Counter()
    spun: set[int] = set()
    for seed in range(200):
        builder, _ = play(seed, None)
        for line in builder.lines:
            types[line["type"]] += 1
            if line["type"] == "bet_placed":
                kinds[line["spot"]["kind"]] += 1
            elif line["type"] == "spin_result":
                spun.add(line["number"])
    assert set(kinds) == set(LIMITS)
    assert 0 < types["spin_voided"] < 200
    assert spun == set(range(37))


def test_a_void_spin_is_followed_by_the_spin_that_counts() -> None:
    seeds = [s for s in range(200) if any(line["type"] == "spin_voided" for line in play(s, None)[0].lines)]
    assert seeds
    for seed in seeds[:10]:
        builder, _ = play(seed, None)
        types = [line["type"] for line in builder.lines]
        assert types[types.index("spin_voided") + 1] == "spin_result"
        assert check_round(to_round(builder.lines), GAME) == []


def test_a_late_bet_is_placed_after_the_spin_and_settled_correctly() -> None:
    builder, injected = play(3, "late_bet")
    seqs = {line["type"]: line["seq"] for line in builder.lines}  # the last of each type
    late = next(
        line for line in builder.lines if line["type"] == "bet_placed" and line["bet"] == injected[0].bet
    )
    assert late["seq"] > seqs["spin_result"]
    rnd = to_round(builder.lines)
    due = derive(rnd).expected[late["bet"]]
    recorded = rnd.settlements[late["bet"]][0]
    assert (recorded.result, recorded.returned, recorded.won) == (due.result, due.returned, due.won)


def test_wrong_payouts_include_short_paid_winners_and_paid_losers() -> None:
    shapes: set[tuple[str, str]] = set()
    for seed in range(100):
        builder, _ = play(seed, "wrong_payout")
        [finding] = check_round(to_round(builder.lines), GAME)
        assert finding.expected is not None and finding.recorded is not None
        shapes.add((finding.expected["result"], finding.recorded["result"]))
    assert shapes == {("win", "win"), ("lose", "win")}


def test_a_missing_settlement_leaves_out_exactly_one_bet_settled() -> None:
    builder, injected = play(11, "missing_settlement")
    settled = [line["bet"] for line in builder.lines if line["type"] == "bet_settled"]
    placed = [line["bet"] for line in builder.lines if line["type"] == "bet_placed"]
    assert sorted(set(placed) - set(settled)) == [injected[0].bet]
    assert len(settled) == len(placed) - 1


def test_the_driver_interleaves_tables_and_verify_finds_exactly_what_was_injected() -> None:
    sim = simulate([GAME], rounds=30, tables=3, seed=2026, error_rate=0.5)
    rounds: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for line in sim.lines:
        rounds[(line["table"], line["round"])].append(line)
    assert len(rounds) == sim.rounds == 90
    findings = [f for lines in rounds.values() for f in check_round(to_round(lines), GAME)]
    assert finding_keys(findings) == injected_keys(sim.injected)
    assert {i.code for i in sim.injected} == {ERROR_KINDS[k] for k in COMMON_KINDS}
