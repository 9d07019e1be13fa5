"""Reconciling figures from other systems with the ledger's views (``ledger reconcile FILE``).

Finance holds figures the ledger did not produce: the jackpot controller's meters, the cage's
commission register, the SP9 bank's capital book. Each is a line of a CSV file with the header
``what,where,when,amount,currency`` (an optional ``note`` column is carried through):

==========================  ======================  ============================================
``what``                    ``where``               the ledger's figure at ``when``
==========================  ======================  ============================================
``commission``              a table                 commission recorded that gaming day (bets,
                                                    SP9 bank layers, Mah-Jong fees; ``commission``
                                                    view)
``commission_due``          a table                 commission due under the rules that day
``hold``                    a table                 the house's result before commission that day
``turnover``                a table                 stakes placed (Mah-Jong: payments) that day
``bank_commission``         an SP9 table            the bank layers' commission recorded that day
``bank_capital``            an SP9 table            the capital posted in the table's last round
                                                    opened at or before ``when`` (capital book)
``jackpot_balance``         a pool                  the pool's balance after its last round
                                                    opened at or before ``when`` (controller)
``jackpot_contributions``   a pool                  contributions that gaming day, or, with a
                                                    time, the cumulative meter up to it
``jackpot_awards``          a pool                  awards paid out of the pool, likewise
==========================  ======================  ============================================

``when`` is a gaming day ``YYYY-MM-DD`` (Macau time, cut-off hour; for a balance or capital the
end of that day) or an ISO 8601 time with its offset (``2026-11-20T12:00:00+08:00``); a time
without an offset is Macau time. Each line is **matched** (the same amount in the same
currency), a **variance** (the ledger's figure, and ``amount − ledger``), or **unknown** (the
ledger has no such figure: an unknown ``what``, a table or pool it never saw, nothing yet at
that point). A line that cannot be read is a :class:`MeterFileError` naming its line and field;
nothing is compared then.

**Missing from the file.** For each ``what`` the file gives, on every gaming day from the first
to the last it gives it for (a time counts for its gaming day), every table or pool the ledger
has a non-zero figure for that day and the file has no line for is **missing** (a variance to
see: a table the cage register left out, or a whole day inside the period), with the ledger's
figure.

**The notation** is strict, so nothing is read as something else: an amount is ASCII digits,
an optional leading ``-``, an optional point with at most :data:`MAX_DECIMALS` decimals and at
most :data:`MAX_DIGITS` digits before it (no exponent, no ``_``, no separators, no other
scripts' digits); a field holds at most :data:`MAX_FIELD` characters and no control character
but tab, a line at most :data:`MAX_LINE`; the header names each column once.

**Cost.** The file is read as a stream (:func:`iter_meters`), never held: the command reads it
once to check it and once to compare, line by line, each in constant time against indexes
built once over the views (:class:`LedgerFigures`); what it keeps is those indexes and, per
figure, its first and last day and the ledger's tables or pools the file has not named yet.
"""

from __future__ import annotations

import csv
import io
import re
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from ledger.domain.money import text
from projections.base import Row, Rows
from projections.commission import money_text
from projections.gaming_day import MACAU, gaming_day, hour_of

ZERO = Decimal(0)
COLUMNS = ("what", "where", "when", "amount", "currency")
SCHEMA_VERSION = 1
MAX_DIGITS = 15
"""Digits before the point of an amount."""
MAX_DECIMALS = 6
"""Digits after the point of an amount."""
MAX_FIELD = 1000
"""Characters in one field."""
MAX_LINE = 16_384
"""Characters in one line of the file."""
_AMOUNT = re.compile(rf"-?[0-9]{{1,{MAX_DIGITS}}}(?:\.[0-9]{{1,{MAX_DECIMALS}}})?")
_CURRENCY = re.compile(r"[A-Z]{3}")
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
"""Control characters (tab allowed): a hostile file must not reach a terminal with them."""


class MeterFileError(ValueError):
    """A meters file that cannot be read: which line, which field, why."""

    def __init__(self, line: int, field: str, why: str) -> None:
        super().__init__(f"line {line}, field {field!r}: {why}")
        self.line = line
        self.field = field
        self.why = why


