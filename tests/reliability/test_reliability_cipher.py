"""Encryption at rest: with ``LEDGER_CIPHER_KEY`` the stored bytes hold no card, amount or player
in clear, while verify and replay work the same and chain digests stay over the plaintext."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eventsourcing.cryptography import AESCipher

from ledger.codec.chain import FrameError
from ledger.domain.round import round_id
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import LedgerApp, open_ledger
from ledger.verify.engine import verify_store

FEEDS = ("rl.jsonl", "3cb.jsonl")


def _ingest(app: LedgerApp, examples: Path) -> list[dict]:
    lines: list[dict] = []
    for name in FEEDS:
        with open(examples / name, encoding="utf-8") as stream:
            assert Ingestor(app, batch_events=40).ingest(numbered_lines(stream)).rejected == []
        lines += [json.loads(ln) for ln in (examples / name).read_text().splitlines() if ln]
    return lines


def _secrets(lines: list[dict]) -> set[bytes]:
    """Byte strings that must not appear in clear: amounts, cards, players, key names."""
    found: set[bytes] = {b'"amount"', b'"card"', b'"player"', b"round_opened", b"bet_placed"}
    for obj in lines:
        for key in ("amount", "card", "player"):
            if key in obj:
                found.add(json.dumps(obj[key]).encode())
    return found


@pytest.fixture
def cipher_key(monkeypatch: pytest.MonkeyPatch) -> str:
    key = AESCipher.create_key(32)
    monkeypatch.setenv("LEDGER_CIPHER_KEY", key)
    return key


def test_stored_bytes_hold_nothing_in_clear_and_verify_and_replay_work(
    db_url, raw, examples, cipher_key
) -> None:
    app = open_ledger(db_url)
    try:
        lines = _ingest(app, examples)
        report = verify_store(app)
        assert (report.exit_code, report.findings) == (0, [])
        assert report.rounds_checked == len({(o["table"], o["round"]) for o in lines})
        first = lines[0]
        rnd = app.load_round(first["table"], first["round"])
        assert rnd is not None and rnd.ended_by is not None and rnd.version > 3
    finally:
        app.close()
    secrets = _secrets(lines)
    assert len(secrets) > 10 and any(s == b'"AS"' or s.startswith(b'"') for s in secrets)
    rows = raw.rows()
    assert len(rows) == report.events
    leaks = [(i, s) for i, (_, state) in enumerate(rows) for s in secrets if s in state]
    assert leaks == []


def test_round_digests_are_over_the_plaintext_so_they_equal_an_unencrypted_store(
    db_url, examples, tmp_path, monkeypatch
) -> None:
    plain = open_ledger(f"sqlite:///{tmp_path / 'plain.db'}")
    _ingest(plain, examples)
    monkeypatch.setenv("LEDGER_CIPHER_KEY", AESCipher.create_key(16))
    secret = open_ledger(db_url)
    try:
        _ingest(secret, examples)
        oid = round_id("RL-01", json.loads((examples / "rl.jsonl").read_text().splitlines()[0])["round"])
        assert [r.digest for r in plain.stored(oid)] == [r.digest for r in secret.stored(oid)]
    finally:
        plain.close()
        secret.close()


def test_a_changed_ciphertext_byte_is_detected(db_url, raw, examples, cipher_key) -> None:
    app = open_ledger(db_url)
    try:
        _ingest(app, examples)
        notification_id, state = raw.rows()[7]
        raw.set_state(notification_id, state[:-3] + bytes([state[-3] ^ 1]) + state[-2:])
        report = verify_store(app)
        assert report.exit_code == 3
        assert "cannot decrypt" in report.findings[0].message
    finally:
        app.close()


def test_without_the_key_the_store_cannot_be_read(db_url, examples, cipher_key, monkeypatch) -> None:
    app = open_ledger(db_url)
    _ingest(app, examples)
    app.close()
    monkeypatch.delenv("LEDGER_CIPHER_KEY")
    blind = open_ledger(db_url)
    try:
        assert verify_store(blind).exit_code == 3  # documented: a missing key looks like damage
        with pytest.raises(FrameError):
            blind.load_round("RL-01", "x") or blind.head()
    finally:
        blind.close()
