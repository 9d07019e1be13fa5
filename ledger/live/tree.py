"""The follower's Merkle tree (``ledger.merkle.log``), extended from rows already in hand.

A follower does not read back the rows it appends leaves for: they are the rows its saves
returned (:meth:`~ledger.services.ingest.Ingestor.take_saved_rows`) or, when judging runs in a
process of its own (:mod:`ledger.live.judge_process`), the rows that process has just read to
judge them; it extends the tree there, after answering, on the other core, so the storing
process does not hash them. :class:`~ledger.merkle.log.MerkleLog` checks that the rows given are
exactly those after the tree's last leaf and reads what they are not (after a restart, a seal
that caught the tree up, a failed extension), so a tree extended late, or by another process,
still gets one leaf per row in row order.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from eventsourcing.persistence import PersistenceError

from ledger.domain.errors import StoreError
from ledger.merkle.log import MerkleLog
from ledger.storage.sql import SQLiteConnection
from ledger.storage.store import LedgerApp, RawRow

ErrorSink = Callable[[str, str], None]
"""Told of an error: its kind (``database``: waited out, tried again; ``tree``: given up) and
its first line."""


def store_errors() -> tuple[type[Exception], ...]:
    """What an unreachable or locked database raises through the store or beside it."""
    import psycopg

    return (
        PersistenceError,
        StoreError,
        sqlite3.OperationalError,
        psycopg.OperationalError,
        psycopg.InterfaceError,
        OSError,
    )


def first_line(exc: BaseException) -> str:
    """An exception's message, its first line (or its class's name)."""
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


class TreeKeeper:
    """Extends one store's Merkle tree from rows in hand, on a connection of its own.

    ``chunk``: at most this many leaves per transaction (``None``: all the rows given in one).
    On SQLite a transaction holds the file's one write lock while it hashes its rows: from
    another process than the storing one, small transactions keep the storing's saves from
    waiting long for the lock."""

    def __init__(self, app: LedgerApp, on_error: ErrorSink, *, chunk: int | None = None) -> None:
        self.app = app
        self.on_error = on_error
        self.chunk = chunk
        self.failed = False
        """An extension failed for a reason other than the database being away (e.g. no
        grant): said once, not tried again (``ledger seal`` catches the tree up)."""
        self.behind = False
        """An extension failed with the database away: the next call reads what it lacks."""
        self._log: MerkleLog | None = None

    def extend(self, known: Sequence[RawRow] = ()) -> None:
        """Append a leaf for each row stored after the tree's last leaf; ``known``: those rows
        with their ids, in order (the tree reads the rows it lacks)."""
        if self.failed:
            return
        try:
            if self._log is None:
                self._log = MerkleLog(self.app)
                if isinstance(self._log.db, SQLiteConnection):
                    # The tree is derived from the rows: its last transactions lost with the
                    # power are appended again from the rows by the next extension or seal. No
                    # fsync of its own, then, while it holds the one write lock (WAL: still
                    # never a corrupt file; the saves' commits sync every frame before them).
                    self._log.db.conn.execute("PRAGMA synchronous = NORMAL")
            step = self.chunk or len(known)
            if not known:
                self._log.extend()
            for start in range(0, len(known), step):
                self._log.extend(known[start : start + step])
            self.behind = False
        except store_errors() as exc:
            self.behind = True
            self.on_error("database", first_line(exc))
        except Exception as exc:  # a database's refusal, whichever the driver
            self.failed = True
            self.on_error("tree", first_line(exc))

    def close(self) -> None:
        """Close the tree's connection."""
        if self._log is not None:
            self._log.close()
            self._log = None


__all__ = ["ErrorSink", "TreeKeeper", "first_line", "store_errors"]
