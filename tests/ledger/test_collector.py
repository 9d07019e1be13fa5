"""The collector setting of a long pass (``ledger.storage.collector``): raised for the pass, restored
after (also on an error, also around ingest and verify), and cyclic garbage still collected."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from ledger.services.ingest import ingest_file
from ledger.storage.collector import pass_collector
from ledger.storage.store import LedgerApp
from ledger.verify.engine import verify_store


@pytest.fixture
def default_thresholds() -> Iterator[tuple[int, int, int]]:
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        yield gc.get_threshold()
    finally:
        gc.set_threshold(*before)


def test_the_threshold_is_raised_for_the_pass_and_restored(default_thresholds) -> None:
    with pass_collector(5000):
        assert gc.get_threshold() == (5000, 10, 10)
        with pass_collector(2000):  # a pass inside a pass keeps the outer setting
            assert gc.get_threshold() == (5000, 10, 10)
        assert gc.get_threshold() == (5000, 10, 10)
    assert gc.get_threshold() == default_thresholds
    with pytest.raises(RuntimeError), pass_collector(5000):
        raise RuntimeError("a pass that fails")
    assert gc.get_threshold() == default_thresholds


def test_a_program_that_turned_collection_off_keeps_it_off(default_thresholds) -> None:
    gc.set_threshold(0)
    with pass_collector(5000):
        assert gc.get_threshold()[0] == 0
    assert gc.get_threshold()[0] == 0


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cyclic collector frees it


def test_cyclic_garbage_is_still_collected_during_a_pass(default_thresholds) -> None:
    gc.collect()
    was_enabled = gc.isenabled()
    gc.enable()
    try:
        with pass_collector(1000):
            first = _Node()
            freed = weakref.ref(first)
            del first
            for _ in range(20_000):  # far more than the raised threshold
                _Node()
            assert freed() is None  # collected by a collection the pass triggered
    finally:
        if not was_enabled:
            gc.disable()


def test_ingest_and_verify_leave_the_thresholds_as_they_were(
    app: LedgerApp, examples: Path, default_thresholds
) -> None:
    report = ingest_file(app, str(examples / "fpc.jsonl"))
    assert report.stored > 0 and not report.rejected
    assert gc.get_threshold() == default_thresholds
    assert verify_store(app).exit_code == 0
    assert gc.get_threshold() == default_thresholds
