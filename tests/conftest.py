"""Shared fixtures: a fresh ledger on SQLite and on a real PostgreSQL; the two tiers.

A bare ``pytest`` is the developer's tier: every module exercised, on both stores, in about a
minute of CPU. Tests marked ``slow`` (long simulations, valgrind, many real subprocesses) are
left out of it, and run by ``pytest -m slow`` (only them), ``pytest --all`` (everything, the
README's command) and under ``CI=true`` (everything).

PostgreSQL tests use a fresh schema per test on ``LEDGER_TEST_PG`` (default
``postgresql://postgres@127.0.0.1:5432/test``). Without a server they are skipped — except
under ``CI=true``, where a missing server fails the run: CI must prove both stores.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from ledger.store import LedgerApp, open_ledger

PG_BASE = os.environ.get("LEDGER_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
VENDORED_EXAMPLES = Path(__file__).resolve().parent / "examples"
"""A copy of shared/examples kept in the repository, for a clone without shared/ beside it."""


def _find_examples() -> Path:
    here = Path(__file__).resolve()
    for folder in (here.parents[2] / "shared" / "examples", here.parents[1] / "shared" / "examples"):
        if folder.is_dir():
            return folder
    return VENDORED_EXAMPLES


EXAMPLES = _find_examples()
"""shared/examples beside the checkout (binding), else the vendored copy. Test modules read it
from ``LEDGER_EXAMPLES``, which this conftest sets before they are imported."""
os.environ["LEDGER_EXAMPLES"] = str(EXAMPLES)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--all", action="store_true", dest="all_tiers", help="run the slow tier too (as CI=true does)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave the ``slow`` tier out unless asked for (``--all``, ``-m …`` or ``CI=true``)."""
    if config.getoption("all_tiers") or config.option.markexpr or os.environ.get("CI") == "true":
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]


def _pg_available() -> str | None:
    try:
        import psycopg

        with psycopg.connect(PG_BASE, connect_timeout=3):
            return None
    except Exception as exc:  # any failure to connect means "no server"
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


_PG_PROBLEM = _pg_available()


def require_postgres() -> None:
    """Skip without a server, or fail under CI=true."""
    if _PG_PROBLEM is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"PostgreSQL is required under CI=true and is not reachable: {_PG_PROBLEM}")
    pytest.skip(f"no PostgreSQL at {PG_BASE}: {_PG_PROBLEM}")


def _drop_schema(schema: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(PG_BASE, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def _empty_url(backend: str, folder: Path) -> Iterator[str]:
    """A URL of an empty ledger database on ``backend`` (a file in ``folder``, or a fresh
    PostgreSQL schema dropped afterwards)."""
    if backend == "sqlite":
        yield f"sqlite:///{folder / 'ledger.db'}"
        return
    require_postgres()
    schema = "t_" + uuid.uuid4().hex[:12]
    sep = "&" if "?" in PG_BASE else "?"
    yield f"{PG_BASE}{sep}schema={schema}"
    _drop_schema(schema)


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL of an empty ledger database, on each backend."""
    yield from _empty_url(request.param, tmp_path)


@pytest.fixture(scope="module", params=BACKENDS)
def module_db_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Like ``db_url``, but one per test module and backend: for a store that is expensive to
    build and that the module's tests only read (build it in a module-scoped fixture)."""
    yield from _empty_url(request.param, tmp_path_factory.mktemp("module-store"))


@pytest.fixture
def app(db_url: str) -> Iterator[LedgerApp]:
    """An open ledger on each backend."""
    ledger = open_ledger(db_url)
    yield ledger
    ledger.close()


@pytest.fixture
def examples() -> Path:
    """The folder of the clean example feeds (shared/examples)."""
    if not EXAMPLES.is_dir():
        pytest.fail(f"the example feeds are missing: {EXAMPLES}")
    return EXAMPLES


class RawStore:
    """Direct SQL on the events and checkpoints tables, to play the attacker in integrity
    tests."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.sqlite = url.startswith("sqlite")

    def rows(self) -> list[tuple[int, bytes]]:
        """``(notification id, state)`` of every stored event, in order."""
        return [
            (int(i), bytes(s))
            for i, s in self.run("SELECT {id}, state FROM {events} ORDER BY {id}", fetch=True)
        ]

    def set_state(self, notification_id: int, state: bytes) -> None:
        """Overwrite one event's stored bytes."""
        self.run("UPDATE {events} SET state = {p} WHERE {id} = {p}", (state, notification_id))

    def delete(self, notification_id: int) -> None:
        """Remove one event."""
        self.run("DELETE FROM {events} WHERE {id} = {p}", (notification_id,))

    def run(self, template: str, params: tuple[object, ...] = (), fetch: bool = False) -> list:
        """Plain SQL, with ``{events}``, ``{t}`` (the checkpoints table), ``{id}`` (the events'
        position column) and ``{p}`` (a parameter) written for the backend."""
        if self.sqlite:
            import sqlite3

            path = self.url[len("sqlite:///") :]
            sql = template.format(events="stored_events", t="ledger_checkpoints", id="rowid", p="?")
            with sqlite3.connect(path) as conn:
                cur = conn.execute(sql, params)
                return cur.fetchall() if fetch else []
        from urllib.parse import parse_qs, urlsplit

        import psycopg

        schema = parse_qs(urlsplit(self.url).query)["schema"][0]
        base = self.url.split("?")[0]
        sql = template.format(
            events=f"{schema}.ledger_events", t=f'"{schema}".ledger_checkpoints', id="notification_id", p="%s"
        )
        with psycopg.connect(base, autocommit=True) as conn:
            cur = conn.execute(sql, params)  # type: ignore[arg-type]
            return cur.fetchall() if fetch else []


@pytest.fixture
def raw(db_url: str) -> RawStore:
    """Direct SQL access to the same database as ``app``."""
    return RawStore(db_url)
