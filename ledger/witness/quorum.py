"""Auditors trust a quorum of witnesses, not the operator: the checks behind ``--witness-key
FILE`` (repeatable) and ``--quorum K`` of ``verify`` and ``check-bundle``.

A JSON checkpoint (``ledger seal``) is accepted under a quorum only with the checkpoint note of
the same seal (C2SP ``tlog-checkpoint``, ``ledger.merkle.sealing``): signed by the same operator
key under the log's origin, of the tree of exactly the checkpoint's events, naming the
checkpoint's chain link and head, and cosigned (``cosignature/v1``) by at least K of the given
witness keys. :class:`QuorumRefused` names the first thing that fails, in one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ledger.proof.note import (
    CheckpointBody,
    Note,
    NoteError,
    Verifier,
    open_note,
    parse_note,
    require_quorum,
    verifier_key,
)
from ledger.witness.keys import WitnessKeyError, load_witness_key

CHAIN_LINE = "ledger/chain"
"""The extension line of a checkpoint note naming the chain link it was sealed at."""


class QuorumRefused(Exception):
    """A checkpoint without a quorum of valid cosignatures (exit 3)."""


class QuorumUsage(ValueError):
    """``--witness-key`` / ``--quorum`` given wrongly (exit 2)."""


@dataclass(frozen=True)
class Quorum:
    """The witness keys an auditor trusts and how many of them must have cosigned."""

    witnesses: tuple[Verifier, ...]
    required: int

    def names(self) -> list[str]:
        """The witnesses' names."""
        return [w.name for w in self.witnesses]


def quorum_from_options(files: Sequence[str] | None, quorum: int | None) -> Quorum | None:
    """The quorum asked on the command line, or ``None`` without ``--witness-key``; ``--quorum``
    defaults to every key given."""
    if not files:
        if quorum is not None:
            raise QuorumUsage("--quorum needs the witnesses' keys: --witness-key FILE (repeatable)")
        return None
    try:
        keys = [load_witness_key(path) for path in files]
    except WitnessKeyError as exc:
        raise QuorumUsage(str(exc)) from None
    distinct = {k.vkey(): k for k in keys}
    required = len(distinct) if quorum is None else quorum
    if not 1 <= required <= len(distinct):
        raise QuorumUsage(
            f"--quorum {required}: between 1 and the number of distinct witness keys given ({len(distinct)})"
        )
    return Quorum(tuple(distinct.values()), required)


def require_witnessed(
    note: str,
    operator: Ed25519PublicKey,
    quorum: Quorum,
    *,
    events: int | None = None,
    links: int | None = None,
    head: str | None = None,
) -> tuple[Note, CheckpointBody, list[str]]:
    """Check a checkpoint note (with its cosignature lines) against the operator's key, the JSON
    checkpoint it must match (its events, chain link and head, when given), and the quorum;
    the note, its body and the cosigners' names, else :class:`QuorumRefused`."""
    try:
        body = CheckpointBody.parse(parse_note(note).text)
        opened = open_note(note, [verifier_key(body.origin, operator)])
    except NoteError as exc:
        raise QuorumRefused(f"the checkpoint note is not the operator's: {exc}") from None
    where = f"the checkpoint note of {body.origin} at {body.size} rows"
    if events is not None and body.size != events:
        raise QuorumRefused(f"{where} is not of the checkpoint's {events} events")
    if links is not None and head is not None and f"{CHAIN_LINE} {links} {head}" not in body.extensions:
        raise QuorumRefused(f"{where} does not name the checkpoint's link {links} and head {head}")
    try:
        names = require_quorum(opened, quorum.witnesses, quorum.required)
    except NoteError as exc:
        raise QuorumRefused(f"{where}: {exc}") from None
    return opened, body, names
