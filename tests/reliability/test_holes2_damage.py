"""Issue 26, hole 9: a damaged store is exit 3 (integrity) or 2 (cannot read), one line, for
every command — never "internal error, a bug" (exit 4).

Two kinds of damage, each on its own copy of one sealed SQLite store (built once):

- a row that is not a ledger row: its aggregate id is not a UUID (the file's owner inserted it;
  PostgreSQL's ``uuid`` column refuses such a row outright);
- a damaged page: 3,000 bytes in the middle of the file overwritten.

``verify --segment``, ``seal``, ``replay``, ``stats`` and ``commission`` ended in exit 4 on one
or the other; plain ``verify`` said 3. Now each says 3 (or 2) in one line.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app as cli_app
from ledger.domain.errors import StoreDamaged, damage_in
from tests.conftest import EXAMPLES

runner = CliRunner()
COMMANDS = {
    "verify": ["verify"],
    "verify --segment": ["verify", "--segment", "0..head"],
    "seal": ["seal", "--key", "{key}"],
    "replay": ["replay", "SP9-01/000001"],
    "stats": ["stats"],
    "commission": ["commission"],
    "recall": ["recall", "--table", "SP9-01"],
    "projections update": ["projections", "update"],
}


@pytest.fixture(scope="module")
def sealed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(store, key): the SP9 and 3CB example feeds, sealed once (checkpoint 1)."""
    folder = tmp_path_factory.mktemp("damage")
    store, key = folder / "clean.db", folder / "seal.pem"
    db = f"sqlite:///{store}"
    for args in (
        ["ingest", str(EXAMPLES / "sp9.jsonl"), str(EXAMPLES / "3cb.jsonl"), "--db", db],
        ["keygen", "--out", str(key)],
        ["seal", "--key", str(key), "--db", db],
    ):
        result = runner.invoke(cli_app, args)
        assert result.exit_code == 0, (args, result.output)
    yield store, key


def _not_a_uuid(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO stored_events SELECT 'not-a-uuid', 1, topic, state "
            "FROM stored_events ORDER BY rowid LIMIT 1"
        )


def _damaged_page(path: Path) -> None:
    """A leaf page of the events table in the middle of the file, overwritten (the middle of the
    file alone may fall in another table, e.g. the seal index, that these commands never read)."""
    with sqlite3.connect(path) as conn:
        size, pages = (
            conn.execute("PRAGMA page_size").fetchone()[0],
            [
                n
                for (n,) in conn.execute(
                    "SELECT pageno FROM dbstat WHERE name = 'stored_events' AND pagetype = 'leaf'"
                )
            ],
        )
    with open(path, "r+b") as raw:
        raw.seek((sorted(pages)[len(pages) // 2] - 1) * size)
        raw.write(b"\xff" * 3000)


DAMAGE = {"not a UUID": _not_a_uuid, "damaged page": _damaged_page}


@pytest.fixture(scope="module", params=list(DAMAGE))
def damaged(
    request: pytest.FixtureRequest, sealed: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path, str]:
    """(URL, key, kind) of a damaged copy of the sealed store."""
    store, key = sealed
    copy = tmp_path_factory.mktemp("copy") / "damaged.db"
    shutil.copyfile(store, copy)
    DAMAGE[request.param](copy)
    return f"sqlite:///{copy}", key, request.param


@pytest.mark.parametrize("command", list(COMMANDS))
def test_damage_is_exit_3_or_2_in_one_line(damaged: tuple[str, Path, str], command: str) -> None:
    db, key, kind = damaged
    args = [a.replace("{key}", str(key)) for a in COMMANDS[command]]
    result = runner.invoke(cli_app, [*args, "--db", db])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "internal error" not in result.output and "Traceback" not in result.output
    if kind == "not a UUID" and command not in ("verify", "verify --segment", "seal"):
        # read commands read rounds by their ids: a row outside every round is not theirs
        assert result.exit_code in (0, 3), result.output
        return
    assert result.exit_code in (2, 3), (command, result.output)
    if command != "verify":  # verify prints its report; the others one error line
        lines = [ln for ln in result.output.splitlines() if ln.startswith(("error:", "integrity broken:"))]
        assert len(lines) == 1, result.output


def test_damage_is_exit_3_with_json_too(damaged: tuple[str, Path, str]) -> None:
    db, _, _ = damaged
    result = runner.invoke(cli_app, ["verify", "--segment", "0..head", "--db", db, "--json"])
    assert result.exit_code == 3, result.output
    assert '"exit_code": 3' in result.stdout


def test_the_drivers_own_words_for_damage_are_recognised() -> None:
    """SQLite's bare ``DatabaseError`` (and the library's wrapper of it) and PostgreSQL's
    SQLSTATE class XX are damage; a locked or missing file (``OperationalError``) is not."""
    from eventsourcing.persistence import DatabaseError, OperationalError

    try:
        try:
            raise sqlite3.DatabaseError("database disk image is malformed")
        except sqlite3.DatabaseError as inner:
            raise DatabaseError(inner) from inner
    except DatabaseError as wrapped:
        assert isinstance(damage_in(wrapped), StoreDamaged)
    assert damage_in(OperationalError("database is locked")) is None
    assert damage_in(sqlite3.OperationalError("unable to open database file")) is None
    assert damage_in(ValueError("a bug")) is None
    import psycopg

    assert isinstance(damage_in(psycopg.errors.DataCorrupted("x")), StoreDamaged)
