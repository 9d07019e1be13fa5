"""Roulette rules (RULES §5, §8.5): which spots the layout offers, how a bet settles, and how
a recorded round is judged — from hand-written feed lines through ``check_round``.
"""
# ruff: noqa: E501  (the hand-written feed lines below are kept one event per line, as in FEED §3)

from __future__ import annotations

import json
from collections import defaultdict
from decimal import Decimal
from itertools import combinations
from pathlib import Path

import pytest

from ledger.codec.parse import Rejection, parse_line
from ledger.domain.round import Round
from ledger.domain.rulebook import DEFAULT_RULEBOOK, Rulebook, complete_rulebook
from ledger.feed.envelope import FeedEvent
from ledger.games.roulette import GAME
from ledger.games.roulette.feed import GroupSpot, NumbersSpot, OutsideSpot
from ledger.games.roulette.round import derive
from ledger.games.roulette.rules import (
    LAYOUT_RULE,
    SECTOR_RULE,
    ZERO_COMBINATION_RULE,
    Spot,
    covered_numbers,
    describe_number,
    describe_spot,
    settle,
    spot_issue,
    spot_problem,
)
from ledger.verify.checks import check_round

ZERO_BOOK = complete_rulebook({"rl": {"zero_combinations": True}})
NINE = [1, 2, 3, 4, 5, 6, 7, 8, 9]
TWELVE = list(range(13, 25))
SECTOR_BOOK = complete_rulebook({"rl": {"sectors": {"nine": [NINE], "twelve": [TWELVE]}}})


def numbers(kind: str, *nums: int) -> NumbersSpot:
    return NumbersSpot(kind=kind, numbers=nums)


# --- The layout, rebuilt here from grid coordinates, independently of tables.py -------------


def cell(n: int) -> tuple[int, int]:
    """(row, column) of ``n`` on the 3-column layout: 1 is (0, 0), 36 is (11, 2)."""
    return (n - 1) // 3, (n - 1) % 3


def is_split(ns: tuple[int, ...]) -> bool:
    (r1, c1), (r2, c2) = cell(ns[0]), cell(ns[1])
    return abs(r1 - r2) + abs(c1 - c2) == 1


def is_street(ns: tuple[int, ...]) -> bool:
    return len({cell(n)[0] for n in ns}) == 1


def is_corner(ns: tuple[int, ...]) -> bool:
    rows = sorted({cell(n)[0] for n in ns})
    cols = sorted({cell(n)[1] for n in ns})
    return len(rows) == len(cols) == 2 and rows[1] - rows[0] == 1 and cols[1] - cols[0] == 1


SHAPES = {"split": (2, is_split, 57), "street": (3, is_street, 12), "corner": (4, is_corner, 22)}


@pytest.mark.parametrize("kind", sorted(SHAPES))
def test_spot_problem_accepts_exactly_the_shapes_of_the_layout(kind: str) -> None:
    """Every k-subset of 1–36 is tried; only the true splits/streets/corners pass."""
    size, is_shape, count = SHAPES[kind]
    accepted = {
        ns
        for ns in combinations(range(1, 37), size)
        if spot_problem(numbers(kind, *ns), DEFAULT_RULEBOOK) is None
    }
    assert accepted == {ns for ns in combinations(range(1, 37), size) if is_shape(ns)}
    assert len(accepted) == count


def test_spot_problem_accepts_exactly_the_11_lines() -> None:
    """Unions of any two streets and every run of six consecutive numbers are tried."""
    rows = [tuple(range(3 * r + 1, 3 * r + 4)) for r in range(12)]
    candidates = {tuple(sorted(a + b)) for a, b in combinations(rows, 2)}
    candidates |= {tuple(range(n, n + 6)) for n in range(1, 32)}
    accepted = {ns for ns in candidates if spot_problem(numbers("line", *ns), DEFAULT_RULEBOOK) is None}
    assert accepted == {rows[r] + rows[r + 1] for r in range(11)}


