"""Fish-Prawn-Crab rounds for ``ledger simulate``, with injected dealer errors.

A round follows RULES §2.3: the shaker is pressed *before* betting, 3–8 bets of mixed kinds
within the table limits (RULES §8 G3), betting closes, now and then a die is cocked and the
shaker pressed again (F2, bets stand), the dice are shown and every bet is settled as the rules
say (``rules.settle``). One error of :data:`INJECTABLE` may then be put in; each yields exactly
one finding on one bet. Randomness comes only from the ``rng`` passed in, so a seed replays.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

from ledger.games.fish_prawn_crab.feed import (
    AnySpot,
    ColourSpot,
    Dice,
    EvenSpot,
    FigureSpot,
    Spot,
    TotalSpot,
)
from ledger.games.fish_prawn_crab.rules import settle
from ledger.games.fish_prawn_crab.tables import COLOURS
from ledger.tools.builder import Injected, RoundBuilder, TableBias

LIMITS: Final[dict[str, dict[str, str]]] = {
    "small": {"min": "50", "max": "20000"},
    "big": {"min": "50", "max": "20000"},
    "figure": {"min": "20", "max": "10000"},
    "one_colour": {"min": "20", "max": "10000"},
    "two_colours": {"min": "20", "max": "5000"},
    "three_colours": {"min": "10", "max": "1000"},
    "any_three_colour": {"min": "10", "max": "2000"},
    "specific_triple": {"min": "10", "max": "300"},
    "any_triple": {"min": "10", "max": "1000"},
    "total": {"min": "10", "max": "2000"},
}
"""The simulated table's limits per spot kind (``limits.<spot kind>``, RULES §8 G3)."""

CHIPS: Final = (10, 20, 50, 100, 200, 500, 1000, 5000)
"""Stakes a simulated player puts down, in patacas."""

COCKED_DIE_RATE: Final = 0.08
"""How often a die is cocked and the shaker pressed again (F2)."""


@dataclass(frozen=True)
class _Bet:
    """A bet the simulator placed."""

    id: str
    spot: Spot
    amount: Decimal


def _random_spot(rng: random.Random) -> Spot:
    kind = rng.choice(tuple(LIMITS))
    if kind in ("small", "big"):
        return EvenSpot(kind=kind)
    if kind in ("figure", "specific_triple"):
        return FigureSpot(kind=kind, face=rng.randint(1, 6))
    if kind in ("one_colour", "two_colours", "three_colours"):
        return ColourSpot(kind=kind, colour=rng.choice(COLOURS))
    if kind in ("any_three_colour", "any_triple"):
        return AnySpot(kind=kind)
    return TotalSpot(kind="total", total=rng.randint(4, 17))


def _place_bet(b: RoundBuilder, rng: random.Random) -> _Bet:
    spot = _random_spot(rng)
    limit = LIMITS[spot.kind]
    chips = [c for c in CHIPS if Decimal(limit["min"]) <= c <= Decimal(limit["max"])]
    bet = _Bet(b.next_bet(), spot, Decimal(rng.choice(chips)))
    b.add("bet_placed", bet=bet.id, spot=spot.model_dump(), amount=str(bet.amount))
    return bet


def _throw(rng: random.Random, bias: TableBias | None = None) -> Dice:
    if bias is not None:
        return (bias.die(rng, 1), bias.die(rng, 2), bias.die(rng, 3))
    return (rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 6))


def _pay_wrongly(line: dict[str, Any], bet: _Bet) -> None:
    """A wrong payout: a win paid one stake too much, or a loss paid as an even-money win."""
    if line["result"] == "win":
        line["won"] = str(Decimal(line["won"]) + bet.amount)
    else:
        line.update(result="win", returned=str(bet.amount), won=str(bet.amount))


def _take_commission(line: dict[str, Any], bet: _Bet) -> None:
    """A commission taken in a game that has none (RULES §2.3 step 6)."""
    line["commission"] = "5"


_LINE_ERRORS: Final[dict[str, Callable[[dict[str, Any], _Bet], None]]] = {
    "wrong_payout": _pay_wrongly,
    "wrong_commission": _take_commission,
}

INJECTABLE: Final = ("wrong_payout", "late_bet", "missing_settlement", "wrong_commission")
"""The error kinds this simulator injects (the keys of ``ledger.tools.simulate.ERROR_KINDS``)."""


def simulate_round(b: RoundBuilder, rng: random.Random, inject: str | None) -> list[Injected]:
    """Play one FPC round into ``b``; inject the error ``inject`` if given, and report it."""
    if inject is not None and inject not in INJECTABLE:
        raise ValueError(f"FPC cannot inject {inject!r}; it injects {', '.join(INJECTABLE)}")
    b.add("round_opened", currency="MOP", rulebook={"limits": LIMITS})
    b.add("dice_pressed")
    bets = [_place_bet(b, rng) for _ in range(rng.randint(3, 8))]
    b.add("betting_closed")
    if rng.random() < COCKED_DIE_RATE:
        b.add("die_cocked")
        b.add("dice_pressed")
    dice = _throw(rng, b.bias)
    b.add("dice_shown", dice=list(dice))
    if inject == "late_bet":
        bets.append(_place_bet(b, rng))
    victim = (bets[-1] if inject == "late_bet" else rng.choice(bets)) if inject else None
    for bet in bets:
        if bet is victim and inject == "missing_settlement":
            continue
        line = b.add("bet_settled", bet=bet.id, **settle(bet.spot, bet.amount, dice).as_dict())
        if bet is victim and inject in _LINE_ERRORS:
            _LINE_ERRORS[inject](line, bet)
    b.add("round_closed")
    return [] if inject is None or victim is None else [b.injected(inject, victim.id)]
