"""The day summary: per-table figures recomputed independently from the raw feed lines, a
wrong payout seen as findings and as a hold difference, days split by the table's own clock."""

from __future__ import annotations

import json
import re
from datetime import date
from decimal import Decimal
from pathlib import Path

from typer.testing import CliRunner

from cli.main import app as cli
from ledger.report.day import summarize_day
from ledger.storage.store import LedgerApp

DAY = date(2026, 11, 20)
runner = CliRunner()


def _raw_figures(lines: list[str]) -> dict[str, Decimal]:
    """Turnover, hold and commission straight from the JSON of a house-banked feed."""
    events = [json.loads(x) for x in lines if x.strip()]
    stakes = sum(Decimal(e["amount"]) for e in events if e["type"] == "bet_placed")
    paid = sum(Decimal(e["returned"]) + Decimal(e["won"]) for e in events if e["type"] == "bet_settled")
    commission = sum(Decimal(e["commission"]) for e in events if e["type"] == "bet_settled")
    assert not any(e["type"] == "bet_settled" and e["result"] == "carry" for e in events)
    return {"turnover": stakes, "hold": stakes - paid, "commission": commission}


def test_house_banked_tables_match_the_raw_feed(examples_ledger: LedgerApp, feeds) -> None:
    summary = summarize_day(examples_ledger, DAY)
    rows = {t.table: t for t in summary.tables}
    assert sorted(rows) == ["3CB-01", "FPC-01", "MJ-01", "RL-01", "SP9-01", "STUD-01"]
    for table, name in (("RL-01", "rl"), ("FPC-01", "fpc"), ("3CB-01", "3cb"), ("STUD-01", "stud")):
        raw = _raw_figures(feeds.example(name))
        row = rows[table]
        assert (row.turnover, row.hold, row.commission) == (
            raw["turnover"],
            raw["hold"],
            raw["commission"],
        ), table
        assert row.hold_delta == 0 and row.errors == []
    assert (rows["RL-01"].rounds, rows["RL-01"].bets, rows["RL-01"].hold) == (5, 25, Decimal(330))


def test_player_banked_and_player_games_hold_only_what_the_house_holds(
    examples_ledger: LedgerApp, feeds
) -> None:
    rows = {t.table: t for t in summarize_day(examples_ledger, DAY).tables}
    sp9 = [json.loads(x) for x in feeds.example("sp9")]
    casino = sum(Decimal(e["result"]) for e in sp9 if e["type"] == "bank_settled" and e["party"] == "casino")
    bank_commission = sum(
        Decimal(e["commission"]) for e in sp9 if e["type"] in ("bank_settled", "bet_settled")
    )
    assert (rows["SP9-01"].hold, rows["SP9-01"].commission) == (casino, bank_commission)
    mj = [json.loads(x) for x in feeds.example("mj")]
    assert rows["MJ-01"].hold == 0
    assert rows["MJ-01"].commission == sum(
        Decimal(e["amount"]) for e in mj if e["type"] == "commission_charged"
    )
    assert rows["MJ-01"].turnover == sum(Decimal(e["amount"]) for e in mj if e["type"] == "payment_made")


def test_totals_are_per_currency(examples_ledger: LedgerApp) -> None:
    summary = summarize_day(examples_ledger, DAY)
    totals = summary.totals()
    assert sorted(totals) == ["HKD", "MOP"]
    for currency, total in totals.items():
        mine = [t for t in summary.tables if t.currency == currency]
        assert total.hold == sum(t.hold for t in mine)
        assert total.turnover == sum(t.turnover for t in mine)


def test_a_short_payout_is_a_finding_and_a_hold_difference(app: LedgerApp, feeds) -> None:
    feeds.ingest(app, feeds.rl_round("r1"))
    feeds.ingest(app, feeds.rl_round("r2", at="2026-11-20T22:00", won="3400"))
    (row,) = summarize_day(app, DAY).tables
    # Each round: 600 staked; r1 pays 100 + 3500 (hold -3000), r2 pays 100 + 3400 (100 short).
    assert (row.rounds, row.turnover, row.hold) == (2, Decimal(1200), Decimal(-5900))
    assert row.hold_delta == Decimal(100)
    assert [(f.code, f.round, f.bet) for f in row.errors] == [("settlement_mismatch", "r2", "b1")]