@pytest.mark.parametrize(
    ("spot", "rulebook", "valid"),
    [
        pytest.param(numbers("straight", 0), DEFAULT_RULEBOOK, True, id="straight-0"),
        pytest.param(numbers("straight", 36), DEFAULT_RULEBOOK, True, id="straight-36"),
        pytest.param(numbers("split", 1, 2), DEFAULT_RULEBOOK, True, id="split-1-2-across"),
        pytest.param(numbers("split", 4, 1), DEFAULT_RULEBOOK, True, id="split-4-1-down-any-order"),
        pytest.param(numbers("split", 1, 5), DEFAULT_RULEBOOK, False, id="split-1-5-diagonal"),
        pytest.param(numbers("split", 3, 4), DEFAULT_RULEBOOK, False, id="split-3-4-row-wrap"),
        pytest.param(numbers("split", 33, 36), DEFAULT_RULEBOOK, True, id="split-33-36"),
        pytest.param(numbers("split", 1, 2, 3), DEFAULT_RULEBOOK, False, id="split-of-three"),
        pytest.param(numbers("split", 7, 7), DEFAULT_RULEBOOK, False, id="split-repeats"),
        pytest.param(numbers("straight", 5, 6), DEFAULT_RULEBOOK, False, id="straight-of-two"),
        pytest.param(numbers("street", 34, 35, 36), DEFAULT_RULEBOOK, True, id="street-34"),
        pytest.param(numbers("street", 2, 3, 4), DEFAULT_RULEBOOK, False, id="street-2-3-4"),
        pytest.param(numbers("corner", 1, 2, 4, 5), DEFAULT_RULEBOOK, True, id="corner-1-5"),
        pytest.param(numbers("corner", 32, 33, 35, 36), DEFAULT_RULEBOOK, True, id="corner-32-36"),
        pytest.param(numbers("corner", 3, 4, 6, 7), DEFAULT_RULEBOOK, False, id="corner-wrap"),
        pytest.param(numbers("line", 31, 32, 33, 34, 35, 36), DEFAULT_RULEBOOK, True, id="line-31"),
        pytest.param(numbers("line", 2, 3, 4, 5, 6, 7), DEFAULT_RULEBOOK, False, id="line-shifted"),
        pytest.param(numbers("line", 1, 2, 3, 7, 8, 9), DEFAULT_RULEBOOK, False, id="line-gap"),
        pytest.param(numbers("split", 0, 1), DEFAULT_RULEBOOK, False, id="split-0-1-not-offered"),
        pytest.param(numbers("split", 0, 1), ZERO_BOOK, True, id="split-0-1-offered"),
        pytest.param(numbers("split", 0, 4), ZERO_BOOK, False, id="split-0-4-never"),
        pytest.param(numbers("street", 0, 2, 3), ZERO_BOOK, True, id="street-0-2-3-offered"),
        pytest.param(numbers("street", 0, 1, 2), DEFAULT_RULEBOOK, False, id="street-0-default"),
        pytest.param(numbers("corner", 0, 1, 2, 3), ZERO_BOOK, True, id="first-four-offered"),
        pytest.param(numbers("line", 0, 1, 2, 3, 4, 5), ZERO_BOOK, False, id="line-with-0-never"),
        pytest.param(numbers("nine", *NINE), DEFAULT_RULEBOOK, False, id="nine-not-authorised"),
        pytest.param(numbers("nine", *reversed(NINE)), SECTOR_BOOK, True, id="nine-authorised"),
        pytest.param(numbers("nine", *range(2, 11)), SECTOR_BOOK, False, id="nine-other"),
        pytest.param(numbers("twelve", *TWELVE), SECTOR_BOOK, True, id="twelve-authorised"),
        pytest.param(numbers("twelve", *TWELVE), DEFAULT_RULEBOOK, False, id="twelve-default"),
        pytest.param(numbers("twelve", *NINE), SECTOR_BOOK, False, id="twelve-of-nine"),
        pytest.param(GroupSpot(kind="column", which=3), DEFAULT_RULEBOOK, True, id="column-3"),
        pytest.param(GroupSpot(kind="dozen", which=1), DEFAULT_RULEBOOK, True, id="dozen-1"),
        pytest.param(OutsideSpot(kind="black"), DEFAULT_RULEBOOK, True, id="black"),
    ],
)
def test_spot_problem_examples(spot: Spot, rulebook: Rulebook, valid: bool) -> None:
    problem = spot_problem(spot, rulebook)
    assert (problem is None) == valid, problem
    if not valid:
        assert problem


