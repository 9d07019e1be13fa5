"""The event store: an eventsourcing ``Application`` on SQLite (default) or PostgreSQL.

- **Aggregates.** One per round (id from table + round, version = the feed's ``seq``), one per
  table (``ledger.domain.table``) and one chain (``ledger.codec.chain``).
- **Events.** A stored event is a :class:`Recorded`: a pydantic fact plus its chain digest. The
  :class:`LedgerMapper` writes the fact's canonical bytes (``model_dump_json()``,
  ``ledger.codec.facts``) inside a fixed frame and reads them back with
  ``model_validate_json()``, so ``Decimal``, enums, tuples and nested models round-trip
  exactly. Topics are stable names (``"RL/spin_result"``, ``"table/round_started"``), never
  module paths, so stored history survives refactoring (EVENTSOURCING.md hazard 9). How bytes
  become facts and facts bytes, fast and plain, is ``ledger.codec``'s.
- **Databases.** ``sqlite:///ledger.db`` (the default) or ``postgresql://user@host:port/db``
  (``?schema=name`` optional), chosen by ``--db`` or ``LEDGER_DB``. One code path serves both:
  the only difference is the environment handed to the library.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.persistence import Mapper, StoredEvent, Transcoder

from ledger.codec.chain import CHAIN_ID, FrameError, frame, unframe
from ledger.codec.facts import TOPICS as TOPICS
from ledger.codec.facts import TopicRegistry as TopicRegistry
from ledger.codec.facts import content_of as content_of
from ledger.codec.facts import topic_of as topic_of
from ledger.codec.library import POSTGRES_TOPIC, SQLITE_TOPIC, stored_event
from ledger.codec.rows import RowDecoder
from ledger.domain.errors import StoreDamaged, StoreError, StoreMissing, StoreUnreachable
from ledger.domain.round import Round, round_id
from ledger.domain.table import RoundStarted, Table, table_id
from ledger.feed.envelope import FeedModel
from ledger.storage.sql import (
    PERSISTENCE_MODULES,
    Dialect,
    dialect_of,
    literal,
    quote,
    read_rows,
    settings_dialect,
)

RawRow = tuple[int, str, int, str, bytes]
"""One stored row as :meth:`LedgerApp.rows` gives it: notification id, aggregate id (text),
version, topic, stored bytes. The id is
32 lower-case hex digits (``UUID.hex``) on every backend."""

DEFAULT_DB = "sqlite:///ledger.db"
MIN_ROW_ID = -(2**63)
MAX_ROW_ID = 2**63 - 1
"""The range of a row id (SQLite ``rowid``, PostgreSQL ``notification_id``): 64-bit signed."""
CONNECT_TIMEOUT_S = 5
"""Seconds to wait for a PostgreSQL server before saying it cannot be reached."""
SAVE_EVENTS_MAX = 1000
"""Never more events than this in one save: a larger PostgreSQL save can hang forever
(EVENTSOURCING.md hazard 1)."""


@dataclass(frozen=True)
class Recorded:
    """A stored event: which aggregate, which version, the fact, its content bytes and digest."""

    originator_id: UUID
    originator_version: int
    topic: str
    fact: FeedModel
    content: bytes
    digest: str

    def mutate(self, aggregate: Any) -> Any:
        """Fold into a :class:`~ledger.domain.round.Round` (lets ``app.repository.get`` load rounds)."""
        if aggregate is None:
            return Round.replay([self.fact])  # type: ignore[list-item]
        aggregate.record(self.fact)
        return aggregate


_ROWS = RowDecoder()
"""The codec's decoders of the rows the application reads back (heads, a round's events)."""


class LedgerMapper(Mapper[UUID]):
    """Maps :class:`Recorded` events to stored rows and back (with optional compression/cipher)."""

    def to_stored_event(self, domain_event: Any) -> StoredEvent:
        """Frame the digest and content; compress and encrypt if configured."""
        rec: Recorded = domain_event
        return self.stored_event(
            rec.originator_id, rec.originator_version, rec.topic, rec.content, rec.digest
        )

    def stored_event(
        self, originator_id: UUID, originator_version: int, topic: str, content: bytes, digest: str
    ) -> StoredEvent:
        """:meth:`to_stored_event` of a :class:`Recorded` with these values, without one
        (ingest builds a row per feed line and needs no other object for it)."""
        state = frame(digest, content)
        if self.compressor:
            state = self.compressor.compress(state)
        if self.cipher:
            state = self.cipher.encrypt(state)
        return stored_event(originator_id, originator_version, topic, state)

    def to_domain_event(self, stored_event: StoredEvent) -> Any:
        """Read a stored row back into a :class:`Recorded` (the fact decoded by the codec,
        ``ledger.codec.rows``)."""
        digest, content = self.open_state(stored_event.state)
        if TOPICS.get(stored_event.topic) is None:
            raise FrameError(f"unknown topic {stored_event.topic!r}")
        originator_id = stored_event.originator_id
        if not isinstance(originator_id, UUID):
            try:
                originator_id = UUID(str(originator_id))
            except ValueError:
                raise StoreDamaged(
                    f"a stored row's aggregate id {str(originator_id)[:40]!r} "
                    "is not a UUID: the row was not written by the ledger"
                ) from None
        return Recorded(
            originator_id,
            stored_event.originator_version,
            stored_event.topic,
            _ROWS.fact(stored_event.topic, content),
            content,
            digest,
        )

    def open_state(self, state: bytes) -> tuple[str, bytes]:
        """Decrypt, decompress and unframe stored bytes into ``(digest, content)``."""
        try:
            if self.cipher:
                state = self.cipher.decrypt(state)
            if self.compressor:
                state = self.compressor.decompress(state)
        except Exception as exc:  # the cipher raises several kinds on tampered bytes
            raise FrameError(f"cannot decrypt or decompress: {exc}") from None
        return unframe(state)


class LedgerApp(Application[UUID]):
    """The ledger's event-sourced application."""

    name = "Ledger"

    def construct_mapper(self) -> Mapper[UUID]:
        """Our pydantic mapper, with the library's compressor and cipher if configured."""
        return LedgerMapper(
            transcoder=_NoTranscoder(), compressor=self.factory.compressor(), cipher=self.factory.cipher()
        )

    @property
    def ledger_mapper(self) -> LedgerMapper:
        """The mapper, typed."""
        assert isinstance(self.mapper, LedgerMapper)
        return self.mapper

    def stored(
        self,
        aggregate: UUID,
        *,
        gt: int | None = None,
        lte: int | None = None,
        desc: bool = False,
        limit: int | None = None,
    ) -> list[Recorded]:
        """The stored events of one aggregate, decoded."""
        rows = self.recorder.select_events(aggregate, gt=gt, lte=lte, desc=desc, limit=limit)
        return [self.ledger_mapper.to_domain_event(r) for r in rows]

    def load_round(self, table: str, round: str) -> Round | None:
        """Replay one round from its stored facts, or ``None`` if the store has no such round."""
        facts = [r.fact for r in self.stored(round_id(table, round))]
        return Round.replay(facts) if facts else None  # type: ignore[arg-type]

    def load_table(self, code: str) -> Table:
        """Replay one table's started rounds."""
        table = Table(code)
        for rec in self.stored(table_id(code)):
            assert isinstance(rec.fact, RoundStarted)
            table.record(rec.fact)
        return table

    def head(self) -> str | None:
        """The digest of the newest chain link: it commits to every stored event."""
        last = self.stored(CHAIN_ID, desc=True, limit=1)
        return last[0].digest if last else None

    def rows(
        self, page: int = 1000, *, after: int | None = None, topics: Sequence[str] = ()
    ) -> Iterator[list[RawRow]]:
        """The whole log as plain :data:`RawRow` tuples, oldest first, in pages.

        The fast path of ``ledger verify``: one SQL statement per page and no per-row objects
        (the library's :meth:`notifications` builds a ``Notification`` and a ``UUID`` per row,
        which costs more than reading the row). Aggregate ids come as ``UUID.hex`` text.
        ``topics``, if given, keeps only rows of those topics. Without ``after`` every row is
        read, whatever its id: a row planted with an id <= 0 is not skipped (integrity checks
        must account for every row there is).
        """
        select, sqlite = self._rows_statement(len(topics))
        start = MIN_ROW_ID if after is None else after + 1
        while True:
            if sqlite:
                with self.recorder.datastore.transaction(commit=False) as curs:  # type: ignore[attr-defined]
                    cursor = curs.sqlite_cursor
                    cursor.row_factory = None
                    cursor.execute(select, (start, *topics, page))
                    rows: list[RawRow] = cursor.fetchall()
            else:
                from psycopg.rows import tuple_row

                with (
                    self.recorder.datastore.get_connection() as conn,  # type: ignore[attr-defined]
                    conn.cursor(row_factory=tuple_row, binary=True) as curs,
                ):
                    curs.execute(
                        select, (start, list(topics), page) if topics else (start, page), prepare=True
                    )
                    rows = curs.fetchall()
            if not rows:
                return
            yield rows
            if rows[-1][0] >= MAX_ROW_ID:
                return
            start = rows[-1][0] + 1

    def count_rows(self, *, upto: int) -> int:
        """How many rows the log holds with an id at or below ``upto`` (every id, also <= 0):
        one count over the primary key, no row read."""
        d = self.dialect
        table, position = self.events_table, self.position_column
        found = read_rows(self, f"SELECT COUNT(*) FROM {table} WHERE {position} <= {d.p}", (upto,))
        return int(found[0][0])

    def span(self, aggregate: UUID) -> tuple[int, int, str] | None:
        """Where one aggregate's events sit in the log: the notification ids of its first and
        its newest stored event, and the newest one's topic (``None`` if it has none)."""
        d = self.dialect
        table, position = self.events_table, self.position_column
        oid: Any = aggregate.hex if d.is_sqlite else aggregate
        found = read_rows(
            self,
            f"SELECT {position}, topic FROM {table} WHERE originator_id = {d.p} ORDER BY originator_version",
            (oid,),
        )
        if not found:
            return None
        return int(found[0][0]), int(found[-1][0]), str(found[-1][1])

    def heads(self, aggregates: Sequence[UUID]) -> dict[UUID, Recorded]:
        """The newest stored event of each aggregate that has one, in one query."""
        if not aggregates:
            return {}
        d = self.dialect
        table = self.events_table
        ids = [a.hex for a in aggregates] if d.is_sqlite else list(aggregates)
        among, params = d.one_of("originator_id", ids)
        found = read_rows(
            self,
            f"SELECT originator_id, originator_version, topic, state "
            f"FROM {table} e WHERE {among} AND originator_version = (SELECT "
            f"MAX(originator_version) FROM {table} m "
            f"WHERE m.originator_id = e.originator_id)",
            params,
        )
        heads: dict[UUID, Recorded] = {}
        for oid, version, topic, state in found:
            rec = self.ledger_mapper.to_domain_event(
                StoredEvent(originator_id=oid, originator_version=version, topic=topic, state=bytes(state))
            )
            heads[rec.originator_id] = rec
        return heads

    def topic_counts(self) -> dict[str, int]:
        """How many stored events each topic has (one aggregate query)."""
        table = self.events_table
        return dict(read_rows(self, f"SELECT topic, COUNT(*) FROM {table} GROUP BY topic"))

    @property
    def dialect(self) -> Dialect:
        """SQLite or PostgreSQL (``ledger.storage.sql``)."""
        return dialect_of(self)

    @property
    def events_table(self) -> str:
        """The stored events' table, as SQL names it (schema-qualified on PostgreSQL)."""
        return self.dialect.qualified(self.recorder.events_table_name)  # type: ignore[attr-defined]

    @property
    def position_column(self) -> str:
        """The column of a row's position in the log: ``rowid`` on SQLite, ``notification_id``
        on PostgreSQL."""
        return "rowid" if self.dialect.is_sqlite else "notification_id"

    def _rows_statement(self, topics: int = 0) -> tuple[str, bool]:
        d = self.dialect
        table = self.events_table
        if d.is_sqlite:
            where = f" AND topic IN ({','.join('?' * topics)})" if topics else ""
            return (
                f"SELECT rowid, originator_id, originator_version, topic, state FROM {table} "
                f"WHERE rowid >= ?{where} ORDER BY rowid LIMIT ?"
            ), True
        return (
            "SELECT notification_id, replace(originator_id::text, '-', ''), "
            f"originator_version, topic, state FROM {table} WHERE notification_id >= %s"
            + (" AND topic = ANY(%s)" if topics else "")
            + " ORDER BY notification_id LIMIT %s"
        ), False


