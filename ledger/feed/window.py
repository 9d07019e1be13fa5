"""The window of accepted event times: a feed line whose ``at`` lies outside it is rejected.

A valid RFC 3339 time near year 1 or 9999 is well-formed, but no table deals a round then, and
such a time would sit in the append-only store for ever. Ingest therefore accepts only times in
``[LEDGER_EARLIEST_AT, LEDGER_LATEST_AT)`` (defaults :data:`EARLIEST_DEFAULT` and
:data:`LATEST_DEFAULT`) and rejects the rest as ``bad_timestamp``. The later commands do not rely
on this: every gaming-day computation is total (``projections.gaming_day``), so a time that an
older store already holds never crashes them.
"""

from __future__ import annotations

import os
from datetime import datetime
from functools import lru_cache

from ledger.domain.errors import UsageError

EARLIEST_SETTING = "LEDGER_EARLIEST_AT"
LATEST_SETTING = "LEDGER_LATEST_AT"
EARLIEST_DEFAULT = "2000-01-01T00:00:00+00:00"
LATEST_DEFAULT = "2100-01-01T00:00:00+00:00"

Window = tuple[datetime, datetime]
"""``(earliest, latest)``: times ``earliest <= at < latest`` are accepted."""


@lru_cache(maxsize=8)
def _window(earliest: str, latest: str) -> tuple[datetime, datetime]:
    bounds = []
    for name, text in ((EARLIEST_SETTING, earliest), (LATEST_SETTING, latest)):
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise UsageError(f"{name} must be an RFC 3339 time with offset, not {text!r}") from None
        if moment.tzinfo is None:
            raise UsageError(f"{name} must carry an offset (Z or +08:00), not {text!r}")
        bounds.append(moment)
    if bounds[0] >= bounds[1]:
        raise UsageError(f"{EARLIEST_SETTING} must be before {LATEST_SETTING}")
    return bounds[0], bounds[1]


def accepted_window() -> tuple[datetime, datetime]:
    """``(earliest, latest)``: times ``earliest <= at < latest`` are accepted."""
    return _window(
        os.environ.get(EARLIEST_SETTING) or EARLIEST_DEFAULT, os.environ.get(LATEST_SETTING) or LATEST_DEFAULT
    )


def outside_window(at: datetime, window: Window | None = None) -> str | None:
    """Why ``at`` is refused, or ``None`` if it lies in the window (``window``, if given, is
    :func:`accepted_window` as read before)."""
    earliest, latest = accepted_window() if window is None else window
    if earliest <= at < latest:
        return None
    return (
        f"{at.isoformat()} lies outside the accepted window {earliest.isoformat()} to "
        f"{latest.isoformat()} (settings {EARLIEST_SETTING}, {LATEST_SETTING})"
    )
