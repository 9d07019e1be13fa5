"""The projection contract: closed rounds arrive once each, in store order, on both stores."""

from __future__ import annotations

from pathlib import Path

from ledger.domain.round import Round
from ledger.services.ingest import ingest_file
from ledger.storage.store import LedgerApp
from projections.base import MemoryRows, Rows, View, closed_rounds, fold_store

GAME_FILES = ["rl.jsonl", "fpc.jsonl", "sp9.jsonl", "3cb.jsonl", "stud.jsonl", "mj.jsonl"]


class RoundCount(View):
    """Counts closed rounds per table and keeps the order they arrived in."""

    name = "round_count"

    def apply(self, rnd: Round, rows: Rows) -> None:
        row = rows.get(f"table:{rnd.table}") or {"rounds": 0, "order": []}
        rows.put(f"table:{rnd.table}", {"rounds": row["rounds"] + 1, "order": [*row["order"], rnd.round]})


def _ingest_examples(app: LedgerApp, examples: Path) -> None:
    for name in GAME_FILES:
        ingest_file(app, examples / name)


def test_each_closed_round_is_yielded_once_in_store_order(app: LedgerApp, examples: Path) -> None:
    _ingest_examples(app, examples)
    seen = list(closed_rounds(app))
    positions = [p for p, _ in seen]
    assert positions == sorted(positions)
    keys = [(r.table, r.round) for _, r in seen]
    assert len(keys) == len(set(keys)) >= 6
    assert all(r.ended_by is not None for _, r in seen)


def test_resuming_mid_log_loads_rounds_that_opened_before_the_position(
    app: LedgerApp, examples: Path
) -> None:
    _ingest_examples(app, examples)
    seen = list(closed_rounds(app))
    cut = seen[len(seen) // 2][0] - 1  # just before a closing event: that round opened earlier
    resumed = list(closed_rounds(app, after=cut))
    assert [(p, r.round, len(r.events)) for p, r in resumed] == [
        (p, r.round, len(r.events)) for p, r in seen if p > cut
    ]


def test_fold_store_applies_every_round(app: LedgerApp, examples: Path) -> None:
    _ingest_examples(app, examples)
    rows = fold_store(app, RoundCount())
    assert isinstance(rows, MemoryRows)
    total = sum(row["rounds"] for _, row in rows.scan("table:"))
    assert total == len(list(closed_rounds(app)))
