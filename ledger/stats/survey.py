"""``ledger stats``: one streaming pass over the store, then the tests and the error rates.

Every closed or voided round is streamed in store order (:func:`projections.base.closed_rounds`)
and judged by the same :class:`~ledger.verify.judge.RoundJudge` as ``ledger verify`` (so the
findings counted are verify's). A selected round — by table, game and gaming day — adds its
outcomes to its table's :class:`~ledger.stats.collect.Tally` for its gaming day, and its
findings and the money they involve to its table's and its croupier's :class:`ErrorRate`.
Nothing else is kept: memory depends on tables, days and croupiers, not on rounds.

**Families and correction.** Each piece of equipment (a table's wheel, shaker, shoe or wall)
is one family: its tests over the whole period plus, when the period spans more than one gaming
day, the same tests per day. Holm's step-down correction is applied within the family, so a
fair piece of equipment is flagged with probability at most ``alpha`` whatever the number of
days or positions tested (see :mod:`ledger.stats.tests` for why Holm). A test whose sample is
too small for its reference distribution (``valid: false``) is reported, takes no part in the
correction and is never flagged.

**Money involved** (from verify's expected and recorded values, in the round's currency):
``over_paid`` / ``under_paid`` — what the table paid (stake returned plus prize; a Mah-Jong
payment; an SP9 bank layer's result) above or below what the rules give; ``commission_not_taken``
/ ``commission_over_taken`` — commission due minus commission recorded, by sign.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from ledger.findings import Finding
from ledger.games import GAMES
from ledger.round import Round
from ledger.stats.collect import TableWatch, Tally, cell_labels, cell_probabilities, equipment_of
from ledger.stats.tests import TestResult, holm
from ledger.store import LedgerApp
from ledger.verify.judge import RoundJudge
from projections.base import closed_rounds
from projections.gaming_day import day_of

SCHEMA_VERSION = 1
DEFAULT_ALPHA = 0.01
"""Default family-wise level: a fair piece of equipment is flagged at most 1 % of the time."""
CORRECTION = "holm"
NO_CROUPIER = "(not recorded)"
ZERO = Decimal(0)
MONEY_KEYS = ("over_paid", "under_paid", "commission_not_taken", "commission_over_taken")


@dataclass(frozen=True)
class StatsQuery:
    """Which rounds ``ledger stats`` looks at, and the level at which it flags."""

    table: str | None = None
    game: str | None = None
    start: date | None = None
    end: date | None = None
    alpha: float = DEFAULT_ALPHA
    cutoff_hour: int = 6

    def day(self, rnd: Round) -> date | None:
        """The round's gaming day if the round is selected, else ``None``."""
        if (self.table is not None and rnd.table != self.table) or (
                self.game is not None and rnd.game != self.game):
            return None
        day = day_of(rnd.opened_at, self.cutoff_hour)
        if (self.start is not None and day < self.start) or (self.end is not None and day > self.end):
            return None
        return day


@dataclass
class Entry:
    """One test of one piece of equipment over one day or the whole period."""

    table: str
    game: str
    equipment: str
    day: date | None
    test: str
    result: TestResult
    observed: list[int] | None = None
    p_adjusted: float | None = None
    flagged: bool = False

    def expected(self) -> list[float] | None:
        """Expected count per cell (goodness-of-fit tests only)."""
        if self.observed is None:
            return None
        n = sum(self.observed)
        return [n * p for p in cell_probabilities(self.test)]

    def to_json(self) -> dict[str, Any]:
        """The entry as ``ledger stats --json`` prints it (fixed keys: ``note``, ``cells``,
        ``observed`` and ``expected`` are ``null`` when they do not apply)."""
        r = self.result
        out: dict[str, Any] = {
            "table": self.table, "game": self.game, "equipment": self.equipment,
            "day": self.day.isoformat() if self.day else None, "test": self.test,
            "method": r.method, "statistic": _finite(r.statistic), "df": r.df, "n": r.n,
            "p_value": r.p_value, "p_adjusted": self.p_adjusted, "valid": r.valid,
            "flagged": self.flagged, "note": r.note or None,
            "cells": None, "observed": None, "expected": None,
        }
        if self.observed is not None:  # a goodness-of-fit test: its counts per cell
            expected = self.expected() or []
            out["cells"] = cell_labels(self.test)[:len(self.observed)]
            out["observed"] = self.observed
            out["expected"] = [round(e, 3) for e in expected]
        return out


