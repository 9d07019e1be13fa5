"""One follower per store: a second one started on the same store is refused at once.

On SQLite an exclusive ``flock`` on ``PATH.follow.lock`` beside the database file; on
PostgreSQL a session advisory lock named after the store's schema, held on a connection of its
own. Either is released by the operating system or the server when the follower dies (even by
SIGKILL), so a crash never leaves a stale lock behind. A batch ``ledger ingest`` beside a
follower is still allowed: the ingest's own conflict handling keeps both exact.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from typing import Any

from ledger.storage.sql import settings_dialect
from ledger.storage.store import environment_for


class FollowerRunning(Exception):
    """Another follower holds the store (exit 2)."""


class FollowerLock:
    """Held for a follower's life (see the module docstring)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._env = environment_for(url)
        self._file: int | None = None
        self._conn: Any = None
        self._key = 0

    def acquire(self) -> None:
        """Take the lock, or raise :class:`FollowerRunning`."""
        if settings_dialect(self._env) == "sqlite":
            self._lock_file(self._env["SQLITE_DBNAME"] + ".follow.lock")
        else:
            self._lock_postgres()

    def _lock_file(self, path: str) -> None:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o640)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise FollowerRunning(f"another follower is running on this store ({path} is locked)") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._file = fd

    def _lock_postgres(self) -> None:
        import psycopg

        env = self._env
        schema = env.get("POSTGRES_SCHEMA", "public")
        key = int.from_bytes(
            hashlib.sha256(f"ledger follower {schema}".encode()).digest()[:8], "big", signed=True
        )
        self._conn = psycopg.connect(
            host=env["POSTGRES_HOST"],
            port=int(env["POSTGRES_PORT"]),
            dbname=env["POSTGRES_DBNAME"],
            user=env["POSTGRES_USER"],
            password=env["POSTGRES_PASSWORD"] or None,
            autocommit=True,
            connect_timeout=int(env["POSTGRES_CONNECT_TIMEOUT"]),
            application_name="ledger follower",
        )
        self._key = key
        row = self._conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
        if not row or not row[0]:
            self._conn.close()
            self._conn = None
            raise FollowerRunning(
                f"another follower is running on this store (schema {schema}"
                " holds the follower's advisory lock)"
            )

    def release(self) -> None:
        """Let the lock go (closing the file or the connection)."""
        if self._file is not None:
            os.close(self._file)
            self._file = None
        if self._conn is not None:
            with contextlib.suppress(Exception):
                # unlocked before closing: the server ends a closed session (and frees its locks)
                # a moment later, so a follower started right after would be refused
                self._conn.execute("SELECT pg_advisory_unlock(%s)", (self._key,))
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None
