"""A round's bundle with a Merkle proof: written by ``export-round --merkle``, proven offline by
``check-bundle``, broken by any change to the round, the proof, the note or the checkpoint; and
``init --origin``, ``seal --out`` (the note file) and ``seal --list`` (the origin) on the way."""

from __future__ import annotations

import base64
import copy
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app as cli_app
from ledger.merkle.sealing import seal_tree
from ledger.proof.bundle import bundle_items, check_bundle, export_round, with_items
from ledger.proof.checkpoints import seal
from ledger.proof.seal import Checkpoint, generate_key, private_pem, public_pem
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import LedgerApp, open_ledger

runner = CliRunner()


def _run(*args: str) -> tuple[int, str]:
    result = runner.invoke(cli_app, list(args))
    return result.exit_code, result.output


EXAMPLES = Path(os.environ["LEDGER_EXAMPLES"])
"""The example feeds (set by the tests' conftest before this module is imported)."""


def _ingest(app: LedgerApp, path: Path) -> None:
    with open(path, encoding="utf-8") as stream:
        assert Ingestor(app, batch_events=40).ingest(numbered_lines(stream)).rejected == []


@pytest.fixture(scope="module")
def sealed(module_db_url: str) -> Iterator[tuple[LedgerApp, Checkpoint, dict[str, Any]]]:
    """One sealed store, checkpoint and bundle per backend for the module: the tests change
    copies of the bundle, and check it without the store (a later seal leaves both as made)."""
    app = open_ledger(module_db_url)
    _ingest(app, EXAMPLES / "stud.jsonl")
    key = generate_key()
    checkpoint = seal(app, key).checkpoint
    seal_tree(app, key, checkpoint)
    _ingest(app, EXAMPLES / "rl.jsonl")  # rows after the seal: the proof is to the note
    yield app, checkpoint, export_round(app, "STUD-01", "000001", checkpoint, merkle=True)
    app.close()


def test_a_merkle_bundle_proves_the_round(sealed: tuple[LedgerApp, Checkpoint, Any]) -> None:
    _, checkpoint, bundle = sealed
    assert "links" not in bundle and len(bundle["merkle"]["proof"]) <= 8
    result = check_bundle(bundle, checkpoint)
    assert result.ok, result.problems
    assert result.events == len(bundle_items(bundle)) and result.closed
    assert bundle["format"] == "ledger-bundle-v2" and result.judged and result.findings == []


@pytest.mark.parametrize("tamper", ["content", "proof", "index", "note", "short-proof"])
def test_a_changed_bundle_is_broken(sealed: tuple[LedgerApp, Checkpoint, Any], tamper: str) -> None:
    _, checkpoint, bundle = sealed
    bad = copy.deepcopy(bundle)
    merkle = bad["merkle"]
    if tamper == "content":  # the last event rewritten, its digest recomputed: the chain holds
        from ledger.codec.chain import next_digest

        items = bundle_items(bad)
        last = items[-1]
        last["content"] = last["content"].replace('"seq":', '"seq": ', 1)
        last["digest"] = next_digest(items[-2]["digest"], last["content"].encode())
        bad = with_items(bad, items)
    elif tamper == "proof":
        first = base64.b64decode(merkle["proof"][0])
        merkle["proof"][0] = base64.b64encode(bytes([first[0] ^ 1]) + first[1:]).decode()
    elif tamper == "index":
        merkle["index"] += 1
    elif tamper == "note":
        merkle["note"] = merkle["note"].replace("\n", "\n\n", 1)
    else:
        merkle["proof"] = merkle["proof"][:-1]
    problems = check_bundle(bad, checkpoint).problems
    assert problems
    if tamper in ("content", "proof", "index"):
        assert "is not leaf" in problems[0]


def test_another_seal_or_key_is_refused(sealed: tuple[LedgerApp, Checkpoint, Any]) -> None:
    app, _, bundle = sealed
    other_key = generate_key()
    later = seal(app, other_key, full=True).checkpoint  # another key, another seal
    problems = check_bundle(bundle, later).problems
    assert problems and "not signed by the checkpoint's key" in problems[0]


def test_the_commands_end_to_end(db_url: str, examples: Path, tmp_path: Path) -> None:
    key = generate_key()
    (tmp_path / "op.key").write_bytes(private_pem(key))
    (tmp_path / "op.key.pub").write_bytes(public_pem(key.public_key()))
    assert _run("init", "--db", db_url, "--origin", "casino.example/floor-1")[0] == 0
    code, out = _run("init", "--db", db_url, "--origin", "casino.example/other")
    assert code == 2 and "set once" in out
    assert _run("ingest", str(examples / "stud.jsonl"), "--db", db_url)[0] == 0
    code, out = _run(
        "seal", "--db", db_url, "--key", str(tmp_path / "op.key"), "--out", str(tmp_path / "cp.json")
    )
    assert code == 0, out
    assert "checkpoint note signed: casino.example/floor-1, tree of " in out
    note = (tmp_path / "cp.note").read_text()
    assert note.startswith("casino.example/floor-1\n") and "\n\n\u2014 casino.example/floor-1 " in note
    code, out = _run("seal", "--db", db_url, "--list")
    assert code == 0 and out.splitlines()[0] == "origin: casino.example/floor-1"
    bundle = tmp_path / "round.json"
    code, out = _run(
        "export-round",
        "STUD-01/000001",
        "--db",
        db_url,
        "--bundle",
        str(bundle),
        "--merkle",
        "--checkpoint",
        str(tmp_path / "cp.json"),
    )
    assert code == 0 and "Merkle proof of leaf" in out, out
    code, out = _run(
        "check-bundle",
        str(bundle),
        "--checkpoint",
        str(tmp_path / "cp.json"),
        "--public-key",
        str(tmp_path / "op.key.pub"),
    )
    assert code == 0 and out.startswith("proof ok: STUD-01/000001"), out
    obj = json.loads(bundle.read_text())
    obj["merkle"]["index"] = 0
    bundle.write_text(json.dumps(obj))
    code, out = _run(
        "check-bundle",
        str(bundle),
        "--checkpoint",
        str(tmp_path / "cp.json"),
        "--public-key",
        str(tmp_path / "op.key.pub"),
    )
    assert code == 3 and "is not leaf 0" in out


@pytest.mark.parametrize(
    "merkle",
    [
        {"index": 0, "size": 1, "proof": ["AAAA"] * 65, "note": ""},
        {"index": "0", "size": 10, "proof": [], "note": None},
        {"index": 0, "size": 10, "proof": "not a list", "note": "x\n\n"},
        {"index": -1, "size": 10**30, "proof": ["!!"], "note": "\u2014 " * 10000},
        {},
    ],
)
def test_hostile_merkle_sections_are_refused_cleanly(
    sealed: tuple[LedgerApp, Checkpoint, Any], merkle: dict[str, Any]
) -> None:
    _, checkpoint, bundle = sealed
    bad = {**bundle, "merkle": merkle}
    result = check_bundle(bad, checkpoint)
    assert not result.ok and len(result.problems) == 1
