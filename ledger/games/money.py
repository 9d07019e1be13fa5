"""Money hooks shared by the games whose players bet on spots (``ledger.games.base.Money``).

Each game's ``money.py`` builds its :class:`~ledger.games.base.Money` from these and its own
rules; the generic layers (views, the day report, exports) only call the hooks.
"""

from __future__ import annotations

from decimal import Decimal

from ledger.domain.round import Round
from ledger.feed.envelope import BetPlaced
from ledger.games.base import Charge, Derivation, Game, JackpotMovement, Money

ZERO = Decimal(0)
NO_PLAYER = "-"
"""The payer of a bet placed with neither ``player`` nor ``seat``."""


def bet_player(bet: BetPlaced | None) -> str:
    """Who a bet belongs to: its ``player``, else ``seat:N``, else ``-``."""
    if bet is None:
        return NO_PLAYER
    if bet.player:
        return bet.player
    return f"seat:{bet.seat}" if bet.seat is not None else NO_PLAYER


def bet_charges(rnd: Round) -> list[Charge]:
    """The commission of each bet's (first) ``bet_settled``, zero included, in bet order."""
    return [
        Charge(bet_player(rnd.bets.get(bet_id)), None, settled[0].commission, "bet", bet_id)
        for bet_id, settled in sorted(rnd.settlements.items())
    ]


def seat_payer(rnd: Round, party: str) -> str:
    """A commission party outside bets, for games that have none: ``seat:<party>``."""
    return f"seat:{party}"


def bet_turnover(rnd: Round) -> Decimal:
    """Stakes placed in the round, raises of carried bets included (a carried stake restated
    is counted again: it is staked again in this round)."""
    total = sum((e.amount for e in rnd.events if isinstance(e, BetPlaced)), ZERO)
    for bet_id, raises in rnd.increases.items():
        bet = rnd.bets.get(bet_id)
        if bet is not None:
            total += max(ZERO, raises[-1].amount - bet.amount)
    return total


def banked_result(rnd: Round, *, prizes_of: frozenset[str] = frozenset()) -> Decimal:
    """The house's result of a house-banked round, as recorded: ``Σ (stake − returned − won)``
    over settled bets (a ``carry`` counts nothing until the carried bet is settled). The
    ``won`` of the bets in ``prizes_of`` is left out: someone else (a jackpot pool) pays it."""
    total = ZERO
    for bet_id in rnd.bets:
        settled = rnd.settlements.get(bet_id)
        if settled and settled[0].result != "carry":
            s = settled[0]
            won = ZERO if bet_id in prizes_of else s.won
            total += rnd.stake(bet_id) - s.returned - won
    return total


def no_jackpot(rnd: Round, derivation: Derivation) -> JackpotMovement | None:
    """Games without a jackpot pool."""
    return None


BET_MONEY = Money(
    charges=bet_charges,
    payer=seat_payer,
    house_result=banked_result,
    turnover=bet_turnover,
    jackpot=no_jackpot,
)
"""The hooks of a house-banked bet game without commission outside bets or a jackpot (FPC,
3CB, RL)."""


def money_of(game: Game) -> Money:
    """A game's money hooks."""
    return game.money
