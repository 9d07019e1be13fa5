"""``ledger stats``: one streaming pass over the store, then the tests and the error rates.

Every closed or voided round is streamed in store order (:func:`projections.base.closed_rounds`)
and judged by the same :class:`~ledger.verify.judge.RoundJudge` as ``ledger verify`` (so the
findings counted are verify's). A selected round — by table, game and gaming day — adds its
outcomes to its table's :class:`~ledger.stats.collect.Tally` for its gaming day, and its
findings and the money they involve to its table's and its croupier's :class:`ErrorRate`.
Nothing else is kept: memory depends on tables, days and croupiers, not on rounds.

**Families and correction.** Each piece of equipment (a table's wheel, shaker, shoe or wall)
is one family: its tests over the whole period. A discrete weighted Bonferroni (:func:`correct`)
shares ``alpha`` among them, most of it to the tests shaped for the faults that matter
(:data:`WEIGHTS`), each run at a level it can attain, the levels summing to at most ``alpha``
(a shaker's two shaped tests count by their exact joint bound,
:func:`~ledger.stats.shaped.shaker_design`): a fair piece of equipment is flagged with
probability at most ``alpha``. A test whose sample is
too small for its reference distribution (``valid: false``) is reported, takes no part in the
correction and is never flagged. Days are not tested one by one (each day's test would cost
the period's test power); they feed the **sequential** schemes instead: a CUSUM per wheel and
per shaker, night by night (:class:`~ledger.stats.shaped.CellCusum`), and per shoe and wall,
shoe by shoe (:class:`~ledger.stats.shaped.CompositionCusum`), whose thresholds give a stated
in-control run length, so the false alarms of a whole property are known per night.

**Error rates.** Each croupier (and each table) is tested against the others of the same game
with its exposure, the rounds it dealt (:func:`~ledger.stats.shaped.error_rate_test`; Holm
across the rows); the ranking shows each rank's range.

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

from ledger.domain.findings import Finding
from ledger.domain.money import plain
from ledger.domain.round import Round
from ledger.games import GAMES
from ledger.stats.collect import (
    FACES,
    TableWatch,
    Tally,
    cell_labels,
    cell_probabilities,
    describe,
    equipment_of,
)
from ledger.stats.shaped import (
    CARD_CUSUM,
    SHAKER_CUSUM,
    TILE_CUSUM,
    WHEEL_CUSUM,
    CellCusum,
    CompositionCusum,
    CompositionScheme,
    CusumScheme,
    RateTest,
    attained_level,
    best_pair,
    error_rate_test,
    more_to_decide,
    shaker_design,
)
from ledger.stats.tests import TestResult
from ledger.storage.store import LedgerApp
from ledger.verify.judge import RoundJudge
from projections.base import closed_rounds
from projections.gaming_day import day_of

SCHEMA_VERSION = 2
DEFAULT_ALPHA = 0.01
"""Default family-wise level: a fair piece of equipment is flagged at most 1 % of the time."""
CORRECTION = "discrete_weighted_bonferroni"
WEIGHTS: dict[str, float] = {
    "max_pocket": 0.6,
    "sector": 0.38,
    "max_die_face": 0.49,
    "max_face_pooled": 0.49,
    "composition": 0.9,
}
"""The share of a family's alpha given to each shaped test; the general tests of the family
share what is left equally (a wheel: 0.01 each to ``pockets`` and ``colour_runs``). A shaped
test is then run at the largest level it can attain within its share, and what the
discreteness leaves goes to the shaped tests, heaviest first (:func:`correct`). The wheel's
hottest pocket gets more than its sector scan: its power is steep where the targets are
quoted, the sector's flat (docs/SURVEILLANCE.md; ``python -m bench.surveillance``)."""
DESIGN: dict[str, float] = {"max_pocket": 1.5, "sector": 1.2, "max_die_face": 1.5, "max_face_pooled": 1.2}
"""The alternative each shaped test of a wheel or shaker is designed against: its cell (a
pocket, a window of five pockets, a face of one die, a face of all dice) this many times as
likely. The two shaped tests of a piece share the family's level so as to maximise the sum of
their powers against these at the piece's amount of play (:func:`family_levels`)."""
PROPERTY_SIZE = 500
"""The property size at which the expected false alarms per night are also printed."""
UNIT = {"max_pocket": "spins", "sector": "spins", "max_die_face": "throws", "max_face_pooled": "throws"}
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
    rates_from: date | None = None
    """Error rates only from this gaming day (the day page: equipment over every night up to
    the day, errors of the day alone); earlier rounds are not judged unless their game's rules
    span rounds."""

    def day(self, rnd: Round) -> date | None:
        """The round's gaming day if the round is selected, else ``None``."""
        if (self.table is not None and rnd.table != self.table) or (
            self.game is not None and rnd.game != self.game
        ):
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
    weight: float = 0.0
    """This test's share of the family's alpha."""
    level: float = 0.0
    """The level it is run at: flagged when its p-value is at most this (:func:`correct`)."""
    dice: int = 1

    def more_needed(self, alpha: float) -> int | None:
        """About how many more spins or throws an undecided shaped test needs."""
        if self.flagged or self.test not in UNIT or not self.result.valid:
            return None
        per = self.dice if self.test == "max_face_pooled" else 1
        return more_to_decide(self.result, self.level or alpha * self.weight, per)

    def where(self) -> str:
        """The pocket, face, card or sector a shaped test points at."""
        return describe(self.test, self.result.detail)

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
            "table": self.table,
            "game": self.game,
            "equipment": self.equipment,
            "day": self.day.isoformat() if self.day else None,
            "test": self.test,
            "method": r.method,
            "statistic": _finite(r.statistic),
            "df": r.df,
            "n": r.n,
            "p_value": r.p_value,
            "p_adjusted": self.p_adjusted,
            "valid": r.valid,
            "flagged": self.flagged,
            "note": r.note or None,
            "weight": round(self.weight, 6),
            "level": self.level,
            "cells": None,
            "observed": None,
            "expected": None,
            "where": None,
            "observed_count": None,
            "expected_count": None,
            "effect": None,
            "effect_ci": None,
            "more_needed": None,
            "more_unit": None,
        }
        d = r.detail
        if d:
            out["where"] = self.where() or None
            out["observed_count"] = d.get("observed")
            out["expected_count"] = round(float(d["expected"]), 3)
            out["effect"] = None if d.get("effect") is None else round(float(d["effect"]), 4)
            ci = d.get("effect_ci")
            out["effect_ci"] = None if ci is None else [_finite(round(float(x), 4)) for x in ci]
        more = self.more_needed(self._alpha)
        if more is not None:
            out["more_needed"], out["more_unit"] = more, UNIT[self.test]
        if self.observed is not None:  # a goodness-of-fit test: its counts per cell
            expected = self.expected() or []
            out["cells"] = cell_labels(self.test)[: len(self.observed)]
            out["observed"] = self.observed
            out["expected"] = [round(e, 3) for e in expected]
        return out

    _alpha: float = DEFAULT_ALPHA


