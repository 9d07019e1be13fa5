"""Hand-written Super Pan 9 feeds: each verifies with exactly the right findings.

Every feed goes through the real parser and is judged as verify judges it: each round of the
table in order through the game's session, then the generic checks.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from ledger.codec.parse import Rejection, parse_line
from ledger.domain.findings import Finding
from ledger.domain.round import Round
from ledger.feed.envelope import FeedEvent
from ledger.games import GAMES
from ledger.games.super_pan9.round import derive
from ledger.games.super_pan9.rules import dealing_order, first_seat
from ledger.games.super_pan9.session import BankSession
from ledger.verify.checks import check_round

GAME = GAMES["SP9"]
Key = tuple[str, str | None, str | None]


class Feed:
    """Builds one table's rounds line by line."""

    def __init__(self, table: str = "SP9-T") -> None:
        self.table = table
        self.rounds: list[list[dict[str, Any]]] = []

    def round(
        self,
        rid: str,
        *,
        bank: tuple[int, str],
        hands: dict[int, str],
        bets: list[tuple[str, int, str] | tuple[str, int, str, int]],
        settled: dict[str, tuple[str, str, str, str]],
        layers: dict[str, tuple[str, str]],
        joins: tuple[tuple[str, str], ...] = (),
        dice: tuple[int, ...] = (1, 1, 1, 1),
        before: tuple[dict[str, Any], ...] = (),
        deal: list[int] | None = None,
        rulebook: dict[str, Any] | None = None,
        deck: str | None = None,
    ) -> None:
        lines: list[dict[str, Any]] = []

        def add(type_: str, **fields: Any) -> None:
            lines.append(
                {
                    "v": 1,
                    "table": self.table,
                    "game": "SP9",
                    "round": rid,
                    "seq": len(lines) + 1,
                    "at": f"2026-11-20T10:{len(self.rounds):02d}:{len(lines):02d}+08:00",
                    "type": type_,
                    **fields,
                }
            )

        add("round_opened", currency="HKD", **({"rulebook": rulebook} if rulebook else {}))
        for extra in before:
            add(extra["type"], **{k: v for k, v in extra.items() if k != "type"})
        add("bank_taken", seat=bank[0], capital=bank[1])
        for party, capital in joins:
            add("bank_joined", party=party, capital=capital)
        for bet in bets:
            add(
                "bet_placed",
                bet=bet[0],
                spot={"kind": "hand", "seat": bet[1]},
                amount=bet[2],
                **({"seat": bet[3]} if len(bet) == 4 else {}),
            )
        add("dice_thrown", dice=list(dice), valid=True)
        default_deck = "A" if len(self.rounds) % 2 == 0 else "B"
        add("deck_shuffled", decks=1, method="machine", deck=deck or default_deck)
        seats = sorted(hands)
        order = deal or dealing_order(
            first_seat(sum(dice), banker=bank[0], seats=seats), banker=bank[0], seats=seats
        )
        given = {s: iter(h.split()) for s, h in hands.items()}
        for seat in order:
            add("card_dealt", to=seat, card=next(given[seat]), face_up=False)
        for bet_id, (result, returned, won, commission) in settled.items():
            add("bet_settled", bet=bet_id, result=result, returned=returned, won=won, commission=commission)
        for party, (result, commission) in layers.items():
            add("bank_settled", party=party, result=result, commission=commission)
        add("round_closed")
        self.rounds.append(lines)

    def judge(self) -> list[Finding]:
        session = BankSession()
        found: list[Finding] = []
        for lines in self.rounds:
            events: list[FeedEvent] = []
            for n, line in enumerate(lines, start=1):
                event = parse_line(json.dumps(line), n)
                assert not isinstance(event, Rejection), (event, line)
                events.append(event)
            rnd = Round.replay(events)
            found += check_round(rnd, GAME, derivation=session.derive(rnd))
        return found


def keys(found: list[Finding]) -> list[Key]:
    return sorted(((f.code, f.round, f.bet) for f in found), key=lambda k: (k[0], k[1] or "", k[2] or ""))


# Banker seat 1 holds 7 (5S 2H); seat 4 has 9 and seat 2 has 8 (both win), seat 3 has 5 (loses).
# Dice 1-1-1-1 = 4 over 4 hands: seat 4 is dealt first, so settlement runs 4, 2, 3.
HANDS = {1: "5S 2H", 2: "8D QC", 3: "3C 2D", 4: "9C KD"}
BETS: list[tuple[str, int, str] | tuple[str, int, str, int]] = [
    ("b1", 2, "400"),
    ("b2", 4, "300"),
    ("b3", 3, "200"),
    ("b4", 2, "100"),
]


