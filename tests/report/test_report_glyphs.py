"""Glyphs: every card, tile, die and wheel number maps to the right symbol; outcome lines are
read from the facts of every game, and an unknown event never breaks them."""

from __future__ import annotations

import unicodedata

import pytest

from ledger.feed.cards import CardDealt
from ledger.report.glyphs import card, die, fpc_face, outcome_lines, tile, wheel
from ledger.services.replay import replay_round
from ledger.storage.store import LedgerApp

RANKS = "A23456789TJQK"
SUITS = "SHDC"
TILES = [f"{n}{s}" for s in "BCD" for n in range(1, 10)] + ["EW", "SW", "WW", "NW", "RD", "GD", "WD"]


def test_the_52_cards_are_the_52_unicode_playing_cards_without_knights() -> None:
    names = {c: unicodedata.name(card(c).unicode) for c in (r + s for r in RANKS for s in SUITS)}
    assert len(set(names.values())) == 52
    assert names["AS"] == "PLAYING CARD ACE OF SPADES"
    assert names["TD"] == "PLAYING CARD TEN OF DIAMONDS"
    assert names["QH"] == "PLAYING CARD QUEEN OF HEARTS"
    assert names["KC"] == "PLAYING CARD KING OF CLUBS"
    assert not any("KNIGHT" in n for n in names.values())


@pytest.mark.parametrize(
    ("code", "text", "tone"),
    [
        ("AS", "A♠", "black"),
        ("TD", "10♦", "red"),
        ("10H", "10♥", "red"),
        ("7C", "7♣", "black"),
    ],
)
def test_card_text_and_colour(code: str, text: str, tone: str) -> None:
    assert (card(code).text, card(code).tone) == (text, tone)


def test_the_34_tiles_are_the_34_unicode_mahjong_tiles() -> None:
    names = {t: unicodedata.name(tile(t).unicode) for t in TILES}
    assert len(set(names.values())) == 34
    assert names["1C"] == "MAHJONG TILE ONE OF CHARACTERS"
    assert names["9B"] == "MAHJONG TILE NINE OF BAMBOOS"
    assert names["5D"] == "MAHJONG TILE FIVE OF CIRCLES"
    assert names["EW"] == "MAHJONG TILE EAST WIND"
    assert names["RD"] == "MAHJONG TILE RED DRAGON"
    assert names["GD"] == "MAHJONG TILE GREEN DRAGON"
    assert names["WD"] == "MAHJONG TILE WHITE DRAGON"


def test_dice_faces_and_fpc_figures() -> None:
    assert [unicodedata.name(die(n).text) for n in (1, 6)] == ["DIE FACE-1", "DIE FACE-6"]
    assert [fpc_face(n).label for n in range(1, 7)] == [
        "fish (red)",
        "prawn (green)",
        "calabash (blue)",
        "coin (blue)",
        "crab (green)",
        "rooster (red)",
    ]


def test_the_wheel_has_18_red_18_black_and_a_green_zero() -> None:
    tones = [wheel(n).tone for n in range(37)]
    assert (tones.count("red"), tones.count("black"), tones.count("green")) == (18, 18, 1)
    assert (wheel(1).tone, wheel(2).tone, wheel(36).tone) == ("red", "black", "red")


@pytest.mark.parametrize(
    "bad",
    [
        lambda: card("1S"),
        lambda: card("AX"),
        lambda: tile("0B"),
        lambda: tile("XW"),
        lambda: die(7),
        lambda: wheel(37),
        lambda: fpc_face(0),
    ],
)
def test_what_is_not_equipment_is_refused(bad) -> None:
    with pytest.raises(ValueError):
        bad()


def _lines(app: LedgerApp, table: str, round_: str) -> list[str]:
    replay = replay_round(app, table, round_)
    assert replay is not None
    return [line.text for line in outcome_lines(replay.round)]


def test_outcome_lines_of_each_game(examples_ledger: LedgerApp) -> None:
    assert _lines(examples_ledger, "RL-01", "000001") == ["spin (seq 8): 10"]
    assert _lines(examples_ledger, "FPC-01", "000001") == ["dice (seq 10): 5 crab 6 rooster 3 calabash"]
    assert _lines(examples_ledger, "3CB-01", "000001") == [
        "burned: 4♣",
        "seat 1: 6♥ Q♠ 10♦",
        "seat 2: 4♥ 2♣ J♦",
        "seat 3: Q♥ 10♠ 9♦",
        "banker: K♥ 10♥ 9♣",
    ]
    sp9 = _lines(examples_ledger, "SP9-01", "000001")
    assert sp9[0] == "dice (seq 7): ⚄ ⚂ ⚄ ⚀" and "seat 1: 9♦ Q♥" in sp9
    mj = _lines(examples_ledger, "MJ-01", "g1")
    assert mj[-1] == "N wins on: 🀝 (discard)"
    assert sum(len(line.split(": ")[1].split()) for line in mj if " drew:" in line) == sum(
        1
        for line in (examples_ledger.load_round("MJ-01", "g1") or _fail()).events
        if line.type == "tile_drawn"
    )


def _fail() -> None:
    raise AssertionError("round missing")


def test_every_dealt_card_of_the_stud_example_is_shown(examples_ledger: LedgerApp) -> None:
    for round_ in ("000001", "000002", "000003", "000004"):
        replay = replay_round(examples_ledger, "STUD-01", round_)
        assert replay is not None
        dealt = [str(e.card) for e in replay.round.events if isinstance(e, CardDealt)]
        shown = [
            g.code
            for line in outcome_lines(replay.round)
            if not line.label.startswith(("burned", "exposed"))
            for g in line.glyphs
        ]
        assert sorted(shown) == sorted(dealt) and len(dealt) >= 10
