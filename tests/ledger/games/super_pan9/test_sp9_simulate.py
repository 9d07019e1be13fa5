"""The SP9 simulator: a rotating, co-banked bank, and every injected error found exactly.

Whole simulated feeds go through the real parser and are judged in store order through the
game's session, as ``ledger verify`` judges them.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from itertools import pairwise
from typing import Any

import pytest

from ledger.codec.parse import Rejection, parse_line
from ledger.domain.findings import Finding
from ledger.domain.round import Round
from ledger.feed.envelope import FeedEvent
from ledger.games import GAMES
from ledger.games.super_pan9.session import BankSession
from ledger.games.super_pan9.simulate import EXTRA_KINDS, INJECTABLE, simulate_round
from ledger.tools.builder import Injected
from ledger.tools.simulate import DEFAULT_START, ERROR_KINDS, RoundBuilder, simulate
from ledger.tools.simulators import SIMULATORS
from ledger.verify.checks import check_round
from tests.conftest import tiered

GAME = GAMES["SP9"]
Key = tuple[str, str, str, str]


def judge(lines: list[dict[str, Any]]) -> list[Finding]:
    rounds: dict[tuple[str, str], list[FeedEvent]] = {}
    closed: list[tuple[str, str]] = []
    for n, line in enumerate(lines, start=1):
        event = parse_line(json.dumps(line), n)
        assert not isinstance(event, Rejection), (event, line)
        rounds.setdefault((line["table"], line["round"]), []).append(event)
        if line["type"] == "round_closed":
            closed.append((line["table"], line["round"]))
    session = BankSession()
    found: list[Finding] = []
    for key in closed:
        rnd = Round.replay(rounds[key])
        found += check_round(rnd, GAME, derivation=session.derive(rnd))
    return found


def fkeys(found: list[Finding]) -> list[Key]:
    return sorted((f.code, f.table or "", f.round or "", f.bet or "") for f in found)


def ikeys(injected: list[Injected]) -> list[Key]:
    return sorted((i.code, i.table, i.round, i.bet or "") for i in injected)


def test_the_game_record_wires_rules_session_and_simulator() -> None:
    assert GAME.session is BankSession and GAME.derive is not None
    assert SIMULATORS["SP9"].simulate_round is simulate_round
    assert set(SIMULATORS["SP9"].injectable) == set(INJECTABLE) | set(EXTRA_KINDS)
    assert set(INJECTABLE) <= set(ERROR_KINDS)
    assert not set(EXTRA_KINDS) & set(ERROR_KINDS)


@pytest.mark.parametrize("seed", tiered(range(12), 1))
def test_clean_tables_verify_with_no_finding(seed: int) -> None:
    sim = simulate([GAME], rounds=25, tables=2, seed=seed)
    assert sim.injected == []
    assert judge(sim.lines) == []


@pytest.mark.parametrize("seed", tiered(range(25), 2))
def test_injected_errors_are_found_exactly(seed: int) -> None:
    sim = simulate([GAME], rounds=25, tables=2, seed=seed, error_rate=0.3)
    assert sim.injected
    assert fkeys(judge(sim.lines)) == ikeys(sim.injected)


def play_table(
    seed: int, rounds: int, inject_at: dict[int, str]
) -> tuple[list[dict[str, Any]], list[Injected]]:
    rng, state = random.Random(seed), {}  # type: ignore[var-annotated]
    lines: list[dict[str, Any]] = []
    injected: list[Injected] = []
    for r in range(1, rounds + 1):
        b = RoundBuilder("SP9-01", "SP9", f"{r:06d}", DEFAULT_START, table_state=state)
        injected += simulate_round(b, rng, inject_at.get(r))
        lines += b.lines
    return lines, injected


@pytest.mark.parametrize("kind", tiered(sorted(EXTRA_KINDS), 1))  # 30 tables each: one by default
def test_sp9_kinds_are_found_exactly_when_the_table_allows_them(kind: str) -> None:
    hits = 0
    for seed in range(30):
        lines, injected = play_table(seed, 12, {r: kind for r in range(2, 13, 2)})
        assert fkeys(judge(lines)) == ikeys(injected)
        assert all(i.code == EXTRA_KINDS[kind] for i in injected)
        hits += len(injected)
    assert hits > 10


def test_tables_rotate_the_bank_co_bank_refuse_extend_and_exhaust_the_capital() -> None:
    seen: Counter[str] = Counter()
    for seed in range(10):
        sim = simulate([GAME], rounds=30, tables=2, seed=seed)
        by_round: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for line in sim.lines:
            by_round.setdefault((line["table"], line["round"]), []).append(line)
            if line["type"] in ("bank_refused", "bank_extended", "dice_adjustment_declared"):
                seen[line["type"]] += 1
            if line["type"] == "bank_joined":
                seen["casino" if line["party"] == "casino" else "player co-banker"] += 1
            if line["type"] == "bet_settled" and line["result"] == "win" and line["won"] != line["returned"]:
                seen["capped win"] += 1
            if line["type"] == "dice_thrown" and not line["valid"]:
                seen["rethrow"] += 1
        bankers = [
            next(ln["seat"] for ln in lines if ln["type"] == "bank_taken") for lines in by_round.values()
        ]
        seen["bank changes"] += sum(a != b for a, b in pairwise(bankers))
    assert set(seen) == {
        "bank_refused",
        "bank_extended",
        "dice_adjustment_declared",
        "casino",
        "player co-banker",
        "capped win",
        "rethrow",
        "bank changes",
    }


def test_same_seed_same_feed() -> None:
    a = simulate([GAME], rounds=10, tables=2, seed=3, error_rate=0.2)
    b = simulate([GAME], rounds=10, tables=2, seed=3, error_rate=0.2)
    assert a.lines == b.lines and a.injected == b.injected
