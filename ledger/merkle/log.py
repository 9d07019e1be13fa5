"""The Merkle log over a store's rows: extended as rows are stored, proofs from stored hashes.

:class:`MerkleLog` keeps the tree of ``ledger.merkle.tree`` in the ``ledger_merkle_tree`` table
(``ledger.merkle.storage``):

- :meth:`MerkleLog.extend` appends a leaf for every row stored after the tree's last leaf (by
  notification id), reading only those rows and the O(log n) hashes of the tree's frontier;
  history is never re-hashed. ``ledger ingest`` calls it after each save; ``ledger seal`` calls
  it first, so a tree that lags (rows stored by an older version, or by a role that may not
  write the tree) catches up. It takes two steps, which a caller may also take apart (the live
  follower hashes outside SQLite's write lock: ``ledger.live.tree``): hashing,
  :func:`~ledger.merkle.tree.tree_rows` (no store, no lock), and inserting,
  :meth:`MerkleLog.insert` (in the caller's :meth:`MerkleLog.transaction`, after checking that
  the rows follow the tree's last leaf as it is then).
- :meth:`MerkleLog.inclusion_proof` and :meth:`MerkleLog.consistency_proof` read fewer than
  ``2·log2 n`` stored hashes, in one query (:attr:`MerkleLog.nodes_read` counts them).

The stored hashes are the operator's word: a proof is worth something only once it is checked
against a root the operator *signed* (``ledger.merkle.heads``) or a witness cosigned, and
``ledger seal`` recomputes the leaves it signs from the rows before signing.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ledger.domain.errors import StoreError
from ledger.merkle.rfc6962 import EMPTY_ROOT, HASH_SIZE
from ledger.merkle.storage import TREE_TABLE, merkle_sql
from ledger.merkle.tree import (
    Frontier,
    Node,
    TreeRow,
    consistency_ranges,
    holder,
    inclusion_ranges,
    nodes_for,
    perfect_cover,
    range_roots,
    row_leaf,
    tree_rows,
)
from ledger.storage.sql import Connection, Cursor, TupleCursor, connect
from ledger.storage.store import MIN_ROW_ID, LedgerApp, RawRow

EXTEND_CHUNK = 5000
"""Leaves appended per transaction when catching up: progress is kept on a long catch-up."""
_READ_BATCH = 500
"""Stored nodes asked for per query (SQLite's parameter limit is far above)."""


class TreeError(StoreError):
    """The stored tree is damaged or does not hold what was asked (a size beyond it)."""


@dataclass(frozen=True)
class TreeHead:
    """A tree size and its root hash."""

    size: int
    root: bytes


class MerkleLog:
    """The Merkle tree of one ledger's rows (see the module docstring). Close it after use."""

    def __init__(self, app: LedgerApp, *, create: bool = True) -> None:
        self.app = app
        self.db: Connection = connect(app)
        self.dialect = self.db.dialect
        self.table = self.dialect.qualified(TREE_TABLE)
        self.p = self.dialect.p
        self.nodes_read = 0
        """Stored hashes read so far (tests and the bench count proof reads with it)."""
        self.exists = self.db.table_exists(TREE_TABLE)
        if create and not self.exists:
            self._create()

    def _create(self) -> None:
        self.db.create(merkle_sql(self.dialect))
        self.exists = True

    def close(self) -> None:
        """Close the connection of the tree's own."""
        self.db.close()

    def __enter__(self) -> MerkleLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- reading ---------------------------------------------------------------------------

    def size(self) -> int:
        """How many leaves the stored tree has."""
        return self.end()[0]

    def head(self, size: int | None = None) -> TreeHead:
        """The tree head at ``size`` (default: the whole stored tree), from its frontier."""
        size = self.size() if size is None else self._check_size(size)
        if size == 0:
            return TreeHead(0, EMPTY_ROOT)
        return TreeHead(size, self.frontier(size).root())

    def frontier(self, size: int, cur: Cursor | None = None) -> Frontier:
        """The compact range of the tree's first ``size`` leaves (O(log size) stored hashes)."""
        cover = perfect_cover(0, size) if size else []
        nodes = self._nodes(cover, cur)
        return Frontier(size, [nodes[n] for n in cover])

    def leaf(self, index: int) -> bytes:
        """The stored leaf hash at ``index``."""
        self._check_index(index, self.size())
        return self._nodes([(0, index)])[(0, index)]

    def row_id(self, index: int) -> int:
        """The notification id of the row the leaf at ``index`` hashes."""
        found = self.db.read(f"SELECT row_id FROM {self.table} WHERE idx = {self.p}", (index,))
        if not found:
            raise TreeError(f"the tree has no leaf {index}")
        return int(found[0][0])

    def index_of(self, row_id: int) -> int | None:
        """The leaf index of the row with notification id ``row_id``; ``None`` if not in the tree.

        Leaves are appended in row order, so their row ids increase with the index: a binary
        search of ``log2 n`` reads by primary key (no index on ``row_id`` to keep up at ingest).
        """
        lo, hi = 0, self.size() - 1
        while lo <= hi:
            mid = (lo + hi) // 2
            found = self.row_id(mid)
            if found == row_id:
                return mid
            if found < row_id:
                lo = mid + 1
            else:
                hi = mid - 1
        return None

    def inclusion_proof(self, index: int, size: int) -> list[bytes]:
        """PATH(index, D[size]) from stored hashes (RFC 9162 §2.1.3.1)."""
        self._check_index(index, self._check_size(size))
        ranges = inclusion_ranges(index, size)
        return range_roots(ranges, self._nodes(nodes_for(ranges)))

    def consistency_proof(self, old_size: int, new_size: int) -> list[bytes]:
        """PROOF(old_size, D[new_size]) from stored hashes (RFC 9162 §2.1.4.1)."""
        self._check_size(new_size)
        if not 0 <= old_size <= new_size:
            raise TreeError(f"size {old_size} is not within a tree of {new_size}")
        ranges = consistency_ranges(old_size, new_size)
        return range_roots(ranges, self._nodes(nodes_for(ranges)))

    def _check_size(self, size: int) -> int:
        have = self.size()
        if not 0 <= size <= have:
            raise TreeError(
                f"the stored tree has {have} leaves, not {size} (run `ledger seal` or ingest to extend it)"
            )
        return size

    @staticmethod
    def _check_index(index: int, size: int) -> None:
        if not 0 <= index < size:
            raise TreeError(f"leaf {index} is not in a tree of {size}")

    def _nodes(self, wanted: Iterable[Node], cur: Cursor | None = None) -> dict[Node, bytes]:
        """Stored perfect-subtree hashes, by node; :class:`TreeError` if one is missing."""
        by_row: dict[int, list[Node]] = {}
        for node in wanted:
            by_row.setdefault(holder(node)[0], []).append(node)
        rows = sorted(by_row)
        found: dict[Node, bytes] = {}
        for start in range(0, len(rows), _READ_BATCH):
            part = rows[start : start + _READ_BATCH]
            among, params = self.dialect.one_of("idx", part)
            for idx, blob in self._read(f"SELECT idx, nodes FROM {self.table} WHERE {among}", params, cur):
                data = bytes(blob)
                for node in by_row.get(int(idx), ()):
                    slot = holder(node)[1]
                    h = data[slot * HASH_SIZE : (slot + 1) * HASH_SIZE]
                    if len(h) != HASH_SIZE:
                        raise TreeError(f"the stored tree's row {idx} is damaged (no hash at level {slot})")
                    found[node] = h
        missing = [n for ns in by_row.values() for n in ns if n not in found]
        if missing:
            raise TreeError(f"the stored tree has no row {holder(missing[0])[0]}")
        self.nodes_read += len(found)
        return found

    def _read(self, sql: str, params: Sequence[Any], cur: Cursor | None) -> list[tuple[Any, ...]]:
        """One statement's rows: in ``cur``'s transaction if given, else on its own."""
        if cur is None:
            return self.db.read(sql, params)
        cur.execute(sql, params)
        return cur.fetchall()

    # --- extending -------------------------------------------------------------------------

    def extend(self, known: Sequence[RawRow] = ()) -> TreeHead:
        """Append a leaf for every row stored after the tree's last leaf; the new head.

        Reads only the new rows and the frontier; appends in transactions of
        :data:`EXTEND_CHUNK` leaves, each under a lock that one extender holds at a time
        (:meth:`transaction`). ``known``: rows the caller has just stored, with their ids
        (ingest on SQLite), used instead of reading them back when they are exactly the rows
        that follow the tree's last leaf (counted by primary key); otherwise, or for what
        follows them, the rows are read. Each chunk is hashed by
        :func:`~ledger.merkle.tree.tree_rows` and stored as :meth:`insert` stores rows, in one
        transaction that read the tree's end itself (the rows read follow it; ``known`` is
        checked as :meth:`insert` checks rows, before it is hashed).
        """
        while True:
            head, more = self._extend_chunk(known)
            known = ()
            if not more:
                return head

    def _extend_chunk(self, known: Sequence[RawRow]) -> tuple[TreeHead, bool]:
        with self.transaction() as cur:
            size, after = self.end(cur)
            frontier = self.frontier(size, cur)
            if known and self._follow(cur, after, [row[0] for row in known]):
                self._insert(cur, tree_rows(frontier, known))
                after = known[-1][0]
            added = 0
            for page in self._rows_after(after):
                if page:
                    self._insert(cur, tree_rows(frontier, page))
                    added += len(page)
            return TreeHead(frontier.size, frontier.root()), added == EXTEND_CHUNK

    @contextmanager
    def transaction(self) -> Iterator[Cursor]:
        """A write transaction holding the extenders' lock: SQLite's ``BEGIN IMMEDIATE`` is
        one already; on PostgreSQL a transaction-scoped advisory lock (no table privilege
        needed)."""
        with self.db.write() as cur:
            if not self.dialect.is_sqlite:
                cur.execute(
                    "SELECT pg_advisory_xact_lock(hashtext(%s))", (f"ledger-merkle:{self.dialect.schema}",)
                )
            yield cur

    def end(self, cur: Cursor | None = None) -> tuple[int, int | None]:
        """The tree's size and the notification id of the row its last leaf hashes (``None``
        when it has no leaf), from its last stored row; in ``cur``'s transaction if given."""
        if not self.exists:
            return 0, None
        found = self._read(f"SELECT idx, row_id FROM {self.table} ORDER BY idx DESC LIMIT 1", (), cur)
        return (0, None) if not found else (int(found[0][0]) + 1, int(found[0][1]))

    def insert(self, cur: Cursor, rows: Sequence[TreeRow]) -> bool:
        """The insert step: append ``rows`` (:func:`~ledger.merkle.tree.tree_rows`, hashed from
        the frontier read at the tree's size then) in the caller's :meth:`transaction`, if
        they follow the tree's last leaf as it is now: the first at the tree's size, and their
        row ids exactly the stored rows after its last leaf's, up to the last of them. False,
        nothing inserted, if not (the tree moved since, or rows are missing or held already):
        the caller then goes on with :meth:`extend`, which reads what the tree lacks."""
        if not rows:
            return True
        size, after = self.end(cur)
        if rows[0][0] != size or rows[-1][0] != size + len(rows) - 1:
            return False
        if not self._follow(cur, after, [row[1] for row in rows]):
            return False
        self._insert(cur, rows)
        return True

    def _follow(self, cur: Cursor, after: int | None, ids: Sequence[int]) -> bool:
        """Whether ``ids`` (increasing) are exactly those of the rows after row ``after`` up
        to the last of them: every id above ``after``, and as many rows in that id range,
        counted in ``cur``'s transaction."""
        if (after is not None and ids[0] <= after) or any(b <= a for a, b in itertools.pairwise(ids)):
            return False
        events, position = self.app.events_table, self.app.position_column
        above = f"{position} >= {self.p}" if after is None else f"{position} > {self.p}"
        cur.execute(
            f"SELECT COUNT(*) FROM {events} WHERE {above} AND {position} <= {self.p}",
            (MIN_ROW_ID if after is None else after, ids[-1]),
        )
        found = cur.fetchone()
        return found is not None and int(found[0]) == len(ids)

    def _rows_after(self, after: int | None) -> Iterable[Sequence[Any]]:
        taken = 0
        for page in self.app.rows(page=min(EXTEND_CHUNK, 1000), after=after):
            room = EXTEND_CHUNK - taken
            yield page[:room]
            taken += min(len(page), room)
            if taken >= EXTEND_CHUNK:
                return

    def _insert(self, cur: Cursor, values: Sequence[TreeRow]) -> None:
        """Insert tree rows. SQLite: one ``executemany``; PostgreSQL: one statement of three
        arrays (as ``ledger.codec.library`` writes events), not a statement per row."""
        if self.dialect.is_sqlite:
            cur.executemany(f"INSERT INTO {self.table} (idx, row_id, nodes) VALUES (?, ?, ?)", values)
            return
        idx, rows, nodes = zip(*values, strict=True)
        assert isinstance(cur, TupleCursor)
        # In binary: psycopg dumps a bytea array as text by escaping every byte in Python.
        cur.cur.execute(
            f"INSERT INTO {self.table} (idx, row_id, nodes) SELECT * FROM "
            "unnest(%s::bigint[], %s::bigint[], %s::bytea[])",
            (list(idx), list(rows), list(nodes)),
            binary=True,
        )

    # --- checking ---------------------------------------------------------------------------

    def recompute(self, frontier: Frontier, size: int) -> Frontier:
        """Extend a *trusted* frontier to ``size`` leaves by re-hashing the rows, checking that
        the stored tree holds exactly those rows and hashes; :class:`TreeError` where it does
        not. Reads the rows after ``frontier.size`` and their tree rows, once each."""
        self._check_size(size)
        after = self.row_id(frontier.size - 1) if frontier.size else None
        select = (
            f"SELECT idx, row_id, nodes FROM {self.table} WHERE idx >= {self.p} AND "
            f"idx < {self.p} ORDER BY idx"
        )
        for page in self.app.rows(page=1000, after=after):
            page = page[: size - frontier.size]
            stored = self.db.read(select, (frontier.size, frontier.size + len(page)))
            if len(stored) != len(page):
                raise TreeError(
                    f"the stored tree lacks leaves {frontier.size}-{frontier.size + len(page) - 1}"
                )
            for (row_id, oid, version, topic, state), (idx, tree_row, nodes) in zip(
                page, stored, strict=True
            ):
                completed = frontier.append(row_leaf(oid, version, topic, state))
                if int(tree_row) != int(row_id):
                    raise TreeError(
                        f"the stored tree's leaf {idx} hashes row {tree_row}, the "
                        f"log's row at that place is {row_id}"
                    )
                if bytes(nodes) != completed:
                    raise TreeError(
                        f"the stored tree's leaf {idx} (row {row_id}) does not "
                        "match the row's bytes: the row or the tree was changed"
                    )
            if frontier.size >= size:
                break
        if frontier.size != size:
            raise TreeError(f"the log holds {frontier.size} rows, the tree {size} leaves")
        return frontier


def extend(app: LedgerApp) -> TreeHead:
    """Extend the tree of ``app`` to every stored row; its new head."""
    with MerkleLog(app) as log:
        return log.extend()
