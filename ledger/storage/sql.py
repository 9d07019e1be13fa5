"""The one place that tells SQLite from PostgreSQL: placeholders, qualified names, transactions.

The store (``ledger.storage.store``), the projection tables (``projections.view_store``) and
``ledger init`` (``ledger.services.db_admin``) all ask a :class:`Dialect` how to write a statement, and
read or write through a :class:`Connection`, instead of each probing the library's objects in
its own way.

- :func:`dialect_of` — the dialect of an open ledger (from the library's datastore class);
  :func:`settings_dialect` — the dialect of the library's settings before a ledger is open
  (their ``PERSISTENCE_MODULE``, one of :data:`PERSISTENCE_MODULES`).
- :func:`read_rows` — one read-only statement on the library's own connection, rows as tuples.
- :func:`connect` — a :class:`Connection` for tables of our own beside the events: on SQLite a
  connection of its own (``BEGIN IMMEDIATE`` writes, deferred snapshot reads), on PostgreSQL the
  library's pool (``FOR UPDATE`` locks, ``REPEATABLE READ, READ ONLY`` snapshots).
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeGuard

from eventsourcing.sqlite import SQLiteDatastore

from ledger.domain.errors import StoreError

if TYPE_CHECKING:
    from eventsourcing.postgres import PostgresDatastore

DialectName = Literal["sqlite", "postgres"]

PERSISTENCE_MODULES: dict[DialectName, str] = {
    "sqlite": "eventsourcing.sqlite",
    "postgres": "eventsourcing.postgres",
}
"""The library's ``PERSISTENCE_MODULE`` setting for each dialect."""


def settings_dialect(env: Mapping[str, str]) -> DialectName:
    """The dialect of the library settings ``env``, from their ``PERSISTENCE_MODULE``.

    >>> settings_dialect({"PERSISTENCE_MODULE": "eventsourcing.postgres"})
    'postgres'
    """
    for name, module in PERSISTENCE_MODULES.items():
        if env["PERSISTENCE_MODULE"] == module:
            return name
    raise StoreError(f"unsupported PERSISTENCE_MODULE {env['PERSISTENCE_MODULE']!r}")


def _is_postgres(datastore: object) -> TypeGuard[PostgresDatastore]:
    """Whether ``datastore`` is the library's PostgreSQL datastore. Asked of the loaded module
    only: a process that opened no PostgreSQL store has not imported ``eventsourcing.postgres``
    (nor the driver, ~0.1 s of start-up), and then no datastore can be one."""
    module = sys.modules.get("eventsourcing.postgres")
    return module is not None and isinstance(datastore, module.PostgresDatastore)


def quote(name: str) -> str:
    """An SQL identifier in double quotes (both dialects)."""
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    """An SQL string literal (both dialects)."""
    return "'" + text.replace("'", "''") + "'"


def refuse_function_sql(dialect: Dialect, name: str) -> str:
    """PostgreSQL: create (if absent) the trigger function ``name`` of the append-only tables,
    which refuses the statement that fired it (``insufficient_privilege``)."""
    function = f"{quote(dialect.schema)}.{quote(name)}"
    body = (
        f"CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $body$ BEGIN "
        "RAISE EXCEPTION USING MESSAGE = 'append-only: ' || TG_OP || ' refused on ' || "
        "TG_TABLE_NAME, ERRCODE = 'insufficient_privilege'; END $body$"
    )
    return (
        "DO $do$ BEGIN IF NOT EXISTS (SELECT FROM pg_proc p JOIN pg_namespace n ON "
        f"n.oid = p.pronamespace WHERE p.proname = {literal(name)} AND n.nspname = "
        f"{literal(dialect.schema)}) THEN EXECUTE $fn${body}$fn$; END IF; END $do$"
    )


