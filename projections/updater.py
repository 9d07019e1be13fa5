"""The projection updater: views kept in the store's own database, updated exactly once.

Each view (``projections.base.View``) lives in two tables beside the store's events, in the same
SQLite file or PostgreSQL schema:

- ``ledger_view_rows (view, key, row)``: the view's rows, JSON text, keyed by ``(view, key)``;
- ``ledger_view_tracking (view, position, version)``: the notification id of the last closing
  event folded into the view, and the view version that folded it.

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
here).

Between batches of one run the updater keeps the rows it has read and written (:class:`Known`,
bounded by ``KNOWN_ROWS_MAX``), valid only while the view's tracking record is still the one
it committed: a view rebuilt from 0 is never read back, and a row is never read just to be
overwritten. (Like the rows read within one batch, this cannot see ``rebuild --replace``
rewriting a view's rows *at the same position* while the run is going on.)

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
from ledger.round import Round
from ledger.store import LedgerApp
from projections.base import MemoryRows, Row, View, closed_rounds
from projections.diff import compare, encode_row
from projections.registry import registered_views
from projections.sealed_rows import META_KEY, RowCodec

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


@dataclass(frozen=True)
class Tracking:
    """Where a stored view stands."""

    view: str
    position: int
    version: int


@dataclass(frozen=True)
class Pending:
    """One view's share of a batch: its changed rows and the position they bring it to, to be
    written only if its stored position is still ``base``."""

    view: str
    version: int
    base: Tracking | None
    position: int
    changed: dict[str, str]
    reset: bool
    on_write: Callable[[], None] | None = None


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

    @contextmanager
    def reading(self) -> Iterator[Any]:
        """A read-only transaction (one consistent snapshot; no write lock, no write grant)."""
        raise NotImplementedError
        yield

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

    @contextmanager
    def reading(self) -> Iterator[Any]:
        cur = self.conn.cursor()
        cur.execute("BEGIN")  # deferred: a snapshot from the first read, no write lock
        try:
            yield cur
        finally:
            self.conn.rollback()

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

    @contextmanager
    def reading(self) -> Iterator[Any]:
        with self.datastore.transaction(commit=False) as cur:
            cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
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
        self.codec = RowCodec(app.factory.cipher(), app.env.get("CIPHER_KEY"))
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

    def _meta_sql(self, one: bool) -> str:
        b = self.backend
        return (f"SELECT view, row FROM {b.rows} WHERE substr(key, 1, {len(META_KEY)}) = "
                f"{b.p}" + (f" AND view = {b.p}" if one else ""))

    def _checked(self, view: str, position: Any, version: Any, meta: Any) -> Tracking:
        """A tracking record as read, checked against its written-position row (raises
        ``ViewTampered`` if they disagree; a missing row makes the view stale)."""
        return Tracking(view, int(position), self.codec.checked(
            view, int(position), int(version), None if meta is None else str(meta)))

    def tracking(self, view: str) -> Tracking | None:
        """The stored position and version of a view, or ``None`` if it was never written."""
        if not self.exists:
            return None
        b = self.backend
        found = b.read(f"SELECT position, version FROM {b.tracking} WHERE view = {b.p}", (view,))
        if not found:
            return None
        meta = {str(v): r for v, r in b.read(self._meta_sql(True), (META_KEY, view))}
        return self._checked(view, found[0][0], found[0][1], meta.get(view))

    def trackings(self) -> list[Tracking]:
        """Every stored view's tracking record (checked as :meth:`tracking` checks it)."""
        if not self.exists:
            return []
        b = self.backend
        meta = {str(v): r for v, r in b.read(self._meta_sql(False), (META_KEY,))}
        return [self._checked(str(v), p, n, meta.get(str(v))) for v, p, n in
                b.read(f"SELECT view, position, version FROM {b.tracking} ORDER BY view")]

    def get(self, view: str, key: str) -> str | None:
        """One row's text."""
        b = self.backend
        stored = self.codec.stored_key(key)
        found = b.read(f"SELECT row FROM {b.rows} WHERE view = {b.p} AND key = {b.p}",
                       (view, stored))
        return self.codec.open(view, stored, str(found[0][0]))[1] if found else None

    def scan(self, view: str, prefix: str = "") -> list[tuple[str, str]]:
        """``(key, text)`` of the rows whose key starts with ``prefix`` (unordered)."""
        b = self.backend
        sql_prefix = self.codec.sql_prefix(prefix)
        if not sql_prefix:
            sql = f"SELECT key, row FROM {b.rows} WHERE view = {b.p}"
            found = b.read(sql, (view,))
        else:
            sql = (f"SELECT key, row FROM {b.rows} WHERE view = {b.p} "
                   f"AND substr(key, 1, {len(sql_prefix)}) = {b.p}")
            found = b.read(sql, (view, sql_prefix))
        return self._opened(view, found, prefix)

    def _opened(self, view: str, found: Sequence[tuple[Any, ...]],
                prefix: str = "") -> list[tuple[str, str]]:
        out = []
        for stored_key, stored in found:
            if str(stored_key).startswith(META_KEY):
                continue
            key, text = self.codec.open(view, str(stored_key), str(stored))
            if key.startswith(prefix):
                out.append((key, text))
        return out

    def snapshot(self, view: str) -> tuple[Tracking | None, MemoryRows]:
        """The tracking record and every row of a view, read in one transaction."""
        if not self.exists:
            return None, MemoryRows()
        b = self.backend
        with b.reading() as cur:  # one consistent snapshot on both, and no write needed
            cur.execute(f"SELECT position, version FROM {b.tracking} WHERE view = {b.p}", (view,))
            found = cur.fetchone()
            cur.execute(f"SELECT key, row FROM {b.rows} WHERE view = {b.p}", (view,))
            rows = _fetchall(cur)
        meta = next((r for k, r in rows if str(k).startswith(META_KEY)), None)
        tracking = self._checked(view, found[0], found[1], meta) if found else None
        return tracking, MemoryRows({k: json.loads(t) for k, t in self._opened(view, rows)})

    # --- writing -------------------------------------------------------------------------

    def commit(self, view: str, version: int, base: Tracking | None, position: int,
               changed: dict[str, str], *, reset: bool,
               on_write: Callable[[], None] | None = None) -> None:
        """Write changed rows and the new position in one transaction, if the position is still
        ``base``; raise :class:`_Moved` (rolled back) otherwise."""
        self.commit_all([Pending(view, version, base, position, changed, reset, on_write)])

    def commit_all(self, batch: Sequence[Pending]) -> None:
        """Write each view's changed rows and new position in **one** transaction, if every
        view's position is still its ``base``; raise :class:`_Moved` (all rolled back)
        otherwise. Views are locked in name order, so two updaters cannot deadlock."""
        b = self.backend
        upsert = (f"INSERT INTO {b.rows} (view, key, row) VALUES ({b.p}, {b.p}, {b.p}) "
                  "ON CONFLICT (view, key) DO UPDATE SET row = excluded.row")
        try:
            with b.write() as cur:
                for item in sorted(batch, key=lambda i: i.view):
                    view = item.view
                    cur.execute(f"SELECT position, version FROM {b.tracking} "
                                f"WHERE view = {b.p}{b.lock}", (view,))
                    found = cur.fetchone()
                    now = None
                    if found:
                        cur.execute(self._meta_sql(True), (META_KEY, view))
                        meta = cur.fetchone()
                        now = self._checked(view, found[0], found[1],
                                            None if meta is None else meta[1])
                    if now != item.base:
                        raise _Moved
                    if item.reset:
                        cur.execute(f"DELETE FROM {b.rows} WHERE view = {b.p}", (view,))
                    seal = self.codec
                    cur.executemany(upsert, [(view, *seal.meta(item.position, item.version))] + [
                        (view, seal.stored_key(k), seal.seal(k, text))
                        for k, text in sorted(item.changed.items())])
                    if item.on_write is not None:
                        item.on_write()
                    if found is None:
                        cur.execute(f"INSERT INTO {b.tracking} (view, position, version) "
                                    f"VALUES ({b.p}, {b.p}, {b.p})",
                                    (view, item.position, item.version))
                    else:
                        cur.execute(f"UPDATE {b.tracking} SET position = {b.p}, version = {b.p} "
                                    f"WHERE view = {b.p}", (item.position, item.version, view))
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