def shown(text: str, limit: int = 32) -> str:
    """``text`` quoted for a message, cut to ``limit`` characters (with its length if cut)."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text)} characters)"


@dataclass(frozen=True)
class Meter:
    """One external figure."""

    line: int
    what: str
    where: str
    day: date | None
    at: datetime | None
    amount: Decimal
    currency: str
    note: str = ""

    @property
    def when(self) -> str:
        """``when`` as given (normalised)."""
        if self.at is not None:
            return self.at.isoformat()
        assert self.day is not None
        return self.day.isoformat()


@dataclass(frozen=True)
class Outcome:
    """One line compared: matched, variance or unknown."""

    meter: Meter
    status: str
    ledger: Decimal | None
    ledger_currency: str | None
    reason: str

    @property
    def difference(self) -> Decimal | None:
        """``amount − ledger`` (``None`` when unknown)."""
        return None if self.ledger is None else self.meter.amount - self.ledger

    def to_json(self) -> dict[str, Any]:
        """One line of ``--json``; amounts as strings."""
        m = self.meter
        return {
            "line": m.line,
            "what": m.what,
            "where": m.where,
            "when": m.when,
            "amount": money_text(m.amount),
            "currency": m.currency,
            "status": self.status,
            "ledger": None if self.ledger is None else money_text(self.ledger),
            "ledger_currency": self.ledger_currency,
            "difference": None if self.difference is None else money_text(self.difference),
            "reason": self.reason,
            "note": m.note,
        }


@dataclass(frozen=True)
class Missing:
    """A figure the ledger has and the file does not give (a variance to see)."""

    what: str
    where: str
    day: date
    ledger: Decimal
    ledger_currency: str

    def to_json(self) -> dict[str, Any]:
        """One entry of ``--json``'s ``missing_from_file``."""
        return {
            "what": self.what,
            "where": self.where,
            "day": self.day.isoformat(),
            "ledger": money_text(self.ledger),
            "ledger_currency": self.ledger_currency,
        }


# --- reading the file ---------------------------------------------------------------------


class _Lines:
    """The file's physical lines, counted, each refused past :data:`MAX_LINE` characters
    (naming the field the limit fell in), so the CSV reader never buffers a huge field."""

    def __init__(self, lines: Iterable[str]) -> None:
        self.lines = iter(lines)
        self.number = 0
        self.names: list[str] = []

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        try:
            line = next(self.lines)
        except UnicodeDecodeError:
            raise MeterFileError(self.number + 1, "line", "not UTF-8 text") from None
        self.number += 1
        if self.number == 1:
            line = line.removeprefix("\ufeff")
        if len(line) > MAX_LINE:
            raise MeterFileError(
                self.number, self._field_at(line[:MAX_LINE]), f"the line is longer than {MAX_LINE} characters"
            )
        return line

    def _field_at(self, start: str) -> str:
        if not self.names:
            return "header"
        cells = next(csv.reader([start]), [""])
        index = len(cells) - 1
        return self.names[index] if index < len(self.names) else "line"


def _header(reader: Any) -> list[str]:
    header = _next_record(reader)
    if header is None:
        raise MeterFileError(1, "header", "the file is empty; expected the header " + ",".join(COLUMNS))
    names = [h.strip().lower() for h in header]
    for name in names:
        if len(name) > MAX_FIELD:
            raise MeterFileError(1, "header", f"a column name of {len(name)} characters")
        if names.count(name) > 1:
            raise MeterFileError(1, name, f"the header names {name!r} twice (each column once)")
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise MeterFileError(
            1, missing[0], f"the header lacks {', '.join(missing)} (expected {','.join(COLUMNS)}[,note])"
        )
    return names


def _next_record(reader: Any) -> list[str] | None:
    """The next record; a CSV error names the line the record starts on (a quote left open
    runs on until the reader's own limit)."""
    start = reader.line_num + 1
    try:
        found: list[str] | None = next(reader, None)
        return found
    except csv.Error as exc:
        raise MeterFileError(start, "line", f"not CSV from this line on: {exc}") from None


