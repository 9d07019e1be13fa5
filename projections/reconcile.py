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
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from projections.base import Row, Rows
from projections.commission import money_text
from projections.gaming_day import MACAU, gaming_day, hour_of

ZERO = Decimal(0)
COLUMNS = ("what", "where", "when", "amount", "currency")
_CURRENCY = re.compile(r"^[A-Z]{3}$")
SCHEMA_VERSION = 1


class MeterFileError(ValueError):
    """A meters file that cannot be read: which line, which field, why."""

    def __init__(self, line: int, field: str, why: str) -> None:
        super().__init__(f"line {line}, field {field!r}: {why}")
        self.line = line
        self.field = field
        self.why = why


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
        return {"line": m.line, "what": m.what, "where": m.where, "when": m.when,
                "amount": money_text(m.amount), "currency": m.currency, "status": self.status,
                "ledger": None if self.ledger is None else money_text(self.ledger),
                "ledger_currency": self.ledger_currency,
                "difference": None if self.difference is None else money_text(self.difference),
                "reason": self.reason, "note": m.note}


def read_meters(text: str) -> list[Meter]:
    """Parse a meters file (module docstring), or raise :class:`MeterFileError`."""
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    header = next(reader, None)
    if header is None:
        raise MeterFileError(1, "header", "the file is empty; expected the header "
                             + ",".join(COLUMNS))
    names = [h.strip().lower() for h in header]
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise MeterFileError(1, missing[0], f"the header lacks {', '.join(missing)} "
                             f"(expected {','.join(COLUMNS)}[,note])")
    meters = []
    for number, cells in enumerate(reader, start=2):
        if not any(c.strip() for c in cells):
            continue
        if len(cells) > len(names):
            raise MeterFileError(number, "line", f"{len(cells)} fields, the header has "
                                 f"{len(names)}")
        row = dict(zip(names, [c.strip() for c in cells], strict=False))
        meters.append(_meter(number, row))
    return meters


def _meter(number: int, row: dict[str, str]) -> Meter:
    for name in COLUMNS:
        if not row.get(name):
            raise MeterFileError(number, name, "empty")
    try:
        amount = Decimal(row["amount"])
    except InvalidOperation:
        raise MeterFileError(number, "amount", f"{row['amount']!r} is not a decimal amount "
                             "(use a point, no thousands separator)") from None
    if not amount.is_finite():
        raise MeterFileError(number, "amount", f"{row['amount']!r} is not a finite amount")
    currency = row["currency"]
    if not _CURRENCY.match(currency):
        raise MeterFileError(number, "currency", f"{currency!r} is not a currency code "
                             "like HKD or MOP")
    day, at = _when(number, row["when"])
    return Meter(number, row["what"].lower(), row["where"], day, at, amount, currency,
                 row.get("note", ""))


def _when(number: int, text: str) -> tuple[date | None, datetime | None]:
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        try:
            return date.fromisoformat(text), None
        except ValueError:
            raise MeterFileError(number, "when", f"{text!r} is not a date") from None
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        raise MeterFileError(number, "when", f"{text!r} is neither a gaming day YYYY-MM-DD "
                             "nor an ISO 8601 time") from None
    return None, at if at.tzinfo is not None else at.replace(tzinfo=MACAU)


