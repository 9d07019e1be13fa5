"""The Merkle log over a real store: built from the rows, extended, proofs from stored hashes.

Roots and proofs are checked against ``ledger.merkle.rfc6962``'s reference functions, which
compute from every leaf (recomputed here from the raw rows, not read from the tree), and the
proof reads are counted: fewer than ``2·log2 n`` stored hashes per proof, at 10^5 leaves too.
"""

from __future__ import annotations

import hashlib
import math
import sqlite3
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.merkle.log import MerkleLog, TreeError, extend
from ledger.merkle.rfc6962 import (
    leaf_hash,
    reference_consistency,
    reference_inclusion,
    reference_root,
    verify_consistency,
    verify_inclusion,
)
from ledger.merkle.tree import (
    Frontier,
    consistency_ranges,
    inclusion_ranges,
    leaf_data,
    nodes_for,
    perfect_cover,
    range_roots,
)
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import LedgerApp, open_ledger


def _ingest(app: LedgerApp, path: Path, batch: int = 40, *, tree: bool = True) -> None:
    """Ingest a feed; ``tree=False`` stores the rows as a version without the tree did."""
    ingestor = Ingestor(app, batch_events=batch, extend_tree=tree)
    with open(path, encoding="utf-8") as stream:
        report = ingestor.ingest(numbered_lines(stream))
    assert report.rejected == [] and report.tree_error is None
    if tree:
        assert report.tree_size == len(_leaves_from_rows(app))


def _leaves_from_rows(app: LedgerApp) -> list[bytes]:
    """Every row's leaf, written out here from the leaf layout the docs give."""
    leaves = []
    for page in app.rows():
        for _, oid, version, topic, state in page:
            name = topic.encode()
            data = bytes.fromhex(oid) + struct.pack(">QH", version, len(name)) + name + bytes(state)
            leaves.append(hashlib.sha256(b"\x00" + data).digest())
    return leaves