def iter_meters(lines: Iterable[str]) -> Iterator[Meter]:
    """The meters of a file given as lines (an open text file: read as a stream), or a
    :class:`MeterFileError` at the first line that cannot be read."""
    physical = _Lines(lines)
    reader = csv.reader(physical)
    names = physical.names = _header(reader)
    width = len(names)
    while True:
        number = reader.line_num + 1  # where the record starts
        cells = _next_record(reader)
        if cells is None:
            break
        stripped = [c.strip() for c in cells]
        if not any(stripped):
            continue
        if len(cells) > width:
            raise MeterFileError(number, "line", f"{len(cells)} fields, the header has {width}")
        if max(map(len, cells)) > MAX_FIELD:
            name, cell = next((n, c) for n, c in zip(names, cells, strict=False) if len(c) > MAX_FIELD)
            raise MeterFileError(number, name, f"{len(cell)} characters; at most {MAX_FIELD}")
        if _CONTROL.search("".join(cells)):
            name, cell = next((n, c) for n, c in zip(names, cells, strict=False) if _CONTROL.search(c))
            found = _CONTROL.search(cell)
            assert found is not None
            raise MeterFileError(
                number, name, f"control character U+{ord(found.group()):04X} (a quoted line break included)"
            )
        yield _meter(number, dict(zip(names, stripped, strict=False)))


def read_meters(text: str) -> list[Meter]:
    """Parse a whole meters file held as text (module docstring), or raise
    :class:`MeterFileError`. For a file, iterate :func:`iter_meters` over it instead."""
    return list(iter_meters(io.StringIO(text, newline="")))


def amount_of(number: int, text: str) -> Decimal:
    """The amount of a line, in the documented notation only."""
    if not _AMOUNT.fullmatch(text):
        raise MeterFileError(
            number,
            "amount",
            f"{shown(text)} is not an amount: ASCII digits "
            f"(at most {MAX_DIGITS}), an optional point and at most "
            f"{MAX_DECIMALS} decimals, an optional leading minus — no "
            "exponent, no thousands separator",
        )
    return Decimal(text)


def _meter(number: int, row: dict[str, str]) -> Meter:
    for name in COLUMNS:
        if not row.get(name):
            raise MeterFileError(number, name, "empty")
    amount = amount_of(number, row["amount"])
    currency = row["currency"]
    if not _CURRENCY.fullmatch(currency):
        raise MeterFileError(number, "currency", f"{shown(currency)} is not a currency code like HKD or MOP")
    day, at = _when(number, row["when"])
    return Meter(number, row["what"].lower(), row["where"], day, at, amount, currency, row.get("note", ""))


def _when(number: int, text: str) -> tuple[date | None, datetime | None]:
    if _DAY.fullmatch(text):
        try:
            return date.fromisoformat(text), None
        except ValueError:
            raise MeterFileError(number, "when", f"{shown(text)} is not a date") from None
    try:
        at = datetime.fromisoformat(text) if text.isascii() else None
    except ValueError:
        at = None
    if at is None:
        raise MeterFileError(
            number, "when", f"{shown(text)} is neither a gaming day YYYY-MM-DD nor an ISO 8601 time"
        )
    at = at if at.tzinfo is not None else at.replace(tzinfo=MACAU)
    try:
        at.astimezone(MACAU)
    except OverflowError:
        raise MeterFileError(number, "when", f"{shown(text)} is outside the calendar in Macau time") from None
    return None, at


# --- the ledger's figures, indexed once -------------------------------------------------------


@dataclass
class _Timeline:
    """One table's or pool's rounds in opening order: times, gaming days, values."""

    at: list[datetime] = field(default_factory=list)
    days: list[date] = field(default_factory=list)
    values: list[Decimal] = field(default_factory=list)
    running: list[Decimal] = field(default_factory=lambda: [ZERO])
    """``running[i]``: the sum of the first ``i`` values."""

    def add(self, at: datetime, day: date, value: Decimal) -> None:
        """The next round, in opening order."""
        self.at.append(at)
        self.days.append(day)
        self.values.append(value)
        self.running.append(self.running[-1] + value)

    def total_by(self, meter: Meter) -> Decimal:
        """The sum of the values up to ``when`` (a time) or on that gaming day (a day)."""
        if meter.at is not None:
            return self.running[self.last_by(meter) + 1]
        day = meter.day or date.min
        return self.running[bisect_right(self.days, day)] - self.running[bisect_left(self.days, day)]

    def last_by(self, meter: Meter) -> int:
        """Index of the last round opened at or before ``when`` (its gaming day's end), or
        -1."""
        if meter.at is not None:
            return bisect_right(self.at, meter.at) - 1
        return bisect_right(self.days, meter.day or date.min) - 1


