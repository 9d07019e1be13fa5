"""The projection updater: the catch-up algorithm that keeps stored views exactly once.

The rows live in the store's own database (``projections.view_store``: the repository; SQL
dialect from ``ledger.storage.sql``); during a batch a view reads and writes them through a cache
(``projections.row_cache``). This module decides what to fold and when to commit.

:func:`catch_up` runs batches until the views reach the end of the log. All the views of one
call share each batch (:func:`catch_up_targets`): it reads the closed rounds once
(``projections.base.closed_rounds``), from the lowest tracked position among them, and hands
each round to every view whose position is before it (views at the same position share the
whole pass; a view behind catches up in it), applying them to a write-through cache of rows per
view. Then, in **one** transaction, it checks that each view's tracked position is still the
one the batch started from and writes each view's changed rows together with its new position.
The tracking records and the rows commit together or not at all, so an updater killed at any
point (mid-batch, mid-transaction) leaves every view exactly at its last committed batch and
the next run resumes from there: a round is never counted twice nor lost. If another updater
moved any of the positions meanwhile, the transaction is rolled back and the batch redone from
the new positions (optimistic concurrency, the library's tracking contract: positions only move
forward). This is the catch-up loop of EVENTSOURCING.md §6 (hazard 3: SQLite cannot subscribe,
so both stores pull, through one code path; hazard 2: the library's DB functions are never used
here). (Like the rows read within one batch, the cache kept between batches cannot see
``rebuild --replace`` rewriting a view's rows *at the same position* while the run is going on.)

A view whose stored version differs from its class's ``version`` is rebuilt from position 0:
the old rows are deleted in the same transaction as the first batch of the rebuild.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ledger.domain.round import Round
from ledger.feed.envelope import TERMINAL_TYPES
from ledger.games import GAMES
from ledger.storage.store import LedgerApp
from projections.base import MemoryRows, View, closed_rounds
from projections.diff import compare, encode_row
from projections.registry import registered_views
from projections.row_cache import BatchRows, Known
from projections.view_store import Moved, Pending, ProjectionError, Tracking, ViewStore

__all__ = [
    "BATCH_ROUNDS",
    "ProjectionError",
    "Rebuilt",
    "Target",
    "ViewRead",
    "ViewStatus",
    "ViewStore",
    "catch_up",
    "catch_up_targets",
    "catch_up_view",
    "encode_row",
    "read_view",
    "read_views",
    "rebuild",
    "rebuild_all",
    "status",
    "view_rows",
]
"""Also re-exported for the CLI: the repository (``projections.view_store``) and the row text."""

BATCH_ROUNDS = 500
"""Rounds per batch (one transaction each); small enough to keep a transaction short."""
RETRIES_MAX = 20
"""Batches redone after another updater moved the position, before giving up."""

Hook = Callable[[str, int], None]
"""Test hook: called with (view name, batch number)."""


@dataclass(frozen=True)
class Target:
    """A view to catch up: the view, the name its rows are stored under, and where to stop
    (``upto``: a notification id, ``None`` for the end of the log)."""

    view: View
    name: str
    upto: int | None = None


class _Progress:
    """Where one target stands during one batch of a shared pass."""

    def __init__(self, store: ViewStore, target: Target, base: Tracking | None, known: Known | None) -> None:
        self.target = target
        self.base = base
        self.reset = base is None or base.version != target.view.version
        self.after = 0 if self.reset or base is None else base.position
        self.position = self.after
        self.count = 0
        valid = known if known is not None and known.tracking == base else None
        self.rows = BatchRows(store, target.name, reset=self.reset, known=valid)

    def wants(self, closing: int) -> bool:
        """Whether the round closed at ``closing`` is this view's to fold now."""
        upto = self.target.upto
        return closing > self.after and (upto is None or closing <= upto)


def catch_up_targets(
    app: LedgerApp,
    store: ViewStore,
    targets: Sequence[Target],
    *,
    batch_rounds: int = BATCH_ROUNDS,
    before_commit: Hook | None = None,
    on_write: Hook | None = None,
) -> dict[str, int]:
    """Bring every target to the end of the log (or its ``upto``) in shared passes; return
    their positions by stored name.

    Each batch reads the log **once**, from the lowest tracked position among the targets, and
    hands each closed round to every target whose position is before it: targets at the same
    position share the whole pass; a target behind catches up in the same pass. A batch ends
    after ``batch_rounds`` rounds; then every target that moved (or is rebuilt) commits its
    rows and its new position in one transaction (:meth:`ViewStore.commit_all`), each
    position written with its own rows. If any target's position moved meanwhile the whole
    batch is rolled back and redone. The hooks are called per target with the batch number.
    """
    shared = _SharedPass(app, store, _first_of_each_name(targets), batch_rounds, before_commit, on_write)
    return shared.run()


