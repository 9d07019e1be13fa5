"""A round's Merkle proof in a bundle: its last row's inclusion in a signed checkpoint note.

``export-round --merkle`` writes, instead of the chain links from the round to the checkpoint,

    "merkle": {"index": I, "size": N, "proof": [BASE64, …], "note": "ORIGIN\\nN\\nROOT\\n…"}

— the leaf index of the round's last stored event, the inclusion proof of that leaf in the tree
of ``N`` rows, and the signed (possibly cosigned) checkpoint note of that tree. Its size does
not grow with the distance to the checkpoint: ``⌈log2 N⌉`` hashes at most, 27 at 10⁸ rows.

Why one leaf is enough: the round's events form a hash chain (``ledger.codec.chain``), so the last
event's digest commits to every earlier one, and the leaf (``ledger.merkle.tree.leaf_data``)
commits to the round's id, the last version, its topic and its stored bytes, which hold that
digest. :func:`check_round_proof` recomputes the leaf from the bundle's events, opens the note
with the sealer's public key, requires the note to carry the JSON checkpoint's chain link and
head (the same seal), and checks the proof against the note's root. In a store that compresses
its rows (zlib), the leaf hashes the compressed bytes, which the inspector cannot rebuild from the
events: the section then also carries them (``stored``, base64), and the check requires that they
decompress to the event's frame. Stores with encryption at rest are not exported this way: their
stored bytes are ciphertext (``docs/SECURITY.md``).
"""

from __future__ import annotations

import base64
import binascii
import zlib
from typing import Any
from uuid import UUID

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from eventsourcing.compressor import ZlibCompressor

from ledger.codec.chain import frame
from ledger.domain.errors import BundleError
from ledger.merkle.heads import Heads, StoredNote
from ledger.merkle.log import MerkleLog, TreeError
from ledger.merkle.rfc6962 import HASH_SIZE, verify_inclusion
from ledger.merkle.sealing import CHAIN_EXTENSION, open_checkpoint
from ledger.merkle.tree import row_leaf
from ledger.proof.note import NoteError
from ledger.proof.seal import Checkpoint, parse_public_key
from ledger.storage.store import LedgerApp, RawRow

MAX_PROOF_HASHES = 64
"""An inclusion proof in a tree of fewer than 2⁶⁴ leaves has fewer hashes: longer is refused."""


def round_proof(app: LedgerApp, oid: UUID, checkpoint: Checkpoint | None = None) -> dict[str, Any]:
    """The ``merkle`` section of a round's bundle: its last row's proof to the note of
    ``checkpoint``'s seal (default: the newest stored note)."""
    compressed = check_exportable(app)
    span = app.span(oid)
    if span is None:
        raise BundleError("the round has no stored event")
    with MerkleLog(app, create=False) as log, Heads(app, create=False) as heads:
        note = _note_for(heads, checkpoint)
        index = log.index_of(span[1])
        if index is None or index >= note.size:
            raise BundleError(
                f"the round's last event (row {span[1]}) is not in the tree of the "
                f"newest note ({note.size} rows): seal again, then export"
            )
        try:
            proof = log.inclusion_proof(index, note.size)
        except TreeError as exc:
            raise BundleError(f"cannot read the proof from the stored tree: {exc}") from None
    out: dict[str, Any] = {
        "index": index,
        "size": note.size,
        "proof": [base64.b64encode(h).decode() for h in proof],
        "note": note.cosigned(),
    }
    if compressed:
        out["stored"] = base64.b64encode(stored_bytes(app, span[1])).decode()
    return out


def check_exportable(app: LedgerApp) -> bool:
    """Whether the store compresses its rows (zlib); :class:`BundleError` if its rows cannot be
    proven to an inspector (encrypted, or another compressor)."""
    mapper = app.ledger_mapper
    if mapper.cipher is not None:
        raise BundleError(
            "a store with encryption at rest cannot export a Merkle proof (its stored bytes are "
            "ciphertext, which an inspector cannot rebuild): omit --merkle"
        )
    if mapper.compressor is not None and not isinstance(mapper.compressor, ZlibCompressor):
        raise BundleError(
            "a store with a compressor other than zlib cannot export a Merkle proof: omit --merkle"
        )
    return mapper.compressor is not None