class _NoTranscoder(Transcoder):
    """The ledger's mapper serialises with pydantic; the library's transcoder is not used."""

    def encode(self, obj: Any) -> bytes:
        raise NotImplementedError

    def decode(self, data: bytes) -> Any:
        raise NotImplementedError


def environment_for(url: str) -> dict[str, str]:
    """The library settings for a database URL (``sqlite:///…`` or ``postgresql://…``)."""
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        # sqlite:///ledger.db is relative to the working folder, sqlite:////var/x.db absolute.
        path = unquote(url[len("sqlite:///") :]) if url.startswith("sqlite:///") else ""
        if not path:
            raise StoreError(f"no file in {url!r}: use sqlite:///path/to/ledger.db")
        return {
            "PERSISTENCE_MODULE": PERSISTENCE_MODULES["sqlite"],
            "SQLITE_DBNAME": path,
            "SQLITE_LOCK_TIMEOUT": "30",
        }
    if parts.scheme in ("postgresql", "postgres"):
        query = parse_qs(parts.query)
        env = {
            "PERSISTENCE_MODULE": PERSISTENCE_MODULES["postgres"],
            "POSTGRES_DBNAME": unquote(parts.path.lstrip("/")) or "postgres",
            "POSTGRES_HOST": unquote(parts.hostname or "localhost"),
            "POSTGRES_PORT": str(parts.port or 5432),
            "POSTGRES_USER": unquote(parts.username or "postgres"),
            "POSTGRES_PASSWORD": unquote(parts.password or ""),
            "POSTGRES_LOCK_TIMEOUT": "30",
            "POSTGRES_CONNECT_TIMEOUT": str(CONNECT_TIMEOUT_S),
        }
        if "schema" in query:
            env["POSTGRES_SCHEMA"] = query["schema"][0]
        return env
    raise StoreError(f"unsupported database URL {url!r}: use sqlite:///PATH or postgresql://…")


