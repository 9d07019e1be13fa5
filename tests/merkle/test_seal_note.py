"""``ledger seal``'s checkpoint note: the rows' root, signed under the origin, stored, extended.

An insider with SQL access who edits the stored tree (the triggers dropped first) cannot get a
root signed that is not the rows' root: the seal re-hashes the rows since its last note.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from ledger.merkle.heads import (
    OriginError,
    add_cosignatures,
    default_origin,
    latest_note,
    origin,
    set_origin,
    stored_origin,
)
from ledger.merkle.log import MerkleLog
from ledger.merkle.rfc6962 import EMPTY_ROOT, reference_root, verify_consistency
from ledger.merkle.sealing import NoteRefused, log_verifier, open_checkpoint, seal_tree
from ledger.proof.checkpoints import seal
from ledger.proof.note import CheckpointBody, NoteError, cosign, cosigner_key, open_note, require_quorum
from ledger.proof.seal import generate_key
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import LedgerApp
from tests.merkle.test_log import _leaves_from_rows, _run


def _ingest(app: LedgerApp, path: Path) -> None:
    with open(path, encoding="utf-8") as stream:
        assert Ingestor(app, batch_events=40).ingest(numbered_lines(stream)).rejected == []


def test_seal_signs_the_rows_root_under_the_origin(app: LedgerApp, examples: Path) -> None:
    key = generate_key()
    _ingest(app, examples / "rl.jsonl")
    assert stored_origin(app) is None and origin(app) == default_origin(app)
    sealed = seal(app, key)
    noted = seal_tree(app, key, sealed.checkpoint)
    assert noted.new and noted.rehashed == noted.note.size
    _, body = open_checkpoint(noted.note.note, key.public_key())
    leaves = _leaves_from_rows(app)
    assert body.origin == stored_origin(app) == default_origin(app)
    assert body.size == sealed.checkpoint.position.events == len(leaves)
    assert body.root == reference_root(leaves)
    assert body.extensions == (
        f"ledger/chain {sealed.checkpoint.position.links} {sealed.checkpoint.position.head}",
        f"ledger/snapshot {sealed.checkpoint.row} {sealed.checkpoint.snapshot}",
        # no game with state across rounds yet: the empty tree's root, no entry
        f"ledger/state {base64.b64encode(EMPTY_ROOT).decode()} 0",
    )
    assert latest_note(app) == noted.note
    # Sealing again with nothing new returns the same note.
    again = seal_tree(app, key, seal(app, key).checkpoint)
    assert not again.new and again.note == noted.note
    # More rows: a second note, which the first is consistent with.
    _ingest(app, examples / "sp9.jsonl")
    second = seal_tree(app, key, seal(app, key).checkpoint)
    assert second.new and second.rehashed == second.note.size - noted.note.size
    new_body = second.note.body
    with MerkleLog(app) as log:
        proof = log.consistency_proof(body.size, new_body.size)
    assert verify_consistency(body.size, new_body.size, body.root, new_body.root, proof)
    assert new_body.root == reference_root(_leaves_from_rows(app))
    with pytest.raises(NoteError):  # another key's note does not open
        open_checkpoint(second.note.note, generate_key().public_key())


def test_the_origin_is_set_once(app: LedgerApp) -> None:
    assert set_origin(app, "casino.example/ledger/floor-1") == "casino.example/ledger/floor-1"
    assert set_origin(app, "casino.example/ledger/floor-1") == "casino.example/ledger/floor-1"
    with pytest.raises(OriginError, match="set once"):
        set_origin(app, "casino.example/ledger/other")
    with pytest.raises(OriginError, match="not a valid origin"):
        set_origin(app, "has space")
    assert origin(app) == "casino.example/ledger/floor-1"


def test_cosignatures_are_stored_beside_the_note(app: LedgerApp, examples: Path) -> None:
    key, witness = generate_key(), generate_key()
    _ingest(app, examples / "sp9.jsonl")
    set_origin(app, "casino.example/ledger")
    stored = seal_tree(app, key, seal(app, key).checkpoint).note
    text = open_note(stored.note, [log_verifier("casino.example/ledger", key.public_key())]).text
    line = cosign(text, "regulator.example/w1", witness, 1_700_000_000).line()
    assert add_cosignatures(app, stored.size, [line, line]) == 1
    assert add_cosignatures(app, stored.size, [line]) == 0
    note = latest_note(app)
    assert note is not None and note.cosignatures == (line,)
    opened = open_note(note.cosigned(), [log_verifier("casino.example/ledger", key.public_key())])
    assert require_quorum(opened, [cosigner_key("regulator.example/w1", witness.public_key())], 1) == [
        "regulator.example/w1"
    ]
    with pytest.raises(NoteError, match="not a cosignature line"):
        add_cosignatures(app, stored.size, ["junk"])
    with pytest.raises(Exception, match="no stored note"):
        add_cosignatures(app, stored.size + 1, [line])
    assert CheckpointBody.parse(text).size == stored.size


def _drop_tree_triggers(url: str) -> None:
    if url.startswith("sqlite"):
        for op in ("update", "delete"):
            _run(url, f"DROP TRIGGER ledger_merkle_tree_no_{op}")
    else:
        _run(url, "DROP TRIGGER ledger_merkle_tree_append_only ON {s}ledger_merkle_tree")


def test_an_edited_tree_is_never_signed(app: LedgerApp, examples: Path, db_url: str) -> None:
    key = generate_key()
    _ingest(app, examples / "fpc.jsonl")
    first = seal_tree(app, key, seal(app, key).checkpoint).note
    _ingest(app, examples / "sp9.jsonl")
    _drop_tree_triggers(db_url)
    # The insider rewrites one new leaf's hashes in the tree table.
    victim = first.size + 3
    _run(
        db_url,
        "UPDATE {s}ledger_merkle_tree SET nodes = "
        + ("zeroblob(32)" if db_url.startswith("sqlite") else "decode(repeat('00', 32), 'hex')")
        + f" WHERE idx = {victim}",
    )
    with pytest.raises(NoteRefused, match=f"leaf {victim}"):
        seal_tree(app, key, seal(app, key).checkpoint)
    assert latest_note(app) == first


def test_an_edited_old_tree_is_seen_against_the_signed_root(
    app: LedgerApp, examples: Path, db_url: str
) -> None:
    key = generate_key()
    _ingest(app, examples / "fpc.jsonl")
    first = seal_tree(app, key, seal(app, key).checkpoint).note
    _ingest(app, examples / "sp9.jsonl")
    _drop_tree_triggers(db_url)
    # The node of the first note's tree that holds its left half, zeroed.
    holder = (1 << (first.size.bit_length() - 1)) - 1
    zeros = (
        "zeroblob(length(nodes))"
        if db_url.startswith("sqlite")
        else "decode(repeat('00', length(nodes)), 'hex')"
    )
    _run(db_url, f"UPDATE {{s}}ledger_merkle_tree SET nodes = {zeros} WHERE idx = {holder}")
    with pytest.raises(NoteRefused, match=f"root at size {first.size} is not the one"):
        seal_tree(app, key, seal(app, key).checkpoint)
    assert latest_note(app) == first


def test_a_removed_newest_leaf_is_appended_again(app: LedgerApp, examples: Path, db_url: str) -> None:
    """The tree's newest rows deleted: extend re-appends them from the rows (the same leaves),
    and the next note is consistent with the last."""
    key = generate_key()
    _ingest(app, examples / "fpc.jsonl")
    first = seal_tree(app, key, seal(app, key).checkpoint).note
    _drop_tree_triggers(db_url)
    _run(db_url, "DELETE FROM {s}ledger_merkle_tree WHERE idx >= " + str(first.size - 5))
    _ingest(app, examples / "sp9.jsonl")
    second = seal_tree(app, key, seal(app, key).checkpoint).note
    with MerkleLog(app) as log:
        proof = log.consistency_proof(first.size, second.size)
    assert verify_consistency(first.size, second.size, first.body.root, second.body.root, proof)


def test_a_key_change_with_nothing_new_is_a_usage_error(app: LedgerApp, examples: Path) -> None:
    from ledger.proof.seal import SealError

    _ingest(app, examples / "sp9.jsonl")
    old, new = generate_key(), generate_key()
    checkpoint = seal(app, old).checkpoint
    seal_tree(app, old, checkpoint)
    with pytest.raises(SealError, match="another key") as caught:
        seal_tree(app, new, checkpoint)
    assert not isinstance(caught.value, NoteRefused)
    _ingest(app, examples / "fpc.jsonl")  # new rows: the new key's first note re-hashes all
    noted = seal_tree(app, new, seal(app, new, full=True).checkpoint)
    assert noted.new and noted.rehashed == noted.note.size
