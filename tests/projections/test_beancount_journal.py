"""The journal from house-view rows: a pool's earlier balance is brought forward when the export
starts at a later gaming day, and the journal still passes bean-check with the pool's balance."""

from __future__ import annotations

import subprocess
import sys
from datetime import date
from decimal import Decimal
from pathlib import Path

from projections.base import MemoryRows
from projections.beancount import OPENING, journal, movements

BEAN_CHECK = Path(sys.executable).with_name("bean-check")


def _house() -> MemoryRows:
    def pool_row(hour: str, **amounts: str) -> dict[str, object]:
        return {
            "hour": hour,
            "table": "STUD-01",
            "game": "STUD",
            "currency": "HKD",
            "pool": "PJ-1",
            "hits": 0,
            "seed": "0",
            "contributions": "0",
            "from_pool": "0",
            "from_house": "0",
            "resets": "0",
            **amounts,
        }

    return MemoryRows(
        {
            "j|2026-11-20T10|STUD-01|HKD|PJ-1": pool_row(
                "2026-11-20T10", seed="1000", contributions="20", from_pool="500", from_house="100"
            ),
            "j|2026-11-21T10|STUD-01|HKD|PJ-1": pool_row(
                "2026-11-21T10", contributions="7.50", from_pool="527.50", resets="1000"
            ),
            "t|2026-11-21T10|STUD-01|HKD": {
                "hour": "2026-11-21T10",
                "table": "STUD-01",
                "game": "STUD",
                "currency": "HKD",
                "rounds": 1,
                "turnover": "50",
                "hold": "-12.50",
                "commission": "0",
                "commission_bet": "0",
                "commission_bank": "0",
                "commission_fee": "0",
            },
        }
    )


def test_a_later_start_brings_the_pool_balance_forward(tmp_path: Path) -> None:
    moves = movements(_house(), cutoff_hour=6, day_from=date(2026, 11, 21))
    [opening] = [m for m in moves if m.debit == OPENING]
    assert (opening.day, opening.credit, opening.amount) == (
        date(2026, 11, 21),
        "Liabilities:Jackpot:PJ-1",
        Decimal("520"),
    )  # 1000 + 20 − 500
    text = journal(moves)
    # 520 + 7.50 − 527.50 + 1000 (reset to the seed)
    assert "2026-11-22 balance Liabilities:Jackpot:PJ-1" in text
    assert text.split("2026-11-22 balance Liabilities:Jackpot:PJ-1")[1].split()[0] == "-1000.00"
    assert "2026-11-22 balance Income:Hold:STUD-01" in text
    path = tmp_path / "house.beancount"
    path.write_text(text)
    check = subprocess.run([str(BEAN_CHECK), str(path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_no_movement_gives_an_empty_journal() -> None:
    assert journal([]).startswith('option "title"')
    assert movements(MemoryRows(), cutoff_hour=6) == []
