"""The shape of the log's Merkle tree: what a leaf commits to, which stored nodes a proof needs.

Pure functions, no store. The tree is RFC 9162's over the rows in the order they are stored
(notification id order); its interior hashes are kept as **perfect subtrees**: node ``(level,
k)`` is the root of leaves ``k·2^level … (k+1)·2^level − 1``. Such a node is complete the moment
its last leaf is appended, and never changes after, so the store keeps it with that leaf: the
leaf at index ``i`` carries the hashes of every node it completes — levels ``0 … t`` where ``t``
is the number of trailing zero bits of ``i + 1`` (:func:`completed_levels`). One stored row per
log row, on average two hashes, nothing ever rewritten.

Any subtree of an RFC proof (a sibling of an inclusion path, a node of a consistency proof) is
either a perfect subtree or the right edge of the tree, which splits into at most ``log2 n``
perfect subtrees (:func:`perfect_cover`); a proof has at most one such right-edge subtree. So a
proof in a tree of ``n`` leaves needs fewer than ``2·log2 n`` stored nodes
(:func:`inclusion_ranges`, :func:`consistency_ranges` and :func:`nodes_for`), read in one query.

**What a leaf commits to.** RFC 9162 hashes ``0x00 ‖ data``; our ``data`` is the row's identity
and its stored bytes (:func:`leaf_data`): ``aggregate id (16 bytes) ‖ version (8 bytes,
big-endian) ‖ topic length (2 bytes, big-endian) ‖ topic (UTF-8) ‖ stored bytes``. A row moved
to another aggregate or version, or relabelled with another topic, has another leaf, even when
its stored bytes are unchanged.

>>> from ledger.merkle.rfc6962 import leaf_hash, reference_root
>>> leaves = [leaf_hash(bytes([i])) for i in range(5)]
>>> frontier = Frontier()
>>> for leaf in leaves:
...     _ = frontier.append(leaf)
>>> frontier.root() == reference_root(leaves)
True
>>> perfect_cover(0, 5)
[(2, 0), (0, 4)]
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ledger.merkle.rfc6962 import EMPTY_ROOT, HASH_SIZE, leaf_hash, node_hash, split

Node = tuple[int, int]
"""A perfect subtree: ``(level, k)``, the root of leaves ``k·2^level … (k+1)·2^level − 1``."""
Range = tuple[int, int]
"""Leaves ``lo … hi − 1`` of the tree."""
TreeRow = tuple[int, int, bytes]
"""One stored row of the tree: a leaf's index, the notification id of the row it hashes, and
the hashes of the nodes it completes, level 0 first (:meth:`Frontier.append`)."""

MAX_TOPIC_BYTES = 0xFFFF


def leaf_data(aggregate: bytes, version: int, topic: str, state: bytes) -> bytes:
    """What a row's leaf hashes after the ``0x00``: its identity, then its stored bytes."""
    name = topic.encode()
    if len(aggregate) != 16 or not 0 <= version < 1 << 64 or len(name) > MAX_TOPIC_BYTES:
        raise ValueError(
            f"not a row identity: {len(aggregate)}-byte id, version {version}, {len(name)}-byte topic"
        )
    return aggregate + struct.pack(">QH", version, len(name)) + name + state


def row_leaf(aggregate_hex: str, version: int, topic: str, state: bytes) -> bytes:
    """The leaf hash of one stored row (aggregate id as 32 hex digits)."""
    return leaf_hash(leaf_data(bytes.fromhex(aggregate_hex), version, topic, bytes(state)))


def completed_levels(index: int) -> int:
    """How many nodes the leaf at ``index`` completes (itself included): 1 + trailing zero bits
    of ``index + 1``."""
    return ((index + 1) & -(index + 1)).bit_length()


def holder(node: Node) -> tuple[int, int]:
    """Where a node is stored: the index of the leaf that completed it, and its slot there."""
    level, k = node
    return ((k + 1) << level) - 1, level


def perfect_cover(lo: int, hi: int) -> list[Node]:
    """The perfect subtrees that make up leaves ``lo … hi − 1``, left to right, largest first
    (each as large as ``lo``'s alignment and the room left allow)."""
    if not 0 <= lo < hi:
        raise ValueError(f"not a range of leaves: {lo}..{hi}")
    cover = []
    while lo < hi:
        level = (lo & -lo).bit_length() - 1 if lo else (hi - lo).bit_length() - 1
        while (1 << level) > hi - lo:
            level -= 1
        cover.append((level, lo >> level))
        lo += 1 << level
    return cover


