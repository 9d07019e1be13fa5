"""Money not tied to one bet, derived against recorded: SP9 bank layers and Mah-Jong payments.

A bet's settlement sits in the bets table of a round page; the bank's share per layer (SP9
art. 5(5)) and the payments between Mah-Jong players (MJ arts. 7–10) have no bet. This module
puts each beside what the table recorded, field by field, so that a page can highlight exactly
the field that differs. It re-derives with the games' own pure per-round functions
(:func:`ledger.games.super_pan9.round.analyse`, :func:`ledger.games.mahjong.round.outcome`);
the findings themselves stay verify's.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal

from ledger.games.base import Derivation
from ledger.games.mahjong.round import outcome
from ledger.games.super_pan9.round import analyse
from ledger.games.super_pan9.tables import SPLIT_RULE
from ledger.money import same_amount
from ledger.report.numbers import amount
from ledger.round import Round

ZERO = Decimal(0)


@dataclass(frozen=True)
class Pair:
    """One field, as derived and as recorded (``None``: nothing there)."""

    derived: Decimal | str | None
    recorded: Decimal | str | None

    @property
    def differs(self) -> bool:
        """Whether the table recorded something other than the rules derive."""
        d, r = self.derived, self.recorded
        if d is None or r is None:
            return d is not r
        if isinstance(d, Decimal) and isinstance(r, Decimal):
            return not same_amount(d, r)
        return d != r

    @staticmethod
    def text(value: Decimal | str | None) -> str:
        """A field's value as the page writes it."""
        if value is None:
            return "—"
        return amount(value) if isinstance(value, Decimal) else value


@dataclass
class MoneyRow:
    """One layer or one payment: who, then each compared field."""

    who: list[str]
    fields: list[Pair]

    @property
    def agrees(self) -> bool:
        """Whether every field agrees."""
        return not any(p.differs for p in self.fields)


@dataclass
class MoneyTable:
    """A derived-against-recorded table with its article."""

    title: str
    who: list[str]
    fields: list[str]
    rule: str
    rows: list[MoneyRow] = field(default_factory=list)


def money_tables(rnd: Round, derivation: Derivation) -> list[MoneyTable]:
    """The round's bank-layer or payment tables (none for the other games)."""
    if rnd.game == "SP9":
        return [t for t in (_bank_layers(rnd),) if t.rows]
    if rnd.game == "MJ":
        return [t for t in (_payments(rnd), _commissions(derivation)) if t.rows]
    return []


def _bank_layers(rnd: Round) -> MoneyTable:
    bank = analyse(rnd).bank
    table = MoneyTable("Bank layers: derived against recorded", ["layer", "capital"],
                       ["share of W", "commission"], SPLIT_RULE)
    recorded: dict[str, object] = {}
    for e in rnd.events:
        if e.type == "bank_settled":
            recorded.setdefault(getattr(e, "party", ""), e)
    none: list[Decimal | None] = [None] * len(bank.layers)
    shares: list[Decimal | None] = list(bank.shares) or none
    commissions: list[Decimal | None] = list(bank.commissions) or none
    for layer, share, commission in zip(bank.layers, shares, commissions, strict=True):
        rec = recorded.pop(layer.party, None)
        table.rows.append(MoneyRow([layer.party, amount(layer.capital)], [
            Pair(share, getattr(rec, "result", None)),
            Pair(commission, getattr(rec, "commission", None))]))
    for party, rec in recorded.items():  # a layer the round does not have
        table.rows.append(MoneyRow([party, "—"], [Pair(None, getattr(rec, "result", None)),
                                                  Pair(None, getattr(rec, "commission", None))]))
    return table


def _payments(rnd: Round) -> MoneyTable:
    table = MoneyTable("Payments: derived against recorded", ["from", "to"],
                       ["amount", "reason", "shortfall"], "MJ arts. 7, 10; RULES §4.7–4.9")
    if rnd.ended_by is None:
        return table
    due = {(p.frm, p.to): p for p in outcome(rnd).due}
    paid: dict[tuple[str, str], Decimal] = defaultdict(lambda: ZERO)
    reasons: dict[tuple[str, str], set[str]] = defaultdict(set)
    short: dict[tuple[str, str], Decimal] = defaultdict(lambda: ZERO)
    for e in rnd.events:
        key = (str(getattr(e, "from_", "")), str(getattr(e, "to", "")))
        if e.type == "payment_made":
            paid[key] += getattr(e, "amount", ZERO)
            reasons[key].add(str(getattr(e, "reason", "")))
        elif e.type == "payment_shortfall":
            short[key] += getattr(e, "amount", ZERO)
    for key in dict.fromkeys([*due, *paid, *short]):
        p = due.get(key)
        table.rows.append(MoneyRow(list(key), [
            Pair(p.amount if p else None, paid.get(key)),
            Pair(p.reason if p else None, "/".join(sorted(reasons[key])) if key in paid else None),
            Pair(p.shortfall if p else ZERO, short.get(key, ZERO))]))
    return table


def _commissions(derivation: Derivation) -> MoneyTable:
    table = MoneyTable("Commission: derived against recorded", ["seat"], ["commission"],
                       "MJ art. 8; RULES §4.10")
    for c in derivation.commissions:
        table.rows.append(MoneyRow([c.party], [Pair(c.due, c.recorded)]))
    if derivation.commissions:
        table.rule = derivation.commissions[0].rule
    return table