def _first_of_each_name(targets: Sequence[Target]) -> list[Target]:
    """The targets, a name caught up once (the first target of that name)."""
    unique: list[Target] = []
    for target in targets:
        if all(t.name != target.name for t in unique):
            unique.append(target)
    return unique


class _SharedPass:
    """The batches of one :func:`catch_up_targets` call: what each target has reached, the
    stream of closed rounds kept open between batches, the batch and retry counts."""

    def __init__(
        self,
        app: LedgerApp,
        store: ViewStore,
        targets: list[Target],
        batch_rounds: int,
        before_commit: Hook | None,
        on_write: Hook | None,
    ) -> None:
        self.app = app
        self.store = store
        self.targets = targets
        self.batch_rounds = batch_rounds
        self.before_commit = before_commit
        self.on_write = on_write
        self.positions: dict[str, int] = {}
        self.known: dict[str, Known] = {}
        self.stream: Iterator[tuple[int, Round]] | None = None
        self.stream_at = -1
        self.batch = 0
        self.retries = 0

    def run(self) -> dict[str, int]:
        """Run batches until every target has its final position; return the positions."""
        while True:
            pending = [t for t in self.targets if t.name not in self.positions]
            if not pending:
                return {t.name: self.positions[t.name] for t in self.targets}
            states = self._start(pending)
            if states:
                self._batch(states)

    def _start(self, pending: list[Target]) -> list[_Progress]:
        """Each pending target's progress from its stored tracking; a target already at (or
        past) where it stops gets its final position instead."""
        stored = {t.view: t for t in self.store.trackings()}
        states = []
        for target in pending:
            state = _Progress(self.store, target, stored.get(target.name), self.known.get(target.name))
            if not state.reset and target.upto is not None and state.after >= target.upto:
                self.positions[target.name] = state.after
            else:
                states.append(state)
        return states

    def _batch(self, states: list[_Progress]) -> None:
        """Fold one batch of rounds, commit the targets that moved, and settle the positions of
        the targets that are done."""
        cut = self._fold(states)
        moving = [s for s in states if s.count or s.reset]
        if not moving:
            for s in states:
                self.positions[s.target.name] = s.after
            return
        if not self._commit(moving):
            return
        if not cut:  # the pass reached the end of the log (or every upto): all are there
            for s in states:
                self.positions[s.target.name] = s.position

    def _rounds_from(self, start: int) -> Iterator[tuple[int, Round]]:
        """The closed rounds after ``start``: the stream the last batch left, if it stopped
        there (rounds it left open stay gathered), else a new one."""
        if self.stream is None or self.stream_at != start:
            self.stream = closed_rounds(self.app, start)
        self.stream_at = -1
        return self.stream

    def _fold(self, states: list[_Progress]) -> bool:
        """Hand each closed round to every target that wants it, up to ``batch_rounds``
        rounds; return whether the batch was cut there (else the log or every ``upto`` ended)."""
        start = min(s.after for s in states)
        last = None if any(s.target.upto is None for s in states) else max(s.target.upto or 0 for s in states)
        rounds = 0
        for closing, rnd in self._rounds_from(start):
            self.stream_at = closing
            if last is not None and closing > last:
                return False
            rounds += _apply(states, closing, rnd)
            if rounds >= self.batch_rounds:
                return True
        self.stream = None  # the end of the log: the next batch asks again
        return False

    def _commit(self, moving: list[_Progress]) -> bool:
        """Commit the moved targets' rows and positions in one transaction; ``False`` when
        another updater moved a position meanwhile (the batch is redone)."""
        self.batch += 1
        if self.before_commit is not None:
            for s in moving:
                self.before_commit(s.target.name, self.batch)
        try:
            self.store.commit_all([self._pending(s) for s in moving])
        except Moved:
            self._retry(moving)
            return False
        for s in moving:
            name = s.target.name
            self.known[name] = s.rows.known_after(Tracking(name, s.position, s.target.view.version))
        return True

    def _pending(self, s: _Progress) -> Pending:
        """What one moved target commits."""
        name = s.target.name
        hook = _hook(self.on_write, name, self.batch)
        return Pending(name, s.target.view.version, s.base, s.position, s.rows.changed(), s.reset, hook)

    def _retry(self, moving: list[_Progress]) -> None:
        """Count a redone batch; give up after :data:`RETRIES_MAX`."""
        self.retries += 1
        if self.retries > RETRIES_MAX:
            names = ", ".join(s.target.name for s in moving)
            raise ProjectionError(
                f"views {names}: other updaters kept moving the position; gave up after {RETRIES_MAX} retries"
            ) from None