@pytest.mark.parametrize(
    ("spot", "rulebook", "rule", "message"),
    [
        pytest.param(
            numbers("split", 1, 5),
            DEFAULT_RULEBOOK,
            LAYOUT_RULE,
            "1 and 5 are not adjacent on the 3-column layout: not a split",
            id="split",
        ),
        pytest.param(
            numbers("street", 2, 3, 4),
            DEFAULT_RULEBOOK,
            LAYOUT_RULE,
            "2-3-4 is not a row of three (a street) on the layout",
            id="street",
        ),
        pytest.param(
            numbers("split", 0, 1),
            DEFAULT_RULEBOOK,
            ZERO_COMBINATION_RULE,
            "split 0-1 includes 0: combinations with 0 are not offered (rl.zero_combinations is false)",
            id="zero",
        ),
        pytest.param(
            numbers("nine", *NINE),
            DEFAULT_RULEBOOK,
            SECTOR_RULE,
            "1-2-3-4-5-6-7-8-9 is not an authorised 9-number sector (rl.sectors.nine)",
            id="sector",
        ),
        pytest.param(
            numbers("corner", 1, 2, 4),
            DEFAULT_RULEBOOK,
            "RL art. 7",
            "a corner covers 4 numbers, not 3: 1-2-4",
            id="size",
        ),
    ],
)
def test_spot_issue_names_the_rule_and_why(spot: Spot, rulebook: Rulebook, rule: str, message: str) -> None:
    issue = spot_issue(spot, rulebook)
    assert issue is not None
    assert (issue.rule, issue.message) == (rule, message)


@pytest.mark.parametrize(
    ("spot", "covered"),
    [
        pytest.param(numbers("corner", 5, 6, 8, 9), {5, 6, 8, 9}, id="corner"),
        pytest.param(GroupSpot(kind="column", which=1), set(range(1, 35, 3)), id="column-1"),
        pytest.param(GroupSpot(kind="dozen", which=2), set(range(13, 25)), id="dozen-2"),
        pytest.param(
            OutsideSpot(kind="red"),
            {1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36},
            id="red",
        ),
    ],
)
def test_covered_numbers(spot: Spot, covered: set[int]) -> None:
    assert covered_numbers(spot, DEFAULT_RULEBOOK) == covered


# --- settle: RL arts. 7 and 8 -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spot", "number", "won"),
    [
        pytest.param(numbers("straight", 17), 17, "3500", id="straight-35"),
        pytest.param(numbers("split", 8, 11), 11, "1700", id="split-17"),
        pytest.param(numbers("street", 25, 26, 27), 26, "1100", id="street-11"),
        pytest.param(numbers("corner", 1, 2, 4, 5), 5, "800", id="corner-8"),
        pytest.param(numbers("line", 31, 32, 33, 34, 35, 36), 31, "500", id="line-5"),
        pytest.param(numbers("nine", *NINE), 9, "300", id="nine-3"),
        pytest.param(GroupSpot(kind="column", which=2), 17, "200", id="column-2"),
        pytest.param(GroupSpot(kind="dozen", which=3), 36, "200", id="dozen-2"),
        pytest.param(OutsideSpot(kind="black"), 17, "100", id="black-1"),
        pytest.param(OutsideSpot(kind="high"), 19, "100", id="high-1"),
    ],
)
def test_a_covered_number_wins_its_prize_with_the_stake_returned(spot: Spot, number: int, won: str) -> None:
    due = settle(spot, Decimal("100"), number)
    assert due.as_dict() == {"result": "win", "returned": "100", "won": won, "commission": "0"}
    assert due.rule == "RL art. 7"


@pytest.mark.parametrize(
    ("spot", "number"),
    [
        pytest.param(numbers("straight", 17), 18, id="straight"),
        pytest.param(numbers("split", 8, 11), 9, id="split"),
        pytest.param(OutsideSpot(kind="red"), 17, id="red-on-black"),
        pytest.param(OutsideSpot(kind="even"), 35, id="even-on-odd"),
        pytest.param(GroupSpot(kind="column", which=1), 3, id="column"),
    ],
)
def test_an_uncovered_number_loses_the_stake(spot: Spot, number: int) -> None:
    due = settle(spot, Decimal("100"), number)
    assert due.as_dict() == {"result": "lose", "returned": "0", "won": "0", "commission": "0"}
    assert due.rule == "RL art. 7"
    assert due.reason.startswith(f"{number} is not covered by ")


