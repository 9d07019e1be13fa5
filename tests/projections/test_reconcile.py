"""``ledger reconcile``: the example meters file, run against the deterministic simulated day
its docs build, finds exactly the variances planted in it (SQLite and PostgreSQL); a malformed
file is exit 2 naming its line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app as cli_app
from projections.reconcile import MeterFileError, read_meters
from tests.projections.finance_day import store_day

METERS = Path(__file__).resolve().parents[2] / "docs" / "examples" / "meters.csv"


@pytest.fixture(scope="module")
def finance_db(module_db_url: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The day of docs/FINANCE.md's worked example (tests/projections/finance_day.py), once per
    module and store (the tests only read it)."""
    store_day(module_db_url, tmp_path_factory)
    return module_db_url


# The views reconcile reads are the same code on both stores (test_projection_updater and
# test_projection_export keep PostgreSQL in the developer's tier); the PostgreSQL day runs slow.
@pytest.mark.slow_postgres
def test_the_example_meters_find_exactly_the_planted_variances(finance_db: str) -> None:
    result = CliRunner().invoke(cli_app, ["reconcile", str(METERS), "--db", finance_db, "--json"])
    assert result.exit_code == 1, result.output
    body = json.loads(result.output)
    assert body["schema_version"] == 1
    planted = {line["line"] for line in body["lines"] if line["note"].startswith("planted")}
    assert {line["line"] for line in body["lines"] if line["status"] == "variance"} == planted
    assert planted == {4, 6, 11, 16}
    assert {line["line"] for line in body["lines"] if line["status"] == "unknown"} == {17, 18, 19}
    assert (body["matched"], body["variance"], body["unknown"]) == (11, 4, 3)
    by_line = {line["line"]: line for line in body["lines"]}
    assert (by_line[4]["ledger"], by_line[4]["difference"]) == ("1077.50", "10.00")
    assert by_line[16]["difference"] == "500.00"  # the house-funded flushes
    text = CliRunner().invoke(cli_app, ["reconcile", str(METERS), "--db", finance_db])
    assert "11 matched, 4 variance, 3 unknown" in text.output


@pytest.mark.slow_postgres
def test_matching_meters_exit_0(finance_db: str, tmp_path: Path) -> None:
    """Without the planted lines the file still leaves tables out (exit 1, each named as
    missing); with a line for each of those, nothing differs: exit 0."""
    lines = METERS.read_text().splitlines()
    clean = tmp_path / "clean.csv"
    clean.write_text("\n".join(ln for ln in lines if "planted" not in ln) + "\n")
    result = CliRunner().invoke(cli_app, ["reconcile", str(clean), "--db", finance_db, "--json"])
    assert result.exit_code == 1, result.output
    body = json.loads(result.output)
    assert body["variance"] == 0 and body["missing"] == len(body["missing_from_file"]) > 0
    assert {
        "what": "commission",
        "where": "SP9-02",
        "day": "2026-11-20",
        "ledger": "1077.50",
        "ledger_currency": "HKD",
    } in body["missing_from_file"]
    with clean.open("a") as more:
        for gap in body["missing_from_file"]:
            more.write(
                f"{gap['what']},{gap['where']},{gap['day']},{gap['ledger']},{gap['ledger_currency']},\n"
            )
    result = CliRunner().invoke(cli_app, ["reconcile", str(clean), "--db", finance_db])
    assert result.exit_code == 0, result.output
    assert "0 variance, 3 unknown, 0 missing" in result.output


@pytest.mark.parametrize(
    ("text", "line", "field"),
    [
        ("", 1, "header"),
        ("what,where,when,amount\n", 1, "currency"),
        ("what,where,when,amount,currency\ncommission,RL-01,2026-11-20,12,5,HKD\n", 2, "line"),
        ("what,where,when,amount,currency\ncommission,RL-01,20/11/2026,12.5,HKD\n", 2, "when"),
        ("what,where,when,amount,currency\nhold,RL-01,2026-11-20,1 000,HKD\n", 2, "amount"),
        ("what,where,when,amount,currency\nhold,RL-01,2026-11-20,NaN,HKD\n", 2, "amount"),
        ("what,where,when,amount,currency\nhold,RL-01,2026-11-20,1,hkd\n", 2, "currency"),
        ("what,where,when,amount,currency\nhold,,2026-11-20,1,HKD\n", 2, "where"),
    ],
)
def test_a_malformed_file_names_its_line_and_field(text: str, line: int, field: str) -> None:
    with pytest.raises(MeterFileError) as caught:
        read_meters(text)
    assert (caught.value.line, caught.value.field) == (line, field)


def test_a_malformed_file_is_exit_2(tmp_path: Path, db_url: str) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("what,where,when,amount,currency\nhold,RL-01,2026-11-20,x,HKD\n")
    result = CliRunner().invoke(cli_app, ["reconcile", str(bad), "--db", db_url])
    assert result.exit_code == 2
    assert "line 2, field 'amount'" in result.output
