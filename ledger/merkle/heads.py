"""The log's origin and its signed tree heads (C2SP ``tlog-checkpoint`` notes), as stored.

- **Origin.** The name of the log on the first line of every checkpoint note, and the name its
  notes are signed under: set once per store (``ledger init --origin NAME``; otherwise the
  first ``ledger seal`` stores :func:`default_origin`), never changed (:func:`set_origin`
  refuses another name). A witness keeps one latest checkpoint per origin, so two stores must
  not share one.
- **Notes.** ``ledger seal`` stores one signed note per tree size (:func:`store_note`), and
  cosignature lines collected for it beside it (:func:`add_cosignatures`), append-only.
  :class:`StoredNote` gives the note with every stored cosignature appended
  (:meth:`StoredNote.cosigned`).

Nothing here is trusted for being stored: readers open a note with the operator's key
(``ledger.proof.note.open_note``) and count cosignatures with the witnesses' keys
(``ledger.proof.note.require_quorum``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ledger.domain.errors import StoreError
from ledger.merkle.log import MerkleLog
from ledger.merkle.storage import COSIGNATURES_TABLE, HEADS_TABLE, ORIGIN_TABLE
from ledger.proof.note import CheckpointBody, NoteError, check_name, parse_note, parse_signature_line
from ledger.storage.sql import Connection, connect
from ledger.storage.store import LedgerApp

MAX_ORIGIN_CHARS = 200


class OriginError(StoreError):
    """An origin that is not a valid log name, or another one than the store's."""


@dataclass(frozen=True)
class StoredNote:
    """A stored tree-head note: its tree size, the signed note, and the cosignature lines kept
    beside it (each ``— NAME BASE64``)."""

    size: int
    note: str
    cosignatures: tuple[str, ...] = ()

    @property
    def body(self) -> CheckpointBody:
        """The checkpoint the note carries (its signatures not checked here)."""
        return CheckpointBody.parse(parse_note(self.note).text)

    def cosigned(self) -> str:
        """The note with every stored cosignature line appended (each once)."""
        have = set(self.note.splitlines())
        extra = [line for line in self.cosignatures if line not in have]
        return self.note + "".join(line + "\n" for line in extra)


def check_origin(name: str) -> str:
    """A log origin: a key name (no spaces, no ``+``), at most 200 characters."""
    try:
        check_name(name)
    except NoteError as exc:
        raise OriginError(f"not a valid origin: {exc}") from None
    if len(name) > MAX_ORIGIN_CHARS:
        raise OriginError(f"an origin is at most {MAX_ORIGIN_CHARS} characters")
    return name


def default_origin(app: LedgerApp) -> str:
    """The origin derived from the store: ``HOST/DATABASE/SCHEMA`` on PostgreSQL,
    ``localhost/ledger/FILE`` on SQLite (FILE the database file's name without extension)."""
    env = app.env
    if app.dialect.is_sqlite:
        name = Path(str(env.get("SQLITE_DBNAME", "ledger"))).stem or "ledger"
        raw = f"localhost/ledger/{name}"
    else:
        host = str(env.get("POSTGRES_HOST") or "localhost")
        raw = f"{host}/{env.get('POSTGRES_DBNAME') or 'postgres'}/{app.dialect.schema}"
    return re.sub(r"[^A-Za-z0-9._/:-]", "-", raw)[:MAX_ORIGIN_CHARS]


