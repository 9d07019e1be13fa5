"""RFC 6962 / RFC 9162 Merkle tree hashing, proofs and their verification, as pure functions.

A leaf is ``SHA-256(0x00 ‖ bytes)``, an interior node ``SHA-256(0x01 ‖ left ‖ right)``; a tree
of ``n`` leaves splits at ``k``, the largest power of two smaller than ``n`` (RFC 9162 §2.1.1).
The ``reference_*`` functions compute from all the leaves, as the RFC defines them (for tests
and small trees); :func:`verify_inclusion` and :func:`verify_consistency` follow the RFC's
verification algorithms (§2.1.3.2 and §2.1.4.2) and need only the proof.

>>> a, b, c = (leaf_hash(x) for x in (b"a", b"b", b"c"))
>>> root = reference_root([a, b, c])
>>> verify_inclusion(c, 2, 3, reference_inclusion(2, [a, b, c]), root)
True
>>> verify_consistency(2, 3, reference_root([a, b]), root, reference_consistency(2, [a, b, c]))
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

HASH_SIZE = 32
EMPTY_ROOT = hashlib.sha256(b"").digest()
"""The root of the empty tree (RFC 9162 §2.1.1)."""


def leaf_hash(data: bytes) -> bytes:
    """The hash of one leaf: ``SHA-256(0x00 ‖ data)``."""
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """The hash of an interior node: ``SHA-256(0x01 ‖ left ‖ right)``."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def split(n: int) -> int:
    """The largest power of two smaller than ``n`` (``n`` ≥ 2)."""
    return 1 << ((n - 1).bit_length() - 1)


def reference_root(leaves: Sequence[bytes]) -> bytes:
    """MTH(D[n]) from the leaf hashes, as RFC 9162 §2.1.1 defines it."""
    n = len(leaves)
    if n == 0:
        return EMPTY_ROOT
    if n == 1:
        return leaves[0]
    k = split(n)
    return node_hash(reference_root(leaves[:k]), reference_root(leaves[k:]))


def reference_inclusion(index: int, leaves: Sequence[bytes]) -> list[bytes]:
    """PATH(m, D[n]) from the leaf hashes (RFC 9162 §2.1.3.1)."""
    n = len(leaves)
    if not 0 <= index < n:
        raise ValueError(f"leaf {index} is not in a tree of {n}")
    if n == 1:
        return []
    k = split(n)
    if index < k:
        return [*reference_inclusion(index, leaves[:k]), reference_root(leaves[k:])]
    return [*reference_inclusion(index - k, leaves[k:]), reference_root(leaves[:k])]


def reference_consistency(old_size: int, leaves: Sequence[bytes]) -> list[bytes]:
    """PROOF(m, D[n]) from the leaf hashes (RFC 9162 §2.1.4.1); empty when ``m`` is 0 or n."""
    if not 0 <= old_size <= len(leaves):
        raise ValueError(f"size {old_size} is not within a tree of {len(leaves)}")
    if old_size in (0, len(leaves)):
        return []
    return _subproof(old_size, leaves, True)


def _subproof(m: int, leaves: Sequence[bytes], complete: bool) -> list[bytes]:
    n = len(leaves)
    if m == n:
        return [] if complete else [reference_root(leaves)]
    k = split(n)
    if m <= k:
        return [*_subproof(m, leaves[:k], complete), reference_root(leaves[k:])]
    return [*_subproof(m - k, leaves[k:], False), reference_root(leaves[:k])]


def verify_inclusion(leaf: bytes, index: int, size: int, proof: Sequence[bytes], root: bytes) -> bool:
    """Whether ``proof`` shows the leaf hash ``leaf`` at ``index`` in the tree ``(size, root)``."""
    if not 0 <= index < size or any(len(p) != HASH_SIZE for p in proof):
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(
    old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> bool:
    """Whether ``proof`` shows the tree ``(new_size, new_root)`` extends ``(old_size, old_root)``.

    An empty tree is extended by any tree (with an empty proof); equal sizes need equal roots and
    an empty proof.
    """
    if not 0 <= old_size <= new_size or any(len(p) != HASH_SIZE for p in proof):
        return False
    if old_size == 0:
        return not proof
    if old_size == new_size:
        return not proof and old_root == new_root
    if not proof:
        return False
    path = list(proof)
    if old_size & (old_size - 1) == 0:  # an exact power of two: the old root is a node of the new
        path.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return fr == old_root and sr == new_root and sn == 0
