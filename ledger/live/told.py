"""How far a follower's findings have been told: the store's row up to which every finding was
published, so a follower started again does not tell them a second time.

One row in ``ledger_follow_told`` beside the store's events: ``position``, the notification id
of the last row the live judge had read when the findings it made were written to standard
output and acknowledged by JetStream. A follower started again judges from the newest
checkpoint (or the start of the log) as before, and keeps to itself every finding of a round
closed at a row up to ``position``: those were told.

**The row is signed** with the store's sealing key, when the follower has it (``--seal-key``
with ``--seal-every``, or ``LEDGER_SEAL_KEY``): the signature covers the position, the time and
the aggregate and version of the event stored at that row, so it names a row of this store and
no other. **Nothing read from it is trusted beyond what can be proved** (:meth:`ToldMark.read`):
when the store has a sealing public key (the one its checkpoints are checked with), a row that
is not signed by it (unsigned, wrongly signed, raised or planted by someone with SQL access, or
naming a row the store does not hold) is trusted only up to the newest checkpoint valid under
that key (or not at all), and :attr:`Told.problem` says so; the follower says it on standard
error, records it as the last error (kind ``told``) and tells the findings after that row again.
Without a sealing public key nothing can be proved and the row is used as it is (the store's
events are then protected by the chain alone, too).

**A follower without the sealing key** writes the row unsigned; on a store with a sealing public
key and no checkpoint that would make every restart tell every finding again. Given a file of
its own (``--told-copy FILE``: on the follower's machine, out of reach of SQL), it writes a copy
of the row there after each write in the database (the position and the aggregate and version
of the event at that row, for this store), and on restart an unsigned row is trusted up to that
copy (the lower of the two), when the copy names this store and the event at its row is still
the one it names: someone who can change the database but not that file cannot hide a finding
by raising the row. Both rows equal: nothing is said; else :attr:`Told.problem` says which was
used. The copy is only as safe as the file: whoever can write it can raise it too.

The row is written right after the findings are told, so a follower killed in between (a few
milliseconds) tells them again on standard output, with the same ``finding_id``
(:func:`finding_id`, the de-duplication key of docs/FEED.md); on NATS the server drops the
repeat, which carries the same ``Nats-Msg-Id``. On SQLite the row is written without waiting
for the disk (``synchronous = OFF`` on a connection of its own): it survives the follower's
death, and a power cut loses at most a repeat's protection, never an event.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ledger.domain.errors import StoreError
from ledger.proof import checkpoints
from ledger.proof.seal import SEAL_KEY_ENV, SealError, key_id, parse_private_key, raw_public
from ledger.storage.sql import Connection, Dialect, SQLiteConnection, connect
from ledger.storage.store import LedgerApp

TOLD_TABLE = "ledger_follow_told"
TOLD_FORMAT = "ledger-follow-told-v1"
BUSY_MS = 2000
"""How long (ms) a write of the row waits for SQLite's write lock, or for PostgreSQL's lock on the
row (``lock_timeout``, another session holding it), before giving up this time (it is counted
and written again with the next findings)."""
TOLD_COLUMNS = ("id", "position", "told_at", "signature")
"""The columns the follower (the ingest role) writes; ``position``, ``told_at`` and
``signature`` are the ones it updates."""


def told_sql(dialect: Dialect) -> list[str]:
    """The statements that create the told table (and add the signature column to one made by
    an older version; PostgreSQL, the owner: ``ledger init --roles`` runs them)."""
    table = dialect.qualified(TOLD_TABLE)
    create = (
        f"CREATE TABLE IF NOT EXISTS {table} (id INTEGER PRIMARY KEY, "
        "position BIGINT NOT NULL, told_at TEXT NOT NULL, signature TEXT)"
    )
    if dialect.is_sqlite:
        return [create]
    return [create, f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS signature TEXT"]


def store_identity(app: LedgerApp) -> str:
    """What tells this store from another in message ids: its SQLite file (absolute path), or its
    PostgreSQL server, database and schema."""
    env = getattr(app, "env", {}) or {}
    if env.get("SQLITE_DBNAME"):
        return "sqlite " + os.path.abspath(str(env["SQLITE_DBNAME"]))
    parts = ("POSTGRES_HOST", "POSTGRES_PORT", "POSTGRES_DBNAME", "POSTGRES_SCHEMA")
    return "postgres " + " ".join(str(env.get(k) or "") for k in parts)


def finding_id(store: str, key: tuple[int, int, int], index: int) -> str:
    """The ``finding_id`` of a finding (and its ``Nats-Msg-Id``): the same each time the same
    store's judge makes it (its round's closing row and its place among the round's findings)."""
    text = f"finding {store} {key[0]}.{key[1]}.{key[2]}.{index}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def reject_id(source: str, line: int, code: str) -> str:
    """The ``Nats-Msg-Id`` of a rejected line: its source, its number there and its code."""
    return hashlib.sha256(f"reject {source} {line} {code}".encode()).hexdigest()[:32]