@dataclass
class _DaySums:
    """One field of one view summed per (table, gaming day), and each table's currency."""

    sums: dict[tuple[str, date], Decimal]
    currency: dict[str, str]


@dataclass
class LedgerFigures:
    """The views a reconciliation reads, and the cut-off hour of its gaming days. Each figure
    is looked up in an index built over the views on first use (linear, once)."""

    commission: Rows
    house: Rows
    jackpot: Rows
    bank: Rows
    cutoff_hour: int = 6
    _days: dict[str, date] = field(default_factory=dict, init=False, repr=False)
    _sums: dict[tuple[str, str, str], _DaySums] = field(default_factory=dict, init=False, repr=False)
    _timelines: dict[str, dict[str, _Timeline]] = field(default_factory=dict, init=False, repr=False)

    def compare(self, meter: Meter) -> Outcome:
        """One line against the ledger's figure."""
        figure = FIGURES.get(meter.what)
        if figure is None:
            return Outcome(
                meter,
                "unknown",
                None,
                None,
                f"unknown figure {shown(meter.what)}; known: {', '.join(sorted(FIGURES))}",
            )
        found = figure(self, meter)
        if isinstance(found, str):
            return Outcome(meter, "unknown", None, None, found)
        amount, currency = found
        if currency != meter.currency:
            return Outcome(
                meter,
                "variance",
                amount,
                currency,
                f"the ledger keeps {meter.where} in {currency}, not {meter.currency}",
            )
        if amount == meter.amount:
            return Outcome(meter, "matched", amount, currency, "")
        return Outcome(
            meter,
            "variance",
            amount,
            currency,
            f"{meter.what} differs by {text(meter.amount - amount)}",
        )

    def day_of_hour(self, hour: str) -> date:
        """The gaming day of a Macau hour (memoised: views repeat their hours)."""
        day = self._days.get(hour)
        if day is None:
            day = self._days[hour] = gaming_day(hour, self.cutoff_hour)
        return day

    def day_of(self, at: datetime) -> date:
        """The gaming day of a moment."""
        return self.day_of_hour(hour_of(at))

    # -- per table and gaming day --------------------------------------------------------

    def day_sums(self, view: str, prefix: str, field_name: str) -> _DaySums:
        """The index of one field of one view per (table, gaming day)."""
        key = (view, prefix, field_name)
        if key not in self._sums:
            sums: dict[tuple[str, date], Decimal] = defaultdict(Decimal)
            currency: dict[str, str] = {}
            rows: Rows = getattr(self, view)
            for _, row in rows.scan(prefix):
                table = str(row["table"])
                currency[table] = str(row["currency"])
                sums[(table, self.day_of_hour(str(row["hour"])))] += Decimal(row.get(field_name, "0"))
            self._sums[key] = _DaySums(dict(sums), currency)
        return self._sums[key]

    def _day_sum(self, view: str, prefix: str, field_name: str, meter: Meter) -> tuple[Decimal, str] | str:
        if meter.day is None:
            return f"{meter.what} is a gaming-day figure: give when as YYYY-MM-DD"
        index = self.day_sums(view, prefix, field_name)
        currency = index.currency.get(meter.where)
        if currency is None:  # a table that played but has no row in this view
            currency = self.day_sums("house", "t|", "hold").currency.get(meter.where)
        if currency is None:
            return f"no table {shown(meter.where)} in the ledger"
        return index.sums.get((meter.where, meter.day), ZERO), currency

    def table_figure(
        self, view: str, prefix: str, field_name: str
    ) -> Callable[[Meter], tuple[Decimal, str] | str]:
        """A per-table, per-gaming-day sum of one field of one view."""
        return lambda meter: self._day_sum(view, prefix, field_name, meter)

    # -- at a point in time ----------------------------------------------------------------

    def timelines(self, name: str) -> dict[str, _Timeline]:
        """Per SP9 table its capital (``capital``), per pool its balance (``balance``), its
        contributions (``contributions``) or its awards (``awards``), round by round."""
        if name not in self._timelines:
            self._timelines[name] = self._timeline(name)
        return self._timelines[name]

    def _timeline(self, name: str) -> dict[str, _Timeline]:
        rows: Rows = self.bank if name == "capital" else self.jackpot
        marker = ":round:" if name == "capital" else ":history:"
        found: dict[str, list[tuple[datetime, Decimal]]] = defaultdict(list)
        for key, row in rows.scan("table:" if name == "capital" else "pool:"):
            owner, sep, _ = key.partition(marker)
            if not sep or (name == "capital" and row["voided"]):
                continue
            found[owner.split(":", 1)[1]].append((datetime.fromisoformat(str(row["at"])), _value(row, name)))
        out: dict[str, _Timeline] = {}
        for where, points in found.items():
            points.sort(key=lambda p: p[0])
            line = out[where] = _Timeline()
            for at, value in points:
                line.add(at, self.day_of(at), value)
        return out

    def bank_capital(self, meter: Meter) -> tuple[Decimal, str] | str:
        """The capital posted in the table's last round by ``when``."""
        summary = self.bank.get(f"table:{meter.where}")
        if summary is None:
            return f"no SP9 table {shown(meter.where)} in the ledger"
        line = self.timelines("capital").get(meter.where, _Timeline())
        last = line.last_by(meter)
        if last < 0:
            return f"table {meter.where} had played no round by {meter.when}"
        return line.values[last], str(summary["currency"])

    def jackpot_balance(self, meter: Meter) -> tuple[Decimal, str] | str:
        """The pool's balance after its last round by ``when``."""
        meters = self.jackpot.get(f"pool:{meter.where}")
        if meters is None:
            return f"no jackpot pool {shown(meter.where)} in the ledger"
        line = self.timelines("balance").get(meter.where, _Timeline())
        last = line.last_by(meter)
        if last < 0:
            return f"pool {meter.where} had no round by {meter.when}"
        return line.values[last], str(meters["currency"])

    def pool_meter(self, name: str) -> Callable[[Meter], tuple[Decimal, str] | str]:
        """Contributions or awards of a pool: that gaming day, or cumulative to a time."""

        def figure(meter: Meter) -> tuple[Decimal, str] | str:
            meters = self.jackpot.get(f"pool:{meter.where}")
            if meters is None:
                return f"no jackpot pool {shown(meter.where)} in the ledger"
            line = self.timelines(name).get(meter.where, _Timeline())
            return line.total_by(meter), str(meters["currency"])

        return figure

    # -- what the ledger has, for the file to cover --------------------------------------

    def present(self, what: str) -> dict[date, set[str]]:
        """Per gaming day, the tables or pools with a figure ``what`` in the ledger."""
        spec = PRESENCE.get(what)
        found: dict[date, set[str]] = defaultdict(set)
        if spec is None:
            return found
        kind, name = spec
        if kind == "timeline":
            for where, line in self.timelines(name).items():
                for day in line.days:
                    found[day].add(where)
            return found
        view, prefix, field_name = name.split(" ")
        sp9 = self.timelines("capital") if what == "bank_commission" else None
        for table, day in self.day_sums(view, prefix, field_name).sums:
            if sp9 is None or table in sp9:
                found[day].add(table)
        return found


