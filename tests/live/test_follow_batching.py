"""The Merkle tree of a follower that judges in a process of its own: extended there, from the
rows that process read to judge them (the storing process hashes none), one leaf per stored row
in row order, on both stores; a tree that lagged before the follower started is caught up."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledger.live import judging
from ledger.live.follower import Follower
from ledger.live.judging import LiveJudge
from ledger.live.sources import Bounds, FileSource
from ledger.live.tree import TreeKeeper
from ledger.merkle.log import MerkleLog, TreeHead
from ledger.merkle.rfc6962 import reference_root
from ledger.merkle.tree import row_leaf
from ledger.services.ingest import Ingestor
from ledger.storage.store import LedgerApp, open_ledger
from tests.live.conftest import run_follower


def _every_row_leaf(app: LedgerApp) -> list[bytes]:
    return [
        row_leaf(oid, version, topic, state) for page in app.rows() for _, oid, version, topic, state in page
    ]


def _follow_judging_apart(
    app: LedgerApp, db_url: str, feed: Path
) -> tuple[Follower, int, list[bytes], TreeHead]:
    """Follow ``feed`` with judging in a process of its own; the follower, its exit code, every
    stored row's leaf and the tree's head afterwards."""
    follower, code = run_follower(app, FileSource(str(feed)), bounds=Bounds(150, 0.05), judge_process=db_url)
    with MerkleLog(app) as tree:
        return follower, code, _every_row_leaf(app), tree.head()


@pytest.mark.slow  # by default the test below follows with judging apart too, on both stores
def test_the_judging_process_extends_the_tree_over_every_row(
    db_url: str, tmp_path: Path, lines: list[bytes]
) -> None:
    feed = tmp_path / "feed.jsonl"
    feed.write_bytes(b"".join(line + b"\n" for line in lines))
    app = open_ledger(db_url)
    try:
        follower, code, leaves, head = _follow_judging_apart(app, db_url, feed)
    finally:
        app.close()
    assert code == 0 and follower.summary.stored == len(lines)
    assert follower.summary.batches >= len(lines) // 150
    assert head.size == len(leaves) > len(lines)
    assert head.root == reference_root(leaves)
    assert follower._tree_rows == [] and follower._tree._log is None  # none hashed in the storing process


def test_a_tree_that_lagged_is_caught_up_by_the_judging_process(
    db_url: str, tmp_path: Path, lines: list[bytes]
) -> None:
    """Rows stored without a tree, then more followed: the judging process's first rows do not
    follow the tree's last leaf (it has none), so the tree reads back what it lacks; the rows
    after it, in batches, it extends from the rows it read (the storing process hashes none)."""
    half = len(lines) // 2
    feed = tmp_path / "feed.jsonl"
    feed.write_bytes(b"".join(line + b"\n" for line in lines))
    app = open_ledger(db_url)
    try:
        Ingestor(app, extend_tree=False).ingest(enumerate(lines[:half], 1))
        with MerkleLog(app) as tree:
            assert tree.head().size == 0
        follower, code, leaves, head = _follow_judging_apart(app, db_url, feed)
    finally:
        app.close()
    assert code == 0 and follower.summary.duplicates == half
    assert follower.summary.stored == len(lines) - half
    assert follower.summary.batches >= (len(lines) - half) // 150
    assert head.size == len(leaves) > len(lines)
    assert head.root == reference_root(leaves)
    assert follower._tree_rows == [] and follower._tree._log is None  # none hashed in the storing process


def test_the_tree_keeper_appends_each_row_once_whatever_rows_it_is_given(
    db_url: str, lines: list[bytes]
) -> None:
    """Rows that follow the last leaf (hashed before the lock on SQLite), rows the tree holds in
    part or whole, rows after a gap, none: one leaf per row in row order each time."""
    errors: list[tuple[str, str]] = []
    app = open_ledger(db_url)
    keeper = TreeKeeper(app, lambda kind, message: errors.append((kind, message)))
    try:
        third = len(lines) // 3
        ingestor = Ingestor(app, tree_by_caller=True)
        ingestor.ingest(enumerate(lines[:third], 1))
        first = ingestor.take_saved_rows()
        keeper.extend(first[: len(first) // 2])
        keeper.extend(first)  # half of them in the tree already: the rest appended
        keeper.extend(first)  # again: nothing doubled
        with MerkleLog(app) as tree:
            assert tree.head().root == reference_root(_every_row_leaf(app))
        ingestor.ingest(enumerate(lines[third : 2 * third], third + 1))
        ingestor.take_saved_rows()  # never given: a gap before the next rows
        ingestor.ingest(enumerate(lines[2 * third :], 2 * third + 1))
        keeper.extend(ingestor.take_saved_rows())
        keeper.extend()
    finally:
        keeper.close()
        leaves = _every_row_leaf(app)
        with MerkleLog(app) as tree:
            head = tree.head()
        app.close()
    assert errors == [] and not keeper.failed and not keeper.behind
    assert head.size == len(leaves) and head.root == reference_root(leaves)


def test_a_judging_keeps_a_bounded_part_of_the_rows_it_reads_and_the_tree_reads_the_rest(
    db_url: str, lines: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(judging, "KEEP_ROWS", 10)
    app = open_ledger(db_url)
    read = app.rows
    page = 100  # pages of 100 rows (1,000 by default): the bound is passed long before the end
    monkeypatch.setattr(app, "rows", lambda page=page, **kw: read(page, **kw))
    keeper = TreeKeeper(app, lambda kind, message: None)
    try:
        Ingestor(app, extend_tree=False).ingest(enumerate(lines, 1))
        judge = LiveJudge(app)
        judge.keep_read = True
        judge.advance()
        kept = judge.take_read()
        leaves = _every_row_leaf(app)
        assert 10 <= len(kept) < 10 + page < len(leaves)  # a page at most past the bound, not the whole log
        keeper.extend(kept)
        with MerkleLog(app) as tree:
            assert tree.head().size in (len(kept), len(leaves))  # SQLite: these; PostgreSQL: all
        keeper.extend()
        with MerkleLog(app) as tree:
            head = tree.head()
    finally:
        keeper.close()
        app.close()
    assert head.size == len(leaves) and head.root == reference_root(leaves)
