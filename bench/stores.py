"""Fresh, disposable stores for one measurement: a SQLite file or a PostgreSQL schema."""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

DEFAULT_PG = os.environ.get("LEDGER_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


@dataclass(frozen=True)
class Store:
    """One empty store: ``kind`` is ``sqlite`` or ``postgres``; ``url`` is a ledger URL."""

    kind: str
    url: str

    @property
    def schema(self) -> str | None:
        """The PostgreSQL schema of this store."""
        if self.kind != "postgres":
            return None
        return parse_qs(urlsplit(self.url).query)["schema"][0]

    @property
    def sqlite_path(self) -> str:
        """The SQLite file of this store."""
        return self.url[len("sqlite:///") :]

    def pg_base(self) -> str:
        """The PostgreSQL URL without the schema query."""
        return self.url.split("?")[0]

    def pg_connect(self, **kw: Any) -> Any:
        """A psycopg connection whose search_path is this store's schema."""
        import psycopg

        return psycopg.connect(self.pg_base(), options=f"-c search_path={self.schema}", **kw)

    def drop(self) -> None:
        """Remove the store."""
        if self.kind == "sqlite":
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(self.sqlite_path + suffix):
                    os.remove(self.sqlite_path + suffix)
            return
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.pg_base(), autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(self.schema or ""))
            )


class Stores:
    """Hands out fresh stores in a work folder and on one PostgreSQL database."""

    def __init__(self, workdir: str, pg: str | None) -> None:
        self.workdir = workdir
        self.pg = pg
        self.made: list[Store] = []

    def kinds(self) -> list[str]:
        """The store kinds measured in this run."""
        return ["sqlite", "postgres"] if self.pg else ["sqlite"]

    def fresh(self, kind: str, label: str) -> Store:
        """A new, empty store of ``kind``."""
        tag = f"bench_{label}_{uuid.uuid4().hex[:8]}"
        if kind == "sqlite":
            store = Store(kind, f"sqlite:///{os.path.join(self.workdir, tag + '.db')}")
        else:
            assert self.pg is not None
            import psycopg
            from psycopg import sql

            with psycopg.connect(self.pg, autocommit=True) as conn:
                conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(tag)))
            sep = "&" if "?" in self.pg else "?"
            store = Store(kind, f"{self.pg}{sep}schema={tag}")
        self.made.append(store)
        return store

    def drop_all(self) -> None:
        """Remove every store handed out."""
        for store in self.made:
            store.drop()
        self.made.clear()


def pg_reachable(url: str) -> str | None:
    """``None`` if PostgreSQL answers at ``url``, else why not."""
    try:
        import psycopg

        with psycopg.connect(url, connect_timeout=3):
            return None
    except Exception as exc:  # any failure to connect means "no server"
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
