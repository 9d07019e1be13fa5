"""Proof bundles: one round checked against a signed checkpoint with no database at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app as cli_app
from ledger.proof.bundle import BundleError, check_bundle, export_round, parse_bundle
from ledger.proof.seal import generate_key, private_pem, public_pem, seal_store
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import LedgerApp

runner = CliRunner()


def _ingest(app: LedgerApp, feed: Path) -> None:
    with open(feed, encoding="utf-8") as stream:
        assert Ingestor(app, batch_events=40).ingest(numbered_lines(stream)).rejected == []


def _rounds(feed: Path) -> list[tuple[str, str]]:
    seen: dict[tuple[str, str], None] = {}
    for line in feed.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        seen[(obj["table"], obj["round"])] = None
    return list(seen)


def test_every_round_of_a_sealed_store_is_proven_offline(app, examples) -> None:
    _ingest(app, examples / "rl.jsonl")
    key = generate_key()
    checkpoint = seal_store(app, key)
    for table, round in _rounds(examples / "rl.jsonl"):
        bundle = parse_bundle(json.dumps(export_round(app, table, round)))
        result = check_bundle(bundle, checkpoint)
        assert result.ok, result.problems
        assert result.closed and result.events == len(result.facts) > 3
        assert [f.seq for f in result.facts] == list(range(1, result.events + 1))


def test_a_bundle_exported_later_still_proves_against_an_earlier_checkpoint(app, examples) -> None:
    _ingest(app, examples / "rl.jsonl")
    early = seal_store(app, generate_key())
    _ingest(app, examples / "fpc.jsonl")
    table, round = _rounds(examples / "rl.jsonl")[-1]
    bundle = export_round(app, table, round)  # links up to the newest head, beyond `early`
    assert bundle["links"]["items"][-1]["version"] > early.position.links
    assert check_bundle(bundle, early).ok
    pinned = export_round(app, table, round, early)
    assert pinned["links"]["items"][-1]["version"] == early.position.links


def test_a_round_saved_after_the_checkpoint_is_not_proven_by_it(app, examples) -> None:
    _ingest(app, examples / "rl.jsonl")
    early = seal_store(app, generate_key())
    _ingest(app, examples / "fpc.jsonl")
    table, round = _rounds(examples / "fpc.jsonl")[0]
    result = check_bundle(export_round(app, table, round), early)
    assert not result.ok and "after the checkpoint" in result.problems[0]
    with pytest.raises(BundleError, match=r"newer than the checkpoint|no chain link"):
        export_round(app, table, round, early)


@pytest.mark.parametrize("attack", ["amount", "drop_last_event", "drop_link", "digest", "rename"])
def test_every_edit_of_a_bundle_breaks_the_proof(attack: str, tmp_path: Path, examples: Path) -> None:
    from ledger.storage.store import open_ledger

    app = open_ledger(f"sqlite:///{tmp_path / 'l.db'}")
    _ingest(app, examples / "rl.jsonl")
    _ingest(app, examples / "fpc.jsonl")
    checkpoint = seal_store(app, generate_key())
    table, round = _rounds(examples / "rl.jsonl")[1]
    bundle = export_round(app, table, round)
    app.close()
    events, links = bundle["events"], bundle["links"]["items"]
    if attack == "amount":
        item = next(e for e in events if '"amount":"' in e["content"])
        item["content"] = item["content"].replace('"amount":"', '"amount":"1', 1)
    elif attack == "drop_last_event":
        events.pop()
    elif attack == "drop_link":
        links.pop(len(links) // 2) if len(links) > 2 else links.pop()
    elif attack == "digest":
        events[-1]["digest"] = "0" * 64
    elif attack == "rename":
        bundle["round"] = "999999"
    result = check_bundle(bundle, checkpoint)
    assert not result.ok, attack


def test_the_cli_exports_and_checks_a_bundle_and_refuses_a_wrong_key(tmp_path: Path, examples: Path) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    assert runner.invoke(cli_app, ["ingest", str(examples / "fpc.jsonl"), "--db", db]).exit_code == 0
    key, other = generate_key(), generate_key()
    (tmp_path / "k").write_bytes(private_pem(key))
    (tmp_path / "k.pub").write_bytes(public_pem(key.public_key()))
    (tmp_path / "other.pub").write_bytes(public_pem(other.public_key()))
    cp, bundle = tmp_path / "cp.json", tmp_path / "b.json"
    assert (
        runner.invoke(cli_app, ["seal", "--db", db, "--key", str(tmp_path / "k"), "--out", str(cp)]).exit_code
        == 0
    )
    table, round = _rounds(examples / "fpc.jsonl")[0]
    result = runner.invoke(
        cli_app,
        ["export-round", f"{table}/{round}", "--bundle", str(bundle), "--db", db, "--checkpoint", str(cp)],
    )
    assert result.exit_code == 0, result.output
    (tmp_path / "l.db").unlink()  # no database from here on
    ok = runner.invoke(
        cli_app,
        [
            "check-bundle",
            str(bundle),
            "--checkpoint",
            str(cp),
            "--public-key",
            str(tmp_path / "k.pub"),
            "--json",
        ],
    )
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["proof"] == "ok"
    wrong = runner.invoke(
        cli_app,
        ["check-bundle", str(bundle), "--checkpoint", str(cp), "--public-key", str(tmp_path / "other.pub")],
    )
    assert wrong.exit_code == 3
    assert (
        runner.invoke(cli_app, ["export-round", "nope", "--bundle", str(bundle), "--db", db]).exit_code == 2
    )