@dataclass
class Sequential:
    """The CUSUM of one wheel, shaker, shoe or wall over its nights."""

    table: str
    game: str
    equipment: str
    cusum: CellCusum | CompositionCusum

    @property
    def scheme(self) -> CusumScheme | CompositionScheme:
        """The scheme run."""
        return self.cusum.scheme

    def where(self, cell: int) -> str:
        """The pocket, face, card or tile of a cell (and, for a composition, the side)."""
        if isinstance(self.cusum, CompositionCusum):
            return self.cusum.where(cell)
        return f"pocket {cell}" if self.scheme.name == "pockets" else f"face {cell + 1}"

    def to_json(self) -> dict[str, Any]:
        """The entry as ``ledger stats --json`` prints it."""
        s = self.scheme
        last = self.cusum.path[-1] if self.cusum.path else None
        return {
            "table": self.table,
            "game": self.game,
            "equipment": self.equipment,
            "scheme": f"cusum:{s.name}",
            "alternative_ratio": s.ratio,
            "alternative": s.alternative,
            "threshold": s.threshold,
            "in_control_nights": s.in_control_nights,
            "nominal_per_night": s.nominal_per_night,
            "nights": len(self.cusum.path),
            "alarm": self.cusum.alarm,
            "flagged": self.cusum.alarm is not None,
            "where": self.where(last[2]) if last else None,
            "path": [
                {"night": night, "cusum": round(v, 4), "where": self.where(c)}
                for night, v, c in self.cusum.path
            ],
        }


