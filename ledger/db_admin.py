"""``ledger init``: create the store, make stored events append-only, and (PostgreSQL) roles.

- **Tables.** Opening the application creates them (the library's ``CREATE TABLE IF NOT EXISTS``).
  Writers that are not the owner then run with ``LEDGER_CREATE_TABLE=n``.
- **Append-only trigger.** PostgreSQL: ``ledger_append_only`` refuses ``UPDATE`` and ``DELETE`` of
  any stored event (row trigger) and ``ledger_no_truncate`` refuses ``TRUNCATE``; both raise
  ``insufficient_privilege``. Only the table owner (or a superuser) can drop them, and the
  ingest and auditor roles are neither. SQLite: two triggers that ``RAISE(ABORT)``; whoever owns
  the file can drop them, so there detection is the chain's and the checkpoint's job.
- **Positive row ids.** A row id <= 0 is refused: ``CHECK (notification_id > 0)`` on
  PostgreSQL, an ``AFTER INSERT`` trigger on SQLite (droppable by whoever owns the file; verify
  reads every row whatever its id anyway).
- **Roles** (PostgreSQL, ``--roles``): an *ingest* role with ``SELECT`` on the events table,
  ``INSERT`` on its four event columns only (never ``notification_id``), the sequence, and
  ``EXECUTE`` on ``ledger_lock_events()`` — a ``SECURITY DEFINER`` function that takes the
  ``EXCLUSIVE`` lock the library takes before each insert. The role has no ``UPDATE``, so it
  cannot ``LOCK`` the table in ``ACCESS EXCLUSIVE`` mode and block the auditors. An *auditor*
  role with ``SELECT`` only. On the checkpoints table (``ledger.checkpoints``, created by
  ``ledger init``): the auditor role, which runs ``ledger seal``, may ``INSERT`` and ``SELECT``;
  the ingest role only ``SELECT``; nobody ``UPDATE`` or ``DELETE`` (a trigger refuses them too).

The SQL is in :func:`append_only_sql` and :func:`roles_sql` so an operator can read it or run
it by hand (``ledger init --print-sql``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ledger.checkpoints import CHECKPOINTS_TABLE
from ledger.merkle.storage import merkle_grants_sql
from ledger.sql import Dialect, DialectName, dialect_of
from ledger.sql import literal as _literal
from ledger.sql import quote as _quote
from ledger.store import LOCK_FUNCTION, LedgerApp, positive_id_sql

INGEST_ROLE = "ledger_ingest"
AUDITOR_ROLE = "ledger_auditor"
TRIGGER_FUNCTION = "ledger_refuse_change"
APPEND_ONLY_MESSAGE = "ledger events are append-only"
WRITER_COLUMNS = ("originator_id", "originator_version", "topic", "state")
"""The only columns the ingest role may insert: the row id always comes from the sequence."""


@dataclass(frozen=True)
class EventsTable:
    """Where one application's events are stored."""

    backend: DialectName
    schema: str
    table: str

    def qualified(self) -> str:
        """The quoted, schema-qualified table name (SQLite: just the table)."""
        return Dialect(self.backend, self.schema).qualified(self.table)


def events_table(app: LedgerApp) -> EventsTable:
    """The events table of an open ledger."""
    dialect = dialect_of(app)
    name: str = getattr(app.recorder, "events_table_name", "stored_events")
    return EventsTable(dialect.name, dialect.schema, name)


def append_only_sql(where: EventsTable) -> list[str]:
    """The statements that make the events table refuse UPDATE, DELETE (and TRUNCATE on PG)."""
    table = where.qualified()
    if where.backend == "sqlite":
        return [
            f"CREATE TRIGGER IF NOT EXISTS ledger_no_update BEFORE UPDATE ON {table} "
            f"BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY_MESSAGE}: UPDATE refused'); END",
            f"CREATE TRIGGER IF NOT EXISTS ledger_no_delete BEFORE DELETE ON {table} "
            f"BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY_MESSAGE}: DELETE refused'); END",
            *positive_id_sql("sqlite", table),
        ]
    function = f"{_quote(where.schema)}.{_quote(TRIGGER_FUNCTION)}"
    return [
        f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $body$ "
        f"BEGIN RAISE EXCEPTION '{APPEND_ONLY_MESSAGE}: % refused on %', TG_OP, TG_TABLE_NAME "
        "USING ERRCODE = 'insufficient_privilege'; END $body$",
        f"DROP TRIGGER IF EXISTS ledger_append_only ON {table}",
        f"CREATE TRIGGER ledger_append_only BEFORE UPDATE OR DELETE ON {table} "
        f"FOR EACH ROW EXECUTE FUNCTION {function}()",
        f"DROP TRIGGER IF EXISTS ledger_no_truncate ON {table}",
        f"CREATE TRIGGER ledger_no_truncate BEFORE TRUNCATE ON {table} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {function}()",
        *positive_id_sql("postgres", table),
    ]


