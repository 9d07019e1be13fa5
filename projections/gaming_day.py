"""Gaming days: the casino's accounting day, in Macau time (UTC+8), from a cut-off hour.

A round belongs to the gaming day of its **opening** time: its Macau local time minus the
cut-off hour, taken as a date. With the default cut-off of 06:00, a round opened at
2026-11-21 05:59 Macau time belongs to gaming day 2026-11-20; one opened at 06:00 to 2026-11-21.

Views store amounts per Macau *hour* (``2026-11-21T05``), so any whole cut-off hour can be
chosen when a report is read, without rebuilding anything.

>>> from datetime import datetime
>>> hour_of(datetime.fromisoformat("2026-11-20T22:30:00+00:00"))
'2026-11-21T06'
>>> gaming_day("2026-11-21T05", 6), gaming_day("2026-11-21T06", 6)
(datetime.date(2026, 11, 20), datetime.date(2026, 11, 21))
"""

from __future__ import annotations

import os
from datetime import date, datetime, timedelta, timezone

from ledger.domain.errors import UsageError

MACAU = timezone(timedelta(hours=8), "Asia/Macau")
"""Macau time: UTC+8 all year (no daylight saving)."""
CUTOFF_SETTING = "LEDGER_GAMING_DAY_CUTOFF"
"""Environment setting holding the default cut-off hour (0-23)."""
CUTOFF_DEFAULT = 6


def hour_of(at: datetime) -> str:
    """The Macau local hour of a moment, ``YYYY-MM-DDTHH``.

    Total: a moment whose Macau time falls outside the years 1-9999 (a stored time at the very
    edge of the calendar; ingest refuses such times, an older store may hold one) is clamped to
    the first or last hour of the calendar instead of raising ``OverflowError``.
    """
    try:
        local = at.astimezone(MACAU)
    except OverflowError:
        local = datetime.min if at.year < 5000 else datetime.max
    return f"{local.year:04d}-{local.month:02d}-{local.day:02d}T{local.hour:02d}"


def gaming_day(hour: str, cutoff_hour: int) -> date:
    """The gaming day of a Macau hour under a cut-off hour (total: clamped to ``date.min``)."""
    start = datetime.strptime(hour, "%Y-%m-%dT%H")
    try:
        return (start - timedelta(hours=cutoff_hour)).date()
    except OverflowError:
        return date.min


def day_of(at: datetime, cutoff_hour: int) -> date:
    """The gaming day of a moment."""
    return gaming_day(hour_of(at), cutoff_hour)


def default_cutoff() -> int:
    """The cut-off hour from ``LEDGER_GAMING_DAY_CUTOFF`` (default 6)."""
    return check_cutoff(os.environ.get(CUTOFF_SETTING) or str(CUTOFF_DEFAULT))


def check_cutoff(value: str | int) -> int:
    """A cut-off hour 0-23, or a :class:`UsageError` saying why not."""
    try:
        hour = int(value)
    except ValueError:
        raise UsageError(f"the gaming-day cut-off hour must be a whole hour 0-23, not {value!r}") from None
    if not 0 <= hour <= 23:
        raise UsageError(f"the gaming-day cut-off hour must be 0-23, not {hour}")
    return hour
