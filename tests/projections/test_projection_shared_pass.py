"""Shared passes: every view is caught up, rebuilt and checked in one read of the log, each at
its own position, and each view's rows still commit with its position (exactly once)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import projections.base
import projections.updater
from ledger.domain.round import Round
from ledger.services.ingest import ingest_file
from ledger.storage.store import LedgerApp
from projections.base import MemoryRows, closed_rounds, fold_store, fold_views
from projections.check import check_projections
from projections.commission import CommissionView
from projections.house import HouseView
from projections.registry import registered_views
from projections.updater import (
    Target,
    ViewStore,
    catch_up,
    catch_up_targets,
    catch_up_view,
    encode_row,
    rebuild,
    rebuild_all,
)
from tests.conftest import tiered

# the shared pass is the same code on both stores (test_projection_updater keeps the views'
# PostgreSQL writes in the developer's tier); its PostgreSQL cases run in the slow tier
pytestmark = pytest.mark.slow_postgres

GAME_FILES = ["rl.jsonl", "fpc.jsonl", "sp9.jsonl", "3cb.jsonl", "stud.jsonl", "mj.jsonl"]


def _ingest(app: LedgerApp, examples: Path, names: list[str] = GAME_FILES) -> None:
    for name in names:
        ingest_file(app, examples / name)


def _text(rows: MemoryRows) -> dict[str, str]:
    return {k: encode_row(r) for k, r in rows.rows.items()}


def _stored(app: LedgerApp, name: str) -> tuple[int | None, dict[str, str]]:
    with ViewStore(app) as store:
        tracking, rows = store.snapshot(name)
    return (tracking.position if tracking else None), _text(rows)


def _closings(app: LedgerApp) -> list[int]:
    return [p for p, _ in closed_rounds(app)]


class _Passes:
    """Counts how often the log is read from the start of a pass (``closed_rounds`` calls)."""

    def __init__(self) -> None:
        self.starts: list[int] = []

    def wrap(self, real: object) -> object:
        def counted(app: LedgerApp, after: int = 0, page: int = 1000) -> Iterator[tuple[int, Round]]:
            self.starts.append(after)
            return real(app, after, page)  # type: ignore[operator, no-any-return]

        return counted


@pytest.fixture()
def passes(monkeypatch: pytest.MonkeyPatch) -> _Passes:
    counter = _Passes()
    counted = counter.wrap(projections.base.closed_rounds)
    monkeypatch.setattr(projections.updater, "closed_rounds", counted)  # catch-up, rebuild
    monkeypatch.setattr(projections.base, "closed_rounds", counted)  # fold_views, check
    return counter


def test_views_at_the_same_position_share_one_pass(app: LedgerApp, examples: Path, passes: _Passes) -> None:
    _ingest(app, examples)
    views = registered_views()
    assert len(views) == 4
    positions = catch_up(app, views)
    assert passes.starts == [0]  # one read of the log for all four views, not one per view
    last = _closings(app)[-1]
    assert positions == {v.name: last for v in views}
    for view in views:
        assert _stored(app, view.name) == (last, _text(fold_store(app, view))), view.name


def test_views_at_different_positions_catch_up_in_the_same_pass(
    app: LedgerApp, examples: Path, passes: _Passes
) -> None:
    _ingest(app, examples)
    closings = _closings(app)
    catch_up_view(app, CommissionView(), upto=closings[len(closings) // 2])
    catch_up_view(app, HouseView(), upto=closings[2])
    passes.starts.clear()
    views = registered_views()  # jackpot and bank have never been updated
    positions = catch_up(app, views, batch_rounds=1000)
    assert passes.starts == [0]  # the views behind start it; the others join at their position
    assert set(positions.values()) == {closings[-1]}
    for view in views:
        assert _stored(app, view.name)[1] == _text(fold_store(app, view)), view.name


@pytest.mark.parametrize("batch_rounds", tiered([1, 3, 500], 1))
def test_small_batches_of_several_views_equal_one_fold_each(
    app: LedgerApp, examples: Path, batch_rounds: int
) -> None:
    _ingest(app, examples)
    closings = _closings(app)
    catch_up_view(app, HouseView(), upto=closings[4])
    views = registered_views()
    catch_up(app, views, batch_rounds=batch_rounds)
    for view in views:
        assert _stored(app, view.name) == (closings[-1], _text(fold_store(app, view))), view.name


def test_a_crash_in_a_shared_batch_commits_no_view_of_it(app: LedgerApp, examples: Path) -> None:
    _ingest(app, examples)
    closings = _closings(app)
    targets = [Target(CommissionView(), "commission"), Target(HouseView(), "house")]
    with ViewStore(app) as store:
        catch_up_targets(app, store, targets, batch_rounds=2)
        committed = {t.name: _stored(app, t.name) for t in targets}
        store.drop("commission")
        store.drop("house")

        def crash(view: str, batch: int) -> None:
            if view == "house" and batch == 2:  # commission's rows of batch 2 are written
                raise RuntimeError("killed inside the shared transaction")

        with pytest.raises(RuntimeError):
            catch_up_targets(app, store, targets, batch_rounds=2, on_write=crash)
        after_one = {t.name: _stored(app, t.name)[0] for t in targets}
        assert after_one == {"commission": closings[1], "house": closings[1]}  # batch 1 only
        for t in targets:
            rows = fold_views(app, [t.view], [closings[1]])[0]
            assert _stored(app, t.name)[1] == _text(rows), t.name
        catch_up_targets(app, store, targets, batch_rounds=2)
    assert {t.name: _stored(app, t.name) for t in targets} == committed


def test_a_rival_moving_one_view_between_batches_drops_what_was_known(app: LedgerApp, examples: Path) -> None:
    """The rows kept from the previous batch are valid only at the position they were written
    at: a rival moving the position in between must make the updater read the rows again."""
    _ingest(app, examples)
    closings = _closings(app)
    seen: list[int] = []

    def rival(view: str, batch: int) -> None:
        seen.append(batch)
        if batch == 2 and view == "commission":  # batch 1 is committed; move past batch 2
            catch_up_view(app, CommissionView(), batch_rounds=3, upto=closings[6])

    catch_up(app, [CommissionView(), HouseView()])  # warm: nothing left to do
    with ViewStore(app) as store:
        store.drop("commission")
        catch_up_targets(
            app,
            store,
            [Target(CommissionView(), "commission"), Target(HouseView(), "house")],
            batch_rounds=2,
            before_commit=rival,
        )
    assert 2 in seen
    assert _stored(app, "commission")[1] == _text(fold_store(app, CommissionView()))
    assert _stored(app, "house")[1] == _text(fold_store(app, HouseView()))


def test_a_rebuild_from_zero_reads_no_row_back(
    app: LedgerApp, examples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _ingest(app, examples)
    reads: list[str] = []
    real_get = ViewStore.get

    def counted(self: ViewStore, view: str, key: str) -> str | None:
        reads.append(key)
        return real_get(self, view, key)

    monkeypatch.setattr(ViewStore, "get", counted)
    catch_up(app, registered_views(), batch_rounds=2)
    assert reads == []  # every row of a view built in this run is known to the updater
    for view in registered_views():
        assert _stored(app, view.name)[1] == _text(fold_store(app, view)), view.name


def test_rebuild_all_shares_its_passes_and_equals_rebuild_one_by_one(
    app: LedgerApp, examples: Path, passes: _Passes
) -> None:
    _ingest(app, examples, ["rl.jsonl", "sp9.jsonl", "stud.jsonl"])
    catch_up(app)
    key = next(k for k in _stored(app, "house")[1])
    with ViewStore(app) as store:
        b = store
        with b.db.write() as cur:
            cur.execute(
                f"UPDATE {b.rows_table} SET row = {b.p} WHERE view = {b.p} AND key = {b.p}",
                ('{"tampered": true}', "house", key),
            )
    passes.starts.clear()
    results = rebuild_all(app)
    assert len(passes.starts) == 2  # the (empty) catch-up of the live views, then the rebuild
    assert {r.view: r.keys for r in results} == {
        v.name: ([key] if v.name == "house" else []) for v in registered_views()
    }
    assert [rebuild(app, v).keys for v in registered_views()] == [
        r.keys for r in results
    ]  # one by one: the same verdicts
    replaced = rebuild_all(app, [HouseView()], replace=True)
    assert (replaced[0].keys, replaced[0].replaced) == ([key], True)
    assert _stored(app, "house")[1] == _text(fold_store(app, HouseView()))
    with ViewStore(app) as store:
        assert {t.view for t in store.trackings()} == {v.name for v in registered_views()}


def test_check_folds_every_view_once_each_at_its_own_position(
    app: LedgerApp, examples: Path, passes: _Passes
) -> None:
    _ingest(app, examples)
    closings = _closings(app)
    catch_up_view(app, CommissionView(), upto=closings[3])
    catch_up_view(app, HouseView())
    passes.starts.clear()
    assert check_projections(app, [CommissionView(), HouseView()]) == []
    assert passes.starts == [0]
    with ViewStore(app) as store:
        b = store
        with b.db.write() as cur:
            cur.execute(
                f"DELETE FROM {b.rows_table} WHERE view = {b.p} AND key IN "
                f"(SELECT key FROM {b.rows_table} WHERE view = {b.p} ORDER BY key LIMIT 1)",
                ("commission", "commission"),
            )
    [finding] = check_projections(app, [CommissionView(), HouseView()])
    assert (finding.code, finding.extra["view"]) == ("projection_mismatch", "commission")
    assert f"at position {closings[3]}" in finding.message and "is missing" in finding.message


def test_fold_views_cuts_each_view_at_its_position(app: LedgerApp, examples: Path) -> None:
    _ingest(app, examples)
    closings = _closings(app)
    short, whole = fold_views(app, [CommissionView(), CommissionView()], [closings[0], None])
    assert _text(whole) == _text(fold_store(app, CommissionView()))
    assert sum(r["rounds"] for _, r in short.scan("r|")) == 1
    with pytest.raises(ValueError):
        fold_views(app, [CommissionView()], [None, None])