def test_on_zero_a_straight_up_on_zero_pays_35_to_1() -> None:
    due = settle(numbers("straight", 0), Decimal("25"), 0)
    assert due.as_dict() == {"result": "win", "returned": "25", "won": "875", "commission": "0"}
    assert due.rule == "RL art. 8"


@pytest.mark.parametrize(
    "spot",
    [
        numbers("straight", 1),
        OutsideSpot(kind="red"),
        OutsideSpot(kind="black"),
        OutsideSpot(kind="even"),
        OutsideSpot(kind="odd"),
        OutsideSpot(kind="low"),
        OutsideSpot(kind="high"),
        GroupSpot(kind="column", which=1),
        GroupSpot(kind="column", which=2),
        GroupSpot(kind="column", which=3),
        GroupSpot(kind="dozen", which=1),
        GroupSpot(kind="dozen", which=2),
        GroupSpot(kind="dozen", which=3),
        numbers("split", 0, 1),
        numbers("street", 0, 1, 2),
        numbers("corner", 0, 1, 2, 3),
    ],
    ids=describe_spot,
)
def test_on_zero_every_other_bet_loses(spot: Spot) -> None:
    """RL art. 8: no half-back, no prison; even a combination covering 0 loses (R3)."""
    due = settle(spot, Decimal("100"), 0)
    assert due.as_dict() == {"result": "lose", "returned": "0", "won": "0", "commission": "0"}
    assert due.rule == "RL art. 8"


def test_a_zero_combination_wins_on_its_other_numbers() -> None:
    due = settle(numbers("split", 0, 1), Decimal("10"), 1)
    assert (due.result, due.won) == ("win", Decimal("170"))


def test_prizes_keep_cents_exactly() -> None:
    due = settle(numbers("straight", 7), Decimal("12.35"), 7)
    assert (due.returned, due.won) == (Decimal("12.35"), Decimal("432.25"))


def test_roulette_never_takes_commission() -> None:
    spots: list[Spot] = [numbers("straight", 0), OutsideSpot(kind="odd"), GroupSpot(kind="dozen", which=2)]
    assert {settle(s, Decimal("50"), n).commission for s in spots for n in range(37)} == {0}


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (17, "17: black, odd, low, dozen 2, column 2"),
        (36, "36: red, even, high, dozen 3, column 3"),
        (0, "0: zero, no colour; only a straight-up on 0 wins (RL art. 8)"),
    ],
)
def test_describe_number(number: int, text: str) -> None:
    assert describe_number(number) == text


# --- Recorded rounds: feed lines → Round → check_round ------------------------------------------

CLEAN = """
{"v":1,"table":"RL-01","game":"RL","round":"000417","seq":1,"at":"2026-11-21T20:00:00+08:00","type":"round_opened","currency":"HKD"}
{"v":1,"table":"RL-01","game":"RL","round":"000417","seq":2,"at":"2026-11-21T20:00:05+08:00","type":"bet_placed","bet":"b1","player":"P-88","spot":{"kind":"straight","numbers":[17]},"amount":"100"}
{"v":1,"table":"RL-01","game":"RL","round":"000417","seq":3,"at":"2026-11-21T20:00:07+08:00","type":"bet_placed","bet":"b2","player":"P-12","spot":{"kind":"red"},"amount":"500"}
{"v":1,"table":"RL-01","game":"RL","round":"000417","seq":4,"at":"2026-11-21T20:00:30+08:00","type":"betting_closed"}
{"v":1,"table":"RL-01","game":"RL","round":"000417","seq":5,"at":"2026-11-21T20:00:41+08:00","type":"spin_result","number":17}
{"v":1,"table":"RL-01","game":"RL","round":"000417","seq":6,"at":"2026-11-21T20:00:50+08:00","type":"bet_settled","bet":"b1","result":"win","returned":"100","won":"3500","commission":"0"}
{"v":1,"table":"RL-01","game":"RL","round":"000417","seq":7,"at":"2026-11-21T20:00:51+08:00","type":"bet_settled","bet":"b2","result":"lose","returned":"0","won":"0","commission":"0"}
{"v":1,"table":"RL-01","game":"RL","round":"000417","seq":8,"at":"2026-11-21T20:00:52+08:00","type":"round_closed"}
"""

