"""Roles end to end on PostgreSQL: after ``ledger init --roles``, ``ingest`` and ``projections
update`` run as the ingest role and every read command as the auditor role, through the
installed ``ledger``. Roles are global to the server: each test makes its own pair (a unique
``--role-prefix``) and drops them."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.postgres
PG_BASE = os.environ.get("LEDGER_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


def _as(role: str, schema: str) -> str:
    base = PG_BASE.split("?")[0]
    rest = base.split("://", 1)[1].split("@", 1)[-1]
    return f"postgresql://{role}@{rest}?schema={schema}"


def _drop(schema: str, *roles: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(PG_BASE.split("?")[0], autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
        for role in roles:
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
            if exists:
                conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
                conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


@pytest.fixture
def deployment(db_url: str, ledger_cli: Any) -> Iterator[tuple[str, str, str, str]]:
    """(owner URL, ingest URL, auditor URL, sealer URL) of a fresh store initialised with
    roles."""
    if not db_url.startswith("postgres"):
        pytest.skip("roles exist only on PostgreSQL")
    ledger = ledger_cli
    tag = uuid.uuid4().hex[:10]
    schema, prefix = f"t_{tag}", f"lt{tag}"
    owner = f"{PG_BASE.split('?')[0]}?schema={schema}"
    try:
        done = ledger("init", "--roles", "--role-prefix", prefix, "--db", owner)
        assert done.code == 0, done.stderr
        yield (
            owner,
            _as(f"{prefix}_ingest", schema),
            _as(f"{prefix}_auditor", schema),
            _as(f"{prefix}_sealer", schema),
        )
    finally:
        _drop(schema, f"{prefix}_ingest", f"{prefix}_auditor", f"{prefix}_sealer")


def test_each_command_runs_as_the_role_a_deployment_gives_it(
    deployment: tuple[str, str, str, str], examples: Path, tmp_path: Path, ledger_cli: Any
) -> None:
    ledger = ledger_cli
    _, ingest, auditor, sealer = deployment
    feeds = sorted(str(p) for p in examples.glob("*.jsonl"))
    done = ledger("ingest", *feeds, "--db", ingest, "--json")
    assert done.code == 0, done.stderr
    assert all(f["rejected"] == 0 for f in done.json()["files"])
    assert "Merkle tree was not extended" not in done.stderr  # the ingest role may extend it
    done = ledger("projections", "update", "--db", ingest)
    assert done.code == 0, done.stderr

    verify = ledger("verify", "--db", auditor, "--json")
    assert verify.code == 0, verify.stderr
    assert verify.json()["integrity"] == "ok" and verify.json()["rounds_checked"] > 0
    for args in (
        ["commission", "--json"],
        ["jackpot", "--json"],
        ["bank", "--json"],
        ["replay", "RL-01/000001", "--json"],
        ["recall", "--table", "RL-01", "--json"],
        ["report", "--day", "2026-11-20", "--json"],
        ["projections", "status", "--json"],
        ["export", "--out", str(tmp_path / "export"), "--format", "csv"],
    ):
        done = ledger(*args, "--db", auditor)
        assert done.code == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr

    key = tmp_path / "seal.pem"
    assert ledger("keygen", "--out", str(key)).code == 0
    done = ledger("seal", "--out", str(tmp_path / "cp.json"), "--key", str(key), "--db", sealer)
    assert done.code == 0, done.stderr
    assert "checkpoint note signed" in done.stdout  # the auditor stores the origin and the note
    done = ledger(
        "verify",
        "--checkpoint",
        str(tmp_path / "cp.json"),
        "--public-key",
        f"{key}.pub",
        "--db",
        auditor,
        "--json",
    )
    assert done.code == 0, done.stderr


def test_a_role_refused_a_write_gets_one_line_and_exit_2(
    deployment: tuple[str, str, str, str], examples: Path, ledger_cli: Any
) -> None:
    ledger = ledger_cli
    _, _, auditor, _ = deployment
    done = ledger("ingest", str(examples / "rl.jsonl"), "--db", auditor)
    assert done.code == 2
    assert "permission denied" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    done = ledger("projections", "update", "--db", auditor)
    assert done.code == 2 and "permission denied" in done.stderr


def test_the_sealer_seals_and_stores_checkpoints_that_nobody_can_change(
    deployment: tuple[str, str, str, str], examples: Path, tmp_path: Path, ledger_cli: Any
) -> None:
    """Checkpoints table (issue 15, issue 26 hole 3): the sealer INSERTs and SELECTs, the
    ingest and auditor roles only SELECT, none UPDATEs or DELETEs."""
    import psycopg

    ledger = ledger_cli
    _, ingest, auditor, sealer = deployment
    key = tmp_path / "seal.pem"
    assert ledger("keygen", "--out", str(key)).code == 0
    assert ledger("ingest", str(examples / "rl.jsonl"), "--db", ingest).code == 0
    done = ledger("seal", "--key", str(key), "--db", sealer)
    assert done.code == 0, done.stderr
    assert ledger("ingest", str(examples / "fpc.jsonl"), "--db", ingest).code == 0
    done = ledger("seal", "--key", str(key), "--db", sealer, "--json")
    assert done.code == 0 and done.json()["resumed_from"] == 1, done.stderr
    done = ledger("verify", "--since", "last", "--public-key", f"{key}.pub", "--db", ingest)
    assert done.code == 0, done.stderr
    assert ledger("ingest", str(examples / "3cb.jsonl"), "--db", ingest).code == 0
    for url in (ingest, auditor):
        done = ledger("seal", "--key", str(key), "--db", url)
        assert done.code == 2 and "permission denied" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    schema = auditor.split("schema=")[1]
    for url in (ingest, auditor, sealer):
        for statement in ("UPDATE {t} SET position = 1", "DELETE FROM {t}"):
            with (
                psycopg.connect(url.split("?")[0], autocommit=True) as conn,
                pytest.raises(psycopg.errors.InsufficientPrivilege),
            ):
                conn.execute(statement.format(t=f'"{schema}".ledger_checkpoints'))