class Known:
    """Row texts of one stored view as they stand at ``tracking``, kept by the updater from one
    batch to the next so rows it has just written are not read back.

    ``complete``: every row of the view is here (the view was rebuilt from 0 in this run), so a
    key not here is known to be absent; otherwise a key not here must be read from the table.
    ``None`` as a text means known to be absent. Valid only while the stored tracking record
    still equals ``tracking`` (positions only move forward, and rows move with them)."""

    def __init__(self, tracking: Tracking | None, *, complete: bool,
                 rows: dict[str, str | None] | None = None) -> None:
        self.tracking = tracking
        self.complete = complete
        self.rows: dict[str, str | None] = rows if rows is not None else {}

    def text(self, key: str) -> str | _Unknown | None:
        """The key's text, ``None`` if known absent, ``UNKNOWN`` if it must be read."""
        if key in self.rows:
            return self.rows[key]
        return None if self.complete else UNKNOWN


class _Unknown:
    """Marks a row whose stored text was not read (it is written whatever it holds)."""


UNKNOWN = _Unknown()
KNOWN_ROWS_MAX = 100_000
"""Row texts kept per view between batches; beyond it only the last batch's rows are kept."""


class BatchRows:
    """The rows a view sees during one batch: read from the view table on first use (or taken
    from what the updater already knows, :class:`Known`), kept in memory, and compared with
    what the table held when the batch commits (so a row changed in place, without ``put``, is
    still written). A row ``put`` without being read first is written whatever the table
    held: it is never read just to be compared."""

    def __init__(self, store: ViewStore, view: str, *, reset: bool,
                 known: Known | None = None) -> None:
        self._store = store
        self._view = view
        self._reset = reset
        self._known = Known(None, complete=True) if reset else known
        self._rows: dict[str, Row | None] = {}
        self._read: dict[str, str | _Unknown | None] = {}
        self._scanned: set[str] = set()
        self._texts: dict[str, str | None] = {}

    def _cached(self, key: str) -> str | _Unknown | None:
        return UNKNOWN if self._known is None else self._known.text(key)

    def get(self, key: str) -> Row | None:
        """The row under ``key``, or ``None``."""
        if key not in self._rows:
            text = self._read.get(key, UNKNOWN)
            if isinstance(text, _Unknown):
                text = self._cached(key)
            if isinstance(text, _Unknown):
                text = self._store.get(self._view, key)
            self._read[key] = text
            self._rows[key] = json.loads(text) if text is not None else None
        return self._rows[key]

    def put(self, key: str, row: Row) -> None:
        """Create or replace the row under ``key``."""
        if key not in self._read:
            self._read[key] = self._cached(key)
        self._rows[key] = row

    def scan(self, prefix: str = "") -> Iterator[tuple[str, Row]]:
        """Rows whose key starts with ``prefix``, in key order."""
        if not any(prefix.startswith(s) for s in self._scanned):
            if self._known is not None and self._known.complete:
                found = [(k, t) for k, t in self._known.rows.items()
                         if t is not None and k.startswith(prefix)]
            else:
                found = self._store.scan(self._view, prefix)
            for key, text in found:
                if key not in self._rows:
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
        self._texts = {}
        for key, row in self._rows.items():
            if row is None:
                read = self._read.get(key)
                if not isinstance(read, _Unknown):
                    self._texts[key] = read
                continue
            text = encode_row(row)
            self._texts[key] = text
            if text != self._read.get(key):
                out[key] = text
        return out

    def known_after(self, tracking: Tracking) -> Known:
        """What is known of the view once this batch's :meth:`changed` rows are committed at
        ``tracking``: the rows known before, updated with this batch's."""
        known = self._known
        if known is None or len(known.rows) + len(self._texts) > KNOWN_ROWS_MAX:
            return Known(tracking, complete=False, rows=dict(self._texts))
        known.rows.update(self._texts)
        known.tracking = tracking
        return known