def exhausted(*, paid_all: bool = False) -> Feed:
    """K = 500. ``paid_all``: the table ignored the cap and paid every winner in full."""
    feed = Feed()
    b1, b4 = (("400", "20"), ("100", "5")) if paid_all else (("200", "10"), ("0", "0"))
    feed.round(
        "r1",
        bank=(1, "500"),
        hands=HANDS,
        bets=BETS,
        settled={
            "b2": ("win", "300", "300", "15"),
            "b1": ("win", "400", *b1),
            "b4": ("win", "100", *b4),
            "b3": ("lose", "0", "0", "0"),
        },
        layers={"banker": ("-500" if paid_all else "-300", "0")},
    )
    return feed


def test_a_bank_that_runs_out_mid_settlement_pays_in_order_and_returns_the_rest() -> None:
    """K = 500: b2 paid 300 (W −300), b1 paid 200 of 400 (W −500), b4 paid nothing, then the
    loser b3 is collected in full (W −300)."""
    assert exhausted().judge() == []
    derivation = derive(_round(exhausted(), 0))
    assert {b: (s.result, s.returned, s.won, s.commission) for b, s in derivation.expected.items()} == {
        "b2": ("win", 300, 300, Decimal("15.00")),
        "b1": ("win", 400, 200, Decimal("10.00")),
        "b4": ("win", 100, 0, 0),
        "b3": ("lose", 0, 0, 0),
    }
    assert any("W = -500" in s.text for s in derivation.steps)


def test_paying_past_the_capital_is_a_mismatch_and_a_bank_capital_breach() -> None:
    found = exhausted(paid_all=True).judge()
    assert keys(found) == [
        ("bank_capital_exceeded", "r1", None),
        ("commission_mismatch", "r1", "b1"),
        ("commission_mismatch", "r1", "b4"),
        ("settlement_mismatch", "r1", None),
        ("settlement_mismatch", "r1", "b1"),
        ("settlement_mismatch", "r1", "b4"),
    ]
    layer = next(f for f in found if f.code == "settlement_mismatch" and f.bet is None)
    assert layer.extra == {"party": "banker"} and layer.expected == {"result": "-300", "commission": "0"}
    cap = next(f for f in found if f.code == "bank_capital_exceeded")
    assert cap.recorded == {"bank_result": "-600"} and cap.expected == {"capacity": "500"}
    assert cap.rule is not None and cap.rule.startswith("SP9 art. 5(3)")


def cobanked(casino_commission: str = "0", seat5: str = "200") -> Feed:
    """Banker 300 + seat 5 (200) + the casino (1000): every seat loses, W = 1000."""
    feed = Feed()
    hands = {1: "9S KH", 2: "8D QC", 3: "3C 2D", 4: "7C KD"}
    feed.round(
        "r1",
        bank=(1, "300"),
        joins=(("casino", "1000"), ("seat:5", "200")),
        hands=hands,
        bets=[("b1", 2, "400"), ("b2", 4, "300"), ("b3", 3, "300")],
        settled={"b2": ("lose", "0", "0", "0"), "b1": ("lose", "0", "0", "0"), "b3": ("lose", "0", "0", "0")},
        layers={"banker": ("300", "15"), "seat:5": (seat5, "10"), "casino": ("500", casino_commission)},
    )
    return feed


def test_a_round_reports_its_own_findings_then_the_bank_then_the_run_then_the_bets() -> None:
    """The order of a round's findings is part of verify's output: the round's own (a bet on
    the banker's seat), the bank-layer comparison, what needs the earlier round (the same
    deck twice running), then the bet comparisons."""
    feed = exhausted()
    feed.round(
        "r2",
        bank=(1, "500"),
        hands=HANDS,
        bets=[*BETS, ("b5", 1, "100")],
        deck="A",
        settled={
            "b2": ("win", "300", "300", "16"),
            "b1": ("win", "400", "200", "10"),
            "b4": ("win", "100", "0", "0"),
            "b3": ("lose", "0", "0", "0"),
            "b5": ("void", "100", "0", "0"),
        },
        layers={"banker": ("-299", "0")},
    )
    assert [(f.code, f.round, f.bet) for f in feed.judge()] == [
        ("invalid_bet", "r2", "b5"),
        ("settlement_mismatch", "r2", None),
        ("invalid_deal", "r2", None),
        ("commission_mismatch", "r2", "b2"),
    ]


def test_a_co_banked_round_fills_the_banker_then_the_player_then_the_casino() -> None:
    assert cobanked().judge() == []
    derivation = derive(_round(cobanked(), 0))
    assert [(c.party, c.due, c.recorded) for c in derivation.commissions] == [
        ("banker", Decimal("15.00"), Decimal("15")),
        ("seat:5", Decimal("10.00"), Decimal("10")),
        ("casino", Decimal(0), Decimal(0)),
    ]


