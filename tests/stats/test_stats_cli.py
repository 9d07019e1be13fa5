"""``ledger stats`` end to end: each fault ``ledger simulate`` plants is found and named through
the CLI (one store per module, SQLite), fair equipment is not flagged (SQLite and PostgreSQL),
exit codes, the text, the HTML page and the day page."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.context import opened
from cli.main import app
from ledger.stats.survey import StatsQuery, survey

runner = CliRunner()


def ledger(*args: str) -> Any:
    return runner.invoke(app, list(args))


PLANTED = (
    "--bias",
    "RL-01:17=7",
    "--bias",
    "RL-02:sector17.5=3",
    "--bias",
    "FPC-01:d2.6=3.5",
    "--bias",
    "FPC-02:4=2.2",
    "--croupier-error-rate",
    "D-RL-03=0.3",
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Wheels and shakers over one gaming day, and a STUD and a 3CB table, with faults: 250
    rounds a wheel or shaker, 120 a card table (a hand deals many cards: 120 rounds are about
    11,000 lines, and the extra ace is still found in them), biases strong enough for each to
    be found (the power of each test at its stated effect sizes is tests/stats/test_shaped.py's)."""
    folder = tmp_path_factory.mktemp("stats")
    db = f"sqlite:///{folder / 'l.db'}"
    dice = folder / "rl_fpc.jsonl"
    made = ledger(
        "simulate",
        "--out",
        str(dice),
        "--game",
        "RL,FPC",
        "--rounds",
        "250",
        "--tables",
        "2",
        "--seed",
        "5",
        "--error-rate",
        "0.02",
        *PLANTED,
    )
    assert made.exit_code == 0, made.output
    cards = folder / "cards.jsonl"
    made = ledger(
        "simulate",
        "--out",
        str(cards),
        "--game",
        "STUD,3CB",
        "--rounds",
        "120",
        "--tables",
        "1",
        "--seed",
        "3",
        "--bias",
        "STUD-01:missing=QH",
        "--bias",
        "3CB-01:extra=AS",
    )
    assert made.exit_code == 0, made.output
    done = ledger("ingest", str(dice), str(cards), "--db", db)
    assert done.exit_code == 0, done.output
    return db