def _value(row: Row, name: str) -> Decimal:
    if name == "capital":
        return Decimal(row["capital"])
    if name == "balance":
        return Decimal(row["end"])
    if name == "contributions":
        return Decimal(row["contributions"])
    return sum((Decimal(a["from_pool"]) for a in row["awards"]), ZERO)


Figure = Callable[[LedgerFigures, Meter], "tuple[Decimal, str] | str"]

FIGURES: dict[str, Figure] = {
    "commission": lambda f, m: f.table_figure("commission", "c|", "recorded")(m),
    "commission_due": lambda f, m: f.table_figure("commission", "c|", "due")(m),
    "hold": lambda f, m: f.table_figure("house", "t|", "hold")(m),
    "turnover": lambda f, m: f.table_figure("house", "t|", "turnover")(m),
    "bank_commission": lambda f, m: f.table_figure("house", "t|", "commission_bank")(m),
    "bank_capital": LedgerFigures.bank_capital,
    "jackpot_balance": LedgerFigures.jackpot_balance,
    "jackpot_contributions": lambda f, m: f.pool_meter("contributions")(m),
    "jackpot_awards": lambda f, m: f.pool_meter("awards")(m),
}
"""Every figure ``what`` may name."""

PRESENCE: dict[str, tuple[str, str]] = {
    "commission": ("sums", "commission c| recorded"),
    "commission_due": ("sums", "commission c| due"),
    "hold": ("sums", "house t| hold"),
    "turnover": ("sums", "house t| turnover"),
    "bank_commission": ("sums", "house t| commission_bank"),
    "bank_capital": ("timeline", "capital"),
    "jackpot_balance": ("timeline", "balance"),
    "jackpot_contributions": ("timeline", "contributions"),
    "jackpot_awards": ("timeline", "awards"),
}
"""Where the tables or pools that have each figure on a gaming day are found."""


