"""The follower's Merkle tree (``ledger.merkle.log``), extended from rows already in hand.

A follower does not read back the rows it appends leaves for: they are the rows its saves
returned (:meth:`~ledger.services.ingest.Ingestor.take_saved_rows`) or, when judging runs in a
process of its own (:mod:`ledger.live.judge_process`), the rows that process has just read to
judge them; it extends the tree there, after answering, on the other core, so the storing
process does not hash them. :class:`~ledger.merkle.log.MerkleLog` checks that the rows given are
exactly those after the tree's last leaf and reads what they are not (after a restart, a seal
that caught the tree up, a failed extension), so a tree extended late, or by another process,
still gets one leaf per row in row order.

On SQLite the store has one write lock, which :meth:`MerkleLog.extend` holds while it hashes
the rows: taken from another process than the storing one, it would hold the saves up for as
long. There :class:`TreeKeeper` takes the two steps of an extension apart: it hashes the rows
that follow the tree's last leaf first (:func:`~ledger.merkle.tree.tree_rows`, from the tree's
frontier read outside any transaction, rows the tree holds already left out), then takes the
lock only to insert the finished tree rows, :data:`INSERT_CHUNK` at a time
(:meth:`MerkleLog.insert`, which checks, in that transaction, that they follow the tree's last
leaf: what was read outside it is not trusted); when they do not (the tree moved meanwhile, a
seal caught it up, or rows were never given), :meth:`MerkleLog.extend` takes over.
"""

from __future__ import annotations

import bisect
import sqlite3
from collections.abc import Callable, Sequence

from eventsourcing.persistence import PersistenceError

from ledger.domain.errors import StoreError, first_line
from ledger.merkle.log import MerkleLog
from ledger.merkle.tree import tree_rows
from ledger.storage.sql import SQLiteConnection
from ledger.storage.store import LedgerApp, RawRow

INSERT_CHUNK = 1000
"""Tree rows inserted per transaction on SQLite (each holds the store's write lock)."""

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


class TreeKeeper:
    """Extends one store's Merkle tree from rows in hand, on a connection of its own.

    On SQLite the rows given are hashed before the write lock is taken (module docstring)."""

    def __init__(self, app: LedgerApp, on_error: ErrorSink) -> None:
        self.app = app
        self.on_error = on_error
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
            if not (known and self._log.dialect.is_sqlite and _append_hashed(self._log, known)):
                self._log.extend(known)
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


def _append_hashed(log: MerkleLog, known: Sequence[RawRow]) -> bool:
    """SQLite: append ``known`` (ids increasing) to the tree, hashed outside the write lock,
    once those it holds already are left out; False (nothing or a part appended) if the rest
    do not follow its last leaf when inserted: :meth:`MerkleLog.extend` then goes on from the
    tree's end, reading the rows it lacks."""
    size, after = log.end()
    if after is not None and known[0][0] <= after:  # the tree has some of them (a restart, a seal)
        known = known[bisect.bisect_right(known, after, key=lambda row: row[0]) :]
        if not known:
            return True
    rows = tree_rows(log.frontier(size), known)
    for start in range(0, len(rows), INSERT_CHUNK):
        with log.transaction() as cur:
            if not log.insert(cur, rows[start : start + INSERT_CHUNK]):
                return False
    return True


__all__ = ["ErrorSink", "TreeKeeper", "store_errors"]
