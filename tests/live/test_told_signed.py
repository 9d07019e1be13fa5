"""The told row (``ledger_follow_told``) is signed with the sealing key and checked on restart:
an insider with SQL access who raises it, strips or forges its signature, or plants a row of
their own does not silence a restarted follower. The follower says so on standard error,
records it as its last error (kind ``told``), and tells again every finding after the newest
checkpoint valid under the store's sealing public key: those the raised row would have hidden.
Each attack is a real SQL statement on the real store (SQLite and PostgreSQL, and on PostgreSQL
as the ingest role of ``ledger init --roles``, which may write the row)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ledger.live.sources import FileSource
from ledger.live.told import TOLD_TABLE, signed_bytes
from ledger.proof import checkpoints
from ledger.proof.seal import generate_key, private_pem, public_pem
from ledger.storage.sql import connect
from ledger.storage.store import LedgerApp, open_ledger
from ledger.verify.engine import verify_store
from tests.conftest import PG_BASE, require_postgres, tiered
from tests.live.conftest import ledger_forks, run_follower

ROOT = Path(__file__).resolve().parents[2]
RAISED = 10**9


def _write(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"".join(line + b"\n" for line in lines))


def _sql(app: LedgerApp, statement: str, params: tuple[Any, ...] = ()) -> None:
    """The attacker: one statement on the store, as whoever ``app`` connects as."""
    db = connect(app)
    try:
        with db.write() as cur:
            cur.execute(statement.format(t=db.dialect.qualified(TOLD_TABLE), p=db.dialect.p), params)
    finally:
        db.close()


def _attack(app: LedgerApp, how: str) -> None:
    other = generate_key()
    if how == "raised":  # the position raised, its signature kept
        _sql(app, "UPDATE {t} SET position = {p} WHERE id = 1", (RAISED,))
    elif how == "unsigned":
        _sql(app, "UPDATE {t} SET position = {p}, signature = NULL WHERE id = 1", (RAISED,))
    elif how == "forged":  # signed, by a key that is not the store's
        told_at = "2026-11-26T00:00:00+00:00"
        forged = other.sign(signed_bytes(RAISED, told_at, None)).hex()
        _sql(
            app,
            "UPDATE {t} SET position = {p}, told_at = {p}, signature = {p} WHERE id = 1",
            (RAISED, told_at, forged),
        )
    elif how == "planted":  # the row deleted and one of the attacker's own inserted
        _sql(app, "DELETE FROM {t}")
        _sql(app, "INSERT INTO {t} (id, position, told_at) VALUES (1, {p}, 'now')", (RAISED,))


def _plain(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in ("detected_at", "finding_id")} for r in records]


@pytest.mark.slow_postgres
# The untouched row and a forged one by default, every other attack in the slow tier.
@pytest.mark.parametrize("how", tiered(["untouched", "forged", "raised", "unsigned", "planted"], 2))
def test_a_tampered_told_row_is_detected_and_its_findings_told_again(
    how: str, db_url: str, tmp_path: Path, lines: list[bytes]
) -> None:
    key = generate_key()
    feed = tmp_path / "feed.jsonl"
    half = len(lines) // 2
    _write(feed, lines[:half])
    app = open_ledger(db_url)
    try:
        checkpoints.CheckpointStore(app).close()  # its trigger function guards the key too
        checkpoints.name_sealing_key(app, key.public_key())
        first, _ = run_follower(app, FileSource(str(feed)), idle=0.3, seal_key=key)
        checkpoints.seal(app, key)  # a checkpoint at the row the first follower told through
        _attack(app, how)
        _write(feed, lines)  # the rest of the day comes while the follower is down
        second, code = run_follower(app, FileSource(str(feed)), idle=0.3, seal_key=key)
        expected = [f.to_json() for f in verify_store(app).findings]
    finally:
        app.close()
    told = first.out.records + second.out.records  # type: ignore[attr-defined]
    log = second.log.text  # type: ignore[attr-defined]
    assert code == 0 and first.out.records and second.out.records  # type: ignore[attr-defined]
    # Every finding told exactly once across the two runs: the raised row hid none of the second
    # half's (the newest valid checkpoint is where the first run stopped telling).
    assert _plain(told) == expected
    errors = second.metrics.errors.labels("told")._value.get()
    if how == "untouched":
        assert "told row" not in log and errors == 0
    else:
        assert f"the told row (findings told through row {RAISED})" in log, log
        assert "trusted only up to checkpoint 1" in log and errors == 1


def test_a_row_of_an_older_follower_without_a_key_is_bounded_by_the_checkpoint(
    tmp_path: Path, lines: list[bytes]
) -> None:
    """A follower with no sealing key writes its row unsigned; on a store with a sealing public
    key that row is trusted up to the newest valid checkpoint only: the findings after it are
    told again (with the same ``finding_id``), none is lost, and the follower says why."""
    key = generate_key()
    feed = tmp_path / "feed.jsonl"
    _write(feed, lines)
    app = open_ledger(f"sqlite:///{tmp_path / 'l.db'}")
    try:
        checkpoints.CheckpointStore(app).close()  # its trigger function guards the key too
        checkpoints.name_sealing_key(app, key.public_key())
        first, _ = run_follower(app, FileSource(str(feed)), idle=0.3)
        again, _ = run_follower(app, FileSource(str(feed)), idle=0.3)
    finally:
        app.close()
    assert first.out.records and _plain(again.out.records) == _plain(first.out.records)  # type: ignore[attr-defined]
    ids = [r["finding_id"] for r in first.out.records]  # type: ignore[attr-defined]
    assert [r["finding_id"] for r in again.out.records] == ids and len(set(ids)) == len(ids)  # type: ignore[attr-defined]
    assert "is not signed by the store's sealing key" in again.log.text  # type: ignore[attr-defined]
    assert "trusted only up to the start of the log" in again.log.text  # type: ignore[attr-defined]


@pytest.mark.slow
def test_a_follower_without_the_key_is_bounded_by_its_own_copy_of_the_row(
    tmp_path: Path, lines: list[bytes]
) -> None:
    """With ``told_copy`` (``--told-copy``), a follower without the sealing key on a store with a
    sealing public key and no checkpoint tells nothing again at a restart; and a row raised by
    SQL is trusted only up to that copy: the findings after it are told, none stays hidden."""
    key = generate_key()
    feed = tmp_path / "feed.jsonl"
    copy = tmp_path / "told.json"
    half = len(lines) // 2
    _write(feed, lines[:half])
    app = open_ledger(f"sqlite:///{tmp_path / 'l.db'}")
    try:
        checkpoints.CheckpointStore(app).close()
        checkpoints.name_sealing_key(app, key.public_key())
        first, _ = run_follower(app, FileSource(str(feed)), idle=0.3, told_copy=str(copy))
        again, _ = run_follower(app, FileSource(str(feed)), idle=0.3, told_copy=str(copy))
        _attack(app, "unsigned")  # raised far past the end, and unsigned
        _write(feed, lines)
        third, code = run_follower(app, FileSource(str(feed)), idle=0.3, told_copy=str(copy))
        expected = [f.to_json() for f in verify_store(app).findings]
    finally:
        app.close()
    assert code == 0 and first.out.records and third.out.records  # type: ignore[attr-defined]
    assert again.out.records == [] and "told row" not in again.log.text  # type: ignore[attr-defined]
    assert _plain(first.out.records + third.out.records) == expected  # type: ignore[attr-defined]
    assert "trusted only up to the follower's own copy" in third.log.text  # type: ignore[attr-defined]
    # A copy of another store, or of a row the store no longer holds as named, is not used.
    assert json.loads(copy.read_text())["position"] > 0
    data = json.loads(copy.read_text())
    copy.write_text(json.dumps({**data, "store": "sqlite /elsewhere.db"}))
    app = open_ledger(f"sqlite:///{tmp_path / 'l.db'}")
    try:
        fourth, _ = run_follower(app, FileSource(str(feed)), idle=0.3, told_copy=str(copy))
    finally:
        app.close()
    assert _plain(fourth.out.records) == expected  # type: ignore[attr-defined]
    assert "trusted only up to the start of the log" in fourth.log.text  # type: ignore[attr-defined]


@pytest.mark.postgres
@pytest.mark.slow
def test_the_ingest_role_keeps_a_signed_told_row_and_cannot_raise_it_unseen(
    tmp_path: Path, lines: list[bytes]
) -> None:
    """``ledger init --roles --seal-public-key``: the follower runs as the ingest role and keeps
    its signed row (the grants allow it); the same role, by SQL, raises it: the next follower
    says so and tells the findings again."""
    require_postgres()
    from tests.cli.test_cli_roles import _as, _drop

    tag = uuid.uuid4().hex[:10]
    schema, prefix = f"t_{tag}", f"lt{tag}"
    owner = f"{PG_BASE.split('?')[0]}?schema={schema}"
    key: Ed25519PrivateKey = generate_key()
    (tmp_path / "seal.pub").write_bytes(public_pem(key.public_key()))
    env = {"LEDGER_SEAL_KEY": private_pem(key).decode()}
    feed = b"".join(line + b"\n" for line in lines)
    try:
        with ledger_forks(ROOT) as forks:  # forked from one interpreter that imported the commands
            pub = str(tmp_path / "seal.pub")
            init = ["init", "--roles", "--role-prefix", prefix, "--seal-public-key", pub, "--db", owner]
            done = forks.run(init)
            assert done.returncode == 0, done.stderr
            ingest = _as(f"{prefix}_ingest", schema)
            runs = []
            for step in ("first", "raised"):
                if step == "raised":
                    app = open_ledger(ingest, create=False)
                    try:
                        _sql(app, "UPDATE {t} SET position = {p} WHERE id = 1", (RAISED,))
                    finally:
                        app.close()
                done = forks.run(["ingest", "--follow", "-", "--db", ingest], stdin=feed, env=env)
                assert done.returncode == 0, done.stderr
                runs.append(done)
            first, raised = ([json.loads(x) for x in r.stdout.splitlines()] for r in runs)
            assert first and b"told row" not in runs[0].stderr, runs[0].stderr
            assert b"findings told through row 1000000000" in runs[1].stderr
            assert _plain(raised) == _plain(first)  # no checkpoint: all of them again
            assert [r["finding_id"] for r in raised] == [r["finding_id"] for r in first]
    finally:
        _drop(schema, f"{prefix}_ingest", f"{prefix}_auditor", f"{prefix}_sealer")


@pytest.mark.slow_postgres
def test_a_told_table_of_an_older_version_gains_its_signature_column(
    db_url: str, tmp_path: Path, lines: list[bytes]
) -> None:
    """A store told by a follower before rows were signed: its row is read (unsigned, so bounded
    by the checkpoint), and the next one written is signed."""
    key = generate_key()
    feed = tmp_path / "feed.jsonl"
    _write(feed, lines)
    app = open_ledger(db_url)
    try:
        checkpoints.CheckpointStore(app).close()
        checkpoints.name_sealing_key(app, key.public_key())
        db = connect(app)
        try:
            table = db.dialect.qualified(TOLD_TABLE)
            db.create(
                [
                    f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, position BIGINT NOT NULL, "
                    "told_at TEXT NOT NULL)",
                    f"INSERT INTO {table} (id, position, told_at) VALUES (1, 5, 'then')",
                ]
            )
        finally:
            db.close()
        first, code = run_follower(app, FileSource(str(feed)), idle=0.3, seal_key=key)
        again, _ = run_follower(app, FileSource(str(feed)), idle=0.3, seal_key=key)
        expected = [f.to_json() for f in verify_store(app).findings]
    finally:
        app.close()
    assert code == 0 and _plain(first.out.records) == expected  # type: ignore[attr-defined]
    assert "findings told through row 5) is not signed" in first.log.text  # type: ignore[attr-defined]
    assert again.out.records == [] and "told row" not in again.log.text  # type: ignore[attr-defined]