@dataclass
class ErrorRate:
    """Findings and the money they involve, for one table or one croupier."""

    kind: str
    """``table`` or ``croupier``."""
    key: str
    games: set[str] = field(default_factory=set)
    rounds: int = 0
    by_code: Counter[str] = field(default_factory=Counter)
    money: dict[str, dict[str, Decimal]] = field(default_factory=dict)

    @property
    def findings(self) -> int:
        """Error findings counted."""
        return sum(self.by_code.values())

    @property
    def per_1000(self) -> float:
        """Error findings per 1,000 rounds."""
        return 1000.0 * self.findings / self.rounds if self.rounds else 0.0

    def add(self, finding: Finding, currency: str) -> None:
        """Count one error finding and the money it involves."""
        self.by_code[finding.code] += 1
        for key, amount in money_involved(finding).items():
            if amount:
                bucket = self.money.setdefault(currency, dict.fromkeys(MONEY_KEYS, ZERO))
                bucket[key] += amount

    def to_json(self) -> dict[str, Any]:
        """The row as ``ledger stats --json`` prints it."""
        return {
            self.kind: self.key, "games": sorted(self.games), "rounds": self.rounds,
            "findings": self.findings, "per_1000_rounds": round(self.per_1000, 3),
            "by_code": {code: {"count": n, "per_1000_rounds":
                               round(1000.0 * n / self.rounds, 3) if self.rounds else 0.0}
                        for code, n in sorted(self.by_code.items())},
            "money": {cur: {k: str(v) for k, v in amounts.items()}
                      for cur, amounts in sorted(self.money.items())},
        }


@dataclass
class StatsReport:
    """Everything ``ledger stats`` found."""

    query: StatsQuery
    rounds: int = 0
    entries: list[Entry] = field(default_factory=list)
    tables: list[ErrorRate] = field(default_factory=list)
    croupiers: list[ErrorRate] = field(default_factory=list)

    @property
    def flagged(self) -> list[Entry]:
        """The flagged tests."""
        return [e for e in self.entries if e.flagged]

    def flagged_equipment(self) -> list[tuple[str, str, list[Entry]]]:
        """``(table, equipment, flagged tests)`` for each flagged piece of equipment."""
        out: dict[tuple[str, str], list[Entry]] = {}
        for e in self.flagged:
            out.setdefault((e.table, e.equipment), []).append(e)
        return [(t, eq, es) for (t, eq), es in sorted(out.items())]

    def to_json(self) -> dict[str, Any]:
        """The object ``ledger stats --json`` prints."""
        q = self.query
        return {
            "schema_version": SCHEMA_VERSION,
            "from": q.start.isoformat() if q.start else None,
            "to": q.end.isoformat() if q.end else None,
            "table": q.table, "game": q.game, "alpha": q.alpha, "correction": CORRECTION,
            "family": "equipment", "rounds": self.rounds,
            "flagged": [{"table": t, "equipment": eq, "tests": [e.test for e in es]}
                        for t, eq, es in self.flagged_equipment()],
            "tests": [e.to_json() for e in self.entries],
            "tables": [r.to_json() for r in self.tables],
            "croupiers": [r.to_json() for r in self.croupiers],
        }