def database_url(url: str | None = None) -> str:
    """The URL given, else ``LEDGER_DB``, else the embedded default."""
    return url or os.environ.get("LEDGER_DB") or DEFAULT_DB


CIPHER_KEY_ENV = "LEDGER_CIPHER_KEY"
"""Encryption at rest (docs/SECURITY.md): a base64 AES key of 16, 24 or 32 bytes."""
CIPHER_TOPIC = "eventsourcing.cryptography:AESCipher"
"""AES-GCM from the ``cryptography`` package (the library's default needs pycryptodome)."""


def cipher_environment() -> dict[str, str]:
    """The library settings that encrypt stored events, if ``LEDGER_CIPHER_KEY`` is set.

    Only the stored bytes are encrypted: chain digests are over the plaintext content, inside
    the ciphertext, so verify and replay work the same with the key and not at all without it.
    """
    key = os.environ.get(CIPHER_KEY_ENV)
    if not key:
        return {}
    return {"CIPHER_TOPIC": os.environ.get("LEDGER_CIPHER_TOPIC") or CIPHER_TOPIC, "CIPHER_KEY": key}


def open_ledger(
    url: str | None = None, *, extra_env: dict[str, str] | None = None, create: bool = True
) -> LedgerApp:
    """Open the ledger at ``url``; create it first only if ``create`` (``ingest``, ``init``).

    Without ``create`` a missing or uninitialised store raises :class:`StoreMissing` and
    nothing is created (no SQLite file, no PostgreSQL schema). An existing store is opened
    without any ``CREATE`` statement, so a role that may only read (or only insert) opens it.
    An unreachable server raises :class:`StoreUnreachable` within ``CONNECT_TIMEOUT_S``.

    On PostgreSQL the schema and tables are created under an advisory lock, so writers starting
    together on a fresh schema do not race (the library's ``CREATE OR REPLACE FUNCTION`` fails
    with "tuple concurrently updated" otherwise).
    """
    full = database_url(url)
    env = environment_for(full)
    if store_exists(full, env):
        env["CREATE_TABLE"] = "n"
    elif not create:
        raise StoreMissing(missing_message(full, env))
    created = env.get("CREATE_TABLE") != "n"
    env["APPLICATION_RECORDER_TOPIC"] = bulk_recorder_topic(env)
    env.update(cipher_environment())
    env.update(extra_env or {})
    try:
        if settings_dialect(env) == "postgres":
            with _CreationLock(env):
                app = LedgerApp(env=env)
                if created:
                    _guard_row_ids(app)
            _use_lock_function(app)
            return app
        app = LedgerApp(env=env)
        if created:
            _guard_row_ids(app)
        return app
    except StoreError:
        raise
    except Exception as exc:
        raise StoreError(f"cannot open {redact(full)}: {_first_line(exc)}") from None


