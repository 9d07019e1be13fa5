"""Done when: a simulated multi-game day (dealer errors, jackpot awards, an emptied pool reset)
exported as CSV, Parquet and Beancount reconciles in every total with ``ledger commission``,
``ledger jackpot`` and ``ledger bank``; ``bean-check`` is clean and beancount's loader reads
every balance the views give; the Parquet columns are typed (SQLite and PostgreSQL)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from beancount import loader
from beancount.core import data as bean
from typer.testing import CliRunner

from cli.main import app as cli_app
from ledger.report.day import summarize_day
from ledger.storage.store import LedgerApp, open_ledger
from projections.beancount import account_part
from projections.export import export
from projections.house import HouseView
from projections.updater import view_rows
from tests.projections.finance_day import store_day

ZERO = Decimal(0)
BEAN_CHECK = Path(sys.executable).with_name("bean-check")
DAY = date(2026, 11, 20)


def _cli(db_url: str, *args: str) -> Any:
    result = CliRunner().invoke(cli_app, [*args, "--db", db_url, "--json"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.output)


def _money(text: str) -> Decimal:
    return Decimal(text) if text else ZERO


# The views, exports and journal are the same code on both stores (test_projection_updater and
# test_projection_export keep PostgreSQL in the developer's tier); the PostgreSQL day runs slow.
pytestmark = pytest.mark.slow_postgres


@pytest.fixture(scope="module")
def finance_day(
    module_db_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LedgerApp, str, Path]]:
    """The day (tests/projections/finance_day.py) stored and exported once per module and store
    (the tests only read it)."""
    folder = tmp_path_factory.mktemp("finance")
    store_day(module_db_url, tmp_path_factory)
    app = open_ledger(module_db_url)
    try:
        out = folder / "out"
        export(app, out, formats=["csv", "parquet", "beancount"])
        yield app, module_db_url, out
    finally:
        app.close()


def test_every_exported_total_equals_the_views(finance_day: tuple[LedgerApp, str, Path]) -> None:
    _, db_url, out = finance_day
    commission = _cli(db_url, "commission", "--by", "game")
    jackpot = _cli(db_url, "jackpot")
    bank = _cli(db_url, "bank")
    rounds = pq.read_table(out / "rounds.parquet").to_pylist()
    with open(out / "rounds.csv", encoding="utf-8") as stream:
        rounds_csv = list(csv.DictReader(stream))
    assert len(rounds) == len(rounds_csv) == sum(t["rounds"] for t in commission["totals"])
    for total in commission["totals"]:
        cur = total["currency"]
        mine = [r for r in rounds if r["currency"] == cur]
        mine_csv = [r for r in rounds_csv if r["currency"] == cur]
        for column, field in (
            ("commission", "recorded"),
            ("commission_due", "due"),
            ("commission_unjudged", "unjudged_recorded"),
        ):
            assert sum((r[column] for r in mine), ZERO) == Decimal(total[field]), (cur, column)
            assert sum((_money(r[column]) for r in mine_csv), ZERO) == Decimal(total[field])
        assert sum(
            (r["commission_bet"] + r["commission_bank"] + r["commission_fee"] for r in mine), ZERO
        ) == Decimal(total["recorded"])
    by_game = {line["group"]: line for line in commission["lines"]}
    for game, line in by_game.items():
        assert sum((r["commission"] for r in rounds if r["game"] == game), ZERO) == Decimal(
            line["recorded"]
        ), game
    sp9 = [r for r in rounds if r["game"] == "SP9"]
    assert (
        sum((r["commission_bank"] for r in sp9), ZERO)
        == sum(
            (
                Decimal(layer["recorded_commission"] or 0)
                for t in bank["tables"]
                for rnd in t["rounds"]
                for layer in rnd["layers"]
            ),
            ZERO,
        )
        != 0
    )
    assert (
        sum((r["commission_fee"] for r in rounds if r["game"] == "MJ"), ZERO)
        == Decimal(by_game["MJ"]["recorded"])
        != 0
    )
    [pool] = jackpot["pools"]
    assert sum((r["jackpot_contribution"] or ZERO for r in rounds), ZERO) == Decimal(pool["contributions"])
    assert Decimal(pool["resets"]) > 0 and Decimal(pool["house_funded"]) > 0
    exported_lines = pq.read_table(out / "commission.parquet").to_pylist()
    assert {(r["game"], r["recorded"], r["due"]) for r in exported_lines} == {
        (g, Decimal(line["recorded"]), Decimal(line["due"])) for g, line in by_game.items()
    }
    settlements = pq.read_table(out / "settlements.parquet").to_pylist()
    assert sum((s["commission"] for s in settlements), ZERO) + sum(
        (r["commission_fee"] for r in rounds), ZERO
    ) == sum((Decimal(t["recorded"]) for t in commission["totals"]), ZERO)


@pytest.mark.slow  # bean-check's run of the journal; the exported totals are checked by default
def test_the_journal_balances_are_the_views(finance_day: tuple[LedgerApp, str, Path]) -> None:
    app, db_url, out = finance_day
    journal = out / "house.beancount"
    check = subprocess.run([str(BEAN_CHECK), str(journal)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    entries, errors, _ = loader.load_file(str(journal))
    assert errors == []
    asserted = {
        (e.account, e.date, e.amount.currency): e.amount.number
        for e in entries
        if isinstance(e, bean.Balance)
    }
    flows: dict[tuple[str, date], Decimal] = defaultdict(lambda: ZERO)
    for e in entries:
        if isinstance(e, bean.Transaction):
            for p in e.postings:
                assert p.units is not None and p.units.number is not None
                flows[(p.account, e.date)] += p.units.number
    after = DAY + timedelta(days=1)
    # commission and hold per table and gaming day: the day report and ledger commission
    tables = {t.table: t for t in summarize_day(app, DAY, 6).tables}
    per_table = {line["group"]: line for line in _cli(db_url, "commission", "--by", "table")["lines"]}
    assert set(per_table) == set(tables)
    for table, row in tables.items():
        part = account_part(table)
        kinds = [f"Income:Commission:{k}:{part}" for k in ("Bets", "BankLayers", "Fees")]
        booked = -sum((flows[(k, DAY)] for k in kinds), ZERO)
        assert booked == row.commission == Decimal(per_table[table]["recorded"]), table
        assert -sum((asserted.get((k, after, row.currency), ZERO) for k in kinds), ZERO) == row.commission
        assert -asserted.get((f"Income:Hold:{part}", after, row.currency), ZERO) == row.hold
    # the pool liability is what ledger jackpot shows, and every pool movement is booked
    [pool] = _cli(db_url, "jackpot")["pools"]
    liability = f"Liabilities:Jackpot:{account_part(pool['pool'])}"
    assert -asserted[(liability, after, pool["currency"])] == Decimal(pool["balance"])
    assert flows[("Expenses:Jackpot:Seed", DAY)] == Decimal(pool["seed"])
    assert flows[("Expenses:Jackpot:Contributions", DAY)] == Decimal(pool["contributions"])
    assert flows[("Expenses:Jackpot:Resets", DAY)] == Decimal(pool["resets"])
    assert flows[("Expenses:Jackpot:HouseFunded", DAY)] == Decimal(pool["house_funded"])
    pool_out = sum(
        (
            -p.units.number
            for e in entries
            if isinstance(e, bean.Transaction)
            for p in e.postings
            if p.account == "Assets:Cage"
            and p.units is not None
            and p.units.number is not None
            and "paid by the pool" in (e.narration or "")
        ),
        ZERO,
    )
    assert pool_out == Decimal(pool["pool_awards"])
    # every asserted account is one the views know
    house = view_rows(app, HouseView())
    assert {a for a, _, _ in asserted} <= {
        f"{prefix}:{account_part(r['table'])}"
        for _, r in house.scan("t|")
        for prefix in (
            "Income:Commission:Bets",
            "Income:Commission:BankLayers",
            "Income:Commission:Fees",
            "Income:Hold",
        )
    } | {liability}


def test_the_parquet_is_typed(finance_day: tuple[LedgerApp, str, Path]) -> None:
    app, _, out = finance_day
    rounds = pq.read_table(out / "rounds.parquet")
    schema = rounds.schema
    assert schema.field("opened_at").type == pa.timestamp("us", tz="+08:00")
    assert schema.field("gaming_day").type == pa.date32()
    assert pa.types.is_decimal(schema.field("commission").type)
    assert rounds.column("jackpot_pool").null_count > 0  # real nulls, not ''
    meta = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items()}
    assert meta["store_head"] == app.head()
    assert set(meta) >= {"checkpoint", "cutoff_hour", "ledger_version"}
    bets = pq.read_table(out / "bets.parquet").schema
    assert pa.types.is_struct(bets.field("spot").type)
    assert pa.types.is_struct(pq.read_table(out / "projections.parquet").schema.field("row").type)
    first = rounds.to_pylist()[0]
    assert first["opened_at"].utcoffset() == timedelta(hours=8)


def test_csv_ids_and_times_survive_a_spreadsheet(finance_day: tuple[LedgerApp, str, Path]) -> None:
    _, _, out = finance_day
    with open(out / "rounds.csv", encoding="utf-8") as stream:
        first = next(csv.DictReader(stream))
    assert first["round"] == '="000001"'  # a spreadsheet shows the text 000001, not 1
    assert first["opened_at"].endswith("+08:00") and "T" in first["opened_at"]