def roles_sql(where: EventsTable, ingest: str = INGEST_ROLE, auditor: str = AUDITOR_ROLE,
              password: str | None = None) -> list[str]:
    """PostgreSQL: create (if absent) the ingest and auditor roles and grant them the minimum."""
    if where.backend != "postgres":
        raise ValueError("roles exist only on PostgreSQL")
    schema, table = _quote(where.schema), where.qualified()
    sequence = f"{schema}.{_quote(where.table + '_notification_id_seq')}"
    login = "LOGIN" + (f" PASSWORD {_literal(password)}" if password else "")
    statements: list[str] = []
    for role in (ingest, auditor):
        statements.append(
            f"DO $do$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = {_literal(role)}) "
            f"THEN CREATE ROLE {_quote(role)} {login}; END IF; END $do$")
        statements.append(f"REVOKE ALL ON {table} FROM {_quote(role)}")
        statements.append(f"GRANT USAGE ON SCHEMA {schema} TO {_quote(role)}")
    lock = f"{schema}.{_quote(LOCK_FUNCTION)}"
    statements += [
        f"CREATE OR REPLACE FUNCTION {lock}() RETURNS void LANGUAGE plpgsql SECURITY DEFINER "
        f"SET search_path = pg_catalog AS $body$ BEGIN LOCK TABLE {table} IN EXCLUSIVE MODE; "
        "END $body$",
        f"REVOKE ALL ON FUNCTION {lock}() FROM PUBLIC",
        f"GRANT EXECUTE ON FUNCTION {lock}() TO {_quote(ingest)}",
        f"GRANT SELECT ON {table} TO {_quote(ingest)}",
        f"GRANT INSERT ({', '.join(WRITER_COLUMNS)}) ON {table} TO {_quote(ingest)}",
        f"GRANT USAGE ON SEQUENCE {sequence} TO {_quote(ingest)}",
        f"GRANT SELECT ON {table} TO {_quote(auditor)}",
    ]
    checkpoints = f"{schema}.{_quote(CHECKPOINTS_TABLE)}"
    statements += [f"REVOKE ALL ON {checkpoints} FROM {_quote(ingest)}, {_quote(auditor)}",
                   f"GRANT SELECT ON {checkpoints} TO {_quote(ingest)}",
                   f"GRANT SELECT, INSERT ON {checkpoints} TO {_quote(auditor)}"]
    statements += merkle_grants_sql(Dialect(where.backend, where.schema), ingest, auditor)
    return statements + view_grants_sql(where, ingest, auditor)


VIEW_TABLES = ("ledger_view_rows", "ledger_view_tracking")
"""The projection updater's tables (``projections.updater``), created by ``ledger init``."""


def view_grants_sql(where: EventsTable, ingest: str, auditor: str) -> list[str]:
    """The views: the ingest role runs ``ledger projections update`` (reads and writes rows and
    positions); the auditor role reads them (read commands never write)."""
    schema = _quote(where.schema)
    statements = []
    for name in VIEW_TABLES:
        table = f"{schema}.{_quote(name)}"
        statements += [f"GRANT SELECT, INSERT, UPDATE, DELETE ON {table} TO {_quote(ingest)}",
                       f"GRANT SELECT ON {table} TO {_quote(auditor)}"]
    return statements


def execute(app: LedgerApp, statements: list[str]) -> None:
    """Run statements in one transaction on the ledger's own database connection."""
    with app.recorder.datastore.transaction(commit=True) as curs:  # type: ignore[attr-defined]
        for statement in statements:
            curs.execute(statement)


def install_append_only(app: LedgerApp) -> EventsTable:
    """Install the append-only triggers on the ledger's events table."""
    where = events_table(app)
    execute(app, append_only_sql(where))
    return where


def create_roles(app: LedgerApp, ingest: str = INGEST_ROLE, auditor: str = AUDITOR_ROLE,
                 password: str | None = None) -> None:
    """Create the roles and grants (PostgreSQL only)."""
    execute(app, roles_sql(events_table(app), ingest, auditor, password))
