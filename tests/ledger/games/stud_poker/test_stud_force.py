"""Forcing jackpot hands for a demo: ``ledger simulate --force TABLE/ROUND:SEAT=HAND``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from ledger.games.stud_poker.simulate import FORCE_KEY, force_plan
from ledger.games.stud_poker.tables import Category

runner = CliRunner()


def test_force_plan_reads_table_round_seat_and_hand() -> None:
    plan = force_plan(["STUD-01/000005:2=royal_flush", "STUD-01/000005:4=flush"])
    assert plan == {FORCE_KEY: {("STUD-01", "000005"): [(2, Category.ROYAL_FLUSH), (4, Category.FLUSH)]}}


@pytest.mark.parametrize(
    "spec", ["bad", "STUD-01/000005:9=flush", "STUD-01/000005:2=five_aces", "000005:2=flush"]
)
def test_a_malformed_force_is_refused(spec: str) -> None:
    with pytest.raises(ValueError, match="TABLE/ROUND:SEAT=HAND"):
        force_plan([spec])


def test_forced_hands_are_dealt_paid_from_the_pool_and_verify_clean(tmp_path: Path) -> None:
    feed, db = tmp_path / "f.jsonl", f"sqlite:///{tmp_path / 'f.db'}"
    result = runner.invoke(
        app,
        [
            "simulate",
            "--game",
            "STUD",
            "--rounds",
            "8",
            "--tables",
            "2",
            "--seed",
            "4",
            "--out",
            str(feed),
            "--force",
            "STUD-01/000005:2=royal_flush",
            "--force",
            "STUD-02/000003:3=straight_flush",
        ],
    )
    assert result.exit_code == 0, result.output
    paid = [json.loads(line) for line in feed.read_text().splitlines() if '"jackpot_paid"' in line]
    assert {(p["table"], p["round"], p["hand"]) for p in paid} >= {
        ("STUD-01", "000005", "royal_flush"),
        ("STUD-02", "000003", "straight_flush"),
    }
    assert runner.invoke(app, ["ingest", str(feed), "--db", db]).exit_code == 0
    assert runner.invoke(app, ["verify", "--db", db]).exit_code == 0
    body = json.loads(runner.invoke(app, ["jackpot", "--db", db, "--json"]).stdout)
    meters = body["pools"][0]
    assert json.dumps(meters).count("royal_flush") >= 1
