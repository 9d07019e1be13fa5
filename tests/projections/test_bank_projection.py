"""The SP9 bank view and ``ledger bank``: runs, capital, layers, carry-over and breaches, folded
from a store on both backends, agreeing with verify."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app as cli
from ledger.games import GAMES
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import LedgerApp
from ledger.tools.simulate import simulate
from ledger.verify.engine import verify_store
from projections.bank import BankView, round_key, run_key, table_key
from projections.base import MemoryRows, closed_rounds, fold_store

runner = CliRunner()


def _ingest(app: LedgerApp, lines: list[str]) -> None:
    report = Ingestor(app).ingest(numbered_lines(lines))
    assert not report.rejected, report.rejected


def test_the_example_feed_folds_into_one_run_with_its_carry(app: LedgerApp, examples: Path) -> None:
    _ingest(app, (examples / "sp9.jsonl").read_text().splitlines())
    rows = fold_store(app, BankView()).rows
    summary = rows[table_key("SP9-01")]
    assert {
        k: summary[k]
        for k in (
            "rounds",
            "runs",
            "banker",
            "run",
            "capital",
            "carry",
            "bank_result",
            "bank_commission",
            "breaches",
        )
    } == {
        "rounds": 2,
        "runs": 1,
        "banker": 1,
        "run": 2,
        "capital": "3617.5",
        "carry": "4235.00",
        "bank_result": "1300",
        "bank_commission": "65.00",
        "breaches": 0,
    }
    first = rows[round_key("SP9-01", 1)]
    assert first["layers"] == [
        {
            "party": "banker",
            "capital": "3000",
            "share": "650",
            "commission": "32.50",
            "recorded_share": "650",
            "recorded_commission": "32.5",
        }
    ]
    assert first["carry"] == "3617.50" and first["breaches"] == []
    assert rows[run_key("SP9-01", 1)] == {
        "table": "SP9-01",
        "seat": 1,
        "first_round": "000001",
        "last_round": "000002",
        "rounds": 2,
        "extended": False,
        "capital_start": "3000",
        "capital_end": "3617.5",
        "net": "1235.00",
    }


@pytest.mark.slow_postgres
def test_breaches_in_the_view_are_exactly_verifys_findings(app: LedgerApp) -> None:
    sim = simulate([GAMES["SP9"]], rounds=40, tables=2, seed=11, error_rate=0.25)
    assert sim.injected
    _ingest(app, [json.dumps(line) for line in sim.lines])
    rows = fold_store(app, BankView()).rows
    viewed = sorted(
        (r["table"], r["round"], b["code"], b["bet"] or "")
        for k, r in rows.items()
        if ":round:" in k
        for b in r["breaches"]
    )
    verified = sorted((f.table or "", f.round or "", f.code, f.bet or "") for f in verify_store(app).findings)
    assert viewed == verified
    assert len(viewed) == len(sim.injected)


def test_folding_in_two_halves_equals_one_fold(app: LedgerApp) -> None:
    sim = simulate([GAMES["SP9"]], rounds=20, tables=1, seed=4)
    _ingest(app, [json.dumps(line) for line in sim.lines])
    rounds = [r for _, r in closed_rounds(app)]
    once = fold_store(app, BankView()).rows
    halves = MemoryRows()
    for rnd in rounds[:7]:
        BankView().apply(rnd, halves)
    resumed = MemoryRows(json.loads(json.dumps(halves.rows)))  # as stored and read back
    for rnd in rounds[7:]:
        BankView().apply(rnd, resumed)
    assert resumed.rows == once


def test_ledger_bank_prints_text_json_and_csv(tmp_path: Path, examples: Path) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    assert runner.invoke(cli, ["ingest", str(examples / "sp9.jsonl"), "--db", db]).exit_code == 0
    text = runner.invoke(cli, ["bank", "--db", db])
    assert text.exit_code == 0, text.output
    assert "table SP9-01" in text.stdout and "must carry at least 4,235.00" in text.stdout
    body = json.loads(runner.invoke(cli, ["bank", "--db", db, "--json"]).stdout)
    (table,) = body["tables"]
    assert table["table"] == "SP9-01" and len(table["rounds"]) == 2 and "state" not in table
    csv = runner.invoke(cli, ["bank", "--db", db, "--csv", "--table", "SP9-01"]).stdout
    assert csv.splitlines()[1].startswith("SP9-01,000001,") and len(csv.splitlines()) == 3
    assert runner.invoke(cli, ["bank", "--db", db, "--table", "NOPE"]).exit_code == 2
    assert runner.invoke(cli, ["bank", "--db", db, "--json", "--csv"]).exit_code == 2


def test_replay_shows_hands_and_the_running_bank_balance(tmp_path: Path, examples: Path) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    runner.invoke(cli, ["ingest", str(examples / "sp9.jsonl"), "--db", db])
    result = runner.invoke(cli, ["replay", "SP9-01/000001", "--db", db, "--json"])
    assert result.exit_code == 0
    steps = [s["text"] for s in json.loads(result.stdout)["derivation"]]
    assert "banker (seat 1): 9D QH = 9 points" in steps
    assert "b3 on seat 4 (300.00): lose, collected 300.00; W = 650.00" in steps
