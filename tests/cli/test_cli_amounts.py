"""Amounts are written one way in every output a person reads (thousands separators, two
decimals) and one way in the JSON machines read (two-decimal strings), except a finding's
``expected``/``recorded`` fields, which keep their text (the verify contract, docs/FEED.md
"JSON amounts").

One store per backend (SQLite and PostgreSQL): the example roulette feed at RL-01, and the same
rounds at RL-02 with one prize overpaid by 11,500 (``won`` 200 recorded as 11700) and a
commission of 5 taken on a losing bet. Commands run in process through typer's test runner.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from tests.conftest import EXAMPLES

runner = CliRunner()
OVERPAID = ("RL-02", "000001", "b5")
COMMISSION = ("RL-02", "000003")
PLAIN = re.compile(r"^-?\d+\.\d{2}$")
"""An amount as JSON writes it: two decimals, no separator."""
BARE = re.compile(r"(?<![\w.,:-])(11700|11500|200|100)(?![\w.,])")
"""A bare integer amount of this feed (not part of an id, a time or a formatted amount)."""


def _run(*args: str, codes: tuple[int, ...] = (0, 1)) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code in codes, (args, result.exit_code, result.output)
    return result.stdout


def _rl02_lines() -> list[str]:
    """The example rounds at RL-02: b5 of round 1 overpaid, a commission on a lost bet of round 3."""
    lines = (EXAMPLES / "rl.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    moved = [line.replace('"RL-01"', '"RL-02"') for line in lines]
    _, rnd, bet = OVERPAID
    at = next(
        i
        for i, x in enumerate(moved)
        if f'"round":"{rnd}"' in x and f'"bet":"{bet}"' in x and "bet_settled" in x
    )
    assert '"won":"200"' in moved[at]
    moved[at] = moved[at].replace('"won":"200"', '"won":"11700"')
    _, rnd = COMMISSION
    lost = next(
        i
        for i, x in enumerate(moved)
        if f'"round":"{rnd}"' in x and "bet_settled" in x and '"result":"lose"' in x
    )
    moved[lost] = moved[lost].replace('"commission":"0"', '"commission":"5"')
    assert moved[lost] != lines[lost].replace('"RL-01"', '"RL-02"')
    return moved


@pytest.fixture(scope="module")
def db(module_db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("amounts")
    feed = folder / "rl-02.jsonl"
    feed.write_text("".join(_rl02_lines()), encoding="utf-8")
    _run("ingest", str(EXAMPLES / "rl.jsonl"), str(feed), "--db", module_db_url, codes=(0,))
    yield module_db_url


def _finding(found: list[dict[str, Any]], code: str) -> dict[str, Any]:
    (one,) = [f for f in found if f["code"] == code and f["table"] == "RL-02"]
    return one


def test_verify_text_writes_the_findings_amounts_with_separators_and_two_decimals(db: str) -> None:
    text = _run("verify", "--db", db, codes=(1,))
    assert (
        "expected result=win returned=100.00 won=200.00 commission=0.00; "
        "recorded result=win returned=100.00 won=11,700.00 commission=0.00"
    ) in text
    assert "commission due is 0.00, the table took 5.00" in text
    assert "won=11700" not in text and "won=200 " not in text


def test_verify_json_keeps_the_finding_fields_as_the_contract_gives_them(db: str) -> None:
    """Backward compatible: ``expected``/``recorded`` hold the derived and recorded text as
    before; only the prose of ``message`` is formatted."""
    found = json.loads(_run("verify", "--json", "--db", db, codes=(1,)))["findings"]
    paid = _finding(found, "settlement_mismatch")
    assert (paid["expected"]["won"], paid["recorded"]["won"]) == ("200", "11700")
    fee = _finding(found, "commission_mismatch")
    assert (fee["expected"]["commission"], fee["recorded"]["commission"]) == ("0", "5")
    assert fee["message"].startswith("commission due is 0.00, the table took 5.00")


def test_replay_text_writes_stakes_settlements_and_event_amounts_formatted(db: str) -> None:
    text = _run("replay", "/".join(OVERPAID[:2]), "--db", db, codes=(1,))
    bet = next(line for line in text.splitlines() if line.startswith("  !! b5"))
    assert bet.endswith("win ret 100.00 won 200.00 comm 0.00 | win ret 100.00 won 11,700.00 comm 0.00"), bet
    assert "bet=b5 result=win returned=100.00 won=11,700.00 commission=0.00" in text
    events = text.split("derivation")[0]
    assert not BARE.search(events.split("\n", 1)[1]), events


def test_replay_derivation_writes_the_games_amounts_formatted(db: str) -> None:
    """The game's own steps (stake, returned, won) use the one formatter; odds and numbers not."""
    text = _run("replay", "/".join(OVERPAID[:2]), "--db", db, codes=(1,))
    derivation = text.split("\nderivation\n")[1].split("\nbets")[0]
    assert "b5 (100.00): dozen 1 pays 2 to 1 → win, returned 100.00, won 200.00" in derivation
    assert not BARE.search(derivation), derivation


