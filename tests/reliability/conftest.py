"""Shared helpers of the reliability and security tests: the CLI in a subprocess (``cli``,
``run_cli``) or in this process (``run_in_process``, for modules that override ``cli`` with it:
the same arguments and result, without a second of imports per call), keys, stores."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import LedgerApp

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from cli.main import main; main()"]
"""The ``ledger`` command as a subprocess of this interpreter (works in any virtualenv)."""


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a CLI subprocess: this checkout first on the path, no colours."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.update({"NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200"})
    env.update(extra or {})
    return env


def run_cli(
    args: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    stdin: bytes | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``ledger ARGS`` to completion in a subprocess."""
    return subprocess.run(
        [*CLI, *args],
        env=cli_env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        input=None if stdin is None else stdin.decode(),
        cwd=ROOT,
    )


def run_in_process(
    args: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    stdin: bytes | None = None,
) -> subprocess.CompletedProcess[str]:
    """``ledger ARGS`` through typer's test runner in this process, as :func:`run_cli` runs it
    in a subprocess: same environment additions, working folder and standard input, and a
    ``CompletedProcess`` back (``timeout`` is not enforced). An exception the command lets
    through is raised here."""
    from typer.testing import CliRunner

    from cli.main import app

    extra = {"NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200", **(env or {})}
    with contextlib.chdir(ROOT):
        done = CliRunner().invoke(app, list(args), env=extra, input=None if stdin is None else stdin.decode())
    if done.exception is not None and not isinstance(done.exception, SystemExit):
        raise done.exception
    return subprocess.CompletedProcess([*CLI, *args], done.exit_code, done.stdout, done.stderr)


def fill(app: LedgerApp, *feeds: Path, batch_events: int = 40) -> None:
    """Ingest clean feeds in small batches (many chain links)."""
    for feed in feeds:
        with open(feed, encoding="utf-8") as stream:
            report = Ingestor(app, batch_events=batch_events).ingest(numbered_lines(stream))
        assert report.rejected == []


@pytest.fixture
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """``run_cli`` as a fixture."""
    return run_cli


@pytest.fixture
def cli_in_process() -> Callable[..., subprocess.CompletedProcess[str]]:
    """``run_in_process`` as a fixture (a module whose tests need no real process overrides
    ``cli`` with it)."""
    return run_in_process


DRIVER = """
import os, signal, sys
from ledger.services.ingest import Ingestor, bounded_lines
from ledger.storage.store import open_ledger

db, feed, kill_at, phase, batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
per_commit = int(sys.argv[6]) if len(sys.argv) > 6 else None
app = open_ledger(db)
recorder = app.recorder
saves = 0
outer, inner = recorder.insert_events, recorder._insert_events

def die(where):
    if saves == kill_at and phase == where:
        os.kill(os.getpid(), signal.SIGKILL)

def insert_events(*args, **kwargs):
    global saves
    saves += 1
    die("before")
    result = outer(*args, **kwargs)
    die("after")           # committed, not yet returned
    return result

def insert_inside(*args, **kwargs):
    result = inner(*args, **kwargs)
    die("inside")          # rows written in the open transaction, not committed
    return result

def lines(stream):
    for number, text in bounded_lines(stream):
        if phase == "line" and number == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        yield number, text

recorder.insert_events, recorder._insert_events = insert_events, insert_inside
with open(feed, "rb") as stream:
    report = Ingestor(app, batch_events=batch, saves_per_commit=per_commit).ingest(lines(stream))
app.close()
print(report.saves, report.stored, report.duplicates, len(report.rejected), report.retries)
sys.exit(1 if report.rejected else 0)
"""
"""An ingest that SIGKILLs itself at transaction number ``kill_at`` (0: never), ``phase`` = before
the transaction, inside it before commit, or after commit (or, ``phase`` = ``line``, as it reads
line number ``kill_at``); an optional sixth argument sets the
saves per transaction (the store's default otherwise: ten on SQLite, one on PostgreSQL)."""


def driver_cmd(
    db: str,
    feed: Path,
    kill_at: int = 0,
    phase: str = "before",
    batch: int = 50,
    per_commit: int | None = None,
) -> list[str]:
    """The command line of :data:`DRIVER`."""
    extra = [] if per_commit is None else [str(per_commit)]
    return [sys.executable, "-c", DRIVER, db, str(feed), str(kill_at), phase, str(batch), *extra]


def feed_rounds(feed: Path) -> dict[tuple[str, str], list[dict[str, object]]]:
    """The feed's events by round, in seq order, as the ledger compares them (feed fields)."""
    from ledger.codec.parse import Rejection, parse_line

    rounds: dict[tuple[str, str], list[dict[str, object]]] = {}
    with open(feed, "rb") as stream:
        for number, line in enumerate(stream, start=1):
            event = parse_line(line.rstrip(b"\n"), number)
            assert not isinstance(event, Rejection), event
            rounds.setdefault((event.table, event.round), []).append(event.feed_fields())
    return rounds


def stored_rounds(app: LedgerApp, keys: object) -> dict[tuple[str, str], list[dict[str, object]]]:
    """The stored feed events of the given rounds, in version order (absent rounds left out)."""
    from ledger.domain.round import round_id

    out: dict[tuple[str, str], list[dict[str, object]]] = {}
    for table, round in keys:  # type: ignore[attr-defined]
        stored = app.stored(round_id(table, round))
        assert [r.originator_version for r in stored] == list(range(1, len(stored) + 1))
        if stored:
            out[(table, round)] = [r.fact.feed_fields() for r in stored]  # type: ignore[attr-defined]
    return out


def assert_prefix_of_feed(app: LedgerApp, feed: dict[tuple[str, str], list[dict[str, object]]]) -> int:
    """Every stored round is a prefix of its feed lines, and the chain verifies; returns how
    many feed events are stored."""
    from ledger.domain.table import table_id
    from ledger.verify.engine import verify_store

    stored = stored_rounds(app, feed)
    for key, events in stored.items():
        assert events == feed[key][: len(events)], key
    tables = {t for t, _ in feed}
    for table in tables:
        started = [r.fact.round for r in app.stored(table_id(table))]  # type: ignore[attr-defined]
        assert sorted(started) == sorted(r for t, r in stored if t == table)
        assert len(started) == len(set(started))
    report = verify_store(app)
    assert report.integrity_ok, [f.message for f in report.findings][:3]
    return sum(len(v) for v in stored.values())


def assert_exactly_the_feed(app: LedgerApp, feed: dict[tuple[str, str], list[dict[str, object]]]) -> None:
    """Every feed line stored exactly once, nothing else, and verify finds nothing."""
    from ledger.verify.engine import verify_store

    assert stored_rounds(app, feed) == feed
    report = verify_store(app)
    assert report.exit_code == 0, [f.to_json() for f in report.findings][:3]
    assert report.rounds_checked == len(feed)


class Harness:
    """The helpers above, for test modules (which cannot import a conftest)."""

    cli_cmd = staticmethod(lambda *args: [*CLI, *args])
    cli_env = staticmethod(cli_env)
    run_cli = staticmethod(run_cli)
    run_in_process = staticmethod(run_in_process)
    driver_cmd = staticmethod(driver_cmd)
    feed_rounds = staticmethod(feed_rounds)
    assert_prefix_of_feed = staticmethod(assert_prefix_of_feed)
    assert_exactly_the_feed = staticmethod(assert_exactly_the_feed)


@pytest.fixture
def harness() -> type[Harness]:
    """Subprocess commands and store checks of the crash and concurrency tests."""
    return Harness
