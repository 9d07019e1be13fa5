"""Hand-written STUD feeds, ingested and verified: exactly the right findings, bet by bet, and
the jackpot view's balance after them (RULES §6, FEED §7).

The story, in store order, on linked pool PJ-T (seed 50000, bet 10, 20 % contributed):

- T1/000001: pair of 9s against the dealer's pair of 9s, decided by the pair's best suit
  (♠ > ♥); four 8s, raise prize 20 × 200 = 4000 capped at the house maximum 3000; the four of
  a kind wins the fixed 2000 from the house. Pool 50000 + 2 × 2 = 50004.
- T1/000002: the dealer holds K-Q high, does not qualify: antes paid 1 to 1, raises returned.
- T2/000001: a straight flush and two royal flushes on another table, same pool. Pool 50004 +
  6 = 50010; the straight flush gets max(5000, 10 % of 50010) = 5001; the royals share
  max(50000, 45009) = 50000: 25000 each, the pool funds 25000 + 20009 and the house 4991;
  nothing is left, the pool resets to 50000.
- T1/000003: two cards exposed, round voided: antes returned, the jackpot bet carried.
- T1/000004: the carried jackpot bet is restated; the hand folds, the bet is lost and counted
  once: pool 50002.
- T1/000005: a raise of 3 × ante (invalid_bet, settled as played) and a jackpot bet of 20
  (invalid_bet, refused and returned): pool unchanged.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest

from ledger.services.ingest import Ingestor, numbered_lines
from ledger.services.replay import replay_round
from ledger.storage.store import LedgerApp
from ledger.verify.engine import verify_store
from projections.base import fold_store
from projections.jackpot import JackpotView, conservation_gap

# the game's feeds judge alike on both stores; their PostgreSQL cases run in the slow tier
pytestmark = pytest.mark.slow_postgres

RULEBOOK: dict[str, Any] = {
    "jackpot": {
        "pool": "PJ-T",
        "bet_amount": "10",
        "contribution_rate": "0.20",
        "seed": "50000",
        "fixed": {
            "flush": "200",
            "full_house": "400",
            "four_of_a_kind": "2000",
            "straight_flush": "5000",
            "royal_flush": "50000",
        },
    },
    "stud": {"max_payout": "3000"},
}


class Feed:
    """Feed lines in time order across tables."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.clock = datetime(2026, 11, 20, 20, 0, tzinfo=timezone(timedelta(hours=8)))

    def round(self, table: str, rnd: str, rulebook: dict[str, Any] | None = None) -> Rnd:
        r = Rnd(self, table, rnd)
        r.add("round_opened", currency="HKD", rulebook=rulebook or RULEBOOK)
        return r


class Rnd:
    """One round's lines: the table's own record, written out by hand."""

    def __init__(self, feed: Feed, table: str, rnd: str) -> None:
        self.feed, self.table, self.rnd, self.seq = feed, table, rnd, 0

    def add(self, type_: str, **fields: Any) -> Rnd:
        self.seq += 1
        self.feed.clock += timedelta(seconds=3)
        self.feed.lines.append(
            {
                "v": 1,
                "table": self.table,
                "game": "STUD",
                "round": self.rnd,
                "seq": self.seq,
                "at": self.feed.clock.isoformat(),
                "type": type_,
                **fields,
            }
        )
        return self

    def bet(self, bet: str, kind: str, seat: int, amount: str) -> Rnd:
        return self.add("bet_placed", bet=bet, spot={"kind": kind, "seat": seat}, amount=amount)

    def deal(self, hands: dict[int, str], dealer: str, method: str = "machine") -> Rnd:
        self.add("betting_closed").add("deck_shuffled", decks=1, method=method)
        cards = {s: h.split() for s, h in hands.items()} | {"dealer": dealer.split()}
        seats: list[int | str] = [*sorted(hands), "dealer"]
        order = (
            [(s, i) for s in seats for i in range(5)]
            if method == "machine"
            else [(s, i) for i in range(5) for s in seats]
        )
        for s, i in order:
            self.add("card_dealt", to=s, card=cards[s][i], face_up=s == "dealer" and i == 4)
        return self

    def settle(self, bet: str, result: str, returned: str = "0", won: str = "0") -> Rnd:
        return self.add("bet_settled", bet=bet, result=result, returned=returned, won=won, commission="0")


