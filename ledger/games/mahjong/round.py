"""Mah-Jong: what the rules say about one recorded game (RULES §4).

:func:`derive` replays the tile log (``state.py``), judges the end (``rules.py``: the winner,
the best decomposition, each fán element with its article, liability), derives every payment
and the commission (``payments.py``) and compares them with what the table recorded:

- ``payment_mismatch`` — a ``payment_made`` (or ``payment_shortfall``) whose amount or reason
  differs from the derived one, or one the rules do not call for;
- ``missing_settlement`` — a derived payment with no ``payment_made``;
- ``commission_mismatch`` — a ``commission_charged`` that differs from the fixed commission of
  art. 8, is missing, or is charged on a drawn or void game (M7).

Each finding has ``bet: null`` and names the paying seat in ``seat`` (FEED §10); the commission
is also listed in ``Derivation.commissions`` for finance.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal

from ledger.findings import Finding
from ledger.games.base import Commission, Derivation, Step
from ledger.games.mahjong.feed import (
    CommissionCharged,
    MahjongRoundOpened,
    PaymentMade,
    PaymentShortfall,
)
from ledger.games.mahjong.payments import (
    Due,
    commission_due,
    false_win_payments,
    win_payments,
)
from ledger.games.mahjong.rules import Verdict, derive_verdict
from ledger.games.mahjong.state import GameState, replay
from ledger.games.mahjong.tables import NO_COMMISSION_RULE
from ledger.money import ZERO, same_amount
from ledger.round import Round

MIN_CAPITAL_RULE = "RULES §8.4 M6 (mj.min_capital)"
LOG_CHUNK = 24


@dataclass(frozen=True)
class Outcome:
    """A replayed game with its verdict and the payments the rules call for."""

    state: GameState
    verdict: Verdict
    due: list[Due]


def outcome(rnd: Round) -> Outcome:
    """Replay and judge one game; derive its payments (none for a void game)."""
    opened = rnd.opened
    if not isinstance(opened, MahjongRoundOpened):
        raise TypeError(f"round {rnd.round} is not a Mah-Jong game")
    rules = rnd.rules
    state = replay(opened, rnd.events[1:], allow_discard_kong=rules.mj.s.allow_discard_kong)
    verdict = derive_verdict(state, rules)
    due = [] if rnd.is_voided else _payments(state, verdict, rnd)
    return Outcome(state, verdict, due)


def derive(rnd: Round) -> Derivation:
    """The steps, the payments and commission due, and every finding of one game."""
    game = outcome(rnd)
    state, verdict, due = game.state, game.verdict, game.due
    opened = state.opened
    d = Derivation(findings=list(state.findings))
    d.findings += _capital_findings(rnd, opened)
    d.steps += _log_steps(state)
    d.steps += verdict.steps
    if verdict.ending == "open" and rnd.is_closed:
        d.findings.append(Finding("outcome_missing", rnd.table, rnd.round,
                                  "the game was closed with no win_declared and no game_drawn",
                                  rule="RULES §4.11"))
    d.steps += [Step(f"{p.frm} pays {p.to} {p.amount} ({p.reason}: {p.note})"
                     + (f"; shortfall {p.shortfall}" if p.shortfall else ""), p.rule) for p in due]
    if rnd.ended_by is not None:
        d.findings += _compare_payments(rnd, due)
    _commission(rnd, opened, verdict, d)
    return d


def _capital_findings(rnd: Round, opened: MahjongRoundOpened) -> list[Finding]:
    single, _ = opened.stake_amounts
    minimum = rnd.rules.mj.min_capital
    floor = minimum if minimum is not None else 24 * single
    return [Finding("invalid_bet", rnd.table, rnd.round,
                    f"{seat}'s capital {amount} is below the table minimum {floor}",
                    rule=MIN_CAPITAL_RULE, extra={"seat": seat})
            for seat, amount in opened.capital.items() if amount < floor]


def _log_steps(state: GameState) -> list[Step]:
    """The tile log, compactly: each dealt hand, then play in chunks (+ draw, − discard)."""
    dealt = [Step(line, "MJ art. 3; RULES §4.3") for line in state.log if " dealt " in line]
    play = [line for line in state.log if " dealt " not in line]
    chunks = [Step("play: " + " ".join(play[i:i + LOG_CHUNK]), "MJ art. 5; RULES §4.5")
              for i in range(0, len(play), LOG_CHUNK)]
    return dealt + chunks


def _payments(state: GameState, verdict: Verdict, rnd: Round) -> list[Due]:
    opened = state.opened
    single, _ = opened.stake_amounts
    claim = verdict.claim
    if verdict.ending == "false_win" and claim is not None:
        return false_win_payments(state.order, claim.seat, state.variant, single)
    if verdict.ending != "win" or claim is None or verdict.score is None:
        return []
    start = claim.event.from_ if claim.source != "self_drawn" and claim.event.from_ \
        else state.order[0]
    if start not in state.order:
        start = state.order[0]
    liable = verdict.liability.seat if verdict.liability else None
    capital: dict[str, Decimal] = {seat: amount for seat, amount in state.capital.items()}
    return win_payments(state.order, claim.seat, single, verdict.score.fan, liable=liable,
                        cap=capital[claim.seat], start=start,
                        payer_capital=capital, increment=rnd.rules.rounding.increment)


def _compare_payments(rnd: Round, due: list[Due]) -> list[Finding]:
    """Every derived payment against the recorded ones, and every recorded one not derived."""
    paid: dict[tuple[str, str], list[PaymentMade]] = defaultdict(list)
    for pm in rnd.of_type(PaymentMade):
        paid[(pm.from_, pm.to)].append(pm)
    short: dict[tuple[str, str], Decimal] = defaultdict(lambda: ZERO)
    for sf in rnd.of_type(PaymentShortfall):
        short[(sf.from_, sf.to)] += sf.amount
    expected = {(p.frm, p.to): p for p in due}
    findings: list[Finding] = []
    for key, p in expected.items():
        findings += _compare_one(rnd, p, paid.get(key, []), short.get(key, ZERO))
    for key, rec in paid.items():
        if key in expected:
            continue
        amount = sum((r.amount for r in rec), ZERO)
        got = {"from": key[0], "to": key[1], "amount": str(amount),
               "reason": "/".join(sorted({r.reason for r in rec}))}
        findings.append(_finding(rnd, "payment_mismatch", key[0], UNDUE_RULE,
                                 f"{key[0]} paid {key[1]} {amount}, which the rules do not call "
                                 "for", {"from": key[0], "to": key[1], "amount": "0"}, got,
                                 rec[0].seq))
    for key, amount in short.items():
        if key not in expected and amount:
            findings.append(_finding(rnd, "payment_mismatch", key[0], SHORTFALL_RULE,
                                     f"a shortfall of {amount} on a payment not due",
                                     {"shortfall": "0"}, {"shortfall": str(amount)}, None))
    return findings


def _compare_one(rnd: Round, p: Due, rec: list[PaymentMade], short: Decimal) -> list[Finding]:
    want = {"from": p.frm, "to": p.to, "amount": str(p.amount), "reason": p.reason}
    if not rec:
        return [_finding(rnd, "missing_settlement", p.frm, p.rule,
                         f"no payment_made from {p.frm} to {p.to}: {p.amount} is due "
                         f"({p.reason}: {p.note})", want, None, None)]
    findings = []
    amount = sum((r.amount for r in rec), ZERO)
    reasons = {r.reason for r in rec}
    got = {"from": p.frm, "to": p.to, "amount": str(amount), "reason": "/".join(sorted(reasons))}
    if not same_amount(amount, p.amount) or reasons != {p.reason}:
        findings.append(_finding(rnd, "payment_mismatch", p.frm, p.rule,
                                 f"{p.frm} paid {p.to} {amount} ({got['reason']}); the rules "
                                 f"give {p.amount} ({p.reason}: {p.note})", want, got,
                                 rec[0].seq))
    if not same_amount(short, p.shortfall):
        findings.append(_finding(rnd, "payment_mismatch", p.frm, p.rule,
                                 f"shortfall recorded {short}, derived {p.shortfall}",
                                 {"shortfall": str(p.shortfall)}, {"shortfall": str(short)},
                                 None))
    return findings


UNDUE_RULE = "MJ arts. 7, 10; RULES §4.7–4.9"
SHORTFALL_RULE = "RULES §8.4 M6"


def _finding(rnd: Round, code: str, seat: str, rule: str, message: str,
             expected: dict[str, str | None] | dict[str, str] | None,
             recorded: dict[str, str | None] | dict[str, str] | None,
             seq: int | None) -> Finding:
    return Finding(code, rnd.table, rnd.round, message, rule=rule, expected=expected,
                   recorded=recorded, seq=seq, extra={"seat": seat})


def _commission(rnd: Round, opened: MahjongRoundOpened, verdict: Verdict, d: Derivation) -> None:
    recorded: dict[str, Decimal] = defaultdict(lambda: ZERO)
    seqs: dict[str, int] = {}
    for c in rnd.of_type(CommissionCharged):
        recorded[c.seat] += c.amount
        seqs.setdefault(c.seat, c.seq)
    winner = None if rnd.is_voided else verdict.winner
    due: dict[str, tuple[Decimal, str]] = {}
    if winner is not None:
        due[winner] = commission_due(opened.variant, opened.stake)
        amount, rule = due[winner]
        d.steps.append(Step(f"commission: {winner} pays {amount} to the casino "
                            f"({opened.variant}, stake {opened.stake})", rule))
    elif verdict.ending in ("drawn", "false_win"):
        d.steps.append(Step("no commission: no game was won", NO_COMMISSION_RULE))
    for seat in opened.seats:
        amount, rule = due.get(seat, (ZERO, NO_COMMISSION_RULE))
        got = recorded.get(seat)
        if seat in due or got is not None:
            d.commissions.append(Commission(seat, amount, got, rule))
        if rnd.ended_by is None or same_amount(amount, got or ZERO):
            continue
        d.findings.append(_finding(
            rnd, "commission_mismatch", seat, rule,
            f"commission due from {seat} is {amount}; the table charged "
            f"{'nothing' if got is None else got}",
            {"amount": str(amount)}, {"amount": None if got is None else str(got)},
            seqs.get(seat)))