class Heads:
    """The origin, notes and cosignatures tables of one ledger (see the module docstring)."""

    def __init__(self, app: LedgerApp, *, create: bool = True) -> None:
        self.app = app
        self.db: Connection = connect(app)
        d = self.db.dialect
        self.p = d.p
        self.origins, self.heads, self.cosigs = (
            d.qualified(t) for t in (ORIGIN_TABLE, HEADS_TABLE, COSIGNATURES_TABLE)
        )
        self.exists = self.db.table_exists(HEADS_TABLE)
        if create and not self.exists:
            MerkleLog(app).close()  # creates every table of the Merkle log
            self.exists = True

    def close(self) -> None:
        """Close the connection of our own."""
        self.db.close()

    def __enter__(self) -> Heads:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def stored_origin(self) -> str | None:
        """The origin set for the store, or ``None``."""
        if not self.exists:
            return None
        found = self.db.read(f"SELECT origin FROM {self.origins} WHERE id = 1")
        return str(found[0][0]) if found else None

    def set_origin(self, name: str) -> str:
        """Set the store's origin once; the same name again is accepted, another refused."""
        check_origin(name)
        with self.db.write() as cur:
            cur.execute(f"SELECT origin FROM {self.origins} WHERE id = 1")
            found = cur.fetchone()
            if found is None:
                cur.execute(f"INSERT INTO {self.origins} (id, origin) VALUES (1, {self.p})", (name,))
                return name
        if str(found[0]) != name:
            raise OriginError(
                f"the store's origin is {found[0]!r}; it is set once and cannot become {name!r}"
            )
        return name

    def store_note(self, size: int, note: str) -> StoredNote:
        """Append a signed note of a tree of ``size`` leaves (one per size: an existing note
        of that size is returned, not replaced)."""
        with self.db.write() as cur:
            cur.execute(f"SELECT note FROM {self.heads} WHERE size = {self.p}", (size,))
            found = cur.fetchone()
            if found is None:
                cur.execute(
                    f"INSERT INTO {self.heads} (size, note) VALUES ({self.p}, {self.p})", (size, note)
                )
        return self.note_at(size) or StoredNote(size, note)

    def note_at(self, size: int) -> StoredNote | None:
        """The stored note of a tree of ``size`` leaves, with its cosignatures."""
        return self._notes(f" WHERE size = {self.p}", (size,))

    def latest(self) -> StoredNote | None:
        """The stored note of the largest tree."""
        if not self.exists:
            return None
        found = self.db.read(f"SELECT MAX(size) FROM {self.heads}")
        if not found or found[0][0] is None:
            return None
        return self.note_at(int(found[0][0]))

    def listing(self) -> list[int]:
        """The sizes of every stored note, smallest first."""
        if not self.exists:
            return []
        return [int(r[0]) for r in self.db.read(f"SELECT size FROM {self.heads} ORDER BY size")]

    def _notes(self, where: str, params: tuple[object, ...]) -> StoredNote | None:
        if not self.exists:
            return None
        found = self.db.read(f"SELECT size, note FROM {self.heads}{where}", params)
        if not found:
            return None
        size, note = int(found[0][0]), str(found[0][1])
        lines = self.db.read(f"SELECT line FROM {self.cosigs} WHERE size = {self.p} ORDER BY line", (size,))
        return StoredNote(size, note, tuple(str(r[0]) for r in lines))

    def add_cosignatures(self, size: int, lines: list[str]) -> int:
        """Store cosignature lines beside the note of ``size`` (each line once); how many were
        new. Each must be a ``— NAME BASE64`` line; whether it verifies is for the reader."""
        for line in lines:
            try:
                parse_signature_line(line)
            except NoteError as exc:
                raise NoteError(f"not a cosignature line ({exc}): {line[:80]!r}") from None
        if self.note_at(size) is None:
            raise StoreError(f"no stored note of a tree of {size} leaves to cosign")
        added = 0
        with self.db.write() as cur:
            for line in dict.fromkeys(lines):
                cur.execute(
                    f"SELECT 1 FROM {self.cosigs} WHERE size = {self.p} AND line = {self.p}", (size, line)
                )
                if cur.fetchone() is None:
                    cur.execute(
                        f"INSERT INTO {self.cosigs} (size, line) VALUES ({self.p}, {self.p})", (size, line)
                    )
                    added += 1
        return added


# --- module-level helpers (one connection each) ---------------------------------------------


def origin(app: LedgerApp) -> str:
    """The store's origin: the one set, else the default derived from the store."""
    with Heads(app, create=False) as heads:
        return heads.stored_origin() or default_origin(app)


def stored_origin(app: LedgerApp) -> str | None:
    """The origin set for the store, or ``None`` before ``init --origin`` or the first seal."""
    with Heads(app, create=False) as heads:
        return heads.stored_origin()


def set_origin(app: LedgerApp, name: str) -> str:
    """Set the store's origin (once; :class:`OriginError` for another name)."""
    with Heads(app) as heads:
        return heads.set_origin(name)


def latest_note(app: LedgerApp) -> StoredNote | None:
    """The stored note of the largest tree, with its cosignatures, or ``None``."""
    with Heads(app, create=False) as heads:
        return heads.latest()


def note_at(app: LedgerApp, size: int) -> StoredNote | None:
    """The stored note of a tree of ``size`` leaves, or ``None``."""
    with Heads(app, create=False) as heads:
        return heads.note_at(size)


def add_cosignatures(app: LedgerApp, size: int, lines: list[str]) -> int:
    """Store cosignature lines beside the stored note of ``size``; how many were new."""
    with Heads(app) as heads:
        return heads.add_cosignatures(size, lines)
