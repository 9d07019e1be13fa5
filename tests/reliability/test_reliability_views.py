"""Views at rest and views edited by hand.

- With ``LEDGER_CIPHER_KEY`` the view tables hold no player id, table, amount or row field name
  in clear: not in the SQLite file, not in ``pg_dump``. A wrong or missing key ends every
  finance command with one line and exit 2, never a traceback.
- A view whose tracking position was set back by hand (which would fold rounds a second time)
  is refused by every command that reads it: one clear line, non-zero exit, nothing summed.
  ``verify --projections`` reports it as ``projection_mismatch`` (exit 1).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from eventsourcing.cryptography import AESCipher

from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import open_ledger


@pytest.fixture
def cli(cli_in_process):
    """``ledger`` in this process (tests/reliability/conftest.py): these tests check what the
    commands print and exit with, not the process."""
    return cli_in_process


FEEDS = ("rl.jsonl", "3cb.jsonl", "sp9.jsonl", "stud.jsonl")


def _marked(examples: Path) -> tuple[list[str], set[bytes]]:
    """The example feeds with every player id made long and unique (so a find is no chance
    match), and the byte strings that must not appear in clear."""
    lines: list[str] = []
    secrets: set[bytes] = {b'"player"', b'"recorded"', b'"due"', b'"currency"', b'"rounds"'}
    for name in FEEDS:
        for text in (examples / name).read_text(encoding="utf-8").splitlines():
            if not text:
                continue
            obj = json.loads(text)
            if "player" in obj:
                obj["player"] = f"Qz{obj['player']}Sec"
                secrets.add(obj["player"].encode())
            secrets.add(obj["table"].encode())
            lines.append(json.dumps(obj))
    return lines, secrets


def _fill(db_url: str, lines: list[str]) -> None:
    app = open_ledger(db_url)
    try:
        assert Ingestor(app, batch_events=40).ingest(numbered_lines(lines)).rejected == []
    finally:
        app.close()


def _at_rest(db_url: str) -> bytes:
    """Everything the database holds at rest: the SQLite file (and its WAL), or ``pg_dump`` of
    the schema."""
    if db_url.startswith("sqlite"):
        path = Path(db_url[len("sqlite:///") :])
        return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())
    if shutil.which("pg_dump") is None:
        pytest.skip("pg_dump is not installed")
    schema = parse_qs(urlsplit(db_url).query)["schema"][0]
    parts = urlsplit(db_url.split("?")[0])
    return subprocess.run(
        [
            "pg_dump",
            "-h",
            parts.hostname or "127.0.0.1",
            "-p",
            str(parts.port or 5432),
            "-U",
            parts.username or "postgres",
            "-n",
            schema,
            parts.path.lstrip("/"),
        ],
        capture_output=True,
        check=True,
        timeout=120,
    ).stdout


FINANCE = [["projections", "update"], ["commission", "--json"], ["jackpot"], ["bank"]]


def test_view_rows_hold_nothing_in_clear_under_the_cipher_key(db_url: str, examples: Path, cli) -> None:
    key = AESCipher.create_key(32)
    lines, secrets = _marked(examples)
    env = {"LEDGER_CIPHER_KEY": key}
    assert cli(["init", "--db", db_url]).returncode == 0  # an empty ledger: no figures yet
    plain = cli(["commission", "--json", "--db", db_url])
    assert plain.returncode == 0
    import os

    os.environ["LEDGER_CIPHER_KEY"] = key
    try:
        _fill(db_url, lines)
    finally:
        del os.environ["LEDGER_CIPHER_KEY"]
    for args in FINANCE:
        done = cli([*args, "--db", db_url], env=env)
        assert done.returncode == 0, (args, done.stderr[-1500:])
    commission = json.loads(cli(["commission", "--json", "--db", db_url], env=env).stdout)
    assert commission != json.loads(plain.stdout)  # there are figures, read back decrypted
    assert cli(["verify", "--projections", "--db", db_url], env=env).returncode == 0
    dump = _at_rest(db_url)
    assert b"ledger_view_rows" in dump or db_url.startswith("sqlite")
    leaks = sorted(s.decode() for s in secrets if s in dump)
    assert leaks == []


@pytest.mark.slow_postgres
@pytest.mark.parametrize("variant", ["missing", "wrong"])
def test_a_missing_or_wrong_key_is_one_line_and_exit_2(
    db_url: str, examples: Path, cli, variant: str
) -> None:
    key = AESCipher.create_key(32)
    lines, _ = _marked(examples)
    import os

    os.environ["LEDGER_CIPHER_KEY"] = key
    try:
        _fill(db_url, lines)
    finally:
        del os.environ["LEDGER_CIPHER_KEY"]
    assert cli(["projections", "update", "--db", db_url], env={"LEDGER_CIPHER_KEY": key}).returncode == 0
    env = {} if variant == "missing" else {"LEDGER_CIPHER_KEY": AESCipher.create_key(32)}
    for args in [
        *FINANCE,
        ["projections", "status"],
        ["replay", "RL-01/000001"],
        ["report", "--day", "2026-11-20", "--json"],
    ]:
        done = cli([*args, "--db", db_url], env=env)
        assert done.returncode in (2, 3), (args, done.returncode, done.stdout[-500:])
        assert "Traceback" not in done.stderr, (args, done.stderr[-1500:])
        assert len(done.stderr.strip().splitlines()) == 1, (args, done.stderr)
    assert cli(["verify", "--db", db_url], env=env).returncode == 3


def _set_back(db_url: str) -> None:
    if db_url.startswith("sqlite"):
        import sqlite3

        with sqlite3.connect(db_url[len("sqlite:///") :]) as conn:
            conn.execute("UPDATE ledger_view_tracking SET position = position / 2")
        return
    import psycopg

    schema = parse_qs(urlsplit(db_url).query)["schema"][0]
    with psycopg.connect(db_url.split("?")[0], autocommit=True) as conn:
        conn.execute(f'UPDATE "{schema}".ledger_view_tracking SET position = position / 2')


@pytest.mark.slow_postgres
def test_a_tracking_position_set_back_is_refused_by_every_reader(
    db_url: str, examples: Path, cli, tmp_path: Path
) -> None:
    lines, _ = _marked(examples)
    _fill(db_url, lines)
    assert cli(["projections", "update", "--db", db_url]).returncode == 0  # views stored
    assert cli(["commission", "--json", "--db", db_url]).returncode == 0
    _set_back(db_url)
    for args in [*FINANCE, ["projections", "status"], ["export", "--out", str(tmp_path / "x")]]:
        done = cli([*args, "--db", db_url])
        assert done.returncode != 0, (args, done.stdout[-800:])
        assert "edited" in done.stderr and "Traceback" not in done.stderr, (args, done.stderr)
    verify = cli(["verify", "--projections", "--json", "--db", db_url])
    assert verify.returncode == 1
    codes = {f["code"] for f in json.loads(verify.stdout)["findings"]}
    assert codes == {"projection_mismatch"}


def test_a_consistent_rollback_is_left_to_verify_projections(db_url: str, examples: Path, cli) -> None:
    """The documented gap: without the cipher key, the DBA can set the tracking record and the
    written-position row back together; the readers then cannot tell, verify still can."""
    lines, _ = _marked(examples)
    _fill(db_url, lines)
    assert cli(["projections", "update", "--db", db_url]).returncode == 0
    statements = [
        "UPDATE {t} SET position = position / 2",
        "UPDATE {r} SET row = '{{\"position\": ' || CAST((SELECT position FROM {t} "
        "WHERE {t}.view = {r}.view) AS TEXT) || ', \"version\": ' || CAST((SELECT "
        "version FROM {t} WHERE {t}.view = {r}.view) AS TEXT) || '}}' "
        "WHERE key = '~written'",
    ]
    if db_url.startswith("sqlite"):
        import sqlite3

        with sqlite3.connect(db_url[len("sqlite:///") :]) as conn:
            for sql in statements:
                conn.execute(sql.format(t="ledger_view_tracking", r="ledger_view_rows"))
    else:
        import psycopg

        schema = parse_qs(urlsplit(db_url).query)["schema"][0]
        with psycopg.connect(db_url.split("?")[0], autocommit=True) as conn:
            for sql in statements:
                conn.execute(
                    sql.format(t=f'"{schema}".ledger_view_tracking', r=f'"{schema}".ledger_view_rows')
                )
    verify = cli(["verify", "--projections", "--json", "--db", db_url])
    assert verify.returncode == 1
    assert {f["code"] for f in json.loads(verify.stdout)["findings"]} == {"projection_mismatch"}
    assert cli(["projections", "status", "--db", db_url]).returncode == 0
