"""Fish-Prawn-Crab rules and rounds: RULES §2.4 examples, cocked dice (F2), feed to findings.

The rounds are hand-written feed lines (FEED §1, §4) run through the real path:
``parse_line`` → ``Round.replay`` → ``check_round``.
"""

from __future__ import annotations

import json
import os
from decimal import Decimal
from itertools import groupby
from pathlib import Path

import pytest

from ledger.codec.parse import Rejection, parse_line
from ledger.domain.findings import Finding
from ledger.domain.round import Round
from ledger.feed.envelope import FeedEvent
from ledger.games.fish_prawn_crab import GAME
from ledger.games.fish_prawn_crab.feed import (
    AnySpot,
    ColourSpot,
    EvenSpot,
    FigureSpot,
    Spot,
    TotalSpot,
)
from ledger.games.fish_prawn_crab.round import derive
from ledger.games.fish_prawn_crab.rules import describe, settle
from ledger.verify.checks import check_round

EXAMPLE_DIRS = [Path(os.environ["LEDGER_EXAMPLES"])]
"""Where FEED's examples are (found by tests/conftest.py)."""

# ---------------------------------------------------------------------------------------------
# Rules (RULES §2.4): one spot, one throw, one settlement.

RED, GREEN, BLUE = "red", "green", "blue"
CASES: list[tuple[str, Spot, tuple[int, int, int], str, str]] = [
    # id, spot, dice, result, won on a stake of 10
    ("2-2-2 pays total 6 (F3)", TotalSpot(kind="total", total=6), (2, 2, 2), "win", "140"),
    ("2-2-2 loses small (art. 7)", EvenSpot(kind="small"), (2, 2, 2), "lose", "0"),
    ("6-6-6 loses big (art. 7)", EvenSpot(kind="big"), (6, 6, 6), "lose", "0"),
    ("1-2-3 small wins 1 to 1", EvenSpot(kind="small"), (1, 2, 3), "win", "10"),
    ("1-5-5 big wins 1 to 1 (total 11)", EvenSpot(kind="big"), (1, 5, 5), "win", "10"),
    ("4-3-3 small wins (total 10)", EvenSpot(kind="small"), (4, 3, 3), "win", "10"),
    ("4-3-3 big loses (total 10)", EvenSpot(kind="big"), (4, 3, 3), "lose", "0"),
    ("three reds pay three of red", ColourSpot(kind="three_colours", colour=RED), (1, 6, 6), "win", "200"),
    ("three reds pay any same colour", AnySpot(kind="any_three_colour"), (1, 6, 6), "win", "70"),
    (
        "three reds lose one of red (exactly)",
        ColourSpot(kind="one_colour", colour=RED),
        (1, 6, 6),
        "lose",
        "0",
    ),
    (
        "three reds lose two of red (exactly)",
        ColourSpot(kind="two_colours", colour=RED),
        (1, 6, 6),
        "lose",
        "0",
    ),
    ("one green pays 1 to 1", ColourSpot(kind="one_colour", colour=GREEN), (2, 3, 4), "win", "10"),
    ("two blues pay 3 to 1", ColourSpot(kind="two_colours", colour=BLUE), (3, 4, 1), "win", "30"),
    ("two blues lose one of blue", ColourSpot(kind="one_colour", colour=BLUE), (3, 4, 1), "lose", "0"),
    ("figure once pays 1 to 1", FigureSpot(kind="figure", face=5), (5, 1, 2), "win", "10"),
    ("figure twice pays 2 to 1", FigureSpot(kind="figure", face=5), (1, 5, 5), "win", "20"),
    ("figure thrice pays 3 to 1", FigureSpot(kind="figure", face=5), (5, 5, 5), "win", "30"),
    ("figure absent loses", FigureSpot(kind="figure", face=5), (1, 2, 3), "lose", "0"),
    ("specific triple pays 150 to 1", FigureSpot(kind="specific_triple", face=3), (3, 3, 3), "win", "1500"),
    (
        "specific triple of another face loses",
        FigureSpot(kind="specific_triple", face=3),
        (4, 4, 4),
        "lose",
        "0",
    ),
    ("any triple pays 24 to 1", AnySpot(kind="any_triple"), (4, 4, 4), "win", "240"),
    ("a pair is no triple", AnySpot(kind="any_triple"), (4, 4, 3), "lose", "0"),
    ("two colours are not any same colour", AnySpot(kind="any_three_colour"), (3, 4, 2), "lose", "0"),
    ("total 4 pays 50 to 1", TotalSpot(kind="total", total=4), (1, 1, 2), "win", "500"),
    ("total 17 pays 50 to 1", TotalSpot(kind="total", total=17), (6, 5, 6), "win", "500"),
    ("total 11 pays 6 to 1", TotalSpot(kind="total", total=11), (1, 5, 5), "win", "60"),
    ("total 7 pays 12 to 1", TotalSpot(kind="total", total=7), (1, 2, 4), "win", "120"),
    ("total 18 (6-6-6) loses every total", TotalSpot(kind="total", total=17), (6, 6, 6), "lose", "0"),
]