POSITIVE_ID_MESSAGE = "ledger row ids must be positive"


def positive_id_sql(backend: str, table: str) -> list[str]:
    """The statement that makes the events table ``table`` (quoted, qualified) refuse a row id
    <= 0: an ``AFTER INSERT`` trigger on SQLite, ``CHECK (notification_id > 0)`` on PostgreSQL.
    Idempotent; run by whoever creates the store, and again by ``ledger init``."""
    if backend == "sqlite":
        return [
            f"CREATE TRIGGER IF NOT EXISTS ledger_positive_id AFTER INSERT ON {table} "
            f"WHEN NEW.rowid <= 0 BEGIN SELECT RAISE(ABORT, '{POSITIVE_ID_MESSAGE}'); END"
        ]
    return [
        f"DO $guard$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = "
        f"'ledger_positive_id' AND conrelid = {literal(table)}::regclass) THEN ALTER TABLE {table} "
        "ADD CONSTRAINT ledger_positive_id CHECK (notification_id > 0); END IF; END $guard$"
    ]


def _guard_row_ids(app: LedgerApp) -> None:
    """A store this call created refuses row ids <= 0 from its first row on, with or without
    ``ledger init`` (the integrity pass reads every row whatever its id in any case)."""
    recorder: Any = app.recorder
    d = app.dialect
    statements = positive_id_sql(d.name, d.qualified(recorder.events_table_name))
    with recorder.datastore.transaction(commit=True) as curs:
        for statement in statements:
            curs.execute(statement)


