"""Hand-written Mah-Jong games (MJ-C and MJ-S) verified payment by payment (RULES §4.4–4.10).

Each game is written tile by tile with the ``mj`` builder (conftest) and goes through the real
path: JSON → ``parse_line`` → ``Round.replay`` → ``check_round``. A clean game verifies with no
finding; each spoiled copy verifies with exactly the findings named, seat by seat.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ledger.codec.parse import parse_line
from ledger.domain.round import Round
from ledger.games.mahjong import GAME
from ledger.verify.checks import check_round

Builder = Any

# -- all pungs: W wins on N's discard (E6, 1 fán, u = 50 at 25/50) --------------------------------

ALL_PUNGS = {
    "E": "1C 2C 3C 4D 5D 6D 7B 7B RD RD GD WD NW EW",
    "S": "1B 3B 5B 7C 8C 9C 2D 3D 4D WW WW NW GD",
    "W": "2B 2B 2B 5C 5C 5C 8D 8D 8D 9B 9B SW SW",
    "N": "4B 5B 6B 6C 6C 7C 1D 1D 9D 9D 9B WD EW",
}


def all_pungs(mj: Builder, **kw: Any) -> Any:
    s = mj(ALL_PUNGS, **kw)
    s.discard("E", "NW").turn("S", "1D").turn("W", "3D")
    s.draw("N", "4C").discard("N", "9B").win("W", "9B", "discard", "N")
    return s


def test_all_pungs_pays_one_fan_and_the_banker_double(mj: Builder) -> None:
    s = all_pungs(mj)
    s.pay("E", "W", "100").pay("S", "W", "50").pay("N", "W", "50").commission("W", "10").close()
    assert s.codes() == []
    steps = s.steps()
    assert "decomposition: 222B 999B 555C 888D SW SW" in steps
    assert "E6 all pungs «Tò-i-tò-i-vu» (對對糊): +1 fán" in steps
    assert "1 fán" in steps


def test_a_short_payment_and_a_missing_commission_are_found_by_seat(mj: Builder) -> None:
    s = all_pungs(mj)
    s.pay("E", "W", "100").pay("S", "W", "50").pay("N", "W", "40").close()
    assert s.codes() == [("payment_mismatch", "N"), ("commission_mismatch", "W")]
    f = s.findings()
    assert f[0].expected == {"from": "N", "to": "W", "amount": "50", "reason": "win"}
    assert f[0].recorded == {"from": "N", "to": "W", "amount": "40", "reason": "win"}
    assert f[0].bet is None and f[0].to_json()["seat"] == "N"


def test_a_missing_payment_is_a_missing_settlement(mj: Builder) -> None:
    s = all_pungs(mj)
    s.pay("E", "W", "100").pay("S", "W", "50").commission("W", "10").close()
    assert s.codes() == [("missing_settlement", "N")]


def test_the_winners_capital_cuts_every_payment_pro_rata(mj: Builder) -> None:
    """Due 100 + 50 + 50 = 200 > capital 150.01: 75.00, 37.50, 37.50, and the cent left over goes
    to the first payer in turn order from the discarder (N) (M5, G1)."""
    capital = {"E": "5000", "S": "5000", "W": "150.01", "N": "5000"}
    s = all_pungs(mj, capital=capital, rulebook={"mj": {"min_capital": "100"}})
    s.pay("E", "W", "75.00").pay("S", "W", "37.50").pay("N", "W", "37.51")
    s.commission("W", "10").close()
    assert s.codes() == []
    wrong = all_pungs(mj, capital=capital, rulebook={"mj": {"min_capital": "100"}})
    wrong.pay("E", "W", "100").pay("S", "W", "50").pay("N", "W", "50").commission("W", "10")
    assert wrong.close().codes() == [
        ("payment_mismatch", "E"),
        ("payment_mismatch", "S"),
        ("payment_mismatch", "N"),
    ]


def test_a_capital_below_the_table_minimum_is_reported(mj: Builder) -> None:
    capital = {"E": "5000", "S": "5000", "W": "150.01", "N": "5000"}
    s = all_pungs(mj, capital=capital)
    s.pay("E", "W", "75.00").pay("S", "W", "37.50").pay("N", "W", "37.51")
    s.commission("W", "10").close()
    assert s.codes() == [("invalid_bet", "W")]  # 24 × A = 600 by default (M6)


# -- pure one suit fed by a discard: E is liable (art. 10(a)(1)) ------------------------------------

PURE = {
    "E": "1B 8B 1C 2C 3C 4D 5D 6D RD RD GD EW NW 9C",
    "S": "1B 1B 9B 9B 4B 4B 5B 6B 7B 8B WD 2B 3B",
    "W": "9B 4B 1C 2C 5C 6C 7D 8D 9D SW SW WW EW",
    "N": "1D 1D 2D 5D 6D 7D 3C 3C 4C WD WD GD NW",
}


def pure_one_suit(mj: Builder) -> Any:
    s = mj(PURE)
    s.discard("E", "1B").claim("S", "pung", "1B 1B 1B", "E").discard("S", "WD")
    s.draw("W", "7C").discard("W", "9B").claim("S", "pung", "9B 9B 9B", "W").discard("S", "2B")
    s.draw("W", "3D").discard("W", "4B").claim("S", "pung", "4B 4B 4B", "W").discard("S", "3B")
    s.turn("W", "2D").turn("N", "3D").draw("E", "4C").discard("E", "8B")
    return s.win("S", "8B", "discard", "E")


def test_pure_one_suit_fed_by_a_discard_makes_the_discarder_pay_for_all(mj: Builder) -> None:
    """u(2) = 100: E owes 200, W 100, N 100; the liable E pays all 400 (M17)."""
    s = pure_one_suit(mj)
    s.pay("E", "S", "400", "liability").commission("S", "10").close()
    assert s.codes() == []
    steps = s.steps()
    assert "D6 pure one suit «Ch'èng iat sêk» (清一色): +2 fán" in steps
    assert any(t.startswith("E is liable and pays for the others") for t in steps)


def test_a_liability_not_applied_is_found_on_every_payment(mj: Builder) -> None:
    s = pure_one_suit(mj)
    s.pay("E", "S", "200").pay("W", "S", "100").pay("N", "S", "100").commission("S", "10")
    assert s.close().codes() == [
        ("payment_mismatch", "E"),
        ("payment_mismatch", "W"),
        ("payment_mismatch", "N"),
    ]


# -- thirteen orphans, self-drawn by N (D7, 2 fán) --------------------------------------------------

ORPHANS = {
    "E": "2B 3B 4B 5C 6C 7C 2D 3D 4D 5D 6D 7D 8D 8B",
    "S": "2C 3C 4C 5B 6B 7B 2D 3D 4D 5D 6D 7D 8C",
    "W": "3B 4B 5B 6C 7C 8C 4D 5D 6D 3C 4C 5C 7B",
    "N": "1B 9B 1C 9C 1D 9D EW SW WW NW RD GD WD",
}


def test_thirteen_orphans_self_drawn_is_two_fan(mj: Builder) -> None:
    s = mj(ORPHANS)
    s.discard("E", "8B").turn("S", "8C").turn("W", "9D").draw("N", "RD")
    s.win("N", "RD", "self_drawn")
    s.pay("E", "N", "200").pay("S", "N", "100").pay("W", "N", "100").commission("N", "10")
    assert s.close().codes() == []
    assert "D7 thirteen orphans «Sap-sám iu» (十三么): +2 fán" in s.steps()


# -- robbing the kong: W wins on the tile S adds to his pung of 5D (E4) -----------------------------

ROB = {
    "E": "5D 1C 1C 2B 3B 4B 6B 7B 8B RD GD WD NW EW",
    "S": "5D 5D 9B 9B 9B 2D 2D 6C 6C SW SW RD GD",
    "W": "3D 4D 1B 1B 1B 2C 3C 4C 7C 8C 9C WW WW",
    "N": "1D 1D 7D 7D 8D 8D 9D 5C 5C EW NW WD 3B",
}


def robbing(mj: Builder, *, seen: bool = False) -> Any:
    s = mj(ROB)
    s.discard("E", "5D").claim("S", "pung", "5D 5D 5D", "E").discard("S", "GD")
    if seen:
        s.add("tiles_seen", seat="S")
    s.turn("W", "6D").turn("N", "9D").turn("E", "4B").draw("S", "5D")
    s.add("kong_declared", seat="S", kind="added", tile="5D")
    s.win("W", "5D", "robbed_kong", "S")
    return s.pay("E", "W", "100").pay("S", "W", "50").pay("N", "W", "50").commission("W", "10")


def test_robbing_the_kong_is_one_fan(mj: Builder) -> None:
    s = robbing(mj).close()
    assert s.codes() == []
    assert "E4 robbing the kong «Ch'éong kóng» (搶槓): +1 fán" in s.steps()


def test_a_kong_after_seeing_anothers_tiles_is_not_allowed(mj: Builder) -> None:
    assert robbing(mj, seen=True).close().codes() == [("invalid_bet", "S")]


# -- MJ-S: a win on the last tile of the wall (S2: base 1 + 1 = 2 fán) ------------------------------

LAST = {"E": "5D 6D 7D 9B GD", "S": "2B 2B 8C 9C", "W": "1D 2D 3D 3D", "N": "1B 1B 2C 3C"}


def last_tile(mj: Builder) -> Any:
    s = mj(LAST, variant="simplified", stake="100/200")
    s.discard("E", "GD")
    filler = s.pool(Counter({"4C": 1}))
    order = ["S", "W", "N", "E"]
    for i, tile in enumerate(filler):
        s.turn(order[i % 4], tile)
    assert len(filler) == 94 and order[len(filler) % 4] == "N"
    return s.draw("N", "4C").win("N", "4C", "self_drawn")


def test_mjs_win_on_the_last_tile(mj: Builder) -> None:
    """u(2) = 4 × 100 = 400: E pays 800, S and W 400 each; commission 0.2 × A = 20."""
    s = last_tile(mj)
    s.pay("E", "N", "800").pay("S", "N", "400").pay("W", "N", "400").commission("N", "20")
    assert s.close().codes() == []
    steps = s.steps()
    assert "minimum hand: 1 fán" in steps and "S2 last tile: +1 fán" in steps
    assert "2 fán" in steps


def test_mjs_allows_no_pung_from_a_discard(mj: Builder) -> None:
    s = mj(LAST, variant="simplified", stake="100/200")
    s.discard("E", "9B").claim("S", "pung", "9B 9B 9B", "E")
    assert s.codes() == [("invalid_bet", "S"), ("invalid_deal", "S")]  # and he holds no 9B pair


# -- a false win by the banker: he pays each player a 2-fán hand, no commission (§4.9) ---------------


def false_win(mj: Builder) -> Any:
    s = mj(ALL_PUNGS)
    return s.win("E", "EW", "self_drawn")


def test_a_false_win_by_the_banker(mj: Builder) -> None:
    s = false_win(mj)
    s.pay("E", "S", "100", "false_win").pay("E", "W", "100", "false_win")
    s.pay("E", "N", "100", "false_win").close()
    assert s.codes() == []
    assert any(t.startswith("false win (詐糊): the tiles do not form") for t in s.steps())


def test_a_commission_on_a_false_win_is_reported(mj: Builder) -> None:
    s = false_win(mj)
    s.pay("E", "S", "100", "false_win").pay("E", "W", "50", "false_win")
    s.pay("E", "N", "100", "false_win").commission("E", "10").close()
    assert s.codes() == [("payment_mismatch", "E"), ("commission_mismatch", "E")]


def test_a_withdrawn_pung_call_makes_a_good_hand_a_false_win(mj: Builder) -> None:
    """W calls «p'ông» and does not make it: his valid win is a false win (art. 9(a)(2))."""
    s = mj(ALL_PUNGS)
    s.discard("E", "NW").add("pung_call_withdrawn", seat="W")
    s.turn("S", "1D").turn("W", "3D").draw("N", "4C").discard("N", "9B").win("W", "9B", "discard", "N")
    s.pay("W", "E", "100", "false_win").pay("W", "S", "50", "false_win")
    s.pay("W", "N", "50", "false_win").close()
    assert s.codes() == []