@pytest.mark.parametrize(("spot", "dice", "result", "won"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_settlement_of_one_spot(spot: Spot, dice: tuple[int, int, int], result: str, won: str) -> None:
    due = settle(spot, Decimal("10"), dice)
    assert (due.result, due.won) == (result, Decimal(won))
    assert due.returned == (Decimal("10") if result == "win" else 0)
    assert due.commission == 0  # FPC has no commission (RULES §2.3 step 6)
    assert due.rule.startswith("FPC art.")


def test_small_on_a_triple_cites_art_7_and_totals_on_a_triple_cite_f3() -> None:
    assert settle(EvenSpot(kind="small"), Decimal(10), (2, 2, 2)).rule == "FPC art. 7"
    assert "F3" in settle(TotalSpot(kind="total", total=6), Decimal(10), (2, 2, 2)).rule
    assert "F3" not in settle(TotalSpot(kind="total", total=6), Decimal(10), (1, 2, 3)).rule


def test_winnings_are_exact_to_the_cent() -> None:
    due = settle(ColourSpot(kind="two_colours", colour="green"), Decimal("95.50"), (2, 5, 1))
    assert (due.returned, due.won) == (Decimal("95.50"), Decimal("286.50"))


def test_describe_names_figures_colours_and_the_total() -> None:
    assert describe((1, 5, 5)) == "dice 1-5-5: fish red, crab green ×2; total 11"
    assert describe((3, 4, 6)) == "dice 3-4-6: calabash blue, coin blue, rooster red; total 13"


# ---------------------------------------------------------------------------------------------
# Rounds from hand-written feed lines.

CLEAN = """
{"v":1,"table":"FPC-T","game":"FPC","round":"r1","seq":1,"at":"2026-11-21T20:00:00+08:00","type":"round_opened","currency":"MOP"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r1","seq":2,"at":"2026-11-21T20:00:02+08:00","type":"dice_pressed"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r1","seq":3,"at":"2026-11-21T20:00:04+08:00","type":"bet_placed","bet":"b1","spot":{"kind":"small"},"amount":"100"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r1","seq":4,"at":"2026-11-21T20:00:06+08:00","type":"bet_placed","bet":"b2","spot":{"kind":"figure","face":5},"amount":"50"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r1","seq":5,"at":"2026-11-21T20:00:08+08:00","type":"bet_placed","bet":"b3","spot":{"kind":"total","total":11},"amount":"20"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r1","seq":6,"at":"2026-11-21T20:00:10+08:00","type":"bet_placed","bet":"b4","spot":{"kind":"two_colours","colour":"green"},"amount":"30"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r1","seq":7,"at":"2026-11-21T20:00:12+08:00","type":"betting_closed"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r1","seq":8,"at":"2026-11-21T20:00:14+08:00","type":"dice_shown","dice":[1,5,5]}
{"v":1,"table":"FPC-T","game":"FPC","round":"r1","seq":9,"at":"2026-11-21T20:00:16+08:00","type":"bet_settled","bet":"b1","result":"lose","returned":"0","won":"0","commission":"0"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r1","seq":10,"at":"2026-11-21T20:00:18+08:00","type":"bet_settled","bet":"b2","result":"win","returned":"50","won":"100","commission":"0"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r1","seq":11,"at":"2026-11-21T20:00:20+08:00","type":"bet_settled","bet":"b3","result":"win","returned":"20","won":"120","commission":"0"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r1","seq":12,"at":"2026-11-21T20:00:22+08:00","type":"bet_settled","bet":"b4","result":"win","returned":"30","won":"90","commission":"0"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r1","seq":13,"at":"2026-11-21T20:00:24+08:00","type":"round_closed"}
"""

LATE_BET = """
{"v":1,"table":"FPC-T","game":"FPC","round":"r2","seq":1,"at":"2026-11-21T20:01:00+08:00","type":"round_opened","currency":"HKD"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r2","seq":2,"at":"2026-11-21T20:01:02+08:00","type":"dice_pressed"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r2","seq":3,"at":"2026-11-21T20:01:04+08:00","type":"bet_placed","bet":"b1","spot":{"kind":"any_triple"},"amount":"10"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r2","seq":4,"at":"2026-11-21T20:01:06+08:00","type":"dice_shown","dice":[3,3,3]}
{"v":1,"table":"FPC-T","game":"FPC","round":"r2","seq":5,"at":"2026-11-21T20:01:08+08:00","type":"bet_placed","bet":"b2","spot":{"kind":"specific_triple","face":3},"amount":"10"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r2","seq":6,"at":"2026-11-21T20:01:10+08:00","type":"bet_settled","bet":"b1","result":"win","returned":"10","won":"240","commission":"0"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r2","seq":7,"at":"2026-11-21T20:01:12+08:00","type":"bet_settled","bet":"b2","result":"win","returned":"10","won":"1500","commission":"0"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r2","seq":8,"at":"2026-11-21T20:01:14+08:00","type":"round_closed"}
"""

# A die cocked after the shaker was opened: the 6-6-5 is not read, the shaker is pressed again
# and the bets stand (F2, reshake); they settle on the 2-2-3 shown next.
RESHAKE = """
{"v":1,"table":"FPC-T","game":"FPC","round":"r3","seq":1,"at":"2026-11-21T20:02:00+08:00","type":"round_opened","currency":"MOP","rulebook":{"fpc":{"cocked_die":"reshake"}}}
{"v":1,"table":"FPC-T","game":"FPC","round":"r3","seq":2,"at":"2026-11-21T20:02:02+08:00","type":"dice_pressed"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r3","seq":3,"at":"2026-11-21T20:02:04+08:00","type":"bet_placed","bet":"b1","spot":{"kind":"figure","face":2},"amount":"10"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r3","seq":4,"at":"2026-11-21T20:02:06+08:00","type":"bet_placed","bet":"b2","spot":{"kind":"big"},"amount":"100"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r3","seq":5,"at":"2026-11-21T20:02:08+08:00","type":"betting_closed"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r3","seq":6,"at":"2026-11-21T20:02:10+08:00","type":"dice_shown","dice":[6,6,5]}
{"v":1,"table":"FPC-T","game":"FPC","round":"r3","seq":7,"at":"2026-11-21T20:02:12+08:00","type":"die_cocked"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r3","seq":8,"at":"2026-11-21T20:02:14+08:00","type":"dice_pressed"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r3","seq":9,"at":"2026-11-21T20:02:16+08:00","type":"dice_shown","dice":[2,2,3]}
{"v":1,"table":"FPC-T","game":"FPC","round":"r3","seq":10,"at":"2026-11-21T20:02:18+08:00","type":"bet_settled","bet":"b1","result":"win","returned":"10","won":"20","commission":"0"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r3","seq":11,"at":"2026-11-21T20:02:20+08:00","type":"bet_settled","bet":"b2","result":"lose","returned":"0","won":"0","commission":"0"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r3","seq":12,"at":"2026-11-21T20:02:22+08:00","type":"round_closed"}
"""

# The same table under fpc.cocked_die = void: the cocked die voids the round (F2 (b)).
VOID_COCKED = """
{"v":1,"table":"FPC-T","game":"FPC","round":"r4","seq":1,"at":"2026-11-21T20:03:00+08:00","type":"round_opened","currency":"MOP","rulebook":{"fpc":{"cocked_die":"void"}}}
{"v":1,"table":"FPC-T","game":"FPC","round":"r4","seq":2,"at":"2026-11-21T20:03:02+08:00","type":"dice_pressed"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r4","seq":3,"at":"2026-11-21T20:03:04+08:00","type":"bet_placed","bet":"b1","spot":{"kind":"figure","face":2},"amount":"10"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r4","seq":4,"at":"2026-11-21T20:03:06+08:00","type":"bet_placed","bet":"b2","spot":{"kind":"big"},"amount":"100"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r4","seq":5,"at":"2026-11-21T20:03:08+08:00","type":"betting_closed"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r4","seq":6,"at":"2026-11-21T20:03:10+08:00","type":"die_cocked"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r4","seq":7,"at":"2026-11-21T20:03:12+08:00","type":"bet_settled","bet":"b1","result":"void","returned":"10","won":"0","commission":"0"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r4","seq":8,"at":"2026-11-21T20:03:14+08:00","type":"bet_settled","bet":"b2","result":"void","returned":"100","won":"0","commission":"0"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r4","seq":9,"at":"2026-11-21T20:03:16+08:00","type":"round_voided","reason":"die_cocked"}
"""

NO_DICE = """
{"v":1,"table":"FPC-T","game":"FPC","round":"r5","seq":1,"at":"2026-11-21T20:04:00+08:00","type":"round_opened","currency":"MOP"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r5","seq":2,"at":"2026-11-21T20:04:02+08:00","type":"dice_pressed"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r5","seq":3,"at":"2026-11-21T20:04:04+08:00","type":"bet_placed","bet":"b1","spot":{"kind":"small"},"amount":"100"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r5","seq":4,"at":"2026-11-21T20:04:06+08:00","type":"betting_closed"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r5","seq":5,"at":"2026-11-21T20:04:08+08:00","type":"bet_settled","bet":"b1","result":"win","returned":"100","won":"100","commission":"0"}
{"v":1,"table":"FPC-T","game":"FPC","round":"r5","seq":6,"at":"2026-11-21T20:04:10+08:00","type":"round_closed"}
"""


def parse(feed: str) -> list[FeedEvent]:
    events = []
    for n, text in enumerate(feed.strip().splitlines(), start=1):
        event = parse_line(text, n)
        assert not isinstance(event, Rejection), event
        events.append(event)
    return events


def replay(feed: str) -> Round:
    return Round.replay(parse(feed))


def findings(feed: str) -> list[Finding]:
    return check_round(replay(feed), GAME)


def edit(feed: str, old: str, new: str) -> str:
    assert feed.count(old) == 1, old
    return feed.replace(old, new)


@pytest.mark.parametrize(
    "feed", [CLEAN, RESHAKE, VOID_COCKED], ids=["clean", "cocked-reshake", "cocked-void"]
)
def test_a_correctly_settled_round_has_no_findings(feed: str) -> None:
    assert findings(feed) == []


def test_a_wrong_payout_is_one_settlement_mismatch_with_expected_and_recorded() -> None:
    feed = edit(
        CLEAN,
        '"bet":"b2","result":"win","returned":"50","won":"100"',
        '"bet":"b2","result":"win","returned":"50","won":"150"',
    )
    [found] = findings(feed)
    assert (found.code, found.bet, found.table, found.round) == ("settlement_mismatch", "b2", "FPC-T", "r1")
    assert found.expected == {"result": "win", "returned": "50", "won": "100", "commission": "0"}
    assert found.recorded == {"result": "win", "returned": "50", "won": "150", "commission": "0"}
    assert found.rule == "FPC art. 5 c) [R], art. 6"


def test_a_commission_in_fpc_is_one_commission_mismatch() -> None:
    feed = edit(CLEAN, '"won":"90","commission":"0"', '"won":"90","commission":"4.50"')
    assert [(f.code, f.bet) for f in findings(feed)] == [("commission_mismatch", "b4")]


def test_a_bet_after_the_dice_are_shown_is_bet_after_close() -> None:
    [found] = findings(LATE_BET)
    assert (found.code, found.bet, found.seq) == ("bet_after_close", "b2", 5)


def test_dice_shown_closes_betting_but_dice_pressed_does_not() -> None:
    assert GAME.closes_betting == frozenset({"dice_shown", "die_cocked"})
    # LATE_BET has no betting_closed: b1 after dice_pressed is fine, b2 after dice_shown is not.
    assert [f.bet for f in findings(LATE_BET)] == ["b2"]


def test_reshake_settles_on_the_dice_shown_after_the_cocked_die() -> None:
    derivation = derive(replay(RESHAKE))
    assert {b: s.as_dict()["result"] for b, s in derivation.expected.items()} == {
        "b1": "win",
        "b2": "lose",
    }  # 2-2-3: prawn twice, total 7 (6-6-5 would pay big)
    assert derivation.expected["b1"].won == 20
    assert any("cocked" in s.text and "F2" in (s.rule or "") for s in derivation.steps)
    assert any(s.text.startswith("dice 2-2-3: prawn green ×2") for s in derivation.steps)


def test_reshake_settled_on_the_unread_throw_is_a_mismatch() -> None:
    feed = edit(
        RESHAKE,
        '"bet":"b2","result":"lose","returned":"0","won":"0"',
        '"bet":"b2","result":"win","returned":"100","won":"100"',
    )
    assert [(f.code, f.bet) for f in findings(feed)] == [("settlement_mismatch", "b2")]


def test_a_cocked_die_last_leaves_the_outcome_missing() -> None:
    feed = edit(RESHAKE, '"type":"dice_shown","dice":[2,2,3]', '"type":"die_cocked"')
    assert [f.code for f in findings(feed)] == ["outcome_missing"]


def test_void_mode_returns_every_stake() -> None:
    derivation = derive(replay(VOID_COCKED))
    assert {b: s.as_dict() for b, s in derivation.expected.items()} == {
        "b1": {"result": "void", "returned": "10", "won": "0", "commission": "0"},
        "b2": {"result": "void", "returned": "100", "won": "0", "commission": "0"},
    }
    assert all("F2" in s.rule for s in derivation.expected.values())


def test_void_mode_voids_even_if_the_table_closed_the_round_and_paid() -> None:
    feed = edit(VOID_COCKED, '"type":"round_voided","reason":"die_cocked"', '"type":"round_closed"')
    feed = edit(
        feed,
        '"bet":"b1","result":"void","returned":"10","won":"0"',
        '"bet":"b1","result":"win","returned":"10","won":"20"',
    )
    assert [(f.code, f.bet) for f in findings(feed)] == [("settlement_mismatch", "b1")]


def test_the_same_cocked_die_under_reshake_needs_a_new_throw() -> None:
    feed = edit(VOID_COCKED, '"cocked_die":"void"', '"cocked_die":"reshake"')
    feed = edit(feed, '"type":"round_voided","reason":"die_cocked"', '"type":"round_closed"')
    # Bets stand and no dice followed the cocked die: nothing to settle on, nothing judged.
    assert derive(replay(feed)).expected == {}
    assert [f.code for f in findings(feed)] == ["outcome_missing"]


def test_a_voided_round_returns_every_stake() -> None:
    feed = edit(CLEAN, '"type":"round_closed"', '"type":"round_voided","reason":"shaker opened"')
    rnd = replay(feed)
    assert all(
        s.result == "void" and s.returned == rnd.bets[b].amount and s.won == 0
        for b, s in derive(rnd).expected.items()
    )
    # The table settled the bets as if the round had stood: every one is a mismatch.
    assert sorted((f.code, f.bet) for f in check_round(rnd, GAME)) == [
        ("settlement_mismatch", b) for b in ("b1", "b2", "b3", "b4")
    ]


def test_a_closed_round_without_dice_is_outcome_missing_and_judges_no_bet() -> None:
    [found] = findings(NO_DICE)
    assert (found.code, found.bet, found.round) == ("outcome_missing", None, "r5")
    assert derive(replay(NO_DICE)).expected == {}


def test_an_open_round_without_dice_is_incomplete_not_outcome_missing() -> None:
    feed = "\n".join(NO_DICE.strip().splitlines()[:-1])
    assert [f.code for f in findings(feed)] == ["round_incomplete"]


def test_replay_steps_cite_articles() -> None:
    steps = derive(replay(CLEAN)).steps
    assert steps[0].text == "dice 1-5-5: fish red, crab green ×2; total 11"
    assert [s.rule for s in steps[1:]] == [
        "FPC art. 5 a) [R], art. 6",
        "FPC art. 5 c) [R], art. 6",
        "FPC art. 5 j), art. 6",
        "FPC art. 5 e) [R], art. 6",
    ]
    assert steps[2].text.startswith("b2: figure crab (5) for 50.00: win")


# ---------------------------------------------------------------------------------------------
# Malformed lines are rejected at ingest, naming the field.


def bad_line(fields: str) -> Rejection:
    text = (
        '{"v":1,"table":"FPC-T","game":"FPC","round":"r9","seq":4,'
        '"at":"2026-11-21T20:00:00+08:00",' + fields + "}"
    )
    rejection = parse_line(text, 7)
    assert isinstance(rejection, Rejection)
    assert rejection.line == 7
    return rejection


@pytest.mark.parametrize(
    ("fields", "field", "code"),
    [
        ('"type":"dice_shown","dice":[1,2,7]', "dice.2", "invalid_value"),
        ('"type":"dice_shown","dice":[0,2,3]', "dice.0", "invalid_value"),
        ('"type":"dice_shown","dice":[1,2]', "dice.2", "missing_field"),
        ('"type":"dice_shown","dice":[1,2,3,4]', "dice", "invalid_value"),
        ('"type":"dice_shown","dice":[1,"2",3]', "dice.1", "invalid_value"),
        ('"type":"die_cocked","die":2', "die", "unknown_key"),
        (
            '"type":"bet_placed","bet":"b1","spot":{"kind":"figure","face":7},"amount":"10"',
            "spot.face",
            "invalid_value",
        ),
        (
            '"type":"bet_placed","bet":"b1","spot":{"kind":"one_colour","colour":"gold"},"amount":"10"',
            "spot.colour",
            "invalid_value",
        ),
        (
            '"type":"bet_placed","bet":"b1","spot":{"kind":"small","face":1},"amount":"10"',
            "spot.face",
            "unknown_key",
        ),
        ('"type":"bet_placed","bet":"b1","spot":{"kind":"lucky"},"amount":"10"', "spot", "invalid_value"),
        (
            '"type":"bet_placed","bet":"b1","spot":{"kind":"total","total":10},"amount":10',
            "amount",
            "bad_money",
        ),
        ('"type":"spin_result","number":3', "type", "unknown_type"),
    ],
    ids=[
        "die-7",
        "die-0",
        "two-dice",
        "four-dice",
        "die-as-string",
        "cocked-with-key",
        "face-7",
        "colour-gold",
        "small-with-face",
        "unknown-kind",
        "money-as-number",
        "roulette-event",
    ],
)
def test_a_malformed_line_is_rejected_naming_the_field(fields: str, field: str, code: str) -> None:
    rejection = bad_line(fields)
    assert (rejection.field, rejection.code) == (field, code)


@pytest.mark.parametrize("total", [3, 18])
def test_a_total_off_the_layout_is_rejected_naming_spot_total(total: int) -> None:
    rejection = bad_line(
        f'"type":"bet_placed","bet":"b1","spot":{{"kind":"total","total":{total}}},"amount":"10"'
    )
    assert (rejection.field, rejection.code) == ("spot.total", "invalid_value")


def test_every_spot_kind_round_trips_through_the_feed() -> None:
    spots = [
        '{"kind":"small"}',
        '{"kind":"big"}',
        '{"kind":"figure","face":1}',
        '{"kind":"one_colour","colour":"red"}',
        '{"kind":"two_colours","colour":"green"}',
        '{"kind":"three_colours","colour":"blue"}',
        '{"kind":"any_three_colour"}',
        '{"kind":"specific_triple","face":6}',
        '{"kind":"any_triple"}',
        '{"kind":"total","total":4}',
        '{"kind":"total","total":17}',
    ]
    for n, spot in enumerate(spots, start=1):
        text = (
            '{"v":1,"table":"FPC-T","game":"FPC","round":"r9","seq":3,'
            '"at":"2026-11-21T20:00:00+08:00","type":"bet_placed","bet":"b1","spot":'
            + spot
            + ',"amount":"10"}'
        )
        event = parse_line(text, n)
        assert not isinstance(event, Rejection), event
        assert event.model_dump(mode="json")["spot"] == json.loads(spot)


# ---------------------------------------------------------------------------------------------
# The shared example feed (FEED: every example verifies with no finding).


def example_rounds() -> list[list[FeedEvent]]:
    found = [d / "fpc.jsonl" for d in EXAMPLE_DIRS if (d / "fpc.jsonl").is_file()]
    assert found, f"no shared/examples/fpc.jsonl in {EXAMPLE_DIRS}"
    lines = found[0].read_text(encoding="utf-8").splitlines()
    events = []
    for n, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        event = parse_line(text, n)
        assert not isinstance(event, Rejection), event
        events.append(event)
    return [list(g) for _, g in groupby(events, key=lambda e: (e.table, e.round))]


def test_the_example_feed_has_no_findings() -> None:
    rounds = example_rounds()
    assert len(rounds) == 5
    for facts in rounds:
        rnd = Round.replay(facts)
        assert check_round(rnd, GAME) == [], rnd.round
        assert len(derive(rnd).expected) == len(rnd.bets) == 6
