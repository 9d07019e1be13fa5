"""What every projection is: a fold of closed rounds, in store order, into keyed rows.

A :class:`View` sees each round once, when its closing event (``round_closed`` /
``round_voided``) is read from the notification log, and updates rows through :class:`Rows`.
Rows are JSON objects (decimals as strings, never floats) under string keys; a view chooses its
keys (``pool:JP-1``, ``pool:JP-1:history:000000000123``, ``table:SP9-01``).

Views never touch the database themselves. The updater (``projections.updater``) gives them
rows backed by the view tables and writes the changed rows together with the view's tracking
position in one transaction, so a round is counted exactly once even if the updater is killed
mid-batch. :class:`MemoryRows` backs the same views in memory: for tests, for ``rebuild``
comparisons and for :func:`fold_store`, which folds a whole store in one pass (and
:func:`fold_views`, which folds several views in that one pass).

A view's ``apply`` must be a pure function of (its rows, the round): no clock, no randomness,
no other rounds — that is what makes *rebuild equals incremental* true.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar, Protocol

from ledger.codec.chain import FrameError
from ledger.domain.errors import StoreError
from ledger.domain.round import Round
from ledger.storage.store import LedgerApp
from ledger.storage.stream import RoundStream

Row = dict[str, Any]
"""One view row: a JSON object, decimals as strings."""


class Rows(Protocol):
    """The rows of one view, as a view sees them while applying a round."""

    def get(self, key: str) -> Row | None:
        """The row under ``key``, or ``None``."""
        ...

    def put(self, key: str, row: Row) -> None:
        """Create or replace the row under ``key``."""
        ...

    def scan(self, prefix: str = "") -> Iterator[tuple[str, Row]]:
        """Rows whose key starts with ``prefix``, in key order."""
        ...


class View(ABC):
    """One projection: a name, a version, and how a closed round changes its rows."""

    name: ClassVar[str]
    """Stable name: the key of its tracking position (``commission``, ``jackpot``, ``bank``)."""
    version: ClassVar[int] = 1
    """Bump when ``apply`` changes meaning: the updater then rebuilds the view from 0."""

    @abstractmethod
    def apply(self, rnd: Round, rows: Rows) -> None:
        """Fold one closed (or voided) round into the rows. Pure: same rows + round → same rows."""


class MemoryRows:
    """Rows in a dict: the in-memory backing of a view."""

    def __init__(self, rows: dict[str, Row] | None = None) -> None:
        self.rows: dict[str, Row] = dict(rows or {})

    def get(self, key: str) -> Row | None:
        """The row under ``key``, or ``None``."""
        return self.rows.get(key)

    def put(self, key: str, row: Row) -> None:
        """Create or replace the row under ``key``."""
        self.rows[key] = row

    def scan(self, prefix: str = "") -> Iterator[tuple[str, Row]]:
        """Rows whose key starts with ``prefix``, in key order."""
        for key in sorted(self.rows):
            if key.startswith(prefix):
                yield key, self.rows[key]


def closed_rounds(app: LedgerApp, after: int = 0, page: int = 1000) -> Iterator[tuple[int, Round]]:
    """Every round whose closing event is stored after notification ``after``, with that event's
    notification id, in store order. Rounds still in play are not yielded.

    The log is read through :class:`ledger.storage.stream.RoundStream`; a round that opened at or
    before ``after`` (the updater resumes mid-round) is loaded from the store when it closes.
    Undecodable rows are skipped here: verify is the one place that reports a broken store.
    """

    def unreadable(nid: int, oid: str, version: int, topic: str, why: Exception) -> None:
        if isinstance(why, FrameError) and stream.opened_rows == 0:
            # the very first row: a key problem, not one damaged row
            raise StoreError(
                f"cannot read the stored events ({why}): is "
                "LEDGER_CIPHER_KEY missing or not the store's key? "
                "(`ledger verify` reports damage)"
            ) from None

    stream = RoundStream(app.ledger_mapper, on_unreadable=unreadable)
    for rows in app.rows(page, after=after):
        for closed in stream.closed(rows):
            if closed.complete:
                yield closed.position, Round.replay(closed.facts)
            else:
                last = closed.facts[-1]
                rnd = app.load_round(last.table, last.round)
                if rnd is not None:
                    yield closed.position, rnd


def fold_store(app: LedgerApp, view: View, rows: MemoryRows | None = None) -> MemoryRows:
    """Fold every closed round of the store into ``view`` in memory (a rebuild from 0)."""
    rows = rows if rows is not None else MemoryRows()
    for _, rnd in closed_rounds(app):
        view.apply(rnd, rows)
    return rows


def fold_views(
    app: LedgerApp, views: Sequence[View], upto: Sequence[int | None] | None = None
) -> list[MemoryRows]:
    """Fold the closed rounds into each of ``views`` in memory, in **one** pass over the log;
    view ``i`` stops at notification ``upto[i]`` (``None``: the end of the log). Each result
    equals ``fold_store`` of that view cut at its ``upto``."""
    limits = list(upto) if upto is not None else [None] * len(views)
    if len(limits) != len(views):
        raise ValueError(f"{len(views)} views but {len(limits)} positions to stop at")
    folds = [MemoryRows() for _ in views]
    last = None if any(u is None for u in limits) else max((u or 0 for u in limits), default=0)
    if not views:
        return folds
    plan = list(zip(views, folds, limits, strict=True))
    for closing, rnd in closed_rounds(app):
        if last is not None and closing > last:
            break
        for view, rows, limit in plan:
            if limit is None or closing <= limit:
                view.apply(rnd, rows)
    return folds