def fold(hashes: Sequence[bytes]) -> bytes:
    """The root of a range from its perfect cover's hashes (left to right): RFC 9162 splits a
    range at its largest power of two, which is the cover's first node, so fold from the right."""
    if not hashes:
        return EMPTY_ROOT
    root = hashes[-1]
    for h in reversed(hashes[:-1]):
        root = node_hash(h, root)
    return root


def inclusion_ranges(index: int, size: int) -> list[Range]:
    """The subtrees whose roots make PATH(index, D[size]) (RFC 9162 §2.1.3.1), in proof order."""
    if not 0 <= index < size:
        raise ValueError(f"leaf {index} is not in a tree of {size}")
    path: list[Range] = []
    lo, hi = 0, size
    while hi - lo > 1:
        k = split(hi - lo)
        if index < lo + k:
            path.append((lo + k, hi))
            hi = lo + k
        else:
            path.append((lo, lo + k))
            lo += k
    return path[::-1]


def consistency_ranges(old_size: int, new_size: int) -> list[Range]:
    """The subtrees whose roots make PROOF(old_size, D[new_size]) (RFC 9162 §2.1.4.1)."""
    if not 0 <= old_size <= new_size:
        raise ValueError(f"size {old_size} is not within a tree of {new_size}")
    if old_size in (0, new_size):
        return []
    proof: list[Range] = []
    lo, hi, m, complete = 0, new_size, old_size, True
    while True:
        if m == hi - lo:
            if not complete:
                proof.append((lo, hi))
            break
        k = split(hi - lo)
        if m <= k:
            proof.append((lo + k, hi))
            hi = lo + k
        else:
            proof.append((lo, lo + k))
            lo, m, complete = lo + k, m - k, False
    return proof[::-1]


def nodes_for(ranges: Iterable[Range]) -> set[Node]:
    """Every stored node the roots of ``ranges`` need."""
    return {node for lo, hi in ranges for node in perfect_cover(lo, hi)}


def range_roots(ranges: Sequence[Range], nodes: Mapping[Node, bytes]) -> list[bytes]:
    """The root of each range, from the perfect nodes read for it."""
    return [fold([nodes[n] for n in perfect_cover(lo, hi)]) for lo, hi in ranges]


class Frontier:
    """The compact range of a tree ``[0, size)``: the roots of its perfect cover, which is all
    that appending a leaf needs (Trillian Tessera and Certificate Transparency logs keep the
    same). :meth:`append` returns the hashes the new leaf completes, as the store keeps them."""

    def __init__(self, size: int = 0, hashes: Sequence[bytes] = ()) -> None:
        cover = perfect_cover(0, size) if size else []
        if len(cover) != len(hashes) or any(len(h) != HASH_SIZE for h in hashes):
            raise ValueError(f"a tree of {size} leaves has a frontier of {len(cover)} hashes")
        self.size = size
        self.levels = [level for level, _ in cover]
        self.hashes = list(hashes)

    def append(self, leaf: bytes) -> bytes:
        """Add one leaf hash; the hashes of the nodes it completes, level 0 first, joined."""
        completed = [leaf]
        level, h = 0, leaf
        while self.levels and self.levels[-1] == level:
            self.levels.pop()
            h = node_hash(self.hashes.pop(), h)
            level += 1
            completed.append(h)
        self.levels.append(level)
        self.hashes.append(h)
        self.size += 1
        return b"".join(completed)

    def root(self) -> bytes:
        """The tree's root hash (the empty tree's for size 0)."""
        return fold(self.hashes)


def tree_rows(frontier: Frontier, rows: Iterable[Sequence[Any]]) -> list[TreeRow]:
    """The tree rows of ``rows`` (stored rows ``(id, aggregate hex, version, topic, bytes)``)
    appended after ``frontier``, which is advanced past them: the hashing step of extending the
    tree, with no store and no lock (``MerkleLog.insert`` is the step that stores them).

    The loop is :func:`row_leaf` and :meth:`Frontier.append` written out with local names: it
    runs once per stored row, at ingest."""
    sha256, pack, fromhex = hashlib.sha256, struct.Struct(">QH").pack, bytes.fromhex
    levels, hashes = frontier.levels, frontier.hashes
    index = frontier.size
    out: list[TreeRow] = []
    for row_id, oid, version, topic, state in rows:
        name = topic.encode()
        h = sha256(b"\x00" + fromhex(oid) + pack(version, len(name)) + name + bytes(state)).digest()
        completed = h
        level = 0
        while levels and levels[-1] == level:
            levels.pop()
            h = sha256(b"\x01" + hashes.pop() + h).digest()
            completed += h
            level += 1
        levels.append(level)
        hashes.append(h)
        out.append((index, row_id, completed))
        index += 1
    frontier.size = index
    return out