# -- impossible tile logs ----------------------------------------------------------------------------


def test_a_fifth_copy_of_a_tile(mj: Builder) -> None:
    s = mj(ALL_PUNGS)
    s.discard("E", "NW").turn("S", "2B").turn("W", "2B")
    assert s.codes() == [("invalid_deal", "W")]
    assert "a fifth 2B" in s.findings()[0].message


def test_a_draw_out_of_turn(mj: Builder) -> None:
    s = mj(ALL_PUNGS)
    s.discard("E", "NW").turn("W", "1D").draw("N", "4C").discard("N", "9B")
    s.win("W", "9B", "discard", "N")
    s.pay("E", "W", "100").pay("S", "W", "50").pay("N", "W", "50").commission("W", "10").close()
    assert s.codes() == [("invalid_deal", "W")]
    assert "out of turn" in s.findings()[0].message


def test_a_chow_claimed_by_a_player_who_is_not_next(mj: Builder) -> None:
    s = mj(ALL_PUNGS)
    s.discard("E", "1C").claim("N", "chow", "1C 2C 3C", "E")
    assert ("invalid_bet", "N") in s.codes()
    assert "only by the next player after E" in s.findings()[0].message


def test_a_misdeal_is_reported(mj: Builder) -> None:
    s = mj(ALL_PUNGS)
    s.lines[4]["seat"] = "S"  # E's 4th tile dealt to S
    assert s.codes()[0] == ("invalid_deal", "S")


def test_the_example_feed_verifies_clean(examples: Any) -> None:
    lines = (examples / "mj.jsonl").read_text(encoding="utf-8").splitlines()
    events = [parse_line(line, n) for n, line in enumerate(lines, 1) if line.strip()]
    assert check_round(Round.replay(events), GAME) == []  # type: ignore[arg-type]