INVALID_SPLIT = """
{"v":1,"table":"RL-02","game":"RL","round":"9","seq":1,"at":"2026-11-21T20:00:00+08:00","type":"round_opened","currency":"MOP"}
{"v":1,"table":"RL-02","game":"RL","round":"9","seq":2,"at":"2026-11-21T20:00:05+08:00","type":"bet_placed","bet":"b1","spot":{"kind":"split","numbers":[1,5]},"amount":"20"}
{"v":1,"table":"RL-02","game":"RL","round":"9","seq":3,"at":"2026-11-21T20:00:07+08:00","type":"bet_placed","bet":"b2","spot":{"kind":"dozen","which":1},"amount":"50"}
{"v":1,"table":"RL-02","game":"RL","round":"9","seq":4,"at":"2026-11-21T20:00:30+08:00","type":"spin_result","number":5}
{"v":1,"table":"RL-02","game":"RL","round":"9","seq":5,"at":"2026-11-21T20:00:50+08:00","type":"bet_settled","bet":"b1","result":"void","returned":"20","won":"0","commission":"0"}
{"v":1,"table":"RL-02","game":"RL","round":"9","seq":6,"at":"2026-11-21T20:00:51+08:00","type":"bet_settled","bet":"b2","result":"win","returned":"50","won":"100","commission":"0"}
{"v":1,"table":"RL-02","game":"RL","round":"9","seq":7,"at":"2026-11-21T20:00:52+08:00","type":"round_closed"}
"""

LATE_BET = """
{"v":1,"table":"RL-03","game":"RL","round":"1","seq":1,"at":"2026-11-21T20:00:00+08:00","type":"round_opened","currency":"HKD"}
{"v":1,"table":"RL-03","game":"RL","round":"1","seq":2,"at":"2026-11-21T20:00:05+08:00","type":"bet_placed","bet":"b1","spot":{"kind":"odd"},"amount":"100"}
{"v":1,"table":"RL-03","game":"RL","round":"1","seq":3,"at":"2026-11-21T20:00:30+08:00","type":"spin_result","number":14}
{"v":1,"table":"RL-03","game":"RL","round":"1","seq":4,"at":"2026-11-21T20:00:31+08:00","type":"bet_placed","bet":"b2","spot":{"kind":"straight","numbers":[14]},"amount":"100"}
{"v":1,"table":"RL-03","game":"RL","round":"1","seq":5,"at":"2026-11-21T20:00:50+08:00","type":"bet_settled","bet":"b1","result":"lose","returned":"0","won":"0","commission":"0"}
{"v":1,"table":"RL-03","game":"RL","round":"1","seq":6,"at":"2026-11-21T20:00:51+08:00","type":"bet_settled","bet":"b2","result":"win","returned":"100","won":"3500","commission":"0"}
{"v":1,"table":"RL-03","game":"RL","round":"1","seq":7,"at":"2026-11-21T20:00:52+08:00","type":"round_closed"}
"""

VOID_SPIN = """
{"v":1,"table":"RL-04","game":"RL","round":"7","seq":1,"at":"2026-11-21T20:00:00+08:00","type":"round_opened","currency":"HKD"}
{"v":1,"table":"RL-04","game":"RL","round":"7","seq":2,"at":"2026-11-21T20:00:05+08:00","type":"bet_placed","bet":"b1","spot":{"kind":"straight","numbers":[9]},"amount":"10"}
{"v":1,"table":"RL-04","game":"RL","round":"7","seq":3,"at":"2026-11-21T20:00:07+08:00","type":"bet_placed","bet":"b2","spot":{"kind":"column","which":1},"amount":"100"}
{"v":1,"table":"RL-04","game":"RL","round":"7","seq":4,"at":"2026-11-21T20:00:30+08:00","type":"betting_closed"}
{"v":1,"table":"RL-04","game":"RL","round":"7","seq":5,"at":"2026-11-21T20:00:41+08:00","type":"spin_voided","reason":"ball left the wheel"}
{"v":1,"table":"RL-04","game":"RL","round":"7","seq":6,"at":"2026-11-21T20:01:05+08:00","type":"spin_result","number":9}
{"v":1,"table":"RL-04","game":"RL","round":"7","seq":7,"at":"2026-11-21T20:01:10+08:00","type":"bet_settled","bet":"b1","result":"win","returned":"10","won":"350","commission":"0"}
{"v":1,"table":"RL-04","game":"RL","round":"7","seq":8,"at":"2026-11-21T20:01:11+08:00","type":"bet_settled","bet":"b2","result":"lose","returned":"0","won":"0","commission":"0"}
{"v":1,"table":"RL-04","game":"RL","round":"7","seq":9,"at":"2026-11-21T20:01:12+08:00","type":"round_closed"}
"""

