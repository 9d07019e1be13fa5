"""The repository of stored view rows: two tables beside the store's events.

- ``ledger_view_rows (view, key, row)``: each view's rows, JSON text (sealed, see
  ``projections.sealed_rows``), keyed by ``(view, key)``;
- ``ledger_view_tracking (view, position, version)``: the notification id of the last closing
  event folded into the view, and the view version that folded it.

:class:`ViewStore` reads rows and tracking records, and commits a batch of views' changed rows
together with their new positions in one transaction (:meth:`ViewStore.commit_all`), refusing
(:class:`Moved`) if another updater moved a position meanwhile. The SQL dialect comes from
``ledger.storage.sql``; the catch-up algorithm that drives it is ``projections.updater``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from eventsourcing.persistence import IntegrityError

from ledger.domain.errors import StoreError
from ledger.storage.sql import Connection, Dialect, connect
from ledger.storage.store import LedgerApp
from projections.base import MemoryRows
from projections.sealed_rows import META_KEY, RowCodec

ROWS_TABLE = "ledger_view_rows"
TRACKING_TABLE = "ledger_view_tracking"
VIEW_DELETE_FUNCTION = "ledger_view_delete"
"""PostgreSQL: the ``SECURITY DEFINER`` function that deletes one view's rows (and, if asked,
its tracking record), so the ingest role needs no table-level ``DELETE`` — which would also let
it ``LOCK`` the view tables in ``ACCESS EXCLUSIVE`` mode and stall every reader."""


class ProjectionError(StoreError):
    """The view tables cannot be read or written, or updaters kept conflicting."""


class Moved(Exception):
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


def view_tables_sql(dialect: Dialect) -> list[str]:
    """The statements that create the view tables (run by :class:`ViewStore`, printed by
    ``ledger init --print-sql``)."""
    collate = "" if dialect.is_sqlite else ' COLLATE "C"'
    rows, tracking = dialect.qualified(ROWS_TABLE), dialect.qualified(TRACKING_TABLE)
    return [
        f"CREATE TABLE IF NOT EXISTS {rows} (view TEXT NOT NULL,"
        f" key TEXT{collate} NOT NULL, row TEXT NOT NULL, PRIMARY KEY (view, key))",
        f"CREATE TABLE IF NOT EXISTS {tracking} (view TEXT PRIMARY KEY,"
        f" position BIGINT NOT NULL, version BIGINT NOT NULL)",
        *view_delete_function_sql(dialect),
    ]


def view_delete_function_sql(dialect: Dialect) -> list[str]:
    """PostgreSQL: (re)create :data:`VIEW_DELETE_FUNCTION` (``view text, with_tracking
    boolean``), executable by nobody but its owner until ``ledger init --roles`` grants it to
    the ingest role. SQLite: nothing."""
    if dialect.is_sqlite:
        return []
    rows, tracking = dialect.qualified(ROWS_TABLE), dialect.qualified(TRACKING_TABLE)
    function = dialect.qualified(VIEW_DELETE_FUNCTION)
    return [
        f"CREATE OR REPLACE FUNCTION {function}(wanted text, with_tracking boolean) RETURNS void "
        "LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $body$ BEGIN "
        f"DELETE FROM {rows} WHERE view = wanted; IF with_tracking THEN "
        f"DELETE FROM {tracking} WHERE view = wanted; END IF; END $body$",
        f"REVOKE ALL ON FUNCTION {function}(text, boolean) FROM PUBLIC",
    ]


class ViewStore:
    """The view tables of one ledger database (see the module docstring)."""

    def __init__(self, app: LedgerApp, *, create: bool = True) -> None:
        try:
            self.db: Connection = connect(app)
        except StoreError as exc:
            raise ProjectionError(f"projections need {exc}") from None
        d = self.db.dialect
        self.rows_table = d.qualified(ROWS_TABLE)
        """The rows table, qualified for the dialect."""
        self.tracking_table = d.qualified(TRACKING_TABLE)
        """The tracking table, qualified for the dialect."""
        self.p = d.p
        self.lock = d.lock
        self.codec = RowCodec(app.factory.cipher(), app.env.get("CIPHER_KEY"))
        self.exists = self.db.table_exists(TRACKING_TABLE)
        if create and not self.exists:
            self._create()
            self.exists = True
        self._delete_function: bool | None = None

    def close(self) -> None:
        """Close connections opened for the view tables."""
        self.db.close()

    def __enter__(self) -> ViewStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _create(self) -> None:
        self.db.create(view_tables_sql(self.db.dialect))

    # --- reading -------------------------------------------------------------------------

    def _meta_sql(self, one: bool) -> str:
        return f"SELECT view, row FROM {self.rows_table} WHERE substr(key, 1, {len(META_KEY)}) = {self.p}" + (
            f" AND view = {self.p}" if one else ""
        )

    def _checked(self, view: str, position: Any, version: Any, meta: Any) -> Tracking:
        """A tracking record as read, checked against its written-position row (raises
        ``ViewTampered`` if they disagree; a missing row makes the view stale)."""
        return Tracking(
            view,
            int(position),
            self.codec.checked(view, int(position), int(version), None if meta is None else str(meta)),
        )

    def tracking(self, view: str) -> Tracking | None:
        """The stored position and version of a view, or ``None`` if it was never written."""
        if not self.exists:
            return None
        found = self.db.read(
            f"SELECT position, version FROM {self.tracking_table} WHERE view = {self.p}", (view,)
        )
        if not found:
            return None
        meta = {str(v): r for v, r in self.db.read(self._meta_sql(True), (META_KEY, view))}
        return self._checked(view, found[0][0], found[0][1], meta.get(view))

    def trackings(self) -> list[Tracking]:
        """Every stored view's tracking record (checked as :meth:`tracking` checks it)."""
        if not self.exists:
            return []
        meta = {str(v): r for v, r in self.db.read(self._meta_sql(False), (META_KEY,))}
        return [
            self._checked(str(v), p, n, meta.get(str(v)))
            for v, p, n in self.db.read(
                f"SELECT view, position, version FROM {self.tracking_table} ORDER BY view"
            )
        ]

    def get(self, view: str, key: str) -> str | None:
        """One row's text."""
        stored = self.codec.stored_key(key)
        found = self.db.read(
            f"SELECT row FROM {self.rows_table} WHERE view = {self.p} AND key = {self.p}", (view, stored)
        )
        return self.codec.open(view, stored, str(found[0][0]))[1] if found else None

    def scan(self, view: str, prefix: str = "") -> list[tuple[str, str]]:
        """``(key, text)`` of the rows whose key starts with ``prefix`` (unordered)."""
        sql_prefix = self.codec.sql_prefix(prefix)
        if not sql_prefix:
            sql = f"SELECT key, row FROM {self.rows_table} WHERE view = {self.p}"
            found = self.db.read(sql, (view,))
        else:
            sql = (
                f"SELECT key, row FROM {self.rows_table} WHERE view = {self.p} "
                f"AND substr(key, 1, {len(sql_prefix)}) = {self.p}"
            )
            found = self.db.read(sql, (view, sql_prefix))
        return self._opened(view, found, prefix)

    def _opened(self, view: str, found: Sequence[tuple[Any, ...]], prefix: str = "") -> list[tuple[str, str]]:
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
        with self.db.reading() as cur:  # one consistent snapshot on both, and no write needed
            cur.execute(f"SELECT position, version FROM {self.tracking_table} WHERE view = {self.p}", (view,))
            found = cur.fetchone()
            cur.execute(f"SELECT key, row FROM {self.rows_table} WHERE view = {self.p}", (view,))
            rows = cur.fetchall()
        meta = next((r for k, r in rows if str(k).startswith(META_KEY)), None)
        tracking = self._checked(view, found[0], found[1], meta) if found else None
        return tracking, MemoryRows({k: json.loads(t) for k, t in self._opened(view, rows)})

    # --- writing -------------------------------------------------------------------------

    def _delete(self, cur: Any, view: str, *, with_tracking: bool) -> None:
        """Delete a view's rows (and its tracking record): through :data:`VIEW_DELETE_FUNCTION`
        on PostgreSQL where it exists (a role without ``DELETE`` may call it), else directly."""
        d = self.db.dialect
        if self._delete_function is None:
            self._delete_function = not d.is_sqlite and bool(
                self.db.read(
                    f"SELECT to_regprocedure({self.p}) IS NOT NULL",
                    (f"{d.qualified(VIEW_DELETE_FUNCTION)}(text, boolean)",),
                )[0][0]
            )
        if self._delete_function:
            cur.execute(
                f"SELECT {d.qualified(VIEW_DELETE_FUNCTION)}({self.p}, {self.p})", (view, with_tracking)
            )
            return
        cur.execute(f"DELETE FROM {self.rows_table} WHERE view = {self.p}", (view,))
        if with_tracking:
            cur.execute(f"DELETE FROM {self.tracking_table} WHERE view = {self.p}", (view,))

    def commit(
        self,
        view: str,
        version: int,
        base: Tracking | None,
        position: int,
        changed: dict[str, str],
        *,
        reset: bool,
        on_write: Callable[[], None] | None = None,
    ) -> None:
        """Write changed rows and the new position in one transaction, if the position is still
        ``base``; raise :class:`Moved` (rolled back) otherwise."""
        self.commit_all([Pending(view, version, base, position, changed, reset, on_write)])

    def commit_all(self, batch: Sequence[Pending]) -> None:
        """Write each view's changed rows and new position in **one** transaction, if every
        view's position is still its ``base``; raise :class:`Moved` (all rolled back)
        otherwise. Views are locked in name order, so two updaters cannot deadlock."""
        upsert = (
            f"INSERT INTO {self.rows_table} (view, key, row) VALUES ({self.p}, {self.p}, {self.p}) "
            "ON CONFLICT (view, key) DO UPDATE SET row = excluded.row"
        )
        try:
            with self.db.write() as cur:
                for item in sorted(batch, key=lambda i: i.view):
                    view = item.view
                    cur.execute(
                        f"SELECT position, version FROM {self.tracking_table} "
                        f"WHERE view = {self.p}{self.lock}",
                        (view,),
                    )
                    found = cur.fetchone()
                    now = None
                    if found:
                        cur.execute(self._meta_sql(True), (META_KEY, view))
                        meta = cur.fetchone()
                        now = self._checked(view, found[0], found[1], None if meta is None else meta[1])
                    if now != item.base:
                        raise Moved
                    if item.reset:
                        self._delete(cur, view, with_tracking=False)
                    seal = self.codec
                    cur.executemany(
                        upsert,
                        [(view, *seal.meta(item.position, item.version))]
                        + [
                            (view, seal.stored_key(k), seal.seal(k, text))
                            for k, text in sorted(item.changed.items())
                        ],
                    )
                    if item.on_write is not None:
                        item.on_write()
                    if found is None:
                        cur.execute(
                            f"INSERT INTO {self.tracking_table} (view, position, version) "
                            f"VALUES ({self.p}, {self.p}, {self.p})",
                            (view, item.position, item.version),
                        )
                    else:
                        cur.execute(
                            f"UPDATE {self.tracking_table} SET position = {self.p}, "
                            f"version = {self.p} WHERE view = {self.p}",
                            (item.position, item.version, view),
                        )
        except (IntegrityError, sqlite3.IntegrityError):  # another updater inserted the
            raise Moved from None  # first tracking row meanwhile

    def replace(self, view: str, source: str) -> None:
        """Make ``view`` a copy of ``source`` (rows and tracking), in one transaction."""
        with self.db.write() as cur:
            self._delete(cur, view, with_tracking=True)
            cur.execute(
                f"INSERT INTO {self.rows_table} (view, key, row) SELECT {self.p}, key, row "
                f"FROM {self.rows_table} WHERE view = {self.p}",
                (view, source),
            )
            cur.execute(
                f"INSERT INTO {self.tracking_table} (view, position, version) SELECT {self.p}, "
                f"position, version FROM {self.tracking_table} WHERE view = {self.p}",
                (view, source),
            )

    def drop(self, view: str) -> None:
        """Delete a view's rows and tracking record."""
        if not self.exists:
            return
        with self.db.write() as cur:
            self._delete(cur, view, with_tracking=True)
