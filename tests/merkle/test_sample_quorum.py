"""``verify --sample N --witness-key FILE --quorum K``: the spot audit trusts a note only with K
valid cosignatures of the given witnesses, and refuses (exit 3, one line) when the store holds
none; with the quorum the draw is made against the newest note that has it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from typer.testing import CliRunner

from cli.main import app as cli_app
from ledger.merkle.heads import add_cosignatures
from ledger.merkle.sealing import seal_tree
from ledger.proof.checkpoints import seal
from ledger.proof.note import cosign
from ledger.proof.seal import generate_key, public_pem
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import LedgerApp
from ledger.witness.keys import load_signing_key

runner = CliRunner()


def _ingest(app: LedgerApp, path: Path) -> None:
    with open(path, encoding="utf-8") as stream:
        assert Ingestor(app, batch_events=40).ingest(numbered_lines(stream)).rejected == []


def _witness(folder: Path, name: str) -> tuple[Ed25519PrivateKey, str, str]:
    path = folder / name
    ran = runner.invoke(
        cli_app, ["witness", "keygen", "--out", str(path), "--name", f"regulator.example/{name}"]
    )
    assert ran.exit_code == 0, ran.output
    signer = load_signing_key(str(path))
    return signer.private_key, signer.name, str(path) + ".vkey"


def _sample(db_url: str, pub: Path, *witness_keys: str, quorum: int) -> Any:
    keys = [x for k in witness_keys for x in ("--witness-key", k)]
    args = ["verify", "--db", db_url, "--sample", "5", "--seed", "3", "--public-key", str(pub)]
    return runner.invoke(cli_app, [*args, *keys, "--quorum", str(quorum)])


def test_sample_needs_the_quorum(app: LedgerApp, db_url: str, examples: Path, tmp_path: Path) -> None:
    key = generate_key()
    pub = tmp_path / "seal.pub"
    pub.write_bytes(public_pem(key.public_key()))
    _ingest(app, examples / "rl.jsonl")
    first = seal_tree(app, key, seal(app, key).checkpoint).note
    _ingest(app, examples / "sp9.jsonl")
    second = seal_tree(app, key, seal(app, key).checkpoint).note
    w1, w2 = _witness(tmp_path, "w1"), _witness(tmp_path, "w2")
    refused = _sample(db_url, pub, w1[2], w2[2], quorum=2)
    assert refused.exit_code == 3, refused.output
    lines = refused.output.strip().splitlines()
    assert len(lines) == 1 and "no checkpoint note with 2 valid cosignatures" in lines[0]
    # both witnesses cosign the first note only: the draw is made against it
    text = first.body.text()
    add_cosignatures(app, first.size, [cosign(text, w[1], w[0], 1_700_000_000).line() for w in (w1, w2)])
    ran = _sample(db_url, pub, w1[2], w2[2], quorum=2)
    assert ran.exit_code == 0, ran.output
    assert f"of the {first.size} rows" in ran.output and first.size < second.size
    # one cosignature on the newest is not enough for a quorum of 2, and a forged one never counts
    forged = cosign(second.body.text(), w2[1], Ed25519PrivateKey.generate(), 1_700_000_001).line()
    add_cosignatures(
        app, second.size, [cosign(second.body.text(), w1[1], w1[0], 1_700_000_001).line(), forged]
    )
    again = _sample(db_url, pub, w1[2], w2[2], quorum=2)
    assert again.exit_code == 0 and f"of the {first.size} rows" in again.output
    one = _sample(db_url, pub, w1[2], w2[2], quorum=1)
    assert one.exit_code == 0 and f"of the {second.size} rows" in one.output
