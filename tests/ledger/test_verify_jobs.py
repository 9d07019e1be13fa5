"""``ledger verify --jobs N``: the same report as one pass, on clean, faulty and tampered stores."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app as cli
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import LedgerApp, open_ledger
from ledger.tools.simulate import simulate
from ledger.tools.simulators import simulated_games
from ledger.verify.engine import Selection, verify_store
from ledger.verify.partition import assign, verify_parallel
from tests.conftest import tiered


def _ingest(app: LedgerApp, lines: list[str]) -> None:
    report = Ingestor(app).ingest(numbered_lines(lines))
    assert not report.rejected, report.rejected[:3]


def _simulated(error_rate: float, rounds: int = 12, tables: int = 3) -> list[str]:
    return list(_simulated_once(error_rate, rounds, tables))


@cache
def _simulated_once(error_rate: float, rounds: int, tables: int) -> tuple[str, ...]:
    """:func:`_simulated`'s lines, made once for the tests of both stores."""
    games = simulated_games()
    sim = simulate(games, rounds=rounds, tables=tables, seed=7, error_rate=error_rate)
    return tuple(json.dumps(line, separators=(",", ":")) for line in sim.lines)


def _renamed(lines: list[str], table: str) -> list[str]:
    out = []
    for text in lines:
        obj = json.loads(text)
        obj["table"] = table
        out.append(json.dumps(obj))
    return out


def _same(db_url: str, app: LedgerApp, jobs: int, selection: Selection = Selection()) -> dict:
    one = verify_store(app, selection).to_json()
    many = verify_parallel(db_url, selection, jobs=jobs).to_json()
    assert many == one
    return one


@pytest.mark.slow_postgres
@pytest.mark.parametrize("jobs", tiered([2, 3], 1))
def test_a_faulty_simulated_store_gives_the_same_findings_in_the_same_order(
    db_url: str, app: LedgerApp, jobs: int
) -> None:
    _ingest(app, _simulated(error_rate=0.3, rounds=6))
    body = _same(db_url, app, jobs)
    assert len(body["findings"]) >= 5  # the comparison is about something
    assert len({f["table"] for f in body["findings"]}) >= 3  # spread over several workers


@pytest.mark.slow  # a second simulated store; the faulty-store test covers the workers by default
def test_a_selection_gives_the_same_report(db_url: str, app: LedgerApp) -> None:
    _ingest(app, _simulated(error_rate=0.3))
    table = next(iter(assign(app, 2)))
    body = _same(db_url, app, 2, Selection(table=table))
    assert body["rounds_checked"] == 12


def test_tables_sharing_a_jackpot_pool_go_to_one_worker_and_judge_alike(
    db_url: str, app: LedgerApp, examples: Path
) -> None:
    stud = (examples / "stud.jsonl").read_text().splitlines()
    others = [
        line
        for name in ("rl", "fpc", "3cb", "sp9", "mj")
        for line in (examples / f"{name}.jsonl").read_text().splitlines()
    ]
    _ingest(app, stud + _renamed(stud, "STUD-02") + others)
    for jobs in (2, 3, 4):
        assignment = assign(app, jobs)
        assert assignment["STUD-01"] == assignment["STUD-02"]
        assert set(assignment) == {"STUD-01", "STUD-02", "RL-01", "FPC-01", "3CB-01", "SP9-01", "MJ-01"}
    body = _same(db_url, app, 2)
    assert body["rounds_checked"] > 10


def test_a_tampered_store_reports_each_broken_row_once(db_url: str, app: LedgerApp, raw) -> None:
    _ingest(app, _simulated(error_rate=0.0, rounds=6, tables=2))
    rows = raw.rows()
    nid, state = rows[len(rows) // 2]
    raw.set_state(
        nid, state.replace(b'"amount":"', b'"amount":"1', 1) if b'"amount":"' in state else state[:-2] + b"}}"
    )
    raw.delete(rows[len(rows) // 3][0])
    body = _same(db_url, app, 2)
    assert body["integrity"] == "broken"
    assert 2 <= len([f for f in body["findings"] if f["code"] == "chain_broken"]) <= 4


def test_the_cli_prints_the_same_json_with_jobs(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    ledger = open_ledger(db)
    _ingest(ledger, _simulated(error_rate=0.3, rounds=4, tables=2))  # what is tested is the CLI
    ledger.close()
    runner = CliRunner()
    one = runner.invoke(cli, ["verify", "--db", db, "--json"])
    two = runner.invoke(cli, ["verify", "--db", db, "--json", "--jobs", "2"])
    assert one.exit_code == two.exit_code == 1
    assert json.loads(two.stdout) == json.loads(one.stdout)
    assert runner.invoke(cli, ["verify", "--db", db, "--jobs", "0"]).exit_code == 2
