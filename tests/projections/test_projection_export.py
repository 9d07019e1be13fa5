"""Exports: CSV and Parquet agree, the Beancount journal passes bean-check with balances equal to
the projections, and the manifest's digests match the files."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from datetime import date
from decimal import Decimal
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from cli.main import app as cli_app
from ledger.services.ingest import ingest_file
from ledger.storage.store import LedgerApp
from projections.commission import CommissionView, commission_report
from projections.export import export
from projections.house import HouseView
from projections.updater import view_rows

GAME_FILES = ["rl.jsonl", "fpc.jsonl", "sp9.jsonl", "3cb.jsonl", "stud.jsonl", "mj.jsonl"]
BEAN_CHECK = Path(sys.executable).with_name("bean-check")


def _ingest(app: LedgerApp, examples: Path) -> None:
    for name in GAME_FILES:
        ingest_file(app, examples / name)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_export_writes_every_table_with_a_matching_manifest(
    app: LedgerApp, examples: Path, tmp_path: Path
) -> None:
    _ingest(app, examples)
    manifest = export(app, tmp_path / "out")
    out = tmp_path / "out"
    names = {f["name"] for f in manifest.files}
    assert names == {
        f"{t}.{ext}"
        for t in ("rounds", "bets", "settlements", "commission", "projections")
        for ext in ("csv", "parquet")
    } | {"house.beancount"}
    for f in manifest.files:
        assert _sha(out / f["name"]) == f["sha256"]
    sums = dict(reversed(line.split("  ")) for line in (out / "SHA256SUMS").read_text().splitlines())
    assert sums["MANIFEST.json"] == _sha(out / "MANIFEST.json")
    assert json.loads((out / "MANIFEST.json").read_text())["store_head"] == app.head()
    rounds = pq.read_table(out / "rounds.parquet").to_pylist()
    assert len(rounds) == 22 == manifest.files[0]["rows"]
    csv_lines = (out / "rounds.csv").read_text().splitlines()
    assert len(csv_lines) == 23
    commission = sum((r["commission"] for r in rounds), Decimal(0))
    assert isinstance(commission, Decimal)
    settlements = pq.read_table(out / "settlements.parquet").to_pylist()
    recorded = sum((r["commission"] for r in settlements), Decimal(0))
    [hkd, mop] = commission_report(view_rows(app, CommissionView())).totals
    # bets and SP9 bank layers; the Mah-Jong fee (MOP) is a commission_charged, not a settlement
    assert recorded == hkd.recorded == Decimal("102.50")
    assert mop.recorded == Decimal("10")
    assert commission == hkd.recorded + mop.recorded  # rounds.commission includes every kind


def test_the_same_store_exports_byte_identical_files(app: LedgerApp, examples: Path, tmp_path: Path) -> None:
    _ingest(app, examples)
    first = export(app, tmp_path / "a", formats=["csv", "beancount"])
    second = export(app, tmp_path / "b", formats=["csv", "beancount"])
    assert [f["sha256"] for f in first.files] == [f["sha256"] for f in second.files]


@pytest.mark.slow_postgres
def test_the_beancount_journal_passes_bean_check_with_the_projection_balances(
    app: LedgerApp, examples: Path, tmp_path: Path
) -> None:
    _ingest(app, examples)
    export(app, tmp_path, formats=["beancount"])
    journal = tmp_path / "house.beancount"
    check = subprocess.run([str(BEAN_CHECK), str(journal)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    text = journal.read_text()
    assert "2026-11-21 balance Income:Commission:Bets:3CB-01" in text
    balances = {
        " ".join(line.split()[2:3]) + " " + line.split()[-1]: Decimal(line.split()[-2])
        for line in text.splitlines()
        if " balance " in line
    }
    report = commission_report(view_rows(app, CommissionView()), by="table")
    for line in report.lines:
        booked = sum(
            (
                balances.get(f"Income:Commission:{k}:{line.group} {line.currency}", Decimal(0))
                for k in ("Bets", "BankLayers", "Fees")
            ),
            Decimal(0),
        )
        assert booked == -line.recorded, line.group
    house = view_rows(app, HouseView())
    pool = sum(
        (
            Decimal(r["seed"]) + Decimal(r["contributions"]) - Decimal(r["from_pool"]) + Decimal(r["resets"])
            for _, r in house.scan("j|")
        ),
        Decimal(0),
    )
    pools = sum((v for k, v in balances.items() if k.startswith("Liabilities:Jackpot:")), Decimal(0))
    assert pools == -pool != 0


@pytest.mark.slow_postgres
def test_a_tampered_journal_fails_bean_check(app: LedgerApp, examples: Path, tmp_path: Path) -> None:
    _ingest(app, examples)
    export(app, tmp_path, formats=["beancount"])
    journal = tmp_path / "house.beancount"
    text = journal.read_text()
    head, _, rest = text.partition('"commission 3CB-01 (bet)"')
    rest = rest.replace("37.50 HKD", "38.50 HKD", 2)  # both legs: balanced, but not the view's
    journal.write_text(head + '"commission 3CB-01 (bet)"' + rest)
    assert text != journal.read_text()
    check = subprocess.run([str(BEAN_CHECK), str(journal)], capture_output=True, text=True)
    assert check.returncode != 0
    assert "Balance failed" in check.stdout + check.stderr


def test_a_day_range_exports_only_those_gaming_days(app: LedgerApp, examples: Path, tmp_path: Path) -> None:
    _ingest(app, examples)
    manifest = export(app, tmp_path, formats=["csv"], day_from=date(2026, 11, 21))
    assert {f["name"]: f["rows"] for f in manifest.files}["rounds.csv"] == 0
    manifest = export(
        app, tmp_path, formats=["csv"], cutoff_hour=11, day_from=date(2026, 11, 20), day_to=date(2026, 11, 20)
    )
    rows = {f["name"]: f["rows"] for f in manifest.files}["rounds.csv"]
    assert 0 < rows < 22  # rounds opened 10:xx Macau fall on the 19th under an 11:00 cut-off


@pytest.mark.slow_postgres
def test_cli_commission_projections_and_export(db_url: str, examples: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    files = [str(examples / n) for n in GAME_FILES]
    assert (
        runner.invoke(
            cli_app, ["ingest", "--db", db_url, "--rejects", str(tmp_path / "rej.jsonl"), *files]
        ).exit_code
        == 0
    )
    status = runner.invoke(cli_app, ["projections", "status", "--db", db_url, "--json"])
    assert status.exit_code == 0, status.output
    states = {v["view"]: v for v in json.loads(status.output)["views"]}
    assert states["commission"]["state"] == "new"
    assert states["commission"]["rounds_behind"] == 22
    result = runner.invoke(cli_app, ["commission", "--db", db_url, "--json", "--by", "game"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert {t["currency"]: t["recorded"] for t in body["totals"]} == {"HKD": "102.50", "MOP": "10.00"}
    csv_out = runner.invoke(cli_app, ["commission", "--db", db_url, "--csv"])
    assert csv_out.output.splitlines()[0].startswith("gaming_day,currency,rounds")
    by_game = runner.invoke(cli_app, ["commission", "--db", db_url, "--csv", "--by", "game"])
    lines = by_game.output.splitlines()
    assert lines[0].startswith("gaming_day,game,currency,rounds,items,recorded")
    assert lines[-2:] == [
        "total,,HKD,16,85,102.50,102.50,0.00,0.00,0",
        "total,,MOP,6,31,10.00,10.00,0.00,0.00,0",
    ]
    rebuilt = runner.invoke(cli_app, ["projections", "rebuild", "--db", db_url, "commission"])
    assert rebuilt.exit_code == 0 and "rebuild equals incremental" in rebuilt.output
    assert runner.invoke(cli_app, ["commission", "--db", db_url, "--by", "nope"]).exit_code == 2
    assert runner.invoke(cli_app, ["commission", "--db", db_url, "--cutoff-hour", "24"]).exit_code == 2
    assert runner.invoke(cli_app, ["commission", "--db", db_url, "--from", "21/11"]).exit_code == 2
    exported = runner.invoke(
        cli_app, ["export", "--db", db_url, "--out", str(tmp_path / "x"), "--format", "csv,beancount"]
    )
    assert exported.exit_code == 0, exported.output
    assert (tmp_path / "x" / "house.beancount").is_file()
    assert (
        runner.invoke(
            cli_app, ["export", "--db", db_url, "--out", str(tmp_path / "y"), "--format", "xlsx"]
        ).exit_code
        == 2
    )
