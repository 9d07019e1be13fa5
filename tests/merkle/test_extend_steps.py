"""The two steps of extending the tree, taken apart: hashing (``tree_rows``, no store) and
inserting (``MerkleLog.insert``, which takes rows only when they follow the tree's last leaf as
it is in the inserting transaction), and the live tree keeper that takes them apart on SQLite
(hashing outside the write lock; ``MerkleLog.extend`` when the tree moved meanwhile)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from ledger.live import tree as live_tree
from ledger.live.tree import TreeKeeper
from ledger.merkle.log import MerkleLog
from ledger.merkle.rfc6962 import reference_root
from ledger.merkle.tree import Frontier, TreeRow, row_leaf, tree_rows
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.sql import Cursor, SQLiteConnection
from ledger.storage.store import LedgerApp, RawRow, open_ledger


def _store_rows(app: LedgerApp, path: Path) -> list[RawRow]:
    """Ingest a feed without the tree; every stored row."""
    with open(path, encoding="utf-8") as stream:
        report = Ingestor(app, extend_tree=False).ingest(numbered_lines(stream))
    assert report.rejected == []
    return [row for page in app.rows() for row in page]


def _leaves(rows: Sequence[RawRow]) -> list[bytes]:
    return [row_leaf(oid, version, topic, state) for _, oid, version, topic, state in rows]


def test_tree_rows_are_the_leaves_and_nodes_the_frontier_gives(app: LedgerApp, examples: Path) -> None:
    rows = _store_rows(app, examples / "mj.jsonl")
    reference = Frontier()
    leaves = _leaves(rows)
    expected = [
        (i, row[0], reference.append(leaf)) for i, (row, leaf) in enumerate(zip(rows, leaves, strict=True))
    ]
    frontier = Frontier()
    half = len(rows) // 2 + 1  # the second call goes on from a frontier of an odd size
    got = tree_rows(frontier, rows[:half]) + tree_rows(frontier, rows[half:])
    assert got == expected
    assert frontier.size == len(rows) and frontier.root() == reference_root(_leaves(rows))


def _insert(log: MerkleLog, rows: Sequence[TreeRow]) -> bool:
    with log.transaction() as cur:
        return log.insert(cur, rows)


def test_insert_takes_only_rows_that_follow_the_trees_last_leaf(app: LedgerApp, examples: Path) -> None:
    rows = _store_rows(app, examples / "mj.jsonl")
    with MerkleLog(app) as log:
        assert not _insert(log, tree_rows(Frontier(), rows[1:10]))  # the first row left out
        assert _insert(log, tree_rows(Frontier(), rows[:10]))
        assert not _insert(log, tree_rows(Frontier(), rows[:10]))  # held already
        assert not _insert(log, tree_rows(log.frontier(10), rows[11:20]))  # a row left out
        assert not _insert(log, tree_rows(log.frontier(10), rows[10:20])[1:])  # not at the end
        assert not _insert(log, tree_rows(log.frontier(9), rows[10:20]))  # from another frontier
        stale = tree_rows(log.frontier(10), rows[10:20])
        assert log.size() == 10  # nothing refused was inserted
        log.extend()  # the tree moves (a seal catches it up) after the rows were hashed
        assert not _insert(log, stale)
        assert log.size() == len(rows) and log.head().root == reference_root(_leaves(rows))
        assert [log.row_id(i) for i in range(len(rows))] == [row[0] for row in rows]


def _sqlite_app(tmp_path: Path) -> LedgerApp:
    return open_ledger(f"sqlite:///{tmp_path / 'ledger.db'}")


def test_the_keeper_hashes_outside_sqlites_write_lock(
    tmp_path: Path, examples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = _sqlite_app(tmp_path)
    keeper = TreeKeeper(app, lambda kind, message: pytest.fail(f"{kind}: {message}"))
    locked_while_hashing: list[bool] = []

    def watched(frontier: Frontier, rows: Sequence[RawRow]) -> list[TreeRow]:
        assert keeper._log is not None and isinstance(keeper._log.db, SQLiteConnection)
        locked_while_hashing.append(keeper._log.db.conn.in_transaction)
        return tree_rows(frontier, rows)

    monkeypatch.setattr(live_tree, "tree_rows", watched)
    monkeypatch.setattr(live_tree, "INSERT_CHUNK", 40)
    try:
        rows = _store_rows(app, examples / "mj.jsonl")
        keeper.extend(rows)
        with MerkleLog(app) as log:
            head = log.head()
    finally:
        keeper.close()
        app.close()
    assert locked_while_hashing == [False]
    assert head.size == len(rows) > 40 and head.root == reference_root(_leaves(rows))


@pytest.mark.parametrize("moved_before_chunk", [1, 3])
def test_the_keeper_goes_on_from_the_trees_end_when_it_moved_while_hashed_rows_waited(
    tmp_path: Path, examples: Path, monkeypatch: pytest.MonkeyPatch, moved_before_chunk: int
) -> None:
    """Another extender (a seal) catches the tree up before the keeper's first or third chunk
    of hashed rows is inserted: the chunk is refused, nothing is doubled, and the keeper goes
    on through ``MerkleLog.extend``; later rows are appended after the tree's new end."""
    app = _sqlite_app(tmp_path)
    errors: list[tuple[str, str]] = []
    keeper = TreeKeeper(app, lambda kind, message: errors.append((kind, message)))
    monkeypatch.setattr(live_tree, "INSERT_CHUNK", 40)
    try:
        rows = _store_rows(app, examples / "mj.jsonl")
        keeper.extend(rows[:5])
        log = keeper._log
        assert log is not None
        real = log.transaction
        entered = 0

        @contextmanager
        def seal_first(self: MerkleLog) -> Iterator[Cursor]:
            nonlocal entered
            entered += 1
            if entered == moved_before_chunk:
                with MerkleLog(app) as other:
                    other.extend()
            with real() as cur:
                yield cur

        monkeypatch.setattr(log, "transaction", seal_first.__get__(log))
        keeper.extend(rows[5:])
        more = _store_rows(app, examples / "rl.jsonl")[len(rows) :]
        keeper.extend(more)
        every = rows + more
        with MerkleLog(app) as tree:
            head = tree.head()
            ids = [tree.row_id(i) for i in range(head.size)]
    finally:
        keeper.close()
        app.close()
    assert entered >= moved_before_chunk
    assert errors == [] and not keeper.failed and not keeper.behind
    assert ids == [row[0] for row in every]
    assert head.size == len(every) and head.root == reference_root(_leaves(every))