@pytest.fixture(scope="module")
def surveyed(store: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """``stats --json --html FILE`` over the whole store (one survey): the JSON and the page."""
    page = tmp_path_factory.mktemp("stats-page") / "stats.html"
    result = ledger("stats", "--db", store, "--json", "--html", str(page))
    assert result.exit_code == 1, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data, page


@pytest.fixture(scope="module")
def report(surveyed: tuple[dict[str, Any], Path]) -> dict[str, Any]:
    return surveyed[0]


def _test(data: dict[str, Any], table: str, test: str) -> dict[str, Any]:
    return next(e for e in data["tests"] if e["table"] == table and e["test"] == test)


def test_each_planted_fault_is_flagged_and_named(report: dict[str, Any]) -> None:
    assert report["schema_version"] == 2 and report["correction"] == "discrete_weighted_bonferroni"
    hot = _test(report, "RL-01", "max_pocket")
    assert hot["flagged"] and hot["where"] == "pocket 17" and hot["effect_ci"][0] > 1.5
    sector = _test(report, "RL-02", "sector")
    assert sector["flagged"] and "17" in sector["where"].split()
    die = _test(report, "FPC-01", "max_die_face")
    assert die["flagged"] and die["where"] == "die 2 face 6"
    pooled = _test(report, "FPC-02", "max_face_pooled")
    assert pooled["flagged"] and pooled["where"] == "face 4 (all dice)"
    missing = _test(report, "STUD-01", "composition")
    assert missing["flagged"] and missing["where"] == "QH missing" and missing["observed_count"] == 0
    extra = _test(report, "3CB-01", "composition")
    assert extra["flagged"] and extra["where"] == "AS extra", extra
    for entry in (hot, sector, die, pooled, missing, extra):
        assert entry["observed_count"] is not None and entry["expected_count"] > 0
        assert entry["p_adjusted"] < report["alpha"] and entry["weight"] > 0.35


def test_the_hot_wheel_raises_the_sequential_alarm_on_its_first_night(report: dict[str, Any]) -> None:
    assert {"table": "RL-01", "equipment": "wheel", "night": "2026-11-20"} in report["alarms"]
    wheel = next(s for s in report["sequential"] if s["table"] == "RL-01")
    assert wheel["where"] == "pocket 17" and wheel["path"][0]["cusum"] >= wheel["threshold"]
    assert wheel["in_control_nights"] >= 40 * 365
    assert report["property"]["wheel"]["per_30_nights_at_500"] <= 1.0


def test_the_croupier_with_the_planted_error_rate_is_the_one_flagged(report: dict[str, Any]) -> None:
    flagged = [c["croupier"] for c in report["croupiers"] if c["flagged"]]
    assert flagged == ["D-RL-03"]
    top = report["croupiers"][0]
    assert top["croupier"] == "D-RL-03" and top["rank"] == 1 and top["rank_range"][0] == 1
    assert top["error_rounds"] > 2 * top["expected_error_rounds"]


def test_money_is_written_with_two_decimals_as_the_other_json(report: dict[str, Any]) -> None:
    """Issue 30: the money of each table and croupier is an exact decimal string with at least
    two decimals (``"25.00"``, never ``"25"``), the same values as before, and the JSON
    validates against docs/schemas/stats.json."""
    import re
    from decimal import Decimal

    import jsonschema

    from ledger.stats.survey import MONEY_KEYS

    schema = json.loads((Path(__file__).resolve().parents[2] / "docs" / "schemas" / "stats.json").read_text())
    jsonschema.validate(report, schema)
    amounts = [
        value
        for row in report["tables"] + report["croupiers"]
        for by_currency in row["money"].values()
        for value in by_currency.values()
    ]
    assert amounts, "the planted croupier errors involve money"
    assert all(re.fullmatch(r"-?[0-9]+\.[0-9]{2,}", a) for a in amounts), amounts
    for row in report["tables"] + report["croupiers"]:
        for by_currency in row["money"].values():
            assert set(by_currency) == set(MONEY_KEYS)
            assert all(Decimal(v) >= 0 for v in by_currency.values())


def test_the_text_names_where_and_how_much(store: str) -> None:
    text = ledger("stats", "--db", store, "--table", "RL-01")
    assert text.exit_code == 1
    assert "FLAGGED RL-01 wheel:" in text.stdout
    assert "max_pocket: pocket 17" in text.stdout and "expected, effect" in text.stdout
    assert "ALARM RL-01 wheel on 2026-11-20 (pocket 17)" in text.stdout
    assert "a property of 500 wheels" in text.stdout


def test_html_draws_the_wheel_the_dice_and_the_paths(
    store: str, surveyed: tuple[dict[str, Any], Path], tmp_path: Path
) -> None:
    html = surveyed[1].read_text()  # one page of every game, written beside the JSON
    assert html.count('class="chart wheel-chart"') == 2
    assert "pocket 17: " in html and "CUSUM (pockets, 1.5x): alarm on 2026-11-20" in html
    assert "FPC-01 die2" in html and "Shakers: faces die by die" in html
    bad = ledger("stats", "--db", store, "--html", str(tmp_path / "no" / "such" / "x.html"))
    assert bad.exit_code == 2 and "no such folder" in bad.output


@pytest.mark.slow  # a day page and a survey of the whole store; the day page's surveillance
# section is held byte for byte by tests/golden by default, its alarms by the stats tests here
def test_the_day_page_flags_by_the_sequential_scheme(store: str, tmp_path: Path) -> None:
    page = tmp_path / "day.html"
    result = ledger("report", "--day", "2026-11-20", "--html", str(page), "--db", store)
    assert result.exit_code == 1, result.output  # the injected errors are findings
    section = page.read_text()
    section = section[section.index("<h2>Surveillance</h2>") :]
    assert "<td>RL-01</td><td>wheel</td><td>2026-11-20</td><td>pocket 17</td>" in section
    assert "Error rates on 2026-11-20, by croupier" in section and "D-RL-03" in section


def test_stats_usage_errors_exit_2(tmp_path: Path, examples: Path) -> None:
    # a selection that matches nothing is refused whatever the store's size: a small one
    store = f"sqlite:///{tmp_path / 'small.db'}"
    assert ledger("ingest", str(examples / "rl.jsonl"), "--db", store).exit_code == 0
    missing = ledger("stats", "--db", f"sqlite:///{tmp_path / 'nowhere.db'}")
    assert missing.exit_code == 2 and "no ledger at" in missing.output
    assert not (tmp_path / "nowhere.db").exists()
    none = ledger("stats", "--db", store, "--table", "NOPE")
    assert none.exit_code == 2 and "no closed round" in none.output
    assert ledger("stats", "--db", store, "--from", "2030-01-01").exit_code == 2
    bad = ledger("stats", "--db", store, "--from", "yesterday")
    assert bad.exit_code == 2 and "not a date" in bad.output
    assert ledger("stats", "--db", store, "--game", "XX").exit_code == 2


def test_fair_example_feed_is_not_flagged_on_either_store(db_url: str, examples: Path) -> None:
    assert (
        ledger("ingest", str(examples / "rl.jsonl"), str(examples / "fpc.jsonl"), "--db", db_url).exit_code
        == 0
    )
    result = ledger("stats", "--db", db_url, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [c["croupier"] for c in data["croupiers"]] == ["(not recorded)"]
    assert not data["alarms"] and not any(e["flagged"] for e in data["tests"])


@pytest.mark.parametrize(
    "option",
    [
        ("--bias", "RL-01"),
        ("--bias", "RL-01:99=2"),
        ("--bias", "RL-01:17=0"),
        ("--bias", "RL-01:missing=ZZ"),
        ("--bias", "RL-09:17=2"),
        ("--bias", "RL-01:sector17.4=2"),
        ("--bias", "RL-01:extra=AS"),
        ("--croupier-error-rate", "D-RL-03"),
        ("--croupier-error-rate", "D-RL-03=2"),
        ("--croupier-error-rate", "D-XX-01=0.1"),
    ],
)
def test_simulate_rejects_a_bad_planting(tmp_path: Path, option: tuple[str, str]) -> None:
    result = ledger("simulate", "--out", str(tmp_path / "f.jsonl"), "--game", "RL", "--rounds", "2", *option)
    assert result.exit_code == 2, (option, result.output)


def test_planting_leaves_fair_tables_byte_for_byte_the_same(tmp_path: Path) -> None:
    plain, biased = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    common = ("--game", "RL", "--rounds", "30", "--tables", "2", "--seed", "9")
    assert ledger("simulate", "--out", str(plain), *common).exit_code == 0
    assert ledger("simulate", "--out", str(biased), *common, "--bias", "RL-02:sector0.3=5").exit_code == 0

    def table(path: Path, code: str) -> list[str]:
        return [line for line in path.read_text().splitlines() if f'"table":"{code}"' in line]

    assert table(plain, "RL-01") == table(biased, "RL-01")
    spins = [json.loads(line)["number"] for line in table(biased, "RL-02") if "spin_result" in line]
    assert sum(n in (26, 0, 32) for n in spins) > 30 * 3 / 37 * 2


@pytest.mark.slow  # two surveys of the store; the day page's error rates of the day alone are held
# byte for byte by tests/golden by default
def test_the_day_page_reads_earlier_nights_for_equipment_not_for_error_rates(store: str) -> None:
    with opened(store) as app:  # the wheels: equipment with an alarm, and the croupier errors
        later = survey(app, StatsQuery(game="RL", rates_from=date(2026, 11, 21)))
        same = survey(app, StatsQuery(game="RL", rates_from=date(2026, 11, 20)))
    assert later.rounds == same.rounds > 0 and later.entries and later.alarms
    assert later.croupiers == [] and later.tables == []
    assert sum(r.rounds for r in same.tables) == same.rounds
