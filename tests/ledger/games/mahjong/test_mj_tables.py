"""Mah-Jong data against RULES §9.4: tile sets, the deal, units, penalties and commission."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

import pytest

from ledger.games.mahjong.fan import CONVENTIONAL, SIMPLIFIED
from ledger.games.mahjong.feed import STAKE_ROWS
from ledger.games.mahjong.payments import false_win_payments, shares
from ledger.games.mahjong.tables import COMMISSION, LAYOUTS, deal_order, unit
from ledger.games.mahjong.tiles import ORPHANS, SEATS, tile_set

A = Decimal("25")


def test_the_sets_have_136_and_112_tiles_four_of_each() -> None:
    for variant, total, kinds in (("conventional", 136, 34), ("simplified", 112, 28)):
        tiles = tile_set(variant)  # type: ignore[arg-type]
        assert len(tiles) == total == LAYOUTS[variant].tiles  # type: ignore[index]
        assert set(Counter(tiles).values()) == {4} and len(set(tiles)) == kinds


def test_the_deal_leaves_83_and_95_tiles_in_the_wall() -> None:
    c, s = deal_order("conventional", SEATS), deal_order("simplified", SEATS)
    assert len(c) == 53 and 136 - len(c) == 83
    assert Counter(c) == {"E": 14, "S": 13, "W": 13, "N": 13}
    assert len(s) == 17 and 112 - len(s) == 95
    assert Counter(s) == {"E": 5, "S": 4, "W": 4, "N": 4}
    assert Counter(deal_order("simplified", ("E", "S", "W"))) == {"E": 5, "S": 4, "W": 4}


def test_thirteen_orphans_uses_thirteen_kinds() -> None:
    assert len(set(ORPHANS)) == 13


@pytest.mark.parametrize("fan", [0, 1, 2])
def test_a_non_banker_collects_4u_and_the_banker_6u(fan: int) -> None:
    u = unit(A, fan)
    assert sum(shares(SEATS, "S", A, fan).values()) == 4 * u
    assert sum(shares(SEATS, "E", A, fan).values()) == 6 * u


def test_the_range_is_4a_to_24a() -> None:
    assert sum(shares(SEATS, "N", A, 0).values()) == 4 * A
    assert sum(shares(SEATS, "E", A, 2).values()) == 24 * A


def test_commission_is_0_4_a_in_mjc_and_0_2_a_in_mjs_on_every_row() -> None:
    for variant, rate in (("conventional", Decimal("0.4")), ("simplified", Decimal("0.2"))):
        rows = COMMISSION[variant]  # type: ignore[index]
        assert list(rows) == list(STAKE_ROWS[variant])
        for row, amount in rows.items():
            assert amount == Decimal(row.split("/")[0]) * rate
    assert COMMISSION["conventional"]["25/50"] == 10  # the $25/$50 example of §9.4


def test_false_win_penalties_total_12a_8a_and_6a() -> None:
    def total(variant: str, who: str) -> Decimal:
        return sum(
            (p.amount for p in false_win_payments(SEATS, who, variant, A)),  # type: ignore[arg-type]
            Decimal(0),
        )

    assert total("conventional", "E") == 12 * A
    assert total("conventional", "S") == 8 * A
    assert total("simplified", "W") == 6 * A


def test_the_fan_tables_list_every_element_of_rules_4_6_once() -> None:
    codes = [e.code for e in CONVENTIONAL]
    assert codes == [f"E{i}" for i in range(1, 13)] + [f"D{i}" for i in range(1, 13)]
    assert [e.fan for e in CONVENTIONAL] == [1] * 12 + [2] * 12
    assert [e.code for e in SIMPLIFIED] == ["S1", "S2", "S3"]
    assert all("MJ art." in e.rule and "RULES §4.6" in e.rule for e in (*CONVENTIONAL, *SIMPLIFIED))
