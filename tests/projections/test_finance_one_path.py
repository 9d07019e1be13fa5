"""One judging path: on generated multi-game days with injected dealer errors, the commission
the views say was due equals what ``ledger verify`` derived, round by round; the house view,
the day report and the exported rounds carry the same money (Hypothesis)."""

from __future__ import annotations

import json
import tempfile
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger.games import GAMES
from ledger.report.day import summarize_day
from ledger.services.ingest import ingest_file
from ledger.storage.store import LedgerApp, open_ledger
from ledger.tools.simulate import simulate
from ledger.tools.simulators import SIMULATORS
from ledger.verify.engine import verify_store
from ledger.verify.judge import Judged
from projections.base import MemoryRows, closed_rounds, fold_store
from projections.commission import CommissionView
from projections.export import table_rows
from projections.gaming_day import day_of
from projections.house import HouseView
from tests.conftest import DEV_EXAMPLES

ZERO = Decimal(0)
SIMULATED = sorted(SIMULATORS)
FULL_RUN = settings.default.max_examples > DEV_EXAMPLES
"""Whether the ``ci`` Hypothesis profile is loaded (a full run; tests/conftest.py)."""
SETTINGS = settings(
    max_examples=8 if FULL_RUN else 3, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
"""Eight generated days in a full run, three in the developer's tier (each builds a store)."""

days = st.fixed_dictionaries(
    {
        "games": st.lists(st.sampled_from(SIMULATED), min_size=2, max_size=4, unique=True),
        "rounds": st.integers(2, 6),
        "tables": st.integers(1, 2),
        "seed": st.integers(0, 2**32 - 1),
        "rate": st.sampled_from([0.2, 0.5, 1.0]),
    }
)


def _store(day: dict, folder: str) -> LedgerApp:
    sim = simulate(
        [GAMES[k] for k in day["games"]],
        rounds=day["rounds"],
        tables=day["tables"],
        seed=day["seed"],
        error_rate=day["rate"],
    )
    feed = Path(folder) / "feed.jsonl"
    sim.write(str(feed))
    app = open_ledger(f"sqlite:///{Path(folder) / 'ledger.db'}")
    ingest_file(app, feed)
    return app


def _verify_due(judged: Judged) -> Decimal:
    d = judged.derivation
    return sum((s.commission for s in d.expected.values()), ZERO) + sum((c.due for c in d.commissions), ZERO)


def _total(rows: MemoryRows, prefix: str, name: str) -> Decimal:
    return sum((Decimal(r[name]) for _, r in rows.scan(prefix)), ZERO)


@SETTINGS
@given(days)
def test_due_commission_in_the_views_is_verifys_round_by_round(day: dict) -> None:
    with tempfile.TemporaryDirectory() as folder:
        app = _store(day, folder)
        by_verify: dict[tuple[str, str], Decimal] = {}
        verify_store(
            app, on_judged=lambda j: by_verify.__setitem__((j.round.table, j.round.round), _verify_due(j))
        )
        rows = MemoryRows()
        view = CommissionView()
        by_view: dict[tuple[str, str], Decimal] = {}
        for _, rnd in closed_rounds(app):
            before = _total(rows, "c|", "due")
            # each round as if the updater had stopped and resumed: state read back from JSON
            rows = MemoryRows(json.loads(json.dumps(rows.rows)))
            view.apply(rnd, rows)
            by_view[(rnd.table, rnd.round)] = _total(rows, "c|", "due") - before
        assert by_view == {k: v for k, v in by_verify.items() if k in by_view}
        assert rows.rows == fold_store(app, CommissionView()).rows
        app.close()


@pytest.mark.slow  # the day report and the export of 8 generated days; the due commission runs by default
@SETTINGS
@given(days)
def test_house_view_day_report_and_exported_rounds_carry_the_same_money(day: dict) -> None:
    with tempfile.TemporaryDirectory() as folder:
        app = _store(day, folder)
        house = fold_store(app, HouseView())
        commission = fold_store(app, CommissionView())
        rounds = table_rows(app, 6, None, None)["rounds"]
        days_seen = {day_of(rnd.opened_at, 6) for _, rnd in closed_rounds(app)}
        tables = [t for d in sorted(days_seen) for t in summarize_day(app, d, 6).tables]
        app.close()
    for name in ("turnover", "hold", "commission"):
        exported = sum((r[name] for r in rounds), ZERO)
        reported = sum((getattr(t, name) for t in tables), ZERO)
        assert exported == _total(house, "t|", name) == reported, name
    assert sum((r["commission"] for r in rounds), ZERO) == _total(commission, "c|", "recorded")
    assert sum((r["commission_due"] for r in rounds), ZERO) == _total(commission, "c|", "due")
