"""How far a follower's findings have been told: the store's row up to which every finding was
published, so a follower started again does not tell them a second time.

One row in ``ledger_follow_told`` beside the store's events: ``position``, the notification id
of the last row the live judge had read when the findings it made were written to standard
output and acknowledged by JetStream. A follower started again judges from the newest
checkpoint (or the start of the log) as before, and keeps to itself every finding of a round
closed at a row up to ``position``: those were told.

The row is written right after the findings are told, so a follower killed in between (a few
milliseconds) tells them again on standard output; on NATS the server drops the repeat, which
carries the same ``Nats-Msg-Id`` (:func:`finding_id`). On SQLite the row is written without
waiting for the disk (``synchronous = OFF`` on a connection of its own): it survives the
follower's death, and a power cut loses at most a repeat's protection, never an event.
"""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime

from ledger.storage.sql import Connection, SQLiteConnection, connect
from ledger.storage.store import LedgerApp

TOLD_TABLE = "ledger_follow_told"


def store_identity(app: LedgerApp) -> str:
    """What tells this store from another in message ids: its SQLite file (absolute path), or its
    PostgreSQL server, database and schema."""
    env = getattr(app, "env", {}) or {}
    if env.get("SQLITE_DBNAME"):
        return "sqlite " + os.path.abspath(str(env["SQLITE_DBNAME"]))
    parts = ("POSTGRES_HOST", "POSTGRES_PORT", "POSTGRES_DBNAME", "POSTGRES_SCHEMA")
    return "postgres " + " ".join(str(env.get(k) or "") for k in parts)


def finding_id(store: str, key: tuple[int, int, int], index: int) -> str:
    """The ``Nats-Msg-Id`` of a finding: the same each time the same store's judge makes it
    (its round's closing row and its place among the round's findings)."""
    text = f"finding {store} {key[0]}.{key[1]}.{key[2]}.{index}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def reject_id(source: str, line: int, code: str) -> str:
    """The ``Nats-Msg-Id`` of a rejected line: its source, its number there and its code."""
    return hashlib.sha256(f"reject {source} {line} {code}".encode()).hexdigest()[:32]


class ToldMark:
    """The ``ledger_follow_told`` row of one store (see the module docstring)."""

    def __init__(self, app: LedgerApp) -> None:
        self.db: Connection = connect(app)
        d = self.db.dialect
        self.table = d.qualified(TOLD_TABLE)
        self.p = d.p
        if isinstance(self.db, SQLiteConnection):
            self.db.conn.execute("PRAGMA synchronous = OFF")
        self.db.create(
            [
                f"CREATE TABLE IF NOT EXISTS {self.table} (id INTEGER PRIMARY KEY, "
                "position BIGINT NOT NULL, told_at TEXT NOT NULL)"
            ]
        )

    def read(self) -> int | None:
        """The stored position (``None``: none stored yet)."""
        rows = self.db.read(f"SELECT position FROM {self.table} WHERE id = 1")
        return int(rows[0][0]) if rows else None

    def write(self, position: int) -> None:
        """Every finding of the rows up to ``position`` is told."""
        p = self.p
        with self.db.write() as cur:
            cur.execute(
                f"INSERT INTO {self.table} (id, position, told_at) VALUES (1, {p}, {p}) "
                "ON CONFLICT (id) DO UPDATE SET position = excluded.position, told_at = excluded.told_at",
                (position, datetime.now(UTC).isoformat()),
            )

    def close(self) -> None:
        """Close the connection of its own."""
        self.db.close()