VOIDED_ROUND = """
{"v":1,"table":"RL-05","game":"RL","round":"3","seq":1,"at":"2026-11-21T20:00:00+08:00","type":"round_opened","currency":"HKD"}
{"v":1,"table":"RL-05","game":"RL","round":"3","seq":2,"at":"2026-11-21T20:00:05+08:00","type":"bet_placed","bet":"b1","spot":{"kind":"straight","numbers":[9]},"amount":"10"}
{"v":1,"table":"RL-05","game":"RL","round":"3","seq":3,"at":"2026-11-21T20:00:07+08:00","type":"bet_placed","bet":"b2","spot":{"kind":"low"},"amount":"250.50"}
{"v":1,"table":"RL-05","game":"RL","round":"3","seq":4,"at":"2026-11-21T20:00:30+08:00","type":"betting_closed"}
{"v":1,"table":"RL-05","game":"RL","round":"3","seq":5,"at":"2026-11-21T20:00:41+08:00","type":"spin_result","number":9}
{"v":1,"table":"RL-05","game":"RL","round":"3","seq":6,"at":"2026-11-21T20:01:10+08:00","type":"bet_settled","bet":"b1","result":"void","returned":"10","won":"0","commission":"0"}
{"v":1,"table":"RL-05","game":"RL","round":"3","seq":7,"at":"2026-11-21T20:01:11+08:00","type":"bet_settled","bet":"b2","result":"void","returned":"250.50","won":"0","commission":"0"}
{"v":1,"table":"RL-05","game":"RL","round":"3","seq":8,"at":"2026-11-21T20:01:12+08:00","type":"round_voided","reason":"wheel fault"}
"""

NO_SPIN = """
{"v":1,"table":"RL-06","game":"RL","round":"4","seq":1,"at":"2026-11-21T20:00:00+08:00","type":"round_opened","currency":"HKD"}
{"v":1,"table":"RL-06","game":"RL","round":"4","seq":2,"at":"2026-11-21T20:00:05+08:00","type":"bet_placed","bet":"b1","spot":{"kind":"even"},"amount":"100"}
{"v":1,"table":"RL-06","game":"RL","round":"4","seq":3,"at":"2026-11-21T20:00:30+08:00","type":"betting_closed"}
{"v":1,"table":"RL-06","game":"RL","round":"4","seq":4,"at":"2026-11-21T20:01:10+08:00","type":"bet_settled","bet":"b1","result":"win","returned":"100","won":"100","commission":"0"}
{"v":1,"table":"RL-06","game":"RL","round":"4","seq":5,"at":"2026-11-21T20:01:12+08:00","type":"round_closed"}
"""


VOID_SPIN_LAST = """
{"v":1,"table":"RL-04","game":"RL","round":"8","seq":1,"at":"2026-11-21T20:00:00+08:00","type":"round_opened","currency":"HKD"}
{"v":1,"table":"RL-04","game":"RL","round":"8","seq":2,"at":"2026-11-21T20:00:05+08:00","type":"bet_placed","bet":"b1","spot":{"kind":"straight","numbers":[9]},"amount":"10"}
{"v":1,"table":"RL-04","game":"RL","round":"8","seq":3,"at":"2026-11-21T20:00:30+08:00","type":"spin_result","number":9}
{"v":1,"table":"RL-04","game":"RL","round":"8","seq":4,"at":"2026-11-21T20:00:41+08:00","type":"spin_voided","reason":"ball between pockets"}
{"v":1,"table":"RL-04","game":"RL","round":"8","seq":5,"at":"2026-11-21T20:01:10+08:00","type":"bet_settled","bet":"b1","result":"win","returned":"10","won":"350","commission":"0"}
{"v":1,"table":"RL-04","game":"RL","round":"8","seq":6,"at":"2026-11-21T20:01:12+08:00","type":"round_closed"}
"""