@dataclass
class ErrorRate:
    """Findings and the money they involve, for one table or one croupier."""

    kind: str
    """``table`` or ``croupier``."""
    key: str
    games: set[str] = field(default_factory=set)
    rounds: int = 0
    error_rounds: int = 0
    """Rounds with at least one error finding (the test's count)."""
    by_code: Counter[str] = field(default_factory=Counter)
    money: dict[str, dict[str, Decimal]] = field(default_factory=dict)
    test: RateTest | None = None

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

    @property
    def group(self) -> str:
        """The rows it is compared with: the same game(s)."""
        return ",".join(sorted(self.games))

    def to_json(self) -> dict[str, Any]:
        """The row as ``ledger stats --json`` prints it."""
        t = self.test
        return {
            self.kind: self.key,
            "games": sorted(self.games),
            "rounds": self.rounds,
            "findings": self.findings,
            "per_1000_rounds": round(self.per_1000, 3),
            "error_rounds": self.error_rounds,
            "error_rate_ci": None if t is None else [round(x, 6) for x in t.rate_ci],
            "expected_error_rounds": None if t is None else round(t.expected, 3),
            "p_value": None if t is None else t.p_value,
            "p_adjusted": None if t is None else t.p_adjusted,
            "rank": None if t is None else t.rank,
            "rank_range": None if t is None else list(t.rank_range),
            "flagged": bool(t and t.flagged),
            "by_code": {
                code: {
                    "count": n,
                    "per_1000_rounds": round(1000.0 * n / self.rounds, 3) if self.rounds else 0.0,
                }
                for code, n in sorted(self.by_code.items())
            },
            "money": {
                cur: {k: plain(v) for k, v in amounts.items()} for cur, amounts in sorted(self.money.items())
            },
        }


