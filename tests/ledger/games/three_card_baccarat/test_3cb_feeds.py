"""Hand-written 3CB feeds, ingested into a real store and verified: exactly the right findings.

Each feed is written in the notation below; every test asserts the
complete list of findings as ``(code, round, bet)``, so a missing and an extra finding both fail.
Hands are annotated with their level (3CB annex, RULES §3.5).

The notation: one command per line; ``round ID`` starts a round on table ``3CB-T1``::

    round 000001
    open                        round_opened (HKD); "open {json}" adds a rulebook
    carried b1 000000 hand:1 100   bet_carried (bet, from_round, spot, amount)
    raise b1 150                bet_increased
    bet b1 hand:1 100           bet_placed; spots hand:S tie:S odd even three_figures points:N
    close                       betting_closed
    shuffle 1 [35]              deck_shuffled (decks, machine) [marker_from_end]
    burn 4C | burn              card_burned (face read or not)
    deal 1:6H 2:4H banker:KH …  card_dealt each; face_up as the rules want, "^" flips it
    correct 6H 2                deal_corrected
    cancel                      cards_cancelled
    shoe_closed REASON          shoe_closed
    settle b1 lose|carry        bet_settled, all "0"
    settle b1 win R W C         bet_settled (returned, won, commission); also void R / push R
    end                         round_closed
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from ledger.codec.parse import Rejection, parse_line
from ledger.domain.findings import Finding
from ledger.domain.round import Round
from ledger.feed.envelope import FeedEvent
from ledger.games.three_card_baccarat.deal import Shoe, read_deal
from ledger.games.three_card_baccarat.round import derive
from ledger.services.ingest import Ingestor, ingest_file, numbered_lines
from ledger.services.replay import replay_round
from ledger.storage.store import LedgerApp
from ledger.verify.engine import verify_store

# the game's feeds judge alike on both stores; their PostgreSQL cases run in the slow tier
pytestmark = pytest.mark.slow_postgres

TABLE = "3CB-T1"
START = datetime(2026, 11, 21, 20, 0, tzinfo=timezone(timedelta(hours=8)))

Key = tuple[str, str | None, str | None]
"""A finding as tests compare it: (code, round, bet)."""


def spot(text: str) -> dict[str, Any]:
    kind, _, arg = text.partition(":")
    if kind in ("hand", "tie"):
        return {"kind": kind, "seat": int(arg)}
    if kind == "points":
        return {"kind": kind, "points": int(arg)}
    return {"kind": kind}


def _settle(words: list[str]) -> dict[str, Any]:
    bet, result, *money = words
    returned, won, commission = [*money, "0", "0", "0"][:3]
    return {"bet": bet, "result": result, "returned": returned, "won": won, "commission": commission}


def _deal(words: list[str], dealt: dict[str, int]) -> list[dict[str, Any]]:
    out = []
    for word in words:
        flip = word.endswith("^")
        to, _, card = word.rstrip("^").partition(":")
        dealt[to] = dealt.get(to, 0) + 1
        face_up = to == "banker" or dealt[to] < 3
        out.append(
            {
                "type": "card_dealt",
                "to": to if to == "banker" else int(to),
                "card": card,
                "face_up": face_up != flip,
            }
        )
    return out


def feed_lines(text: str, table: str = TABLE) -> list[dict[str, Any]]:
    """The feed lines (dicts) of the notation above."""
    lines: list[dict[str, Any]] = []
    round_id = ""
    dealt: dict[str, int] = {}
    clock = START
    for raw in text.strip().splitlines():
        if not raw.strip():
            continue
        head, *words = raw.split()
        events: list[dict[str, Any]]
        if head == "round":
            round_id, dealt = words[0], {}
            continue
        if head == "open":
            events = [{"type": "round_opened", "currency": "HKD"}]
            if words:
                events[0]["rulebook"] = json.loads(" ".join(words))
        elif head == "carried":
            events = [
                {
                    "type": "bet_carried",
                    "bet": words[0],
                    "from_round": words[1],
                    "spot": spot(words[2]),
                    "amount": words[3],
                }
            ]
        elif head == "raise":
            events = [{"type": "bet_increased", "bet": words[0], "amount": words[1]}]
        elif head == "bet":
            events = [{"type": "bet_placed", "bet": words[0], "spot": spot(words[1]), "amount": words[2]}]
        elif head == "close":
            events = [{"type": "betting_closed"}]
        elif head == "shuffle":
            events = [{"type": "deck_shuffled", "decks": int(words[0]), "method": "machine"}]
            if len(words) > 1:
                events[0]["marker_from_end"] = int(words[1])
        elif head == "burn":
            events = [{"type": "card_burned", **({"card": words[0]} if words else {})}]
        elif head == "deal":
            events = _deal(words, dealt)
        elif head == "correct":
            events = [
                {
                    "type": "deal_corrected",
                    "card": words[0],
                    "to": words[1] if words[1] == "banker" else int(words[1]),
                }
            ]
        elif head == "cancel":
            events, dealt = [{"type": "cards_cancelled"}], {}
        elif head == "shoe_closed":
            events = [{"type": "shoe_closed", "reason": " ".join(words)}]
        elif head == "settle":
            events = [{"type": "bet_settled", **_settle(words)}]
        elif head == "end":
            events = [{"type": "round_closed"}]
        elif head == "voided":
            events = [{"type": "round_voided", "reason": " ".join(words)}]
        else:
            raise ValueError(f"unknown notation {raw!r}")
        for event in events:
            seq = sum(1 for line in lines if line["round"] == round_id) + 1
            clock += timedelta(seconds=3)
            lines.append(
                {
                    "v": 1,
                    "table": table,
                    "game": "3CB",
                    "round": round_id,
                    "seq": seq,
                    "at": clock.isoformat(),
                    **event,
                }
            )
    return lines


def jsonl(text: str) -> str:
    """The notation as a JSON Lines feed."""
    return "".join(json.dumps(line) + "\n" for line in feed_lines(text))


def keys(findings: list[Finding]) -> list[Key]:
    """The error findings as sorted keys (information, such as a carry still in play at the end
    of the log, is asserted where a test is about it)."""
    return sorted((f.code, f.round, f.bet) for f in findings if f.severity == "error")


Verifier = Callable[[str], list[Finding]]


@pytest.fixture
def verify_feed(app: LedgerApp) -> Verifier:
    """Ingest a feed in the notation into the real store (every line must be stored), verify
    the store and return every finding."""

    def run(text: str) -> list[Finding]:
        report = Ingestor(app).ingest(numbered_lines(io.StringIO(jsonl(text))))
        assert report.rejected == [], report.rejected
        return verify_store(app).findings

    return run


SHOE_ROUND_1 = """
round 000001
open
bet b1 hand:1 100
bet b2 hand:2 100
bet b3 tie:1 10
bet b4 odd 50
close
shuffle 6 35
burn 2D
burn 3D
burn 4D
burn 5D
burn 6D
burn 7D
deal 1:QS 2:2C banker:KH 1:4D 2:3C banker:TH 1:5D 2:4C banker:9C
"""
"""A 6-deck shoe's first round: seat 1 QS 4D 5D and the banker KH TH 9C are both 9 with one
figure (level 3), a tie; seat 2 2C 3C 4C is 9 with no figure (level 4)."""

TIE_SETTLED = """
settle b1 carry
settle b2 lose
settle b3 win 10 200 0
settle b4 win 50 50 2.50
end
"""

ROUND_2 = """
round 000002
open
carried b1 000001 hand:1 100
raise b1 200
bet c1 hand:2 100
close
burn 8D
deal 1:JS 2:AS banker:QH 1:QD 2:AH banker:JC 1:8S 2:AC banker:8H
settle b1 carry
settle c1 lose
end
"""
"""Seat 1 JS QD 8S and the banker QH JC 8H are both 8 with two figures (level 5): b1, raised
to 200, ties again; seat 2 AS AH AC is 3 with no figure (level 22)."""

ROUND_3 = """
round 000003
open
carried b1 000002 hand:1 200
close
burn 9D
deal 1:KS 2:5S banker:2H 1:KD 2:5H banker:3H 1:7S 2:TS banker:TD
settle b1 win 200 200 10
end
"""
"""Seat 1 KS KD 7S is 7 with two figures (level 8), the banker 2H 3H TD 5 with no figure
(level 16): b1 wins on its stake in play, 200, less 5%."""


def rounds_of(text: str) -> dict[str, Round]:
    out: dict[str, list[FeedEvent]] = {}
    for no, line in enumerate(feed_lines(text), start=1):
        event = parse_line(json.dumps(line), no)
        assert not isinstance(event, Rejection), event
        out.setdefault(line["round"], []).append(event)
    return {rid: Round.replay(facts) for rid, facts in out.items()}


# --- Carry-over (RULES §3.7) ----------------------------------------------------------------


def test_a_tie_carried_over_two_rounds_verifies_clean(verify_feed: Verifier, app: LedgerApp) -> None:
    assert keys(verify_feed(SHOE_ROUND_1 + TIE_SETTLED + ROUND_2 + ROUND_3)) == []
    replayed = replay_round(app, "3CB-T1", "000003")
    assert replayed is not None
    due = replayed.derivation.expected["b1"]
    assert due.as_dict() == {"result": "win", "returned": "200", "won": "200", "commission": "10.00"}
    steps = [s.text for s in replayed.derivation.steps]
    assert "b1 hand 1 carried from round 000002: stake 200.00" in steps
    second = replay_round(app, "3CB-T1", "000002")
    assert second is not None and second.derivation.expected["b1"].result == "carry"


def test_a_carried_bet_paid_in_the_round_it_tied_is_a_settlement_mismatch(verify_feed: Verifier) -> None:
    paid = TIE_SETTLED.replace("settle b1 carry", "settle b1 win 100 100 5")
    round_2 = """
