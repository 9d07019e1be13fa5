"""``ledger verify`` includes rebuild-equals-incremental over the stored projections."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from typer.testing import CliRunner

from cli.main import app

runner = CliRunner()


def _store(tmp_path: Path, examples: Path) -> str:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    for name in ("sp9.jsonl", "stud.jsonl", "3cb.jsonl"):
        assert runner.invoke(app, ["ingest", str(examples / name), "--db", db]).exit_code == 0
    assert runner.invoke(app, ["projections", "update", "--db", db]).exit_code == 0
    return db


def test_untouched_views_verify_clean(tmp_path: Path, examples: Path) -> None:
    db = _store(tmp_path, examples)
    result = runner.invoke(app, ["verify", "--db", db, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["findings"] == []


def test_an_edited_view_row_is_a_projection_mismatch_naming_view_and_key(
    tmp_path: Path, examples: Path
) -> None:
    db = _store(tmp_path, examples)
    with sqlite3.connect(tmp_path / "l.db") as conn:
        key, row = conn.execute(
            "SELECT key, row FROM ledger_view_rows WHERE view = 'jackpot' ORDER BY key LIMIT 1"
        ).fetchone()
        edited = json.loads(row)
        edited["tampered"] = True
        conn.execute(
            "UPDATE ledger_view_rows SET row = ? WHERE view = 'jackpot' AND key = ?",
            (json.dumps(edited), key),
        )
    result = runner.invoke(app, ["verify", "--db", db, "--json"])
    assert result.exit_code == 1
    findings = json.loads(result.stdout)["findings"]
    assert [(f["code"], f["view"], f["key"]) for f in findings] == [("projection_mismatch", "jackpot", key)]
    assert runner.invoke(app, ["verify", "--db", db, "--no-projections"]).exit_code == 0
    assert runner.invoke(app, ["verify", "--db", db, "--table", "SP9-01"]).exit_code == 0