def story(**spoil: str) -> list[dict[str, Any]]:
    f = Feed()
    (
        f.round("T1", "000001")
        .bet("a1", "ante", 1, "100")
        .bet("j1", "jackpot", 1, "10")
        .bet("a2", "ante", 2, "100")
        .bet("j2", "jackpot", 2, "10")
        .deal({1: "9S 9D KC 7H 2D", 2: "8S 8H 8C 8D 3S"}, "9H 9C KD 7S 2C")
        .bet("r1", "raise", 1, "200")
        .bet("r2", "raise", 2, "200")
        .add("jackpot_paid", bet="j2", hand="four_of_a_kind", amount=spoil.get("j2_paid", "2000"))
        .settle("a1", "win", "100", "100")
        .settle("r1", "win", "200", "200")
        .settle("a2", "win", "100", "100")
        .settle("r2", "win", "200", spoil.get("r2_won", "3000"))
        .settle("j1", "lose")
        .settle("j2", "win", "0", "2000")
        .add("round_closed")
    )
    (
        f.round("T1", "000002")
        .bet("a1", "ante", 1, "100")
        .bet("a3", "ante", 3, "50")
        .deal({1: "AS KD 7C 4H 2S", 3: "5C 5D 9S JH QD"}, "KS QH 9D 6C 3H", method="hand")
        .bet("r1", "raise", 1, "200")
        .bet("r3", "raise", 3, "100")
        .settle("a1", "win", "100", "100")
        .settle("r1", "push", "200")
        .settle("a3", "win", "50", "50")
        .settle("r3", "push", "100")
        .add("round_closed")
    )
    t2 = (
        f.round("T2", "000001")
        .bet("a1", "ante", 1, "100")
        .bet("j1", "jackpot", 1, "10")
        .bet("a2", "ante", 2, "100")
        .bet("j2", "jackpot", 2, "10")
        .bet("a3", "ante", 3, "100")
        .bet("j3", "jackpot", 3, "10")
        .deal({1: "9C 8C 7C 6C 5C", 2: "AS KS QS JS TS", 3: "AH KH QH JH TH"}, "2D 3D 4S 7D 9H")
        .bet("r1", "raise", 1, "200")
        .bet("r2", "raise", 2, "200")
        .bet("r3", "raise", 3, "200")
        .add("jackpot_paid", bet="j1", hand="straight_flush", amount="5001.00")
        .add("jackpot_paid", bet="j2", hand="royal_flush", amount="25000")
    )
    if "no_j3_paid" not in spoil:
        t2.add("jackpot_paid", bet="j3", hand="royal_flush", amount="25000")
    for seat in (1, 2, 3):
        t2.settle(f"a{seat}", "win", "100", "100").settle(f"r{seat}", "push", "200")
    (
        t2.settle("j1", "win", "0", "5001")
        .settle("j2", "win", "0", "25000")
        .settle("j3", "win", "0", "25000")
        .add("round_closed")
    )
    (
        f.round("T1", "000003")
        .bet("a1", "ante", 1, "100")
        .bet("j1", "jackpot", 1, "10")
        .bet("a2", "ante", 2, "200")
        .add("betting_closed")
        .add("deck_shuffled", decks=1, method="hand")
        .add("card_dealt", to=1, card="4S", face_up=False)
        .add("card_exposed", to=1, card="4S")
        .add("card_dealt", to=2, card="JD", face_up=False)
        .add("card_exposed", to=2, card="JD")
        .settle("a1", "void", "100")
        .settle("j1", "carry")
        .settle("a2", "void", "200")
        .add("round_voided", reason="two cards exposed while dealing")
    )
    (
        f.round("T1", "000004")
        .add("jackpot_carried", bet="j1", from_round="000003", seat=1, amount="10")
        .bet("a1", "ante", 1, "100")
        .deal({1: "4S 9D 2C JH 6H"}, "AD KC QS 8S 3C")
        .add("hand_folded", seat=1)
        .settle("a1", "lose")
        .settle("j1", "lose")
        .add("round_closed")
    )
    (
        f.round("T1", "000005")
        .bet("a1", "ante", 1, "100")
        .bet("a2", "ante", 2, "100")
        .bet("j2", "jackpot", 2, "20")
        .deal({1: "QS QD 4C 5H 9D", 2: "2S 3H 7C 8D TC"}, "AS KS 6D 3C 2D")
        .bet("r1", "raise", 1, "300")
        .add("hand_folded", seat=2)
        .settle("a1", "win", "100", "100")
        .settle("r1", "win", "300", "300")
        .settle("a2", "lose")
        .settle("j2", "void", "20")
        .add("round_closed")
    )
    return f.lines