round 000002
open
bet c1 hand:2 100
close
burn 8D
deal 1:JS 2:AS banker:QH 1:QD 2:AH banker:JC 1:8S 2:AC banker:8H
settle c1 lose
end
"""
    findings = verify_feed(SHOE_ROUND_1 + paid + round_2)
    # Paying it also took a commission that was not due: both fields are reported.
    assert keys(findings) == [
        ("commission_mismatch", "000001", "b1"),
        ("settlement_mismatch", "000001", "b1"),
    ]
    mismatch = next(f for f in findings if f.code == "settlement_mismatch")
    assert mismatch.expected == {"result": "carry", "returned": "0", "won": "0", "commission": "0"}
    assert mismatch.rule == "3CB art. 7(2)"


def test_a_carried_bet_that_vanished_is_a_carry_mismatch(verify_feed: Verifier) -> None:
    round_2 = """
round 000002
open
bet c1 hand:2 100
close
burn 8D
deal 1:JS 2:AS banker:QH 1:QD 2:AH banker:JC 1:8S 2:AC banker:8H
settle c1 lose
end
"""
    findings = verify_feed(SHOE_ROUND_1 + TIE_SETTLED + round_2)
    assert keys(findings) == [("carry_mismatch", "000002", "b1")]
    assert "vanished" in findings[0].message


def test_a_carried_bet_restated_lower_is_a_carry_mismatch_and_settles_on_what_is_in_play(
    verify_feed: Verifier,
) -> None:
    reduced = ROUND_2.replace("carried b1 000001 hand:1 100\nraise b1 200\n", "carried b1 000001 hand:1 50\n")
    round_3 = ROUND_3.replace("hand:1 200", "hand:1 50").replace(
        "settle b1 win 200 200 10", "settle b1 win 50 50 2.50"
    )
    findings = verify_feed(SHOE_ROUND_1 + TIE_SETTLED + reduced + round_3)
    assert keys(findings) == [("carry_mismatch", "000002", "b1")]
    assert findings[0].expected == {"amount": "100"}
    assert findings[0].recorded == {"amount": "50"}


def test_a_raise_that_lowers_a_carried_bet_is_an_invalid_bet(verify_feed: Verifier) -> None:
    lowered = ROUND_2.replace("raise b1 200", "raise b1 60")
    round_3 = ROUND_3.replace("hand:1 200", "hand:1 60").replace(
        "settle b1 win 200 200 10", "settle b1 win 60 60 3"
    )
    findings = verify_feed(SHOE_ROUND_1 + TIE_SETTLED + lowered + round_3)
    assert keys(findings) == [("invalid_bet", "000002", "b1")]


def test_a_raise_after_betting_closed_is_bet_after_close(verify_feed: Verifier) -> None:
    late = ROUND_2.replace("raise b1 200\n", "").replace("close\n", "close\nraise b1 200\n")
    findings = verify_feed(SHOE_ROUND_1 + TIE_SETTLED + late + ROUND_3)
    assert keys(findings) == [("bet_after_close", "000002", "b1")]


THREE_FIGURES = """
round 000001
open
bet h1 hand:1 100
bet o1 odd 100
bet e1 even 50
bet t1 three_figures 10
bet p1 points:0 10
close
shuffle 1
burn 2S
deal 1:9S banker:KH 1:QS banker:QH 1:KS banker:JH
settle h1 lose
settle o1 carry
settle e1 carry
settle t1 win 10 160 0
settle p1 lose
end
round 000002
open
carried o1 000001 odd 100
carried e1 000001 even 50
bet h2 hand:1 100
close
shuffle 1
burn 3S
deal 1:AS banker:4H 1:2S banker:3D 1:5S banker:TC
settle o1 win 100 100 5
settle e1 lose
settle h2 win 100 100 5
end
"""
"""Round 1: the banker KH QH JH has three figures, so odd and even carry (3CB art. 8(1)), three
figures pays 16 to 1 and points 0 loses (B1); seat 1 9S QS KS (level 2) loses. Round 2: the
banker 4H 3D TC is 7 with no figure (level 10): odd wins; seat 1 AS 2S 5S is 8 (level 7)."""


def test_odd_and_even_carried_over_a_three_figure_banker_verify_clean(verify_feed: Verifier) -> None:
    assert keys(verify_feed(THREE_FIGURES)) == []


def test_points_zero_on_three_figures_under_b1_win_expects_the_prize(verify_feed: Verifier) -> None:
    feed = THREE_FIGURES.replace(
        "open\nbet h1", 'open {"tcb": {"points0_on_three_figures": "win"}}\nbet h1', 1
    )
    findings = verify_feed(feed)
    assert keys(findings) == [("settlement_mismatch", "000001", "p1")]
    assert findings[0].expected == {"result": "win", "returned": "10", "won": "80", "commission": "0"}


def test_a_wrong_commission_is_one_commission_mismatch_on_that_bet(verify_feed: Verifier) -> None:
    findings = verify_feed(THREE_FIGURES.replace("settle o1 win 100 100 5", "settle o1 win 100 100 10"))
    assert keys(findings) == [("commission_mismatch", "000002", "o1")]
    assert findings[0].expected is not None and findings[0].expected["commission"] == "5.00"


# --- Invalid bets -------------------------------------------------------------------------

SINGLE = """
round 000001
open
bet b1 hand:1 100
bet b2 hand:2 100
close
shuffle 1
burn 4C
"""
DEAL_OK = "deal 1:6H 2:4H banker:KH 1:QS 2:2C banker:TH 1:TD 2:JD banker:9C\n"
"""Seat 1 6H QS TD and seat 2 4H 2C JD are 6 with one figure (level 12); the banker KH TH 9C
9 with one figure (level 3)."""
SETTLED_OK = "settle b1 lose\nsettle b2 lose\n"


def test_a_tie_bet_without_a_main_bet_on_its_place_is_invalid_and_due_void(verify_feed: Verifier) -> None:
    feed = (
        SINGLE.replace("close", "bet t1 tie:3 10\nclose")
        + DEAL_OK.replace("2:4H ", "2:4H 3:5C ").replace("2:2C ", "2:2C 3:5D ").replace("2:JD ", "2:JD 3:5S ")
        + SETTLED_OK
        + "settle t1 void 10\nend\n"
    )
    findings = verify_feed(feed)
    assert keys(findings) == [("invalid_bet", "000001", "t1")]
    assert findings[0].rule == "3CB art. 8(3), art. 9"


def test_a_tie_bet_without_a_main_bet_settled_lose_is_also_a_settlement_mismatch(
    verify_feed: Verifier,
) -> None:
    feed = (
        SINGLE.replace("bet b2 hand:2 100", "bet t2 tie:2 10")
        + DEAL_OK
        + "settle b1 lose\nsettle t2 lose\nend\n"
    )
    assert keys(verify_feed(feed)) == [
        ("invalid_bet", "000001", "t2"),
        ("settlement_mismatch", "000001", "t2"),
    ]


def test_a_tie_bet_backed_by_someone_elses_or_a_carried_main_bet_is_valid() -> None:
    rnd = rounds_of(
        SHOE_ROUND_1
        + TIE_SETTLED
        + ROUND_2.replace("close", "bet t9 tie:1 10\nclose").replace(
            "settle c1 lose", "settle c1 lose\nsettle t9 win 10 200 0"
        )
    )["000002"]
    derivation = derive(rnd)
    assert derivation.findings == []
    assert derivation.expected["t9"].result == "win"


# --- The deal -----------------------------------------------------------------------------


def test_a_clean_single_deck_round_verifies_clean(verify_feed: Verifier) -> None:
    assert keys(verify_feed(SINGLE + DEAL_OK + SETTLED_OK + "end\n")) == []


def test_a_misdealt_order_is_invalid_deal_and_the_round_settles_as_dealt(verify_feed: Verifier) -> None:
    """The banker gets the second card of the first pass, before seat 2."""
    misdealt = "deal 1:6H banker:KH 2:4H 1:QS 2:2C banker:TH 1:TD 2:JD banker:9C\n"
    findings = verify_feed(SINGLE + misdealt + SETTLED_OK + "end\n")
    assert keys(findings) == [("invalid_deal", "000001", None)]
    assert findings[0].rule == "3CB art. 2(2)"
    assert "card 2 of the deal (KH" in findings[0].message


def test_a_misdeal_corrected_card_by_card_is_judged_as_corrected(verify_feed: Verifier) -> None:
    """KH belonged to seat 2 and 4H to the banker: after the correction seat 2 holds KH 2C JD
    (2 with two figures, level 23) and the banker 4H TH 9C (3, level 22); seat 1 wins."""
    misdealt = (
        "deal 1:6H banker:KH 2:4H 1:QS 2:2C banker:TH 1:TD 2:JD banker:9C\ncorrect KH 2\ncorrect 4H banker\n"
    )
    feed = SINGLE + misdealt + "settle b1 win 100 100 5\nsettle b2 lose\nend\n"
    assert keys(verify_feed(feed)) == []


def test_cancelled_cards_are_redealt_and_bets_stand(verify_feed: Verifier) -> None:
    feed = SINGLE + "deal 1:AS 2:AD banker:2D\ncancel\n" + DEAL_OK + SETTLED_OK + "end\n"
    assert keys(verify_feed(feed)) == []


def test_cancelled_cards_under_misdeal_bets_return_void_every_bet(verify_feed: Verifier) -> None:
    feed = (
        SINGLE.replace("open", 'open {"tcb": {"misdeal_bets": "return"}}')
        + "deal 1:AS 2:AD banker:2D\ncancel\n"
        + DEAL_OK
        + "settle b1 void 100\nsettle b2 lose\nend\n"
    )
    findings = verify_feed(feed)
    assert keys(findings) == [("settlement_mismatch", "000001", "b2")]
    assert findings[0].expected == {"result": "void", "returned": "100", "won": "0", "commission": "0"}


def test_a_missing_burn_in_a_later_round_of_the_shoe_is_invalid_deal(verify_feed: Verifier) -> None:
    findings = verify_feed(SHOE_ROUND_1 + TIE_SETTLED + ROUND_2.replace("burn 8D\n", ""))
    assert keys(findings) == [("invalid_deal", "000002", None)]
    assert findings[0].rule == "3CB art. 2(2)-(3)"
    assert findings[0].message == "0 card(s) burned before the deal; a later round burns 1"


def test_too_few_burns_at_the_start_of_a_shoe_is_invalid_deal(verify_feed: Verifier) -> None:
    findings = verify_feed(SHOE_ROUND_1.replace("burn 7D\n", "") + TIE_SETTLED)
    assert keys(findings) == [("invalid_deal", "000001", None)]
    assert "the first round of a shoe burns 6" in findings[0].message


def test_a_card_seen_more_often_than_the_decks_across_rounds_of_a_shoe_is_invalid_deal(
    verify_feed: Verifier,
) -> None:
    """Two decks: AS burned twice in round 1 is fine, a third AS dealt in round 2 is not."""
    feed = (
        SHOE_ROUND_1.replace("shuffle 6 35", "shuffle 2 30").replace(
            "burn 2D\nburn 3D\nburn 4D\nburn 5D\nburn 6D\nburn 7D\n", "burn AS\nburn AS\n"
        )
        + TIE_SETTLED
        + ROUND_2
    )  # round 2 deals AS to seat 2
    findings = verify_feed(feed)
    assert keys(findings) == [("invalid_deal", "000002", None)]
    assert findings[0].message == "AS seen 3 times in a shoe of 2 deck(s) (since round 000001)"


def test_a_duplicate_card_in_a_single_deck_round_is_invalid_deal_and_still_settled(
    verify_feed: Verifier,
) -> None:
    duplicate = DEAL_OK.replace("2:JD", "2:QS")  # seat 2 4H 2C QS: still 6 with one figure
    feed = SINGLE + duplicate + SETTLED_OK + "end\n"
    findings = verify_feed(feed)
    assert keys(findings) == [("invalid_deal", "000001", None)]
    assert findings[0].message == "QS seen 2 times in a shoe of 1 deck(s) (since round 000001)"
    paid = verify_feed(feed.replace("000001", "000002").replace("settle b2 lose", "settle b2 win 100 100 0"))
    assert ("settlement_mismatch", "000002", "b2") in keys(paid)


def test_a_single_deck_box_deals_one_round(verify_feed: Verifier) -> None:
    second = """
