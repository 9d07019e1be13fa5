"""Shared fixtures: a fresh ledger on SQLite and on a real PostgreSQL; the two tiers.

A bare ``pytest`` is the developer's tier: every module exercised, on both stores. Tests marked
``slow`` (long simulations, valgrind, many real subprocesses) are left out of it, and run by
``pytest -m slow`` (only them), ``pytest --all`` (everything, the README's command) and under
``CI=true`` (everything but the ``instructions`` tier). The ``instructions`` tier (the
valgrind instruction count of the benchmark, a minute of CPU that measures the code rather than
testing it) runs only when asked for by name, ``pytest -m instructions``, as ``.ci/run`` does
after the README's command. Two finer tools keep a light case of a heavy test by default:
:func:`tiered` (the first few seeds or sizes by default, the rest slow) and the
``slow_postgres`` marker (the SQLite case by default, the PostgreSQL one slow, for a test whose
PostgreSQL assertion another default test already makes). Hypothesis runs the ``dev`` profile
(few examples) in the developer's tier and ``ci`` in a full run; ``--cpu-report FILE`` writes
what each test costs in CPU.

Under pytest-xdist (``-n 3``) each worker names its PostgreSQL schemas with its id
(``PYTEST_XDIST_WORKER``); roles and NATS streams carry random names in the tests that make them.
The follower publishes findings on the NATS server's fixed ``ledger.findings.*`` subjects, so a
test listening there keeps only its own store's messages (by their ``Nats-Msg-Id``).

PostgreSQL tests use a fresh schema per test on ``LEDGER_TEST_PG`` (default
``postgresql://postgres@127.0.0.1:5432/test``). Without a server they are skipped — except
under ``CI=true``, where a missing server fails the run: CI must prove both stores.
"""

from __future__ import annotations

import gc
import os
import resource
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from ledger.storage.store import LedgerApp, open_ledger


def _cache_bytecode() -> None:
    """Keep compiled bytecode between runs even where ``PYTHONDONTWRITEBYTECODE`` is set.

    Without it every run compiles (and pytest re-rewrites the asserts of) each test module and
    the product again, in every xdist worker and every ``ledger`` subprocess: about 5 s of CPU
    of the collection alone, and 0.1-0.2 s per subprocess. The bytecode then goes to a folder
    of the system's temporary directory (``PYTHONPYCACHEPREFIX``), not into the checkout, which
    is what the variable is usually set for; subprocesses inherit the same folder."""
    if not sys.dont_write_bytecode:
        return
    prefix = sys.pycache_prefix or str(Path(tempfile.gettempdir()) / f"ledger-tests-pycache-{os.getuid()}")
    sys.pycache_prefix, sys.dont_write_bytecode = prefix, False
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


_cache_bytecode()


TEST_GC_THRESHOLD = 20_000
"""The youngest generation's collector threshold in the pytest process (Python's default is
700). A test run keeps thousands of test items, modules and module-scoped stores alive, and
every collection of the older generations walks all of them: with the default, 2,500
collections took 2.4 s of CPU over ``tests/ledger`` and ``tests/projections``; at 20,000, 370
took 1.0 s. Cyclic garbage is still collected. Kept below the product's own
``PASS_THRESHOLD`` (50,000), so ``pass_collector`` still raises it during a pass as it does in
production (tests/ledger/test_collector.py sets the defaults it asserts)."""
gc.set_threshold(TEST_GC_THRESHOLD, 50, 100)


WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")
"""This pytest-xdist worker's name (``gw0``, ``gw1`` …; ``main`` without xdist), in the names
of the PostgreSQL schemas the fixtures make, so that parallel workers never share one."""
PG_BASE = os.environ.get("LEDGER_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
DEV_EXAMPLES, CI_EXAMPLES = 5, 100
"""Hypothesis examples per property: the developer's tier (a smoke run of each property), and a
full run (its default)."""
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
    parser.addoption(
        "--cpu-report",
        metavar="FILE",
        default=None,
        help="write each test's CPU seconds (this process and its subprocesses) to FILE, slowest first"
        " (FILE.gw0, FILE.gw1 … under pytest-xdist)",
    )


def _cpu_seconds() -> float:
    """User + system CPU of this process and of its finished subprocesses."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


_CPU: dict[str, float] = {}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Under ``--cpu-report``: the CPU each test costs, set-up and tear-down included."""
    if not item.config.getoption("cpu_report"):
        return (yield)
    start = _cpu_seconds()
    try:
        return (yield)
    finally:
        _CPU[item.nodeid] = _cpu_seconds() - start


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Write the ``--cpu-report`` file: total, then per module, then per test, slowest first."""
    target = session.config.getoption("cpu_report")
    if not target or not _CPU:
        return
    modules: dict[str, float] = {}
    for nodeid, seconds in _CPU.items():
        modules[nodeid.split("::")[0]] = modules.get(nodeid.split("::")[0], 0.0) + seconds
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    path = Path(f"{target}.{worker}" if worker else target)
    lines = [f"total {_cpu_seconds():.1f} s CPU (tests {sum(_CPU.values()):.1f} s)", "", "per module:"]
    lines += [f"{v:8.2f} {k}" for k, v in sorted(modules.items(), key=lambda kv: -kv[1])]
    lines += ["", "per test:"] + [f"{v:8.2f} {k}" for k, v in sorted(_CPU.items(), key=lambda kv: -kv[1])]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Iterator[list[pytest.Collector]]:
    """The test modules are not searched for doctests (they hold none; ``--doctest-modules``
    is for the product's packages): without this each one was collected a second time, as a
    doctest module, and every object in it inspected, about 0.5 s of CPU per pytest process."""
    from _pytest.doctest import DoctestModule

    collected = yield
    return [node for node in collected if not isinstance(node, DoctestModule)]


def full_run(config: pytest.Config) -> bool:
    """Whether this run includes the slow tier (``--all``, ``-m …`` or ``CI=true``)."""
    return bool(config.getoption("all_tiers") or config.option.markexpr or os.environ.get("CI") == "true")


def deselect_covered(
    config: pytest.Config, items: list[pytest.Item], covering: Callable[[str], str | None]
) -> None:
    """In a run that includes the slow tier, leave out each item whose whole case another
    collected item runs: ``covering(nodeid)`` names that item (``None`` or the same id: none)."""
    if not full_run(config):
        return
    ids = {item.nodeid for item in items}
    covered = [
        item for item in items if (by := covering(item.nodeid)) not in (None, item.nodeid) and by in ids
    ]
    if covered:
        config.hook.pytest_deselected(items=covered)
        items[:] = [item for item in items if item not in covered]


def pytest_configure(config: pytest.Config) -> None:
    """Hypothesis: ``dev`` (few examples) for the developer's tier, ``ci`` (many) for a full run."""
    settings.register_profile("dev", max_examples=DEV_EXAMPLES, deadline=None)
    settings.register_profile("ci", max_examples=CI_EXAMPLES, deadline=None)
    settings.load_profile("ci" if full_run(config) else "dev")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the PostgreSQL case of each ``slow_postgres`` test ``slow`` (before ``-m`` selects),
    then leave the ``slow`` tier out unless asked for (``--all``, ``-m …`` or ``CI=true``); a
    full run starts with the modules that hold slow tests."""
    marks = {item: {mark.name for mark in item.iter_markers()} for item in items}  # read once
    for item, names in marks.items():
        if "slow_postgres" in names and _postgres_case(item):
            item.add_marker(pytest.mark.slow)
            names.add("slow")
    if "instructions" not in (config.option.markexpr or ""):
        counted = [item for item in items if "instructions" in marks[item]]
        if counted:
            config.hook.pytest_deselected(items=counted)
            items[:] = [item for item in items if "instructions" not in marks[item]]
    if full_run(config):
        items[:] = _heavy_modules_first(items, {item for item in items if "slow" in marks[item]})
        return
    slow = [item for item in items if "slow" in marks[item]]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if "slow" not in marks[item]]


def _heavy_modules_first(items: list[pytest.Item], slow: set[pytest.Item]) -> list[pytest.Item]:
    """The test modules that hold a ``slow`` test first, each kept whole and in its own order,
    then the others: on several pytest-xdist workers (``--dist loadscope``, which hands each
    module whole to one worker) the long modules start early and the short ones fill in behind
    them, instead of one long module running alone at the end."""
    heavy = {item.nodeid.split("::")[0] for item in slow}
    return sorted(items, key=lambda item: item.nodeid.split("::")[0] not in heavy)


def _postgres_case(item: pytest.Item) -> bool:
    """Whether ``item`` is the PostgreSQL case of its test (of a test marked ``slow_postgres``,
    that case is slow; its SQLite case stays in the developer's tier)."""
    params = getattr(item, "callspec", None)
    return params is not None and "postgres" in params.params.values()


def tiered(values: Iterable[object], keep: int) -> list[object]:
    """Parameters of which the first ``keep`` run in the developer's tier and the rest only in
    the slow one (for a property checked over many seeds or sizes: a few by default, all in CI);
    a tuple is the values of several parameter names."""
    return [
        value
        if n < keep
        else pytest.param(*(value if isinstance(value, tuple) else (value,)), marks=pytest.mark.slow)
        for n, value in enumerate(values)
    ]


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
    schema = f"t_{WORKER}_{uuid.uuid4().hex[:12]}"
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
