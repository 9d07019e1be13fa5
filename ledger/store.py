"""The event store: an eventsourcing ``Application`` on SQLite (default) or PostgreSQL.

- **Aggregates.** One per round (id from table + round, version = the feed's ``seq``), one per
  table (``ledger.table``) and one chain (``ledger.chain``).
- **Events.** A stored event is a :class:`Recorded`: a pydantic fact plus its chain digest. The
  :class:`LedgerMapper` writes the fact with ``model_dump_json()`` inside a fixed frame and reads
  it back with ``model_validate_json()``, so ``Decimal``, enums, tuples and nested models
  round-trip exactly. Topics are stable names (``"RL/spin_result"``, ``"table/round_started"``),
  never module paths, so stored history survives refactoring (EVENTSOURCING.md hazard 9).
- **Databases.** ``sqlite:///ledger.db`` (the default) or ``postgresql://user@host:port/db``
  (``?schema=name`` optional), chosen by ``--db`` or ``LEDGER_DB``. One code path serves both:
  the only difference is the environment handed to the library.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.persistence import Mapper, StoredEvent, Transcoder

from ledger.chain import CHAIN_ID, CHAIN_TOPIC, FrameError, Linked, frame, unframe
from ledger.errors import StoreError
from ledger.feed.envelope import FeedEvent, FeedModel
from ledger.games import GAMES
from ledger.round import Round, round_id
from ledger.table import TABLE_TOPIC, RoundStarted, Table, table_id

RawRow = tuple[int, str, int, str, bytes]
"""One stored row as :meth:`LedgerApp.rows` gives it: notification id, aggregate id (text),
version, topic, stored bytes. The id is
32 lower-case hex digits (``UUID.hex``) on every backend."""

DEFAULT_DB = "sqlite:///ledger.db"
SAVE_EVENTS_MAX = 1000
"""Never more events than this in one save: a larger PostgreSQL save can hang forever
(EVENTSOURCING.md hazard 1)."""


def _topics() -> dict[str, type[FeedModel]]:
    topics: dict[str, type[FeedModel]] = {TABLE_TOPIC: RoundStarted, CHAIN_TOPIC: Linked}
    for key, game in GAMES.items():
        for cls in game.events:
            topics[f"{key}/{cls.TYPE}"] = cls
    return topics


TOPICS: dict[str, type[FeedModel]] = _topics()
"""Every stored topic and the model its facts are read with."""


def topic_of(fact: FeedModel) -> str:
    """The stored topic of a fact."""
    if isinstance(fact, FeedEvent):
        return f"{fact.game}/{fact.type}"
    if isinstance(fact, RoundStarted):
        return TABLE_TOPIC
    if isinstance(fact, Linked):
        return CHAIN_TOPIC
    raise TypeError(f"no topic for {type(fact).__name__}")


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
        """Fold into a :class:`~ledger.round.Round` (lets ``app.repository.get`` load rounds)."""
        if aggregate is None:
            return Round.replay([self.fact])  # type: ignore[list-item]
        aggregate.record(self.fact)
        return aggregate


def content_of(fact: FeedModel) -> bytes:
    """The canonical bytes of a fact: pydantic's JSON, fields in declaration order."""
    return fact.model_dump_json(exclude_none=True).encode()


