"""The C2SP checkpoint note ``ledger seal`` makes beside its JSON checkpoint.

After the incremental seal has verified the chain and signed a v2 checkpoint at a chain link
row, :func:`seal_note` signs the Merkle tree of the rows up to and including that row:

    ORIGIN
    SIZE                       (rows covered: the checkpoint's events)
    BASE64(ROOT)
    ledger/chain LINKS HEAD    (the chain link the JSON checkpoint signs, and its digest)
    ledger/snapshot ROW DIGEST (the link's row and the verifier snapshot's SHA-256)
    ledger/state ROOT N        (the root of the tree of the snapshot's per-key state entries
                                and their number, ``ledger.merkle.state``)

signed by the sealing key under the origin's name (``signed-note``, Ed25519), and stores it
(``ledger.merkle.heads``). The root it signs is not read from the stored tree: it extends the
frontier of the newest note the same key signed (checked against that note's root) by
re-hashing the rows stored since, and requires the stored tree to hold exactly those hashes
(``MerkleLog.recompute``). So a signed root is always the rows' root, and every proof later read
from the stored tree up to that size verifies against it.
"""

from __future__ import annotations

from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ledger.merkle.heads import Heads, OriginError, StoredNote, default_origin
from ledger.merkle.log import MerkleLog, TreeError
from ledger.merkle.state import state_line
from ledger.merkle.tree import Frontier
from ledger.proof.checkpoints import CheckpointStore
from ledger.proof.note import (
    CheckpointBody,
    Note,
    NoteError,
    open_note,
    parse_note,
    parse_verifier,
    sign_note,
    verifier_key,
)
from ledger.proof.seal import Checkpoint, SealError
from ledger.storage.store import LedgerApp
from ledger.verify.snapshot import Snapshot, SnapshotError

CHAIN_EXTENSION = "ledger/chain"
SNAPSHOT_EXTENSION = "ledger/snapshot"


class NoteRefused(SealError):
    """The stored tree or an earlier note does not agree with the rows: nothing signed (exit 3)."""


@dataclass(frozen=True)
class NoteSealed:
    """What :func:`seal_note` did: the stored note and whether it is new."""

    note: StoredNote
    new: bool
    rehashed: int
    """Rows re-hashed to check the tree (those since the previous note)."""


def checkpoint_body(
    origin: str, size: int, root: bytes, checkpoint: Checkpoint, state: str | None = None
) -> CheckpointBody:
    """The text of the note of a JSON checkpoint (see the module docstring); ``state``: the
    ``ledger/state`` line (notes sealed before it have none, and stay valid)."""
    pos = checkpoint.position
    lines = (
        f"{CHAIN_EXTENSION} {pos.links} {pos.head}",
        f"{SNAPSHOT_EXTENSION} {checkpoint.row} {checkpoint.snapshot}",
    )
    return CheckpointBody(origin, size, root, (*lines, state) if state else lines)


def log_verifier(origin: str, public_key: Ed25519PublicKey) -> str:
    """The verifier key (``signed-note``) of the log's notes."""
    return verifier_key(origin, public_key)


def open_checkpoint(
    note: str, public_key: Ed25519PublicKey, origin: str | None = None
) -> tuple[Note, CheckpointBody]:
    """A checkpoint note signed by ``public_key`` under its own origin (or ``origin``);
    :class:`NoteError` if not."""
    text = parse_note(note).text
    body = CheckpointBody.parse(text)
    if origin is not None and body.origin != origin:
        raise NoteError(f"the note is of log {body.origin!r}, not {origin!r}")
    return open_note(note, [log_verifier(body.origin, public_key)]), body


