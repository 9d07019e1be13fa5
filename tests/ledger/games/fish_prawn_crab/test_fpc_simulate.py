"""The Fish-Prawn-Crab simulator: seeded, realistic, and every injected error found exactly.

Each simulated line goes through the real path (JSON → ``parse_line`` → ``Round.replay`` →
``check_round``), so the feed the simulator writes is one the ledger ingests.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from ledger.codec.parse import Rejection, parse_line
from ledger.domain.round import Round
from ledger.games.fish_prawn_crab import GAME
from ledger.games.fish_prawn_crab.simulate import INJECTABLE, LIMITS, simulate_round
from ledger.tools.simulate import COMMON_KINDS, ERROR_KINDS, RoundBuilder, simulate
from ledger.tools.simulators import SIMULATORS
from ledger.verify.checks import check_round

START = datetime(2026, 11, 21, 20, 0, tzinfo=timezone(timedelta(hours=8)))
SEEDS = range(60)


def play(seed: int, inject: str | None) -> tuple[RoundBuilder, list[tuple[str, str | None]]]:
    b = RoundBuilder("FPC-07", "FPC", f"{seed:06d}", START)
    injected = simulate_round(b, random.Random(seed), inject)
    assert all((i.table, i.round) == ("FPC-07", f"{seed:06d}") for i in injected)
    return b, [(i.code, i.bet) for i in injected]


def verify(lines: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    """The findings of the round these lines make, after a JSON round trip and ingest parsing."""
    events = []
    for n, line in enumerate(lines, start=1):
        event = parse_line(json.dumps(line), n)
        assert not isinstance(event, Rejection), event
        events.append(event)
    return [(f.code, f.bet) for f in check_round(Round.replay(events), GAME)]


def test_the_game_injects_every_error_kind() -> None:
    assert set(SIMULATORS["FPC"].injectable) == set(INJECTABLE) == set(COMMON_KINDS)
    assert SIMULATORS["FPC"].simulate_round is simulate_round


def test_the_same_seed_gives_the_same_lines() -> None:
    assert play(7, None)[0].lines == play(7, None)[0].lines
    assert play(7, "late_bet")[0].lines == play(7, "late_bet")[0].lines


def test_different_seeds_give_different_rounds() -> None:
    dice = {
        tuple(line["dice"]) for s in SEEDS for line in play(s, None)[0].lines if line["type"] == "dice_shown"
    }
    assert len(dice) > 30


@pytest.mark.parametrize("seed", SEEDS)
def test_a_clean_round_has_no_findings(seed: int) -> None:
    b, injected = play(seed, None)
    assert injected == []
    assert verify(b.lines) == []


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kind", sorted(COMMON_KINDS))
def test_an_injected_error_is_exactly_one_finding_on_its_bet(kind: str, seed: int) -> None:
    b, injected = play(seed, kind)
    assert len(injected) == 1
    code, bet = injected[0]
    assert code == ERROR_KINDS[kind] and bet is not None
    assert verify(b.lines) == injected


def test_a_round_follows_rules_2_3() -> None:
    """Press before betting, 3–8 bets within limits, close, dice, one settlement each, close."""
    for seed in SEEDS:
        lines = play(seed, None)[0].lines
        types = [line["type"] for line in lines]
        assert types[:2] == ["round_opened", "dice_pressed"]
        assert lines[0]["currency"] == "MOP" and lines[0]["rulebook"] == {"limits": LIMITS}
        bets = [line for line in lines if line["type"] == "bet_placed"]
        assert 3 <= len(bets) <= 8
        assert types.index("betting_closed") == 2 + len(bets)
        assert types.count("dice_shown") == 1 and types[-1] == "round_closed"
        assert types.count("bet_settled") == len(bets)
        for bet in bets:
            limit = LIMITS[bet["spot"]["kind"]]
            assert float(limit["min"]) <= float(bet["amount"]) <= float(limit["max"])


def test_rounds_mix_bet_kinds_and_sometimes_reshake_a_cocked_die() -> None:
    rounds = [play(seed, None)[0].lines for seed in range(200)]
    kinds = Counter(
        line["spot"]["kind"] for lines in rounds for line in lines if line["type"] == "bet_placed"
    )
    assert set(kinds) == set(LIMITS)
    reshaken = [lines for lines in rounds if any(line["type"] == "die_cocked" for line in lines)]
    assert 0 < len(reshaken) < 50
    for lines in reshaken:
        types = [line["type"] for line in lines]
        at = types.index("die_cocked")
        assert types[at : at + 3] == ["die_cocked", "dice_pressed", "dice_shown"]
        assert verify(lines) == []


def test_the_late_bet_comes_after_the_dice() -> None:
    lines = play(3, "late_bet")[0].lines
    types = [line["type"] for line in lines]
    assert types.index("dice_shown") + 1 == len(types) - types[::-1].index("bet_placed") - 1


def test_the_simulate_driver_reports_exactly_what_verify_finds() -> None:
    sim = simulate([GAME], rounds=40, tables=3, seed=11, error_rate=0.5)
    assert sim.lines == simulate([GAME], rounds=40, tables=3, seed=11, error_rate=0.5).lines
    by_round: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for line in sim.lines:
        by_round.setdefault((line["table"], line["round"]), []).append(line)
    assert len(by_round) == sim.rounds == 120
    found = Counter((t, r, code, bet) for (t, r), lines in by_round.items() for code, bet in verify(lines))
    expected = Counter((i.table, i.round, i.code, i.bet) for i in sim.injected)
    assert found == expected
    assert 30 < len(expected) < 90


def test_an_unknown_error_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot inject"):
        play(1, "wrong_deal")
