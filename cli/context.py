"""What every command shares: the ledger from ``--db`` / ``LEDGER_DB``, and the usage checks
(round targets, output formats, a named table or pool) that exit 2 with one line.

``--db`` may be given before the sub-command (``ledger --db URL verify``) or after it; the one
after wins, then the one before, then ``LEDGER_DB``, then ``sqlite:///ledger.db``.
Read commands open the store with :func:`open_app` (``create=False``): a missing store is exit
2 and nothing is created. Only ``ingest`` and ``init`` pass ``create=True``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any, TypeVar

import typer

from cli.contract import EXIT_INTEGRITY, EXIT_USAGE, fail
from ledger.domain.errors import StoreDamaged, StoreError
from ledger.storage.store import LedgerApp, open_ledger
from projections.base import MemoryRows, View
from projections.updater import read_views

T = TypeVar("T")


def _db_value(ctx: typer.Context, param: Any, value: str | None) -> str | None:
    """The sub-command's ``--db``; else the root's ``--db``; else ``LEDGER_DB`` (or None)."""
    source = ctx.get_parameter_source(param.name) if param.name else None
    if source is not None and source.name == "COMMANDLINE":
        return value
    before = ctx.meta.get("ledger.db")
    return before if isinstance(before, str) else value


DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        metavar="URL",
        envvar="LEDGER_DB",
        show_envvar=True,
        callback=_db_value,
        help="Database URL: sqlite:///PATH (default sqlite:///ledger.db) or "
        "postgresql://USER@HOST:PORT/DB[?schema=NAME].",
    ),
]


def open_app(db: str | None, *, create: bool = False) -> LedgerApp:
    """Open the ledger, or exit with code 2 and a one-line reason (nothing created unless
    ``create``)."""
    try:
        return open_ledger(db, create=create)
    except StoreDamaged as exc:
        fail(
            f"{exc} (`ledger verify` shows what can still be read)", EXIT_INTEGRITY, prefix="integrity broken"
        )
    except StoreError as exc:
        fail(str(exc))


@contextmanager
def opened(db: str | None, *, create: bool = False) -> Iterator[LedgerApp]:
    """The ledger for the length of a command, then closed; exit 2 with one line if it cannot be
    opened or a :class:`StoreError` (a store problem, not a finding) ends the command; exit 3
    if it is :class:`StoreDamaged` (the store's integrity is broken)."""
    app = open_app(db, create=create)
    try:
        yield app
    except StoreDamaged as exc:
        fail(
            f"{exc} (`ledger verify` shows what can still be read)", EXIT_INTEGRITY, prefix="integrity broken"
        )
    except StoreError as exc:
        fail(str(exc), EXIT_USAGE)
    finally:
        app.close()


def round_target(target: str) -> tuple[str, str]:
    """``TABLE/ROUND`` split in two, or exit 2 with the expected form."""
    table, sep, round_ = target.partition("/")
    if not sep or not table or not round_:
        fail("give the round as TABLE/ROUND, e.g. RL-01/000417")
    return table, round_


def one_format(as_json: bool, as_csv: bool) -> None:
    """``--json`` and ``--csv`` exclude each other (exit 2)."""
    if as_json and as_csv:
        fail("choose one of --json and --csv")


def only(items: dict[str, T], wanted: str | None, noun: str) -> dict[str, T]:
    """``items`` narrowed to ``wanted`` (all if ``None``), or exit 2 naming what exists."""
    if wanted is None:
        return items
    if wanted not in items:
        fail(f"no {noun} {wanted!r} in the store" + (f"; {noun}s: {', '.join(items)}" if items else ""))
    return {wanted: items[wanted]}


def current_view(app: LedgerApp, view: View, *, note: bool = True) -> MemoryRows:
    """A view as of the end of the log, read-only: rounds the stored view has not folded yet
    are added in memory and, with ``note`` (text output), a line on stderr says how many
    (``ledger projections update`` stores them; ``projections status --json`` reports the
    lag to machines). Nothing is written."""
    got = read_views(app, [view])[0]
    if got.behind and note:
        where = "not stored yet" if got.stored_position is None else f"{got.behind} round(s) behind the log"
        sys.stderr.write(
            f"note: the stored {got.view} view is {where}; computed in memory for "
            "this command (`ledger projections update` stores it)\n"
        )
    return got.rows