def append_only_triggers_sql(
    dialect: Dialect, name: str, *, refused: str, refuse_function: str, row_trigger: str = "append_only"
) -> list[str]:
    """The triggers that make table ``name`` append-only (idempotent). SQLite: ``NAME_no_update``
    and ``NAME_no_delete`` abort with ``REFUSED: UPDATE refused``; PostgreSQL: ``NAME_ROW_TRIGGER``
    (before UPDATE or DELETE of a row) and ``NAME_no_truncate`` run ``refuse_function``
    (:func:`refuse_function_sql`, created before)."""
    table = dialect.qualified(name)
    if dialect.is_sqlite:
        return [
            f"CREATE TRIGGER IF NOT EXISTS {name}_no_{op.lower()} BEFORE {op} ON {table} "
            f"BEGIN SELECT RAISE(ABORT, '{refused}: {op} refused'); END"
            for op in ("UPDATE", "DELETE")
        ]
    function = f"{quote(dialect.schema)}.{quote(refuse_function)}"
    return [
        f"DO $do$ BEGIN IF NOT EXISTS (SELECT FROM pg_trigger WHERE tgname = {literal(trigger)} "
        f"AND tgrelid = {literal(table)}::regclass) THEN CREATE TRIGGER {trigger} {when} ON "
        f"{table} FOR EACH {each} EXECUTE FUNCTION {function}(); END IF; END $do$"
        for trigger, when, each in (
            (f"{name}_{row_trigger}", "BEFORE UPDATE OR DELETE", "ROW"),
            (f"{name}_no_truncate", "BEFORE TRUNCATE", "STATEMENT"),
        )
    ]


@dataclass(frozen=True)
class Dialect:
    """How to write a statement for one database: its placeholder, its row lock, its names."""

    name: DialectName
    schema: str = ""
    """PostgreSQL schema of the ledger's tables; empty on SQLite."""

    @property
    def is_sqlite(self) -> bool:
        """Whether this is SQLite (one file, no schemas, ``?`` placeholders)."""
        return self.name == "sqlite"

    @property
    def p(self) -> str:
        """The placeholder of one parameter."""
        return "?" if self.is_sqlite else "%s"

    @property
    def lock(self) -> str:
        """What to append to a ``SELECT`` that must lock its rows until commit (SQLite locks the
        whole file at ``BEGIN IMMEDIATE`` instead)."""
        return "" if self.is_sqlite else " FOR UPDATE"

    def qualified(self, table: str) -> str:
        """The quoted table name, schema-qualified on PostgreSQL."""
        return quote(table) if self.is_sqlite else f"{quote(self.schema)}.{quote(table)}"

    def one_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """``column`` is one of ``values``: the condition and its parameters."""
        if self.is_sqlite:
            return f"{column} IN ({','.join('?' * len(values))})", list(values)
        return f"{column} = ANY(%s)", [list(values)]


def dialect_of(app: Any) -> Dialect:
    """The dialect of an open ledger (a ``LedgerApp``), from its datastore."""
    datastore = getattr(app.recorder, "datastore", None)
    if isinstance(datastore, SQLiteDatastore):
        return Dialect("sqlite")
    if _is_postgres(datastore):
        return Dialect("postgres", str(datastore.schema) or "public")
    raise StoreError(f"not a SQLite or PostgreSQL store ({type(app.recorder).__name__})")