@dataclass(frozen=True)
class Target:
    """A view to catch up: the view, the name its rows are stored under, and where to stop
    (``upto``: a notification id, ``None`` for the end of the log)."""

    view: View
    name: str
    upto: int | None = None


class _Progress:
    """Where one target stands during one batch of a shared pass."""

    def __init__(self, store: ViewStore, target: Target, base: Tracking | None,
                 known: Known | None) -> None:
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


def catch_up_targets(app: LedgerApp, store: ViewStore, targets: Sequence[Target], *,
                     batch_rounds: int = BATCH_ROUNDS, before_commit: Hook | None = None,
                     on_write: Hook | None = None) -> dict[str, int]:
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
    unique: list[Target] = []
    for target in targets:  # a name is caught up once (the first target of that name)
        if all(t.name != target.name for t in unique):
            unique.append(target)
    positions: dict[str, int] = {}
    known: dict[str, Known] = {}
    stream: Iterator[tuple[int, Round]] | None = None
    stream_at = -1
    batch = 0
    retries = 0
    while True:
        pending = [t for t in unique if t.name not in positions]
        if not pending:
            return {t.name: positions[t.name] for t in unique}
        stored = {t.view: t for t in store.trackings()}
        states = []
        for target in pending:
            state = _Progress(store, target, stored.get(target.name), known.get(target.name))
            if not state.reset and target.upto is not None and state.after >= target.upto:
                positions[target.name] = state.after  # already at (or past) where it stops
            else:
                states.append(state)
        if not states:
            continue
        start = min(s.after for s in states)
        last = None if any(s.target.upto is None for s in states) else max(
            s.target.upto or 0 for s in states)
        rounds = 0
        cut = False
        if stream is None or stream_at != start:  # else go on reading where the last batch
            stream = closed_rounds(app, start)    # stopped: rounds it left open stay gathered
        stream_at = -1
        for closing, rnd in stream:
            stream_at = closing
            if last is not None and closing > last:
                break
            folded = False
            for s in states:
                if s.wants(closing):
                    s.target.view.apply(rnd, s.rows)
                    s.position = closing
                    s.count += 1
                    folded = True
            rounds += folded
            if rounds >= batch_rounds:
                cut = True
                break
        else:
            stream = None  # the end of the log: the next batch asks again
        moving = [s for s in states if s.count or s.reset]
        if not moving:
            for s in states:
                positions[s.target.name] = s.after
            continue
        batch += 1
        if before_commit is not None:
            for s in moving:
                before_commit(s.target.name, batch)
        try:
            store.commit_all([
                Pending(s.target.name, s.target.view.version, s.base, s.position,
                        s.rows.changed(), s.reset, _hook(on_write, s.target.name, batch))
                for s in moving])
            for s in moving:
                name = s.target.name
                known[name] = s.rows.known_after(Tracking(name, s.position, s.target.view.version))
        except _Moved:
            retries += 1
            if retries > RETRIES_MAX:
                names = ", ".join(s.target.name for s in moving)
                raise ProjectionError(f"views {names}: other updaters kept moving the position; "
                                      f"gave up after {RETRIES_MAX} retries") from None
            continue
        if not cut:  # the pass reached the end of the log (or every upto): all are there
            for s in states:
                positions[s.target.name] = s.position


