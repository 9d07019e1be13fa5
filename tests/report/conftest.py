"""Fixtures of the report tests: one SQLite ledger holding every example feed, and a few
hand-written feeds (the ``feeds`` fixture)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import LedgerApp, open_ledger

EXAMPLES = Path(os.environ["LEDGER_EXAMPLES"])  # set by tests/conftest.py
EXAMPLE_FILES = ("3cb", "fpc", "mj", "rl", "sp9", "stud")
SCREENSHOTS = Path(os.environ.get("LEDGER_SCREENSHOTS", Path(__file__).resolve().parents[2] / "screenshots"))
"""Where the browser tests write their screenshots (test_report_browser.py)."""
_STARTED = time.time()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say where this run's screenshots are, for a person to look at."""
    shots = sorted(p.name for p in SCREENSHOTS.glob("*.png") if p.stat().st_mtime >= _STARTED)
    if shots:
        terminalreporter.write_line(
            f"browser screenshots ({len(shots)}): {SCREENSHOTS}/ e.g. {', '.join(shots[:4])}"
        )


class Feeds:
    """Feeds for the report tests."""

    examples = EXAMPLES

    @staticmethod
    def ingest(app: LedgerApp, lines: list[str]) -> None:
        """Ingest feed lines; every line must be stored."""
        report = Ingestor(app).ingest(numbered_lines(lines))
        assert report.exit_code == 0, report

    @classmethod
    def ingest_examples(cls, app: LedgerApp, names: tuple[str, ...] = EXAMPLE_FILES) -> None:
        """Ingest the clean example feeds."""
        for name in names:
            cls.ingest(app, cls.example(name))

    @staticmethod
    def example(name: str) -> list[str]:
        """The lines of one example feed."""
        return (EXAMPLES / f"{name}.jsonl").read_text().splitlines()

    @staticmethod
    def rl_round(
        round_: str,
        *,
        at: str = "2026-11-20T21:00",
        won: str = "3500",
        extra: list[dict[str, Any]] | None = None,
        end: dict[str, Any] | None = None,
        table: str = "RL-09",
    ) -> list[str]:
        """A roulette round: a straight-up on 17 that wins (the table pays ``won``), a red bet
        of 500 that loses, then any ``extra`` events, then ``end`` (``round_closed``)."""
        base = {"v": 1, "table": table, "game": "RL", "round": round_}
        body: list[dict[str, Any]] = [
            {"type": "round_opened", "currency": "HKD"},
            {
                "type": "bet_placed",
                "bet": "b1",
                "player": "P-88",
                "spot": {"kind": "straight", "numbers": [17]},
                "amount": "100",
            },
            {"type": "bet_placed", "bet": "b2", "player": "P-12", "spot": {"kind": "red"}, "amount": "500"},
            {"type": "betting_closed"},
            {"type": "spin_result", "number": 17},
            {
                "type": "bet_settled",
                "bet": "b1",
                "result": "win",
                "returned": "100",
                "won": won,
                "commission": "0",
            },
            {
                "type": "bet_settled",
                "bet": "b2",
                "result": "lose",
                "returned": "0",
                "won": "0",
                "commission": "0",
            },
            *(extra or []),
            end or {"type": "round_closed"},
        ]
        return [
            json.dumps({**base, "seq": i, "at": f"{at}:{i:02d}+08:00", **e})
            for i, e in enumerate(body, start=1)
        ]


@pytest.fixture(scope="session")
def feeds() -> type[Feeds]:
    """The report tests' feed helpers."""
    return Feeds


@pytest.fixture(scope="module")
def examples_ledger(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LedgerApp]:
    """Every clean example feed in one SQLite ledger (read-only for the tests using it)."""
    path = tmp_path_factory.mktemp("report") / "examples.db"
    app = open_ledger(f"sqlite:///{path}")
    Feeds.ingest_examples(app)
    yield app
    app.close()
