"""Issue 26, holes 3 and 8: who may write checkpoints, and who may lock the view rows.

Against a real PostgreSQL store made by ``ledger init --roles`` with roles of unique names
(dropped afterwards):

- hole 3: the auditor role could ``INSERT`` a checkpoint. Now only the sealer role (or the
  owner) may; the auditor and ingest roles read them.
- hole 8: the ingest role held a table-level ``UPDATE``/``DELETE`` on the view tables, so it
  could ``LOCK`` them ``IN ACCESS EXCLUSIVE MODE`` and stall every auditor's ``ledger
  commission``. Now its view writes are column-level grants (an upsert, ``SELECT … FOR
  UPDATE``) and a ``SECURITY DEFINER`` delete, and no lock mode above ``ROW EXCLUSIVE`` is
  open to it — while ``ingest``, ``projections update`` and ``projections rebuild --replace``
  still run under it.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from typer.testing import CliRunner

from cli.main import app as cli_app
from projections.sealed_rows import META_KEY
from tests.conftest import EXAMPLES, PG_BASE, require_postgres

pytestmark = pytest.mark.postgres
runner = CliRunner()
AS_WRITER = {"LEDGER_CREATE_TABLE": "n"}
VIEW_TABLES = ("ledger_view_rows", "ledger_view_tracking")
LOCK_MODES = ("ACCESS EXCLUSIVE", "EXCLUSIVE", "SHARE ROW EXCLUSIVE", "SHARE", "SHARE UPDATE EXCLUSIVE")
"""Every mode that blocks or waits for a writer; ROW EXCLUSIVE (what INSERT takes) blocks no
reader."""


@dataclass(frozen=True)
class Deployment:
    """A store made by ``init --roles``: its schema, owner URL and one URL per role."""

    schema: str
    owner: str
    ingest: str
    auditor: str
    sealer: str
    roles: tuple[str, str, str]


def _as(role: str, schema: str) -> str:
    parts = urlsplit(PG_BASE.split("?")[0])
    netloc = f"{role}@{parts.hostname}:{parts.port or 5432}"
    return parts._replace(netloc=netloc).geturl() + f"?schema={schema}"


def _connect(url: str):  # type: ignore[no-untyped-def]
    import psycopg

    return psycopg.connect(url.split("?")[0], autocommit=True)


def _run(*args: str, db: str) -> tuple[int, str]:
    result = runner.invoke(cli_app, [*args, "--db", db], env=None if args[0] == "init" else AS_WRITER)
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def deployment() -> Iterator[Deployment]:
    require_postgres()
    tag = uuid.uuid4().hex[:10]
    schema, prefix = f"t_{tag}", f"lh{tag}"
    roles = (f"{prefix}_ingest", f"{prefix}_auditor", f"{prefix}_sealer")
    owner = f"{PG_BASE.split('?')[0]}?schema={schema}"
    try:
        code, output = _run("init", "--roles", "--role-prefix", prefix, db=owner)
        assert code == 0, output
        d = Deployment(schema, owner, *(_as(r, schema) for r in roles), roles=roles)
        for feed in ("rl.jsonl", "sp9.jsonl"):
            code, output = _run("ingest", str(EXAMPLES / feed), db=d.ingest)
            assert code == 0, output
        code, output = _run("projections", "update", db=d.ingest)
        assert code == 0, output
        yield d
    finally:
        from psycopg import sql

        with _connect(PG_BASE) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
            for role in roles:
                if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                    conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
                    conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def _privilege(d: Deployment, role: str, table: str, what: str) -> bool:
    with _connect(d.owner) as conn:
        found = conn.execute(
            "SELECT has_table_privilege(%s, %s, %s)", (role, f'"{d.schema}".{table}', what)
        ).fetchone()
    return bool(found and found[0])


def test_only_the_sealer_stores_a_checkpoint_the_auditor_only_reads(
    deployment: Deployment, tmp_path: Path
) -> None:
    import psycopg

    d = deployment
    ingest, auditor, sealer = d.roles
    for table in ("ledger_checkpoints", "ledger_seal_index"):  # the index is written with each seal
        assert not _privilege(d, auditor, table, "INSERT")
        assert not _privilege(d, ingest, table, "INSERT")
        assert _privilege(d, sealer, table, "INSERT")
        for role in d.roles:
            assert _privilege(d, role, table, "SELECT")
            for what in ("UPDATE", "DELETE", "TRUNCATE"):
                assert not _privilege(d, role, table, what), (role, table, what)

    forged = "(99, 1, 1, 1, 'h', 'd', 't', 'c', '')"
    with _connect(d.auditor) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute(f'INSERT INTO "{d.schema}".ledger_checkpoints VALUES {forged}')

    key = tmp_path / "seal.pem"
    assert runner.invoke(cli_app, ["keygen", "--out", str(key)]).exit_code == 0
    code, output = _run("seal", "--key", str(key), db=d.auditor)
    assert code == 2 and "permission denied" in output, output
    code, output = _run("seal", "--key", str(key), db=d.sealer)
    assert code == 0, output
    code, output = _run("seal", "--list", "--json", db=d.auditor)
    assert code == 0 and '"number": 1' in output, output
    with _connect(d.auditor) as conn:  # the sealer wrote the checkpoint's seal index too
        (indexed,) = conn.execute(f'SELECT count(*) FROM "{d.schema}".ledger_seal_index').fetchone()
    assert indexed >= 1


def test_the_ingest_role_cannot_lock_the_view_tables_against_readers(deployment: Deployment) -> None:
    import psycopg

    d = deployment
    for table in VIEW_TABLES:
        for role in d.roles:
            for what in ("UPDATE", "DELETE", "TRUNCATE"):  # table-level: what LOCK looks at
                assert not _privilege(d, role, table, what), (role, table, what)
        for url in (d.ingest, d.auditor, d.sealer):
            with _connect(url) as conn:
                for mode in LOCK_MODES:
                    with pytest.raises(psycopg.errors.InsufficientPrivilege), conn.transaction():
                        conn.execute(f'LOCK TABLE "{d.schema}".{table} IN {mode} MODE')
        with _connect(d.ingest) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(f'DELETE FROM "{d.schema}".{table}')


def test_a_reader_runs_while_the_ingest_role_holds_view_rows(deployment: Deployment) -> None:
    """The most the ingest role can hold: row locks in an open transaction (an upsert and
    ``SELECT … FOR UPDATE``, exactly what ``projections update`` does). ``ledger commission``
    as the auditor still finishes at once (19.8 s behind an ACCESS EXCLUSIVE lock before)."""
    d = deployment
    release = threading.Event()
    held = threading.Event()

    def hold() -> None:
        with _connect(d.ingest) as conn, conn.transaction():
            conn.execute(f'SELECT * FROM "{d.schema}".ledger_view_tracking FOR UPDATE')
            conn.execute(f'UPDATE "{d.schema}".ledger_view_rows SET row = row')
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        started = time.monotonic()
        code, output = _run("commission", "--json", db=d.auditor)
        elapsed = time.monotonic() - started
    finally:
        release.set()
        holder.join()
    assert code == 0, output
    assert elapsed < 5, elapsed


def test_ingest_update_and_rebuild_still_run_as_the_ingest_role(deployment: Deployment) -> None:
    d = deployment
    code, output = _run("ingest", str(EXAMPLES / "3cb.jsonl"), db=d.ingest)
    assert code == 0, output
    code, output = _run("projections", "update", db=d.ingest)
    assert code == 0, output
    # rebuild writes a scratch view, compares, then deletes it: the deletes go through the
    # SECURITY DEFINER function, as a role without DELETE
    with _connect(d.auditor) as conn:
        live = {
            v
            for (v,) in conn.execute(
                f'SELECT DISTINCT view FROM "{d.schema}".ledger_view_tracking'
            ).fetchall()
        }
    code, output = _run("projections", "rebuild", "--replace", db=d.ingest)
    assert code == 0 and "rebuild equals incremental" in output, output
    with _connect(d.auditor) as conn:  # the scratch views are gone: deleted as the ingest role
        assert {
            v for (v,) in conn.execute(f'SELECT DISTINCT view FROM "{d.schema}".ledger_view_rows').fetchall()
        } == live
        assert {
            v
            for (v,) in conn.execute(
                f'SELECT DISTINCT view FROM "{d.schema}".ledger_view_tracking'
            ).fetchall()
        } == live
    code, output = _run("projections", "status", "--json", db=d.auditor)
    assert code == 0, output
    assert all(v["rounds_behind"] == 0 for v in json.loads(output)["views"]), output
    code, output = _run("ingest", str(EXAMPLES / "fpc.jsonl"), db=d.ingest)
    assert code == 0, output
    code, output = _run("projections", "update", db=d.auditor)  # the auditor writes nothing
    assert code == 2 and "permission denied" in output, output


def test_init_again_revokes_what_an_older_version_granted(deployment: Deployment) -> None:
    """An installation made before this change: the auditor could INSERT checkpoints and the
    ingest role UPDATE and DELETE the view tables. ``init --roles`` again takes both back."""
    d = deployment
    ingest, auditor, _ = d.roles
    with _connect(d.owner) as conn:
        conn.execute(f'GRANT SELECT, INSERT ON "{d.schema}".ledger_checkpoints TO "{auditor}"')
        for table in VIEW_TABLES:
            conn.execute(f'GRANT SELECT, INSERT, UPDATE, DELETE ON "{d.schema}".{table} TO "{ingest}"')
    assert _privilege(d, auditor, "ledger_checkpoints", "INSERT")
    assert _privilege(d, ingest, "ledger_view_rows", "DELETE")
    code, output = _run("init", "--roles", "--role-prefix", ingest.removesuffix("_ingest"), db=d.owner)
    assert code == 0, output
    assert not _privilege(d, auditor, "ledger_checkpoints", "INSERT")
    for table in VIEW_TABLES:
        for what in ("UPDATE", "DELETE"):
            assert not _privilege(d, ingest, table, what), (table, what)
    code, output = _run("projections", "update", db=d.ingest)  # the column grants are back
    assert code == 0, output


def test_a_view_row_the_ingest_role_rewrites_is_found_not_prevented(deployment: Deployment) -> None:
    """What its column grant still allows (SECURITY.md says so): the ingest role copies one
    stored row's text over another's; ``verify --projections`` as the auditor finds it, and
    ``projections rebuild --replace`` puts it right."""
    d = deployment
    rows = f'"{d.schema}".ledger_view_rows'
    with _connect(d.ingest) as conn:
        found = [
            r
            for r in conn.execute(f"SELECT view, key, row FROM {rows} WHERE view = 'commission' ORDER BY key")
            if not str(r[1]).startswith(META_KEY)
        ]
        assert len(found) > 3
        (view, key, _), (_, _, other) = found[-1], found[-2]
        conn.execute(f"UPDATE {rows} SET row = %s WHERE view = %s AND key = %s", (other, view, key))
    code, output = _run("verify", "--projections", db=d.auditor)
    assert code not in (0, 4), output
    code, output = _run("projections", "rebuild", "--replace", db=d.ingest)
    assert code in (0, 1), output
    code, output = _run("verify", "--projections", db=d.auditor)
    assert code == 0, output
