"""Roulette rules (DRE 60/2004, RULES §5) as pure functions over a spot and a number.

- :func:`covered_numbers` — the numbers a spot covers (RULES §5.4);
- :func:`spot_issue` / :func:`spot_problem` — why a spot is not on the layout or not offered
  (RULES §5.4, §8.5 R1, R3, R4), or ``None`` for a valid spot;
- :func:`settle` — the settlement a bet is due once the ball has landed: a covered number wins
  ``36/n − 1`` to 1 with the stake returned (RL art. 7); on 0 only a straight-up bet on 0 wins,
  every other bet loses to the house (RL art. 8). Roulette takes no commission (RULES §5).

Amounts are ``Decimal``; every prize is a whole multiple of the stake, so nothing is rounded.

>>> from ledger.games.roulette.feed import NumbersSpot, OutsideSpot
>>> settle(NumbersSpot(kind="straight", numbers=(17,)), Decimal("100"), 17).as_dict()
{'result': 'win', 'returned': '100', 'won': '3500', 'commission': '0'}
>>> settle(OutsideSpot(kind="red"), Decimal("500"), 0).reason
'0: only a straight-up on 0 wins; red loses'
>>> spot_problem(NumbersSpot(kind="split", numbers=(1, 5)), DEFAULT_RULEBOOK)
'1 and 5 are not adjacent on the 3-column layout: not a split'
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from ledger.domain.money import ZERO
from ledger.domain.rulebook import DEFAULT_RULEBOOK, Rulebook
from ledger.games.base import Settlement
from ledger.games.roulette.feed import GroupSpot, NumbersSpot, OutsideSpot
from ledger.games.roulette.tables import (
    COLUMNS,
    DOZENS,
    LAYOUT_SPOTS,
    OUTSIDE,
    PAYOUTS,
    RED_NUMBERS,
    SPOT_SIZES,
    ZERO_SPOTS,
    LayoutKind,
)

Spot = NumbersSpot | GroupSpot | OutsideSpot
"""A spot on the roulette layout (FEED §3)."""

PRIZE_RULE = "RL art. 7"
ZERO_RULE = "RL art. 8"
LAYOUT_RULE = "RULES §5.4 (layout), §8.5 R1"
ZERO_COMBINATION_RULE = "RULES §8.5 R3"
SECTOR_RULE = "RULES §8.5 R4"

_SHAPES: dict[LayoutKind, str] = {
    "split": "not adjacent on the 3-column layout: not a split",
    "street": "not a row of three (a street) on the layout",
    "corner": "not four numbers meeting at a corner of the layout",
    "line": "not two adjacent streets (a line) on the layout",
}


@dataclass(frozen=True)
class SpotIssue:
    """Why a spot cannot be taken, and the rule that says so."""

    rule: str
    message: str


def covered_numbers(spot: Spot, rulebook: Rulebook = DEFAULT_RULEBOOK) -> frozenset[int]:
    """The numbers a spot covers (RULES §5.4).

    An inside spot or a sector names its numbers; the rulebook decides only whether the spot
    is offered (:func:`spot_issue`), never what it covers, and is accepted for symmetry.
    """
    if isinstance(spot, NumbersSpot):
        return frozenset(spot.numbers)
    if isinstance(spot, GroupSpot):
        return (COLUMNS if spot.kind == "column" else DOZENS)[spot.which]
    return OUTSIDE[spot.kind]


def spot_issue(spot: Spot, rulebook: Rulebook) -> SpotIssue | None:
    """Why ``spot`` is not on the layout or not offered by ``rulebook``; ``None`` if valid.

    Columns, dozens and the even-money bets are always on the layout; an inside spot must name
    ``n`` distinct numbers forming its shape (:data:`~.tables.LAYOUT_SPOTS`); combinations
    with 0 exist only under ``rl.zero_combinations`` (R3) and sectors only where
    ``rl.sectors`` lists them (R4).
    """
    if not isinstance(spot, NumbersSpot):
        return None
    kind = spot.kind
    size_issue = _size_issue(spot)
    if size_issue is not None or kind == "straight":
        return size_issue
    if kind == "nine" or kind == "twelve":
        return _sector_issue(spot, rulebook)
    return _layout_issue(spot, kind, rulebook)


def spot_problem(spot: Spot, rulebook: Rulebook) -> str | None:
    """The message of :func:`spot_issue`: why the spot is not on the layout, or ``None``."""
    issue = spot_issue(spot, rulebook)
    return None if issue is None else issue.message


def _size_issue(spot: NumbersSpot) -> SpotIssue | None:
    size = SPOT_SIZES[spot.kind]
    if len(set(spot.numbers)) != len(spot.numbers):
        return SpotIssue(PRIZE_RULE, f"{spot.kind} names a number twice: {_dashed(spot.numbers)}")
    if len(spot.numbers) != size:
        return SpotIssue(
            PRIZE_RULE,
            f"a {spot.kind} covers {size} numbers, not {len(spot.numbers)}: {_dashed(spot.numbers)}",
        )
    return None


def _sector_issue(spot: NumbersSpot, rulebook: Rulebook) -> SpotIssue | None:
    sectors = rulebook.rl.sectors.nine if spot.kind == "nine" else rulebook.rl.sectors.twelve
    if frozenset(spot.numbers) in {frozenset(s) for s in sectors}:
        return None
    return SpotIssue(
        SECTOR_RULE,
        f"{_dashed(spot.numbers)} is not an authorised "
        f"{SPOT_SIZES[spot.kind]}-number sector (rl.sectors.{spot.kind})",
    )


def _layout_issue(spot: NumbersSpot, kind: LayoutKind, rulebook: Rulebook) -> SpotIssue | None:
    numbers = frozenset(spot.numbers)
    if 0 in numbers:
        if not rulebook.rl.zero_combinations:
            return SpotIssue(
                ZERO_COMBINATION_RULE,
                f"{kind} {_dashed(spot.numbers)} includes 0: combinations with 0 "
                "are not offered (rl.zero_combinations is false)",
            )
        if numbers not in ZERO_SPOTS[kind]:
            return SpotIssue(
                ZERO_COMBINATION_RULE, f"{_dashed(spot.numbers)} is not a {kind} of the zero area"
            )
        return None
    if numbers in LAYOUT_SPOTS[kind]:
        return None
    shown = " and ".join(str(n) for n in sorted(numbers)) if kind == "split" else _dashed(spot.numbers)
    verb = "are" if kind in ("split", "corner") else "is"
    return SpotIssue(LAYOUT_RULE, f"{shown} {verb} {_SHAPES[kind]}")


def settle(spot: Spot, amount: Decimal, number: int) -> Settlement:
    """The settlement a bet of ``amount`` on ``spot`` is due when the ball lands on ``number``.

    A covered number wins its prize with the stake returned (RL art. 7). On 0 only a straight-up
    bet on 0 wins; every other bet loses, a combination including 0 too (RL art. 8, R3).
    """
    if number == 0 and not _is_straight_zero(spot):
        return Settlement.later("lose", ZERO, ZERO, ZERO, ZERO_RULE, _zero_loses, spot)
    if number not in covered_numbers(spot):
        return Settlement.later("lose", ZERO, ZERO, ZERO, PRIZE_RULE, _not_covered, number, spot)
    odds = PAYOUTS[spot.kind]
    rule = ZERO_RULE if number == 0 else odds.rule
    return Settlement.later("win", amount, odds.prize(amount), ZERO, rule, _pays, spot, odds.to_win)


def _zero_loses(spot: Spot) -> str:
    return f"0: only a straight-up on 0 wins; {describe_spot(spot)} loses"


def _not_covered(number: int, spot: Spot) -> str:
    return f"{number} is not covered by {describe_spot(spot)}"


def _pays(spot: Spot, to_win: int) -> str:
    return f"{describe_spot(spot)} pays {to_win} to 1"


def _is_straight_zero(spot: Spot) -> bool:
    return isinstance(spot, NumbersSpot) and spot.kind == "straight" and spot.numbers == (0,)


def describe_spot(spot: Spot) -> str:
    """A spot in words: ``straight-up on 17``, ``split 8-11``, ``column 3``, ``red``."""
    if isinstance(spot, NumbersSpot):
        if spot.kind == "straight":
            return f"straight-up on {_dashed(spot.numbers)}"
        if spot.kind in ("nine", "twelve"):
            return f"{SPOT_SIZES[spot.kind]}-number sector {_dashed(spot.numbers)}"
        return f"{spot.kind} {_dashed(spot.numbers)}"
    if isinstance(spot, GroupSpot):
        return f"{spot.kind} {spot.which}"
    return spot.kind


def describe_number(number: int) -> str:
    """What a number wins on the layout: ``17: black, odd, low, dozen 2, column 2``."""
    if number == 0:
        return "0: zero, no colour; only a straight-up on 0 wins (RL art. 8)"
    colour = "red" if number in RED_NUMBERS else "black"
    parity = "even" if number % 2 == 0 else "odd"
    half = "low" if number <= 18 else "high"
    dozen = (number - 1) // 12 + 1
    column = (number - 1) % 3 + 1
    return f"{number}: {colour}, {parity}, {half}, dozen {dozen}, column {column}"


def _dashed(numbers: tuple[int, ...]) -> str:
    return "-".join(str(n) for n in numbers)