def _apply(states: list[_Progress], closing: int, rnd: Round) -> bool:
    """Fold the round closed at ``closing`` into every target that wants it; whether any did."""
    folded = False
    for s in states:
        if s.wants(closing):
            s.target.view.apply(rnd, s.rows)
            s.position = closing
            s.count += 1
            folded = True
    return folded


def _hook(on_write: Hook | None, name: str, batch: int) -> Callable[[], None] | None:
    if on_write is None:
        return None
    return lambda: on_write(name, batch)


def catch_up_view(
    app: LedgerApp,
    view: View,
    *,
    store: ViewStore | None = None,
    batch_rounds: int = BATCH_ROUNDS,
    upto: int | None = None,
    name: str | None = None,
    before_commit: Hook | None = None,
    on_write: Hook | None = None,
) -> int:
    """Fold every closed round not yet in ``view`` into its stored rows; return the position.

    ``upto`` stops at that notification id (rebuild comparisons); ``name`` stores the view under
    another name (a scratch copy). ``before_commit`` / ``on_write`` are test hooks, called
    before a batch's transaction and inside it after the rows are written.
    """
    target = Target(view, name or view.name, upto)
    with _store_of(app, store) as own:
        return catch_up_targets(
            app, own, [target], batch_rounds=batch_rounds, before_commit=before_commit, on_write=on_write
        )[target.name]


@contextmanager
def _store_of(app: LedgerApp, store: ViewStore | None) -> Iterator[ViewStore]:
    """``store``, or a store of our own closed on exit."""
    if store is not None:
        yield store
        return
    with ViewStore(app) as own:
        yield own


def catch_up(
    app: LedgerApp,
    views: Sequence[View] | None = None,
    *,
    batch_rounds: int = BATCH_ROUNDS,
    store: ViewStore | None = None,
) -> dict[str, int]:
    """Bring every view (the registry's by default) up to the end of the log in shared passes
    over the log (:func:`catch_up_targets`); return their positions by name."""
    chosen = list(views) if views is not None else registered_views()
    with _store_of(app, store) as own:
        return catch_up_targets(app, own, [Target(v, v.name) for v in chosen], batch_rounds=batch_rounds)


def view_rows(app: LedgerApp, view: View) -> MemoryRows:
    """The view's rows as of the end of the log, read-only (see :func:`read_views`)."""
    return read_views(app, [view])[0].rows


def read_view(app: LedgerApp, view: View) -> tuple[int, MemoryRows]:
    """The view's position and rows as of the end of the log, read-only."""
    got = read_views(app, [view])[0]
    return got.position, got.rows


@dataclass(frozen=True)
class ViewRead:
    """A view as a read command sees it: the stored rows plus, folded in memory, every round
    closed after the stored position (``behind`` of them). Nothing is written."""

    view: str
    rows: MemoryRows
    position: int
    stored_position: int | None
    behind: int


def read_views(app: LedgerApp, views: Sequence[View]) -> list[ViewRead]:
    """Read each view without writing: its stored snapshot (if stored under this version),
    then the rounds closed since folded in memory, all views in one pass over the log.

    Read commands (``commission``, ``jackpot``, ``bank``, ``export``) use this, so they run
    on a read-only role or file; ``ledger projections update`` is what stores the catch-up."""
    with ViewStore(app, create=False) as store:
        snaps = [store.snapshot(v.name) for v in views]
    bases: list[tuple[Tracking | None, MemoryRows]] = [
        (t, rows) if t is not None and t.version == v.version else (None, MemoryRows())
        for v, (t, rows) in zip(views, snaps, strict=True)
    ]
    after = [t.position if t is not None else 0 for t, _ in bases]
    position = list(after)
    behind = [0] * len(views)
    if views:
        for closing, rnd in closed_rounds(app, min(after)):
            for i, view in enumerate(views):
                if closing > after[i]:
                    view.apply(rnd, bases[i][1])
                    position[i] = closing
                    behind[i] += 1
    return [
        ViewRead(v.name, rows, position[i], t.position if t is not None else None, behind[i])
        for i, (v, (t, rows)) in enumerate(zip(views, bases, strict=True))
    ]


