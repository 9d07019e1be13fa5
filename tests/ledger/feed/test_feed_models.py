"""The feed models of every game (FEED.md §1–§8): each event class validates a sample line,
round-trips through the store's JSON form, every example feed parses, and malformed lines are
rejected with a stable code and the field at fault (FEED §9).

Every event class registered in ``ledger.games.GAMES`` must have a sample below: a new class
without one fails :func:`test_every_event_class_has_a_sample`.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, get_args

import pytest

from ledger.codec.parse import Rejection, parse_line
from ledger.feed.envelope import BetPlaced, FeedEvent, RoundOpened
from ledger.games import GAMES

EXAMPLES = Path(os.environ["LEDGER_EXAMPLES"])  # set by tests/conftest.py

AT = "2026-11-21T20:00:03.250+08:00"
ENVELOPE: dict[str, Any] = {"v": 1, "table": "T-01", "round": "000417", "seq": 2, "at": AT}

MJ_OPENED: dict[str, Any] = {
    "currency": "MOP",
    "variant": "conventional",
    "stake": "25/50",
    "players": {"E": "P-E", "S": "P-S", "W": "P-W", "N": "P-N"},
    "capital": {"E": "5000", "S": "4999.50", "W": "5000", "N": "5000"},
    "round_wind": "S",
    "game_no": 7,
}

COMMON: dict[str, dict[str, Any]] = {
    "round_opened": {"currency": "HKD", "rulebook": {"sp9": {"tiebreak": "both_cards"}}},
    "betting_closed": {},
    "bet_settled": {"bet": "b1", "result": "win", "returned": "95.50", "won": "95.50", "commission": "4.78"},
    "round_closed": {},
    "round_voided": {"reason": "the shuffler failed during the deal"},
    "irregularity": {"code": "device_seen", "detail": "a player used a phone at the table"},
    "deck_shuffled": {
        "decks": 6,
        "method": "hand",
        "deck": "A",
        "cut": 120,
        "cut_by": "P-1",
        "marker_from_end": 35,
    },
    "card_burned": {"card": "4C"},
}
"""Samples of the events common to all games (FEED §2), used unless a game has its own."""

SAMPLES: dict[str, dict[str, dict[str, Any]]] = {
    "RL": {
        "bet_placed": {
            "bet": "b1",
            "player": "P-88",
            "spot": {"kind": "split", "numbers": [17, 20]},
            "amount": "95.50",
        },
        "spin_result": {"number": 17},
        "spin_voided": {"reason": "the ball left the wheel"},
    },
    "FPC": {
        "bet_placed": {"bet": "b1", "spot": {"kind": "one_colour", "colour": "red"}, "amount": "95.50"},
        "dice_pressed": {},
        "dice_shown": {"dice": [1, 5, 6]},
        "die_cocked": {},
    },
    "SP9": {
        "bet_placed": {
            "bet": "b1",
            "spot": {"kind": "hand", "seat": 2},
            "amount": "95.50",
            "seat": 3,
            "player": "P-1",
        },
        "bank_taken": {"seat": 1, "capital": "3617.50"},
        "bank_refused": {"seat": 2},
        "bank_extended": {"consents": [2, 3, 4]},
        "bank_joined": {"party": "seat:3", "capital": "500"},
        "dice_adjustment_declared": {"points": -3},
        "dice_thrown": {"dice": [5, 3, 5, 1], "valid": False},
        "card_dealt": {"to": 2, "card": "3D", "face_up": False},
        "card_exposed": {"to": 26, "card": "9H"},
        "bank_settled": {"party": "banker", "result": "-300.50", "commission": "0"},
    },
    "3CB": {
        "bet_placed": {"bet": "b15", "spot": {"kind": "points", "points": 0}, "amount": "10.50"},
        "card_dealt": {"to": "banker", "card": "KH", "face_up": True},
        "card_exposed": {"to": 7, "card": "QH"},
        "shoe_closed": {"reason": "the last-round card came out"},
        "deal_corrected": {"card": "TD", "to": "banker"},
        "cards_cancelled": {},
        "bet_carried": {
            "bet": "b13",
            "from_round": "000416",
            "spot": {"kind": "tie", "seat": 1},
            "amount": "100",
        },
        "bet_increased": {"bet": "b13", "amount": "150.50"},
    },
    "STUD": {
        "bet_placed": {"bet": "r1", "spot": {"kind": "raise", "seat": 7}, "amount": "200.50"},
        "hand_folded": {"seat": 2},
        "card_dealt": {"to": "dealer", "card": "7S", "face_up": True},
        "card_exposed": {"to": 3, "card": "AS"},
        "jackpot_paid": {"bet": "j1", "hand": "straight_flush", "amount": "5000.05"},
        "jackpot_carried": {"bet": "j1", "from_round": "000003", "seat": 1, "amount": "10"},
    },
    "MJ": {
        "round_opened": MJ_OPENED,
        "dice_thrown": {"dice": [3, 4, 6]},
        "wall_broken": {"wall": "S", "stacks": 13},
        "tile_drawn": {"seat": "E", "tile": "1C", "from": "tail"},
        "tile_discarded": {"seat": "E", "tile": "RD"},
        "meld_claimed": {"seat": "S", "kind": "chow", "tiles": ["3B", "4B", "5B"], "from": "E"},
        "kong_declared": {"seat": "W", "kind": "added", "tile": "5B"},
        "pung_call_withdrawn": {"seat": "N"},
        "tiles_seen": {"seat": "S"},
        "win_declared": {"seat": "N", "tile": "5D", "source": "discard", "from": "E"},
        "game_drawn": {},
        "claim_error": {"seat": "S"},
        "claim_corrected": {"seat": "S"},
        "capital_topped_up": {"seat": "W", "amount": "1000.25"},
        "payment_made": {"from": "S", "to": "N", "amount": "25.50", "reason": "liability"},
        "payment_shortfall": {"from": "W", "to": "N", "amount": "12.05"},
        "commission_charged": {"seat": "N", "amount": "10"},
    },
}
"""One valid sample per game and event type; ``None`` values are left out of lines."""

EXTRA_SAMPLES: list[tuple[str, str, dict[str, Any]]] = [
    ("SP9", "bank_joined", {"party": "casino", "capital": "10000"}),
    ("SP9", "bank_settled", {"party": "seat:12", "result": "950", "commission": "47.50"}),
    ("3CB", "bet_placed", {"bet": "b1", "spot": {"kind": "odd"}, "amount": "50"}),
    ("3CB", "bet_placed", {"bet": "b1", "spot": {"kind": "three_figures"}, "amount": "50"}),
    ("3CB", "bet_placed", {"bet": "b1", "spot": {"kind": "hand", "seat": 1}, "amount": "50"}),
    ("STUD", "bet_placed", {"bet": "a1", "spot": {"kind": "ante", "seat": 1}, "amount": "100"}),
    ("STUD", "bet_placed", {"bet": "j1", "spot": {"kind": "jackpot", "seat": 1}, "amount": "10"}),
    ("STUD", "card_burned", {}),
    (
        "MJ",
        "round_opened",
        {
            **MJ_OPENED,
            "variant": "simplified",
            "stake": "30000/60000",
            "players": {"E": "P-1", "S": "P-2", "W": "P-3"},
            "capital": {"W": "100", "E": "200", "S": "300"},
        },
    ),
    ("MJ", "dice_thrown", {"dice": [1, 6]}),
    ("MJ", "win_declared", {"seat": "E", "tile": "GD", "source": "self_drawn"}),
    ("MJ", "meld_claimed", {"seat": "S", "kind": "kong", "tiles": ["WD"] * 4, "from": "N"}),
]
"""More shapes worth a round trip: other spot kinds, optional fields absent, simplified MJ."""


def _line(game: str, type_: str, fields: dict[str, Any]) -> dict[str, Any]:
    seq = 1 if type_ == "round_opened" else ENVELOPE["seq"]
    return {**ENVELOPE, "seq": seq, "game": game, "type": type_, **fields}


def _sample(game: str, type_: str) -> dict[str, Any] | None:
    return SAMPLES.get(game, {}).get(type_, COMMON.get(type_))


CASES = [pytest.param(key, cls, id=f"{key}/{cls.TYPE}") for key, game in GAMES.items() for cls in game.events]


def _assert_round_trips(cls: type[FeedEvent], line: dict[str, Any]) -> FeedEvent:
    obj = cls.model_validate(line)
    # The store writes model_dump_json(exclude_none=True); both forms must read back equal.
    for dump in (obj.model_dump_json(), obj.model_dump_json(exclude_none=True)):
        back = cls.model_validate_json(dump)
        assert back == obj
        assert type(back) is cls
    written = json.loads(obj.model_dump_json(exclude_none=True))
    assert datetime.fromisoformat(written.pop("at")) == datetime.fromisoformat(line["at"])
    expected = {k: v for k, v in line.items() if k != "at"}
    assert written == expected  # "95.50" stays "95.50", tuples are lists, spots nested
    return obj


@pytest.mark.parametrize(("game", "cls"), CASES)
def test_every_event_class_has_a_sample(game: str, cls: type[FeedEvent]) -> None:
    if _sample(game, cls.TYPE) is None:
        pytest.fail(
            f"{cls.__name__} ({game} {cls.TYPE!r}) has no sample in "
            f"tests/ledger/feed/test_feed_models.py: add one to SAMPLES"
        )


@pytest.mark.parametrize(("game", "cls"), CASES)
def test_type_literal_matches_the_class_type(game: str, cls: type[FeedEvent]) -> None:
    assert cls.TYPE
    assert get_args(cls.model_fields["type"].annotation) == (cls.TYPE,)
    assert GAMES[game].event_class(cls.TYPE) is cls
    assert [c.TYPE for c in GAMES[game].events].count(cls.TYPE) == 1


@pytest.mark.parametrize(("game", "cls"), CASES)
def test_every_event_class_round_trips_through_json(game: str, cls: type[FeedEvent]) -> None:
    sample = _sample(game, cls.TYPE)
    if sample is None:
        pytest.skip("no sample (reported by test_every_event_class_has_a_sample)")
    _assert_round_trips(cls, _line(game, cls.TYPE, sample))


@pytest.mark.parametrize(
    ("game", "type_", "fields"),
    EXTRA_SAMPLES,
    ids=[f"{g}/{t}-{i}" for i, (g, t, _) in enumerate(EXTRA_SAMPLES)],
)
def test_more_shapes_round_trip(game: str, type_: str, fields: dict[str, Any]) -> None:
    cls = GAMES[game].event_class(type_)
    assert cls is not None
    _assert_round_trips(cls, _line(game, type_, fields))


@pytest.mark.parametrize(("game", "cls"), CASES)
def test_parse_line_picks_the_game_class(game: str, cls: type[FeedEvent]) -> None:
    sample = _sample(game, cls.TYPE)
    if sample is None:
        pytest.skip("no sample (reported by test_every_event_class_has_a_sample)")
    event = parse_line(json.dumps(_line(game, cls.TYPE, sample)), 1)
    assert not isinstance(event, Rejection), event
    assert type(event) is cls


def test_values_are_typed_after_validation() -> None:
    bet = parse_line(json.dumps(_line("SP9", "bank_settled", SAMPLES["SP9"]["bank_settled"])), 1)
    assert not isinstance(bet, Rejection)
    assert bet.result == Decimal("-300.50")  # type: ignore[attr-defined]
    tile = parse_line(json.dumps(_line("MJ", "tile_drawn", SAMPLES["MJ"]["tile_drawn"])), 1)
    assert not isinstance(tile, Rejection)
    assert tile.from_ == "tail"  # type: ignore[attr-defined]
    assert str(tile.tile) == "1C"  # type: ignore[attr-defined]
    dice = parse_line(json.dumps(_line("SP9", "dice_thrown", SAMPLES["SP9"]["dice_thrown"])), 1)
    assert dice.dice == (5, 3, 5, 1)  # type: ignore[union-attr]


def test_mahjong_round_opened_carries_the_rulebook_and_the_table() -> None:
    line = _line("MJ", "round_opened", {**MJ_OPENED, "rulebook": {"mj": {"c": {"max_fan": 3}}}})
    opened = parse_line(json.dumps(line), 1)
    assert isinstance(opened, RoundOpened) and opened.rules is not None
    assert opened.rules.mj.c.max_fan == 3 and opened.rules_hash
    assert type(opened).model_validate_json(opened.model_dump_json(exclude_none=True)) == opened
    assert opened.stake_amounts == (Decimal("25"), Decimal("50"))  # type: ignore[attr-defined]
    simplified = parse_line(json.dumps(_line("MJ", "round_opened", EXTRA_SAMPLES[8][2])), 1)
    assert simplified.seats == ("E", "S", "W")  # type: ignore[union-attr]


def test_only_the_stud_raise_is_allowed_after_betting_closes() -> None:
    def bet(game: str, spot: dict[str, Any]) -> BetPlaced:
        cls = GAMES[game].event_class("bet_placed")
        assert cls is not None
        made = cls.model_validate(_line(game, "bet_placed", {"bet": "b1", "spot": spot, "amount": "200"}))
        assert isinstance(made, BetPlaced)
        return made

    stud = GAMES["STUD"]
    assert stud.allowed_after_close(bet("STUD", {"kind": "raise", "seat": 1}))
    assert not stud.allowed_after_close(bet("STUD", {"kind": "ante", "seat": 1}))
    assert not stud.allowed_after_close(bet("STUD", {"kind": "jackpot", "seat": 1}))
    assert not GAMES["SP9"].allowed_after_close(bet("SP9", {"kind": "hand", "seat": 1}))
    assert not GAMES["3CB"].allowed_after_close(bet("3CB", {"kind": "even"}))


def test_betting_closes_as_feed_section_10_says() -> None:
    assert GAMES["SP9"].closes_betting == {"dice_thrown"}
    assert GAMES["3CB"].closes_betting == {"card_burned", "card_dealt"}
    assert GAMES["STUD"].closes_betting == {"card_burned", "card_dealt"}
    assert GAMES["MJ"].closes_betting == frozenset()
    assert GAMES["RL"].closes_betting == {"spin_result", "spin_voided"}
    assert GAMES["FPC"].closes_betting == {"dice_shown", "die_cocked"}


def test_mahjong_has_no_bet_placed() -> None:
    assert GAMES["MJ"].event_class("bet_placed") is None
    assert GAMES["MJ"].event_class("round_opened") is not RoundOpened


# --- the example feeds ---------------------------------------------------------------------

EXAMPLE_FILES = sorted(EXAMPLES.glob("*.jsonl")) if EXAMPLES.is_dir() else []


def test_the_example_feeds_are_there() -> None:
    names = {p.name for p in EXAMPLE_FILES}
    assert {"sp9.jsonl", "3cb.jsonl", "stud.jsonl", "mj.jsonl", "rl.jsonl", "fpc.jsonl"} <= names


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=[p.name for p in EXAMPLE_FILES])
def test_every_example_line_parses_and_round_trips(path: Path) -> None:
    count = 0
    for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not text.strip():
            continue
        event = parse_line(text, n)
        assert isinstance(event, FeedEvent), f"{path.name}:{n}: {event}"
        cls = type(event)
        assert GAMES[event.game].event_class(event.type) is cls
        assert cls.model_validate_json(event.model_dump_json(exclude_none=True)) == event
        written = json.loads(event.model_dump_json(exclude_none=True, exclude=set(cls.DERIVED)))
        sent = json.loads(text)
        assert datetime.fromisoformat(written.pop("at")) == datetime.fromisoformat(sent.pop("at"))
        assert written == sent  # the stored fact says what the table sent, "32.5" included
        count += 1
    assert count > 0


# --- rejections (FEED §9) ------------------------------------------------------------------

SP9_BET = _line("SP9", "bet_placed", {"bet": "b1", "spot": {"kind": "hand", "seat": 2}, "amount": "100"})
MJ_DRAW = _line("MJ", "tile_drawn", {"seat": "E", "tile": "1C", "from": "wall"})
MJ_OPEN = _line("MJ", "round_opened", MJ_OPENED)


def _with(line: dict[str, Any], **changes: Any) -> str:
    return json.dumps({**line, **changes})


def _with_opened(**changes: Any) -> str:
    return json.dumps({**MJ_OPEN, **changes})


REJECTIONS: list[tuple[str, str, str, str | None]] = [
    ("unknown key", _with(SP9_BET, note="x"), "unknown_key", "note"),
    (
        "unknown key in a spot",
        _with(SP9_BET, spot={"kind": "hand", "seat": 2, "seet": 3}),
        "unknown_key",
        "spot.seet",
    ),
    (
        "bad card",
        json.dumps(_line("3CB", "card_dealt", {"to": 1, "card": "1S", "face_up": True})),
        "bad_card",
        "card",
    ),
    ("bad tile", _with(MJ_DRAW, tile="0B"), "bad_tile", "tile"),
    (
        "bad tile in a meld",
        json.dumps(
            _line(
                "MJ", "meld_claimed", {"seat": "S", "kind": "pung", "tiles": ["RD", "0B", "RD"], "from": "E"}
            )
        ),
        "bad_tile",
        "tiles.1",
    ),
    ("money as a JSON number", _with(SP9_BET, amount=100), "bad_money", "amount"),
    ("money with three decimals", _with(SP9_BET, amount="95.505"), "bad_money", "amount"),
    (
        "negative money",
        json.dumps(_line("MJ", "commission_charged", {"seat": "N", "amount": "-10"})),
        "bad_money",
        "amount",
    ),
    (
        "capital as a JSON number",
        _with_opened(capital={**MJ_OPENED["capital"], "E": 5000}),
        "bad_money",
        "capital.E",
    ),
    ("seq as a string", _with(SP9_BET, seq="3"), "invalid_value", "seq"),
    ("unknown type for the game", _with(SP9_BET, type="spin_result", number=17), "unknown_type", "type"),
    ("Mah-Jong has no bet_placed", _with(SP9_BET, game="MJ"), "unknown_type", "type"),
    ("unknown game", _with(SP9_BET, game="BJ"), "unknown_game", "game"),
    ("version 2", _with(SP9_BET, v=2), "unsupported_version", "v"),
    ("version as a string", _with(SP9_BET, v="1"), "unsupported_version", "v"),
    (
        "bad rulebook key",
        json.dumps(_line("SP9", "round_opened", {"currency": "HKD", "rulebook": {"sp9": {"tiebrek": "x"}}})),
        "bad_rulebook",
        "rulebook.sp9.tiebrek",
    ),
    ("NaN", json.dumps(SP9_BET)[:-1] + ',"x":NaN}', "invalid_json", None),
    (
        "SP9 with three dice",
        json.dumps(_line("SP9", "dice_thrown", {"dice": [1, 2, 3], "valid": True})),
        "invalid_value",
        "dice",
    ),
    (
        "SP9 valid missing",
        json.dumps(_line("SP9", "dice_thrown", {"dice": [1, 2, 3, 4]})),
        "missing_field",
        "valid",
    ),
    (
        "a die of 7",
        json.dumps(_line("SP9", "dice_thrown", {"dice": [1, 2, 7, 4], "valid": True})),
        "invalid_value",
        "dice.2",
    ),
    (
        "Mah-Jong with four dice",
        json.dumps(_line("MJ", "dice_thrown", {"dice": [1, 2, 3, 4]})),
        "invalid_value",
        "dice",
    ),
    ("SP9 seat 27", _with(SP9_BET, spot={"kind": "hand", "seat": 27}), "invalid_value", "spot.seat"),
    (
        "SP9 spot of another game",
        _with(SP9_BET, spot={"kind": "tie", "seat": 2}),
        "invalid_value",
        "spot.kind",
    ),
    (
        "the banker does not join the bank",
        json.dumps(_line("SP9", "bank_joined", {"party": "banker", "capital": "100"})),
        "invalid_value",
        "party",
    ),
    (
        "bank layer seat:27",
        json.dumps(_line("SP9", "bank_settled", {"party": "seat:27", "result": "1", "commission": "0"})),
        "invalid_value",
        "party",
    ),
    (
        "a consent twice",
        json.dumps(_line("SP9", "bank_extended", {"consents": [2, 2]})),
        "invalid_value",
        "consents",
    ),
    (
        "3CB place 8",
        json.dumps(_line("3CB", "card_dealt", {"to": 8, "card": "AS", "face_up": True})),
        "invalid_value",
        "to",
    ),
    (
        "3CB dealer",
        json.dumps(_line("3CB", "card_dealt", {"to": "dealer", "card": "AS", "face_up": True})),
        "invalid_value",
        "to",
    ),
    (
        "3CB place true",
        json.dumps(_line("3CB", "deal_corrected", {"to": True, "card": "AS"})),
        "invalid_value",
        "to",
    ),
    (
        "3CB unknown spot",
        json.dumps(_line("3CB", "bet_placed", {"bet": "b1", "spot": {"kind": "banker"}, "amount": "1"})),
        "invalid_value",
        "spot",
    ),
    (
        "STUD banker",
        json.dumps(_line("STUD", "card_dealt", {"to": "banker", "card": "AS", "face_up": True})),
        "invalid_value",
        "to",
    ),
    (
        "STUD jackpot for a pair",
        json.dumps(_line("STUD", "jackpot_paid", {"bet": "j1", "hand": "pair", "amount": "10"})),
        "invalid_value",
        "hand",
    ),
    (
        "MJ from spelled from_",
        json.dumps({**{k: v for k, v in MJ_DRAW.items() if k != "from"}, "from_": "wall"}),
        "missing_field",
        "from",
    ),
    (
        "MJ optional from spelled from_",
        json.dumps(
            _line("MJ", "win_declared", {"seat": "N", "tile": "5D", "source": "discard", "from_": "E"})
        ),
        "unknown_key",
        "from_",
    ),
    ("MJ draw from the middle", _with(MJ_DRAW, **{"from": "middle"}), "invalid_value", "from"),
    ("MJ seat X", _with(MJ_DRAW, seat="X"), "invalid_value", "seat"),
    ("MJ stake not a row", _with_opened(stake="30/60"), "invalid_value", "stake"),
    ("MJ stake with separators", _with_opened(stake="1,000/2,000"), "invalid_value", "stake"),
    ("MJ simplified row in a conventional game", _with_opened(stake="20000/40000"), "invalid_value", "stake"),
    (
        "MJ conventional with 3 players",
        _with_opened(players={"E": "P-1", "S": "P-2", "W": "P-3"}, capital={"E": "1", "S": "1", "W": "1"}),
        "invalid_value",
        "players",
    ),
    (
        "MJ simplified without East",
        _with_opened(
            variant="simplified",
            stake="100/200",
            players={"S": "P-2", "W": "P-3"},
            capital={"S": "1", "W": "1"},
        ),
        "invalid_value",
        "players",
    ),
    (
        "MJ one player at two seats",
        _with_opened(players={"E": "P-1", "S": "P-1", "W": "P-3", "N": "P-4"}),
        "invalid_value",
        "players",
    ),
    (
        "MJ capital of an absent seat",
        _with_opened(
            variant="simplified",
            stake="100/200",
            players={"E": "P-1", "S": "P-2"},
            capital={"E": "1", "N": "1"},
        ),
        "invalid_value",
        "capital",
    ),
    ("MJ game 0", _with_opened(game_no=0), "invalid_value", "game_no"),
    (
        "MJ variant missing",
        json.dumps({k: v for k, v in MJ_OPEN.items() if k != "variant"}),
        "missing_field",
        "variant",
    ),
]


@pytest.mark.parametrize(
    ("text", "code", "field"), [r[1:] for r in REJECTIONS], ids=[r[0] for r in REJECTIONS]
)
def test_malformed_lines_are_rejected_with_code_and_field(text: str, code: str, field: str | None) -> None:
    result = parse_line(text, 12)
    assert isinstance(result, Rejection), result
    assert (result.code, result.field, result.line) == (code, field, 12), result.message
    assert result.message


def test_a_points_spot_out_of_range_names_the_field() -> None:
    result = parse_line(
        json.dumps(
            _line("3CB", "bet_placed", {"bet": "b1", "spot": {"kind": "points", "points": 10}, "amount": "1"})
        ),
        1,
    )
    assert isinstance(result, Rejection)
    assert (result.code, result.field) == ("invalid_value", "spot.points")


def test_literal_fields_reject_near_misses() -> None:
    for bad in ("Win", "win ", "WIN"):
        line = _line("MJ", "payment_made", {"from": "S", "to": "N", "amount": "1", "reason": bad})
        result = parse_line(json.dumps(line), 1)
        assert isinstance(result, Rejection)
        assert (result.code, result.field) == ("invalid_value", "reason")