def stored_row(app: LedgerApp, row_id: int) -> RawRow | None:
    """Row ``row_id`` of the log as a plain tuple (id, aggregate, version, topic, stored
    bytes), or ``None`` if the log has no such row."""
    for page in app.rows(page=1, after=row_id - 1):
        if page and page[0][0] == row_id:
            return page[0]
        break
    return None


def stored_bytes(app: LedgerApp, row_id: int) -> bytes:
    """The bytes stored in row ``row_id`` (as the tree hashes them)."""
    row = stored_row(app, row_id)
    if row is None:
        raise BundleError(f"the log has no row {row_id}")
    return bytes(row[4])


def leaf_state(carried: Any, framed: bytes) -> bytes:
    """The stored bytes a leaf hashes: ``framed`` itself, or, from a compressing store, the
    compressed bytes a bundle carries (``carried``, base64), which must decompress to
    ``framed``; ``ValueError`` if they do not."""
    if carried is None:
        return framed
    try:
        raw = base64.b64decode(str(carried), validate=True)
        unzip = zlib.decompressobj()
        plain = unzip.decompress(raw, len(framed) + 1)
    except (ValueError, binascii.Error, zlib.error):
        raise ValueError("the stored bytes it carries do not decompress") from None
    if plain != framed or not unzip.eof or unzip.unused_data:
        raise ValueError("the stored bytes it carries are not its last event")
    return raw


def event_leaf(oid: UUID, event: dict[str, Any], carried: Any) -> bytes:
    """The Merkle leaf of an event as a bundle carries it (its aggregate's ``oid``, its version,
    topic, digest and content; ``carried``: the stored bytes the bundle gives, if any, see
    :func:`leaf_state`). ``ValueError`` when the event or the carried bytes do not make one."""
    content = str(event["content"]).encode("utf-8")
    state = leaf_state(carried, frame(str(event["digest"]), content))
    return row_leaf(oid.hex, int(event["version"]), str(event["topic"]), state)


def _note_for(heads: Heads, checkpoint: Checkpoint | None) -> StoredNote:
    note = heads.latest() if checkpoint is None else heads.note_at(checkpoint.position.events)
    if note is None:
        what = (
            "no checkpoint note"
            if checkpoint is None
            else (f"no checkpoint note of the seal at link {checkpoint.position.links}")
        )
        raise BundleError(f"the store holds {what}: run `ledger seal` first")
    return note


def check_round_proof(
    merkle: dict[str, Any], oid: UUID, last: dict[str, Any], checkpoint: Checkpoint
) -> list[str]:
    """What fails in a bundle's ``merkle`` section, given its last event (already checked
    against the round's digest chain) and the JSON checkpoint (signature already checked)."""
    key: Ed25519PublicKey = parse_public_key(checkpoint.public_key.encode())
    try:
        _, body = open_checkpoint(str(merkle["note"]), key)
    except NoteError as exc:
        return [f"the bundle's checkpoint note is not signed by the checkpoint's key: {exc}"]
    pos = checkpoint.position
    if f"{CHAIN_EXTENSION} {pos.links} {pos.head}" not in body.extensions:
        return [
            f"the bundle's note is not of the checkpoint's seal (link {pos.links}, head "
            f"{pos.head}): export against this checkpoint"
        ]
    index, size = merkle["index"], merkle["size"]
    proof = _hashes(merkle["proof"])
    if type(index) is not int or type(size) is not int or size != body.size or proof is None:
        return ["the bundle's Merkle proof is malformed (index, size or hashes)"]
    try:
        leaf = event_leaf(oid, last, merkle.get("stored"))
    except ValueError as exc:
        return [f"the round's last event: {exc}"]
    if not verify_inclusion(leaf, index, size, proof, body.root):
        return [
            f"the round's last event is not leaf {index} of the tree of {size} rows the "
            "note signs: the round was changed, or the proof is not of it"
        ]
    return []


def _hashes(items: Any) -> list[bytes] | None:
    if not isinstance(items, list) or len(items) > MAX_PROOF_HASHES:
        return None
    try:
        hashes = [base64.b64decode(str(h), validate=True) for h in items]
    except (ValueError, binascii.Error):
        return None
    return hashes if all(len(h) == HASH_SIZE for h in hashes) else None
