"""Append-only at the database level: ``ledger init`` makes UPDATE, DELETE and TRUNCATE fail.

PostgreSQL: an ingest role that cannot change a stored event, yet ingests and verifies; an
auditor role that can only read. SQLite: triggers that the file's owner could drop — then the
chain detects the change, as the last test shows.
"""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from typer.testing import CliRunner

from cli.main import app as cli_app
from ledger.services.db_admin import append_only_sql, events_table
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import open_ledger
from ledger.verify.engine import verify_store

runner = CliRunner()


def _ingest(app, feed: Path) -> None:
    with open(feed, encoding="utf-8") as stream:
        assert Ingestor(app, batch_events=40).ingest(numbered_lines(stream)).rejected == []


def test_sqlite_init_refuses_update_and_delete_and_ingest_still_works(tmp_path: Path, examples: Path) -> None:
    path = tmp_path / "l.db"
    db = f"sqlite:///{path}"
    result = runner.invoke(cli_app, ["init", "--db", db])
    assert result.exit_code == 0, result.output
    assert runner.invoke(cli_app, ["ingest", str(examples / "rl.jsonl"), "--db", db]).exit_code == 0
    with sqlite3.connect(path) as conn:
        with pytest.raises(sqlite3.IntegrityError, match="append-only: UPDATE refused"):
            conn.execute("UPDATE stored_events SET state = x'00'")
        with pytest.raises(sqlite3.IntegrityError, match="append-only: DELETE refused"):
            conn.execute("DELETE FROM stored_events")
    assert runner.invoke(cli_app, ["verify", "--db", db]).exit_code == 0
    # The file's owner can drop the triggers; the chain then catches the change (exit 3).
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TRIGGER ledger_no_update")
        conn.execute(
            'UPDATE stored_events SET state = replace(state, \'"amount":"100"\', '
            '\'"amount":"900"\') WHERE rowid = (SELECT min(rowid) FROM stored_events '
            'WHERE instr(state, \'"amount":"100"\') > 0)'
        )
        assert conn.total_changes == 1
    assert runner.invoke(cli_app, ["verify", "--db", db]).exit_code == 3


def test_init_prints_its_sql_for_an_operator(tmp_path: Path) -> None:
    result = runner.invoke(cli_app, ["init", "--db", f"sqlite:///{tmp_path / 'l.db'}", "--print-sql"])
    assert result.exit_code == 0
    # the events table's update, delete and positive-id triggers, the checkpoints' two, the seal
    # index's two, and two for each of the Merkle log's four tables
    assert result.stdout.count("CREATE TRIGGER") == 15
    assert 'CREATE TABLE IF NOT EXISTS "ledger_seal_index"' in result.stdout
    assert (
        runner.invoke(cli_app, ["init", "--db", f"sqlite:///{tmp_path / 'l.db'}", "--roles"]).exit_code == 2
    )
    with sqlite3.connect(tmp_path / "l.db") as conn:  # nothing but the events table yet
        assert _tables(conn) == {"stored_events"}
        conn.executescript(result.stdout)  # what the operator runs
        assert _tables(conn) == {
            "stored_events",
            "ledger_checkpoints",
            "ledger_seal_index",
            "ledger_view_rows",
            "ledger_view_tracking",
            "ledger_merkle_tree",
            "ledger_log_origin",
            "ledger_tree_heads",
            "ledger_tree_cosignatures",
        }
        conn.execute("INSERT INTO ledger_checkpoints VALUES (1, 1, 1, 1, 'h', 'd', 't', 'c', x'')")
        with pytest.raises(sqlite3.IntegrityError, match="append-only: UPDATE refused"):
            conn.execute("UPDATE ledger_checkpoints SET head = 'x'")


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    }


