"""The updater: exactly once, rebuildable, on SQLite and PostgreSQL, even when killed mid-batch."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ledger.services.ingest import ingest_file
from ledger.storage.store import LedgerApp, open_ledger
from projections.base import MemoryRows, fold_store
from projections.check import check_projections
from projections.commission import CommissionView
from projections.house import HouseView
from projections.registry import registered_views
from projections.updater import (
    ViewStore,
    catch_up,
    catch_up_view,
    encode_row,
    read_view,
    rebuild,
    status,
)

GAME_FILES = ["rl.jsonl", "fpc.jsonl", "sp9.jsonl", "3cb.jsonl", "stud.jsonl", "mj.jsonl"]
ROOT = Path(__file__).resolve().parents[2]


def _ingest(app: LedgerApp, examples: Path, names: list[str] = GAME_FILES) -> None:
    for name in names:
        ingest_file(app, examples / name)


def _text(rows: MemoryRows) -> dict[str, str]:
    return {k: encode_row(r) for k, r in rows.rows.items()}


def _stored(app: LedgerApp, name: str) -> tuple[int | None, dict[str, str]]:
    with ViewStore(app) as store:
        tracking, rows = store.snapshot(name)
    return (tracking.position if tracking else None), _text(rows)


@pytest.mark.slow_postgres
def test_batches_of_any_size_equal_one_fold_of_the_store(app: LedgerApp, examples: Path) -> None:
    _ingest(app, examples)
    for view in registered_views():
        expected = _text(fold_store(app, view))
        assert expected, view.name
        catch_up_view(app, view, batch_rounds=1)
        assert _stored(app, view.name)[1] == expected, view.name
        catch_up_view(app, view, batch_rounds=7, name=f"{view.name}-7")
        assert _stored(app, f"{view.name}-7")[1] == expected, view.name


def test_a_second_update_counts_nothing_twice(app: LedgerApp, examples: Path) -> None:
    _ingest(app, examples, ["rl.jsonl", "3cb.jsonl"])
    first = catch_up(app, [CommissionView()], batch_rounds=2)
    before = _stored(app, "commission")
    assert catch_up(app, [CommissionView()]) == first
    assert _stored(app, "commission") == before
    _ingest(app, examples, ["rl.jsonl", "sp9.jsonl"])  # rl again: stored nothing twice
    catch_up(app, [CommissionView()], batch_rounds=2)
    assert _stored(app, "commission")[1] == _text(fold_store(app, CommissionView()))


def test_a_crash_between_batches_loses_nothing(app: LedgerApp, examples: Path) -> None:
    _ingest(app, examples)

    def crash(view: str, batch: int) -> None:
        if batch == 3:
            raise RuntimeError("power cut")

    with pytest.raises(RuntimeError):
        catch_up_view(app, CommissionView(), batch_rounds=2, before_commit=crash)
    position, _ = _stored(app, "commission")
    assert position is not None and position > 0  # two batches committed
    catch_up_view(app, CommissionView(), batch_rounds=2)
    assert _stored(app, "commission")[1] == _text(fold_store(app, CommissionView()))


def test_a_crash_inside_the_transaction_rolls_the_rows_back(app: LedgerApp, examples: Path) -> None:
    _ingest(app, examples)
    catch_up_view(app, CommissionView(), batch_rounds=3)
    committed = _stored(app, "commission")
    _ingest(app, examples, ["sp9.jsonl"])  # nothing new: same content
    with ViewStore(app) as store:
        store.drop("commission")

    def crash(view: str, batch: int) -> None:
        raise RuntimeError("killed after writing rows, before the position")

    with pytest.raises(RuntimeError):
        catch_up_view(app, CommissionView(), batch_rounds=3, on_write=crash)
    assert _stored(app, "commission") == (None, {})  # neither rows nor position
    catch_up_view(app, CommissionView(), batch_rounds=3)
    assert _stored(app, "commission") == committed


def test_another_updater_moving_the_position_makes_the_batch_redo(app: LedgerApp, examples: Path) -> None:
    _ingest(app, examples)
    calls: list[int] = []

    def rival(view: str, batch: int) -> None:
        calls.append(batch)
        if len(calls) == 1:  # a second updater runs to the end while this batch is pending
            catch_up_view(app, CommissionView(), batch_rounds=4)

    catch_up_view(app, CommissionView(), batch_rounds=4, before_commit=rival)
    assert len(calls) == 1  # the conflicting batch was rolled back; then nothing was left
    assert _stored(app, "commission")[1] == _text(fold_store(app, CommissionView()))


def test_a_view_stored_under_another_version_is_rebuilt(app: LedgerApp, examples: Path) -> None:
    _ingest(app, examples, ["rl.jsonl"])

    class NextVersion(CommissionView):
        version = CommissionView.version + 1

    catch_up_view(app, CommissionView())
    with ViewStore(app) as store:
        b = store
        with b.db.write() as cur:  # a row the old version wrote and the new one never would
            cur.execute(
                f"INSERT INTO {b.rows_table} (view, key, row) VALUES ({b.p}, {b.p}, {b.p})",
                ("commission", "old|row", "{}"),
            )
    assert status(app, [NextVersion()])[0].state == "stale"
    catch_up_view(app, NextVersion())
    assert _stored(app, "commission")[1] == _text(fold_store(app, CommissionView()))
    assert status(app, [NextVersion()])[0].state == "current"


def test_status_counts_rounds_behind(app: LedgerApp, examples: Path) -> None:
    _ingest(app, examples, ["rl.jsonl"])
    [fresh] = status(app, [CommissionView()])
    assert (fresh.state, fresh.position, fresh.rounds_behind) == ("new", 0, 5)
    catch_up(app, [CommissionView()])
    _ingest(app, examples, ["fpc.jsonl"])
    [behind] = status(app, [CommissionView()])
    assert (behind.state, behind.rounds_behind) == ("behind", 5)
    assert behind.events_behind > 0


def test_check_reports_a_tampered_row_with_its_view_and_key(app: LedgerApp, examples: Path) -> None:
    _ingest(app, examples, ["rl.jsonl", "sp9.jsonl"])
    catch_up(app, [CommissionView(), HouseView()])
    assert check_projections(app, [CommissionView(), HouseView()]) == []
    key = next(k for k in _stored(app, "commission")[1] if k.startswith("c|") and "SP9" in k)
    with ViewStore(app) as store:
        b = store
        with b.db.write() as cur:
            cur.execute(
                f"UPDATE {b.rows_table} SET row = {b.p} WHERE view = {b.p} AND key = {b.p}",
                ('{"recorded": "999"}', "commission", key),
            )
    [finding] = check_projections(app, [CommissionView(), HouseView()])
    assert (finding.code, finding.extra["view"], finding.extra["key"]) == (
        "projection_mismatch",
        "commission",
        key,
    )
    assert finding.recorded == {"recorded": "999"}
    result = rebuild(app, CommissionView(), replace=True)
    assert (result.keys, result.replaced) == ([key], True)
    assert check_projections(app, [CommissionView()]) == []


def test_check_on_a_store_without_views_finds_nothing_and_creates_nothing(
    app: LedgerApp, examples: Path
) -> None:
    _ingest(app, examples, ["rl.jsonl"])
    assert check_projections(app) == []
    assert ViewStore(app, create=False).exists is False


def test_read_view_returns_the_caught_up_rows(app: LedgerApp, examples: Path) -> None:
    _ingest(app, examples, ["3cb.jsonl"])
    from projections.base import closed_rounds

    position, rows = read_view(app, CommissionView())
    assert position == [p for p, _ in closed_rounds(app)][-1]
    assert _text(rows) == _text(fold_store(app, CommissionView()))


KILLED_UPDATER = """
import sys, time
from ledger.storage.store import open_ledger
from projections.commission import CommissionView
from projections.updater import catch_up_view

