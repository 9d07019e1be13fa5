"""Fish-Prawn-Crab rules as pure functions: what a spot wins on three dice (RULES §2.4).

Notation of RULES §2.4: ``n(x)`` how many dice show figure x, ``c(col)`` how many show colour
col, ``S`` the sum of the three numbers, a triple when all three show the same figure.

- Small / Big (art. 5 a)–b) [R]) lose on every triple (art. 7).
- The totals (art. 5 j)) are not affected by triples: 2-2-2 pays the total 6 (F3).
- The colour bets mean "exactly" one or two dice (F4, §2.5) and are independent of each other:
  three reds pay three of red and any same colour, and lose one and two of red.
- There is no commission in this game (RULES §2.3 step 6).

>>> settle(FigureSpot(kind="figure", face=5), Decimal("100"), (1, 5, 5)).as_dict()
{'result': 'win', 'returned': '100', 'won': '200', 'commission': '0'}
>>> describe((1, 5, 5))
'dice 1-5-5: fish red, crab green ×2; total 11'
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from typing import assert_never

from ledger.domain.money import ZERO
from ledger.games.base import Settlement, Verdict
from ledger.games.fish_prawn_crab.feed import (
    AnySpot,
    ColourSpot,
    Dice,
    EvenSpot,
    FigureSpot,
    Spot,
    TotalSpot,
)
from ledger.games.fish_prawn_crab.tables import (
    BIG_TOTALS,
    FACES,
    FIGURE_PRIZES,
    PRIZES,
    SMALL_BIG_LOSE_ON_TRIPLES,
    SMALL_TOTALS,
    TOTAL_PRIZES,
    TOTALS_ON_TRIPLES,
    Prize,
)

COLOUR_COUNTS = {"one_colour": 1, "two_colours": 2, "three_colours": 3}
"""How many dice of the chosen colour each colour bet needs, exactly (F4)."""

SpotVerdict = Verdict[Prize | None]
"""Whether a spot wins on one throw: the prize (``None``: it loses), the article, why."""


def total(dice: Dice) -> int:
    """``S``: the sum of the three face numbers."""
    return sum(dice)


def figure_count(dice: Dice, face: int) -> int:
    """``n(x)``: how many dice show the figure of ``face``."""
    return dice.count(face)


def colour_count(dice: Dice, colour: str) -> int:
    """``c(col)``: how many dice show ``colour``."""
    return sum(1 for d in dice if FACES[d].colour == colour)


def is_triple(dice: Dice) -> bool:
    """All three dice show the same figure (art. 5 i), art. 7)."""
    return len(set(dice)) == 1


def is_one_colour(dice: Dice) -> bool:
    """All three dice show the same colour (art. 5 g) [R])."""
    return len({FACES[d].colour for d in dice}) == 1


def describe(dice: Dice) -> str:
    """The throw in words: ``dice 1-5-5: fish red, crab green ×2; total 11``."""
    counts = Counter(dice)  # keeps the order in which the faces first appear
    faces = ", ".join(
        f"{FACES[d].figure} {FACES[d].colour}" + (f" ×{n}" if n > 1 else "") for d, n in counts.items()
    )
    return f"dice {'-'.join(map(str, dice))}: {faces}; total {total(dice)}"


def label(spot: Spot) -> str:
    """The spot in words, for steps and finding messages."""
    if isinstance(spot, FigureSpot):
        return f"{spot.kind.replace('_', ' ')} {FACES[spot.face].figure} ({spot.face})"
    if isinstance(spot, ColourSpot):
        return f"{spot.kind.replace('_', ' ')} {spot.colour}"
    if isinstance(spot, TotalSpot):
        return f"total {spot.total}"
    return spot.kind.replace("_", " ")


def _pays(prize: Prize | None) -> str:
    return "loses" if prize is None else f"pays {prize.odds} to 1"


def _even(spot: EvenSpot, dice: Dice) -> SpotVerdict:
    s = total(dice)
    if is_triple(dice):
        return Verdict(
            None, SMALL_BIG_LOSE_ON_TRIPLES, f"{spot.kind} loses on the triple {dice[0]}-{dice[0]}-{dice[0]}"
        )
    winning = SMALL_TOTALS if spot.kind == "small" else BIG_TOTALS
    prize = PRIZES[spot.kind] if s in winning else None
    side = "small" if s in SMALL_TOTALS else "big"
    return Verdict(prize, PRIZES[spot.kind].rule, f"total {s} is {side}: {spot.kind} {_pays(prize)}")


def _figure(spot: FigureSpot, dice: Dice) -> SpotVerdict:
    n = figure_count(dice, spot.face)
    prize = FIGURE_PRIZES.get(n)
    return Verdict(prize, FIGURE_PRIZES[1].rule, f"{label(spot)} shows on {n} of the dice: {_pays(prize)}")


def _specific_triple(spot: FigureSpot, dice: Dice) -> SpotVerdict:
    n = figure_count(dice, spot.face)
    prize = PRIZES["specific_triple"] if n == 3 else None
    return Verdict(
        prize,
        PRIZES["specific_triple"].rule,
        f"{FACES[spot.face].figure} ({spot.face}) shows on {n} of the dice, the bet needs 3: {_pays(prize)}",
    )


def _colour(spot: ColourSpot, dice: Dice) -> SpotVerdict:
    c = colour_count(dice, spot.colour)
    needed = COLOUR_COUNTS[spot.kind]
    prize = PRIZES[spot.kind] if c == needed else None
    return Verdict(
        prize,
        PRIZES[spot.kind].rule,
        f"{spot.colour} shows on exactly {c} of the dice, the bet needs exactly {needed}: {_pays(prize)}",
    )


def _any(spot: AnySpot, dice: Dice) -> SpotVerdict:
    hit = is_one_colour(dice) if spot.kind == "any_three_colour" else is_triple(dice)
    prize = PRIZES[spot.kind] if hit else None
    what = "colour" if spot.kind == "any_three_colour" else "figure"
    return Verdict(
        prize,
        PRIZES[spot.kind].rule,
        f"the three dice {'show' if hit else 'do not show'} the same {what}: {label(spot)} {_pays(prize)}",
    )


def _total(spot: TotalSpot, dice: Dice) -> SpotVerdict:
    s = total(dice)
    prize = TOTAL_PRIZES[spot.total] if s == spot.total else None
    rule = TOTALS_ON_TRIPLES if is_triple(dice) else TOTAL_PRIZES[spot.total].rule
    return Verdict(prize, rule, f"the dice total {s}: total {spot.total} {_pays(prize)}")


def derive_verdict(spot: Spot, dice: Dice) -> SpotVerdict:
    """Whether ``spot`` wins on ``dice``, at which prize, under which article, and why."""
    match spot:
        case EvenSpot():
            return _even(spot, dice)
        case FigureSpot(kind="figure"):
            return _figure(spot, dice)
        case FigureSpot():
            return _specific_triple(spot, dice)
        case ColourSpot():
            return _colour(spot, dice)
        case AnySpot():
            return _any(spot, dice)
        case TotalSpot():
            return _total(spot, dice)
        case _:
            assert_never(spot)


def settle(spot: Spot, amount: Decimal, dice: Dice) -> Settlement:
    """The settlement a bet of ``amount`` on ``spot`` is due when ``dice`` are shown."""
    verdict = derive_verdict(spot, dice)
    prize = verdict.decision
    if prize is None:
        return Settlement.lose(verdict.rule, verdict.reason)
    return Settlement("win", amount, amount * prize.odds, ZERO, verdict.rule, verdict.reason)