def test_the_tree_matches_the_reference_over_the_rows(app: LedgerApp, examples: Path) -> None:
    _ingest(app, examples / "rl.jsonl")
    first = len(_leaves_from_rows(app))
    with MerkleLog(app) as log:
        head = log.extend()
        leaves = _leaves_from_rows(app)
        assert head.size == len(leaves) == first
        assert head.root == reference_root(leaves) == log.head().root
        for index in (0, 1, len(leaves) // 2, len(leaves) - 1):
            assert log.leaf(index) == leaves[index]
            for size in (index + 1, len(leaves)):
                proof = log.inclusion_proof(index, size)
                assert proof == reference_inclusion(index, leaves[:size])
                assert verify_inclusion(leaves[index], index, size, proof, reference_root(leaves[:size]))
        # More rows: extend reads only them, and every consistency proof matches.
        _ingest(app, examples / "sp9.jsonl")
        head2 = log.extend()
        leaves = _leaves_from_rows(app)
        assert head2 == log.head() and head2.size == len(leaves) > first
        assert head2.root == reference_root(leaves)
        for old in (0, 1, 7, first, head2.size - 1, head2.size):
            proof = log.consistency_proof(old, head2.size)
            assert proof == reference_consistency(old, leaves)
            assert verify_consistency(old, head2.size, reference_root(leaves[:old]), head2.root, proof)


def test_extend_appends_once_and_maps_rows(app: LedgerApp, examples: Path) -> None:
    _ingest(app, examples / "fpc.jsonl")
    with MerkleLog(app) as log:
        head = log.extend()
        assert log.extend() == head  # nothing new: nothing appended
        ids = [row[0] for page in app.rows() for row in page]
        assert [log.row_id(i) for i in range(head.size)] == ids
        assert [log.index_of(i) for i in ids] == list(range(len(ids)))
        assert log.index_of(10**12) is None and log.index_of(0) is None


def test_a_leaf_binds_the_rows_identity() -> None:
    state = b'{"chain":"x","fact":{}}'
    base = leaf_hash(leaf_data(b"\x01" * 16, 3, "RL/bet_placed", state))
    assert base != leaf_hash(leaf_data(b"\x02" * 16, 3, "RL/bet_placed", state))  # moved
    assert base != leaf_hash(leaf_data(b"\x01" * 16, 4, "RL/bet_placed", state))  # renumbered
    assert base != leaf_hash(leaf_data(b"\x01" * 16, 3, "RL/spin_result", state))  # relabelled
    # The topic is length-prefixed: bytes cannot move between topic and state.
    assert leaf_data(b"\x01" * 16, 3, "ab", b"c") != leaf_data(b"\x01" * 16, 3, "a", b"bc")
    with pytest.raises(ValueError):
        leaf_data(b"\x01" * 15, 3, "t", b"")


def test_proofs_beyond_the_tree_are_refused(app: LedgerApp, examples: Path) -> None:
    _ingest(app, examples / "sp9.jsonl")
    with MerkleLog(app) as log:
        size = log.extend().size
        with pytest.raises(TreeError, match="not in a tree"):
            log.inclusion_proof(size, size)
        with pytest.raises(TreeError, match=f"has {size} leaves"):
            log.consistency_proof(1, size + 1)
        with pytest.raises(TreeError, match="not within"):
            log.consistency_proof(size, size - 1)


def test_the_tree_table_is_append_only(app: LedgerApp, examples: Path, raw: object) -> None:
    _ingest(app, examples / "sp9.jsonl")
    extend(app)
    url = raw.url
    table = "ledger_merkle_tree"
    for statement in (
        f"UPDATE {{s}}{table} SET nodes = nodes WHERE idx = 0",
        f"DELETE FROM {{s}}{table} WHERE idx = 0",
    ):
        with pytest.raises(Exception, match="append-only"):
            _run(url, statement)


def _run(url: str, template: str) -> None:
    if url.startswith("sqlite"):
        with sqlite3.connect(url[len("sqlite:///") :]) as conn:
            conn.execute(template.format(s=""))
        return
    from urllib.parse import parse_qs, urlsplit

    import psycopg

    schema = parse_qs(urlsplit(url).query)["schema"][0]
    with psycopg.connect(url.split("?")[0], autocommit=True) as conn:
        conn.execute(template.format(s=f'"{schema}".'))  # type: ignore[arg-type]


def test_a_tree_that_lags_catches_up_without_rehashing(app: LedgerApp, examples: Path) -> None:
    """Rows stored with no tree (an older version): extend reads only the new rows."""
    _ingest(app, examples / "mj.jsonl", tree=False)
    with MerkleLog(app) as log:
        assert log.size() == 0
        first = log.extend()
        assert first.size == len(_leaves_from_rows(app))
        _ingest(app, examples / "rl.jsonl", tree=False)
        assert log.size() == first.size
        read: list[int | None] = []
        real_rows = app.rows

        def counting_rows(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
            read.append(kwargs.get("after"))  # type: ignore[arg-type]
            return real_rows(*args, **kwargs)  # type: ignore[arg-type]

        app.rows = counting_rows  # type: ignore[method-assign]
        try:
            head = log.extend()
        finally:
            del app.rows
        assert read and read[0] == log.row_id(first.size - 1)
        assert head.root == reference_root(_leaves_from_rows(app))


# --- pure planning, by property ---------------------------------------------------------------


def _tree(n: int) -> tuple[list[bytes], dict[tuple[int, int], bytes]]:
    leaves = [leaf_hash(i.to_bytes(4, "big")) for i in range(n)]
    frontier, nodes = Frontier(), {}
    for i, leaf in enumerate(leaves):
        completed = frontier.append(leaf)
        for level in range(len(completed) // 32):
            nodes[(level, ((i + 1) >> level) - 1)] = completed[level * 32 : (level + 1) * 32]
    return leaves, nodes


@settings(max_examples=min(60, settings.default.max_examples), deadline=None)  # dev profile: fewer
@given(st.integers(1, 300), st.data())
def test_proofs_from_perfect_nodes_match_the_reference(n: int, data: st.DataObject) -> None:
    leaves, nodes = _tree(n)
    index = data.draw(st.integers(0, n - 1))
    old = data.draw(st.integers(0, n))
    ranges = inclusion_ranges(index, n)
    assert range_roots(ranges, nodes) == reference_inclusion(index, leaves)
    assert range_roots(consistency_ranges(old, n), nodes) == reference_consistency(old, leaves)
    cover = perfect_cover(0, n)
    assert Frontier(n, [nodes[c] for c in cover]).root() == reference_root(leaves)
    bound = 2 * max(1, math.ceil(math.log2(n)))
    assert len(nodes_for(ranges)) <= bound
    assert len(nodes_for(consistency_ranges(old, n))) <= bound


@pytest.mark.parametrize("n", [10**5, 10**8, 2**40 + 12345])
def test_proof_plans_stay_logarithmic(n: int) -> None:
    bound = 2 * math.ceil(math.log2(n))
    for index in (0, 1, n // 3, n - 2, n - 1):
        assert len(nodes_for(inclusion_ranges(index, n))) <= bound
        assert len(nodes_for(consistency_ranges(index + 1, n))) <= bound


# --- a tree of 10^5 leaves, stored once ---------------------------------------------------------


@pytest.fixture(scope="module")
def big_tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, bytes, list[bytes]]:
    """A SQLite store whose tree table holds 10^5 leaves (hashes of their indexes), written
    straight into the table: proof generation reads only the tree."""
    n = 100_000
    url = f"sqlite:///{tmp_path_factory.mktemp('big') / 'ledger.db'}"
    app = open_ledger(url)
    with MerkleLog(app) as log:
        frontier, values, leaves = Frontier(), [], []
        for i in range(n):
            leaf = leaf_hash(i.to_bytes(4, "big"))
            leaves.append(leaf)
            values.append((i, i + 1, frontier.append(leaf)))
        with log.db.write() as cur:
            cur.executemany("INSERT INTO ledger_merkle_tree (idx, row_id, nodes) VALUES (?, ?, ?)", values)
        root = frontier.root()
    app.close()
    return url, root, leaves


def test_proofs_in_a_big_tree_read_log_n_hashes(big_tree: tuple[str, bytes, list[bytes]]) -> None:
    url, root, leaves = big_tree
    n = len(leaves)
    app = open_ledger(url)
    try:
        with MerkleLog(app) as log:
            assert log.head().root == root
            bound = 2 * math.ceil(math.log2(n))
            for index in (0, 4096, 65_535, 77_777, n - 1):
                before = log.nodes_read
                proof = log.inclusion_proof(index, n)
                assert log.nodes_read - before <= bound
                assert verify_inclusion(leaves[index], index, n, proof, root)
            old_root = log.head(54_321).root
            before = log.nodes_read
            proof = log.consistency_proof(54_321, n)
            assert log.nodes_read - before <= bound
            assert verify_consistency(54_321, n, old_root, root, proof)
    finally:
        app.close()


def test_a_tree_that_cannot_be_written_does_not_stop_ingest(
    app: LedgerApp, examples: Path, raw: object
) -> None:
    """The tree refuses inserts (as for a role without the grant): every event is stored all
    the same, the report says why the tree lags, and extend catches up once it may write."""
    url = raw.url
    extend(app)  # the table exists
    if url.startswith("sqlite"):
        _run(
            url,
            "CREATE TRIGGER no_tree BEFORE INSERT ON ledger_merkle_tree BEGIN "
            "SELECT RAISE(ABORT, 'no grant on the tree'); END",
        )
    else:
        _run(
            url,
            "CREATE FUNCTION {s}no_tree() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "RAISE EXCEPTION 'no grant on the tree'; END $$",
        )
        _run(
            url,
            "CREATE TRIGGER no_tree BEFORE INSERT ON {s}ledger_merkle_tree FOR EACH ROW "
            "EXECUTE FUNCTION {s}no_tree()",
        )
    with open(examples / "rl.jsonl", encoding="utf-8") as stream:
        report = Ingestor(app, batch_events=40).ingest(numbered_lines(stream))
    assert report.rejected == [] and report.saves >= 2
    assert report.tree_error is not None and "no grant on the tree" in report.tree_error
    leaves = _leaves_from_rows(app)
    assert len(leaves) == report.stored + report.saves + report.rounds_opened
    _run(url, "DROP TRIGGER no_tree" + ("" if url.startswith("sqlite") else " ON {s}ledger_merkle_tree"))
    head = extend(app)
    assert head.size == len(leaves) and head.root == reference_root(leaves)


def test_two_writers_at_once_leave_one_tree_of_every_row(db_url: str, examples: Path) -> None:
    """Two ingests in parallel, each extending the tree after its saves: one leaf per row, in
    row order, whichever extended first."""
    import threading

    errors: list[BaseException] = []

    def writer(name: str) -> None:
        app = open_ledger(db_url)
        try:
            with open(examples / name, encoding="utf-8") as stream:
                report = Ingestor(app, batch_events=10).ingest(numbered_lines(stream))
            assert report.rejected == [] and report.tree_error is None, report.tree_error
        except BaseException as exc:  # reported in the main thread
            errors.append(exc)
        finally:
            app.close()

    open_ledger(db_url).close()
    threads = [threading.Thread(target=writer, args=(n,)) for n in ("rl.jsonl", "mj.jsonl")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    app = open_ledger(db_url)
    try:
        with MerkleLog(app) as log:
            leaves = _leaves_from_rows(app)
            assert log.size() == len(leaves)  # nothing left to extend: the writers did it
            assert log.head().root == reference_root(leaves)
            assert [log.row_id(i) for i in range(len(leaves))] == [
                row[0] for page in app.rows() for row in page
            ]
    finally:
        app.close()


def test_rows_just_stored_are_not_read_back(app: LedgerApp, examples: Path) -> None:
    """extend(known): the rows the caller stored are used when they are exactly those after the
    tree's last leaf; stale or partial ones are ignored and the rows read instead."""
    _ingest(app, examples / "mj.jsonl", tree=False)
    rows = [row for page in app.rows() for row in page]
    asked: list[object] = []
    real_rows = app.rows

    def counting_rows(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        asked.append(kwargs.get("after"))
        return real_rows(*args, **kwargs)  # type: ignore[arg-type]

    app.rows = counting_rows  # type: ignore[method-assign]
    try:
        with MerkleLog(app) as log:
            head = log.extend(rows[:-3] + rows[-2:])  # one row missing: not used
            assert asked == [None] and head.size == len(rows)
            assert head.root == reference_root(_leaves_from_rows(app))
        _ingest(app, examples / "sp9.jsonl", tree=False)
        new = [row for page in real_rows(after=rows[-1][0]) for row in page]
        asked.clear()
        with MerkleLog(app) as log:
            head = log.extend(new)
            assert asked == [new[-1][0]]  # only what follows them was asked for
            assert head.root == reference_root(_leaves_from_rows(app))
            asked.clear()
            assert log.extend(new) == head and asked == [head_row(log, head.size)]
    finally:
        del app.rows


def head_row(log: MerkleLog, size: int) -> int:
    return log.row_id(size - 1)
