"""``ledger stats`` end to end on SQLite and PostgreSQL: biased equipment is flagged, fair
equipment is not, error rates per table and croupier, exit codes and the JSON shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app

runner = CliRunner()


def ledger(*args: str):
    return runner.invoke(app, list(args))


@pytest.fixture
def biased_store(db_url: str, tmp_path: Path) -> str:
    feed = tmp_path / "feed.jsonl"
    made = ledger("simulate", "--out", str(feed), "--game", "RL,FPC", "--rounds", "400",
                  "--tables", "2", "--seed", "5", "--error-rate", "0.03",
                  "--bias", "RL-01:17=3", "--bias", "FPC-02:d1.6=3")
    assert made.exit_code == 0, made.output
    ingested = ledger("ingest", str(feed), "--db", db_url)
    assert ingested.exit_code == 0, ingested.output
    return db_url


def test_stats_flags_the_biased_wheel_and_shaker_and_ranks_errors(biased_store: str) -> None:
    result = ledger("stats", "--db", biased_store, "--json")
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert data["schema_version"] == 1 and data["correction"] == "holm" and data["alpha"] == 0.01
    assert data["rounds"] == 1600
    flagged = {(f["table"], f["equipment"]) for f in data["flagged"]}
    assert flagged == {("RL-01", "wheel"), ("FPC-02", "shaker")}
    for entry in data["tests"]:
        assert {"table", "test", "n", "p_value", "flagged", "p_adjusted", "df"} <= set(entry)
    pockets = next(e for e in data["tests"] if e["table"] == "RL-01" and e["test"] == "pockets"
                   and e["day"] is None)
    assert pockets["n"] == 400 and pockets["df"] == 36 and pockets["flagged"]
    assert pockets["observed"][17] == max(pockets["observed"])
    die1 = next(e for e in data["tests"] if e["table"] == "FPC-02" and e["test"] == "die1"
                and e["day"] is None)
    assert die1["flagged"] and die1["observed"][5] == max(die1["observed"])
    assert {e["test"] for e in data["tests"] if e["table"] == "FPC-01"} >= {
        "die1", "die2", "die3", "small_big_runs"}
    assert {e["test"] for e in data["tests"] if e["table"] == "RL-02"} >= {"pockets", "colour_runs"}
    rates = [t["per_1000_rounds"] for t in data["tables"]]
    assert rates == sorted(rates, reverse=True)
    assert sum(t["rounds"] for t in data["tables"]) == 1600
    assert all(c["croupier"].startswith(("D-RL-", "D-FPC-")) for c in data["croupiers"])
    assert sum(c["findings"] for c in data["croupiers"]) == sum(t["findings"] for t in data["tables"])
    assert any(t["money"] for t in data["tables"])


def test_stats_narrows_by_table_and_game_and_reads_as_text(biased_store: str) -> None:
    fair = ledger("stats", "--db", biased_store, "--table", "RL-02", "--json")
    assert fair.exit_code == 0, fair.output
    assert {e["table"] for e in json.loads(fair.stdout)["tests"]} == {"RL-02"}
    text = ledger("stats", "--db", biased_store, "--game", "RL")
    assert text.exit_code == 1
    assert "FLAGGED RL-01 wheel" in text.stdout and "FPC" not in text.stdout


def test_stats_usage_errors_exit_2(biased_store: str, tmp_path: Path) -> None:
    missing = ledger("stats", "--db", f"sqlite:///{tmp_path / 'nowhere.db'}")
    assert missing.exit_code == 2 and "no ledger at" in missing.output
    assert not (tmp_path / "nowhere.db").exists()
    none = ledger("stats", "--db", biased_store, "--table", "NOPE")
    assert none.exit_code == 2 and "no closed round" in none.output
    later = ledger("stats", "--db", biased_store, "--from", "2030-01-01")
    assert later.exit_code == 2
    bad = ledger("stats", "--db", biased_store, "--from", "yesterday")
    assert bad.exit_code == 2 and "not a date" in bad.output
    assert ledger("stats", "--db", biased_store, "--game", "XX").exit_code == 2


def test_a_feed_without_croupier_still_ingests_and_is_counted_apart(tmp_path: Path,
                                                                    examples: Path) -> None:
    db = f"sqlite:///{tmp_path / 'x.db'}"
    assert ledger("ingest", str(examples / "rl.jsonl"), "--db", db).exit_code == 0
    result = ledger("stats", "--db", db, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [c["croupier"] for c in data["croupiers"]] == ["(not recorded)"]
    assert all(not e["flagged"] for e in data["tests"])


def test_a_shoe_missing_a_card_is_flagged(tmp_path: Path) -> None:
    feed, db = tmp_path / "stud.jsonl", f"sqlite:///{tmp_path / 's.db'}"
    assert ledger("simulate", "--out", str(feed), "--game", "STUD", "--rounds", "150",
                  "--tables", "1", "--seed", "2", "--bias", "STUD-01:missing=QH").exit_code == 0
    assert "QH" not in {json.loads(line).get("card") for line in feed.read_text().splitlines()}
    assert ledger("ingest", str(feed), "--db", db).exit_code == 0
    data = json.loads(ledger("stats", "--db", db, "--json").stdout)
    cards = next(e for e in data["tests"] if e["test"] == "cards" and e["day"] is None)
    assert cards["flagged"] and cards["observed"][cards["cells"].index("QH")] == 0
    assert any(e["test"] == "serial" for e in data["tests"])


def test_simulate_rejects_a_bad_bias(tmp_path: Path) -> None:
    out = str(tmp_path / "f.jsonl")
    for bias in ("RL-01", "RL-01:99=2", "RL-01:17=0", "RL-01:missing=ZZ", "RL-09:17=2"):
        result = ledger("simulate", "--out", out, "--game", "RL", "--rounds", "2", "--bias", bias)
        assert result.exit_code == 2, (bias, result.output)


def test_bias_leaves_fair_tables_byte_for_byte_the_same(tmp_path: Path) -> None:
    plain, biased = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    common = ("--game", "RL", "--rounds", "30", "--tables", "2", "--seed", "9")
    assert ledger("simulate", "--out", str(plain), *common).exit_code == 0
    assert ledger("simulate", "--out", str(biased), *common, "--bias", "RL-02:0=5").exit_code == 0

    def table(path: Path, code: str) -> list[str]:
        return [line for line in path.read_text().splitlines() if f'"table":"{code}"' in line]

    assert table(plain, "RL-01") == table(biased, "RL-01")
    assert table(plain, "RL-02") != table(biased, "RL-02")


def test_the_day_report_shows_flagged_equipment_and_the_ranking(biased_store: str,
                                                                tmp_path: Path) -> None:
    page = tmp_path / "day.html"
    result = ledger("report", "--day", "2026-11-20", "--html", str(page), "--db", biased_store)
    assert result.exit_code == 1, result.output  # the injected errors are findings
    html = page.read_text()
    section = html[html.index("<h2>Surveillance</h2>"):]
    assert "<td>RL-01</td><td>wheel</td><td>pockets</td>" in section
    assert "<td>FPC-02</td><td>shaker</td><td>die1</td>" in section
    assert "RL-01 pockets" in section and "observed vs expected" in section
    assert "by croupier" in section and "D-RL-" in section