@dataclass
class StatsReport:
    """Everything ``ledger stats`` found."""

    query: StatsQuery
    rounds: int = 0
    entries: list[Entry] = field(default_factory=list)
    tables: list[ErrorRate] = field(default_factory=list)
    croupiers: list[ErrorRate] = field(default_factory=list)
    sequential: list[Sequential] = field(default_factory=list)

    @property
    def flagged(self) -> list[Entry]:
        """The flagged tests."""
        return [e for e in self.entries if e.flagged]

    @property
    def alarms(self) -> list[Sequential]:
        """The pieces whose CUSUM raised an alarm."""
        return [s for s in self.sequential if s.cusum.alarm is not None]

    @property
    def anything_flagged(self) -> bool:
        """A test, an alarm or an error rate flagged."""
        return bool(
            self.flagged
            or self.alarms
            or any(r.test and r.test.flagged for r in self.tables + self.croupiers)
        )

    def flagged_equipment(self) -> list[tuple[str, str, list[Entry]]]:
        """``(table, equipment, flagged tests)`` for each flagged piece of equipment."""
        out: dict[tuple[str, str], list[Entry]] = {}
        for e in self.flagged:
            out.setdefault((e.table, e.equipment), []).append(e)
        return [(t, eq, es) for (t, eq), es in sorted(out.items())]

    def property_false_alarms(self) -> dict[str, Any]:
        """Expected fair pieces flagged per night by the sequential schemes, here and at a
        property of :data:`PROPERTY_SIZE` pieces of each kind (nominal nightly volume)."""
        out: dict[str, Any] = {"control": "expected false alarms per night (in-control run length per piece)"}
        schemes: tuple[tuple[CusumScheme | CompositionScheme, str], ...] = (
            (WHEEL_CUSUM, "wheel"),
            (SHAKER_CUSUM, "shaker"),
            (CARD_CUSUM, "shoe"),
            (TILE_CUSUM, "wall"),
        )
        for scheme, kind in schemes:
            here = sum(1 for s in self.sequential if s.scheme.name == scheme.name)
            out[kind] = {
                "pieces": here,
                "in_control_nights": scheme.in_control_nights,
                "in_control_years": round(scheme.in_control_nights / 365.25, 1),
                "per_night": round(here / scheme.in_control_nights, 6),
                f"per_night_at_{PROPERTY_SIZE}": round(PROPERTY_SIZE / scheme.in_control_nights, 4),
                f"per_30_nights_at_{PROPERTY_SIZE}": round(30 * PROPERTY_SIZE / scheme.in_control_nights, 3),
            }
        return out

    def to_json(self) -> dict[str, Any]:
        """The object ``ledger stats --json`` prints."""
        q = self.query
        return {
            "schema_version": SCHEMA_VERSION,
            "from": q.start.isoformat() if q.start else None,
            "to": q.end.isoformat() if q.end else None,
            "table": q.table,
            "game": q.game,
            "alpha": q.alpha,
            "correction": CORRECTION,
            "family": "equipment",
            "rounds": self.rounds,
            "flagged": [
                {"table": t, "equipment": eq, "tests": [e.test for e in es]}
                for t, eq, es in self.flagged_equipment()
            ],
            "alarms": [
                {"table": s.table, "equipment": s.equipment, "night": s.cusum.alarm} for s in self.alarms
            ],
            "property": self.property_false_alarms(),
            "tests": [e.to_json() for e in self.entries],
            "sequential": [s.to_json() for s in self.sequential],
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
        follows = GAMES[rnd.game].follows_rounds
        rated = day is not None and (query.rates_from is None or day >= query.rates_from)
        if day is None and not follows:
            continue
        judged = judge.judge(list(rnd.events)) if rated or follows else None
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
        watch.see_night(str(day))
        watch.observe(rnd, tally)
        if judged is None or not rated:
            continue
        croupier = getattr(rnd.opened, "croupier", None) or NO_CROUPIER
        erred = any(f.severity == "error" for f in judged.findings)
        for rate in (_rate(tables, "table", table), _rate(croupiers, "croupier", croupier)):
            rate.rounds += 1
            rate.error_rounds += erred
            rate.games.add(rnd.game)
            for finding in judged.findings:
                if finding.severity == "error":
                    rate.add(finding, rnd.opened.currency)
    for finding in judge.finish():
        if finding.severity == "error" and finding.table in tables:
            tables[finding.table].add(finding, currencies[finding.table])
    for table, watch in watches.items():
        days = tallies[table]
        watch.finish(days[max(days)])
    for table in sorted(tallies):
        report.entries += entries_for(table, games[table], tallies[table])
        report.sequential += sequential_for(table, games[table], tallies[table])
        composition_path = watches[table].sequential
        if composition_path is not None:
            equipment = "wall" if composition_path.scheme is TILE_CUSUM else "shoe"
            report.sequential.append(Sequential(table, games[table], equipment, composition_path))
    correct(report.entries, query.alpha)
    report.tables = rate_tests(tables, query.alpha)
    report.croupiers = rate_tests(croupiers, query.alpha)
    return report


def rate_tests(rates: dict[str, ErrorRate], alpha: float) -> list[ErrorRate]:
    """Each row tested against the others of its game(s); ranked by findings per 1,000."""
    groups: dict[str, dict[str, ErrorRate]] = {}
    for rate in rates.values():
        groups.setdefault(rate.group, {})[rate.key] = rate
    for group in groups.values():
        if len(group) < 2:
            continue
        for test in error_rate_test({k: (r.rounds, r.error_rounds) for k, r in group.items()}, alpha):
            group[test.key].test = test
    return _ranked(rates)


def sequential_for(table: str, game: str, by_day: Mapping[date, Tally]) -> list[Sequential]:
    """The CUSUM of the table's wheel (pockets) or shaker (faces of every die), night by
    night in day order."""
    out = []
    days = sorted(by_day)
    if any("pockets" in by_day[d].counts for d in days):
        wheel = CellCusum(WHEEL_CUSUM)
        for d in days:
            wheel.night(str(d), by_day[d].counts.get("pockets") or [0] * WHEEL_CUSUM.cells)
        out.append(Sequential(table, game, "wheel", wheel))
    if any(t.startswith("die") for d in days for t in by_day[d].counts):
        shaker = CellCusum(SHAKER_CUSUM)
        for d in days:
            dice = [c for t, c in by_day[d].counts.items() if t.startswith("die")]
            shaker.night(str(d), [sum(c[f] for c in dice) for f in range(FACES)])
        out.append(Sequential(table, game, "shaker", shaker))
    return out


def _rate(rates: dict[str, ErrorRate], kind: str, key: str) -> ErrorRate:
    rate = rates.get(key)
    if rate is None:
        rate = rates[key] = ErrorRate(kind, key)
    return rate


def _ranked(rates: dict[str, ErrorRate]) -> list[ErrorRate]:
    """Most findings per 1,000 rounds first."""
    return sorted(rates.values(), key=lambda r: (-r.per_1000, -r.findings, r.key))


def entries_for(table: str, game: str, by_day: Mapping[date, Tally]) -> list[Entry]:
    """The tests of one table over the period (``by_day`` may be keyed by any ordered labels)."""
    period = Tally()
    for day in sorted(by_day):
        period.merge(by_day[day])
    dice = sum(1 for t in period.counts if t.startswith("die"))
    return [
        Entry(
            table,
            game,
            equipment_of(game, test),
            None,
            test,
            result,
            observed=list(period.counts[test]) if test in period.counts else None,
            dice=max(dice, 1),
        )
        for test, result in period.results().items()
    ]


def correct(entries: list[Entry], alpha: float) -> None:
    """Discrete weighted Bonferroni within each piece of equipment's family of valid tests:
    each test is run at its share of ``alpha`` (:data:`WEIGHTS`), a shaped test at the largest
    p-value it can give below that share (:func:`~ledger.stats.shaped.attained_level`, a
    function of the amount of play only, never of the counts); what the discreteness leaves
    of ``alpha`` goes to the shaped tests, heaviest first. The levels the tests are run at sum
    to at most ``alpha`` (a shaker's shaped pair by its exact joint bound, not its levels' sum),
    so a fair piece is flagged with probability at most ``alpha`` (the union bound, under any
    dependence between the tests). A test is flagged when its p-value
    is at most its level; its adjusted p-value is ``p · alpha / level``."""
    families: dict[tuple[str, str], list[Entry]] = {}
    for e in entries:
        e._alpha = alpha
        if e.result.valid:
            families.setdefault((e.table, e.equipment), []).append(e)
    for family in families.values():
        shaped = sum(WEIGHTS.get(e.test, 0.0) for e in family)
        general = [e for e in family if e.test not in WEIGHTS]
        rest = (1.0 - shaped) / len(general) if general else 0.0
        total = shaped + rest * len(general)
        for e in family:
            e.weight = WEIGHTS.get(e.test, rest) / total
        for e, level in zip(family, family_levels(family, alpha), strict=True):
            e.level = level
            p = e.result.p_value
            e.flagged = level > 0 and p <= level * (1 + 1e-9)
            e.p_adjusted = min(1.0, p * alpha / level) if level > 0 else 1.0


def family_levels(family: list[Entry], alpha: float) -> list[float]:
    """The level each test of a family is run at (see :func:`correct`): a general test at its
    share; a shaker's ``max_die_face`` and ``max_face_pooled`` designed together, their exact
    joint bound within what the general tests leave (:func:`~ledger.stats.shaped.shaker_design`);
    any other two shaped tests with design alternatives (:data:`DESIGN`, a wheel's) at the
    attainable levels that maximise the sum of their powers against them
    (:func:`~ledger.stats.shaped.best_pair`); any other shaped test at the largest level it
    can attain within its share, raised with what the others leave."""
    specs = [e.result.detail.get("levels") for e in family]
    levels = [
        attained_level(spec, alpha * e.weight) if spec else alpha * e.weight
        for e, spec in zip(family, specs, strict=True)
    ]
    designed = [i for i, e in enumerate(family) if specs[i] and e.test in DESIGN]
    joint: set[int] = set()
    if len(designed) == 2:
        i, j = designed
        spec_i, spec_j = specs[i], specs[j]
        assert spec_i is not None and spec_j is not None
        budget = alpha - sum(lv for k, lv in enumerate(levels) if k not in designed)
        shaker = _shaker_pair(family[i].test, spec_i, family[j].test, spec_j)
        if shaker is not None:
            die, pooled = (i, j) if family[i].test == "max_die_face" else (j, i)
            n, dice, faces = shaker
            design = shaker_design(
                n, dice, faces, budget, alpha, DESIGN["max_die_face"], DESIGN["max_face_pooled"]
            )
            levels[die], levels[pooled] = design.die_level, design.pooled_level
            joint = {i, j}
        else:
            levels[i], levels[j] = best_pair(
                spec_i, DESIGN[family[i].test], spec_j, DESIGN[family[j].test], budget
            )
    # a jointly designed pair spends its whole budget (its exact bound, not its levels' sum)
    left = 0.0 if joint else alpha - sum(levels)
    for i in sorted(range(len(family)), key=lambda i: (-family[i].weight, family[i].test)):
        spec = specs[i]
        if spec and left > 0 and i not in joint:
            raised = attained_level(spec, levels[i] + left)
            if raised > levels[i]:
                left -= raised - levels[i]
                levels[i] = raised
    return levels


def _shaker_pair(
    first: str, first_spec: Mapping[str, Any], second: str, second_spec: Mapping[str, Any]
) -> tuple[int, int, int] | None:
    """``(throws, dice, faces)`` when the pair is a shaker's ``max_die_face`` and
    ``max_face_pooled`` over equal throws of fair ``faces``-sided dice (designed together,
    :func:`~ledger.stats.shaped.shaker_design`), else ``None``."""
    specs = {first: first_spec, second: second_spec}
    die, pooled = specs.get("max_die_face"), specs.get("max_face_pooled")
    if die is None or pooled is None:
        return None
    n, dice, faces = int(die["n"]), int(die["sidak"]), int(die["k"])
    if int(pooled["n"]) != dice * n or int(pooled["k"]) != faces or int(pooled["sidak"]) != 1 or dice < 2:
        return None
    return n, dice, faces


def money_involved(finding: Finding) -> dict[str, Decimal]:
    """The money a finding involves (see the module docstring); empty if none can be read."""
    exp, rec = finding.expected or {}, finding.recorded or {}
    out: dict[str, Decimal] = {}
    if finding.code in ("settlement_mismatch", "payment_mismatch"):
        if "won" in exp and "won" in rec:
            diff = (
                _dec(rec.get("returned"))
                + _dec(rec.get("won"))
                - _dec(exp.get("returned"))
                - _dec(exp.get("won"))
            )
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