SECTOR = """
{"v":1,"table":"RL-07","game":"RL","round":"5","seq":1,"at":"2026-11-21T20:00:00+08:00","type":"round_opened","currency":"HKD","rulebook":{"rl":{"sectors":{"nine":[[1,2,3,4,5,6,7,8,9]]}}}}
{"v":1,"table":"RL-07","game":"RL","round":"5","seq":2,"at":"2026-11-21T20:00:05+08:00","type":"bet_placed","bet":"b1","spot":{"kind":"nine","numbers":[9,8,7,6,5,4,3,2,1]},"amount":"100"}
{"v":1,"table":"RL-07","game":"RL","round":"5","seq":3,"at":"2026-11-21T20:00:30+08:00","type":"spin_result","number":3}
{"v":1,"table":"RL-07","game":"RL","round":"5","seq":4,"at":"2026-11-21T20:01:10+08:00","type":"bet_settled","bet":"b1","result":"win","returned":"100","won":"300","commission":"0"}
{"v":1,"table":"RL-07","game":"RL","round":"5","seq":5,"at":"2026-11-21T20:01:12+08:00","type":"round_closed"}
"""


def replay(text: str) -> Round:
    """Parse hand-written feed lines (each must be accepted) and rebuild their round."""
    events: list[FeedEvent] = []
    for no, line in enumerate(text.strip().splitlines(), start=1):
        event = parse_line(line, no)
        assert not isinstance(event, Rejection), event
        events.append(event)
    return Round.replay(events)


def codes(text: str) -> list[tuple[str, str | None]]:
    return [(f.code, f.bet) for f in check_round(replay(text), GAME)]


def test_a_clean_round_has_no_findings() -> None:
    rnd = replay(CLEAN)
    assert check_round(rnd, GAME) == []
    expected = derive(rnd).expected
    assert expected["b1"].as_dict() == {"result": "win", "returned": "100", "won": "3500", "commission": "0"}
    assert expected["b2"].result == "lose"


def test_a_short_payout_is_one_settlement_mismatch_with_expected_and_recorded() -> None:
    findings = check_round(replay(CLEAN.replace('"won":"3500"', '"won":"3400"')), GAME)
    assert len(findings) == 1
    [f] = findings
    assert (f.code, f.table, f.round, f.bet, f.rule) == (
        "settlement_mismatch",
        "RL-01",
        "000417",
        "b1",
        "RL art. 7",
    )
    assert f.expected == {"result": "win", "returned": "100", "won": "3500", "commission": "0"}
    assert f.recorded == {"result": "win", "returned": "100", "won": "3400", "commission": "0"}
    assert f.message == "straight-up on 17 pays 35 to 1"


def test_commission_taken_on_roulette_is_a_commission_mismatch() -> None:
    text = CLEAN.replace('"won":"0","commission":"0"', '"won":"0","commission":"5"')
    assert codes(text) == [("commission_mismatch", "b2")]


def test_a_split_of_1_and_5_is_an_invalid_bet_due_void() -> None:
    rnd = replay(INVALID_SPLIT)
    findings = check_round(rnd, GAME)
    assert [(f.code, f.bet, f.rule) for f in findings] == [("invalid_bet", "b1", LAYOUT_RULE)]
    assert findings[0].message == "1 and 5 are not adjacent on the 3-column layout: not a split"
    assert derive(rnd).expected["b1"].as_dict() == {
        "result": "void",
        "returned": "20",
        "won": "0",
        "commission": "0",
    }


def test_an_invalid_bet_the_table_settled_is_also_a_settlement_mismatch() -> None:
    text = INVALID_SPLIT.replace('"result":"void","returned":"20"', '"result":"lose","returned":"0"')
    assert codes(text) == [("invalid_bet", "b1"), ("settlement_mismatch", "b1")]


def test_a_zero_combination_is_judged_under_art_8_when_the_profile_offers_it() -> None:
    text = (
        INVALID_SPLIT.replace(
            '"currency":"MOP"', '"currency":"MOP","rulebook":{"rl":{"zero_combinations":true}}'
        )
        .replace('"numbers":[1,5]', '"numbers":[0,1]')
        .replace('"number":5', '"number":0')
        .replace('"result":"void","returned":"20"', '"result":"lose","returned":"0"')
        .replace('"result":"win","returned":"50","won":"100"', '"result":"lose","returned":"0","won":"0"')
    )
    assert codes(text) == []
    assert codes(text.replace('"zero_combinations":true', '"zero_combinations":false')) == [
        ("invalid_bet", "b1"),
        ("settlement_mismatch", "b1"),
    ]


