"""The projection updater: views kept in the store's own database, updated exactly once.

Each view (``projections.base.View``) lives in two tables beside the store's events, in the same
SQLite file or PostgreSQL schema:

- ``ledger_view_rows (view, key, row)``: the view's rows, JSON text, keyed by ``(view, key)``;
- ``ledger_view_tracking (view, position, version)``: the notification id of the last closing
  event folded into the view, and the view version that folded it.

:func:`catch_up` runs batches until the view reaches the end of the log. A batch reads the
closed rounds after the tracked position (``projections.base.closed_rounds``), applies them to
a write-through cache of rows, and then, in **one** transaction, checks that the tracked
position is still the one it started from, writes the changed rows and the new position. The
tracking record and the rows commit together or not at all, so an updater killed at any point
(mid-batch, mid-transaction) leaves the view exactly at its last committed batch and the next
run resumes from there: a round is never counted twice nor lost. If another updater moved the
position meanwhile, the transaction is rolled back and the batch redone from the new position
(optimistic concurrency, the library's tracking contract: positions only move forward). This is
the catch-up loop of EVENTSOURCING.md §6 (hazard 3: SQLite cannot subscribe, so both stores
pull, through one code path; hazard 2: the library's DB functions are never used here).

A view whose stored version differs from its class's ``version`` is rebuilt from position 0:
the old rows are deleted in the same transaction as the first batch of the rebuild.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from eventsourcing.persistence import IntegrityError
from eventsourcing.postgres import PostgresDatastore
from eventsourcing.sqlite import SQLiteDatastore

from ledger.errors import StoreError
from ledger.feed.envelope import TERMINAL_TYPES
from ledger.games import GAMES
from ledger.store import LedgerApp
from projections.base import MemoryRows, Row, View, closed_rounds

ROWS_TABLE = "ledger_view_rows"
TRACKING_TABLE = "ledger_view_tracking"
BATCH_ROUNDS = 500
"""Rounds per batch (one transaction each); small enough to keep a transaction short."""
RETRIES_MAX = 20
"""Batches redone after another updater moved the position, before giving up."""

Hook = Callable[[str, int], None]
"""Test hook: called with (view name, batch number)."""


class ProjectionError(StoreError):
    """The view tables cannot be read or written, or updaters kept conflicting."""


class _Moved(Exception):
    """The tracked position moved during a batch: roll back and redo it."""


def encode_row(row: Row) -> str:
    """A row's stored text: canonical JSON (sorted keys). Decimals must already be strings."""
    return json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Tracking:
    """Where a stored view stands."""

    view: str
    position: int
    version: int


class _Backend:
    """What differs between SQLite and PostgreSQL: connections, placeholders, table names."""

    p = "?"
    lock = ""
    rows: str = ROWS_TABLE
    tracking: str = TRACKING_TABLE

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    @contextmanager
    def write(self) -> Iterator[Any]:
        raise NotImplementedError
        yield

    def exists(self) -> bool:
        raise NotImplementedError

    def close(self) -> None:
        """Release connections this backend opened itself."""