def test_postgres_printed_sql_sets_up_what_init_does(db_url: str) -> None:
    """An owner who reviews `init --print-sql --roles` and runs it gets the tables and grants
    `init --roles` makes: the sealer can seal (insert a checkpoint), the auditor cannot,
    nobody can change one."""
    if db_url.startswith("sqlite"):
        pytest.skip("roles exist only on PostgreSQL (the SQLite case is the test above)")
    import psycopg

    schema = parse_qs(urlsplit(db_url).query)["schema"][0]
    prefix = f"lp_{uuid.uuid4().hex[:8]}"
    auditor, sealer = f"{prefix}_auditor", f"{prefix}_sealer"
    try:
        result = runner.invoke(
            cli_app, ["init", "--db", db_url, "--print-sql", "--roles", "--role-prefix", prefix]
        )
        assert result.exit_code == 0, result.output
        with _psql(db_url) as conn:
            for statement in result.stdout.split(";\n"):
                if statement.strip():
                    conn.execute(statement)
        row = "(1, 1, 1, 1, 'h', 'd', 't', 'c', '')"
        with _psql(db_url, auditor) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(f"INSERT INTO {schema}.ledger_checkpoints VALUES {row}")
        with _psql(db_url, sealer) as conn:
            conn.execute(f"INSERT INTO {schema}.ledger_checkpoints VALUES {row}")
            assert conn.execute(f"SELECT count(*) FROM {schema}.ledger_view_rows").fetchone()
        with _psql(db_url) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
            conn.execute(f"UPDATE {schema}.ledger_checkpoints SET head = 'x'")
    finally:
        with _psql(db_url) as conn:
            for role in (f"{prefix}_ingest", auditor, sealer):
                if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                    conn.execute(f'DROP OWNED BY "{role}"')
                    conn.execute(f'DROP ROLE "{role}"')


def _psql(url: str, user: str | None = None):
    import psycopg

    base = url.split("?")[0]
    if user is not None:
        parts = urlsplit(base)
        base = parts._replace(netloc=f"{user}@{parts.hostname}:{parts.port or 5432}").geturl()
    return psycopg.connect(base, autocommit=True)


def test_postgres_roles_ingest_and_audit_but_never_change_an_event(db_url: str, examples: Path) -> None:
    if db_url.startswith("sqlite"):
        pytest.skip("roles exist only on PostgreSQL (the SQLite case is the test above)")
    import psycopg

    db = db_url
    schema = parse_qs(urlsplit(db).query)["schema"][0]
    ingest_role, auditor_role = f"li_{uuid.uuid4().hex[:8]}", f"la_{uuid.uuid4().hex[:8]}"
    sealer_role = f"ls_{uuid.uuid4().hex[:8]}"
    try:
        result = runner.invoke(
            cli_app,
            [
                "init",
                "--db",
                db,
                "--roles",
                "--ingest-role",
                ingest_role,
                "--auditor-role",
                auditor_role,
                "--sealer-role",
                sealer_role,
            ],
        )
        assert result.exit_code == 0, result.output

        def as_role(role: str) -> str:
            parts = urlsplit(db)
            return parts._replace(netloc=f"{role}@{parts.hostname}:{parts.port or 5432}").geturl()

        writer = open_ledger(as_role(ingest_role), extra_env={"CREATE_TABLE": "n"})
        try:
            _ingest(writer, examples / "rl.jsonl")
            assert verify_store(writer).exit_code == 0
        finally:
            writer.close()
        auditor = open_ledger(as_role(auditor_role), extra_env={"CREATE_TABLE": "n"})
        try:
            assert verify_store(auditor).exit_code == 0
            for _ in range(5):  # the server's own reason, every time (not "pipeline aborted")
                with pytest.raises(Exception, match="permission denied"):
                    _ingest(auditor, examples / "fpc.jsonl")
        finally:
            auditor.close()
        table = f"{schema}.ledger_events"
        with _psql(db, ingest_role) as conn:  # no UPDATE grant at all (only the owner meets
            # the trigger)
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied"):
                conn.execute(f"UPDATE {table} SET state = state")
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied"):
                conn.execute(f"DELETE FROM {table}")
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(f"TRUNCATE {table}")
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="owner"):
                conn.execute(f"ALTER TABLE {table} DISABLE TRIGGER ledger_append_only")
        with _psql(db) as conn:  # even the owner meets the trigger (it must drop it first)
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only: DELETE"):
                conn.execute(f"DELETE FROM {table}")
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only: TRUNCATE"):
                conn.execute(f"TRUNCATE {table}")
    finally:
        with _psql(db) as conn:
            for role in (ingest_role, auditor_role, sealer_role):
                if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                    conn.execute(f'DROP OWNED BY "{role}"')
                    conn.execute(f'DROP ROLE "{role}"')


def test_the_tamper_fixture_still_works_because_triggers_come_only_from_init(app, raw) -> None:
    assert raw.rows() == []
    where = events_table(app)
    assert any("BEFORE UPDATE" in s for s in append_only_sql(where))
    query = parse_qs(urlsplit(raw.url).query)
    assert raw.sqlite or "schema" in query