round 000002
open
bet b1 hand:1 100
close
burn 5C
deal 1:AS banker:4D 1:2S banker:3D 1:5S banker:TC
settle b1 win 100 100 5
end
"""
    findings = verify_feed(SINGLE + DEAL_OK + SETTLED_OK + "end\n" + second)
    assert keys(findings) == [("invalid_deal", "000002", None)]
    assert findings[0].rule == "3CB art. 3"


def test_a_third_card_dealt_face_up_and_a_short_hand_are_invalid_deals(verify_feed: Verifier) -> None:
    face_up = DEAL_OK.replace("1:TD", "1:TD^")
    assert keys(verify_feed(SINGLE + face_up + SETTLED_OK + "end\n")) == [("invalid_deal", "000001", None)]


def test_a_banker_short_of_a_card_leaves_its_bets_unjudged(app: LedgerApp) -> None:
    rnd = rounds_of(SINGLE + DEAL_OK.replace(" banker:9C", "") + SETTLED_OK + "end\n")["000001"]
    derivation = derive(rnd)
    assert [f.message for f in derivation.findings] == ["wrong number of cards: the banker got 2, not 3"]
    assert derivation.expected == {}


def test_a_bet_on_a_place_that_was_not_dealt_is_invalid_deal() -> None:
    rnd = rounds_of(
        SINGLE.replace("bet b2 hand:2 100", "bet b2 hand:4 100") + DEAL_OK + SETTLED_OK + "end\n"
    )["000001"]
    derivation = derive(rnd)
    assert [(f.code, f.extra) for f in derivation.findings] == [("invalid_deal", {"seat": 4})]
    assert sorted(derivation.expected) == ["b1"]


def test_a_shoe_past_its_last_round_card_must_be_reshuffled() -> None:
    """Two decks, marker 30 from the end: once more than 74 cards are out the round is the last."""
    rnd = rounds_of(ROUND_3)["000003"]
    shoe = Shoe(decks=2, opened_in="000001", marker_from_end=30, drawn=70, rounds=5)
    deal, after = read_deal(rnd, shoe)
    assert deal.problems == [] and after is shoe and shoe.last_round == "000003"
    deal, _ = read_deal(rounds_of(ROUND_3.replace("000003", "000004"))["000004"], shoe)
    assert [p.message for p in deal.problems] == [
        "the last-round card came out in round 000003: that was the shoe's last round, a reshuffle was due"
    ]


def test_a_shoe_marker_outside_30_to_40_is_invalid_deal() -> None:
    rnd = rounds_of(SHOE_ROUND_1.replace("shuffle 6 35", "shuffle 6 20") + TIE_SETTLED)["000001"]
    assert [f.message for f in derive(rnd).findings] == [
        "the last-round blank card is 20 cards from the end; it must be among the last 30 to 40"
    ]


def test_a_voided_round_returns_new_bets_and_carries_carried_ones(verify_feed: Verifier) -> None:
    voided = """