def survey(app: LedgerApp, query: StatsQuery) -> StatsReport:
    """One streaming pass over the store: the tests and the error rates of the selection."""
    judge = RoundJudge()
    watches: dict[str, TableWatch] = {}
    tallies: dict[str, dict[date, Tally]] = {}
    games: dict[str, str] = {}
    currencies: dict[str, str] = {}
    tables: dict[str, ErrorRate] = {}
    croupiers: dict[str, ErrorRate] = {}
    report = StatsReport(query)
    for _, rnd in closed_rounds(app):
        day = query.day(rnd)
        if day is None and not GAMES[rnd.game].follows_rounds:
            continue
        judged = judge.judge(list(rnd.events))
        if day is None:
            continue
        report.rounds += 1
        table = rnd.table
        games[table] = rnd.game
        currencies[table] = rnd.opened.currency
        watch = watches.get(table)
        if watch is None:
            watch = watches[table] = TableWatch(table, rnd.game)
        by_day = tallies.setdefault(table, {})
        tally = by_day.get(day)
        if tally is None:
            tally = by_day[day] = Tally()
        watch.observe(rnd, tally)
        croupier = getattr(rnd.opened, "croupier", None) or NO_CROUPIER
        for rate in (_rate(tables, "table", table), _rate(croupiers, "croupier", croupier)):
            rate.rounds += 1
            rate.games.add(rnd.game)
            for finding in judged.findings:
                if finding.severity == "error":
                    rate.add(finding, rnd.opened.currency)
    for finding in judge.finish():
        if finding.severity == "error" and finding.table in tables:
            tables[finding.table].add(finding, currencies[finding.table])
    for table in sorted(tallies):
        report.entries += entries_for(table, games[table], tallies[table])
    correct(report.entries, query.alpha)
    report.tables = _ranked(tables)
    report.croupiers = _ranked(croupiers)
    return report


def _rate(rates: dict[str, ErrorRate], kind: str, key: str) -> ErrorRate:
    rate = rates.get(key)
    if rate is None:
        rate = rates[key] = ErrorRate(kind, key)
    return rate


def _ranked(rates: dict[str, ErrorRate]) -> list[ErrorRate]:
    """Most findings per 1,000 rounds first."""
    return sorted(rates.values(), key=lambda r: (-r.per_1000, -r.findings, r.key))


def entries_for(table: str, game: str, by_day: Mapping[date, Tally]) -> list[Entry]:
    """The tests of one table: the period's, then each day's when there is more than one day
    (``by_day`` may be keyed by any ordered day labels)."""
    period = Tally()
    for day in sorted(by_day):
        period.merge(by_day[day])
    spans: list[tuple[date | None, Tally]] = [(None, period)]
    if len(by_day) > 1:
        spans += sorted(by_day.items())
    out = []
    for span, tally in spans:
        for test, result in tally.results().items():
            out.append(Entry(table, game, equipment_of(game, test), span, test, result,
                             observed=list(tally.counts[test]) if test in tally.counts else None))
    return out


def correct(entries: list[Entry], alpha: float) -> None:
    """Holm within each piece of equipment's family of valid tests; flag below ``alpha``."""
    families: dict[tuple[str, str], list[Entry]] = {}
    for e in entries:
        if e.result.valid:
            families.setdefault((e.table, e.equipment), []).append(e)
    for family in families.values():
        for e, adjusted in zip(family, holm([e.result.p_value for e in family]), strict=True):
            e.p_adjusted = adjusted
            e.flagged = adjusted < alpha


def money_involved(finding: Finding) -> dict[str, Decimal]:
    """The money a finding involves (see the module docstring); empty if none can be read."""
    exp, rec = finding.expected or {}, finding.recorded or {}
    out: dict[str, Decimal] = {}
    if finding.code in ("settlement_mismatch", "payment_mismatch"):
        if "won" in exp and "won" in rec:
            diff = (_dec(rec.get("returned")) + _dec(rec.get("won"))
                    - _dec(exp.get("returned")) - _dec(exp.get("won")))
        elif "result" in exp and "result" in rec:
            diff = _dec(rec.get("result")) - _dec(exp.get("result"))
        elif "amount" in exp and "amount" in rec:
            diff = _dec(rec.get("amount")) - _dec(exp.get("amount"))
        else:
            return out
        out["over_paid" if diff > 0 else "under_paid"] = abs(diff)
    elif finding.code == "commission_mismatch":
        key = "commission" if "commission" in exp or "commission" in rec else "amount"
        if key not in exp and key not in rec:
            return out
        diff = _dec(exp.get(key)) - _dec(rec.get(key))
        out["commission_not_taken" if diff > 0 else "commission_over_taken"] = abs(diff)
    return out


def _dec(value: object) -> Decimal:
    if value is None:
        return ZERO
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return ZERO


def _finite(x: float) -> float | None:
    """JSON has no infinity: an impossible outcome's statistic is ``null``."""
    return x if x == x and abs(x) != float("inf") else None
