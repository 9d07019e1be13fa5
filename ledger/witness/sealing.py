"""``ledger seal --witness URL|DIR … --quorum K``: the checkpoint note ``seal`` just made, sent to
the witnesses, and their cosignatures stored beside it.

Each witness gets the note with a consistency proof from the size it says it cosigned last (a
first request from 0; the protocol's 409 names its size, and the proof is read from the store's
Merkle tree, ``MerkleLog.consistency_proof``, in O(log n) stored hashes). When fewer than K
witnesses cosign, nothing is stored (no cosigned claim) and :class:`QuorumError` names every
failure: ``seal`` exits 3. The note itself, signed by the operator only, stays stored as
``seal`` stored it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from ledger.merkle.heads import StoredNote, add_cosignatures, note_at
from ledger.merkle.log import MerkleLog
from ledger.storage.store import LedgerApp
from ledger.witness.client import (
    TIMEOUT_SECONDS,
    QuorumError,
    WitnessError,
    collect_cosignatures,
)


@dataclass(frozen=True)
class Witnessed:
    """What the witnesses did for one note: the cosignature lines stored, how many were new, and
    the note as now stored (with every cosignature kept beside it)."""

    quorum: int
    lines: tuple[str, ...]
    added: int
    note: StoredNote

    def names(self) -> list[str]:
        """The cosigners' names, as their lines give them."""
        return [line.split(" ")[1] for line in self.lines]

    def to_json(self) -> dict[str, object]:
        """``witnesses`` in ``seal --json``."""
        return {"quorum": self.quorum, "cosigners": self.names(), "new": self.added}


def check_options(targets: Sequence[str] | None, quorum: int | None) -> int | None:
    """The quorum ``seal --witness … --quorum K`` asks (default: every witness), ``None``
    without witnesses; :class:`QuorumError` when given wrongly."""
    if not targets:
        if quorum is not None:
            raise QuorumError("--quorum needs the witnesses: --witness URL|DIR (repeatable)")
        return None
    required = len(targets) if quorum is None else quorum
    if not 1 <= required <= len(targets):
        raise QuorumError(
            f"--quorum {required}: between 1 and the number of --witness given ({len(targets)})"
        )
    return required


def witness_note(
    app: LedgerApp,
    stored: StoredNote,
    targets: Sequence[str],
    quorum: int,
    *,
    timeout: float = TIMEOUT_SECONDS,
) -> Witnessed:
    """Collect ``quorum`` cosignatures of ``stored`` from ``targets`` and store them beside it;
    :class:`QuorumError` (nothing stored) when fewer cosign."""
    size = stored.body.size
    lock = threading.Lock()

    def proof_for(old: int) -> list[bytes]:
        if old > size:
            raise WitnessError(f"no consistency proof from {old} to {size} rows")
        with lock, MerkleLog(app, create=False) as log:  # one connection per call: any thread
            return log.consistency_proof(old, size)

    signatures = collect_cosignatures(list(targets), stored.note, {}, proof_for, quorum, timeout=timeout)
    lines = tuple(s.line() for s in signatures)
    if len(lines) < quorum:  # pragma: no cover - collect_cosignatures raises first
        raise QuorumError(f"{len(lines)} of {quorum} required cosignatures collected")
    added = add_cosignatures(app, size, list(lines))
    return Witnessed(quorum, lines, added, note_at(app, size) or stored)