@dataclass(frozen=True)
class ViewStatus:
    """Where a view stands against the log (``ledger projections status``)."""

    view: str
    version: int
    stored_version: int | None
    position: int
    head: int
    rounds_behind: int

    @property
    def events_behind(self) -> int:
        """Notifications stored after the position (ids are not dense on PostgreSQL: an upper
        bound there, EVENTSOURCING.md hazard 3)."""
        return max(0, self.head - self.position)

    @property
    def state(self) -> str:
        """``current``, ``behind``, ``stale`` (other version: rebuilt on next update) or ``new``."""
        if self.stored_version is None:
            return "new"
        if self.stored_version != self.version:
            return "stale"
        return "behind" if self.rounds_behind else "current"

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "view": self.view,
            "version": self.version,
            "stored_version": self.stored_version,
            "position": self.position,
            "head": self.head,
            "events_behind": self.events_behind,
            "rounds_behind": self.rounds_behind,
            "state": self.state,
        }


CLOSING_TOPICS = tuple(f"{key}/{kind}" for key in GAMES for kind in sorted(TERMINAL_TYPES))


def closings_after(app: LedgerApp, position: int, page: int = 1000) -> int:
    """How many rounds closed after notification ``position`` (the topic filter runs in SQL)."""
    count = 0
    while True:
        rows = app.recorder.select_notifications(
            position, page, topics=CLOSING_TOPICS, inclusive_of_start=False
        )
        if not rows:
            return count
        count += len(rows)
        position = rows[-1].id


def status(app: LedgerApp, views: Sequence[View] | None = None) -> list[ViewStatus]:
    """Each view's stored position, version and lag, without updating anything."""
    chosen = list(views) if views is not None else registered_views()
    head = app.recorder.max_notification_id() or 0
    counted: dict[int, int] = {}  # views at the same position share one count
    with ViewStore(app, create=False) as store:
        stored = {t.view: t for t in store.trackings()}
        out = []
        for v in chosen:
            t = stored.get(v.name)
            fresh = t is None or t.version != v.version
            position = 0 if t is None else t.position
            since = 0 if fresh else position
            if since not in counted:
                counted[since] = closings_after(app, since)
            behind = counted[since]
            out.append(ViewStatus(v.name, v.version, t.version if t else None, position, head, behind))
    return out


@dataclass(frozen=True)
class Rebuilt:
    """The outcome of a rebuild: the position compared at and the differing keys."""

    view: str
    position: int
    keys: list[str]
    replaced: bool


def rebuild(
    app: LedgerApp, view: View, *, replace: bool = False, batch_rounds: int = BATCH_ROUNDS
) -> Rebuilt:
    """Catch the live view up, rebuild it from position 0 into a scratch view up to the same
    position (through the same batches and transactions), and compare them row by row.

    With ``replace`` the live view becomes the rebuilt one (one transaction); the scratch view
    is dropped either way.
    """
    return rebuild_all(app, [view], replace=replace, batch_rounds=batch_rounds)[0]


def rebuild_all(
    app: LedgerApp,
    views: Sequence[View] | None = None,
    *,
    replace: bool = False,
    batch_rounds: int = BATCH_ROUNDS,
) -> list[Rebuilt]:
    """:func:`rebuild` for several views (the registry's by default) with shared passes: one
    catch-up of the live views, then one rebuild pass for all the scratch views, each stopping
    at its live view's position."""
    chosen = list({v.name: v for v in (views if views is not None else registered_views())}.values())
    scratch = {v.name: f"{v.name}~rebuild" for v in chosen}
    out = []
    with ViewStore(app) as store:
        positions = catch_up_targets(
            app, store, [Target(v, v.name) for v in chosen], batch_rounds=batch_rounds
        )
        for v in chosen:
            store.drop(scratch[v.name])
        catch_up_targets(
            app,
            store,
            [Target(v, scratch[v.name], positions[v.name]) for v in chosen],
            batch_rounds=batch_rounds,
        )
        for v in chosen:
            _, live = store.snapshot(v.name)
            _, fresh = store.snapshot(scratch[v.name])
            keys = [d.key for d in compare(v.name, live, fresh)]
            replaced = False
            if replace and keys:
                store.replace(v.name, scratch[v.name])
                replaced = True
            store.drop(scratch[v.name])
            out.append(Rebuilt(v.name, positions[v.name], keys, replaced))
    return out
