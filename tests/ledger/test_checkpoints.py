"""Checkpoint v2 and the stored checkpoints table, on SQLite and PostgreSQL.

The format: v2 signs the link row's position and the snapshot's digest; v1 files still parse and
still check. The table: append-only (UPDATE and DELETE refused by a trigger on both databases),
numbered from 1, refusing a checkpoint that is not newer than the newest sealed with the same
key; every reader trusts only the signed JSON (checked with the sealing public key) and the
snapshot digest, so an edited row is detected and passed over.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from ledger.proof.checkpoints import (
    CheckpointStore,
    SealingKey,
    by_number,
    checked_snapshot,
    latest,
    listing,
    load_snapshot,
    nearest,
    save,
    snapshot_path,
    write_snapshot_file,
)
from ledger.proof.seal import (
    CHECKPOINT_FORMAT,
    CHECKPOINT_FORMAT_V1,
    ChainPosition,
    SealError,
    generate_key,
    parse_checkpoint,
    sign,
)
from ledger.storage.store import LedgerApp
from ledger.verify.snapshot import Snapshot, SnapshotError

HEAD = "ab" * 32
KEY = generate_key()
TRUSTED = SealingKey(KEY.public_key(), "the test's key")


def _snapshot(
    position: int, links: int = 3, events: int = 40, head: str = HEAD, carried: str = "none"
) -> Snapshot:
    return Snapshot(
        position,
        links,
        events,
        head,
        {"chain": {"events": events}, "rounds": {}, "tables": {}, "judge": {"3CB": {"carried": carried}}},
    )


def _sealed(snapshot: Snapshot, key: Any = None) -> Any:
    key = key or KEY
    return sign(ChainPosition(snapshot.links, snapshot.events, snapshot.head), key, snapshot=snapshot)


# --- the format -----------------------------------------------------------------------------


def test_v2_signs_position_and_snapshot_and_round_trips() -> None:
    snapshot = _snapshot(17)
    checkpoint = _sealed(snapshot)
    obj = json.loads(checkpoint.dumps())
    assert obj["format"] == CHECKPOINT_FORMAT
    assert (obj["position"], obj["snapshot"]) == (17, snapshot.digest)
    again = parse_checkpoint(checkpoint.dumps())
    assert again == checkpoint
    again.check_signature()
    for field, value in (("position", 18), ("snapshot", "cd" * 32)):
        forged = dict(obj, **{field: value})
        with pytest.raises(SealError, match="signature is not valid"):
            parse_checkpoint(json.dumps(forged)).check_signature()


def test_v1_checkpoints_still_parse_and_check() -> None:
    checkpoint = sign(ChainPosition(2, 77, HEAD), generate_key())
    obj = json.loads(checkpoint.dumps())
    assert obj["format"] == CHECKPOINT_FORMAT_V1 and "snapshot" not in obj
    parsed = parse_checkpoint(checkpoint.dumps())
    assert parsed.snapshot is None and parsed.row is None
    parsed.check_signature()


def test_a_snapshot_at_another_link_cannot_be_signed() -> None:
    with pytest.raises(SnapshotError):
        sign(ChainPosition(4, 40, HEAD), generate_key(), snapshot=_snapshot(17, links=3))


def test_v2_with_a_bad_position_is_not_a_checkpoint() -> None:
    obj = json.loads(_sealed(_snapshot(17)).dumps())
    with pytest.raises(SealError, match="position or snapshot"):
        parse_checkpoint(json.dumps(dict(obj, position="17")))


# --- the table ------------------------------------------------------------------------------


def test_checkpoints_are_numbered_listed_and_found(app: LedgerApp) -> None:
    assert latest(app, TRUSTED) is None and listing(app, TRUSTED) == []
    assert nearest(app, 100, TRUSTED) is None
    first, second = _snapshot(10, links=1), _snapshot(30, links=2, carried="b1")
    assert save(app, _sealed(first), first) == 1
    assert save(app, _sealed(second), second) == 2
    assert [s.number for s in listing(app, TRUSTED)] == [1, 2]
    newest = latest(app, TRUSTED)
    assert newest is not None and newest.number == 2 and newest.position == 30
    one = by_number(app, 1, TRUSTED)
    assert one is not None and one.checkpoint.snapshot == first.digest
    assert by_number(app, 3, TRUSTED) is None
    assert nearest(app, 10, TRUSTED) is None  # strictly before the row
    found = nearest(app, 31, TRUSTED)
    assert found is not None and found[1] == second
    found = nearest(app, 30, TRUSTED)
    assert found is not None and found[1] == first
    # no sealing public key configured: nothing stored is trusted
    assert latest(app) is None and nearest(app, 31) is None


def test_a_checkpoint_that_is_not_newer_is_refused(app: LedgerApp) -> None:
    snap = _snapshot(30)
    save(app, _sealed(snap), snap)
    older = _snapshot(20)
    with pytest.raises(SealError, match="not newer"):
        save(app, _sealed(older), older)


def test_a_snapshot_that_is_not_the_signed_one_is_not_stored(app: LedgerApp) -> None:
    with pytest.raises(SnapshotError):
        save(app, _sealed(_snapshot(10)), _snapshot(10, carried="other"))


def test_update_and_delete_of_stored_checkpoints_are_refused(app: LedgerApp, raw: Any) -> None:
    snap = _snapshot(10)
    save(app, _sealed(snap), snap)
    for statement in ("UPDATE {t} SET position = 5", "DELETE FROM {t}"):
        with pytest.raises(Exception, match="append-only"):
            raw.run(statement)
    assert [s.number for s in listing(app, TRUSTED)] == [1]


def test_an_edited_snapshot_row_is_detected(app: LedgerApp, db_url: str, raw: Any) -> None:
    snap = _snapshot(10)
    save(app, _sealed(snap), snap)
    raw.run(
        "DROP TRIGGER IF EXISTS ledger_checkpoints_no_update"
        if db_url.startswith("sqlite")
        else "ALTER TABLE {t} DISABLE TRIGGER ledger_checkpoints_append_only"
    )
    edited = _snapshot(10, carried="forged")
    raw.run("UPDATE {t} SET snapshot = {p}", (zlib.compress(edited.dumps()),))
    with CheckpointStore(app, create=False) as store:
        stored = store.latest()
        assert stored is not None
        with pytest.raises(SnapshotError, match="edited, or belongs to another"):
            store.snapshot(stored)
    assert nearest(app, 11, TRUSTED) is None  # passed over, never trusted
    raw.run("UPDATE {t} SET snapshot = {p}", (b"not zlib",))
    with CheckpointStore(app, create=False) as store:
        stored = store.latest()
        assert stored is not None
        with pytest.raises(SnapshotError, match="cannot be decrypted or decompressed"):
            store.snapshot(stored)
    assert nearest(app, 11, TRUSTED) is None


def test_the_snapshot_file_beside_a_checkpoint(app: LedgerApp, tmp_path: Path) -> None:
    assert snapshot_path("cp.json") == Path("cp.snapshot.json")
    assert snapshot_path("cp") == Path("cp.snapshot.json")
    snap = _snapshot(10)
    checkpoint = _sealed(snap)
    out = tmp_path / "cp.json"
    out.write_text(checkpoint.dumps())
    assert load_snapshot(app, checkpoint, str(out)) is None  # neither the file nor the store
    save(app, checkpoint, snap)
    assert load_snapshot(app, checkpoint, str(out)) == (snap, "store")
    write_snapshot_file(out, snap)
    assert load_snapshot(app, checkpoint, str(out)) == (snap, "file")
    snapshot_path(out).write_bytes(_snapshot(10, carried="x").dumps())
    with pytest.raises(SnapshotError, match="edited"):
        load_snapshot(app, checkpoint, str(out))
    snapshot_path(out).write_bytes(b"{}")
    with pytest.raises(SnapshotError, match="not a snapshot"):
        load_snapshot(app, checkpoint, str(out))


def test_checked_snapshot_refuses_another_stores_snapshot() -> None:
    mine, theirs = _snapshot(10), _snapshot(10, head="cd" * 32)
    with pytest.raises(SnapshotError, match="another checkpoint or store"):
        checked_snapshot(_sealed(mine), theirs.dumps(), "the snapshot")


def test_a_v2_checkpoint_must_find_its_link_at_its_row(app: LedgerApp, examples: Path) -> None:
    from ledger.proof.checkpoints import seal
    from ledger.proof.seal import checkpoint_findings
    from ledger.services.ingest import Ingestor, numbered_lines

    with open(examples / "rl.jsonl", encoding="utf-8") as stream:
        assert Ingestor(app, batch_events=40).ingest(numbered_lines(stream)).rejected == []
    key = generate_key()
    sealed = seal(app, key)
    assert checkpoint_findings(app, sealed.checkpoint, count_events=False) == []
    assert checkpoint_findings(app, sealed.checkpoint) == []
    s = sealed.snapshot
    moved = Snapshot(s.position - 1, s.links, s.events, s.head, s.state)
    forged = sign(ChainPosition(s.links, s.events, s.head), key, snapshot=moved)
    found = checkpoint_findings(app, forged, count_events=False)
    assert len(found) == 1 and f"is not at row {s.position - 1}" in found[0].message