def test_replay_json_writes_bet_amounts_as_two_decimal_strings(db: str) -> None:
    body = json.loads(_run("replay", "/".join(OVERPAID[:2]), "--json", "--db", db, codes=(1,)))
    (b5,) = [b for b in body["bets"] if b["bet"] == "b5"]
    assert (b5["amount"], b5["recorded"]["won"], b5["derived"]["won"]) == ("100.00", "11700.00", "200.00")
    for bet in body["bets"]:
        for side in ("derived", "recorded"):
            assert all(PLAIN.match(bet[side][k]) for k in ("returned", "won", "commission")), bet
        assert PLAIN.match(bet["amount"]), bet


def test_recall_text_writes_stakes_and_settlements_formatted(db: str) -> None:
    text = _run("recall", "--table", "RL-02", "--last", "5", "--db", db, codes=(1,))
    assert "win returned 100.00 won 11,700.00; the rules give win returned 100.00 won 200.00" in text
    assert "commission 5.00" in text
    assert not BARE.search(re.sub(r"\d{4}-\d\d-\d\dT[\d:+]+", "", text)), text


def test_the_day_report_writes_two_decimal_json_and_formatted_pages(db: str, tmp_path: Path) -> None:
    day = json.loads(_run("report", "--day", "2026-11-20", "--json", "--db", db, codes=(1,)))
    rows = [*day["tables"], *day["totals"].values()]
    for row in rows:
        assert all(PLAIN.match(row[k]) for k in ("turnover", "hold", "commission", "hold_delta")), row
    (rl02,) = [r for r in day["tables"] if r["table"] == "RL-02"]
    assert rl02["hold_delta"] == "-11500.00" and rl02["commission"] == "5.00"
    page = tmp_path / "day.html"
    _run("report", "--day", "2026-11-20", "--html", str(page), "--db", db, codes=(1,))
    html = page.read_text(encoding="utf-8")
    assert "−11,500.00" in html  # RL-02's hold Δ rules
    assert "HKD over paid 11,500.00, commission over taken 5.00" in html  # the money involved


def test_the_round_page_writes_the_findings_amounts_formatted(db: str, tmp_path: Path) -> None:
    page = tmp_path / "round.html"
    _run("report", "/".join(OVERPAID[:2]), "--html", str(page), "--db", db, codes=(1,))
    html = page.read_text(encoding="utf-8")
    assert '<span class="fld diff"><i>won </i>11,700.00</span>' in html
    assert "<code>bet=b5 result=win returned=100.00 won=11,700.00 commission=0.00</code>" in html


def test_stats_text_writes_the_money_of_findings_formatted(db: str) -> None:
    text = _run("stats", "--db", db, codes=(0, 1))
    line = next(x for x in text.splitlines() if x.startswith("  RL-02 "))
    assert line.endswith("HKD over_paid 11,500.00, commission_over_taken 5.00"), line
