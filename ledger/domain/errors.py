"""The ledger's exceptions.

::

    LedgerError
      StoreError       the database cannot be opened, read or written
        StoreMissing   no initialised ledger at the URL (nothing was created)
        StoreUnreachable  the database server cannot be reached or refuses the login
        FrameError     stored bytes that are not a framed fact (changed, foreign, other key)
        StoreDamaged   stored data the ledger cannot read as it wrote it: a damaged database
                       page, a row whose aggregate id is not a UUID (exit 3, integrity)
      UsageError       a command was called wrongly (exit code 2)
      SealError        a key or checkpoint that cannot be used (unreadable, wrong format, bad
                       signature)
        SnapshotError  bytes that are not a verifier snapshot, or one that does not fit its
                       checkpoint (``ledger.verify.snapshot``)
      BundleError      a round that cannot be exported, or a file that is not a bundle

Every one ends a command with one line on stderr and exit 2 (``cli.main``) unless the command
words it itself (``ledger seal`` reports a chain that does not verify with exit 3) — except
:class:`StoreDamaged`, exit 3 everywhere. :func:`damage_in` recognises damage the database
drivers report in their own words (SQLite's ``database disk image is malformed``, PostgreSQL's
``data_corrupted``), so every command says it the same way: one line, exit 3, never "internal
error".

Rejected feed lines are not exceptions: they are values (``ledger.codec.parse.Rejection``) with
a stable code, collected into the rejects file. Findings are values too
(``ledger.domain.findings.Finding``).
"""

from __future__ import annotations

import sqlite3

DAMAGE_SQLSTATES = frozenset({"XX001", "XX002"})
"""PostgreSQL's ``data_corrupted`` and ``index_corrupted``."""


class LedgerError(Exception):
    """Base of every error the ledger raises on purpose."""


class StoreError(LedgerError):
    """The database cannot be opened, read or written."""


class UsageError(LedgerError):
    """A command was called wrongly (exit code 2)."""


class StoreMissing(StoreError):
    """There is no initialised ledger at the URL; only ``ingest`` and ``init`` create one."""


class StoreUnreachable(StoreError):
    """The database server is down, the database does not exist, or the login is refused."""


class FrameError(ValueError, StoreError):
    """Stored bytes that are not a framed fact (changed, not written by this ledger, or
    encrypted under another key). A :class:`StoreError` too, so a command that meets one ends
    with one line and exit 2, never a traceback."""


class StoreDamaged(StoreError):
    """Stored data the ledger cannot read as it wrote it (a damaged database page, a row whose
    aggregate id is not a UUID): the store's integrity is broken, exit 3 — not a bug, and not
    something a retry fixes."""


def damage_in(exc: BaseException) -> StoreDamaged | None:
    """A :class:`StoreDamaged` if ``exc``, or an exception it was raised from, is the store
    reporting damage; else ``None``. SQLite reports a damaged page or a file that is not a
    database as a bare ``sqlite3.DatabaseError`` (the library wraps it in its own
    ``DatabaseError``); its subclasses (``OperationalError``: locked, missing, refused, …)
    are not damage. PostgreSQL reports it by SQLSTATE class XX."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, StoreDamaged):
            return current
        if (
            type(current) in (sqlite3.DatabaseError, sqlite3.DataError)
            or getattr(current, "sqlstate", None) in DAMAGE_SQLSTATES
        ):
            return StoreDamaged(f"the store is damaged: {current}")
        current = current.__cause__ or current.__context__
    return None


class SealError(LedgerError):
    """A key or checkpoint that cannot be used (unreadable, wrong format, bad signature)."""


class BundleError(LedgerError):
    """A round that cannot be exported, or a file that is not a bundle."""


def first_line(exc: BaseException) -> str:
    """An exception's message, its first line (or its class's name): how a driver's error is
    said in one line (a log line, a metric's last error, a finding)."""
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
