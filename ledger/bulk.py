"""Bulk inserts for the library's application recorders: one statement per save, not per row.

The library's recorders are kept whole — table DDL, transactions, the PostgreSQL table lock and
``NOTIFY``, the optimistic-concurrency ``IntegrityError`` — and only the statement that writes
a save's rows is replaced:

- **SQLite.** The library runs one ``execute`` per row (to collect each ``lastrowid``).
  :class:`BulkSQLiteRecorder` runs one ``executemany`` and derives the notification ids: inside
  the write transaction nobody else inserts, and a rowid table gives each new row
  ``max(rowid) + 1``, so the rows of one ``executemany`` get consecutive ids ending at
  ``last_insert_rowid()`` (the rows are counted back to check it).
- **PostgreSQL.** The library sends one array of a composite type, which psycopg dumps as
  text in Python (regex-escaping every ``bytea``: ~40 % of its client time).
  ``BulkPostgresRecorder`` (``ledger.bulk_postgres``, so that a SQLite store never loads the
  driver) sends four arrays of plain types (``uuid[]``, ``bigint[]``,
  ``text[]``, ``bytea[]``) in binary, unnested in the same ``INSERT … RETURNING``. The payload
  is smaller than the library's, so the pipeline hazard of large saves is no nearer (saves stay
  capped at ``SAVE_EVENTS_MAX`` events).

Selected by the ``APPLICATION_RECORDER_TOPIC`` setting in :func:`ledger.store.open_ledger`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from eventsourcing.persistence import StoredEvent
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteCursor

SQLITE_TOPIC = "ledger.bulk:BulkSQLiteRecorder"
POSTGRES_TOPIC = "ledger.bulk_postgres:BulkPostgresRecorder"
"""In a module of its own: the library imports it (and the driver) only for a PostgreSQL store."""


class BulkSQLiteRecorder(SQLiteApplicationRecorder):
    """The library's SQLite application recorder, writing a save with one ``executemany``."""

    def _insert_events(
        self, c: SQLiteCursor, stored_events: Sequence[StoredEvent], **_: Any
    ) -> Sequence[int] | None:
        if not stored_events:
            return []
        c.executemany(
            self.insert_events_statement,
            [
                (
                    s.originator_id.hex if isinstance(s.originator_id, UUID) else s.originator_id,
                    s.originator_version,
                    s.topic,
                    s.state,
                )
                for s in stored_events
            ],
        )
        c.execute("SELECT last_insert_rowid()")
        last = int(c.fetchone()[0])
        first = last - len(stored_events) + 1
        return list(range(first, last + 1))