def signed_bytes(position: int, told_at: str, row: tuple[str, int] | None) -> bytes:
    """What a told row's signature signs: its position and time, and the aggregate (hex) and
    version of the event stored at that row (``None``: position 0), canonical JSON."""
    return json.dumps(
        {"format": TOLD_FORMAT, "position": position, "told_at": told_at, "row": row},
        sort_keys=True,
        separators=(",", ":"),
    ).encode()


def signing_key(given: Ed25519PrivateKey | None) -> tuple[Ed25519PrivateKey | None, str | None]:
    """The key the told row is signed with: ``given`` (the follower's sealing key), else
    ``LEDGER_SEAL_KEY`` when set; and a note when that variable holds no key."""
    if given is not None:
        return given, None
    value = os.environ.get(SEAL_KEY_ENV)
    if not value:
        return None, None
    try:
        return parse_private_key(value.encode()), None
    except SealError as exc:
        return None, f"{SEAL_KEY_ENV}: {exc}; the told row is not signed"


@dataclass(frozen=True)
class Told:
    """The told row as read and checked."""

    position: int | None
    """The row through which findings are taken as told (``None``: no row stored)."""
    stored: int | None
    """The position the row holds."""
    problem: str | None = None
    """Why the row was not trusted as it is (``None``: it was, or there is none)."""


