"""Roulette rounds for ``ledger simulate``: realistic, seeded, with injected dealer errors.

One round (FEED §3): ``round_opened`` (HKD, table limits for every spot kind, RULES §8.0 G3),
3–8 players each placing 1–3 bets on valid spots within the limits, ``betting_closed``,
sometimes a void spin («golpe nulo», RULES §5.6) before the ``spin_result``, one correct
``bet_settled`` per bet (RL arts. 7–8), ``round_closed``.

An injected error (``ledger.tools.simulate.ERROR_KINDS``) is chosen so that verify reports exactly one
finding for it and nothing else:

- ``wrong_payout`` — one winner paid a chip short, or one loser paid as a winner;
- ``late_bet`` — one more valid bet placed after the ``spin_result``, settled correctly;
- ``missing_settlement`` — one ``bet_settled`` left out;
- ``wrong_commission`` — commission ``"5"`` taken on one bet (roulette takes none).

All randomness comes from the ``rng`` argument, so a seed replays the same feed.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from decimal import Decimal
from types import MappingProxyType
from typing import Any, Final

from ledger.games.roulette.feed import GroupSpot, NumbersSpot, OutsideSpot
from ledger.games.roulette.rules import Spot, settle
from ledger.games.roulette.tables import LAYOUT_SPOTS, PAYOUTS, BetKind, LayoutKind
from ledger.tools.builder import Injected, RoundBuilder

LIMITS: Final[dict[BetKind, tuple[int, int]]] = {
    "straight": (10, 500),
    "split": (10, 1000),
    "street": (10, 1500),
    "corner": (10, 2000),
    "line": (20, 3000),
    "column": (50, 5000),
    "dozen": (50, 5000),
    "red": (50, 5000),
    "black": (50, 5000),
    "even": (50, 5000),
    "odd": (50, 5000),
    "low": (50, 5000),
    "high": (50, 5000),
}
"""The simulated table's limits per spot kind, HKD (RULES §8.0 G3)."""

STAKES: Final[tuple[int, ...]] = (10, 20, 25, 30, 50, 80, 100, 150, 200, 300, 500, 1000, 2000)
"""Stakes players like to place; each bet takes one inside its kind's limits."""

KINDS: Final[tuple[BetKind, ...]] = (
    "straight",
    "straight",
    "straight",
    "split",
    "split",
    "street",
    "corner",
    "corner",
    "line",
    "column",
    "dozen",
    "red",
    "black",
    "even",
    "odd",
    "low",
    "high",
)
"""The spot kinds players choose from; a repeated kind is chosen more often."""

VOID_REASONS: Final[tuple[str, ...]] = (
    "ball left the wheel",
    "ball launched in the wheel's direction",
    "too few laps",
    "wheel head stopped before the ball",
    "object fell into the wheel",
    "ball between pockets",
)
"""«Golpe nulo» reasons, RULES §5.6 [I]."""

VOID_SPIN_RATE: Final = 0.1
CHIP: Final = Decimal("10")
WRONG_COMMISSION: Final = "5"

_LAYOUT_CHOICES: Final[MappingProxyType[LayoutKind, tuple[tuple[int, ...], ...]]] = MappingProxyType(
    {k: tuple(sorted(tuple(sorted(s)) for s in v)) for k, v in LAYOUT_SPOTS.items()}
)


def simulate_round(b: RoundBuilder, rng: random.Random, inject: str | None) -> list[Injected]:
    """Play one roulette round into ``b``; return the injected error, if ``inject`` names one."""
    b.add("round_opened", currency="HKD", rulebook={"limits": _limits_json()})
    bets = _place_bets(b, rng)
    b.add("betting_closed")
    if rng.random() < VOID_SPIN_RATE:
        b.add("spin_voided", reason=rng.choice(VOID_REASONS))
    number = b.bias.pocket(rng) if b.bias is not None else rng.randint(0, 36)
    b.add("spin_result", number=number)
    injected: list[Injected] = []
    if inject == "late_bet":
        bets.append(_place_bet(b, rng, _player(rng)))
        injected.append(b.injected(inject, bets[-1][0]))
    injected += _settle_all(b, rng, inject, bets, number)
    b.add("round_closed")
    return injected