def hang(view, batch):
    if batch == 2:  # the second batch's rows are written, its position is not: die here
        print("in-transaction", flush=True)
        time.sleep(600)

app = open_ledger(sys.argv[1])
catch_up_view(app, CommissionView(), batch_rounds=3, on_write=hang)
print("finished", flush=True)
"""


@pytest.mark.slow_postgres
def test_an_updater_killed_mid_transaction_counts_nothing_twice_and_loses_nothing(
    db_url: str, examples: Path
) -> None:
    """SIGKILL while a batch's rows are written but not committed: the next run resumes at the
    first batch's position and ends equal to a fold of the whole store."""
    app = open_ledger(db_url)
    try:
        _ingest(app, examples)
        catch_up_view(
            app, CommissionView(), batch_rounds=3, name="first-batch-only", upto=_third_closing(app)
        )
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        child = subprocess.Popen(
            [sys.executable, "-c", KILLED_UPDATER, db_url],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "in-transaction"
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert child.returncode == -signal.SIGKILL
        position, rows = _stored(app, "commission")
        expected_position, expected_rows = _stored(app, "first-batch-only")
        assert (position, rows) == (expected_position, expected_rows)  # batch 1 only
        catch_up_view(app, CommissionView(), batch_rounds=3)
        assert _stored(app, "commission")[1] == _text(fold_store(app, CommissionView()))
        assert check_projections(app, [CommissionView()]) == []
    finally:
        app.close()


def _third_closing(app: LedgerApp) -> int:
    from projections.base import closed_rounds

    return [p for p, _ in closed_rounds(app)][2]
