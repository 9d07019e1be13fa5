"""``verify --sample N``: drawn rows re-hashed and proven against the signed note's root; a row
rewritten before the checkpoint, which ``verify --since`` cannot see, is caught when drawn."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app as cli_app
from ledger.merkle.sample import SampleError, draw, sample, unseen_chance
from ledger.merkle.sealing import seal_tree
from ledger.proof.checkpoints import seal
from ledger.proof.seal import generate_key, public_pem
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import LedgerApp
from tests.cli.conftest import check_schema

runner = CliRunner()


def _ingest(app: LedgerApp, path: Path) -> None:
    with open(path, encoding="utf-8") as stream:
        assert Ingestor(app, batch_events=40).ingest(numbered_lines(stream)).rejected == []


@pytest.fixture
def noted(app: LedgerApp, examples: Path) -> tuple[LedgerApp, Any, int]:
    key = generate_key()
    _ingest(app, examples / "rl.jsonl")
    size = seal_tree(app, key, seal(app, key).checkpoint).note.size
    _ingest(app, examples / "sp9.jsonl")  # rows after the note are not drawn
    return app, key, size


def test_every_drawn_row_is_proven(noted: tuple[LedgerApp, Any, int]) -> None:
    app, key, size = noted
    report = sample(app, 10**6, key.public_key(), seed=7)  # more than there are: all of them
    assert report.ok and report.drawn == list(range(size))
    assert report.hashes_read <= size * 2 * math.ceil(math.log2(size))
    some = sample(app, 5, key.public_key(), seed=7)
    assert some.drawn == draw(size, 5, 7) and len(set(some.drawn)) == 5
    assert some.drawn == sample(app, 5, key.public_key(), seed=7).drawn  # the seed repeats it
    with pytest.raises(SampleError, match="does not open") as caught:
        sample(app, 5, generate_key().public_key())
    assert caught.value.code == 3


def _rewrite_one_row(url: str, raw: Any) -> int:
    """Change one stored bet's amount in place, the append-only trigger dropped first."""
    raw.run(
        "DROP TRIGGER IF EXISTS ledger_no_update"
        if url.startswith("sqlite")
        else "DROP TRIGGER IF EXISTS ledger_append_only ON {events}"
    )
    target = next(i for i, s in raw.rows() if b"bet_placed" in s)
    state = dict(raw.rows())[target]
    raw.set_state(target, state.replace(b'"amount":"', b'"amount":"1', 1))
    return target


def test_a_rewritten_row_before_the_note_is_caught(
    noted: tuple[LedgerApp, Any, int], db_url: str, raw: Any
) -> None:
    app, key, size = noted
    target = _rewrite_one_row(db_url, raw)
    report = sample(app, size, key.public_key(), seed=1)
    assert len(report.problems) == 1 and f"row {target} " in report.problems[0]
    assert "changed, moved or replaced" in report.problems[0]


def test_unseen_chance() -> None:
    assert unseen_chance(10**8, 300, 0.01) < 0.05
    assert unseen_chance(10**8, 460, 0.01) < 0.01
    assert unseen_chance(100, 100, 0.01) == 0.0
    assert unseen_chance(100, 1, 0.01) == pytest.approx(0.99)
    assert unseen_chance(10, 0, 0.5) == 1.0


def test_the_command(noted: tuple[LedgerApp, Any, int], db_url: str, raw: Any, tmp_path: Path) -> None:
    _, key, size = noted
    pub = tmp_path / "op.pub"
    pub.write_bytes(public_pem(key.public_key()))
    result = runner.invoke(
        cli_app,
        ["verify", "--db", db_url, "--sample", "20", "--seed", "3", "--public-key", str(pub), "--json"],
    )
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    check_schema(body["sample"], "verify-sample")
    found = body["sample"]
    assert (found["rows"], found["size"], found["seed"], found["problems"]) == (20, size, 3, [])
    result = runner.invoke(cli_app, ["verify", "--db", db_url, "--sample", "20"])
    assert result.exit_code == 2 and "--public-key" in result.output
    result = runner.invoke(cli_app, ["verify", "--db", db_url, "--seed", "3"])
    assert result.exit_code == 2 and "--seed goes with --sample" in result.output
    _rewrite_one_row(db_url, raw)
    result = runner.invoke(
        cli_app, ["verify", "--db", db_url, "--sample", str(size), "--public-key", str(pub)]
    )
    assert result.exit_code == 3 and "1 do not match: integrity broken" in result.output
    # --since last does not read rows before the checkpoint: with --sample it catches the row.
    result = runner.invoke(
        cli_app, ["verify", "--db", db_url, "--since", "last", "--public-key", str(pub), "--no-projections"]
    )
    assert result.exit_code == 0, result.output
    result = runner.invoke(
        cli_app,
        [
            "verify",
            "--db",
            db_url,
            "--since",
            "last",
            "--sample",
            str(size),
            "--public-key",
            str(pub),
            "--json",
        ],
    )
    assert result.exit_code == 3 and json.loads(result.output)["sample"]["problems"]
    check_schema(json.loads(result.output), "verify")


def test_with_a_quorum_the_newest_cosigned_note_is_sampled(
    noted: tuple[LedgerApp, Any, int],
) -> None:
    from ledger.merkle.heads import add_cosignatures, latest_note
    from ledger.proof.note import cosign, cosigner_key, parse_note

    app, key, size = noted
    witness = generate_key()
    wkey = cosigner_key("regulator.example/w1", witness.public_key())
    with pytest.raises(SampleError, match="no checkpoint note with 1 valid") as caught:
        sample(app, 5, key.public_key(), witnesses=[wkey], quorum=1)
    assert caught.value.code == 3
    first = latest_note(app)
    assert first is not None
    line = cosign(parse_note(first.note).text, "regulator.example/w1", witness, 1_700_000_000)
    add_cosignatures(app, first.size, [line.line()])
    seal_tree(app, key, seal(app, key).checkpoint)  # a newer note, not cosigned
    report = sample(app, 5, key.public_key(), witnesses=[wkey], quorum=1)
    assert report.ok and report.size == size  # the cosigned one, not the newest
    assert sample(app, 5, key.public_key()).size > size  # without a quorum: the newest
