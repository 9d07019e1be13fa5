"""``--witness-key FILE`` (repeatable) and ``--quorum K`` of ``verify`` and ``check-bundle``: a
checkpoint is accepted only with its checkpoint note cosigned by K of the given witnesses
(``ledger.witness.quorum``); otherwise exit 3 and one line naming what failed.

The note of a checkpoint is looked for beside its file (``cp.json`` → ``cp.note``, as ``seal
--out`` writes it), in the store (the note ``seal`` stored for the checkpoint's tree size, with
the cosignatures stored beside it) and, for ``check-bundle``, in the bundle (``export-round
--merkle``). Where it comes from does not matter: it is trusted only
for the signatures it carries.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Any

import typer
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from cli.contract import EXIT_INTEGRITY, fail
from ledger.domain.errors import SealError, UsageError
from ledger.merkle.heads import note_at
from ledger.proof.checkpoints import by_number, note_path, sealing_key
from ledger.proof.seal import Checkpoint
from ledger.services.segments import parse_segment
from ledger.storage.store import LedgerApp
from ledger.witness.quorum import (
    Quorum,
    QuorumRefused,
    QuorumUsage,
    quorum_from_options,
    require_witnessed,
)

WitnessKeyOption = Annotated[
    list[str] | None,
    typer.Option(
        "--witness-key",
        metavar="FILE",
        help="A witness's public key (W.key.vkey, or W.key.pub): the checkpoint must carry valid "
        "cosignatures by --quorum of them, else exit 3 (repeatable). See docs/WITNESS.md.",
    ),
]
QuorumOption = Annotated[
    int | None,
    typer.Option(
        "--quorum",
        metavar="K",
        help="How many of the --witness-key witnesses must have cosigned (default: all of them).",
    ),
]


def asked(files: list[str] | None, quorum: int | None) -> Quorum | None:
    """The quorum of the command line (exit 2 when given wrongly), ``None`` without keys."""
    try:
        return quorum_from_options(files, quorum)
    except QuorumUsage as exc:
        fail(str(exc))


def notes_for(app: LedgerApp | None, sealed: Checkpoint, path: str | None) -> list[str]:
    """The candidate checkpoint notes of ``sealed``: beside its file, and in the store."""
    found: list[str] = []
    if path is not None:
        beside = note_path(path)
        with contextlib.suppress(OSError, UnicodeDecodeError):
            found.append(Path(beside).read_text(encoding="utf-8"))
    if app is not None:
        stored = note_at(app, sealed.position.events)
        if stored is not None:
            found.append(stored.cosigned())
    return found


def bundle_notes(bundle: dict[str, Any]) -> list[str]:
    """The checkpoint note a bundle carries (``export-round --merkle``), if any."""
    merkle = bundle.get("merkle")
    note = merkle.get("note") if isinstance(merkle, dict) else None
    return [note] if isinstance(note, str) else []


def require(
    quorum: Quorum | None, sealed: Checkpoint, key: Ed25519PublicKey, notes: list[str], what: str
) -> list[str]:
    """The cosigners of the first candidate note that passes, else exit 3 with the reason."""
    if quorum is None:
        return []
    if not notes:
        fail(
            f"{what}: no checkpoint note to count cosignatures on (neither beside the file nor "
            "in the store): seal with --witness",
            EXIT_INTEGRITY,
            prefix="integrity broken",
        )
    reasons = []
    pos = sealed.position
    for note in notes:
        try:
            return require_witnessed(note, key, quorum, events=pos.events, links=pos.links, head=pos.head)[2]
        except QuorumRefused as exc:
            reasons.append(str(exc))
    fail(f"{what}: {reasons[0]}", EXIT_INTEGRITY, prefix="integrity broken")


def require_segment(quorum: Quorum | None, app: LedgerApp, segment: str, public_key: str | None) -> list[str]:
    """``verify --segment A..B``: checkpoints A (unless 0) and B (unless ``head``) each need the
    quorum; the names of the witnesses that cosigned them all."""
    if quorum is None:
        return []
    try:
        start, end = parse_segment(segment)
        key = sealing_key(app, public_key)
    except (UsageError, SealError) as exc:
        fail(f"{exc}")
    if key is None:
        fail(
            f"--segment {segment} with --witness-key needs the sealing public key "
            "(--public-key, LEDGER_SEAL_PUBLIC_KEY or ledger init --seal-public-key)"
        )
    names: set[str] | None = None
    for number in (n for n in (start, end) if n):
        stored = by_number(app, number, key)
        if stored is None:
            fail(
                f"--segment {segment}: no stored checkpoint {number} valid under the sealing "
                f"key ({key.source}; ledger seal --list)"
            )
        try:
            checked = stored.checkpoint.check_signature(key.key)
        except SealError as exc:
            fail(f"checkpoint {number}: {exc}", EXIT_INTEGRITY, prefix="integrity broken")
        found = set(
            require(
                quorum,
                stored.checkpoint,
                checked,
                notes_for(app, stored.checkpoint, None),
                f"checkpoint {number}",
            )
        )
        names = found if names is None else names & found
    return sorted(names or ())
