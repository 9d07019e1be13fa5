"""What verify compares in a Mah-Jong game beyond bets (it has none): the payments and the
commission the rules derive for an ended game (``Derivation.payments``,
``Derivation.commissions``) against the recorded ``payment_made``, ``payment_shortfall`` and
``commission_charged`` (MJ arts. 7–10). ``GAME.compare``."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from decimal import Decimal

from ledger.domain.findings import Finding
from ledger.domain.money import ZERO, same_amount, text
from ledger.domain.round import Round
from ledger.games.base import Derivation, PaymentDue
from ledger.games.mahjong.feed import CommissionCharged, PaymentMade, PaymentShortfall
from ledger.games.mahjong.payments import SHORTFALL_RULE, UNDUE_RULE


def compare(rnd: Round, derivation: Derivation) -> Iterator[Finding]:
    """The Mah-Jong payments and commission derived for an ended game against the recorded
    ``payment_made``, ``payment_shortfall`` and ``commission_charged`` (``payment_mismatch``,
    ``missing_settlement``, ``commission_mismatch``; ``bet: null``, the paying ``seat``)."""
    if derivation.payments is None:
        return
    yield from _compare_payment_lines(rnd, derivation.payments)
    yield from _compare_fees(rnd, derivation)


def _compare_payment_lines(rnd: Round, due: list[PaymentDue]) -> Iterator[Finding]:
    """Every derived payment against the recorded ones, and every recorded one not derived."""
    paid: dict[tuple[str, str], list[PaymentMade]] = defaultdict(list)
    for pm in rnd.of_type(PaymentMade):
        paid[(pm.from_, pm.to)].append(pm)
    short: dict[tuple[str, str], Decimal] = defaultdict(lambda: ZERO)
    for sf in rnd.of_type(PaymentShortfall):
        short[(sf.from_, sf.to)] += sf.amount
    expected = {(p.frm, p.to): p for p in due}
    for key, p in expected.items():
        yield from _compare_payment(rnd, p, paid.get(key, []), short.get(key, ZERO))
    for key, rec in paid.items():
        if key in expected:
            continue
        amount = sum((r.amount for r in rec), ZERO)
        got = {
            "from": key[0],
            "to": key[1],
            "amount": str(amount),
            "reason": "/".join(sorted({r.reason for r in rec})),
        }
        yield _seat_finding(
            rnd,
            "payment_mismatch",
            key[0],
            UNDUE_RULE,
            f"{key[0]} paid {key[1]} {text(amount)}, which the rules do not call for",
            {"from": key[0], "to": key[1], "amount": "0"},
            got,
            rec[0].seq,
        )
    for key, amount in short.items():
        if key not in expected and amount:
            yield _seat_finding(
                rnd,
                "payment_mismatch",
                key[0],
                SHORTFALL_RULE,
                f"a shortfall of {text(amount)} on a payment not due",
                {"shortfall": "0"},
                {"shortfall": str(amount)},
                None,
            )


def _compare_payment(rnd: Round, p: PaymentDue, rec: list[PaymentMade], short: Decimal) -> Iterator[Finding]:
    if not rec:
        yield _seat_finding(
            rnd,
            "missing_settlement",
            p.frm,
            p.rule,
            f"no payment_made from {p.frm} to {p.to}: {text(p.amount)} is due ({p.reason}: {p.note})",
            _wanted(p),
            None,
            None,
        )
        return
    amount = sum((r.amount for r in rec), ZERO)
    reasons = {r.reason for r in rec}
    if not same_amount(amount, p.amount) or reasons != {p.reason}:  # the dicts only for a finding
        want = _wanted(p)
        got = {"from": p.frm, "to": p.to, "amount": str(amount), "reason": "/".join(sorted(reasons))}
        yield _seat_finding(
            rnd,
            "payment_mismatch",
            p.frm,
            p.rule,
            f"{p.frm} paid {p.to} {text(amount)} ({got['reason']}); the rules give "
            f"{text(p.amount)} ({p.reason}: {p.note})",
            want,
            got,
            rec[0].seq,
        )
    if not same_amount(short, p.shortfall):
        yield _seat_finding(
            rnd,
            "payment_mismatch",
            p.frm,
            p.rule,
            f"shortfall recorded {text(short)}, derived {text(p.shortfall)}",
            {"shortfall": str(p.shortfall)},
            {"shortfall": str(short)},
            None,
        )


def _wanted(p: PaymentDue) -> dict[str, str]:
    """A derived payment as a finding's ``expected``."""
    return {"from": p.frm, "to": p.to, "amount": str(p.amount), "reason": p.reason}


def _compare_fees(rnd: Round, derivation: Derivation) -> Iterator[Finding]:
    """Each seat's derived commission (``Derivation.commissions``) against what the table
    charged it (MJ art. 8, M7)."""
    seqs: dict[str, int] = {}
    for charged in rnd.of_type(CommissionCharged):
        seqs.setdefault(charged.seat, charged.seq)
    for fee in derivation.commissions:
        got = fee.recorded
        if same_amount(fee.due, got or ZERO):
            continue
        yield _seat_finding(
            rnd,
            "commission_mismatch",
            fee.party,
            fee.rule,
            f"commission due from {fee.party} is {text(fee.due)}; the table charged "
            f"{'nothing' if got is None else text(got)}",
            {"amount": str(fee.due)},
            {"amount": None if got is None else str(got)},
            seqs.get(fee.party),
        )


def _seat_finding(
    rnd: Round,
    code: str,
    seat: str,
    rule: str,
    message: str,
    expected: dict[str, str | None] | dict[str, str] | None,
    recorded: dict[str, str | None] | dict[str, str] | None,
    seq: int | None,
) -> Finding:
    """A Mah-Jong finding: no bet, the paying seat in ``seat`` (FEED §10)."""
    return Finding(
        code,
        rnd.table,
        rnd.round,
        message,
        rule=rule,
        expected=expected,
        recorded=recorded,
        seq=seq,
        extra={"seat": seat},
    )