class LedgerMapper(Mapper[UUID]):
    """Maps :class:`Recorded` events to stored rows and back (with optional compression/cipher)."""

    def to_stored_event(self, domain_event: Any) -> StoredEvent:
        """Frame the digest and content; compress and encrypt if configured."""
        rec: Recorded = domain_event
        state = frame(rec.digest, rec.content)
        if self.compressor:
            state = self.compressor.compress(state)
        if self.cipher:
            state = self.cipher.encrypt(state)
        return StoredEvent(originator_id=rec.originator_id,
                           originator_version=rec.originator_version,
                           topic=rec.topic, state=state)

    def to_domain_event(self, stored_event: StoredEvent) -> Any:
        """Read a stored row back into a :class:`Recorded`."""
        digest, content = self.open_state(stored_event.state)
        cls = TOPICS.get(stored_event.topic)
        if cls is None:
            raise FrameError(f"unknown topic {stored_event.topic!r}")
        originator_id = stored_event.originator_id
        if not isinstance(originator_id, UUID):
            originator_id = UUID(str(originator_id))
        return Recorded(originator_id, stored_event.originator_version, stored_event.topic,
                        cls.model_validate_json(content), content, digest)

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
        return LedgerMapper(transcoder=_NoTranscoder(), compressor=self.factory.compressor(),
                            cipher=self.factory.cipher())

    @property
    def ledger_mapper(self) -> LedgerMapper:
        """The mapper, typed."""
        assert isinstance(self.mapper, LedgerMapper)
        return self.mapper

    def stored(self, aggregate: UUID, *, gt: int | None = None, lte: int | None = None,
               desc: bool = False, limit: int | None = None) -> list[Recorded]:
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

    def notifications(self, page: int = 1000) -> Iterator[Sequence[Any]]:
        """The whole notification log in pages, oldest first."""
        start = 0
        while True:
            rows = self.recorder.select_notifications(start, page, inclusive_of_start=False)
            if not rows:
                return
            yield rows
            start = rows[-1].id

    def rows(self, page: int = 1000, *, after: int = 0,
             topics: Sequence[str] = ()) -> Iterator[list[RawRow]]:
        """The whole log as plain :data:`RawRow` tuples, oldest first, in pages.

        The fast path of ``ledger verify``: one SQL statement per page and no per-row objects
        (the library's :meth:`notifications` builds a ``Notification`` and a ``UUID`` per row,
        which costs more than reading the row). Aggregate ids come as ``UUID.hex`` text.
        ``topics``, if given, keeps only rows of those topics.
        """
        select, sqlite = self._rows_statement(len(topics))
        start = after
        while True:
            if sqlite:
                with self.recorder.datastore.transaction(commit=False) as curs:  # type: ignore[attr-defined]
                    cursor = curs.sqlite_cursor
                    cursor.row_factory = None
                    cursor.execute(select, (start, *topics, page))
                    rows: list[RawRow] = cursor.fetchall()
            else:
                from psycopg.rows import tuple_row

                with self.recorder.datastore.get_connection() as conn, conn.cursor(  # type: ignore[attr-defined]
                        row_factory=tuple_row) as curs:
                    curs.execute(select, (start, list(topics), page) if topics
                                 else (start, page), prepare=True)
                    rows = curs.fetchall()
            if not rows:
                return
            yield rows
            start = rows[-1][0]

    def heads(self, aggregates: Sequence[UUID]) -> dict[UUID, Recorded]:
        """The newest stored event of each aggregate that has one, in one query."""
        if not aggregates:
            return {}
        table = self.recorder.events_table_name  # type: ignore[attr-defined]
        if self._is_sqlite():
            marks = ",".join("?" * len(aggregates))
            statement: Any = (f"SELECT originator_id, originator_version, topic, state FROM {table} e "
                         f"WHERE originator_id IN ({marks}) AND originator_version = (SELECT "
                         f"MAX(originator_version) FROM {table} m "
                         f"WHERE m.originator_id = e.originator_id)")
            with self.recorder.datastore.transaction(commit=False) as curs:  # type: ignore[attr-defined]
                cursor = curs.sqlite_cursor
                cursor.row_factory = None
                cursor.execute(statement, [a.hex for a in aggregates])
                found = cursor.fetchall()
        else:
            from psycopg import sql
            from psycopg.rows import tuple_row

            statement = sql.SQL(
                "SELECT originator_id, originator_version, topic, state FROM {schema}.{table} e "
                "WHERE originator_id = ANY(%s) AND originator_version = (SELECT "
                "MAX(originator_version) FROM {schema}.{table} m "
                "WHERE m.originator_id = e.originator_id)").format(
                schema=sql.Identifier(self.recorder.datastore.schema),  # type: ignore[attr-defined]
                table=sql.Identifier(table))
            with self.recorder.datastore.get_connection() as conn, conn.cursor(  # type: ignore[attr-defined]
                    row_factory=tuple_row) as curs:
                curs.execute(statement, (list(aggregates),))
                found = curs.fetchall()
        heads: dict[UUID, Recorded] = {}
        for oid, version, topic, state in found:
            rec = self.ledger_mapper.to_domain_event(
                StoredEvent(originator_id=oid, originator_version=version, topic=topic,
                            state=bytes(state)))
            heads[rec.originator_id] = rec
        return heads

    def topic_counts(self) -> dict[str, int]:
        """How many stored events each topic has (one aggregate query)."""
        table = self.recorder.events_table_name  # type: ignore[attr-defined]
        if self._is_sqlite():
            with self.recorder.datastore.transaction(commit=False) as curs:  # type: ignore[attr-defined]
                cursor = curs.sqlite_cursor
                cursor.row_factory = None
                cursor.execute(f"SELECT topic, COUNT(*) FROM {table} GROUP BY topic")
                return dict(cursor.fetchall())
        from psycopg import sql
        from psycopg.rows import tuple_row

        statement = sql.SQL("SELECT topic, COUNT(*) FROM {schema}.{table} GROUP BY topic").format(
            schema=sql.Identifier(self.recorder.datastore.schema),  # type: ignore[attr-defined]
            table=sql.Identifier(table))
        with self.recorder.datastore.get_connection() as conn, conn.cursor(  # type: ignore[attr-defined]
                row_factory=tuple_row) as curs:
            curs.execute(statement)
            return dict(curs.fetchall())

    def _is_sqlite(self) -> bool:
        from eventsourcing.sqlite import SQLiteApplicationRecorder

        return isinstance(self.recorder, SQLiteApplicationRecorder)

    def _rows_statement(self, topics: int = 0) -> tuple[Any, bool]:
        table = self.recorder.events_table_name  # type: ignore[attr-defined]
        if self._is_sqlite():
            where = f" AND topic IN ({','.join('?' * topics)})" if topics else ""
            return (f"SELECT rowid, originator_id, originator_version, topic, state FROM {table} "
                    f"WHERE rowid > ?{where} ORDER BY rowid LIMIT ?"), True
        from psycopg import sql

        return sql.SQL(
            "SELECT notification_id, replace(originator_id::text, '-', ''), originator_version, "
            "topic, state "
            "FROM {schema}.{table} WHERE notification_id > %s" + (" AND topic = ANY(%s)"
                                                                  if topics else "")
            + " ORDER BY notification_id LIMIT %s").format(
            schema=sql.Identifier(self.recorder.datastore.schema),  # type: ignore[attr-defined]
            table=sql.Identifier(table)), False


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
        path = unquote(url[len("sqlite:///"):]) if url.startswith("sqlite:///") else ""
        if not path:
            raise StoreError(f"no file in {url!r}: use sqlite:///path/to/ledger.db")
        return {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": path,
                "SQLITE_LOCK_TIMEOUT": "30"}
    if parts.scheme in ("postgresql", "postgres"):
        query = parse_qs(parts.query)
        env = {
            "PERSISTENCE_MODULE": "eventsourcing.postgres",
            "POSTGRES_DBNAME": unquote(parts.path.lstrip("/")) or "postgres",
            "POSTGRES_HOST": unquote(parts.hostname or "localhost"),
            "POSTGRES_PORT": str(parts.port or 5432),
            "POSTGRES_USER": unquote(parts.username or "postgres"),
            "POSTGRES_PASSWORD": unquote(parts.password or ""),
            "POSTGRES_LOCK_TIMEOUT": "30",
            "POSTGRES_CONNECT_TIMEOUT": "10",
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
    return {"CIPHER_TOPIC": os.environ.get("LEDGER_CIPHER_TOPIC") or CIPHER_TOPIC,
            "CIPHER_KEY": key}


def open_ledger(url: str | None = None, *, extra_env: dict[str, str] | None = None) -> LedgerApp:
    """Open (creating if needed) the ledger at ``url``."""
    env = environment_for(database_url(url))
    if "POSTGRES_SCHEMA" in env:
        _create_schema(env)
    env["APPLICATION_RECORDER_TOPIC"] = bulk_recorder_topic(env)
    env.update(cipher_environment())
    env.update(extra_env or {})
    try:
        return LedgerApp(env=env)
    except Exception as exc:
        raise StoreError(f"cannot open {redact(database_url(url))}: {exc}") from None


def bulk_recorder_topic(env: dict[str, str]) -> str:
    """The library recorder that writes a save in one statement (``ledger.bulk``)."""
    from ledger.bulk import POSTGRES_TOPIC, SQLITE_TOPIC

    return SQLITE_TOPIC if env["PERSISTENCE_MODULE"] == "eventsourcing.sqlite" else POSTGRES_TOPIC


def redact(url: str) -> str:
    """A URL safe to print: the password replaced."""
    parts = urlsplit(url)
    if parts.password:
        return url.replace(f":{parts.password}@", ":***@")
    return url


def _create_schema(env: dict[str, str]) -> None:
    import psycopg
    from psycopg import sql

    try:
        with psycopg.connect(dbname=env["POSTGRES_DBNAME"], host=env["POSTGRES_HOST"],
                             port=int(env["POSTGRES_PORT"]), user=env["POSTGRES_USER"],
                             password=env["POSTGRES_PASSWORD"] or None, connect_timeout=10,
                             autocommit=True) as conn:
            # Look first: a least-privilege role (ledger init --roles) may not CREATE, even
            # "IF NOT EXISTS" an existing schema.
            if conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s",
                            (env["POSTGRES_SCHEMA"],)).fetchone() is None:
                conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(
                    sql.Identifier(env["POSTGRES_SCHEMA"])))
    except psycopg.Error as exc:
        raise StoreError(f"cannot create schema {env['POSTGRES_SCHEMA']}: {exc}") from None
