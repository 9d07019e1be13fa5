"""The follower hands each batch to its database thread behind the one being stored: stored
in the order read, each once, acknowledged after its own commit, whatever fails."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path
from typing import Any

from ledger.live import follower as follower_module
from ledger.live.follower import Follower, FollowOptions
from ledger.live.sources import Batch, Bounds, Line
from ledger.services.ingest import Ingestor, IngestReport
from ledger.storage.store import open_ledger
from tests.live.conftest import Captured, batch_store, feed_lines, store_rows


class ListSource:
    """Batches given in advance, every one at once (the follower is behind), then nothing."""

    name = "batches"

    def __init__(self, batches: list[list[Line]]) -> None:
        self.batches = [Batch(lines, more=True) for lines in batches]
        self.committed_batches: list[int] = []
        self.on_committed: Any = None

    async def open(self) -> None:
        pass

    async def next_batch(self, bounds: Bounds, ready: asyncio.Future[Any] | None = None) -> Batch | None:
        if self.batches:
            return self.batches.pop(0)
        await asyncio.sleep(bounds.seconds)
        return Batch()

    async def committed(self, batch: Batch) -> None:
        first = batch.lines[0].number
        if self.on_committed is not None:
            await self.on_committed(first)
        self.committed_batches.append(first)

    async def holding(self, batch: Batch) -> None:
        pass

    async def lag(self) -> float:
        return 0.0

    async def close(self) -> None:
        pass


class Recording(Ingestor):
    """The batch ingest, noting each call's first line number (and failing where told)."""

    def __init__(self, *args: Any, log: list[tuple[str, int]], fail_first: set[int], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log, self.fail_first = log, fail_first

    def ingest(self, lines: Any, **kwargs: Any) -> IngestReport:
        numbered = list(lines)
        first = numbered[0][0]
        self.log.append(("start", first))
        if first in self.fail_first:
            self.fail_first.discard(first)
            self.log.append(("failed", first))
            raise sqlite3.OperationalError("database is locked")
        report = super().ingest(numbered, **kwargs)
        self.log.append(("stored", first))
        return report


def _batches(lines: list[bytes], size: int) -> list[list[Line]]:
    numbered = [Line(n, text) for n, text in enumerate(lines, 1)]
    return [numbered[i : i + size] for i in range(0, len(numbered), size)]


def _follow(tmp_path: Path, source: ListSource, log: list[tuple[str, int]], fail_first: set[int]) -> str:
    url = f"sqlite:///{tmp_path / 'follow.db'}"
    app = open_ledger(url)
    original = follower_module._rows_ingestor

    def recording(app_: Any, *, keep: bool = True) -> Ingestor:
        return Recording(app_, extend_tree=keep, tree_by_caller=True, log=log, fail_first=fail_first)

    follower_module._rows_ingestor = recording  # type: ignore[assignment]
    try:
        follower = Follower(
            app,
            source,  # type: ignore[arg-type]
            options=FollowOptions(Bounds(500, 0.05), idle_exit=0.3),
            out=Captured(),
            log=Captured(),
            rejects=Captured(),
        )
        assert asyncio.run(follower.run()) == 0
    finally:
        follower_module._rows_ingestor = original  # type: ignore[assignment]
        app.close()
    return url


def test_the_next_batch_is_stored_before_the_loop_acknowledges_the_one_before(tmp_path: Path) -> None:
    lines = feed_lines()
    batches = _batches(lines, 500)
    source = ListSource(batches)
    log: list[tuple[str, int]] = []
    second = batches[1][0].number
    second_started = threading.Event()

    async def on_committed(first: int) -> None:
        if first == 1:  # the first batch's acknowledgement waits for the second's store to start
            log.append(("ack waited", first))
            await asyncio.to_thread(second_started.wait, 10)
            log.append(("ack went", first))

    class Watching(list[tuple[str, int]]):
        def append(self, item: tuple[str, int]) -> None:
            super().append(item)
            if item == ("start", second):
                second_started.set()

    log = Watching()
    source.on_committed = on_committed
    url = _follow(tmp_path, source, log, set())
    assert second_started.is_set()
    assert log.index(("start", second)) < log.index(("ack went", 1))
    assert source.committed_batches == [b[0].number for b in batches]
    assert store_rows(url) == store_rows(batch_store(tmp_path / "batch.db", lines))


def test_a_batch_behind_one_that_failed_is_stored_after_it_in_order_once(tmp_path: Path) -> None:
    lines = feed_lines()
    batches = _batches(lines, 500)
    firsts = [b[0].number for b in batches]
    source = ListSource(batches)
    log: list[tuple[str, int]] = []
    url = _follow(tmp_path, source, log, {firsts[1]})
    stored = [n for what, n in log if what == "stored"]
    assert stored == firsts  # in the order read, each once
    assert ("failed", firsts[1]) in log
    assert source.committed_batches == firsts
    assert store_rows(url) == store_rows(batch_store(tmp_path / "batch.db", lines))