EVENTS_TABLE_POSTGRES = "ledger_events"
EVENTS_TABLE_SQLITE = "stored_events"


def store_exists(url: str, env: dict[str, str] | None = None) -> bool:
    """Whether ``url`` holds an initialised ledger (its events table exists). Creates nothing;
    raises :class:`StoreUnreachable` if a PostgreSQL server cannot be reached."""
    env = env if env is not None else environment_for(url)
    if settings_dialect(env) == "sqlite":
        return _sqlite_exists(env["SQLITE_DBNAME"])
    return _postgres_exists(url, env)


def _sqlite_exists(path: str) -> bool:
    import sqlite3
    from pathlib import Path

    if ":memory:" in path or "mode=memory" in path or not Path(path).is_file():
        return False
    try:
        with closing(sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True)) as conn:
            found = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (EVENTS_TABLE_SQLITE,)
            ).fetchone()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read {path}: {exc}") from None
    return found is not None


def _postgres_exists(url: str, env: dict[str, str]) -> bool:
    import psycopg

    schema = env.get("POSTGRES_SCHEMA")
    try:
        with _pg_connect(env) as conn:
            if schema is not None:
                table = quote(schema) + "." + EVENTS_TABLE_POSTGRES
            else:
                table = EVENTS_TABLE_POSTGRES
            found = conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()
    except psycopg.OperationalError as exc:
        raise StoreUnreachable(f"cannot connect to {redact(url)}: {_pg_reason(exc)}") from None
    except psycopg.Error as exc:
        raise StoreError(f"cannot read {redact(url)}: {_first_line(exc)}") from None
    return bool(found and found[0] is not None)


def _pg_connect(env: dict[str, str]) -> Any:
    import psycopg

    return psycopg.connect(
        dbname=env["POSTGRES_DBNAME"],
        host=env["POSTGRES_HOST"],
        port=int(env["POSTGRES_PORT"]),
        user=env["POSTGRES_USER"],
        password=env["POSTGRES_PASSWORD"] or None,
        connect_timeout=CONNECT_TIMEOUT_S,
        autocommit=True,
    )