def load(app: LedgerApp, lines: list[dict[str, Any]]) -> None:
    report = Ingestor(app).ingest(numbered_lines([json.dumps(x) for x in lines]))
    assert not report.rejected, report.rejected


def findings(app: LedgerApp) -> list[tuple[str, str | None, str | None, str | None]]:
    return sorted((f.code, f.table, f.round, f.bet) for f in verify_store(app).findings)


RIGHT = [("invalid_bet", "T1", "000005", "j2"), ("invalid_bet", "T1", "000005", "r1")]


def test_the_story_verifies_with_exactly_the_two_wrong_bets(app: LedgerApp) -> None:
    load(app, story())
    assert findings(app) == RIGHT


def test_the_jackpot_view_after_the_story(app: LedgerApp) -> None:
    load(app, story())
    rows = fold_store(app, JackpotView()).rows
    meters = rows["pool:PJ-T"]
    assert Decimal(meters["balance"]) == Decimal("50002")
    assert Decimal(meters["contributions"]) == Decimal("12")  # 2 + 6 + 2 + 2 (the carried bet once)
    assert Decimal(meters["pool_awards"]) == Decimal("50010")  # 5001 + 25000 + 20009
    assert Decimal(meters["house_funded"]) == Decimal("6991")  # 4K 2000 + royal excess 4991
    assert (Decimal(meters["resets"]), meters["reset_count"]) == (Decimal("50000"), 1)
    assert meters["awards"]["royal_flush"]["count"] == 2
    assert Decimal(meters["awards"]["royal_flush"]["from_house"]) == Decimal("4991")
    assert conservation_gap(meters) == 0
    history = [r for k, r in rows.items() if k.startswith("pool:PJ-T:history:")]
    assert [(r["table"], r["round"], r["end"]) for r in history] == [
        ("T1", "000001", "50004.00"),
        ("T2", "000001", "50000"),
        ("T1", "000004", "50002.00"),
    ]


@pytest.mark.parametrize(
    ("spoil", "found"),
    [
        ({"j2_paid": "2500"}, ("jackpot_mismatch", "T1", "000001", "j2")),
        ({"r2_won": "4000"}, ("settlement_mismatch", "T1", "000001", "r2")),
        ({"no_j3_paid": "1"}, ("jackpot_mismatch", "T2", "000001", "j3")),
    ],
    ids=["wrong award", "uncapped four of a kind", "missing award"],
)
def test_one_spoiled_line_is_one_finding(
    app: LedgerApp, spoil: dict[str, str], found: tuple[str, ...]
) -> None:
    load(app, story(**spoil))
    assert findings(app) == sorted([*RIGHT, found])


def test_replay_shows_categories_decisions_and_the_pool(app: LedgerApp) -> None:
    load(app, story())
    first = replay_round(app, "T1", "000001")
    assert first is not None
    steps = [s.text for s in first.derivation.steps]
    assert any(
        "place 1 against the dealer: player higher — both one pair, same ranks; the pair "
        "decides by its best suit: ♠ beats ♥" in s
        for s in steps
    ), steps
    assert any("four of a kind pays 20 to 1, 4,000.00 capped at 3,000.00" in s for s in steps), steps
    assert any(s.startswith("dealer one pair: qualifies") for s in steps), steps
    hits = replay_round(app, "T2", "000001")
    assert hits is not None
    text = "\n".join(s.text for s in hits.derivation.steps)
    assert (
        "jackpot pool PJ-T before the round: 50,004.00; 3 settled jackpot bets contribute "
        "6.00 → 50,010.00" in text
    )
    assert "royal flush: the fixed 50,000.00, shared by 2 royal flushes (25,000.00 each" in text
    assert "the pool funds 20,009.00, the house 4,991.00" in text
    assert "reset to the seed 50,000.00" in text
    assert "jackpot pool PJ-T after the round: 50,000.00" in text
    assert "does not qualify" in text
