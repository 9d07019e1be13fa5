"""The Mah-Jong simulator: whole legal games, both variants, seeded, and every injected error
found exactly by verify (findings == injected, seed by seed)."""

from __future__ import annotations

import json
import random
from collections import Counter
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from ledger.codec.parse import Rejection, parse_line
from ledger.domain.round import Round
from ledger.games.mahjong import GAME
from ledger.games.mahjong.round import outcome
from ledger.games.mahjong.simulate import INJECTABLE, simulate_round
from ledger.tools.simulate import ERROR_KINDS, RoundBuilder, simulate
from ledger.tools.simulators import SIMULATORS
from ledger.verify.checks import check_round
from tests.conftest import tiered

START = datetime(2026, 11, 21, 20, 0, tzinfo=timezone(timedelta(hours=8)))


def table(
    seed: int, games: int, inject: str | None, tables_before: int = 0
) -> list[tuple[list[dict[str, Any]], list[tuple[str, str | None]]]]:
    rng = random.Random(seed)
    ts: dict[str, Any] = {}
    gs: dict[str, Any] = {"tables": tables_before}
    out = []
    for r in range(games):
        b = RoundBuilder("MJ-07", "MJ", f"{seed:03d}{r:03d}", START, table_state=ts, game_state=gs)
        injected = simulate_round(b, rng, inject)
        assert all((i.table, i.round) == ("MJ-07", b.round) for i in injected)
        out.append((b.lines, sorted((i.code, i.bet) for i in injected)))
    return out


def to_round(lines: list[dict[str, Any]]) -> Round:
    events = []
    for n, line in enumerate(lines, start=1):
        event = parse_line(json.dumps(line), n)
        assert not isinstance(event, Rejection), event
        events.append(event)
    return Round.replay(events)


def found(lines: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return sorted((f.code, f.bet) for f in check_round(to_round(lines), GAME))


def test_the_game_registers_its_simulator_and_kinds() -> None:
    assert SIMULATORS["MJ"].simulate_round is simulate_round and SIMULATORS["MJ"].injectable == INJECTABLE
    assert {ERROR_KINDS[k] for k in INJECTABLE} == {"payment_mismatch", "commission_mismatch"}


def test_the_same_seed_gives_the_same_games() -> None:
    assert table(3, 3, None) == table(3, 3, None)


@pytest.mark.parametrize("variant_slot", [0, 1], ids=["conventional", "simplified"])
@pytest.mark.parametrize("seed", tiered(range(8), 1))
@pytest.mark.parametrize("inject", [None, *INJECTABLE])
def test_verify_finds_exactly_what_was_injected(inject: str | None, seed: int, variant_slot: int) -> None:
    for lines, injected in table(seed, 6, inject, variant_slot):
        assert lines[0]["variant"] == ("conventional", "simplified")[variant_slot]
        assert found(lines) == injected


@pytest.mark.slow
def test_liability_injections_happen_and_are_found() -> None:
    hits = 0
    for seed in range(40):
        for lines, injected in table(seed, 5, "mj_liability_ignored"):
            assert found(lines) == injected
            hits += bool(injected)
    assert hits >= 3


@pytest.mark.slow  # 80 games played out
def test_games_end_in_wins_with_fan_and_sometimes_otherwise() -> None:
    endings: Counter[str] = Counter()
    fans: Counter[tuple[str, int]] = Counter()
    for slot in (0, 1):
        for lines, _ in table(11, 40, None, slot):
            game = outcome(to_round(lines))
            endings[game.end.ending] += 1
            if game.end.score is not None:
                fans[(lines[0]["variant"], game.end.score.fan)] += 1
    assert endings["win"] > 60
    assert fans[("conventional", 1)] + fans[("conventional", 2)] > 5
    assert fans[("simplified", 1)] > 10


def test_the_simulate_driver_reports_exactly_what_verify_finds() -> None:
    sim = simulate([GAME], rounds=12, tables=2, seed=5, error_rate=0.5)
    by_round: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for line in sim.lines:
        by_round.setdefault((line["table"], line["round"]), []).append(line)
    assert len(by_round) == sim.rounds == 24
    assert {lines[0]["variant"] for lines in by_round.values()} == {"conventional", "simplified"}
    got = Counter((t, r, code, bet) for (t, r), lines in by_round.items() for code, bet in found(lines))
    assert got == Counter((i.table, i.round, i.code, i.bet) for i in sim.injected)


def test_an_unknown_error_kind_is_refused() -> None:
    b = RoundBuilder("MJ-07", "MJ", "1", START)
    with pytest.raises(ValueError, match="cannot inject"):
        simulate_round(b, random.Random(1), "late_bet")
