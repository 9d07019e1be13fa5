"""3-Card Baccarat rules (Portaria 22/96/M, RULES §3) as pure functions over cards and a stake.

- :func:`evaluate` — a three-card hand's points, figures and level (3CB art. 5 and annex), the
  level by the formula of RULES §3.5 (:func:`level_number`), cross-checked against the data in
  ``tables.RANKING`` by the tests;
- :func:`compare` — a place against the banker: better level wins, same level ties (art. 6–7);
- :func:`settle` — the settlement one bet is due once the hands are known (arts. 6–10):

  ====================  =================================  =========  ==========
  spot                  wins when                          prize      commission
  ====================  =================================  =========  ==========
  ``hand`` (seat S)     S's level better than the banker's 1 to 1     5% of prize
  ``tie`` (seat S)      S's level equals the banker's      20 to 1    none
  ``odd`` / ``even``    banker's points odd / even         1 to 1     5% of prize
  ``three_figures``     banker holds three figures         16 to 1    none
  ``points`` (n)        banker's points equal n            8 to 1     none
  ====================  =================================  =========  ==========

  A main bet that ties is ``carry`` (art. 7(2)); odd/even on a three-figure banker is ``carry``
  (art. 8(1)); a ``points`` 0 bet on three figures follows ``tcb.points0_on_three_figures``
  (B1: lose by default, or win, or push = stake returned).

Amounts are ``Decimal``; the commission is rounded once, by the rulebook's policy (RULES §8 G1).

>>> from ledger.domain.equipment import Card
>>> hand = evaluate([Card.parse(c) for c in ("QS", "JD", "9C")])
>>> hand.level.level, hand.level.name
(2, '9 with two figures')
>>> level_number(0, 2), level_number(9, 0)
(29, 4)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Final, Literal

from ledger.domain.equipment import Card, Rank
from ledger.domain.money import ZERO, round_money
from ledger.domain.rulebook import DEFAULT_RULEBOOK, Rulebook
from ledger.games.base import Settlement
from ledger.games.three_card_baccarat.feed import (
    HandSpot,
    ParitySpot,
    PointsSpot,
    ThreeFiguresSpot,
    TieSpot,
)
from ledger.games.three_card_baccarat.tables import (
    CARD_POINTS,
    CARDS_PER_HAND,
    CARRY_RULE,
    FIGURES,
    LEVELS,
    PARITY_CARRY_RULE,
    POINTS_ON_THREE_FIGURES_RULE,
    PRIZES,
    RANKING,
    RANKING_RULE,
    THREE_FIGURES,
    Level,
)

Spot = HandSpot | TieSpot | ParitySpot | ThreeFiguresSpot | PointsSpot
"""A spot on the 3CB layout (FEED §5)."""

SEATED_SPOTS: Final = (HandSpot, TieSpot)
"""The spots that stand on a seat's hand, for ``isinstance`` (a tuple: ``HandSpot | TieSpot``
would build a union object at every test)."""

ThreeFiguresOption = Literal["any", "kqj_only"]
Comparison = Literal["win", "lose", "tie"]

KQJ = frozenset({Rank.KING, Rank.QUEEN, Rank.JACK})


@dataclass(frozen=True)
class HandValue:
    """A hand of three cards valued under the annex."""

    cards: tuple[Card, ...]
    points: int
    figures: int
    three_figures: bool
    level: Level

    def describe(self) -> str:
        """``QS JD 9C: 9 with two figures (level 2)``."""
        shown = " ".join(str(c) for c in self.cards)
        return f"{shown}: {self.level.name} (level {self.level.level})"


def card_points(card: Card) -> int:
    """A = 1, 2–9 face value, 10/J/Q/K = 0 (3CB art. 5(1))."""
    return CARD_POINTS[card.rank]


def is_figure(card: Card) -> bool:
    """J, Q or K (3CB art. 5; the 10 is not a figure)."""
    return card.rank in FIGURES


def is_three_figures(cards: Sequence[Card], option: ThreeFiguresOption = "any") -> bool:
    """Three figure cards: any three of J/Q/K, or one each of K, Q, J (RULES §8.3 B8)."""
    if len(cards) != CARDS_PER_HAND or not all(is_figure(c) for c in cards):
        return False
    return option == "any" or {c.rank for c in cards} == KQJ


def level_number(points: int, figures: int) -> int:
    """The annex level by the formula of RULES §3.5 for a hand that is not three figures.

    ``figures`` above 2 counts as 2: under ``tcb.three_figures = kqj_only`` a K-K-J is not
    "three figures" and ranks as 0 with (two) figures, level 29 [I] (RULES §8.3 B8).
    """
    if not 0 <= points <= 9 or figures < 0:
        raise ValueError(f"no level for {points} points with {figures} figures")
    return 2 + 3 * (9 - points) + (2 - min(figures, 2))


def evaluate(cards: Sequence[Card], three_figures: ThreeFiguresOption = "any") -> HandValue:
    """Value a three-card hand (3CB art. 5 and annex); raises ``ValueError`` for another count."""
    if len(cards) != CARDS_PER_HAND:
        raise ValueError(f"a 3CB hand has {CARDS_PER_HAND} cards, not {len(cards)}")
    points = sum(card_points(c) for c in cards) % 10
    figures = sum(1 for c in cards if is_figure(c))
    if is_three_figures(cards, three_figures):
        return HandValue(tuple(cards), points, figures, True, THREE_FIGURES)
    level = RANKING[level_number(points, figures) - 1]
    return HandValue(tuple(cards), points, figures, False, level)


def level_of(points: int, figures: int) -> Level:
    """The level of a non-three-figures hand read from the annex data (``tables.LEVELS``)."""
    return LEVELS[(points, min(figures, 2))]


def compare(place: HandValue, banker: HandValue) -> Comparison:
    """A place against the banker: the better (lower-numbered) level wins, the same level ties
    (3CB art. 6, art. 7(1))."""
    if place.level.level < banker.level.level:
        return "win"
    if place.level.level > banker.level.level:
        return "lose"
    return "tie"


def settle(
    spot: Spot, stake: Decimal, banker: HandValue, place: HandValue | None, rules: Rulebook = DEFAULT_RULEBOOK
) -> Settlement:
    """The settlement a bet of ``stake`` on ``spot`` is due (3CB arts. 6–10, RULES §3.6–§3.7).

    ``place`` is the hand of the bet's seat for ``hand`` and ``tie`` spots (ignored otherwise).
    """
    if isinstance(spot, SEATED_SPOTS):
        if place is None:
            raise ValueError(f"a {spot.kind} bet needs the hand of seat {spot.seat}")
        return _settle_against(spot, stake, banker, place, rules)
    if isinstance(spot, ParitySpot):
        return _settle_parity(spot, stake, banker, rules)
    if isinstance(spot, ThreeFiguresSpot):
        if banker.three_figures:
            return win("three_figures", stake, rules, "the banker holds three figures")
        return Settlement.lose(
            PRIZES["three_figures"].rule, f"the banker holds {banker.level.name}, not three figures"
        )
    return _settle_points(spot, stake, banker, rules)


def _settle_against(
    spot: HandSpot | TieSpot, stake: Decimal, banker: HandValue, place: HandValue, rules: Rulebook
) -> Settlement:
    outcome = compare(place, banker)
    versus = f"seat {spot.seat} level {place.level.level} vs banker level {banker.level.level}"
    if spot.kind == "tie":
        if outcome == "tie":
            return win("tie", stake, rules, f"{versus}: a tie pays 20 to 1")
        return Settlement.lose(PRIZES["tie"].rule, f"{versus}: no tie")
    if outcome == "win":
        return win("hand", stake, rules, f"{versus}: the place wins 1 to 1 less 5%")
    if outcome == "tie":
        return Settlement.carry(
            CARRY_RULE, f"{versus}: a tie, the main bet is carried over to the table's next round"
        )
    return Settlement.lose(PRIZES["hand"].rule, f"{versus}: the banker wins")


def _settle_parity(spot: ParitySpot, stake: Decimal, banker: HandValue, rules: Rulebook) -> Settlement:
    if banker.three_figures:
        return Settlement.carry(
            PARITY_CARRY_RULE,
            f"the banker holds three figures: {spot.kind} is carried over to the table's next round",
        )
    parity = "odd" if banker.points % 2 else "even"
    if parity == spot.kind:
        return win(spot.kind, stake, rules, f"the banker's {banker.points} is {parity}: 1 to 1 less 5%")
    return Settlement.lose(PRIZES[spot.kind].rule, f"the banker's {banker.points} is {parity}")


def _settle_points(spot: PointsSpot, stake: Decimal, banker: HandValue, rules: Rulebook) -> Settlement:
    if banker.three_figures and spot.points == 0:
        option = rules.tcb.points0_on_three_figures
        why = f"points 0 on three figures (tcb.points0_on_three_figures = {option})"
        if option == "win":
            return Settlement(
                "win",
                stake,
                PRIZES["points"].prize(stake),
                ZERO,
                POINTS_ON_THREE_FIGURES_RULE,
                f"{why}: pays 8 to 1",
            )
        if option == "push":
            return Settlement(
                "push", stake, ZERO, ZERO, POINTS_ON_THREE_FIGURES_RULE, f"{why}: stake returned"
            )
        return Settlement.lose(POINTS_ON_THREE_FIGURES_RULE, f"{why}: three figures is its own category")
    if banker.three_figures:
        return Settlement.lose(PRIZES["points"].rule, f"the banker holds three figures, not {spot.points}")
    if banker.points == spot.points:
        return win("points", stake, rules, f"the banker has {banker.points} points: pays 8 to 1")
    return Settlement.lose(PRIZES["points"].rule, f"the banker has {banker.points} points, not {spot.points}")


def commission(prize: Decimal, rate: Decimal, rules: Rulebook = DEFAULT_RULEBOOK) -> Decimal:
    """``rate`` of the prize, rounded by the rulebook's policy (3CB art. 10, RULES §8 G1)."""
    if rate == 0:
        return ZERO
    return round_money(prize * rate, mode=rules.rounding.mode, increment=rules.rounding.increment)


def win(
    kind: Literal["hand", "tie", "odd", "even", "three_figures", "points"],
    stake: Decimal,
    rules: Rulebook,
    reason: str,
) -> Settlement:
    """A won bet: the stake back, the prize on top, and the commission on the prize."""
    odds = PRIZES[kind]
    prize = odds.prize(stake)
    return Settlement("win", stake, prize, commission(prize, odds.commission_rate, rules), odds.rule, reason)


def describe_spot(spot: Spot) -> str:
    """``hand 3``, ``tie 2``, ``odd``, ``three figures``, ``points 6``."""
    if isinstance(spot, SEATED_SPOTS):
        return f"{spot.kind} {spot.seat}"
    if isinstance(spot, PointsSpot):
        return f"points {spot.points}"
    return spot.kind.replace("_", " ")


__all__ = [
    "RANKING_RULE",
    "HandValue",
    "Spot",
    "card_points",
    "commission",
    "compare",
    "describe_spot",
    "evaluate",
    "is_figure",
    "is_three_figures",
    "level_number",
    "level_of",
    "settle",
    "win",
]