@dataclass
class LedgerFigures:
    """The views a reconciliation reads, and the cut-off hour of its gaming days."""

    commission: Rows
    house: Rows
    jackpot: Rows
    bank: Rows
    cutoff_hour: int = 6

    def compare(self, meter: Meter) -> Outcome:
        """One line against the ledger's figure."""
        figure = FIGURES.get(meter.what)
        if figure is None:
            return Outcome(meter, "unknown", None, None,
                           f"unknown figure {meter.what!r}; known: {', '.join(sorted(FIGURES))}")
        found = figure(self, meter)
        if isinstance(found, str):
            return Outcome(meter, "unknown", None, None, found)
        amount, currency = found
        if currency != meter.currency:
            return Outcome(meter, "variance", amount, currency,
                           f"the ledger keeps {meter.where} in {currency}, not {meter.currency}")
        if amount == meter.amount:
            return Outcome(meter, "matched", amount, currency, "")
        return Outcome(meter, "variance", amount, currency,
                       f"{meter.what} differs by {money_text(meter.amount - amount)}")

    # -- per table and gaming day --------------------------------------------------------

    def _day_sum(self, rows: Rows, prefix: str, field: str, meter: Meter) -> tuple[Decimal, str] | str:
        if meter.day is None:
            return f"{meter.what} is a gaming-day figure: give when as YYYY-MM-DD"
        total, currency, seen = ZERO, None, False
        for _, row in rows.scan(prefix):
            if row["table"] != meter.where:
                continue
            seen = True
            currency = row["currency"]
            if gaming_day(row["hour"], self.cutoff_hour) == meter.day:
                total += Decimal(row.get(field, "0"))
        if not seen:  # a table that played but has no row in this view: nothing that day
            currency = next((r["currency"] for _, r in self.house.scan("t|")
                             if r["table"] == meter.where), None)
        if currency is None:
            return f"no table {meter.where!r} in the ledger"
        return total, currency

    def table_figure(self, view: str, prefix: str, field: str) -> Callable[[Meter], Any]:
        """A per-table, per-gaming-day sum of one field of one view."""
        return lambda meter: self._day_sum(getattr(self, view), prefix, field, meter)

    # -- at a point in time ----------------------------------------------------------------

    def _last_before(self, rows: list[Row], meter: Meter) -> Row | None:
        chosen = None
        for row in rows:
            opened = datetime.fromisoformat(row["at"])
            if meter.at is not None:
                if opened <= meter.at:
                    chosen = row
            elif gaming_day(hour_of(opened), self.cutoff_hour) <= (meter.day or date.min):
                chosen = row
        return chosen

    def bank_capital(self, meter: Meter) -> tuple[Decimal, str] | str:
        """The capital posted in the table's last round by ``when``."""
        summary = self.bank.get(f"table:{meter.where}")
        if summary is None:
            return f"no SP9 table {meter.where!r} in the ledger"
        rounds = [r for _, r in self.bank.scan(f"table:{meter.where}:round:")
                  if not r["voided"]]
        last = self._last_before(rounds, meter)
        if last is None:
            return f"table {meter.where} had played no round by {meter.when}"
        return Decimal(last["capital"]), str(summary["currency"])

    def _pool(self, meter: Meter) -> tuple[Row, list[Row]] | str:
        meters = self.jackpot.get(f"pool:{meter.where}")
        if meters is None:
            return f"no jackpot pool {meter.where!r} in the ledger"
        return meters, [r for _, r in self.jackpot.scan(f"pool:{meter.where}:history:")]

    def jackpot_balance(self, meter: Meter) -> tuple[Decimal, str] | str:
        """The pool's balance after its last round by ``when``."""
        pool = self._pool(meter)
        if isinstance(pool, str):
            return pool
        meters, history = pool
        last = self._last_before(history, meter)
        if last is None:
            return f"pool {meter.where} had no round by {meter.when}"
        return Decimal(last["end"]), str(meters["currency"])

    def pool_meter(self, field: str) -> Callable[[Meter], tuple[Decimal, str] | str]:
        """Contributions or awards of a pool: that gaming day, or cumulative to a time."""
        def figure(meter: Meter) -> tuple[Decimal, str] | str:
            pool = self._pool(meter)
            if isinstance(pool, str):
                return pool
            meters, history = pool
            total = ZERO
            for row in history:
                opened = datetime.fromisoformat(row["at"])
                if meter.at is not None:
                    counted = opened <= meter.at
                else:
                    counted = gaming_day(hour_of(opened), self.cutoff_hour) == meter.day
                if counted:
                    total += _history_amount(row, field)
            return total, str(meters["currency"])
        return figure


def _history_amount(row: Row, field: str) -> Decimal:
    if field == "contributions":
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


@dataclass
class Reconciliation:
    """Every line of a meters file, compared."""

    outcomes: list[Outcome]
    cutoff_hour: int

    def count(self, status: str) -> int:
        """Lines with this status."""
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def exit_code(self) -> int:
        """1 when any line is a variance, else 0."""
        return 1 if self.count("variance") else 0

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` object."""
        return {"schema_version": SCHEMA_VERSION, "cutoff_hour": self.cutoff_hour,
                "matched": self.count("matched"), "variance": self.count("variance"),
                "unknown": self.count("unknown"),
                "lines": [o.to_json() for o in self.outcomes]}


def reconcile(meters: list[Meter], figures: LedgerFigures) -> Reconciliation:
    """Compare every meter with the ledger."""
    return Reconciliation([figures.compare(m) for m in meters], figures.cutoff_hour)