def test_a_bet_after_the_spin_is_bet_after_close_only() -> None:
    assert codes(LATE_BET) == [("bet_after_close", "b2")]


def test_a_void_spin_keeps_the_bets_and_they_settle_on_the_next_spin() -> None:
    rnd = replay(VOID_SPIN)
    assert check_round(rnd, GAME) == []
    steps = derive(rnd).steps
    assert steps[0].text == (
        "spin voided (golpe nulo: ball left the wheel): bets stand, the ball is launched again"
    )
    assert steps[0].rule == "RL art. 2 / RULES §5.6"
    assert steps[1].text == "spin 9: red, odd, low, dozen 1, column 3"


def test_bets_settled_as_if_the_void_spin_counted_are_mismatches() -> None:
    text = VOID_SPIN.replace('"type":"spin_result","number":9', '"type":"spin_result","number":1')
    assert codes(text) == [("settlement_mismatch", "b1"), ("settlement_mismatch", "b2")]


def test_a_void_spin_with_no_spin_after_it_leaves_the_outcome_missing() -> None:
    rnd = replay(VOID_SPIN_LAST)
    assert [(f.code, f.bet) for f in check_round(rnd, GAME)] == [("outcome_missing", None)]
    assert derive(rnd).expected == {}


def test_a_second_spin_result_without_a_void_replaces_the_first() -> None:
    """FEED §3 sends a new spin_result only after spin_voided; if not, the last one counts."""
    text = VOID_SPIN.replace(
        '"type":"spin_voided","reason":"ball left the wheel"', '"type":"spin_result","number":1'
    )
    rnd = replay(text)
    assert check_round(rnd, GAME) == []
    assert [s.text for s in derive(rnd).steps[:3]] == [
        "spin 1: red, odd, low, dozen 1, column 1",
        "spin_result 1 followed by another spin_result without spin_voided: the last one counts",
        "spin 9: red, odd, low, dozen 1, column 3",
    ]


def test_a_voided_round_returns_every_stake() -> None:
    rnd = replay(VOIDED_ROUND)
    assert check_round(rnd, GAME) == []
    expected = derive(rnd).expected
    assert {b: s.as_dict() for b, s in expected.items()} == {
        "b1": {"result": "void", "returned": "10", "won": "0", "commission": "0"},
        "b2": {"result": "void", "returned": "250.50", "won": "0", "commission": "0"},
    }


def test_a_voided_round_settled_on_its_spin_is_a_mismatch() -> None:
    text = VOIDED_ROUND.replace(
        '"result":"void","returned":"10","won":"0"', '"result":"win","returned":"10","won":"350"'
    )
    assert codes(text) == [("settlement_mismatch", "b1")]


def test_a_closed_round_without_a_spin_is_outcome_missing_and_judges_no_bet() -> None:
    rnd = replay(NO_SPIN)
    findings = check_round(rnd, GAME)
    assert [(f.code, f.bet, f.round) for f in findings] == [("outcome_missing", None, "4")]
    assert derive(rnd).expected == {}


def test_an_open_round_without_a_spin_is_not_outcome_missing() -> None:
    text = "\n".join(NO_SPIN.strip().splitlines()[:3])
    assert codes(text) == [("round_incomplete", None)]


def test_an_authorised_sector_bet_settles_at_3_to_1() -> None:
    assert codes(SECTOR) == []
    unauthorised = SECTOR.replace(',"rulebook":{"rl":{"sectors":{"nine":[[1,2,3,4,5,6,7,8,9]]}}}', "")
    assert codes(unauthorised) == [("invalid_bet", "b1"), ("settlement_mismatch", "b1")]


def test_every_round_of_the_shared_example_is_clean(examples: Path) -> None:
    text = (examples / "rl.jsonl").read_text(encoding="utf-8")
    rounds: dict[tuple[str, str], list[FeedEvent]] = defaultdict(list)
    for no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        event = parse_line(line, no)
        assert not isinstance(event, Rejection), event
        rounds[(event.table, event.round)].append(event)
    assert len(rounds) >= 5
    for key, events in rounds.items():
        assert check_round(Round.replay(events), GAME) == [], key
    numbers_spun = {json.loads(line).get("number") for line in text.splitlines() if line}
    assert 0 in numbers_spun  # the example exercises RL art. 8
