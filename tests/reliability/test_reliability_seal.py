"""Signed checkpoints: every attack on a sealed store is detected by whoever holds the checkpoint.

Attacks are played with plain SQL (the ``raw`` fixture) or with the ledger's own code, on SQLite
and PostgreSQL: deleting the newest saves, rewriting history as a consistent new chain, changing
one byte, and forging or editing the checkpoint itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app as cli_app
from ledger.codec.chain import unframe
from ledger.proof.seal import (
    ChainPosition,
    SealError,
    checkpoint_findings,
    generate_key,
    parse_checkpoint,
    parse_private_key,
    private_pem,
    public_pem,
    scan_chain,
    seal_store,
    sign,
)
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import LedgerApp, open_ledger
from ledger.verify.engine import verify_store

runner = CliRunner()


def _fill(app: LedgerApp, examples: Path) -> None:
    for name in ("rl.jsonl", "fpc.jsonl"):
        with open(examples / name, encoding="utf-8") as stream:
            assert Ingestor(app, batch_events=40).ingest(numbered_lines(stream)).rejected == []


def _keys(tmp_path: Path) -> tuple[Path, Path]:
    key = generate_key()
    private, public = tmp_path / "seal.key", tmp_path / "seal.key.pub"
    private.write_bytes(private_pem(key))
    public.write_bytes(public_pem(key.public_key()))
    return private, public


def _seal(db_url: str, tmp_path: Path, name: str = "cp.json") -> tuple[Path, Path]:
    private, public = (
        _keys(tmp_path)
        if not (tmp_path / "seal.key").exists()
        else (tmp_path / "seal.key", tmp_path / "seal.key.pub")
    )
    out = tmp_path / name
    result = runner.invoke(cli_app, ["seal", "--db", db_url, "--key", str(private), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out, public


def _verify(db_url: str, checkpoint: Path, public: Path | None) -> int:
    args = ["verify", "--db", db_url, "--checkpoint", str(checkpoint), "--json"]
    if public is not None:
        args += ["--public-key", str(public)]
    return runner.invoke(cli_app, args).exit_code


def _rewrite_without_one_round(app: LedgerApp, raw, examples: Path, tmp_path: Path) -> None:
    """The attacker who runs the ledger's code: wipe the store (the stored checkpoints too, which
    ``ledger seal`` would otherwise continue from and refuse), re-ingest a feed that lacks one
    round. Every digest is recomputed, so the new store is self-consistent."""
    for notification_id, _ in raw.rows():
        raw.delete(notification_id)
    _drop_stored_checkpoints(raw)
    lines = (examples / "rl.jsonl").read_text(encoding="utf-8").splitlines()
    dropped_round = sorted({json.loads(ln)["round"] for ln in lines})[2]
    kept = [ln for ln in lines if json.loads(ln)["round"] != dropped_round]
    assert len(kept) < len(lines)
    forged = tmp_path / "forged-rl.jsonl"
    forged.write_text("\n".join(kept) + "\n", encoding="utf-8")
    with open(forged, encoding="utf-8") as stream:
        assert Ingestor(app, batch_events=40).ingest(numbered_lines(stream)).rejected == []
    with open(examples / "fpc.jsonl", encoding="utf-8") as stream:
        assert Ingestor(app, batch_events=40).ingest(numbered_lines(stream)).rejected == []


def _drop_stored_checkpoints(raw) -> None:
    """The stored checkpoints, and the Merkle log's tables: a seal would otherwise refuse a tree
    that no longer agrees with the rows (tests/merkle)."""
    from ledger.merkle.storage import MERKLE_TABLES

    tables = ("ledger_checkpoints", *MERKLE_TABLES)
    if raw.sqlite:
        import sqlite3

        with sqlite3.connect(raw.url[len("sqlite:///") :]) as conn:
            for table in tables:
                conn.execute(f"DROP TABLE IF EXISTS {table}")
        return
    from urllib.parse import parse_qs, urlsplit

    import psycopg

    schema = parse_qs(urlsplit(raw.url).query)["schema"][0]
    with psycopg.connect(raw.url.split("?")[0], autocommit=True) as conn:
        for table in tables:
            conn.execute(f'DROP TABLE IF EXISTS "{schema}".{table}')


def test_a_sealed_store_verifies_and_still_verifies_after_it_grows(app, db_url, examples, tmp_path) -> None:
    with open(examples / "rl.jsonl", encoding="utf-8") as stream:
        Ingestor(app, batch_events=40).ingest(numbered_lines(stream))
    checkpoint, public = _seal(db_url, tmp_path)
    sealed = json.loads(checkpoint.read_text())
    assert sealed["links"] == 2 and sealed["events"] == 70 + 5 + 2  # feed, table and link events
    assert _verify(db_url, checkpoint, public) == 0
    with open(examples / "fpc.jsonl", encoding="utf-8") as stream:
        Ingestor(app, batch_events=40).ingest(numbered_lines(stream))
    assert _verify(db_url, checkpoint, public) == 0


@pytest.mark.slow_postgres
def test_deleting_the_newest_saves_is_detected_by_the_checkpoint(
    app, db_url, raw, examples, tmp_path
) -> None:
    _fill(app, examples)
    checkpoint, public = _seal(db_url, tmp_path)
    rows = raw.rows()
    links = [i for i, s in rows if b'"type":"linked"' in s]
    for i, _ in rows:
        if i > links[-3]:  # the last two saves, events and links
            raw.delete(i)
    assert verify_store(app).exit_code == 0  # what is left is a consistent, shorter chain …
    assert _verify(db_url, checkpoint, public) == 3  # … that the checkpoint refutes
    assert any(
        "no chain link" in f.message
        for f in checkpoint_findings(app, parse_checkpoint(checkpoint.read_text()))
    )


@pytest.mark.slow_postgres
def test_history_rewritten_as_a_consistent_new_chain_is_detected(
    app, db_url, raw, examples, tmp_path
) -> None:
    _fill(app, examples)
    checkpoint, public = _seal(db_url, tmp_path)
    _rewrite_without_one_round(app, raw, examples, tmp_path)
    assert verify_store(app).exit_code == 0  # invisible from inside the store
    assert _verify(db_url, checkpoint, public) == 3
    found = checkpoint_findings(app, parse_checkpoint(checkpoint.read_text()))
    assert [f.code for f in found] == ["chain_broken"]
    assert "rewritten" in found[0].message or "no chain link" in found[0].message


def test_one_changed_byte_is_detected(app, db_url, raw, examples, tmp_path) -> None:
    _fill(app, examples)
    checkpoint, public = _seal(db_url, tmp_path)
    notification_id, state = next((i, s) for i, s in raw.rows() if b'"amount":"100"' in s)
    raw.set_state(notification_id, state.replace(b'"amount":"100"', b'"amount":"101"'))
    assert _verify(db_url, checkpoint, public) == 3


@pytest.mark.slow_postgres
def test_a_checkpoint_forged_with_another_key_fails_against_the_real_public_key(
    app, db_url, raw, examples, tmp_path
) -> None:
    _fill(app, examples)
    _, public = _seal(db_url, tmp_path)
    _rewrite_without_one_round(app, raw, examples, tmp_path)
    attacker = tmp_path / "attacker"
    attacker.mkdir()
    forged, attacker_public = _seal(db_url, attacker)
    assert _verify(db_url, forged, public) == 3  # the auditor's key refuses the forgery
    # Without --public-key only the checkpoint's own key is used: the forgery passes. This is
    # the documented limit (docs/SECURITY.md): an auditor must pin the public key.
    assert _verify(db_url, forged, None) == 0
    assert _verify(db_url, forged, attacker_public) == 0


def test_an_edited_checkpoint_fails_its_signature(app, db_url, examples, tmp_path) -> None:
    _fill(app, examples)
    checkpoint, public = _seal(db_url, tmp_path)
    body = json.loads(checkpoint.read_text())
    body["events"] -= 1
    checkpoint.write_text(json.dumps(body))
    assert _verify(db_url, checkpoint, public) == 3


def test_the_checkpoint_commits_to_the_link_version_and_event_count(app, examples) -> None:
    _fill(app, examples)
    scan = scan_chain(app)
    assert scan.ok and scan.position is not None
    pos = scan.position
    key = generate_key()
    assert checkpoint_findings(app, sign(pos, key)) == []
    wrong_count = sign(ChainPosition(pos.links, pos.events + 1, pos.head), key)
    assert "cover" in checkpoint_findings(app, wrong_count)[0].message
    wrong_version = sign(ChainPosition(pos.links - 1, pos.events, pos.head), key)
    assert "rewritten" in checkpoint_findings(app, wrong_version)[0].message
    beyond = sign(ChainPosition(pos.links + 1, pos.events, pos.head), key)
    assert "no chain link" in checkpoint_findings(app, beyond)[0].message


def test_a_broken_store_is_not_sealed(app, raw, examples) -> None:
    _fill(app, examples)
    notification_id, state = raw.rows()[5]
    _digest, content = unframe(state)
    raw.set_state(notification_id, state.replace(content[:20], content[:19] + b" "))
    with pytest.raises(SealError, match="does not verify"):
        seal_store(app, generate_key())


def test_the_key_can_come_from_the_environment_and_openssl_pem_is_read(
    tmp_path, monkeypatch, examples
) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    app = open_ledger(db)
    _fill(app, examples)
    app.close()
    key = generate_key()
    assert parse_private_key(private_pem(key)).public_key() == key.public_key()
    monkeypatch.setenv("LEDGER_SEAL_KEY", private_pem(key).decode())
    out = tmp_path / "cp.json"
    assert runner.invoke(cli_app, ["seal", "--db", db, "--out", str(out)]).exit_code == 0
    (tmp_path / "pub.pem").write_bytes(public_pem(key.public_key()))
    assert _verify(db, out, tmp_path / "pub.pem") == 0
    monkeypatch.delenv("LEDGER_SEAL_KEY")
    result = runner.invoke(cli_app, ["seal", "--db", db, "--out", str(out)])
    assert result.exit_code == 2
