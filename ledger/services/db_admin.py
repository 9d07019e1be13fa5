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
- **Roles** (PostgreSQL, ``--roles``): three logins, none of which can take a lock that blocks
  another's reads (PostgreSQL lets a role ``LOCK`` a table in ``ACCESS EXCLUSIVE`` mode only with
  a *table-level* ``UPDATE``, ``DELETE``, ``TRUNCATE`` or ``MAINTAIN``; no role below has one).

  - *ingest* (``ledger ingest``, ``ledger projections update``): on the events table ``SELECT``,
    ``INSERT`` on its four event columns only (never ``notification_id``), the sequence, and
    ``EXECUTE`` on ``ledger_lock_events()`` — a ``SECURITY DEFINER`` function that takes the
    ``EXCLUSIVE`` lock the library takes before each insert. On the view tables ``SELECT``,
    ``INSERT`` and a *column* ``UPDATE`` (the row's text; the tracked position), which is what
    an upsert and ``SELECT … FOR UPDATE`` need, and ``EXECUTE`` on ``ledger_view_delete()``
    (``projections.view_store``) for the deletes of a rebuild. On checkpoints ``SELECT``. On the
    follower's told row (``ledger_follow_told``, signed: ``ledger.live.told``) ``SELECT`` and a
    column ``INSERT`` and ``UPDATE`` (its upsert).
  - *sealer* (``ledger seal``): ``SELECT`` everywhere, and ``INSERT`` on ``ledger_checkpoints``
    — the only role besides the owner that may store a checkpoint.
  - *auditor* (every read command): ``SELECT`` only, checkpoints included.

  Nobody ``UPDATE``s or ``DELETE``s a checkpoint (a trigger refuses it too). Running ``init
  --roles`` again revokes whatever an older version granted and grants the above.

The SQL is in :func:`append_only_sql` and :func:`roles_sql` so an operator can read it or run
it by hand (``ledger init --print-sql``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ledger.live.told import TOLD_COLUMNS, TOLD_TABLE, told_sql
from ledger.merkle.storage import merkle_grants_sql
from ledger.proof.checkpoints import CHECKPOINTS_TABLE
from ledger.proof.seal_index import INDEX_TABLE
from ledger.storage.sql import Dialect, DialectName, dialect_of
from ledger.storage.sql import literal as _literal
from ledger.storage.sql import quote as _quote
from ledger.storage.store import LOCK_FUNCTION, LedgerApp, positive_id_sql
from projections.view_store import (
    ROWS_TABLE,
    TRACKING_TABLE,
    VIEW_DELETE_FUNCTION,
    view_delete_function_sql,
)

INGEST_ROLE = "ledger_ingest"
AUDITOR_ROLE = "ledger_auditor"
SEALER_ROLE = "ledger_sealer"
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


@dataclass(frozen=True)
class Roles:
    """The names of the three roles ``ledger init --roles`` creates."""

    ingest: str = INGEST_ROLE
    auditor: str = AUDITOR_ROLE
    sealer: str = SEALER_ROLE

    @classmethod
    def prefixed(cls, prefix: str) -> Roles:
        """``PREFIX_ingest``, ``PREFIX_auditor`` and ``PREFIX_sealer``."""
        return cls(f"{prefix}_ingest", f"{prefix}_auditor", f"{prefix}_sealer")

    def all(self) -> tuple[str, str, str]:
        """The three names."""
        return self.ingest, self.auditor, self.sealer


def roles_sql(where: EventsTable, roles: Roles | None = None, password: str | None = None) -> list[str]:
    """PostgreSQL: create (if absent) the ingest, auditor and sealer roles and grant each the
    minimum (module docstring). Every earlier grant to them on these tables is revoked first."""
    if where.backend != "postgres":
        raise ValueError("roles exist only on PostgreSQL")
    roles = roles or Roles()
    if len(set(roles.all())) != 3:
        raise ValueError(f"the ingest, auditor and sealer roles must differ: {roles.all()}")
    login = "LOGIN" + (f" PASSWORD {_literal(password)}" if password else "")
    schema = _quote(where.schema)
    statements: list[str] = []
    for role in roles.all():
        statements.append(
            f"DO $do$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = {_literal(role)}) "
            f"THEN CREATE ROLE {_quote(role)} {login}; END IF; END $do$"
        )
        statements.append(f"GRANT USAGE ON SCHEMA {schema} TO {_quote(role)}")
    return (
        statements
        + _events_grants(where, roles)
        + _checkpoint_grants(where, roles)
        + merkle_grants_sql(Dialect(where.backend, where.schema), roles.ingest, roles.sealer, roles.auditor)
        + view_grants_sql(where, roles)
        + told_grants_sql(where, roles)
    )


def _events_grants(where: EventsTable, roles: Roles) -> list[str]:
    schema, table = _quote(where.schema), where.qualified()
    sequence = f"{schema}.{_quote(where.table + '_notification_id_seq')}"
    ingest = _quote(roles.ingest)
    lock = f"{schema}.{_quote(LOCK_FUNCTION)}"
    return [
        f"REVOKE ALL ON {table} FROM {', '.join(_quote(r) for r in roles.all())}",
        f"CREATE OR REPLACE FUNCTION {lock}() RETURNS void LANGUAGE plpgsql SECURITY DEFINER "
        f"SET search_path = pg_catalog AS $body$ BEGIN LOCK TABLE {table} IN EXCLUSIVE MODE; "
        "END $body$",
        f"REVOKE ALL ON FUNCTION {lock}() FROM PUBLIC",
        f"GRANT EXECUTE ON FUNCTION {lock}() TO {ingest}",
        f"GRANT SELECT ON {table} TO {ingest}, {_quote(roles.auditor)}, {_quote(roles.sealer)}",
        f"GRANT INSERT ({', '.join(WRITER_COLUMNS)}) ON {table} TO {ingest}",
        f"GRANT USAGE ON SEQUENCE {sequence} TO {ingest}",
    ]


def _checkpoint_grants(where: EventsTable, roles: Roles) -> list[str]:
    """Only the sealer (and the owner) may store a checkpoint; the others read them."""
    everyone = ", ".join(_quote(r) for r in roles.all())
    statements = []
    for name in (CHECKPOINTS_TABLE, INDEX_TABLE):  # the seal index is written with each checkpoint
        table = f"{_quote(where.schema)}.{_quote(name)}"
        statements += [
            f"REVOKE ALL ON {table} FROM {everyone}",
            f"GRANT SELECT ON {table} TO {everyone}",
            f"GRANT INSERT ON {table} TO {_quote(roles.sealer)}",
        ]
    return statements


VIEW_TABLES = (ROWS_TABLE, TRACKING_TABLE)
"""The projection updater's tables (``projections.updater``), created by ``ledger init``."""

VIEW_WRITES = {
    ROWS_TABLE: (("view", "key", "row"), ("row",)),
    TRACKING_TABLE: (("view", "position", "version"), ("position", "version")),
}
"""Per view table, the columns the updater inserts and the columns it updates."""


def view_grants_sql(where: EventsTable, roles: Roles) -> list[str]:
    """The views: the ingest role runs ``ledger projections update`` — column-level INSERT and
    UPDATE (never a table-level UPDATE or DELETE, so no ``LOCK … ACCESS EXCLUSIVE``), deletes
    through ``ledger_view_delete()``; the auditor and sealer roles read them."""
    dialect = Dialect("postgres", where.schema)
    ingest = _quote(roles.ingest)
    statements = [
        f"REVOKE ALL ON {dialect.qualified(name)} FROM {', '.join(_quote(r) for r in roles.all())}"
        for name in VIEW_TABLES
    ]
    statements += view_delete_function_sql(dialect)
    function = dialect.qualified(VIEW_DELETE_FUNCTION)
    statements.append(f"GRANT EXECUTE ON FUNCTION {function}(text, boolean) TO {ingest}")
    for name in VIEW_TABLES:
        table = dialect.qualified(name)
        inserted, updated = VIEW_WRITES[name]
        statements += [
            f"GRANT SELECT ON {table} TO {ingest}, {_quote(roles.auditor)}, {_quote(roles.sealer)}",
            f"GRANT INSERT ({', '.join(inserted)}), UPDATE ({', '.join(updated)}) ON {table} TO {ingest}",
        ]
    return statements


def told_grants_sql(where: EventsTable, roles: Roles) -> list[str]:
    """The follower's told row (``ledger.live.told``, created here): the ingest role inserts and
    updates its columns (column grants, as the views'), the others read it."""
    dialect = Dialect("postgres", where.schema)
    table = dialect.qualified(TOLD_TABLE)
    updated = [c for c in TOLD_COLUMNS if c != "id"]
    return [
        *told_sql(dialect),
        f"REVOKE ALL ON {table} FROM {', '.join(_quote(r) for r in roles.all())}",
        f"GRANT SELECT ON {table} TO {', '.join(_quote(r) for r in roles.all())}",
        f"GRANT INSERT ({', '.join(TOLD_COLUMNS)}), UPDATE ({', '.join(updated)}) ON {table} "
        f"TO {_quote(roles.ingest)}",
    ]


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


def create_roles(app: LedgerApp, roles: Roles | None = None, password: str | None = None) -> None:
    """Create the roles and grants (PostgreSQL only)."""
    execute(app, roles_sql(events_table(app), roles, password))