class _SQLite(_Backend):
    """The store's SQLite file, through a connection of our own (``BEGIN IMMEDIATE`` writes)."""

    def __init__(self, path: str, timeout_s: float) -> None:
        if ":memory:" in path or "mode=memory" in path:
            raise ProjectionError("projections need a SQLite file, not an in-memory database")
        self.conn = sqlite3.connect(path, timeout=timeout_s, isolation_level=None,
                                    check_same_thread=False)

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return list(self.conn.execute(sql, tuple(params)).fetchall())

    @contextmanager
    def write(self) -> Iterator[Any]:
        cur = self.conn.cursor()
        cur.execute("BEGIN IMMEDIATE")  # take the write lock before reading the position
        try:
            yield cur
        except BaseException:
            self.conn.rollback()
            raise
        self.conn.commit()

    def exists(self) -> bool:
        return bool(self.read("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                              (TRACKING_TABLE,)))

    def close(self) -> None:
        self.conn.close()


class _Postgres(_Backend):
    """The store's PostgreSQL schema, through the library's connection pool."""

    p = "%s"
    lock = " FOR UPDATE"

    def __init__(self, datastore: PostgresDatastore) -> None:
        self.datastore = datastore
        self.schema = datastore.schema
        self.rows = f'"{self.schema}".{ROWS_TABLE}'
        self.tracking = f'"{self.schema}".{TRACKING_TABLE}'

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.datastore.transaction(commit=False) as cur:
            cur.execute(sql, tuple(params))
            return [tuple(r.values()) if isinstance(r, dict) else tuple(r) for r in cur.fetchall()]

    @contextmanager
    def write(self) -> Iterator[Any]:
        with self.datastore.transaction(commit=True) as cur:
            yield _TupleCursor(cur)

    def exists(self) -> bool:
        found = self.read("SELECT to_regclass(%s)", (f'"{self.schema}".{TRACKING_TABLE}',))
        return bool(found and found[0][0] is not None)


class _TupleCursor:
    """A psycopg dict-row cursor that fetches tuples, like sqlite3's."""

    def __init__(self, cur: Any) -> None:
        self.cur = cur

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        self.cur.execute(sql, tuple(params))

    def executemany(self, sql: str, params: Sequence[Sequence[Any]]) -> None:
        self.cur.executemany(sql, [tuple(p) for p in params])

    def fetchone(self) -> tuple[Any, ...] | None:
        r = self.cur.fetchone()
        if r is None:
            return None
        return tuple(r.values()) if isinstance(r, dict) else tuple(r)


class ViewStore:
    """The view tables of one ledger database (see the module docstring)."""

    def __init__(self, app: LedgerApp, *, create: bool = True) -> None:
        datastore = getattr(app.recorder, "datastore", None)
        if isinstance(datastore, SQLiteDatastore):
            timeout = float(app.env.get("SQLITE_LOCK_TIMEOUT") or 30)
            self.backend: _Backend = _SQLite(datastore.pool.db_name, timeout)
        elif isinstance(datastore, PostgresDatastore):
            self.backend = _Postgres(datastore)
        else:
            raise ProjectionError("projections need a SQLite or PostgreSQL store "
                                  f"(not {type(app.recorder).__name__})")
        self.exists = self.backend.exists()
        if create and not self.exists:
            self._create()
            self.exists = True

    def close(self) -> None:
        """Close connections opened for the view tables."""
        self.backend.close()

    def __enter__(self) -> ViewStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _create(self) -> None:
        b = self.backend
        collate = ' COLLATE "C"' if isinstance(b, _Postgres) else ""
        statements = [
            f"CREATE TABLE IF NOT EXISTS {b.rows} (view TEXT NOT NULL, key TEXT{collate} NOT NULL,"
            f" row TEXT NOT NULL, PRIMARY KEY (view, key))",
            f"CREATE TABLE IF NOT EXISTS {b.tracking} (view TEXT PRIMARY KEY,"
            f" position BIGINT NOT NULL, version BIGINT NOT NULL)",
        ]
        for attempt in range(3):
            try:
                with b.write() as cur:
                    for statement in statements:
                        cur.execute(statement)
                return
            except Exception:  # two processes creating at once (EVENTSOURCING.md hazard 4)
                if attempt == 2:
                    raise

    # --- reading -------------------------------------------------------------------------

    def tracking(self, view: str) -> Tracking | None:
        """The stored position and version of a view, or ``None`` if it was never written."""
        if not self.exists:
            return None
        b = self.backend
        found = b.read(f"SELECT position, version FROM {b.tracking} WHERE view = {b.p}", (view,))
        return Tracking(view, int(found[0][0]), int(found[0][1])) if found else None

    def trackings(self) -> list[Tracking]:
        """Every stored view's tracking record."""
        if not self.exists:
            return []
        b = self.backend
        return [Tracking(str(v), int(p), int(n)) for v, p, n in
                b.read(f"SELECT view, position, version FROM {b.tracking} ORDER BY view")]

    def get(self, view: str, key: str) -> str | None:
        """One row's stored text."""
        b = self.backend
        found = b.read(f"SELECT row FROM {b.rows} WHERE view = {b.p} AND key = {b.p}", (view, key))
        return str(found[0][0]) if found else None

    def scan(self, view: str, prefix: str = "") -> list[tuple[str, str]]:
        """``(key, text)`` of the rows whose key starts with ``prefix`` (unordered)."""
        b = self.backend
        if not prefix:
            sql = f"SELECT key, row FROM {b.rows} WHERE view = {b.p}"
            return [(str(k), str(r)) for k, r in b.read(sql, (view,))]
        sql = (f"SELECT key, row FROM {b.rows} WHERE view = {b.p} "
               f"AND substr(key, 1, {len(prefix)}) = {b.p}")
        return [(str(k), str(r)) for k, r in b.read(sql, (view, prefix))]

    def snapshot(self, view: str) -> tuple[Tracking | None, MemoryRows]:
        """The tracking record and every row of a view, read in one transaction."""
        if not self.exists:
            return None, MemoryRows()
        b = self.backend
        with b.write() as cur:  # a write transaction gives one consistent snapshot on both
            cur.execute(f"SELECT position, version FROM {b.tracking} WHERE view = {b.p}", (view,))
            found = cur.fetchone()
            cur.execute(f"SELECT key, row FROM {b.rows} WHERE view = {b.p}", (view,))
            rows = _fetchall(cur)
        tracking = Tracking(view, int(found[0]), int(found[1])) if found else None
        return tracking, MemoryRows({str(k): json.loads(r) for k, r in rows})

    # --- writing -------------------------------------------------------------------------

    def commit(self, view: str, version: int, base: Tracking | None, position: int,
               changed: dict[str, str], *, reset: bool,
               on_write: Callable[[], None] | None = None) -> None:
        """Write changed rows and the new position in one transaction, if the position is still
        ``base``; raise :class:`_Moved` (rolled back) otherwise."""
        b = self.backend
        try:
            with b.write() as cur:
                cur.execute(f"SELECT position, version FROM {b.tracking} WHERE view = {b.p}{b.lock}",
                            (view,))
                found = cur.fetchone()
                now = Tracking(view, int(found[0]), int(found[1])) if found else None
                if now != base:
                    raise _Moved
                if reset:
                    cur.execute(f"DELETE FROM {b.rows} WHERE view = {b.p}", (view,))
                if changed:
                    cur.executemany(
                        f"INSERT INTO {b.rows} (view, key, row) VALUES ({b.p}, {b.p}, {b.p}) "
                        "ON CONFLICT (view, key) DO UPDATE SET row = excluded.row",
                        [(view, k, text) for k, text in sorted(changed.items())])
                if on_write is not None:
                    on_write()
                if found is None:
                    cur.execute(f"INSERT INTO {b.tracking} (view, position, version) "
                                f"VALUES ({b.p}, {b.p}, {b.p})", (view, position, version))
                else:
                    cur.execute(f"UPDATE {b.tracking} SET position = {b.p}, version = {b.p} "
                                f"WHERE view = {b.p}", (position, version, view))
        except IntegrityError:  # another updater inserted the first tracking row meanwhile
            raise _Moved from None
        except sqlite3.IntegrityError:
            raise _Moved from None

    def replace(self, view: str, source: str) -> None:
        """Make ``view`` a copy of ``source`` (rows and tracking), in one transaction."""
        b = self.backend
        with b.write() as cur:
            cur.execute(f"DELETE FROM {b.rows} WHERE view = {b.p}", (view,))
            cur.execute(f"INSERT INTO {b.rows} (view, key, row) SELECT {b.p}, key, row "
                        f"FROM {b.rows} WHERE view = {b.p}", (view, source))
            cur.execute(f"DELETE FROM {b.tracking} WHERE view = {b.p}", (view,))
            cur.execute(f"INSERT INTO {b.tracking} (view, position, version) SELECT {b.p}, "
                        f"position, version FROM {b.tracking} WHERE view = {b.p}", (view, source))

    def drop(self, view: str) -> None:
        """Delete a view's rows and tracking record."""
        if not self.exists:
            return
        b = self.backend
        with b.write() as cur:
            cur.execute(f"DELETE FROM {b.rows} WHERE view = {b.p}", (view,))
            cur.execute(f"DELETE FROM {b.tracking} WHERE view = {b.p}", (view,))


def _fetchall(cur: Any) -> list[tuple[Any, ...]]:
    if isinstance(cur, _TupleCursor):
        return [tuple(r.values()) if isinstance(r, dict) else tuple(r) for r in cur.cur.fetchall()]
    return list(cur.fetchall())


class BatchRows:
    """The rows a view sees during one batch: read from the view table on first use, kept in
    memory, and compared with what was read when the batch commits (so a row changed in place,
    without ``put``, is still written)."""

    def __init__(self, store: ViewStore, view: str, *, reset: bool) -> None:
        self._store = store
        self._view = view
        self._reset = reset
        self._rows: dict[str, Row | None] = {}
        self._read: dict[str, str | None] = {}
        self._scanned: set[str] = set()

    def get(self, key: str) -> Row | None:
        """The row under ``key``, or ``None``."""
        if key not in self._rows:
            text = None if self._reset else self._store.get(self._view, key)
            self._read[key] = text
            self._rows[key] = json.loads(text) if text is not None else None
        return self._rows[key]

    def put(self, key: str, row: Row) -> None:
        """Create or replace the row under ``key``."""
        if key not in self._read:
            self._read[key] = None if self._reset else self._store.get(self._view, key)
        self._rows[key] = row

    def scan(self, prefix: str = "") -> Iterator[tuple[str, Row]]:
        """Rows whose key starts with ``prefix``, in key order."""
        if not self._reset and not any(prefix.startswith(s) for s in self._scanned):
            for key, text in self._store.scan(self._view, prefix):
                if key not in self._read:
                    self._read[key] = text
                    self._rows[key] = json.loads(text)
            self._scanned.add(prefix)
        for key in sorted(self._rows):
            row = self._rows[key]
            if row is not None and key.startswith(prefix):
                yield key, row

    def changed(self) -> dict[str, str]:
        """The rows whose text differs from what the view table held."""
        out: dict[str, str] = {}
        for key, row in self._rows.items():
            if row is None:
                continue
            text = encode_row(row)
            if text != self._read.get(key):
                out[key] = text
        return out


def catch_up_view(app: LedgerApp, view: View, *, store: ViewStore | None = None,
                  batch_rounds: int = BATCH_ROUNDS, upto: int | None = None,
                  name: str | None = None, before_commit: Hook | None = None,
                  on_write: Hook | None = None) -> int:
    """Fold every closed round not yet in ``view`` into its stored rows; return the position.

    ``upto`` stops at that notification id (rebuild comparisons); ``name`` stores the view under
    another name (a scratch copy). ``before_commit`` / ``on_write`` are test hooks, called
    before a batch's transaction and inside it after the rows are written.
    """
    own = store is None
    store = store or ViewStore(app)
    name = name or view.name
    try:
        batch = 0
        retries = 0
        while True:
            base = store.tracking(name)
            reset = base is None or base.version != view.version
            after = 0 if reset or base is None else base.position
            rows = BatchRows(store, name, reset=reset)
            position = after
            count = 0
            for closing, rnd in closed_rounds(app, after):
                if upto is not None and closing > upto:
                    break
                view.apply(rnd, rows)
                position = closing
                count += 1
                if count >= batch_rounds:
                    break
            if count == 0 and not reset:
                return after
            batch += 1
            if before_commit is not None:
                before_commit(name, batch)
            hook = (lambda n=batch: on_write(name, n)) if on_write is not None else None
            try:
                store.commit(name, view.version, base, position, rows.changed(), reset=reset,
                             on_write=hook)
            except _Moved:
                retries += 1
                if retries > RETRIES_MAX:
                    raise ProjectionError(f"view {name}: other updaters kept moving the position; "
                                          f"gave up after {RETRIES_MAX} retries") from None
                continue
            if count == 0:
                return position
    finally:
        if own:
            store.close()


def catch_up(app: LedgerApp, views: Sequence[View] | None = None, *,
             batch_rounds: int = BATCH_ROUNDS) -> dict[str, int]:
    """Bring every view (the registry's by default) up to the end of the log; return their
    positions by name."""
    from projections.registry import registered_views

    chosen = list(views) if views is not None else registered_views()
    with ViewStore(app) as store:
        return {v.name: catch_up_view(app, v, store=store, batch_rounds=batch_rounds)
                for v in chosen}


def view_rows(app: LedgerApp, view: View) -> MemoryRows:
    """Catch ``view`` up, then read all its rows (what the CLIs print)."""
    return read_view(app, view)[1]


def read_view(app: LedgerApp, view: View) -> tuple[int, MemoryRows]:
    """Catch ``view`` up, then read its position and rows in one snapshot."""
    with ViewStore(app) as store:
        catch_up_view(app, view, store=store)
        tracking, rows = store.snapshot(view.name)
    return (tracking.position if tracking else 0), rows


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
        return {"view": self.view, "version": self.version, "stored_version": self.stored_version,
                "position": self.position, "head": self.head, "events_behind": self.events_behind,
                "rounds_behind": self.rounds_behind, "state": self.state}


CLOSING_TOPICS = tuple(f"{key}/{kind}" for key in GAMES for kind in sorted(TERMINAL_TYPES))


def closings_after(app: LedgerApp, position: int, page: int = 1000) -> int:
    """How many rounds closed after notification ``position`` (the topic filter runs in SQL)."""
    count = 0
    while True:
        rows = app.recorder.select_notifications(position, page, topics=CLOSING_TOPICS,
                                                 inclusive_of_start=False)
        if not rows:
            return count
        count += len(rows)
        position = rows[-1].id


def status(app: LedgerApp, views: Sequence[View] | None = None) -> list[ViewStatus]:
    """Each view's stored position, version and lag, without updating anything."""
    from projections.registry import registered_views

    chosen = list(views) if views is not None else registered_views()
    head = app.recorder.max_notification_id() or 0
    with ViewStore(app, create=False) as store:
        out = []
        for v in chosen:
            t = store.tracking(v.name)
            fresh = t is None or t.version != v.version
            position = 0 if t is None else t.position
            behind = closings_after(app, 0 if fresh else position)
            out.append(ViewStatus(v.name, v.version, t.version if t else None, position, head,
                                  behind))
    return out


@dataclass(frozen=True)
class Rebuilt:
    """The outcome of a rebuild: the position compared at and the differing keys."""

    view: str
    position: int
    keys: list[str]
    replaced: bool


def rebuild(app: LedgerApp, view: View, *, replace: bool = False,
            batch_rounds: int = BATCH_ROUNDS) -> Rebuilt:
    """Catch the live view up, rebuild it from position 0 into a scratch view up to the same
    position (through the same batches and transactions), and compare them row by row.

    With ``replace`` the live view becomes the rebuilt one (one transaction); the scratch view
    is dropped either way.
    """
    from projections.check import compare

    scratch = f"{view.name}~rebuild"
    with ViewStore(app) as store:
        position = catch_up_view(app, view, store=store, batch_rounds=batch_rounds)
        store.drop(scratch)
        catch_up_view(app, view, store=store, batch_rounds=batch_rounds, upto=position,
                      name=scratch)
        _, live = store.snapshot(view.name)
        _, fresh = store.snapshot(scratch)
        keys = [d.key for d in compare(view.name, live, fresh)]
        replaced = False
        if replace and keys:
            store.replace(view.name, scratch)
            replaced = True
        store.drop(scratch)
    return Rebuilt(view.name, position, keys, replaced)
