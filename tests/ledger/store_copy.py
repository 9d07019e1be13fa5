"""A copy of a store built once per test module, for a test that edits what it reads."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from ledger.storage.store import LedgerApp, open_ledger
from tests.conftest import _empty_url

T = TypeVar("T")


@contextmanager
def copied(
    url: str, folder: Path, built: T, rebuild: Callable[[LedgerApp], T]
) -> Iterator[tuple[LedgerApp, T]]:
    """An open copy of the store at ``url`` and what its build gave (``built``): a copy of its
    SQLite file (SQLite's backup, so a write-ahead log is copied too), or on PostgreSQL the
    same store built again by ``rebuild`` in a schema of its own, dropped afterwards."""
    if url.startswith("sqlite:///"):
        source, copy = sqlite3.connect(url.removeprefix("sqlite:///")), sqlite3.connect(folder / "copy.db")
        try:
            source.backup(copy)
        finally:
            source.close()
            copy.close()
        app = open_ledger(f"sqlite:///{folder / 'copy.db'}")
        try:
            yield app, built
        finally:
            app.close()
        return
    schema = _empty_url("postgres", folder)
    app = open_ledger(next(schema))
    try:
        yield app, rebuild(app)
    finally:
        app.close()
        next(schema, None)