Bet = tuple[str, Spot, Decimal]


def _limits_json() -> dict[str, dict[str, str]]:
    return {kind: {"min": str(lo), "max": str(hi)} for kind, (lo, hi) in LIMITS.items()}


def _player(rng: random.Random) -> str:
    return f"P-{rng.randint(1, 99)}"


def _place_bets(b: RoundBuilder, rng: random.Random) -> list[Bet]:
    players = rng.sample(range(1, 100), rng.randint(3, 8))
    return [_place_bet(b, rng, f"P-{p}") for p in players for _ in range(rng.randint(1, 3))]


def _place_bet(b: RoundBuilder, rng: random.Random, player: str) -> Bet:
    spot = _random_spot(rng, rng.choice(KINDS))
    lo, hi = LIMITS[spot.kind]
    amount = Decimal(rng.choice([s for s in STAKES if lo <= s <= hi]))
    bet_id = b.next_bet()
    b.add("bet_placed", bet=bet_id, player=player, spot=spot.model_dump(mode="json"), amount=str(amount))
    return bet_id, spot, amount


def _random_spot(rng: random.Random, kind: BetKind) -> Spot:
    if kind == "straight":
        return NumbersSpot(kind=kind, numbers=(rng.randint(0, 36),))
    if kind in ("split", "street", "corner", "line"):
        return NumbersSpot(kind=kind, numbers=rng.choice(_LAYOUT_CHOICES[kind]))
    if kind in ("column", "dozen"):
        return GroupSpot(kind=kind, which=rng.choice((1, 2, 3)))
    if kind in ("red", "black", "even", "odd", "low", "high"):
        return OutsideSpot(kind=kind)
    raise ValueError(f"the simulator does not place {kind} bets")  # sectors need R4 config


def _settle_all(
    b: RoundBuilder, rng: random.Random, inject: str | None, bets: list[Bet], number: int
) -> list[Injected]:
    """Add a ``bet_settled`` per bet, spoiling one of them when ``inject`` says so."""
    spoiler = _SPOILERS.get(inject or "")
    target = rng.randrange(len(bets)) if spoiler is not None else None
    for i, bet in enumerate(bets):
        fields: dict[str, Any] | None = {"bet": bet[0], **settle(bet[1], bet[2], number).as_dict()}
        if spoiler is not None and fields is not None and i == target:
            fields = spoiler(fields, bet)
        if fields is not None:
            b.add("bet_settled", **fields)
    if inject is None or target is None:
        return []
    return [b.injected(inject, bets[target][0])]


def _wrong_payout(fields: dict[str, Any], bet: Bet) -> dict[str, Any]:
    """A winner paid a chip short (a chip over on a tiny prize), or a loser paid as a winner."""
    _, spot, stake = bet
    if fields["result"] == "win":
        won = Decimal(fields["won"])
        return {**fields, "won": str(won - CHIP if won > CHIP else won + CHIP)}
    return {**fields, "result": "win", "returned": str(stake), "won": str(PAYOUTS[spot.kind].prize(stake))}


def _missing(fields: dict[str, Any], bet: Bet) -> None:
    """The ``bet_settled`` is left out."""
    return None


def _wrong_commission(fields: dict[str, Any], bet: Bet) -> dict[str, Any]:
    """Commission taken where roulette takes none (RULES §5)."""
    return {**fields, "commission": WRONG_COMMISSION}


Spoiler = Callable[[dict[str, Any], Bet], dict[str, Any] | None]

_SPOILERS: Final[dict[str, Spoiler]] = {
    "wrong_payout": _wrong_payout,
    "missing_settlement": _missing,
    "wrong_commission": _wrong_commission,
}