# --- comparing, line by line -------------------------------------------------------------


class Reconciler:
    """Compares meters one at a time (constant time each) and remembers, per figure, the
    first and last gaming day the file gives it for and which of the ledger's tables or pools
    it named on each day."""

    def __init__(self, figures: LedgerFigures) -> None:
        self.figures = figures
        self.counts: Counter[str] = Counter()
        self._uncovered: dict[str, dict[date, set[str]]] = {}
        self._span: dict[str, tuple[date, date]] = {}

    def compare(self, meter: Meter) -> Outcome:
        """One line: its outcome, counted; its table or pool marked as given that day."""
        outcome = self.figures.compare(meter)
        self.counts[outcome.status] += 1
        if meter.what in PRESENCE:
            if meter.what not in self._uncovered:
                self._uncovered[meter.what] = self.figures.present(meter.what)
            day = (
                meter.day
                if meter.day is not None
                else self.figures.day_of(meter.at or datetime.min.replace(tzinfo=MACAU))
            )
            first, last = self._span.get(meter.what, (day, day))
            self._span[meter.what] = (min(first, day), max(last, day))
            present = self._uncovered[meter.what].get(day)
            if present is not None:
                present.discard(meter.where)
        return outcome

    def missing(self) -> list[Missing]:
        """The ledger's non-zero figures the file left out: for each figure it gives, every
        table or pool on every gaming day from its first to its last day for that figure
        (a whole day left out inside that span included)."""
        out = []
        for what, (first, last) in sorted(self._span.items()):
            uncovered = self._uncovered[what]
            for day in sorted(d for d in uncovered if first <= d <= last):
                for where in sorted(uncovered[day]):
                    found = FIGURES[what](self.figures, Meter(0, what, where, day, None, ZERO, ""))
                    if isinstance(found, tuple) and found[0] != ZERO:
                        out.append(Missing(what, where, day, *found))
        return out


@dataclass
class Reconciliation:
    """Every line of a meters file, compared, and what the file left out."""

    outcomes: list[Outcome]
    cutoff_hour: int
    missing: list[Missing] = field(default_factory=list)

    def count(self, status: str) -> int:
        """Lines with this status."""
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def exit_code(self) -> int:
        """1 when any line is a variance or a figure is missing from the file, else 0."""
        return exit_code(self.count("variance"), len(self.missing))

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` object."""
        return {
            "schema_version": SCHEMA_VERSION,
            "cutoff_hour": self.cutoff_hour,
            "matched": self.count("matched"),
            "variance": self.count("variance"),
            "unknown": self.count("unknown"),
            "missing": len(self.missing),
            "lines": [o.to_json() for o in self.outcomes],
            "missing_from_file": [m.to_json() for m in self.missing],
        }


def exit_code(variances: int, missing: int) -> int:
    """1 when any line is a variance or a figure is missing from the file, else 0."""
    return 1 if variances or missing else 0


def reconcile(meters: Iterable[Meter], figures: LedgerFigures) -> Reconciliation:
    """Compare every meter with the ledger (held in memory: for a file, see the CLI)."""
    reconciler = Reconciler(figures)
    outcomes = [reconciler.compare(m) for m in meters]
    return Reconciliation(outcomes, figures.cutoff_hour, reconciler.missing())