def _pg_reason(exc: BaseException) -> str:
    """The server's reason in one line: ``database "x" does not exist``, ``Connection refused``."""
    text = " ".join(str(exc).split())
    for marker in ("FATAL: ", "failed: "):
        if marker in text:
            text = text.rsplit(marker, 1)[1]
    return text.split(" Is the server running")[0].strip() or type(exc).__name__


def _first_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[0] if lines else type(exc).__name__


def missing_message(url: str, env: dict[str, str] | None = None) -> str:
    """One line: which URL has no ledger, and what to run."""
    env = env if env is not None else environment_for(url)
    if settings_dialect(env) == "sqlite":
        what = f"no ledger at {redact(url)} (no such file, or not a ledger)"
    else:
        where = env.get("POSTGRES_SCHEMA") or "the default schema"
        what = f"no ledger at {redact(url)} (no events table in {where})"
    return (
        f"{what}: check --db / LEDGER_DB, or create it with `ledger init` or `ledger ingest FILE` (same --db)"
    )


LOCK_FUNCTION = "ledger_lock_events"
"""PostgreSQL: a ``SECURITY DEFINER`` function that takes the events table's ``EXCLUSIVE`` lock
for the writer (``ledger init --roles`` creates it), so the writer needs no ``UPDATE`` grant, the
privilege that would also let it take ``ACCESS EXCLUSIVE`` and block every reader."""


def _use_lock_function(app: LedgerApp) -> None:
    """Take the insert lock through :data:`LOCK_FUNCTION` where it exists and may be called."""
    from psycopg import sql

    recorder: Any = app.recorder
    schema = recorder.datastore.schema or "public"
    function = f"{quote(schema)}.{quote(LOCK_FUNCTION)}()"
    with recorder.datastore.get_connection() as conn:
        found = conn.execute(
            "SELECT to_regprocedure(%s) IS NOT NULL AND has_function_privilege("
            "to_regprocedure(%s), 'EXECUTE') AS usable",
            (function, function),
        ).fetchone()
    usable = found.get("usable") if isinstance(found, dict) else found and found[0]
    if usable and len(recorder.lock_table_statements) == 2:
        recorder.lock_table_statements[1] = sql.SQL("SELECT {}.{}()").format(
            sql.Identifier(schema), sql.Identifier(LOCK_FUNCTION)
        )


class _CreationLock:
    """Hold a PostgreSQL advisory lock (per schema) while the store's tables are created, and
    create the schema first if it is missing."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.conn: Any = None

    def __enter__(self) -> None:
        import psycopg
        from psycopg import sql

        env = self.env
        schema = env.get("POSTGRES_SCHEMA")
        try:
            self.conn = _pg_connect(env)
            if env.get("CREATE_TABLE", "y").lower() not in ("n", "no", "f", "false", "0"):
                self.conn.execute(
                    "SELECT pg_advisory_lock(hashtext(%s))", ("ledger-create:" + (schema or "public"),)
                )
            # Look first: a least-privilege role (ledger init --roles) may not CREATE, even
            # "IF NOT EXISTS" an existing schema.
            if (
                schema
                and self.conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
                is None
            ):
                self.conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        except psycopg.OperationalError as exc:
            self.__exit__()
            raise StoreUnreachable(
                f"cannot connect to PostgreSQL at {env['POSTGRES_HOST']}:"
                f"{env['POSTGRES_PORT']}: {_pg_reason(exc)}"
            ) from None
        except psycopg.Error as exc:
            self.__exit__()
            what = f"create schema {schema}" if schema else "open the database"
            raise StoreError(f"cannot {what}: {str(exc).strip()}") from None

    def __exit__(self, *exc: object) -> None:
        if self.conn is not None:
            self.conn.close()  # releases the advisory lock
            self.conn = None


def bulk_recorder_topic(env: dict[str, str]) -> str:
    """The library recorder that writes a save in one statement (``ledger.codec.library``)."""
    return SQLITE_TOPIC if settings_dialect(env) == "sqlite" else POSTGRES_TOPIC


def redact(url: str) -> str:
    """A URL safe to print: the password replaced."""
    parts = urlsplit(url)
    if parts.password:
        return url.replace(f":{parts.password}@", ":***@")
    return url
