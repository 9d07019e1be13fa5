"""What verify compares in a Super Pan 9 round beyond its bets: each bank layer's derived share
and commission (``Derivation.bank``) against the table's ``bank_settled``, and the bank's
capital against what the bets moved (SP9 art. 5(3), 5(5)). ``GAME.compare``."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from ledger.domain.findings import Finding, round_finding
from ledger.domain.money import ZERO, same_amount, text
from ledger.domain.round import Round
from ledger.feed.envelope import BetSettled
from ledger.games.base import BankDue, Derivation
from ledger.games.super_pan9.feed import BankSettled
from ledger.games.super_pan9.tables import BANK_COMMISSION_RULE, CAP_RULE, SPLIT_RULE


def compare(rnd: Round, derivation: Derivation) -> Iterator[Finding]:
    """The bank comparisons of a round the rules could settle (nothing otherwise)."""
    if derivation.bank is not None:
        yield from compare_bank(rnd, derivation.bank)


def compare_bank(rnd: Round, due: BankDue | None) -> Iterator[Finding]:
    """Each SP9 bank layer's derived share and commission against its ``bank_settled``
    (``settlement_mismatch``, ``commission_mismatch``, ``missing_settlement``, all with
    ``bet: null`` and the ``party``), a layer line for no layer, and ``bank_capital_exceeded``
    when a layer's recorded share, or the bank's result as the bets were recorded, exceeds
    the capital (SP9 art. 5(3), 5(5))."""
    if due is None:
        return
    recorded: dict[str, BankSettled] = {}
    for line in rnd.of_type(BankSettled):
        recorded.setdefault(line.party, line)
    for layer in due.layers:
        who = {"party": layer.party}
        want = {"result": str(layer.share), "commission": str(layer.commission)}
        rec = recorded.get(layer.party)
        if rec is None:
            if rnd.is_closed:
                yield round_finding(
                    "missing_settlement",
                    rnd,
                    None,
                    SPLIT_RULE,
                    f"bank layer {layer.party} has no bank_settled",
                    expected=want,
                    extra=who,
                )
            continue
        got = {"result": str(rec.result), "commission": str(rec.commission)}
        if not same_amount(rec.result, layer.share):
            yield round_finding(
                "settlement_mismatch",
                rnd,
                None,
                SPLIT_RULE,
                f"bank layer {layer.party}'s share of W = {text(due.result)} is "
                f"{text(layer.share)}, the table recorded {text(rec.result)}",
                expected=want,
                recorded=got,
                seq=rec.seq,
                extra=who,
            )
        if not same_amount(rec.commission, layer.commission):
            yield round_finding(
                "commission_mismatch",
                rnd,
                None,
                BANK_COMMISSION_RULE,
                f"bank layer {layer.party} owes commission {text(layer.commission)} on its "
                f"share {text(layer.share)}, the table took {text(rec.commission)}",
                expected=want,
                recorded=got,
                seq=rec.seq,
                extra=who,
            )
        if abs(rec.result) > layer.capital:
            yield round_finding(
                "bank_capital_exceeded",
                rnd,
                None,
                CAP_RULE,
                f"bank layer {layer.party} recorded {text(rec.result)}, "
                f"more than its capital {text(layer.capital)}",
                recorded=got,
                seq=rec.seq,
                extra=who,
            )
    parties = {layer.party for layer in due.layers}
    for party, rec in recorded.items():
        if party not in parties:
            yield round_finding(
                "settlement_mismatch",
                rnd,
                None,
                SPLIT_RULE,
                f"bank_settled for {party}, which is not a bank layer this round",
                recorded={"result": str(rec.result), "commission": str(rec.commission)},
                seq=rec.seq,
                extra={"party": party},
            )
    yield from _recorded_bank_result(rnd, due.capacity)


def _recorded_bank_result(rnd: Round, capacity: Decimal) -> Iterator[Finding]:
    """``bank_capital_exceeded`` when the bets as the table settled them moved the bank by
    more than its capacity (SP9 art. 5(3))."""
    if not rnd.bets.keys() <= rnd.settlements.keys():
        return  # a bet without its settlement: missing_settlement, the total is unknown
    moved = ZERO
    for bet_id in rnd.bets:
        moved += _bank_side(rnd.settlements[bet_id][0], rnd.stake(bet_id))
    if abs(moved) > capacity:
        yield round_finding(
            "bank_capital_exceeded",
            rnd,
            None,
            CAP_RULE,
            f"as recorded, the bank {'won' if moved > 0 else 'lost'} {text(abs(moved))} "
            f"this round, more than its capital {text(capacity)}",
            recorded={"bank_result": str(moved)},
            expected={"capacity": str(capacity)},
        )


def _bank_side(settled: BetSettled, stake: Decimal) -> Decimal:
    """What one recorded settlement moved to (+) or from (−) the bank."""
    if settled.result == "lose":
        return stake - settled.returned
    if settled.result == "win":
        return -settled.won
    return ZERO