def read_rows(app: Any, statement: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """Run one read-only statement on the ledger's own connection; rows as plain tuples."""
    datastore = app.recorder.datastore
    if dialect_of(app).is_sqlite:
        with datastore.transaction(commit=False) as curs:
            cursor = curs.sqlite_cursor
            cursor.row_factory = None
            cursor.execute(statement, tuple(params))
            return list(cursor.fetchall())
    from psycopg.rows import tuple_row  # the driver is loaded only for a PostgreSQL store

    with datastore.get_connection() as conn, conn.cursor(row_factory=tuple_row) as curs:
        curs.execute(statement, tuple(params))
        return list(curs.fetchall())


class Cursor(Protocol):
    """What a write or read transaction hands out: ``execute`` and ``fetchone``/``fetchall``
    returning tuples, whichever the database."""

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement."""
        ...

    def executemany(self, sql: str, params: Sequence[Sequence[Any]]) -> Any:
        """Run one statement per parameter tuple."""
        ...

    def fetchone(self) -> tuple[Any, ...] | None:
        """The next row, or ``None``."""
        ...

    def fetchall(self) -> list[tuple[Any, ...]]:
        """The remaining rows."""
        ...


class Connection:
    """Read and write transactions on tables beside the ledger's events."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """One statement, outside any write transaction; rows as tuples."""
        raise NotImplementedError

    @contextmanager
    def write(self) -> Iterator[Cursor]:
        """A write transaction: committed on exit, rolled back on an exception."""
        raise NotImplementedError
        yield

    @contextmanager
    def reading(self) -> Iterator[Cursor]:
        """A read-only transaction (one consistent snapshot; no write lock, no write grant)."""
        raise NotImplementedError
        yield

    def table_exists(self, table: str) -> bool:
        """Whether ``table`` exists (in the ledger's schema on PostgreSQL)."""
        raise NotImplementedError

    def create(self, statements: Sequence[str], attempts: int = 3) -> None:
        """Run the ``CREATE … IF NOT EXISTS`` statements of a set of tables in one transaction,
        again when it fails: two processes creating the same tables at once make one of them
        fail on PostgreSQL ("tuple concurrently updated"), and the retry then finds them made."""
        for attempt in range(attempts):
            try:
                with self.write() as cur:
                    for statement in statements:
                        cur.execute(statement)
                return
            except Exception:
                if attempt == attempts - 1:
                    raise

    def close(self) -> None:
        """Release connections opened for this object."""


class SQLiteConnection(Connection):
    """The store's SQLite file, through a connection of our own (``BEGIN IMMEDIATE`` writes)."""

    def __init__(self, path: str, timeout_s: float) -> None:
        super().__init__(Dialect("sqlite"))
        if ":memory:" in path or "mode=memory" in path:
            raise StoreError("a SQLite file, not an in-memory database")
        self.conn = sqlite3.connect(path, timeout=timeout_s, isolation_level=None, check_same_thread=False)

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """One statement in autocommit mode."""
        return list(self.conn.execute(sql, tuple(params)).fetchall())

    @contextmanager
    def write(self) -> Iterator[Cursor]:
        """``BEGIN IMMEDIATE``: the write lock is taken before anything is read."""
        cur = self.conn.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            yield cur
        except BaseException:
            self.conn.rollback()
            raise
        self.conn.commit()

    @contextmanager
    def reading(self) -> Iterator[Cursor]:
        """A deferred transaction: a snapshot from the first read, no write lock."""
        cur = self.conn.cursor()
        cur.execute("BEGIN")
        try:
            yield cur
        finally:
            self.conn.rollback()

    def table_exists(self, table: str) -> bool:
        """From ``sqlite_master``."""
        return bool(self.read("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)))

    def close(self) -> None:
        """Close the connection of our own."""
        self.conn.close()


class PostgresConnection(Connection):
    """The store's PostgreSQL schema, through the library's connection pool."""

    def __init__(self, datastore: PostgresDatastore) -> None:
        super().__init__(Dialect("postgres", str(datastore.schema) or "public"))
        self.datastore = datastore

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """One statement in a transaction of its own."""
        with self.datastore.transaction(commit=False) as cur:
            cur.execute(sql, tuple(params))
            return [_tuple(r) for r in cur.fetchall()]

    @contextmanager
    def write(self) -> Iterator[Cursor]:
        """A pooled connection's transaction, committed on exit."""
        with self.datastore.transaction(commit=True) as cur:
            yield TupleCursor(cur)

    @contextmanager
    def reading(self) -> Iterator[Cursor]:
        """``REPEATABLE READ, READ ONLY``: one snapshot, and no write grant needed."""
        with self.datastore.transaction(commit=False) as cur:
            cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield TupleCursor(cur)

    def table_exists(self, table: str) -> bool:
        """From ``to_regclass``."""
        found = self.read("SELECT to_regclass(%s)", (f"{quote(self.dialect.schema)}.{table}",))
        return bool(found and found[0][0] is not None)


class TupleCursor:
    """A psycopg dict-row cursor (the library's) that fetches tuples, like sqlite3's."""

    def __init__(self, cur: Any) -> None:
        self.cur = cur

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        """Run one statement."""
        self.cur.execute(sql, tuple(params))

    def executemany(self, sql: str, params: Sequence[Sequence[Any]]) -> None:
        """Run one statement per parameter tuple."""
        self.cur.executemany(sql, [tuple(p) for p in params])

    def fetchone(self) -> tuple[Any, ...] | None:
        """The next row as a tuple, or ``None``."""
        r = self.cur.fetchone()
        return None if r is None else _tuple(r)

    def fetchall(self) -> list[tuple[Any, ...]]:
        """The remaining rows as tuples."""
        return [_tuple(r) for r in self.cur.fetchall()]


def _tuple(row: Any) -> tuple[Any, ...]:
    return tuple(row.values()) if isinstance(row, dict) else tuple(row)


def connect(app: Any) -> Connection:
    """A :class:`Connection` to the ledger's database for tables beside its events."""
    datastore = getattr(app.recorder, "datastore", None)
    if isinstance(datastore, SQLiteDatastore):
        timeout = float(app.env.get("SQLITE_LOCK_TIMEOUT") or 30)
        return SQLiteConnection(datastore.pool.db_name, timeout)
    if _is_postgres(datastore):
        return PostgresConnection(datastore)
    raise StoreError(f"a SQLite or PostgreSQL store (not {type(app.recorder).__name__})")
