"""Roulette replay: fold a recorded round into what the rules say (RULES §5.3–§5.6).

:func:`derive` reads the round's facts and returns a :class:`~ledger.games.base.Derivation`:
the steps ``ledger replay`` shows, the settlement each bet is due, and the game's own findings.
Generic checks (late bets, missing settlements, limits) and the comparison with what the table
paid are ``ledger.verify.checks``' job.

Choices, each with its rule:

- **Outcome.** The outcome is the last ``spin_result``. A ``spin_voided`` («golpe nulo») leaves
  every bet standing and the ball is launched again (RL art. 2 [S], RULES §5.6, §8.5 R2), so a
  ``spin_voided`` after the last ``spin_result`` means no valid spin followed: the outcome is
  missing. A closed round with no valid spin gets ``outcome_missing`` and no bet is judged.
- **Invalid spot.** A spot not on the layout or not offered (RULES §5.4, §8.5 R1/R3/R4) is
  reported ``invalid_bet``, and the bet is due ``void`` with its stake returned: the ledger
  "refuses bets of any option not covered by an effective authorisation" (RULES §5.5), a refused
  bet takes no part in the spin, and FEED §2 defines ``void`` as a bet "cancelled … by a rule,
  stake returned". A table that settled it win or lose also gets a ``settlement_mismatch``.
- **Late bet.** A bet placed after betting closed is reported by the life-cycle check
  (``bet_after_close``); here it is judged against the spin like any other bet, so that a late
  bet settled by the table's own arithmetic yields that one finding only.
- **Voided round.** After ``round_voided`` every bet is due ``void``, stake returned (FEED §2).
"""

from __future__ import annotations

from collections.abc import Iterator

from ledger.domain.findings import Finding
from ledger.domain.money import text as amount_text
from ledger.domain.round import Round
from ledger.feed.envelope import BetPlaced, FeedEvent, RoundVoided
from ledger.games.base import Derivation, Settlement, Step
from ledger.games.roulette.feed import GroupSpot, NumbersSpot, OutsideSpot, SpinResult, SpinVoided
from ledger.games.roulette.rules import (
    PRIZE_RULE,
    ZERO_RULE,
    Spot,
    SpotIssue,
    describe_number,
    settle,
    spot_issue,
)

VOID_SPIN_RULE = "RL art. 2 / RULES §5.6"
VOID_ROUND_RULE = "FEED §2 (round_voided)"
OUTCOME_RULE = "RL art. 7; FEED §3 (spin_result)"
NOT_A_SPOT = SpotIssue("FEED §3", "not a roulette spot")
_SPOTS = (NumbersSpot, GroupSpot, OutsideSpot)
"""The roulette spots, for ``isinstance`` (a tuple: a ``|`` union would be built at every test)."""


def derive(rnd: Round) -> Derivation:
    """What the rules say about one recorded roulette round (see the module docstring)."""
    out = Derivation()
    number = _spins(rnd, out)
    if rnd.is_voided:
        out.steps.append(
            Step(f"round voided ({_void_reason(rnd)}): every bet void, stake returned", VOID_ROUND_RULE)
        )
    elif number is None and rnd.is_closed:
        out.findings.append(
            Finding(
                "outcome_missing",
                rnd.table,
                rnd.round,
                "the round was closed without a valid spin_result",
                rule=OUTCOME_RULE,
            )
        )
    for bet in rnd.bets.values():
        _settle_bet(rnd, bet, number, out)
    return out


def _spins(rnd: Round, out: Derivation) -> int | None:
    """Add a step per spin; return the number of the valid spin, if there is one."""
    number: int | None = None
    for fact in _spin_facts(rnd):
        if isinstance(fact, SpinVoided):
            number = None
            out.steps.append(
                Step(
                    f"spin voided (golpe nulo: {fact.reason}): bets stand, the ball is launched again",
                    VOID_SPIN_RULE,
                )
            )
        else:
            if number is not None:
                out.steps.append(
                    Step(
                        f"spin_result {number} followed by another spin_result "
                        "without spin_voided: the last one counts",
                        OUTCOME_RULE,
                    )
                )
            number = fact.number
            out.steps.append(Step.later(ZERO_RULE if number == 0 else PRIZE_RULE, _spin_text, number))
    return number


def _spin_text(number: int) -> str:
    return f"spin {describe_number(number)}"


def _spin_facts(rnd: Round) -> Iterator[SpinResult | SpinVoided]:
    """The spins, valid or void, in the order recorded."""
    if next(rnd.of_type(SpinVoided), None) is None:  # the usual round: its spin results alone
        return rnd.of_type(SpinResult)
    return (e for e in rnd.events if isinstance(e, SpinResult | SpinVoided))


def _settle_bet(rnd: Round, bet: BetPlaced, number: int | None, out: Derivation) -> None:
    """Record one bet's findings and, where the outcome allows, its due settlement."""
    spot = _spot(bet)
    issue = NOT_A_SPOT if spot is None else spot_issue(spot, rnd.rules)
    if issue is not None:
        out.findings.append(
            Finding(
                "invalid_bet", rnd.table, rnd.round, issue.message, rule=issue.rule, bet=bet.bet, seq=bet.seq
            )
        )
    due = _due(rnd, bet, spot, issue, number)
    if due is None:
        return
    out.expected[bet.bet] = due
    out.steps.append(Step.later(due.rule, _bet_text, bet, due))


def _bet_text(bet: BetPlaced, due: Settlement) -> str:
    return (
        f"{bet.bet} ({amount_text(bet.amount)}): {due.reason} → {due.result}, "
        f"returned {amount_text(due.returned)}, won {amount_text(due.won)}"
    )


def _due(
    rnd: Round, bet: BetPlaced, spot: Spot | None, issue: SpotIssue | None, number: int | None
) -> Settlement | None:
    """The settlement due, or ``None`` when there is no valid spin to settle it by."""
    if rnd.is_voided:
        return Settlement.void(bet.amount, VOID_ROUND_RULE, "the round was voided: stake returned")
    if number is None:
        return None
    if spot is None or issue is not None:
        why = issue or NOT_A_SPOT
        return Settlement.void(bet.amount, why.rule, f"invalid bet ({why.message}): refused, stake returned")
    return settle(spot, bet.amount, number)


def _spot(bet: BetPlaced) -> Spot | None:
    spot = bet.spot
    return spot if isinstance(spot, _SPOTS) else None


def _void_reason(rnd: Round) -> str:
    ended: FeedEvent | None = rnd.ended_by
    return ended.reason if isinstance(ended, RoundVoided) else "no reason given"
