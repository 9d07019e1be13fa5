"""Fish-Prawn-Crab: what the rules say about one recorded round (RULES §2.3–§2.6).

:func:`derive` folds a :class:`~ledger.domain.round.Round` into a
:class:`~ledger.games.base.Derivation`:

- the outcome is the last ``dice_shown`` that no ``die_cocked`` follows (a cocked die means the
  result is not read, FPC art. 3 C) [S]);
- a cocked die under ``fpc.cocked_die = "reshake"`` (the default, RULES §8.2 F2): bets stand and
  the round settles on the dice shown after the new press;
- a cocked die under ``fpc.cocked_die = "void"``: the round is void, every stake is returned;
- a voided round (``round_voided``): every stake is returned (FEED §2);
- a closed round with no dice: ``outcome_missing`` and no bet is judged.
"""

from __future__ import annotations

from ledger.domain.findings import Finding
from ledger.domain.money import text as amount_text
from ledger.domain.round import Round
from ledger.feed.envelope import BetPlaced
from ledger.games.base import Derivation, Settlement, Step
from ledger.games.fish_prawn_crab.feed import DiceShown, DieCocked, FishPrawnCrabBetPlaced, Spot
from ledger.games.fish_prawn_crab.rules import describe, label, settle

COCKED_DIE_RULE = "FPC art. 3 C) [S]; RULES §8.2 F2 [I]"
ROUND_VOIDED_RULE = "FEED §2 (round_voided)"
DICE_RULE = "FPC art. 1 [S], art. 3 B) [S]"


def derive(rnd: Round) -> Derivation:
    """The steps, the settlement each bet is due, and the game's own findings."""
    cocked = list(rnd.of_type(DieCocked))
    if cocked and rnd.rules.fpc.cocked_die == "void":
        return _void_all(
            rnd,
            COCKED_DIE_RULE,
            f"a die was cocked at seq {cocked[0].seq} and "
            "the table voids the round (fpc.cocked_die = void): stake returned",
        )
    if rnd.is_voided:
        return _void_all(rnd, ROUND_VOIDED_RULE, "the round was voided: the stake is returned")
    derivation = Derivation(steps=[_reshake_step(c) for c in cocked])
    shown = outcome(rnd)
    if shown is None:
        if rnd.is_closed:
            derivation.findings.append(_outcome_missing(rnd))
        return derivation
    derivation.steps.append(Step.later(DICE_RULE, describe, shown.dice))
    for bet in rnd.bets.values():
        due = settle(spot_of(bet), bet.amount, shown.dice)
        derivation.expected[bet.bet] = due
        derivation.steps.append(_bet_step(bet, due))
    return derivation


def outcome(rnd: Round) -> DiceShown | None:
    """The dice the round settles on: the last ``dice_shown`` not followed by a cocked die."""
    if next(rnd.of_type(DieCocked), None) is None:  # the usual round: the last dice shown
        return next(reversed(list(rnd.of_type(DiceShown))), None)
    shown: DiceShown | None = None
    for fact in rnd.events:
        if isinstance(fact, DiceShown):
            shown = fact
        elif isinstance(fact, DieCocked):
            shown = None  # that throw was not read; a new press and show must follow
    return shown


def spot_of(bet: BetPlaced) -> Spot:
    """The FPC spot of a bet (every FPC ``bet_placed`` is parsed as one)."""
    if not isinstance(bet, FishPrawnCrabBetPlaced):
        raise TypeError(f"bet {bet.bet} is not an FPC bet: {type(bet).__name__}")
    return bet.spot


def _void_all(rnd: Round, rule: str, reason: str) -> Derivation:
    derivation = Derivation(steps=[Step(reason, rule)])
    for bet in rnd.bets.values():
        derivation.expected[bet.bet] = Settlement.void(bet.amount, rule, reason)
    return derivation


def _reshake_step(cocked: DieCocked) -> Step:
    return Step(
        f"die cocked at seq {cocked.seq}: the result is not read, the shaker is pressed "
        "again and the bets stand",
        COCKED_DIE_RULE,
    )


def _bet_step(bet: BetPlaced, due: Settlement) -> Step:
    return Step.later(due.rule, _bet_text, bet, due)


def _bet_text(bet: BetPlaced, due: Settlement) -> str:
    money = (
        f"returned {amount_text(due.returned)}, won {amount_text(due.won)}"
        if due.result == "win"
        else "stake taken"
    )
    return (
        f"{bet.bet}: {label(spot_of(bet))} for {amount_text(bet.amount)}: "
        f"{due.result} ({due.reason}; {money})"
    )


def _outcome_missing(rnd: Round) -> Finding:
    return Finding(
        "outcome_missing",
        rnd.table,
        rnd.round,
        "the round was closed but no dice_shown was recorded (or the last throw "
        "was a cocked die): no bet can be judged",
        rule=DICE_RULE,
    )