round 000002
open
carried b1 000001 hand:1 100
bet c1 hand:2 100
close
settle b1 carry
settle c1 void 100
voided table fault
round 000003
open
carried b1 000002 hand:1 100
close
burn 9D
deal 1:KS 2:5S banker:2H 1:KD 2:5H banker:3H 1:7S 2:TS banker:TD
settle b1 win 100 100 5
end
"""
    assert keys(verify_feed(SHOE_ROUND_1 + TIE_SETTLED + voided)) == []


def test_a_closed_round_without_cards_is_outcome_missing(verify_feed: Verifier) -> None:
    feed = SINGLE.replace("shuffle 1\nburn 4C\n", "") + SETTLED_OK + "end\n"
    assert keys(verify_feed(feed)) == [("outcome_missing", "000001", None)]


def test_the_shared_example_verifies_clean(verify_feed: Verifier, app: LedgerApp, examples: Path) -> None:
    from ledger.verify.engine import verify_store

    assert ingest_file(app, examples / "3cb.jsonl").rejected == []
    report = verify_store(app)
    assert report.findings == [] and report.rounds_checked == 5
    replayed = replay_round(app, "3CB-01", "000004")
    assert replayed is not None
    assert replayed.derivation.expected["b45"].won == Decimal("80")


def test_a_carry_from_the_newest_round_is_reported_as_still_in_play(verify_feed: Verifier) -> None:
    findings = verify_feed(SHOE_ROUND_1 + TIE_SETTLED + ROUND_2)
    outstanding = [(f.code, f.round, f.bet, f.severity) for f in findings if f.code == "carry_outstanding"]
    assert outstanding == [("carry_outstanding", "000002", "b1", "info")]
    assert keys(findings) == []