def test_a_wrong_layer_share_and_a_commission_on_the_casino_are_each_one_finding() -> None:
    found = cobanked(casino_commission="25", seat5="250").judge()
    assert [(f.code, f.bet, f.extra) for f in sorted(found, key=lambda f: f.code)] == [
        ("bank_capital_exceeded", None, {"party": "seat:5"}),
        ("commission_mismatch", None, {"party": "casino"}),
        ("settlement_mismatch", None, {"party": "seat:5"}),
    ]


def test_a_wrong_commission_on_a_winning_bet() -> None:
    feed = Feed()
    feed.round(
        "r1",
        bank=(1, "5000"),
        hands=HANDS,
        bets=BETS,
        settled={
            "b2": ("win", "300", "300", "15"),
            "b1": ("win", "400", "400", "40"),
            "b4": ("win", "100", "100", "5"),
            "b3": ("lose", "0", "0", "0"),
        },
        layers={"banker": ("-600", "0")},
    )
    found = feed.judge()
    assert keys(found) == [("commission_mismatch", "r1", "b1")]
    assert found[0].expected == {"result": "win", "returned": "400", "won": "400", "commission": "20.00"}


def test_a_misdealt_order_is_an_invalid_deal_and_the_round_is_still_settled() -> None:
    feed = Feed()
    feed.round(
        "r1",
        bank=(1, "5000"),
        hands=HANDS,
        bets=BETS,
        deal=[1, 1, 2, 2, 3, 3, 4, 4],
        settled={
            "b2": ("win", "300", "300", "15"),
            "b1": ("win", "400", "400", "20"),
            "b4": ("win", "100", "100", "5"),
            "b3": ("lose", "0", "0", "0"),
        },
        layers={"banker": ("-600", "0")},
    )
    found = feed.judge()
    assert keys(found) == [("invalid_deal", "r1", None)]
    assert "4-4-1-1-2-2-3-3" in found[0].message and found[0].rule == "SP9 art. 2(3)"


def test_a_cocked_throw_is_thrown_again_and_a_bet_after_the_first_throw_is_late() -> None:
    feed = Feed()
    feed.round(
        "r1",
        bank=(1, "5000"),
        hands=HANDS,
        bets=BETS,
        before=({"type": "dice_adjustment_declared", "points": 4},),
        settled={
            "b2": ("win", "300", "300", "15"),
            "b1": ("win", "400", "400", "20"),
            "b4": ("win", "100", "100", "5"),
            "b3": ("lose", "0", "0", "0"),
        },
        layers={"banker": ("-600", "0")},
        dice=(2, 2, 2, 2),
    )
    lines = feed.rounds[0]
    # dice 2-2-2-2 + 4 = 12 over 4 hands: ((12 - 1) mod 4) + 1 = 4, as with 1-1-1-1.
    throw = next(i for i, ln in enumerate(lines) if ln["type"] == "dice_thrown")
    cocked = {**lines[throw], "dice": [6, 6, 6, 1], "valid": False}
    late = {**lines[throw - 1], "bet": "b9", "spot": {"kind": "hand", "seat": 3}, "amount": "50"}
    lines[throw:throw] = [cocked]
    settled = next(i for i, ln in enumerate(lines) if ln["type"] == "deck_shuffled")
    lines[settled:settled] = [{**late, "at": lines[settled - 1]["at"]}]  # late, in time order
    bank = next(i for i, ln in enumerate(lines) if ln["type"] == "bank_settled")
    lines[bank:bank] = [
        {**lines[bank - 1], "bet": "b9", "result": "lose", "returned": "0", "won": "0", "commission": "0"}
    ]
    lines[bank + 1]["result"] = "-550"
    for n, ln in enumerate(lines, start=1):
        ln["seq"] = n
    assert keys(feed.judge()) == [("bet_after_close", "r1", "b9")]


def _held(rid: str, feed: Feed, capital: str, *, extend: tuple[int, ...] | None = None) -> None:
    """Every player seat loses 100: the banker's share is 300, commission 15."""
    hands = {1: "9S KH", 2: "8D QC", 3: "3C 2D", 4: "7C KD"}
    before = ({"type": "bank_extended", "consents": list(extend)},) if extend else ()
    feed.round(
        rid,
        bank=(1, capital),
        hands=hands,
        bets=[("b1", 2, "100"), ("b2", 3, "100"), ("b3", 4, "100")],
        settled={b: ("lose", "0", "0", "0") for b in ("b1", "b2", "b3")},
        layers={"banker": ("300", "15")},
        before=before,
    )