def _hook(on_write: Hook | None, name: str, batch: int) -> Callable[[], None] | None:
    if on_write is None:
        return None
    return lambda: on_write(name, batch)


def catch_up_view(app: LedgerApp, view: View, *, store: ViewStore | None = None,
                  batch_rounds: int = BATCH_ROUNDS, upto: int | None = None,
                  name: str | None = None, before_commit: Hook | None = None,
                  on_write: Hook | None = None) -> int:
    """Fold every closed round not yet in ``view`` into its stored rows; return the position.

    ``upto`` stops at that notification id (rebuild comparisons); ``name`` stores the view under
    another name (a scratch copy). ``before_commit`` / ``on_write`` are test hooks, called
    before a batch's transaction and inside it after the rows are written.
    """
    target = Target(view, name or view.name, upto)
    with _store_of(app, store) as own:
        return catch_up_targets(app, own, [target], batch_rounds=batch_rounds,
                                before_commit=before_commit, on_write=on_write)[target.name]


@contextmanager
def _store_of(app: LedgerApp, store: ViewStore | None) -> Iterator[ViewStore]:
    """``store``, or a store of our own closed on exit."""
    if store is not None:
        yield store
        return
    with ViewStore(app) as own:
        yield own


def catch_up(app: LedgerApp, views: Sequence[View] | None = None, *,
             batch_rounds: int = BATCH_ROUNDS, store: ViewStore | None = None) -> dict[str, int]:
    """Bring every view (the registry's by default) up to the end of the log in shared passes
    over the log (:func:`catch_up_targets`); return their positions by name."""
    chosen = list(views) if views is not None else registered_views()
    with _store_of(app, store) as own:
        return catch_up_targets(app, own, [Target(v, v.name) for v in chosen],
                                batch_rounds=batch_rounds)


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
        for v, (t, rows) in zip(views, snaps, strict=True)]
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
    return [ViewRead(v.name, rows, position[i], t.position if t is not None else None,
                     behind[i]) for i, (v, (t, rows)) in enumerate(zip(views, bases, strict=True))]


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
    return rebuild_all(app, [view], replace=replace, batch_rounds=batch_rounds)[0]


def rebuild_all(app: LedgerApp, views: Sequence[View] | None = None, *, replace: bool = False,
                batch_rounds: int = BATCH_ROUNDS) -> list[Rebuilt]:
    """:func:`rebuild` for several views (the registry's by default) with shared passes: one
    catch-up of the live views, then one rebuild pass for all the scratch views, each stopping
    at its live view's position."""
    chosen = list({v.name: v for v in (views if views is not None else registered_views())}
                  .values())
    scratch = {v.name: f"{v.name}~rebuild" for v in chosen}
    out = []
    with ViewStore(app) as store:
        positions = catch_up_targets(app, store, [Target(v, v.name) for v in chosen],
                                     batch_rounds=batch_rounds)
        for v in chosen:
            store.drop(scratch[v.name])
        catch_up_targets(app, store, [Target(v, scratch[v.name], positions[v.name])
                                      for v in chosen], batch_rounds=batch_rounds)
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
