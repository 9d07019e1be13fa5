"""Where a gaming day's rounds are stored: the rows ``ledger report --day`` must read.

``ledger seal`` signs, beside each checkpoint, when the rounds that closed since the previous
one opened (:mod:`ledger.proof.seal_index`, an *interval*). The intervals of the valid checkpoints,
chained from the newest back to the start of the store (each begins where the one before it
ends), say which of them can hold a round of day ``D``: those whose opening times reach into
it. The day's rounds are then judged in one pass from the checkpoint before the first such
interval (its snapshot holds every game's state there, checked against its signed digest) to
the end of the last one — or to the end of the log when a round of the day may close after the
newest checkpoint: one opened there (read from the table rows stored since, one small row per
round) or in play at it (its snapshot).

Every part is checked before it is used: an interval counts only with a valid signature under
the store's sealing public key and a valid checkpoint; a gap in the chain, a checkpoint before
which rows were added or removed (:func:`ledger.proof.checkpoints.resume_findings`), or no sealing key
makes :func:`plan_day` return why, and the report reads the whole store as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from ledger.domain.table import TABLE_TOPIC, RoundStarted
from ledger.proof.checkpoints import (
    CheckpointStore,
    StoredCheckpoint,
    resume_findings,
    seal_index,
    sealing_key,
)
from ledger.proof.seal_index import Interval
from ledger.storage.store import LedgerApp
from ledger.storage.stream import RoundStream
from ledger.verify.snapshot import Snapshot, SnapshotError
from projections.gaming_day import day_of


@dataclass(frozen=True)
class DayPlan:
    """The rows to read for one day: after ``start`` (``None``: from the start of the store)
    up to row ``stop`` (``None``: to the end of the log); ``empty``: no round of the day is
    stored closed (nothing to read)."""

    start: Snapshot | None
    stop: int | None
    empty: bool = False


def plan_day(app: LedgerApp, day: date, cutoff: int) -> DayPlan | str:
    """The rows that hold every closed round of ``day``, or why they cannot be told (a note)."""
    key = sealing_key(app)
    if key is None:
        return "no sealing public key is configured"
    index, valid = seal_index(app, key)
    with index:
        intervals = index.intervals()
    chain = _chain(intervals)
    if isinstance(chain, str):
        return chain
    on_day = [n for n, i in enumerate(chain) if _may_hold(i, day, cutoff)]
    by_number = {s.number: s for s in valid}
    newest = by_number[chain[-1].checkpoint.number]
    with CheckpointStore(app, create=False) as store:
        try:
            tail = _tail_may_hold(app, store, newest, day, cutoff)
        except SnapshotError as exc:
            return f"the newest checkpoint's snapshot cannot be used: {exc}"
        if not on_day and not tail:
            return DayPlan(None, None, empty=True)
        first = on_day[0] if on_day else len(chain)
        before = by_number[chain[first - 1].checkpoint.number] if first > 0 else None
        stop = None if tail else chain[on_day[-1]].checkpoint.position
        if before is None:
            return DayPlan(None, stop)
        problems = resume_findings(app, before.checkpoint)
        if problems:
            return f"checkpoint {before.number} does not hold: {problems[0].message}"
        try:
            return DayPlan(store.snapshot(before), stop)
        except SnapshotError as exc:
            return f"checkpoint {before.number}: {exc}"


def _chain(intervals: list[Interval]) -> list[Interval] | str:
    """The intervals from the start of the store to the newest one, each beginning where the
    previous ended; why not, if there is a gap."""
    if not intervals:
        return "no seal index is stored (seal again to write one)"
    at = {i.checkpoint.position: i for i in intervals}
    newest = intervals[-1]
    chain = [newest]
    while chain[-1].after > 0:
        previous = at.get(chain[-1].after)
        if previous is None:
            return f"the seal index has no interval ending at row {chain[-1].after}"
        chain.append(previous)
    return chain[::-1]


def _may_hold(interval: Interval, day: date, cutoff: int) -> bool:
    first, last = interval.first, interval.last
    return first is not None and last is not None and day_of(first, cutoff) <= day <= day_of(last, cutoff)


class _Starts(RoundStream):
    """The table rows of a stretch of the log: when each round there opened."""

    def __init__(self, app: LedgerApp) -> None:
        super().__init__(app.ledger_mapper, probe=False)
        self.times: list[datetime] = []

    def wants_table_rows(self, aggregate: str) -> bool:
        return True

    def started(self, position: int, aggregate: str, version: int, content: bytes) -> None:
        self.times.append(RoundStarted.model_validate_json(content).at)


def _tail_may_hold(
    app: LedgerApp, store: CheckpointStore, newest: StoredCheckpoint, day: date, cutoff: int
) -> bool:
    """Whether a round of ``day`` may close after the newest checkpoint: opened after it, or
    in play at it."""
    starts = _Starts(app)
    for rows in app.rows(after=newest.position, topics=(TABLE_TOPIC,)):
        for _ in starts.closed(rows):
            pass
    if any(day_of(at, cutoff) == day for at in starts.times):
        return True
    snapshot = store.snapshot(newest)
    for held in snapshot.state["rounds"].values():
        topic, content = held["stored"][0]
        if day_of(starts.decode(str(topic), str(content).encode()).at, cutoff) == day:
            return True
    return False
