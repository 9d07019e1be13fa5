"""The pool arithmetic of STUD art. 10 and RULES §8.6 P4–P12, one rule per test."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.domain.rulebook import JackpotOptions, Rounding
from ledger.games.stud_poker.pool import Hit, settle_pool
from ledger.games.stud_poker.tables import JACKPOT_HANDS, Category

D = Decimal
FIXED = {
    "flush": "200",
    "full_house": "400",
    "four_of_a_kind": "2000",
    "straight_flush": "5000",
    "royal_flush": "50000",
}


def opts(**kw: Any) -> JackpotOptions:
    return JackpotOptions.model_validate(
        {"pool": "P", "bet_amount": "10", "contribution_rate": "0.2", "seed": "50000", "fixed": FIXED, **kw}
    )


def bets(n: int) -> list[tuple[str, Decimal]]:
    return [(f"j{i}", D("10")) for i in range(1, n + 1)]


def test_contributions_come_first_and_a_new_pool_opens_at_its_seed() -> None:
    r = settle_pool(None, opts(), Rounding(), bets(3), [])
    assert (r.opened, r.start, r.after_contributions, r.end) == (True, D(50000), D(50006), D(50006))


def test_straight_flushes_each_take_ten_percent_of_the_pool_at_the_start() -> None:
    r = settle_pool(
        D("99994"),
        opts(),
        Rounding(),
        bets(3),
        [Hit("j1", 1, Category.STRAIGHT_FLUSH), Hit("j2", 2, Category.STRAIGHT_FLUSH)],
    )
    assert [a.amount for a in r.awards] == [D("10000.00"), D("10000.00")]
    assert r.end == D("80000.00")
    running = settle_pool(
        D("99994"),
        opts(sf_base="running"),
        Rounding(),
        bets(3),
        [Hit("j1", 1, Category.STRAIGHT_FLUSH), Hit("j2", 2, Category.STRAIGHT_FLUSH)],
    )
    assert [a.amount for a in running.awards] == [D("10000.00"), D("9000.00")]


def test_three_royal_flushes_share_the_pool_exactly_then_it_resets() -> None:
    r = settle_pool(
        D("99999.99"),
        opts(),
        Rounding(),
        bets(3),
        [
            Hit("j2", 2, Category.ROYAL_FLUSH),
            Hit("j1", 1, Category.ROYAL_FLUSH),
            Hit("j3", 3, Category.ROYAL_FLUSH),
        ],
    )
    assert [a.amount for a in r.awards] == [D("33335.33")] * 3  # 100005.99 / 3, rounded down
    assert r.after_contributions - D("33335.33") * 3 == 0  # nothing left: reset (P11)
    assert r.reset == D(50000) and r.end == D(50000)


def test_remainder_kept_when_the_pool_is_not_emptied() -> None:
    r = settle_pool(
        D("100000.00"),
        opts(),
        Rounding(),
        [("j1", D("10")), ("j2", D("10")), ("j3", D("10.05"))],
        [Hit("j1", 1, Category.ROYAL_FLUSH), Hit("j2", 2, Category.ROYAL_FLUSH)],
    )
    # 100006.01 shared by two: 50003.00 each, 0.01 stays in the pool (P12), no reset
    assert [a.amount for a in r.awards] == [D("50003.00"), D("50003.00")]
    assert (r.end, r.reset) == (D("0.01"), D(0))


def test_straight_flush_paid_before_royal_flush_and_house_covers_excess() -> None:
    r = settle_pool(
        D("50004"),
        opts(),
        Rounding(),
        bets(3),
        [Hit("j2", 2, Category.ROYAL_FLUSH), Hit("j1", 1, Category.STRAIGHT_FLUSH)],
    )
    assert [(a.bet, a.amount, a.from_pool, a.from_house) for a in r.awards] == [
        ("j1", D("5001.00"), D("5001.00"), D(0)),
        ("j2", D(50000), D("45009.00"), D("4991.00")),
    ]
    assert r.reset == D(50000) and r.end == D(50000)


@pytest.mark.parametrize("from_pool", [False, True])
def test_fixed_sums_are_house_funded_unless_configured(from_pool: bool) -> None:
    r = settle_pool(
        D("1000"),
        opts(fixed_from_pool=from_pool),
        Rounding(),
        bets(1),
        [Hit("j1", 1, Category.FOUR_OF_A_KIND)],
    )
    assert r.awards[0].amount == D(2000)
    if from_pool:
        assert (r.awards[0].from_pool, r.awards[0].from_house, r.reset) == (D(1002), D(998), D(50000))
    else:
        assert (r.awards[0].from_house, r.end) == (D(2000), D(1002))


@given(
    st.lists(st.tuples(st.sampled_from(JACKPOT_HANDS), st.booleans()), max_size=7),
    st.decimals(min_value=0, max_value=10**6, places=2),
)
def test_conservation_and_never_negative(hands: list[tuple[Category, bool]], balance: Decimal) -> None:
    stakes = bets(len(hands) + 1)
    hits = [Hit(f"j{i + 1}", i + 1, c) for i, (c, hit) in enumerate(hands) if hit]
    r = settle_pool(balance, opts(), Rounding(), stakes, hits)
    assert r.end == r.start + r.contributed - r.paid_from_pool + r.reset
    assert r.end > 0
    assert all(a.from_pool + a.from_house == a.amount and a.from_pool >= 0 for a in r.awards)
