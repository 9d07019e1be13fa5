"""RFC 9162 proofs: every leaf and every old size of trees up to 70 leaves, and tampered proofs.

The reference tree here is built bottom-up by a different method (pairing levels, carrying the
odd node up), so the recursive definitions of ``ledger.merkle.rfc6962`` are checked against a
second construction, not against themselves.
"""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.merkle.rfc6962 import (
    EMPTY_ROOT,
    leaf_hash,
    reference_consistency,
    reference_inclusion,
    reference_root,
    verify_consistency,
    verify_inclusion,
)


def _levels_root(leaves: list[bytes]) -> bytes:
    """Root by levels: pair neighbours left to right, an unpaired last node moves up as is."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    level = leaves
    while len(level) > 1:
        nxt = [
            hashlib.sha256(b"\x01" + level[i] + level[i + 1]).digest() for i in range(0, len(level) - 1, 2)
        ]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]


LEAVES = [leaf_hash(f"row {i}".encode()) for i in range(70)]


def test_leaf_and_empty_hashes_are_the_rfc_ones() -> None:
    assert leaf_hash(b"") == hashlib.sha256(b"\x00").digest()
    assert EMPTY_ROOT.hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


@pytest.mark.parametrize("n", range(0, 71))
def test_root_equals_a_level_by_level_construction(n: int) -> None:
    assert reference_root(LEAVES[:n]) == _levels_root(LEAVES[:n])


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 33, 64, 70])
def test_every_inclusion_proof_verifies_and_no_other_leaf_does(n: int) -> None:
    tree = LEAVES[:n]
    root = reference_root(tree)
    for i in range(n):
        proof = reference_inclusion(i, tree)
        assert verify_inclusion(tree[i], i, n, proof, root)
        assert not verify_inclusion(leaf_hash(b"forged"), i, n, proof, root)
        assert not verify_inclusion(tree[i], n, n, proof, root)
        if proof:
            assert not verify_inclusion(tree[i], i, n, proof[:-1], root)
            assert not verify_inclusion(tree[i], i, n, [*proof, proof[0]], root)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 33, 70])
def test_every_consistency_proof_verifies_and_a_changed_history_does_not(n: int) -> None:
    tree = LEAVES[:n]
    root = reference_root(tree)
    for m in range(0, n + 1):
        proof = reference_consistency(m, tree)
        old = reference_root(tree[:m])
        assert verify_consistency(m, n, old, root, proof)
        if 0 < m < n:
            rewritten = [*tree[: m - 1], leaf_hash(b"edited"), *tree[m:]]
            assert not verify_consistency(m, n, old, reference_root(rewritten), proof)
            assert not verify_consistency(m, n, reference_root(rewritten[:m]), root, proof)
            assert not verify_consistency(m, n, old, root, proof[:-1])


@given(st.integers(1, 300), st.data())
def test_inclusion_of_a_random_leaf_in_a_random_tree(n: int, data: st.DataObject) -> None:
    tree = [leaf_hash(i.to_bytes(4, "big")) for i in range(n)]
    i = data.draw(st.integers(0, n - 1))
    proof = reference_inclusion(i, tree)
    assert len(proof) <= max(1, (n - 1).bit_length())
    assert verify_inclusion(tree[i], i, n, proof, _levels_root(tree))