def seal_note(
    app_log: MerkleLog,
    heads: Heads,
    key: Ed25519PrivateKey,
    checkpoint: Checkpoint,
    snapshot: Snapshot | None = None,
) -> NoteSealed:
    """Sign and store the checkpoint note of the tree up to ``checkpoint``'s link row; with
    ``snapshot`` (the one the checkpoint signs), its state root too."""
    if checkpoint.row is None or checkpoint.snapshot is None:
        raise SealError("a note is made only for a checkpoint with a position and a snapshot")
    origin = heads.stored_origin()
    if origin is None:
        origin = heads.set_origin(default_origin(heads.app))
    size = checkpoint.position.events
    public = key.public_key()
    existing = heads.note_at(size)
    if existing is not None:
        _check_own(existing, public, origin)
        return NoteSealed(existing, False, 0)
    try:
        app_log.extend()
        if app_log.row_id(size - 1) != checkpoint.row:
            raise TreeError(f"the tree's leaf {size - 1} is not the checkpoint's row {checkpoint.row}")
        start = _trusted_start(app_log, heads, public, origin, size)
        rehashed = size - start.size
        frontier = app_log.recompute(start, size)
    except TreeError as exc:
        raise NoteRefused(
            f"the Merkle tree does not agree with the rows; refusing to sign it: {exc}"
        ) from None
    state = None
    if snapshot is not None:
        if snapshot.digest != checkpoint.snapshot:
            raise SealError("the snapshot given is not the one the checkpoint signs")
        state = state_line(snapshot.state["judge"])
    body = checkpoint_body(origin, size, frontier.root(), checkpoint, state)
    stored = heads.store_note(size, sign_note(body.text(), origin, key))
    return NoteSealed(stored, True, rehashed)


def _check_own(note: StoredNote, public: Ed25519PublicKey, origin: str) -> CheckpointBody:
    """The body of a stored note of this size, which this key must have signed."""
    mine = parse_verifier(log_verifier(origin, public))
    try:
        signers = {(s.name, s.key_id) for s in parse_note(note.note).signatures}
    except NoteError as exc:
        raise NoteRefused(f"the stored note of size {note.size} is damaged: {exc}") from None
    if (mine.name, mine.key_id) not in signers:
        raise SealError(
            f"the tree of {note.size} rows already has a note signed by another key "
            "(a key change?): seal again once new rows are stored"
        )
    try:
        return open_checkpoint(note.note, public, origin)[1]
    except NoteError as exc:
        raise NoteRefused(f"the stored note of size {note.size} does not verify: {exc}") from None


def _trusted_start(
    log: MerkleLog, heads: Heads, public: Ed25519PublicKey, origin: str, size: int
) -> Frontier:
    """The frontier of the newest note below ``size`` this key signed, checked against the
    note's root; the empty frontier when there is none (the first note re-hashes every row)."""
    for old in reversed([s for s in heads.listing() if s < size]):
        note = heads.note_at(old)
        if note is None:
            continue
        try:
            body = open_checkpoint(note.note, public, origin)[1]
        except NoteError:
            continue  # another key's note (before a key change): not a starting point
        frontier = log.frontier(body.size)
        if frontier.root() != body.root:
            raise TreeError(
                f"the stored tree's root at size {body.size} is not the one the "
                "note of that size signs: the tree was changed"
            )
        return frontier
    return Frontier()


def seal_tree(app: LedgerApp, key: Ed25519PrivateKey, checkpoint: Checkpoint) -> NoteSealed:
    """:func:`seal_note` with the store's tree and heads opened and closed here, and the
    checkpoint's snapshot read from the checkpoints table (for the state root)."""
    with MerkleLog(app) as log, Heads(app) as heads:
        return seal_note(log, heads, key, checkpoint, _stored_snapshot(app, checkpoint))


def _stored_snapshot(app: LedgerApp, checkpoint: Checkpoint) -> Snapshot | None:
    """The stored snapshot the checkpoint signs (checked against its digest), if stored."""
    if checkpoint.snapshot is None:
        return None
    with CheckpointStore(app, create=False) as store:
        stored = store.by_digest(checkpoint.snapshot) if store.exists else None
        if stored is None:
            return None
        try:
            return store.snapshot(stored)
        except SnapshotError:
            return None


__all__ = [
    "NoteRefused",
    "NoteSealed",
    "OriginError",
    "checkpoint_body",
    "log_verifier",
    "open_checkpoint",
    "seal_note",
    "seal_tree",
]
