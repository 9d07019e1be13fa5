"""The rows a view sees while the updater folds rounds into it: a write-through cache per batch
(:class:`BatchRows`) and what the updater still knows of a view between batches (:class:`Known`).

Between batches of one run the updater keeps the rows it has read and written (bounded by
``KNOWN_ROWS_MAX``), valid only while the view's tracking record is still the one it committed:
a view rebuilt from 0 is never read back, and a row is never read just to be overwritten.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from projections.base import Row
from projections.diff import encode_row
from projections.view_store import Tracking, ViewStore


class Known:
    """Row texts of one stored view as they stand at ``tracking``, kept by the updater from one
    batch to the next so rows it has just written are not read back.

    ``complete``: every row of the view is here (the view was rebuilt from 0 in this run), so a
    key not here is known to be absent; otherwise a key not here must be read from the table.
    ``None`` as a text means known to be absent. Valid only while the stored tracking record
    still equals ``tracking`` (positions only move forward, and rows move with them)."""

    def __init__(
        self, tracking: Tracking | None, *, complete: bool, rows: dict[str, str | None] | None = None
    ) -> None:
        self.tracking = tracking
        self.complete = complete
        self.rows: dict[str, str | None] = rows if rows is not None else {}

    def text(self, key: str) -> str | _Unknown | None:
        """The key's text, ``None`` if known absent, ``UNKNOWN`` if it must be read."""
        if key in self.rows:
            return self.rows[key]
        return None if self.complete else UNKNOWN


class _Unknown:
    """Marks a row whose stored text was not read (it is written whatever it holds)."""


UNKNOWN = _Unknown()
KNOWN_ROWS_MAX = 100_000
"""Row texts kept per view between batches; beyond it only the last batch's rows are kept."""


class BatchRows:
    """The rows a view sees during one batch: read from the view table on first use (or taken
    from what the updater already knows, :class:`Known`), kept in memory, and compared with
    what the table held when the batch commits (so a row changed in place, without ``put``, is
    still written). A row ``put`` without being read first is written whatever the table
    held: it is never read just to be compared."""

    def __init__(self, store: ViewStore, view: str, *, reset: bool, known: Known | None = None) -> None:
        self._store = store
        self._view = view
        self._reset = reset
        self._known = Known(None, complete=True) if reset else known
        self._rows: dict[str, Row | None] = {}
        self._read: dict[str, str | _Unknown | None] = {}
        self._scanned: set[str] = set()
        self._texts: dict[str, str | None] = {}

    def _cached(self, key: str) -> str | _Unknown | None:
        return UNKNOWN if self._known is None else self._known.text(key)

    def get(self, key: str) -> Row | None:
        """The row under ``key``, or ``None``."""
        if key not in self._rows:
            text = self._read.get(key, UNKNOWN)
            if isinstance(text, _Unknown):
                text = self._cached(key)
            if isinstance(text, _Unknown):
                text = self._store.get(self._view, key)
            self._read[key] = text
            self._rows[key] = json.loads(text) if text is not None else None
        return self._rows[key]

    def put(self, key: str, row: Row) -> None:
        """Create or replace the row under ``key``."""
        if key not in self._read:
            self._read[key] = self._cached(key)
        self._rows[key] = row

    def scan(self, prefix: str = "") -> Iterator[tuple[str, Row]]:
        """Rows whose key starts with ``prefix``, in key order."""
        if not any(prefix.startswith(s) for s in self._scanned):
            if self._known is not None and self._known.complete:
                found = [
                    (k, t) for k, t in self._known.rows.items() if t is not None and k.startswith(prefix)
                ]
            else:
                found = self._store.scan(self._view, prefix)
            for key, text in found:
                if key not in self._rows:
                    self._read[key] = text
                    self._rows[key] = json.loads(text)
            self._scanned.add(prefix)
        for key in sorted(self._rows):
            row = self._rows[key]
            if row is not None and key.startswith(prefix):
                yield key, row

    def changed(self) -> dict[str, str]:
        """The rows whose text differs from what the view table held."""
        out: dict[str, str] = {}
        self._texts = {}
        for key, row in self._rows.items():
            if row is None:
                read = self._read.get(key)
                if not isinstance(read, _Unknown):
                    self._texts[key] = read
                continue
            text = encode_row(row)
            self._texts[key] = text
            if text != self._read.get(key):
                out[key] = text
        return out

    def known_after(self, tracking: Tracking) -> Known:
        """What is known of the view once this batch's :meth:`changed` rows are committed at
        ``tracking``: the rows known before, updated with this batch's."""
        known = self._known
        if known is None or len(known.rows) + len(self._texts) > KNOWN_ROWS_MAX:
            return Known(tracking, complete=False, rows=dict(self._texts))
        known.rows.update(self._texts)
        known.tracking = tracking
        return known
