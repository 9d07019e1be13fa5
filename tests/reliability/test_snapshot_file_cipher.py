"""The snapshot file ``seal --out`` writes beside a checkpoint, encrypted under
``LEDGER_CIPHER_KEY``, is read whatever its first bytes are.

An encrypted file starts with the cipher's random 12-byte nonce. The reader used to take a file
whose bytes, blanks stripped, began with ``{`` for a plain snapshot: one encrypted file in about
250 was then "not a snapshot" and ``verify --since FILE`` exited 3 with nothing on stderr (the
finding is in the report on stdout). Here the nonce is chosen, so each case is met every run, on
each store.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from eventsourcing.cryptography import AESCipher
from typer.testing import CliRunner

from cli.main import app as cli_app
from ledger.games import GAMES
from ledger.proof.checkpoints import load_snapshot, seal, snapshot_file_bytes, write_snapshot_file
from ledger.proof.seal import Checkpoint, generate_key, public_pem
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import CIPHER_KEY_ENV, open_ledger
from ledger.tools.simulate import simulate
from ledger.verify.snapshot import Snapshot, SnapshotError

runner = CliRunner()
KEY = generate_key()

LEADS = (b"{", b" {", b"\n{", b"\t\r\x0b\x0c{")
"""Nonces that begin like JSON text: ``{``, or ASCII blanks then ``{``."""


def _ingest(url: str, lines: list[dict[str, Any]], path: Path) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    app = open_ledger(url)
    try:
        with open(path, encoding="utf-8") as stream:
            assert Ingestor(app, batch_events=60).ingest(numbered_lines(stream)).rejected == []
    finally:
        app.close()


@pytest.fixture
def sealed(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Checkpoint, Snapshot]]:
    """An encrypted store sealed half-way (its checkpoint written to ``cp.json``), then filled."""
    monkeypatch.setenv(CIPHER_KEY_ENV, AESCipher.create_key(32))
    public = tmp_path / "seal.key.pub"
    public.write_bytes(public_pem(KEY.public_key()))
    monkeypatch.setenv("LEDGER_SEAL_PUBLIC_KEY", str(public))
    lines = _lines()
    cut = len(lines) // 2 + 3  # rounds in play at the checkpoint
    _ingest(db_url, lines[:cut], tmp_path / "a.jsonl")
    app = open_ledger(db_url)
    try:
        done = seal(app, KEY)
    finally:
        app.close()
    (tmp_path / "cp.json").write_text(done.checkpoint.dumps(), encoding="utf-8")
    _ingest(db_url, lines[cut:], tmp_path / "b.jsonl")
    yield done.checkpoint, done.snapshot


def _lines() -> list[dict[str, Any]]:
    return simulate([GAMES["3CB"], GAMES["STUD"]], rounds=4, tables=1, seed=7, error_rate=0.0).lines


def _write_encrypted(
    url: str, snapshot: Snapshot, out: Path, lead: bytes, monkeypatch: pytest.MonkeyPatch
) -> bytes:
    """Write the snapshot file as ``seal --out`` does, under a nonce that starts with ``lead``."""
    with monkeypatch.context() as m:
        m.setattr(AESCipher, "random_bytes", staticmethod(lambda n: (lead + os.urandom(n))[:n]))
        app = open_ledger(url)
        try:
            data = snapshot_file_bytes(app, snapshot)
        finally:
            app.close()
    write_snapshot_file(out, data)
    assert data.startswith(lead) and not data.isascii()  # encrypted, and begins like JSON
    return data


def _verify_since(url: str, out: Path) -> tuple[int, dict[str, Any], str]:
    result = runner.invoke(cli_app, ["verify", "--db", url, "--since", str(out), "--json"])
    try:
        body = json.loads(result.stdout)
    except ValueError:
        body = {}
    return result.exit_code, body, result.stderr


@pytest.mark.parametrize("lead", LEADS)
@pytest.mark.slow_postgres
def test_verify_since_reads_an_encrypted_snapshot_file_that_begins_like_json(
    db_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    sealed: tuple[Checkpoint, Snapshot],
    lead: bytes,
) -> None:
    checkpoint, snapshot = sealed
    out = tmp_path / "cp.json"
    _write_encrypted(db_url, snapshot, out, lead, monkeypatch)
    code, body, err = _verify_since(db_url, out)
    findings = [f.get("message") for f in body.get("findings", [])]
    assert code == 0, (err, findings)
    assert body["since"]["snapshot_source"] == "file"
    assert body["since"]["position"] == snapshot.position == checkpoint.row


def test_what_an_encrypted_file_that_begins_like_json_says_without_its_key(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sealed: tuple[Checkpoint, Snapshot]
) -> None:
    """Read with no cipher key it is said to be encrypted, and with another key not to
    decrypt: never "not a snapshot (edited?)". A plain file (sealed without a cipher key) is
    still read with a key set."""
    checkpoint, snapshot = sealed
    out = tmp_path / "cp.json"
    _write_encrypted(db_url, snapshot, out, b"{", monkeypatch)
    with monkeypatch.context() as m:
        m.delenv(CIPHER_KEY_ENV)
        app = open_ledger(db_url)
        try:
            with pytest.raises(SnapshotError, match=f"is encrypted: set {CIPHER_KEY_ENV}"):
                load_snapshot(app, checkpoint, str(out))
        finally:
            app.close()
    with monkeypatch.context() as m:
        m.setenv(CIPHER_KEY_ENV, AESCipher.create_key(32))
        app = open_ledger(db_url)
        try:
            with pytest.raises(SnapshotError, match=f"cannot be decrypted under {CIPHER_KEY_ENV}"):
                load_snapshot(app, checkpoint, str(out))
        finally:
            app.close()
    write_snapshot_file(out, snapshot)  # plain canonical bytes
    app = open_ledger(db_url)
    try:
        assert load_snapshot(app, checkpoint, str(out)) == (snapshot, "file")
    finally:
        app.close()
    code, body, err = _verify_since(db_url, out)
    assert code == 0 and body["since"]["snapshot_source"] == "file", err
