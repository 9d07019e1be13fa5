"""Issue 26, holes 1, 2, 5, 6 and 10, and issue 30 item 8: nothing stored in the checkpoints table
is trusted before it is checked. Each test plays the attacker against a real store (SQLite and
PostgreSQL where the attack applies) — an insider with SQL access who inserts rows into
``ledger_checkpoints``, deletes and replants events, or hands over segment reports of another
store — and fails on the code before the fix.

Only names that existed before the fix are imported, so the same file runs against the old code.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app as cli_app
from ledger.domain.round import round_id
from ledger.games import GAMES
from ledger.proof.checkpoints import seal
from ledger.proof.seal import ChainPosition, generate_key, private_pem, public_pem, sign
from ledger.report.recall import recall
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.services.replay import replay_round
from ledger.storage.store import LedgerApp, open_ledger
from ledger.tools.simulate import simulate
from ledger.verify.engine import verify_store
from ledger.verify.snapshot import Snapshot

runner = CliRunner()
KEY = generate_key()
"""The sealing key: the operator's."""
ATTACKER = generate_key()


def _cli(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(cli_app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _ingest(app: LedgerApp, lines: list[dict[str, Any]], path: Path) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with open(path, encoding="utf-8") as stream:
        assert Ingestor(app, batch_events=60).ingest(numbered_lines(stream)).rejected == []


@pytest.fixture
def keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The sealing key pair on disk; the store's sealing public key configured through
    ``LEDGER_SEAL_PUBLIC_KEY``."""
    private, public = tmp_path / "seal.key", tmp_path / "seal.key.pub"
    private.write_bytes(private_pem(KEY))
    public.write_bytes(public_pem(KEY.public_key()))
    monkeypatch.setenv("LEDGER_SEAL_PUBLIC_KEY", str(public))
    return private, public


def _insert(
    raw: Any,
    number: int,
    checkpoint_text: str,
    snapshot: Snapshot | bytes,
    position: int,
    links: int = 1,
    events: int = 1,
    head: str = "ab" * 32,
    digest: str = "cd" * 32,
) -> None:
    """The attacker's INSERT into the checkpoints table (the auditor role on PostgreSQL, the
    file owner on SQLite)."""
    data = snapshot.dumps() if isinstance(snapshot, Snapshot) else snapshot
    raw.run(
        "INSERT INTO {t} (number, position, links, events, head, digest, sealed_at, "
        "checkpoint, snapshot) VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p}, {p}, {p})",
        (
            number,
            position,
            links,
            events,
            head,
            digest,
            "2026-11-20T00:00:00+00:00",
            checkpoint_text,
            zlib.compress(data),
        ),
    )


def _forge(snapshot: Snapshot, key: Any = ATTACKER) -> tuple[str, Snapshot]:
    """A checkpoint over an edited snapshot (the SP9 bank's carried capital removed, its deck
    flipped), signed with ``key``: what the attacker stores."""
    state = json.loads(json.dumps(snapshot.state))
    for session in state["judge"]["sessions"]["SP9"].values():
        session["carry"] = None
        session["capital"] = "1"
        session["deck"] = {"A": "B", "B": "A"}.get(session["deck"], "A")
    forged = Snapshot(snapshot.position, snapshot.links, snapshot.events, snapshot.head, state)
    checkpoint = sign(ChainPosition(forged.links, forged.events, forged.head), key, snapshot=forged)
    return checkpoint.dumps(), forged


@pytest.fixture
def sp9(app: LedgerApp, tmp_path: Path, keys: tuple[Path, Path]) -> dict[str, Any]:
    """An SP9 store: a third ingested and sealed (checkpoint 1, the operator's key), a third
    more (its snapshot taken, not stored), then the rest."""
    lines = simulate([GAMES["SP9"]], rounds=12, tables=1, seed=3, error_rate=0.15).lines
    starts = [i for i, line in enumerate(lines) if i and line["round"] != lines[i - 1]["round"]]
    third, two = starts[len(starts) // 3], starts[2 * len(starts) // 3]  # at round boundaries
    _ingest(app, lines[:third], tmp_path / "a.jsonl")
    first = seal(app, KEY)
    _ingest(app, lines[third:two], tmp_path / "b.jsonl")
    middle = verify_store(app, snapshot=True).snapshot
    assert middle is not None
    _ingest(app, lines[two:], tmp_path / "c.jsonl")
    table = lines[0]["table"]
    later = [
        r
        for r in sorted({line["round"] for line in lines})
        if (span := app.span(round_id(table, r))) is not None and span[0] > middle.position
    ]
    assert len(later) >= 3
    return {"first": first, "middle": middle, "table": table, "later": later, "tmp": tmp_path}


def _replays_agree(app: LedgerApp, table: str, rounds: list[str]) -> None:
    for rnd in rounds:
        near = replay_round(app, table, rnd)
        whole = replay_round(app, table, rnd, from_start=True)
        assert near is not None and whole is not None
        assert near.findings == whole.findings, rnd
        assert near.derivation.expected == whole.derivation.expected, rnd


# --- hole 1: a forged stored checkpoint ---------------------------------------------------------


@pytest.mark.slow_postgres
def test_hole1_a_forged_stored_checkpoint_does_not_make_replay_lie(
    app: LedgerApp, raw: Any, sp9: dict[str, Any], db_url: str
) -> None:
    text, forged = _forge(sp9["middle"])
    _insert(raw, 2, text, forged, forged.position, forged.links, forged.events, forged.head, forged.digest)
    _replays_agree(app, sp9["table"], sp9["later"])
    for rnd in sp9["later"][:3]:
        near = replay_round(app, sp9["table"], rnd)
        assert near is not None and near.judged_from is not None
        assert near.judged_from["position"] == sp9["first"].snapshot.position
    code, _, err = _cli("seal", "--list", "--db", db_url)
    assert code == 3 and "row 2" in err and "signature is not valid" in err
    near_recall = recall(app, sp9["table"], 10)
    whole_recall = recall(app, sp9["table"], 10, from_start=True)
    assert near_recall is not None and whole_recall is not None
    assert [r.findings for r in near_recall.rounds] == [r.findings for r in whole_recall.rounds]
    page = sp9["tmp"] / "r.html"
    target = f"{sp9['table']}/{sp9['later'][0]}"
    code, _, err = _cli("report", target, "--html", str(page), "--db", db_url)
    assert code == (1 if replay_round(app, sp9["table"], sp9["later"][0], from_start=True).errors else 0), err  # type: ignore[union-attr]


@pytest.mark.slow_postgres
def test_hole1_a_garbage_signature_numbered_0_is_refused_by_list_since_and_seal(
    app: LedgerApp, raw: Any, sp9: dict[str, Any], db_url: str, keys: tuple[Path, Path]
) -> None:
    text, forged = _forge(sp9["middle"])
    obj = json.loads(text)
    obj["signature"] = "AAAA" + obj["signature"][4:]
    _insert(
        raw,
        0,
        json.dumps(obj),
        forged,
        forged.position,
        forged.links,
        forged.events,
        forged.head,
        forged.digest,
    )
    _replays_agree(app, sp9["table"], sp9["later"])
    code, _, err = _cli("seal", "--list", "--db", db_url)
    assert code == 3 and "row 0" in err
    code, out, _ = _cli("verify", "--db", db_url, "--since", "last", "--json")
    whole_code, whole, _ = _cli("verify", "--db", db_url, "--json")
    assert json.loads(out)["since"]["number"] == 1
    since, full = json.loads(out)["findings"], json.loads(whole)["findings"]
    assert code == whole_code and since and all(f in full for f in since)
    code, out, _ = _cli("seal", "--db", db_url, "--key", str(keys[0]), "--json")
    assert code == 0 and json.loads(out)["resumed_from"] == 1


def test_hole1_without_a_configured_key_a_stored_checkpoint_is_not_used(
    app: LedgerApp, raw: Any, sp9: dict[str, Any], db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LEDGER_SEAL_PUBLIC_KEY")
    text, forged = _forge(sp9["middle"], KEY)  # even one the real key signed
    _insert(raw, 2, text, forged, forged.position, forged.links, forged.events, forged.head, forged.digest)
    rnd = sp9["later"][-1]
    near = replay_round(app, sp9["table"], rnd)
    assert near is not None and near.judged_from is None
    code, _, err = _cli("replay", f"{sp9['table']}/{rnd}", "--db", db_url)
    whole_code, _, _ = _cli("replay", f"{sp9['table']}/{rnd}", "--db", db_url, "--from-start")
    assert code == whole_code and err.count("no sealing public key") == 1
    code, out, err = _cli("verify", "--db", db_url, "--since", "last", "--json")
    assert json.loads(out)["since"] is None and json.loads(out)["events"] > forged.events


# --- hole 2: junk rows never block sealing or replay --------------------------------------------


@pytest.mark.slow_postgres
def test_hole2_junk_rows_never_block_sealing_or_replay(
    app: LedgerApp, raw: Any, sp9: dict[str, Any], db_url: str, keys: tuple[Path, Path]
) -> None:
    _insert(raw, 7, "{not json", b"junk", 2**62)
    _insert(raw, -99, '{"format": "ledger-checkpoint-v2"}', b"junk", 1)
    code, out, err = _cli("seal", "--db", db_url, "--key", str(keys[0]), "--full", "--json")
    assert code == 0, err
    assert json.loads(out)["number"] == 2  # after the newest valid one, not after the junk
    code, _, err = _cli("seal", "--list", "--db", db_url)
    assert code == 3 and "row 7" in err and "row -99" in err
    _replays_agree(app, sp9["table"], [sp9["later"][0], sp9["later"][-1]])
    first_round = "000001"
    code, _, err = _cli("replay", f"{sp9['table']}/{first_round}", "--db", db_url)
    assert code in (0, 1), err


# --- hole 10: a row numbered 0, an edited JSON ---------------------------------------------------


@pytest.mark.slow_postgres
def test_hole10_a_row_numbered_0_leaves_verify_jobs_whole(
    app: LedgerApp, raw: Any, sp9: dict[str, Any], db_url: str, keys: tuple[Path, Path]
) -> None:
    seal(app, KEY)
    raw.run(
        "INSERT INTO {t} (number, position, links, events, head, digest, sealed_at, "
        "checkpoint, snapshot) SELECT 0, position, links, events, head, digest, sealed_at, "
        "checkpoint, snapshot FROM {t} WHERE number = 1"
    )  # a genuine checkpoint, copied
    code, out, _ = _cli("verify", "--db", db_url, "--json", "--jobs", "2")
    whole_code, whole, _ = _cli("verify", "--db", db_url, "--json")
    assert (code, json.loads(out)["events"]) == (whole_code, json.loads(whole)["events"])
    assert json.loads(out)["findings"] == json.loads(whole)["findings"]
    assert json.loads(whole)["events"] > 0


@pytest.mark.slow_postgres
def test_hole10_an_edited_checkpoint_json_makes_seal_list_exit_3(
    app: LedgerApp, raw: Any, sp9: dict[str, Any], db_url: str
) -> None:
    text = raw.run("SELECT checkpoint FROM {t} WHERE number = 1", fetch=True)[0][0]
    obj = json.loads(text)
    obj["sealed_at"] = "2020-01-01T00:00:00+00:00"  # the signature no longer covers it
    raw.run(
        "INSERT INTO {t} (number, position, links, events, head, digest, sealed_at, "
        "checkpoint, snapshot) SELECT 5, position, links, events, head, digest, {p}, {p}, "
        "snapshot FROM {t} WHERE number = 1",
        (obj["sealed_at"], json.dumps(obj)),
    )
    code, out, err = _cli("seal", "--list", "--db", db_url, "--json")
    assert code == 3 and "row 5" in err
    assert [c["number"] for c in json.loads(out)["checkpoints"]] == [1]


# --- hole 6: delete and replant before the checkpoint ---------------------------------------------


def _replant(raw: Any, db_url: str, row: int) -> None:
    """Delete one event before the checkpoint and plant its copy at id 0 (the count of rows
    unchanged), as the owner: the guards dropped first."""
    if db_url.startswith("sqlite"):
        raw.run("DROP TRIGGER IF EXISTS ledger_no_delete")
        raw.run("DROP TRIGGER IF EXISTS ledger_positive_id")
    else:
        raw.run("ALTER TABLE {events} DROP CONSTRAINT IF EXISTS ledger_positive_id")
        raw.run("ALTER TABLE {events} DISABLE TRIGGER USER")
    cols = "originator_id, originator_version, topic, state"
    saved = raw.run(f"SELECT {cols} FROM {{events}} WHERE {{id}} = {{p}}", (row,), fetch=True)[0]
    raw.delete(row)
    raw.run(f"INSERT INTO {{events}} ({{id}}, {cols}) VALUES (0, {{p}}, {{p}}, {{p}}, {{p}})", tuple(saved))


@pytest.mark.slow_postgres
def test_hole6_delete_and_replant_before_the_checkpoint_is_seen_by_since_and_seal(
    app: LedgerApp, raw: Any, sp9: dict[str, Any], db_url: str, keys: tuple[Path, Path]
) -> None:
    second = seal(app, KEY)
    _replant(raw, db_url, second.snapshot.position // 2)
    code, out, _ = _cli("verify", "--db", db_url, "--since", "last", "--json")
    assert code == 3 and "planted" in json.loads(out)["findings"][0]["message"]
    code, _, err = _cli("seal", "--db", db_url, "--key", str(keys[0]))
    assert code == 3 and "planted" in err
    code, _, _ = _cli("verify", "--db", db_url, "--json")
    assert code == 3


# --- hole 5: segment reports of another store or another time --------------------------------------


def _segment(db: str, part: str, out: Path) -> Path:
    code, body, err = _cli("verify", "--db", db, "--segment", part, "--json")
    assert code == 0, err
    out.write_text(body, encoding="utf-8")
    return out


def _copy(source: Path, target: Path) -> None:
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)


def test_hole5_merge_refuses_reports_of_another_copy_or_another_store(
    tmp_path: Path, examples: Path, keys: tuple[Path, Path]
) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    app = open_ledger(url, create=True)
    try:
        for name in ("rl", "3cb"):
            with open(examples / f"{name}.jsonl", encoding="utf-8") as stream:
                Ingestor(app, batch_events=40).ingest(numbered_lines(stream))
            seal(app, KEY)
        _copy(tmp_path / "store.db", tmp_path / "copy.db")  # a clean copy, now
        with open(examples / "fpc.jsonl", encoding="utf-8") as stream:
            Ingestor(app, batch_events=40).ingest(numbered_lines(stream))
    finally:
        app.close()
    copy = f"sqlite:///{tmp_path / 'copy.db'}"
    mine = [_segment(url, p, tmp_path / f"s{i}.json") for i, p in enumerate(("0..1", "1..2", "2..head"))]
    code, _, err = _cli("verify", "--merge", *map(str, mine))
    assert code == 0, err
    theirs = _segment(copy, "0..1", tmp_path / "copy01.json")
    code, _, err = _cli("verify", "--merge", str(theirs), *map(str, mine[1:]))
    assert code == 2 and "another head" in err
    other = f"sqlite:///{tmp_path / 'other.db'}"
    app = open_ledger(other, create=True)
    try:
        with open(examples / "fpc.jsonl", encoding="utf-8") as stream:
            Ingestor(app, batch_events=40).ingest(numbered_lines(stream))
    finally:
        app.close()
    foreign = _segment(other, "0..head", tmp_path / "other.json")
    body = json.loads(foreign.read_text())
    body["segment"].update(
        {"from": 2, "from_position": json.loads(mine[2].read_text())["segment"]["from_position"]}
    )
    foreign.write_text(json.dumps(body))
    code, _, err = _cli("verify", "--merge", *map(str, mine[:2]), str(foreign))
    assert code == 2 and ("another store" in err or "do not chain" in err)


# --- issue 30, item 8: seal --out into a folder that does not exist --------------------------------


def test_seal_out_into_a_missing_folder_exits_2_and_stores_nothing(
    app: LedgerApp, examples: Path, db_url: str, tmp_path: Path, keys: tuple[Path, Path]
) -> None:
    with open(examples / "rl.jsonl", encoding="utf-8") as stream:
        Ingestor(app, batch_events=40).ingest(numbered_lines(stream))
    code, _, err = _cli(
        "seal", "--db", db_url, "--key", str(keys[0]), "--out", str(tmp_path / "no" / "such" / "cp.json")
    )
    assert code == 2 and "does not exist" in err
    code, out, _ = _cli("seal", "--list", "--db", db_url, "--json")
    assert code == 0 and json.loads(out)["checkpoints"] == []


# --- hole 4: snapshots encrypted under LEDGER_CIPHER_KEY --------------------------------------------


def _why(step: str, err: str, body: str) -> str:
    """What a failed command said: its stderr, and the findings of its JSON report (a finding
    goes to stdout, so an exit 3 may leave stderr empty)."""
    try:
        findings = [f.get("message") for f in json.loads(body).get("findings", [])]
    except (ValueError, AttributeError):
        findings = [body[-2000:]]
    return f"{step}: stderr {err!r}; findings {findings}"


def _whole_store(db_url: str) -> bytes:
    """Every byte of the store as an outsider copies it: the SQLite files, or pg_dump's
    output of the schema (events and checkpoints)."""
    if db_url.startswith("sqlite"):
        path = Path(db_url[len("sqlite:///") :])
        return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))
    import subprocess

    schema = db_url.split("schema=")[1]
    done = subprocess.run(
        ["pg_dump", "--data-only", "-n", schema, db_url.split("?")[0]], capture_output=True, check=True
    )
    assert b"ledger_checkpoints" in done.stdout
    return done.stdout


@pytest.mark.slow_postgres
def test_hole4_snapshots_are_encrypted_in_the_store_and_in_the_file(
    db_url: str, raw: Any, tmp_path: Path, keys: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from eventsourcing.cryptography import AESCipher

    monkeypatch.setenv("LEDGER_CIPHER_KEY", AESCipher.create_key(32))
    lines = simulate([GAMES["3CB"], GAMES["STUD"]], rounds=6, tables=1, seed=7, error_rate=0.0).lines
    cut = len(lines) // 2 + 3  # rounds in play at the checkpoint: players, amounts, cards
    app = open_ledger(db_url)
    try:
        _ingest(app, lines[:cut], tmp_path / "a.jsonl")
        plain = verify_store(app, snapshot=True).snapshot
    finally:
        app.close()
    assert plain is not None
    players = {line["player"] for line in lines[:cut] if line.get("player")}
    quoted = {f'\\"{p}\\"'.encode() for p in players}  # as the snapshot holds them
    secrets = {q for q in quoted if q in plain.dumps()}
    assert secrets  # the snapshot holds player ids in clear before it is encrypted
    out = tmp_path / "cp.json"
    code, body, err = _cli("seal", "--db", db_url, "--key", str(keys[0]), "--out", str(out))
    assert code == 0, _why("seal --out", err, body)
    stored = bytes(raw.run("SELECT snapshot FROM {t}", fetch=True)[0][0])
    written = (tmp_path / "cp.snapshot.json").read_bytes()
    for data in (stored, written):
        assert not any(s in data for s in secrets)
        with pytest.raises(zlib.error):
            zlib.decompress(data)  # not merely compressed
    assert not any(s in _whole_store(db_url) for s in secrets)  # what strings/pg_dump see
    app = open_ledger(db_url)
    try:
        _ingest(app, lines[cut:], tmp_path / "b.jsonl")
    finally:
        app.close()
    for since in (str(out), "last"):
        code, body, err = _cli("verify", "--db", db_url, "--since", since, "--json")
        assert code == 0 and json.loads(body)["since"]["position"] == plain.position, _why(since, err, body)
    code, body, err = _cli("seal", "--db", db_url, "--key", str(keys[0]), "--json")
    assert code == 0 and json.loads(body)["resumed_from"] == 1, _why("seal", err, body)
    monkeypatch.setenv("LEDGER_CIPHER_KEY", AESCipher.create_key(32))  # another key: no use
    code, body, err = _cli("verify", "--db", db_url, "--since", str(out))
    assert code == 3, _why("another cipher key", err, body)


# --- hole 10: what a swap inside one save does and does not break ----------------------------------


def _unguard(raw: Any, db_url: str) -> None:
    if db_url.startswith("sqlite"):
        for name in ("ledger_no_delete", "ledger_no_update"):
            raw.run(f"DROP TRIGGER IF EXISTS {name}")
    else:
        raw.run("ALTER TABLE {events} DISABLE TRIGGER USER")


def test_hole10_rows_of_two_rounds_swapped_inside_one_save_pass_one_round_s_do_not(
    app: LedgerApp, raw: Any, db_url: str, examples: Path
) -> None:
    """What INTEGRITY.md says: the chain fixes each aggregate's events in version order and the
    save that stored them, not the order of rows of different rounds inside one save."""
    with open(examples / "rl.jsonl", encoding="utf-8") as stream:
        Ingestor(app, batch_events=40).ingest(numbered_lines(stream))
    assert verify_store(app).exit_code == 0
    rows = raw.run(
        "SELECT {id}, originator_id, originator_version, topic, state FROM {events} ORDER BY {id}", fetch=True
    )
    pair = next(
        (a, b)
        for a, b in itertools.pairwise(rows)
        if b[0] == a[0] + 1
        and a[1] != b[1]
        and not any(t.startswith(("chain", "table")) for t in (a[3], b[3]))
    )
    _unguard(raw, db_url)
    for row in pair:
        raw.delete(row[0])
    for row_id, other in ((pair[0][0], pair[1]), (pair[1][0], pair[0])):
        raw.run(
            "INSERT INTO {events} ({id}, originator_id, originator_version, topic, state) "
            "VALUES ({p}, {p}, {p}, {p}, {p})",
            (row_id, *other[1:]),
        )
    assert verify_store(app).exit_code == 0  # not detected: documented
    same = next(
        (a, b)
        for a, b in itertools.pairwise(rows)
        if a[1] == b[1]
        and "chain" not in a[3]
        and a[0] not in (pair[0][0], pair[1][0])
        and b[0] not in (pair[0][0], pair[1][0])
    )
    raw.set_state(same[0][0], bytes(same[1][4]))
    raw.set_state(same[1][0], bytes(same[0][4]))
    assert verify_store(app).exit_code == 3  # two events of one round: the digests break


# --- the sealing public key: named at init, or refused when it is another ----------------------------


def test_hole1_the_key_named_at_init_is_used_kept_and_cannot_be_changed(
    db_url: str,
    raw: Any,
    tmp_path: Path,
    examples: Path,
    keys: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LEDGER_SEAL_PUBLIC_KEY")
    code, out, err = _cli("init", "--db", db_url, "--seal-public-key", str(keys[1]))
    assert code == 0 and "sealing public key sha256:" in out, err
    app = open_ledger(db_url)
    try:
        with open(examples / "3cb.jsonl", encoding="utf-8") as stream:
            lines = [json.loads(line) for line in stream if line.strip()]
        _ingest(app, lines[: len(lines) // 2], tmp_path / "a.jsonl")
        seal(app, KEY)
        _ingest(app, lines[len(lines) // 2 :], tmp_path / "b.jsonl")
        last = lines[-1]
        near = replay_round(app, last["table"], last["round"])
        assert near is not None and near.judged_from is not None  # the named key checked it
        with pytest.raises(Exception, match=r"sealing key .* is not the store's"):
            seal(app, ATTACKER)
    finally:
        app.close()
    other = tmp_path / "other.pub"
    other.write_bytes(public_pem(ATTACKER.public_key()))
    code, _, err = _cli("init", "--db", db_url, "--seal-public-key", str(other))
    assert code == 2 and "cannot be changed" in err
    with pytest.raises(Exception, match=r"fixed|append-only|refused"):
        raw.run(
            "UPDATE ledger_seal_key SET public_key = 'x'"
            if db_url.startswith("sqlite")
            else "UPDATE " + raw.url.split("schema=")[1] + ".ledger_seal_key SET public_key = 'x'"
        )
    attacker = tmp_path / "attacker.key"
    attacker.write_bytes(private_pem(ATTACKER))
    code, _, err = _cli("seal", "--db", db_url, "--key", str(attacker))
    assert code == 2 and "not the store's sealing public key" in err


@pytest.mark.slow_postgres
def test_hole1_a_segment_needs_the_sealing_public_key(
    app: LedgerApp, sp9: dict[str, Any], db_url: str, keys: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LEDGER_SEAL_PUBLIC_KEY")
    code, _, err = _cli("verify", "--db", db_url, "--segment", "0..1")
    assert code == 2 and "no sealing public key" in err
    code, _, err = _cli("verify", "--db", db_url, "--segment", "0..1", "--public-key", str(keys[1]))
    assert code in (0, 1), err


@pytest.mark.postgres
def test_hole1_with_roles_both_read_the_named_key_and_neither_can_change_it(
    db_url: str, keys: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    if not db_url.startswith("postgres"):
        pytest.skip("roles exist only on PostgreSQL")
    import uuid

    import psycopg
    from psycopg import sql

    monkeypatch.delenv("LEDGER_SEAL_PUBLIC_KEY")
    base = db_url.split("?")[0]
    tag = uuid.uuid4().hex[:10]
    schema, prefix = f"t_{tag}", f"lt{tag}"
    roles = (f"{prefix}_ingest", f"{prefix}_auditor")
    try:
        code, _, err = _cli(
            "init",
            "--db",
            f"{base}?schema={schema}",
            "--roles",
            "--role-prefix",
            prefix,
            "--seal-public-key",
            str(keys[1]),
        )
        assert code == 0, err
        host = base.split("://", 1)[1].split("@", 1)[-1]
        for role in roles:
            url = f"postgresql://{role}@{host}?schema={schema}"
            code, out, err = _cli("seal", "--list", "--json", "--db", url)
            assert code == 0 and json.loads(out)["key_source"].startswith("ledger init"), err
            with psycopg.connect(url.split("?")[0], autocommit=True) as conn:
                for statement in (
                    f"UPDATE {schema}.ledger_seal_key SET public_key = 'x'",
                    f"INSERT INTO {schema}.ledger_seal_key VALUES (2, 'x', 'x', 'x')",
                ):
                    with pytest.raises(psycopg.errors.InsufficientPrivilege):
                        conn.execute(statement)  # type: ignore[arg-type]
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
            for role in (*roles, f"{prefix}_sealer"):  # init --roles makes all three
                if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                    conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
                    conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


@pytest.mark.slow_postgres
def test_hole1_an_unreadable_sealing_public_key_is_exit_2_everywhere(
    app: LedgerApp,
    sp9: dict[str, Any],
    db_url: str,
    keys: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A wrong path in a cron job: one line, exit 2, never a silent fallback."""
    monkeypatch.setenv("LEDGER_SEAL_PUBLIC_KEY", str(tmp_path / "no-such.pub"))
    target = f"{sp9['table']}/{sp9['later'][0]}"
    for args in (
        ["replay", target],
        ["recall", "--table", sp9["table"]],
        ["report", target, "--html", str(tmp_path / "r.html")],
        ["verify", "--since", "last"],
        ["verify", "--segment", "0..1"],
        ["verify", "--jobs", "2"],
        ["seal", "--list"],
        ["seal", "--key", str(keys[0])],
    ):
        code, _, err = _cli(*args, "--db", db_url)
        assert code == 2 and "no-such.pub" in err, (args, code, err)
