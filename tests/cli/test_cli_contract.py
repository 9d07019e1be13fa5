"""The operations contract, through the installed ``ledger``: every ``--json`` output has
``schema_version`` and validates against its schema in docs/schemas/ (on every exit path,
errors included); a missing store is exit 2 and nothing is created; exit codes mean one thing
each; read commands write nothing; the CLI conventions (``--version``, ``-h``, ``--db`` before
the command, ``LEDGER_DB``)."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.projections.finance_day import store_day

Store = tuple[str, Path]

DAY = "2026-11-20"
METERS = Path(__file__).resolve().parents[2] / "docs" / "examples" / "meters.csv"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, ledger_cli: Any) -> Store:
    """A SQLite store with a simulated feed of every game with injected errors (6 rounds a
    table: every command reads it, so its size is paid many times)."""
    ledger = ledger_cli
    folder = tmp_path_factory.mktemp("contract")
    db = f"sqlite:///{folder / 'l.db'}"
    feed = folder / "sim.jsonl"
    assert (
        ledger(
            "simulate",
            "--out",
            str(feed),
            "--rounds",
            "6",
            "--tables",
            "1",
            "--error-rate",
            "0.4",
            "--seed",
            "7",
        ).code
        == 0
    )
    done = ledger("ingest", str(feed), "--db", db)
    assert done.code == 0, done.stderr
    return db, folder


def _json_commands(folder: Path) -> list[tuple[str, list[str]]]:
    key = folder / "k.pem"
    return [
        ("verify", ["verify", "--json"]),
        ("verify", ["verify", "--json", "--table", "RL-01"]),
        ("replay", ["replay", "RL-01/000001", "--json"]),
        ("recall", ["recall", "--table", "RL-01", "--json"]),
        ("report-day", ["report", "--day", DAY, "--json"]),
        ("commission", ["commission", "--json"]),
        ("jackpot", ["jackpot", "--json", "--history"]),
        ("bank", ["bank", "--json"]),
        ("projections-status", ["projections", "status", "--json"]),
        ("export", ["export", "--out", str(folder / "export"), "--format", "csv", "--json", "--force"]),
        ("seal", ["seal", "--out", str(folder / "cp.json"), "--key", str(key), "--json"]),
        (
            "verify",
            ["verify", "--json", "--checkpoint", str(folder / "cp.json"), "--public-key", f"{key}.pub"],
        ),
    ]


def test_every_json_output_has_schema_version_and_matches_its_schema(
    store: Store, ledger_cli: Any, json_schema: Any
) -> None:
    db, folder = store
    assert ledger_cli("keygen", "--out", str(folder / "k.pem"), "--force").code == 0
    seen_findings = 0
    for schema, args in _json_commands(folder):
        done = ledger_cli(*args, "--db", db)
        assert done.code in (0, 1), (args, done.code, done.stderr)
        body = done.json()
        assert body["schema_version"] == 1
        json_schema(body, schema)
        if schema == "verify":
            seen_findings += len(body["findings"])
            for finding in body["findings"]:  # fixed keys: the same in every finding
                assert {"seq", "party", "seat", "bet", "table", "round"} <= set(finding)
    assert seen_findings > 0  # the simulated errors were checked against the schema too


def test_ingest_and_demo_json_match_their_schemas(
    tmp_path: Path, examples: Path, ledger_cli: Any, json_schema: Any
) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    one = ledger_cli("ingest", str(examples / "rl.jsonl"), "--db", db, "--json")
    json_schema(one.json(), "ingest")
    two = ledger_cli("ingest", str(examples / "rl.jsonl"), str(examples / "fpc.jsonl"), "--db", db, "--json")
    json_schema(two.json(), "ingest")
    demo = ledger_cli("demo", "--rounds", "6", "--tables", "1", "--json", "--keep", str(tmp_path / "demo"))
    json_schema(demo.json(), "demo")


def _simulated_store(ledger_cli: Any, folder: Path, *simulate: str) -> str:
    db = f"sqlite:///{folder / 'l.db'}"
    feed = folder / "feed.jsonl"
    made = ledger_cli(*simulate, "--out", str(feed))
    assert made.code == 0, made.stderr
    done = ledger_cli("ingest", str(feed), "--db", db)
    assert done.code == 0, done.stderr
    return db


@pytest.mark.slow
def test_stats_json_matches_its_schema_with_a_biased_table(
    tmp_path: Path, ledger_cli: Any, json_schema: Any
) -> None:
    db = _simulated_store(
        ledger_cli,
        tmp_path,
        "simulate",
        "--game",
        "RL,FPC,3CB",
        "--rounds",
        "120",
        "--tables",
        "2",
        "--seed",
        "5",
        "--error-rate",
        "0.05",
        "--bias",
        "RL-01:17=8",
    )
    done = ledger_cli("stats", "--json", "--db", db)
    assert done.code == 1, done.stderr  # the biased wheel is flagged
    body = done.json()
    json_schema(body, "stats")
    assert any(f["table"] == "RL-01" and "max_pocket" in f["tests"] for f in body["flagged"])
    runs = [e for e in body["tests"] if e["method"] == "runs"]
    fits = [e for e in body["tests"] if e["method"] == "chi_square"]
    assert runs and fits and any(t["money"] for t in body["tables"])
    assert all(e["observed"] is None and e["cells"] is None for e in runs)  # fixed keys
    assert all(len(e["observed"]) == len(e["cells"]) == len(e["expected"]) for e in fits)
    one_day = ledger_cli("stats", "--json", "--db", db, "--table", "RL-02", "--from", DAY, "--to", DAY)
    assert one_day.code == 0, one_day.stderr
    json_schema(one_day.json(), "stats")


@pytest.mark.slow  # (tests/projections/test_reconcile.py reads its JSON by default)
def test_reconcile_json_matches_its_schema(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, ledger_cli: Any, json_schema: Any
) -> None:
    db = f"sqlite:///{tmp_path / 'day.db'}"  # the day docs/examples/meters.csv was written against
    store_day(db, tmp_path_factory)
    done = ledger_cli("reconcile", str(METERS), "--json", "--db", db)
    assert done.code == 1, done.stderr  # the planted variances
    body = done.json()
    json_schema(body, "reconcile")
    assert {line["status"] for line in body["lines"]} == {"matched", "variance", "unknown"}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("what,where,when,amount,currency\nhold,RL-01,2026-11-20,x,HKD\n", "line 2, field 'amount'"),
        ("what,where,when,amount,currency\n", "no meter line"),
        (None, "cannot read"),
    ],
)
def test_reconcile_errors_are_one_line_and_an_error_object(
    text: str | None, says: str, tmp_path: Path, ledger_cli: Any, json_schema: Any
) -> None:
    db = _simulated_store(ledger_cli, tmp_path, "simulate", "--game", "RL", "--rounds", "2", "--tables", "1")
    meters = tmp_path / "meters.csv"
    if text is not None:
        meters.write_text(text)
    done = ledger_cli("reconcile", str(meters), "--json", "--db", db)
    assert done.code == 2
    assert len(done.stderr.strip().splitlines()) == 1 and says in done.stderr
    body = done.json()
    json_schema(body, "error")
    assert body["exit_code"] == 2 and says in body["error"]


@pytest.mark.parametrize(
    "args",
    [
        ["stats", "--from", "yesterday"],
        ["stats", "--from", "2026-11-21", "--to", "2026-11-20"],
        ["stats", "--game", "XX"],
        ["stats", "--table", "NOPE"],
        ["stats", "--alpha", "0.9"],
    ],
)
def test_stats_errors_are_one_line_and_an_error_object(
    args: list[str], store: Store, ledger_cli: Any, json_schema: Any
) -> None:
    db, _ = store
    done = ledger_cli(*args, "--json", "--db", db)
    assert done.code == 2, (args, done.stdout, done.stderr)
    assert done.stderr.strip()
    json_schema(done.json(), "error")
    assert done.json()["exit_code"] == 2


@pytest.mark.parametrize(
    "args",
    [
        ["verify", "--json"],
        ["commission", "--json"],
        ["jackpot", "--json"],
        ["bank", "--json"],
        ["replay", "RL-01/000001", "--json"],
        ["recall", "--table", "RL-01", "--json"],
        ["report", "--day", DAY, "--json"],
        ["projections", "status", "--json"],
        ["seal", "--out", "cp.json", "--key", "k.pem", "--json"],
        ["export", "--out", "x", "--json"],
        ["stats", "--json"],
        ["reconcile", str(METERS), "--json"],
    ],
)
def test_a_missing_store_is_exit_2_one_line_an_error_object_and_nothing_created(
    args: list[str], tmp_path: Path, ledger_cli: Any, json_schema: Any
) -> None:
    path = tmp_path / "typo.db"
    if args[0] == "seal":
        assert ledger_cli("keygen", "--out", str(tmp_path / "k.pem")).code == 0
    done = ledger_cli(*args, "--db", f"sqlite:///{path}", cwd=tmp_path)
    assert done.code == 2, done.stderr
    assert not path.exists()
    assert len(done.stderr.strip().splitlines()) == 1
    assert "no ledger at sqlite:///" in done.stderr and "ledger init" in done.stderr
    body = done.json()
    json_schema(body, "error")
    assert body["exit_code"] == 2 and "no ledger" in body["error"]


def test_a_missing_postgres_schema_is_exit_2_and_not_created(db_url: str, ledger_cli: Any) -> None:
    if not db_url.startswith("postgres"):
        pytest.skip("the SQLite case is the test above")
    done = ledger_cli("verify", "--db", db_url, "--json")
    assert done.code == 2 and done.json()["exit_code"] == 2
    from urllib.parse import parse_qs, urlsplit

    import psycopg

    schema = parse_qs(urlsplit(db_url).query)["schema"][0]
    with psycopg.connect(db_url.split("?")[0]) as conn:
        assert conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone() is None


@pytest.mark.parametrize(
    "url, reason",
    [
        ("postgresql://postgres@127.0.0.1:1/test", "Connection refused"),
        ("postgresql://postgres@127.0.0.1:5432/no_such_db_ledger14", "does not exist"),
    ],
)
def test_an_unreachable_database_is_one_line_naming_the_cause(
    url: str, reason: str, ledger_cli: Any, json_schema: Any
) -> None:
    if reason == "does not exist":
        _require_postgres()
    done = ledger_cli("verify", "--db", url, "--json")
    assert done.code == 2
    assert len(done.stderr.strip().splitlines()) == 1 and reason in done.stderr
    json_schema(done.json(), "error")


def test_selections_that_match_nothing_are_exit_2(store: Store, ledger_cli: Any) -> None:
    db, _ = store
    for args in (
        ["verify", "--table", "NOPE"],
        ["verify", "--round", "999999"],
        ["verify", "--game", "RL", "--table", "SP9-01"],
        ["replay", "RL-01/999999"],
        ["recall", "--table", "NOPE"],
        ["jackpot", "--pool", "NOPE"],
        ["bank", "--table", "NOPE"],
        ["stats", "--table", "NOPE"],
        ["stats", "--from", "2030-01-01"],
    ):
        done = ledger_cli(*args, "--db", db, "--json")
        assert done.code == 2, (args, done.stdout, done.stderr)
        assert done.json()["exit_code"] == 2


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow  # ten commands over the store (the store's digest before and after)
def test_read_commands_write_nothing(store: Store, ledger_cli: Any, tmp_path: Path) -> None:
    db, _ = store
    path = Path(db.removeprefix("sqlite:///"))
    before = _digest(path)
    with sqlite3.connect(path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    for args in (
        ["commission"],
        ["jackpot"],
        ["bank"],
        ["verify"],
        ["replay", "RL-01/000001"],
        ["recall", "--table", "RL-01"],
        ["report", "--day", DAY, "--json"],
        ["export", "--out", str(tmp_path / "e"), "--format", "csv"],
        ["stats"],
        ["reconcile", str(METERS)],
    ):
        done = ledger_cli(*args, "--db", db)
        assert done.code in (0, 1), (args, done.stderr)
    assert _digest(path) == before
    with sqlite3.connect(path) as conn:
        assert {r[0] for r in conn.execute("SELECT name FROM sqlite_master")} == tables


def test_views_behind_the_log_are_completed_in_memory_and_the_lag_is_said(
    tmp_path: Path, examples: Path, ledger_cli: Any
) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    ledger_cli("ingest", str(examples / "stud.jsonl"), "--db", db)
    assert ledger_cli("projections", "update", "--db", db).code == 0
    stored = ledger_cli("jackpot", "--json", "--db", db).json()
    ledger_cli("ingest", str(examples / "3cb.jsonl"), "--db", db)
    text = ledger_cli("commission", "--db", db)
    assert "behind the log" in text.stderr and "ledger projections update" in text.stderr
    status = ledger_cli("projections", "status", "--json", "--db", db).json()
    assert any(v["rounds_behind"] > 0 for v in status["views"])  # nothing was written
    assert ledger_cli("jackpot", "--json", "--db", db).json() == stored


def test_exit_codes_mean_one_thing_each(tmp_path: Path, ledger_cli: Any) -> None:
    assert ledger_cli("verify", "--db", "mysql://x").code == 2
    assert ledger_cli("replay", "no-slash", "--db", "sqlite:///x.db", cwd=tmp_path).code == 2
    assert ledger_cli("nonsense").code == 2
    assert not (tmp_path / "x.db").exists()


def test_an_internal_error_is_exit_4_with_a_hint_and_a_traceback_only_under_debug(
    tmp_path: Path, examples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    import cli.replay
    from cli.main import app

    db = f"sqlite:///{tmp_path / 'l.db'}"
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", str(examples / "rl.jsonl"), "--db", db]).exit_code == 0

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("something nobody expected")

    monkeypatch.setattr(cli.replay, "replay_round", broken)
    done = runner.invoke(app, ["replay", "RL-01/000001", "--db", db, "--json"])
    assert done.exit_code == 4
    assert "internal error: RuntimeError: something nobody expected" in done.stderr
    assert "--debug" in done.stderr and "Traceback" not in done.stderr
    assert '"exit_code": 4' in done.stdout
    debug = runner.invoke(app, ["--debug", "replay", "RL-01/000001", "--db", db])
    assert debug.exit_code == 4 and "Traceback" in debug.stderr
    env = runner.invoke(app, ["replay", "RL-01/000001", "--db", db], env={"LEDGER_DEBUG": "1"})
    assert env.exit_code == 4 and "Traceback" in env.stderr


def _require_postgres() -> None:
    import os

    import psycopg

    try:
        psycopg.connect(
            os.environ.get("LEDGER_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test"), connect_timeout=3
        ).close()
    except psycopg.Error as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL is required under CI=true: {exc}")
        pytest.skip(f"no PostgreSQL: {exc}")


def test_cli_conventions(store: Store, ledger_cli: Any, tmp_path: Path) -> None:
    db, _ = store
    assert ledger_cli("--version").stdout.startswith("ledger ")
    assert "Usage" in ledger_cli("-h").stdout and "Usage" in ledger_cli("verify", "-h").stdout
    assert "--install-completion" in ledger_cli("--help").stdout
    before = ledger_cli("--db", db, "verify", "--json")
    after = ledger_cli("verify", "--db", db, "--json")
    env = ledger_cli("verify", "--json", env={"LEDGER_DB": db})
    assert before.code == after.code == env.code
    assert before.json()["head"] == after.json()["head"] == env.json()["head"]
    # the --db after the command wins over the one before it
    other = f"sqlite:///{tmp_path / 'other.db'}"
    assert ledger_cli("--db", other, "verify", "--db", db).code in (0, 1)
    assert ledger_cli("--db", db, "verify", "--db", other).code == 2
    quiet = ledger_cli("verify", "--quiet", "--db", db)
    assert quiet.stdout == "" and quiet.code in (0, 1)
    summary = ledger_cli("verify", "--summary", "--db", db)
    assert "rounds checked" in summary.stdout and "  rule:" not in summary.stdout
    for text in (ledger_cli(*c, "-h").stdout for c in (["verify"], ["ingest"], ["export"])):
        assert "<str>" not in text and "<bool>" not in text and "list[" not in text


def test_export_refuses_a_non_empty_folder_and_leaves_no_stale_file(
    store: Store, ledger_cli: Any, tmp_path: Path
) -> None:
    db, _ = store
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "stale.csv").write_text("old")
    refused = ledger_cli("export", "--out", str(folder), "--db", db)
    assert refused.code == 2 and "not empty" in refused.stderr
    assert ledger_cli("export", "--out", str(folder), "--format", "csv", "--db", db, "--force").code == 0
    assert not (folder / "stale.csv").exists()
    assert (
        ledger_cli("export", "--out", str(folder), "--format", "beancount", "--db", db, "--force").code == 0
    )
    names = {p.name for p in folder.iterdir()}
    assert names == {"house.beancount", "MANIFEST.json", "SHA256SUMS"}
    assert ledger_cli("export", "--out", str(tmp_path / "d"), "--from", "20/11", "--db", db).code == 2


def test_ingest_rejects_of_every_file_are_kept_each_with_its_file(
    tmp_path: Path, examples: Path, ledger_cli: Any
) -> None:
    import json

    feeds = []
    for name in ("rl.jsonl", "fpc.jsonl"):
        lines = (examples / name).read_text().splitlines()
        lines.append("not json")
        feed = tmp_path / name
        feed.write_text("\n".join(lines) + "\n")
        feeds.append(str(feed))
    rejects = tmp_path / "r.jsonl"
    done = ledger_cli("ingest", *feeds, "--rejects", str(rejects), "--db", f"sqlite:///{tmp_path / 'l.db'}")
    assert done.code == 1
    records = [json.loads(x) for x in rejects.read_text().splitlines()]
    assert sorted(r["file"] for r in records) == sorted(feeds)
