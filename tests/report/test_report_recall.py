"""The recall: a table's last rounds in the order played, each exactly as ``ledger replay``
judges it — on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app as cli
from ledger.report.recall import recall, round_json
from ledger.services.replay import replay_round
from ledger.storage.store import LedgerApp

runner = CliRunner()


def test_the_last_rounds_come_oldest_first(app: LedgerApp, feeds) -> None:
    feeds.ingest_examples(app, ("rl",))
    whole = recall(app, "RL-01")
    assert whole is not None and whole.played == 5
    assert [r.round.round for r in whole.rounds] == ["000001", "000002", "000003", "000004", "000005"]
    last2 = recall(app, "RL-01", last=2)
    assert last2 is not None and [r.round.round for r in last2.rounds] == ["000004", "000005"]
    assert recall(app, "NO-SUCH-TABLE") is None


def test_the_order_is_the_tables_not_the_round_ids(app: LedgerApp, feeds) -> None:
    """Round ids need not sort: the table aggregate's order is the order played."""
    for round_, hour in (("zz", "20"), ("aa", "21"), ("mm", "22")):
        feeds.ingest(app, feeds.rl_round(round_, at=f"2026-11-20T{hour}:00"))
    result = recall(app, "RL-09")
    assert result is not None and [r.round.round for r in result.rounds] == ["zz", "aa", "mm"]


def test_each_recalled_round_is_the_replay_of_that_round(app: LedgerApp, feeds) -> None:
    """3CB rounds follow each other (carried ties): judged in one pass, they equal a replay."""
    feeds.ingest_examples(app, ("3cb", "rl"))
    result = recall(app, "3CB-01", last=3)
    assert result is not None
    for replay in result.rounds:
        alone = replay_round(app, "3CB-01", replay.round.round)
        assert alone is not None and replay.to_json() == alone.to_json()


def test_a_wrong_payout_is_recalled_with_its_finding(app: LedgerApp, feeds) -> None:
    feeds.ingest(app, feeds.rl_round("r1"))
    feeds.ingest(app, feeds.rl_round("r2", at="2026-11-20T22:00", won="3400"))
    result = recall(app, "RL-09")
    assert result is not None and result.has_errors
    first, second = (round_json(r) for r in result.rounds)
    assert first["findings"] == [] and first["state"] == "closed"
    (finding,) = second["findings"]
    assert (finding["code"], finding["bet"]) == ("settlement_mismatch", "b1")
    assert finding["expected"]["won"] == "3500" and finding["recorded"]["won"] == "3400"
    assert second["outcome"] == [{"label": "spin (seq 5)", "codes": ["17"], "text": "17", "note": ""}]
    b1 = second["bets"][0]
    assert (b1["agrees"], b1["recorded"]["won"], b1["derived"]["won"]) == (False, "3400.00", "3500.00")


def test_an_open_round_is_recalled_as_open(app: LedgerApp, feeds) -> None:
    lines = feeds.rl_round("r1")[:-1]
    feeds.ingest(app, lines)
    result = recall(app, "RL-09")
    assert result is not None
    assert round_json(result.rounds[0])["state"] == "open"


def _run(*args: str):
    return runner.invoke(cli, list(args))


def test_cli_exit_codes_json_and_text(tmp_path: Path, feeds) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    feed = tmp_path / "feed.jsonl"
    feed.write_text(
        "\n".join(feeds.rl_round("r1") + feeds.rl_round("r2", at="2026-11-20T22:00", won="3400")) + "\n"
    )
    assert _run("ingest", str(feed), "--db", db).exit_code == 0
    newest = _run("recall", "--table", "RL-09", "--last", "1", "--db", db)
    assert newest.exit_code == 1  # the last round (r2) has the wrong payout
    assert "settlement_mismatch bet b1" in newest.stdout and "spin (seq 5): 17" in newest.stdout
    body = json.loads(_run("recall", "--table", "RL-09", "--json", "--db", db).stdout)
    assert body["table"] == "RL-09" and [r["round"] for r in body["rounds"]] == ["r1", "r2"]
    assert {"events", "derivation", "bets", "findings", "outcome", "state", "opened_at"} <= set(
        body["rounds"][0]
    )
    assert _run("recall", "--table", "NOPE", "--db", db).exit_code == 2
    assert _run("recall", "--table", "RL-09", "--last", "0", "--db", db).exit_code == 2
    assert _run("recall", "--db", db).exit_code == 2


@pytest.mark.parametrize("last", [0, -1])
def test_a_last_below_one_is_refused(app: LedgerApp, last: int) -> None:
    with pytest.raises(ValueError):
        recall(app, "RL-01", last=last)
