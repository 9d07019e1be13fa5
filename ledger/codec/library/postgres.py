"""The bulk PostgreSQL application recorder: a save sent as four binary arrays (see
``ledger.codec.library``).

A module of its own, named by ``ledger.codec.library.POSTGRES_TOPIC``: the library imports it,
and with it ``eventsourcing.postgres`` and ``psycopg`` (~0.1 s), only when a PostgreSQL store
is opened. It overrides the library's private ``_insert_stored_events`` (checked by
``tests/codec/test_library_contract.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from eventsourcing.persistence import StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder
from psycopg import sql

from ledger.codec.library import SaveGroup, StoredColumns


class BulkPostgresRecorder(PostgresApplicationRecorder):
    """The library's PostgreSQL application recorder, sending a save as four binary arrays."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bulk_insert_statement = sql.SQL(
            "INSERT INTO {schema}.{table} (originator_id, originator_version, topic, state) "
            "SELECT * FROM unnest(%s::uuid[], %s::bigint[], %s::text[], %s::bytea[]) "
            "RETURNING notification_id"
        ).format(schema=sql.Identifier(self.datastore.schema), table=sql.Identifier(self.events_table_name))

    def _insert_stored_events(self, curs: Any, stored_events: Sequence[StoredEvent], **kwargs: Any) -> None:
        if self.datastore.originator_id_type != "uuid":  # pragma: no cover - not ours
            super()._insert_stored_events(curs, stored_events, **kwargs)
            return
        self._lock_table(curs)
        # The lock on its own first: a role that may not take it (the auditor) then fails with
        # the server's "permission denied", not with "pipeline aborted" for the statements
        # queued behind it (which of the two surfaced was a matter of timing). One round trip
        # per save.
        with curs.connection.pipeline() as pipeline:
            pipeline.sync()
        self._notify_channel(curs)
        if isinstance(stored_events, SaveGroup):  # several saves: one statement each
            found = stored_events.ids_found
            found.clear()
            for start, stop in stored_events.saves():
                curs.execute(
                    self.bulk_insert_statement,
                    (
                        stored_events.ids[start:stop],
                        stored_events.versions[start:stop],
                        stored_events.topics[start:stop],
                        stored_events.states[start:stop],
                    ),
                    binary=True,
                )
                with curs.connection.pipeline() as pipeline:
                    pipeline.sync()
                found += [_first(row) for row in curs.fetchall()]
            return
        if isinstance(stored_events, StoredColumns):  # a save as columns: sent as they are
            columns = (stored_events.ids, stored_events.versions, stored_events.topics, stored_events.states)
        else:
            columns = (
                [
                    s.originator_id if isinstance(s.originator_id, UUID) else UUID(str(s.originator_id))
                    for s in stored_events
                ],
                [s.originator_version for s in stored_events],
                [s.topic for s in stored_events],
                [s.state for s in stored_events],
            )
        curs.execute(self.bulk_insert_statement, columns, binary=True)

    def _fetch_ids_after_insert_events(
        self, curs: Any, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        if isinstance(stored_events, SaveGroup):  # fetched save after save, above
            return list(stored_events.ids_found)
        return super()._fetch_ids_after_insert_events(curs, stored_events, **kwargs)


def _first(row: Any) -> int:
    """The notification id of a ``RETURNING`` row (a dict row on the library's cursors)."""
    return int(row["notification_id"] if isinstance(row, dict) else row[0])
