"""Mah-Jong: what the rules say about one recorded game (RULES §4).

:func:`derive` replays the tile log (``state.py``), derives the end (``rules.py``: the winner,
the best decomposition, each fán element with its article, liability), and every payment and
the commission (``payments.py``): the payments in ``Derivation.payments``, the commission of each
seat in ``Derivation.commissions``. Verify compares them with what the table recorded
(``compare.py``):

- ``payment_mismatch`` — a ``payment_made`` (or ``payment_shortfall``) whose amount or reason
  differs from the derived one, or one the rules do not call for;
- ``missing_settlement`` — a derived payment with no ``payment_made``;
- ``commission_mismatch`` — a ``commission_charged`` that differs from the fixed commission of
  art. 8, is missing, or is charged on a drawn or void game (M7).

Each finding has ``bet: null`` and names the paying seat in ``seat`` (FEED §10).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal

from ledger.domain.findings import Finding
from ledger.domain.money import ZERO, text
from ledger.domain.round import Round
from ledger.games.base import Commission, Derivation, PaymentDue, Step
from ledger.games.mahjong.feed import CommissionCharged, MahjongRoundOpened
from ledger.games.mahjong.payments import commission_due, false_win_payments, win_payments
from ledger.games.mahjong.rules import GameEnd, derive_end
from ledger.games.mahjong.state import GameState, LogMove, dealt_text, log_line, replay
from ledger.games.mahjong.tables import NO_COMMISSION_RULE

MIN_CAPITAL_RULE = "RULES §8.4 M6 (mj.min_capital)"
LOG_CHUNK = 24


@dataclass(frozen=True)
class Outcome:
    """A replayed game with its end and the payments the rules call for."""

    state: GameState
    end: GameEnd
    due: list[PaymentDue]


def outcome(rnd: Round) -> Outcome:
    """Replay one game and derive its end and its payments (none for a void game)."""
    opened = rnd.opened
    if not isinstance(opened, MahjongRoundOpened):
        raise TypeError(f"round {rnd.round} is not a Mah-Jong game")
    rules = rnd.rules
    state = replay(opened, rnd.events[1:], allow_discard_kong=rules.mj.s.allow_discard_kong)
    end = derive_end(state, rules)
    due = [] if rnd.is_voided else _payments(state, end, rnd)
    return Outcome(state, end, due)


def derive(rnd: Round) -> Derivation:
    """The steps, the payments and commission due, and the game's own findings."""
    game = outcome(rnd)
    state, end, due = game.state, game.end, game.due
    opened = state.opened
    d = Derivation(findings=list(state.findings))
    d.findings += _capital_findings(rnd, opened)
    d.steps += _log_steps(state)
    d.steps += end.steps
    if end.ending == "open" and rnd.is_closed:
        d.findings.append(
            Finding(
                "outcome_missing",
                rnd.table,
                rnd.round,
                "the game was closed with no win_declared and no game_drawn",
                rule="RULES §4.11",
            )
        )
    d.steps += [Step.later(p.rule, _payment_text, p) for p in due]
    if rnd.ended_by is not None:
        d.payments = due
    _commission(rnd, opened, end, d)
    return d


def _payment_text(p: PaymentDue) -> str:
    return f"{p.frm} pays {p.to} {text(p.amount)} ({p.reason}: {p.note})" + (
        f"; shortfall {text(p.shortfall)}" if p.shortfall else ""
    )


def _commission_text(winner: str, amount: Decimal, opened: MahjongRoundOpened) -> str:
    return f"commission: {winner} pays {text(amount)} to the casino ({opened.variant}, stake {opened.stake})"


def _capital_findings(rnd: Round, opened: MahjongRoundOpened) -> list[Finding]:
    single, _ = opened.stake_amounts
    minimum = rnd.rules.mj.min_capital
    floor = minimum if minimum is not None else 24 * single
    return [
        Finding(
            "invalid_bet",
            rnd.table,
            rnd.round,
            f"{seat}'s capital {text(amount)} is below the table minimum {text(floor)}",
            rule=MIN_CAPITAL_RULE,
            extra={"seat": seat},
        )
        for seat, amount in opened.capital.items()
        if amount < floor
    ]


def _log_steps(state: GameState) -> list[Step]:
    """The tile log, compactly: each dealt hand, then play in chunks (+ draw, − discard)."""
    log = state.log  # complete: the replay is over
    dealt = [Step.later("MJ art. 3; RULES §4.3", dealt_text, seat, hand) for seat, hand in state.hands_dealt]
    chunks = [Step.later("MJ art. 5; RULES §4.5", _play_text, log, i) for i in range(0, len(log), LOG_CHUNK)]
    return dealt + chunks


def _play_text(log: list[str | LogMove], start: int) -> str:
    """One chunk of the play: the log's lines ``start`` to ``start + LOG_CHUNK``."""
    return "play: " + " ".join(map(log_line, log[start : start + LOG_CHUNK]))


def _payments(state: GameState, end: GameEnd, rnd: Round) -> list[PaymentDue]:
    opened = state.opened
    single, _ = opened.stake_amounts
    claim = end.claim
    if end.ending == "false_win" and claim is not None:
        return false_win_payments(state.order, claim.seat, state.variant, single)
    if end.ending != "win" or claim is None or end.score is None:
        return []
    start = claim.event.from_ if claim.source != "self_drawn" and claim.event.from_ else state.order[0]
    if start not in state.order:
        start = state.order[0]
    liable = end.liability.decision if end.liability else None
    capital: dict[str, Decimal] = {seat: amount for seat, amount in state.capital.items()}
    return win_payments(
        state.order,
        claim.seat,
        single,
        end.score.fan,
        liable=liable,
        cap=capital[claim.seat],
        start=start,
        payer_capital=capital,
        increment=rnd.rules.rounding.increment,
    )


def _commission(rnd: Round, opened: MahjongRoundOpened, end: GameEnd, d: Derivation) -> None:
    """The commission due from each seat that owes one or was charged one (art. 8, M7)."""
    recorded: dict[str, Decimal] = defaultdict(lambda: ZERO)
    for c in rnd.of_type(CommissionCharged):
        recorded[c.seat] += c.amount
    winner = None if rnd.is_voided else end.winner
    due: dict[str, tuple[Decimal, str]] = {}
    if winner is not None:
        due[winner] = commission_due(opened.variant, opened.stake)
        amount, rule = due[winner]
        d.steps.append(Step.later(rule, _commission_text, winner, amount, opened))
    elif end.ending in ("drawn", "false_win"):
        d.steps.append(Step("no commission: no game was won", NO_COMMISSION_RULE))
    for seat in opened.seats:
        amount, rule = due.get(seat, (ZERO, NO_COMMISSION_RULE))
        got = recorded.get(seat)
        if seat in due or got is not None:
            d.commissions.append(Commission(seat, amount, got, rule))