def test_a_bank_held_three_rounds_needs_every_other_seats_consent() -> None:
    feed = Feed()
    _held("r1", feed, "1000")
    _held("r2", feed, "1285")
    _held("r3", feed, "1570")
    found = feed.judge()
    assert keys(found) == [("bank_rule_broken", "r3", None)]
    assert found[0].rule == "SP9 art. 5(1); RULES §8.1 S12" and "3rd" in found[0].message
    partial, full = Feed(), Feed()
    for f, consents in ((partial, (2, 3)), (full, (2, 3, 4))):
        _held("r1", f, "1000")
        _held("r2", f, "1285")
        _held("r3", f, "1570", extend=consents)
    assert keys(partial.judge()) == [("bank_rule_broken", "r3", None)]
    assert "seat 4" in partial.judge()[0].message
    assert full.judge() == []


def test_capital_reduced_on_the_second_round_breaks_art_5_4() -> None:
    """Round 1 wins 300 less 15 commission on 1000: round 2 must post at least 1285."""
    feed = Feed()
    _held("r1", feed, "1000")
    _held("r2", feed, "1284.99")
    found = feed.judge()
    assert keys(found) == [("bank_rule_broken", "r2", None)]
    assert found[0].rule is not None and found[0].rule.startswith("SP9 art. 5(4)")
    grown = Feed()
    _held("r1", grown, "1000")
    _held("r2", grown, "2000")  # topping up is allowed
    assert grown.judge() == []


def test_a_co_banker_who_bets_is_an_invalid_bet() -> None:
    feed = Feed()
    hands = {1: "9S KH", 2: "8D QC", 3: "3C 2D", 4: "7C KD"}
    feed.round(
        "r1",
        bank=(1, "1000"),
        joins=(("seat:5", "500"),),
        hands=hands,
        bets=[("b1", 2, "100", 2), ("b2", 3, "100", 5), ("b3", 4, "100", 4)],
        settled={b: ("lose", "0", "0", "0") for b in ("b1", "b2", "b3")},
        layers={"banker": ("300", "15"), "seat:5": ("0", "0")},
    )
    found = feed.judge()
    assert keys(found) == [("invalid_bet", "r1", "b2")]
    assert found[0].rule == "SP9 art. 5(5)"


def test_a_refused_bank_may_pass_only_to_a_seat_that_bet_in_the_previous_round() -> None:
    hands = {2: "9S KH", 3: "8D QC", 4: "3C 2D", 1: "7C KD"}

    def second(feed: Feed) -> None:
        feed.round(
            "r2",
            bank=(2, "1000"),
            hands=hands,
            bets=[("b1", 3, "100"), ("b2", 4, "100"), ("b3", 1, "100")],
            settled={b: ("lose", "0", "0", "0") for b in ("b1", "b2", "b3")},
            layers={"banker": ("300", "15")},
            before=({"type": "bank_refused", "seat": 5},),
        )

    ok, bad = Feed(), Feed()
    _held("r1", ok, "1000")  # seats 2, 3, 4 bet (bet_placed.seat absent: the seat bet on)
    second(ok)
    assert ok.judge() == []
    bad.round(
        "r1",
        bank=(1, "1000"),
        hands={1: "9S KH", 3: "8D QC", 4: "3C 2D"},
        bets=[("b1", 3, "100"), ("b2", 4, "100")],
        settled={b: ("lose", "0", "0", "0") for b in ("b1", "b2")},
        layers={"banker": ("200", "10")},
    )
    second(bad)
    found = bad.judge()
    assert keys(found) == [("bank_rule_broken", "r2", None)]
    assert found[0].rule == "SP9 art. 5(2)"


def test_the_same_deck_twice_running_is_an_invalid_deal() -> None:
    feed = Feed()
    _held("r1", feed, "1000")
    _held("r2", feed, "1285")
    feed.rounds[1] = [{**ln, "deck": "A"} if ln["type"] == "deck_shuffled" else ln for ln in feed.rounds[1]]
    assert keys(feed.judge()) == [("invalid_deal", "r2", None)]


def test_the_example_feed_verifies_clean(examples: Any) -> None:
    feed = Feed()
    lines = [json.loads(x) for x in (examples / "sp9.jsonl").read_text().splitlines() if x]
    feed.rounds = [[ln for ln in lines if ln["round"] == r] for r in ("000001", "000002")]
    assert feed.judge() == []


def _round(feed: Feed, i: int) -> Round:
    events: list[FeedEvent] = []
    for n, line in enumerate(feed.rounds[i], start=1):
        event = parse_line(json.dumps(line), n)
        assert not isinstance(event, Rejection)
        events.append(event)
    return Round.replay(events)
