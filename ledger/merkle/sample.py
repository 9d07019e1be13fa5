"""``verify --sample N``: a spot audit of the history before the newest checkpoint note.

``verify --since`` reads only the rows after a checkpoint, so a row replaced before it (and the
tree rebuilt to match) goes unseen there. The note the sealer signed, and witnesses cosigned,
fixes the tree's root: :func:`sample` draws ``N`` leaf indexes uniformly (without replacement,
from a seeded generator), re-hashes each drawn row from its stored bytes and checks its
inclusion proof against that root — ``N`` rows and ``N·⌈log2 n⌉`` hashes, whatever the size of
history.

If a share ``p`` of the ``n`` rows was rewritten, all ``N`` draws miss them with probability
``C(n − pn, N) / C(n, N) ≤ (1 − p)^N`` (:func:`unseen_chance`): 300 draws leave a 1 % rewrite
unseen with probability below 5 %, 460 below 1 %.

The seed is printed: the same seed draws the same rows (an auditor can repeat a run), and a
fresh random seed (the default) cannot be known to whoever prepared the store.
"""

from __future__ import annotations

import math
import random
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ledger.merkle.heads import Heads, StoredNote
from ledger.merkle.log import MerkleLog, TreeError
from ledger.merkle.proofs import stored_row
from ledger.merkle.rfc6962 import verify_inclusion
from ledger.merkle.sealing import open_checkpoint
from ledger.merkle.tree import row_leaf
from ledger.proof.note import NoteError, require_quorum
from ledger.storage.store import LedgerApp

SHARES = (0.001, 0.01, 0.1)
"""The shares of history a rewrite of which ``verify --sample`` states the unseen chance for."""


class SampleError(ValueError):
    """The sample cannot be drawn: no note (``code`` 2), or a note that does not open with the
    key (``code`` 3, integrity broken)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class SampleReport:
    """What a spot audit drew, checked and found."""

    origin: str
    size: int
    root: bytes
    seed: int
    drawn: list[int] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    hashes_read: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Whether every drawn row is the leaf the signed root commits to."""
        return not self.problems

    def chances(self) -> dict[str, float]:
        """The chance a rewrite of each share in :data:`SHARES` went unseen by this sample."""
        return {f"{share:g}": unseen_chance(self.size, len(self.drawn), share) for share in SHARES}

    def to_json(self) -> dict[str, Any]:
        """The ``sample`` object of ``verify --sample --json``."""
        return {
            "origin": self.origin,
            "size": self.size,
            "root": self.root.hex(),
            "seed": self.seed,
            "rows": len(self.drawn),
            "problems": self.problems,
            "hashes_read": self.hashes_read,
            "unseen_chance": self.chances(),
            "seconds": round(self.seconds, 3),
        }


def unseen_chance(size: int, draws: int, share: float) -> float:
    """The chance ``draws`` uniform draws without replacement from ``size`` rows all miss a
    rewritten share ``share`` of them (at least one row rewritten)."""
    bad = max(1, math.ceil(size * share)) if size else 0
    if draws >= size - bad + 1:
        return 0.0
    # C(size - bad, draws) / C(size, draws) = prod_{i < draws} (size - bad - i) / (size - i)
    log_p = sum(math.log((size - bad - i) / (size - i)) for i in range(draws))
    return math.exp(log_p)


def draw(size: int, count: int, seed: int) -> list[int]:
    """``count`` distinct leaf indexes of ``[0, size)``, uniformly, from ``seed`` (sorted)."""
    return sorted(random.Random(seed).sample(range(size), min(count, size)))


def fresh_seed() -> int:
    """A seed nobody could know in advance."""
    return secrets.randbits(63)


def sample(
    app: LedgerApp,
    count: int,
    public_key: Ed25519PublicKey,
    *,
    seed: int | None = None,
    note: StoredNote | None = None,
    witnesses: Sequence[str] = (),
    quorum: int = 0,
) -> SampleReport:
    """Check ``count`` drawn rows against the newest stored note (or ``note``), opened with the
    sealer's ``public_key``; with ``quorum``, the newest stored note that ``quorum`` of the
    ``witnesses`` (cosigner verifier keys) validly cosigned. :class:`SampleError` if there is
    no such note or it does not open."""
    started = time.perf_counter()
    if note is None:
        note = _newest_note(app, public_key, witnesses, quorum)
    try:
        opened, body = open_checkpoint(note.cosigned(), public_key)
        if quorum:
            require_quorum(opened, list(witnesses), quorum)
    except NoteError as exc:
        raise SampleError(
            f"the checkpoint note of {note.size} rows does not open with the keys: {exc}", 3
        ) from None
    seed = fresh_seed() if seed is None else seed
    report = SampleReport(body.origin, body.size, body.root, seed, draw(body.size, count, seed))
    with MerkleLog(app, create=False) as log:
        for index in report.drawn:
            problem = _check_leaf(app, log, index, body.size, body.root)
            if problem:
                report.problems.append(problem)
        report.hashes_read = log.nodes_read
    report.seconds = time.perf_counter() - started
    return report


def _newest_note(
    app: LedgerApp, public_key: Ed25519PublicKey, witnesses: Sequence[str], quorum: int
) -> StoredNote:
    """The newest stored note; with a quorum, the newest with enough valid cosignatures."""
    with Heads(app, create=False) as heads:
        if not quorum:
            found = heads.latest()
            if found is None:
                raise SampleError("the store holds no checkpoint note: run `ledger seal` first", 2)
            return found
        for size in reversed(heads.listing()):
            note = heads.note_at(size)
            if note is None:
                continue
            try:
                opened, _ = open_checkpoint(note.cosigned(), public_key)
                require_quorum(opened, list(witnesses), quorum)
            except NoteError:
                continue
            return note
    raise SampleError(
        f"the store holds no checkpoint note with {quorum} valid cosignatures from the given witness keys", 3
    )


def _check_leaf(app: LedgerApp, log: MerkleLog, index: int, size: int, root: bytes) -> str | None:
    try:
        row_id = log.row_id(index)
        proof = log.inclusion_proof(index, size)
    except TreeError as exc:
        return f"leaf {index}: the stored tree cannot prove it: {exc}"
    row = stored_row(app, row_id)
    if row is None:
        return f"leaf {index}: the log has no row {row_id} (removed after the checkpoint)"
    _, oid, version, topic, state = row
    if verify_inclusion(row_leaf(oid, version, topic, state), index, size, proof, root):
        return None
    return (
        f"row {row_id} (leaf {index}, {topic} version {version}) is not the row the "
        "signed root commits to: it was changed, moved or replaced after the checkpoint"
    )
