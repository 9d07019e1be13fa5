"""Witnessed sealing of real stores on both backends, with the witnesses as separate processes:
`ledger seal --witness … --quorum 2` collects and stores the cosignatures; `verify` and
`check-bundle` count them (`--witness-key`, `--quorum`). The operator, holding the sealing key
and every database right, re-ingests an edited feed into a fresh store with the same origin and
seals it: the witnesses refuse (seal exit 3, nothing cosigned), `verify --since last
--witness-key` exits 3, and cosignature lines copied from the real store do not count."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from ledger.merkle.heads import latest_note


@dataclass
class Ran:
    code: int
    stdout: str
    stderr: str


def ledger(*args: str) -> Ran:
    result = CliRunner().invoke(app, [str(a) for a in args])
    return Ran(result.exit_code, result.stdout, result.stderr)


@pytest.fixture(scope="module")
def feeds(tmp_path_factory) -> tuple[Path, Path]:
    """A small feed and the same feed with one settled bet changed."""
    folder = tmp_path_factory.mktemp("feeds")
    feed = folder / "day.jsonl"
    assert ledger("simulate", "--out", feed, "--game", "RL", "--tables", "1", "--rounds", "4").code == 0
    lines = feed.read_text().splitlines(keepends=True)
    edited = folder / "edited.jsonl"
    bet = next(
        i
        for i, line in enumerate(lines)
        if '"type":"bet_placed"' in line and '"kind":"straight"' in line and '"amount":"10"' not in line
    )
    changed = re.sub(r'"amount":"\d+"', '"amount":"10"', lines[bet])  # within the table limits
    assert changed != lines[bet]
    edited.write_text("".join([*lines[:bet], changed, *lines[bet + 1 :]]))
    return feed, edited


@pytest.fixture
def other_url(db_url: str, tmp_path: Path) -> Iterator[str]:
    """A second empty store on the same backend as ``db_url``."""
    if db_url.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'forged.db'}"
        return
    schema = "t_" + uuid.uuid4().hex[:12]
    yield db_url.split("schema=")[0] + f"schema={schema}"
    import psycopg
    from psycopg import sql

    with psycopg.connect(db_url.split("?")[0], autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def sealed_store(url, origin, feed, keys, witnesses, out: Path) -> Ran:
    assert ledger("init", "--db", url, "--origin", origin).code == 0
    assert ledger("ingest", feed, "--db", url).code in (0, 1)
    return ledger(
        "seal",
        "--db",
        url,
        "--key",
        keys.folder / "op.key",
        "--out",
        out,
        *[x for w in witnesses for x in ("--witness", w.url)],
        "--quorum",
        "2",
    )


def quorum_args(keys) -> list[str]:
    return [
        "--public-key",
        str(keys.operator_pub),
        "--witness-key",
        f"{keys.witnesses[0]}.vkey",
        "--witness-key",
        f"{keys.witnesses[1]}.vkey",
        "--quorum",
        "2",
    ]


def test_witnessed_seal_stores_the_quorum_and_auditors_accept_it(
    db_url, keys, witnesses, log, feeds, tmp_path
):
    ran = sealed_store(db_url, log.origin, feeds[0], keys, witnesses, tmp_path / "cp.json")
    assert ran.code == 0, ran.stderr
    assert "cosigned by regulator.example/w1, regulator.example/w2" in ran.stdout
    assert (tmp_path / "cp.note").read_text().count("\n— regulator.example/w") == 2
    for args in (["--since", "last"], ["--checkpoint", tmp_path / "cp.json"], ["--segment", "0..1"]):
        done = ledger("verify", "--db", db_url, *args, *quorum_args(keys))
        assert done.code in (0, 1), (args, done.stderr)
    stranger = ledger(
        "verify",
        "--db",
        db_url,
        "--since",
        "last",
        "--public-key",
        keys.operator_pub,
        "--witness-key",
        f"{keys.witnesses[2]}.vkey",
    )
    assert stranger.code == 3 and "0 of 1 required cosignatures" in stranger.stderr
    assert len(stranger.stderr.strip().splitlines()) == 1


def test_a_re_ingested_edited_history_under_the_same_origin_is_refused(
    db_url, other_url, keys, witnesses, log, feeds, tmp_path
):
    honest = sealed_store(db_url, log.origin, feeds[0], keys, witnesses, tmp_path / "cp.json")
    assert honest.code == 0, honest.stderr
    forged = sealed_store(other_url, log.origin, feeds[1], keys, witnesses, tmp_path / "forged.json")
    assert forged.code == 3 and "0 of 2 required cosignatures collected" in forged.stderr
    assert "(422)" in forged.stderr
    assert latest_note_of(other_url).cosignatures == ()  # no cosigned claim kept
    refused = ledger("verify", "--db", other_url, "--since", "last", *quorum_args(keys))
    assert refused.code == 3 and "0 of 2 required cosignatures are valid" in refused.stderr
    # the operator copies the real store's cosignature lines next to the forged note
    lines = list(latest_note_of(db_url).cosignatures)
    from ledger.merkle.heads import add_cosignatures
    from ledger.storage.store import open_ledger

    forged_app = open_ledger(other_url)
    try:
        add_cosignatures(forged_app, latest_note(forged_app).size, lines)
    finally:
        forged_app.close()
    replayed = ledger("verify", "--db", other_url, "--since", "last", *quorum_args(keys))
    assert replayed.code == 3 and "0 of 2 required cosignatures are valid" in replayed.stderr


def latest_note_of(url):
    from ledger.storage.store import open_ledger

    opened = open_ledger(url)
    try:
        return latest_note(opened)
    finally:
        opened.close()


def test_check_bundle_counts_the_cosignatures_of_the_bundle_or_beside_the_checkpoint(
    db_url, keys, witnesses, log, feeds, tmp_path
):
    assert sealed_store(db_url, log.origin, feeds[0], keys, witnesses, tmp_path / "cp.json").code == 0
    bundle = tmp_path / "round.json"
    assert (
        ledger(
            "export-round",
            "RL-01/000002",
            "--bundle",
            bundle,
            "--db",
            db_url,
            "--checkpoint",
            tmp_path / "cp.json",
            "--merkle",
        ).code
        == 0
    )
    ok = ledger("check-bundle", bundle, "--checkpoint", tmp_path / "cp.json", *quorum_args(keys))
    assert ok.code == 0 and "cosigned by regulator.example/w1, regulator.example/w2" in ok.stdout
    (tmp_path / "cp.note").unlink()  # the bundle's own note carries the cosignatures too
    assert ledger("check-bundle", bundle, "--checkpoint", tmp_path / "cp.json", *quorum_args(keys)).code == 0
    obj = json.loads(bundle.read_text())
    obj["merkle"]["note"] = "\n".join(
        line for line in obj["merkle"]["note"].split("\n") if "regulator.example/w2" not in line
    )
    bundle.write_text(json.dumps(obj))
    short = ledger("check-bundle", bundle, "--checkpoint", tmp_path / "cp.json", *quorum_args(keys))
    assert (
        short.code == 3
        and "1 of 2 required cosignatures are valid; none valid from regulator.example/w2" in short.stderr
    )
    assert (
        ledger(
            "check-bundle", bundle, "--checkpoint", tmp_path / "cp.json", *quorum_args(keys)[:-1], "1"
        ).code
        == 0
    )


def wipe(url: str) -> None:
    """The insider with every database right: the whole store goes (triggers, tables, tree)."""
    if url.startswith("sqlite"):
        Path(url[len("sqlite:///") :]).unlink()
        return
    import psycopg
    from psycopg import sql

    schema = url.split("schema=")[1]
    with psycopg.connect(url.split("?")[0], autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


def test_the_store_rewritten_in_place_and_resealed_is_refused(db_url, keys, witnesses, log, feeds, tmp_path):
    """Same URL, same origin, same sealing key: the store is dropped, rebuilt from an edited feed
    (a consistent new chain and tree) and sealed. The witnesses refuse; `verify --since last`
    with their keys exits 3; the old cosigned checkpoint file no longer matches the store."""
    assert sealed_store(db_url, log.origin, feeds[0], keys, witnesses, tmp_path / "cp.json").code == 0
    wipe(db_url)
    resealed = sealed_store(db_url, log.origin, feeds[1], keys, witnesses, tmp_path / "rewritten.json")
    assert resealed.code == 3 and "(422)" in resealed.stderr
    assert ledger("verify", "--db", db_url, "--since", "last", *quorum_args(keys)).code == 3
    old = ledger("verify", "--db", db_url, "--checkpoint", tmp_path / "cp.json", *quorum_args(keys))
    assert old.code == 3  # cosigned, but the store no longer holds what it covers