def test_a_round_belongs_to_its_gaming_day_as_finance_counts_it(app: LedgerApp, feeds) -> None:
    """Gaming days run from the cut-off hour, Macau time (default 06:00), as in ledger commission:
    05:30 on the 21st still belongs to gaming day 20, 06:00 starts gaming day 21."""
    feeds.ingest(app, feeds.rl_round("late", at="2026-11-20T23:30"))
    feeds.ingest(app, feeds.rl_round("early", at="2026-11-21T05:30"))
    feeds.ingest(app, feeds.rl_round("morning", at="2026-11-21T06:00"))
    assert [t.rounds for t in summarize_day(app, DAY).tables] == [2]
    assert [t.rounds for t in summarize_day(app, date(2026, 11, 21)).tables] == [1]
    assert [t.rounds for t in summarize_day(app, DAY, cutoff_hour=0).tables] == [1]
    assert [t.rounds for t in summarize_day(app, date(2026, 11, 21), cutoff_hour=0).tables] == [2]
    assert summarize_day(app, date(2026, 11, 22)).tables == []


def test_open_rounds_are_not_counted(app: LedgerApp, feeds) -> None:
    feeds.ingest(app, feeds.rl_round("r1"))
    feeds.ingest(app, feeds.rl_round("r2", at="2026-11-20T22:00")[:-1])
    assert [t.rounds for t in summarize_day(app, DAY).tables] == [1]


def test_cli_day_report(tmp_path: Path, feeds) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    feed = tmp_path / "feed.jsonl"
    feed.write_text("\n".join(feeds.example("rl") + feeds.example("fpc")) + "\n")
    assert runner.invoke(cli, ["ingest", str(feed), "--db", db]).exit_code == 0
    page = tmp_path / "day.html"
    result = runner.invoke(cli, ["report", "--day", "2026-11-20", "--html", str(page), "--db", db])
    assert result.exit_code == 0, result.output
    assert "2 table(s), 10 round(s), 0 finding(s)" in result.stdout
    assert page.read_text().startswith("<!DOCTYPE html>")
    body = json.loads(runner.invoke(cli, ["report", "--day", "2026-11-20", "--json", "--db", db]).stdout)
    assert body["tables"][1]["table"] == "RL-01" and body["tables"][1]["hold"] == "330.00"
    one = tmp_path / "round.html"
    result = runner.invoke(cli, ["report", "RL-01/000001", "--html", str(one), "--db", db])
    assert result.exit_code == 0 and "<h1>Roulette" in one.read_text()
    for bad in (
        ["report", "--db", db, "--html", str(one)],
        ["report", "RL-01/000001", "--day", "2026-11-20", "--html", str(one), "--db", db],
        ["report", "RL-01/000001", "--db", db],
        ["report", "RL-01/404", "--html", str(one), "--db", db],
        ["report", "--day", "20-11-2026", "--html", str(one), "--db", db],
    ):
        assert runner.invoke(cli, bad).exit_code == 2, bad


def test_cli_pages_name_the_store_head_and_the_checkpoint(tmp_path: Path, feeds) -> None:
    db, other = f"sqlite:///{tmp_path / 'l.db'}", f"sqlite:///{tmp_path / 'o.db'}"
    feed = tmp_path / "feed.jsonl"
    feed.write_text("\n".join(feeds.example("rl")) + "\n")
    key, cp, stranger = tmp_path / "seal.key", tmp_path / "cp.json", tmp_path / "other.json"
    assert runner.invoke(cli, ["ingest", str(feed), "--db", db]).exit_code == 0
    assert runner.invoke(cli, ["keygen", "--out", str(key)]).exit_code == 0
    assert runner.invoke(cli, ["seal", "--key", str(key), "--out", str(cp), "--db", db]).exit_code == 0
    other_feed = tmp_path / "other.jsonl"
    other_feed.write_text("\n".join(feeds.example("fpc")) + "\n")
    assert runner.invoke(cli, ["ingest", str(other_feed), "--db", other]).exit_code == 0
    assert (
        runner.invoke(cli, ["seal", "--key", str(key), "--out", str(stranger), "--db", other]).exit_code == 0
    )
    head = json.loads(runner.invoke(cli, ["verify", "--json", "--db", db]).stdout)["head"]
    page = tmp_path / "day.html"
    for args in (["--day", "2026-11-20"], ["RL-01/000001"]):
        result = runner.invoke(
            cli, ["report", *args, "--html", str(page), "--db", db, "--checkpoint", str(cp)]
        )
        assert result.exit_code == 0, result.output
        footer = page.read_text()[page.read_text().index("<footer") :]
        assert head in footer and "the store holds it" in footer
        assert "signature valid" in footer and re.search(r"<b>ledger </b>\d", footer)
    result = runner.invoke(
        cli, ["report", "RL-01/000001", "--html", str(page), "--db", db, "--checkpoint", str(stranger)]
    )
    assert result.exit_code == 0 and "the store does NOT hold it" in page.read_text()
    (tmp_path / "junk.json").write_text("not a checkpoint")
    assert (
        runner.invoke(
            cli,
            [
                "report",
                "RL-01/000001",
                "--html",
                str(page),
                "--db",
                db,
                "--checkpoint",
                str(tmp_path / "junk.json"),
            ],
        ).exit_code
        == 2
    )