class ToldMark:
    """The ``ledger_follow_told`` row of one store (see the module docstring), written and
    signed with ``key`` (``None``: ``LEDGER_SEAL_KEY``, else unsigned)."""

    def __init__(
        self, app: LedgerApp, key: Ed25519PrivateKey | None = None, copy: str | os.PathLike[str] | None = None
    ) -> None:
        self.app = app
        self.copy = Path(copy) if copy is not None else None
        """The follower's own copy of the row (module docstring), or ``None``."""
        self.store = store_identity(app)
        self.db: Connection = connect(app)
        d = self.db.dialect
        self.table = d.qualified(TOLD_TABLE)
        self.p = d.p
        self.notes: list[str] = []
        """What the follower should say about signing (a key that is not the store's)."""
        self.events, self.position_column = app.events_table, app.position_column
        if isinstance(self.db, SQLiteConnection):
            self.db.conn.execute("PRAGMA synchronous = OFF")
            # Written from a thread of the follower's own: a store locked by another writer
            # holds that thread for at most this long; the write is counted and made next time.
            self.db.conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        try:
            if not self.db.table_exists(TOLD_TABLE):
                self.db.create(told_sql(d))
            elif not self._has_signature_column():  # told by an older version
                self.db.create(self._alter())
        except Exception as exc:  # e.g. a role not granted it: run `ledger init --roles` again
            self.db.close()
            raise StoreError(f"cannot create {TOLD_TABLE}: {str(exc).splitlines()[0]}") from None
        self.public = checkpoints.sealing_key(app)
        self.key, note = signing_key(key)
        if note:
            self.notes.append(note)
        public = self.public
        if (
            self.key is not None
            and public is not None
            and raw_public(self.key.public_key()) != raw_public(public.key)
        ):
            self.notes.append(
                f"the sealing key given is not the store's sealing public key "
                f"{key_id(public.key)} ({public.source}): the told row is not signed"
            )
            self.key = None

    def _has_signature_column(self) -> bool:
        try:
            self.db.read(f"SELECT signature FROM {self.table} WHERE id = 0")
        except Exception:  # the drivers' "no such column"
            return False
        return True

    def _alter(self) -> list[str]:
        if self.db.dialect.is_sqlite:
            return [f"ALTER TABLE {self.table} ADD COLUMN signature TEXT"]
        return told_sql(self.db.dialect)[1:]

    def _row(self, position: int) -> tuple[str, int] | None:
        """The aggregate (hex) and version of the event at row ``position`` (``None``: none)."""
        if position <= 0:
            return None
        found = self.db.read(
            f"SELECT originator_id, originator_version FROM {self.events} "
            f"WHERE {self.position_column} = {self.p}",
            (position,),
        )
        if not found:
            return None
        oid, version = found[0]
        return str(oid).replace("-", "").lower(), int(version)

    def read(self) -> Told:
        """The stored position, checked (module docstring)."""
        rows = self.db.read(f"SELECT position, told_at, signature FROM {self.table} WHERE id = 1")
        if not rows:
            return Told(None, None)
        stored = int(rows[0][0])
        if self.public is None:
            return Told(stored, stored)
        why = self._invalid(stored, str(rows[0][1]), rows[0][2])
        if why is None:
            return Told(stored, stored)
        bound, proved = self._proved()
        copied = self._copied() if rows[0][2] is None else None
        if copied is not None and copied == stored:
            return Told(stored, stored)  # unsigned, and equal to the follower's own copy
        if copied is not None and min(stored, copied) > bound:
            bound, proved = min(stored, copied), f"the follower's own copy in {self.copy} (row {copied})"
        trusted = min(stored, bound)
        return Told(
            trusted,
            stored,
            f"the told row (findings told through row {stored}) {why}: trusted only up to {proved}; "
            f"the findings after row {trusted} are told again",
        )

    def _copied(self) -> int | None:
        """The position of the follower's own copy, when there is one that names this store and
        a row it holds with the same event; else ``None``."""
        if self.copy is None:
            return None
        try:
            data = json.loads(self.copy.read_text(encoding="utf-8"))
            position = int(data["position"])
            row = data["row"]
            ok = data.get("format") == TOLD_FORMAT and data.get("store") == self.store
        except (OSError, ValueError, KeyError, TypeError):
            return None
        here = self._row(position)
        if not ok or (list(here) if here is not None else None) != row:
            return None
        return position

    def _invalid(self, position: int, told_at: str, signature: Any) -> str | None:
        """Why the row is not signed by the store's sealing key (``None``: it is)."""
        assert self.public is not None
        name = f"the store's sealing key {key_id(self.public.key)}"
        if not signature:
            return f"is not signed by {name}"
        row = self._row(position)
        if position > 0 and row is None:
            return f"names a row the store does not hold (row {position})"
        try:
            self.public.key.verify(bytes.fromhex(str(signature)), signed_bytes(position, told_at, row))
        except (InvalidSignature, ValueError):
            return f"has a signature that is not valid under {name}"
        return None

    def _proved(self) -> tuple[int, str]:
        """The newest row a valid checkpoint covers (0: none), and how to say it."""
        with checkpoints.CheckpointStore(self.app, create=False) as table:
            newest = table.newest(self.public) if table.exists else None
        if newest is None:
            return 0, "the start of the log (no checkpoint is valid under the sealing public key)"
        return newest.position, f"checkpoint {newest.number} (row {newest.position})"

    def write(self, position: int) -> None:
        """Every finding of the rows up to ``position`` is told (signed when there is a key)."""
        p = self.p
        told_at = datetime.now(UTC).isoformat()
        signature = None
        row = self._row(position) if self.key is not None or self.copy is not None else None
        if self.key is not None:
            signature = self.key.sign(signed_bytes(position, told_at, row)).hex()
        with self.db.write() as cur:
            if not self.db.dialect.is_sqlite:  # a row lock held elsewhere: give up, bounded
                cur.execute(f"SET LOCAL lock_timeout = {BUSY_MS}")
            cur.execute(
                f"INSERT INTO {self.table} (id, position, told_at, signature) VALUES (1, {p}, {p}, {p}) "
                "ON CONFLICT (id) DO UPDATE SET position = excluded.position, "
                "told_at = excluded.told_at, signature = excluded.signature",
                (position, told_at, signature),
            )
        if self.copy is not None:
            self._write_copy(position, row)

    def _write_copy(self, position: int, row: tuple[str, int] | None) -> None:
        """The follower's own copy, replaced atomically."""
        assert self.copy is not None
        temp = self.copy.with_name(self.copy.name + ".tmp")
        temp.write_text(
            json.dumps({"format": TOLD_FORMAT, "store": self.store, "position": position, "row": row}),
            encoding="utf-8",
        )
        os.replace(temp, self.copy)

    def close(self) -> None:
        """Close the connection of its own."""
        self.db.close()
