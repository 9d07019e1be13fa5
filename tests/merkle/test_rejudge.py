"""``check-bundle`` re-judges a round that depends on earlier rounds, offline: a STUD round with a
jackpot award from its linked pool (and one with a planted wrong award), a 3CB round restating
carried bets, an SP9 round whose bank was refused. The bundle carries the state entries the round
depends on, proven against the state roots two checkpoint notes sign, and the rounds that moved
them in between; the findings are the ones ``ledger verify`` gives the round. A changed entry, a
wrong proof or a round left out breaks the proof (exit 3, one line)."""

from __future__ import annotations

import base64
import copy
import json
import zlib
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app as cli_app
from ledger.games import GAMES
from ledger.games.stud_poker.simulate import force_plan
from ledger.merkle.heads import Heads
from ledger.merkle.log import MerkleLog
from ledger.merkle.sealing import seal_note, seal_tree
from ledger.proof.bundle import BundleError, check_bundle, export_round, pack_events, unpack_events
from ledger.proof.checkpoints import seal
from ledger.proof.note import cosign
from ledger.proof.seal import Checkpoint, generate_key, public_pem
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import LedgerApp, open_ledger
from ledger.tools.simulate import simulate
from ledger.verify.engine import Selection, verify_store
from ledger.witness.keys import load_signing_key

runner = CliRunner()
JACKPOT = ("STUD-02", "000006")


@cache
def _stud_feed() -> tuple[dict[str, Any], ...]:
    """The STUD feed with the forced jackpot, simulated once (every test copies its lines)."""
    sim = simulate(
        [GAMES["STUD"]],
        rounds=10,
        tables=2,
        seed=3,
        game_state={"STUD": force_plan([f"{JACKPOT[0]}/{JACKPOT[1]}:2=royal_flush"])},
    )
    return tuple(sim.lines)


def _stud_lines(planted: bool = False) -> list[dict[str, Any]]:
    lines = [dict(x) for x in _stud_feed()]
    paid = [x for x in lines if x["type"] == "jackpot_paid"]
    assert [(x["table"], x["round"]) for x in paid] == [JACKPOT]
    if planted:
        paid[0]["amount"] = "99999"
    return lines


def _ingest(app: LedgerApp, lines: list[dict[str, Any]]) -> None:
    got = Ingestor(app, batch_events=50).ingest(numbered_lines([json.dumps(x) for x in lines]))
    assert got.rejected == []


def _sealed(
    app: LedgerApp, lines: list[dict[str, Any]], table: str, round: str, key: Any = None
) -> tuple[Checkpoint, Any]:
    """The lines before the round's opening, a seal; the rest, a second seal."""
    key = key or generate_key()
    cut = next(i for i, x in enumerate(lines) if (x["table"], x["round"]) == (table, round))
    _ingest(app, lines[:cut])
    seal_tree(app, key, seal(app, key).checkpoint)
    _ingest(app, lines[cut:])
    checkpoint = seal(app, key).checkpoint
    seal_tree(app, key, checkpoint)
    return checkpoint, key


def _verify_findings(app: LedgerApp, table: str, round: str) -> list[dict[str, Any]]:
    return [f.to_json() for f in verify_store(app, Selection(table=table, round=round)).findings]


def _judged(app: LedgerApp, checkpoint: Checkpoint, table: str, round: str) -> tuple[Any, Any]:
    bundle = export_round(app, table, round, checkpoint, merkle=True)
    result = check_bundle(json.loads(json.dumps(bundle)), checkpoint)
    assert result.ok, result.problems
    assert result.judged and result.replayed == len(bundle["state"]["rounds"]) + 1
    assert [f.to_json() for f in result.findings] == _verify_findings(app, table, round)
    return bundle, result


def test_a_stud_jackpot_round_is_rejudged_from_its_pool(app: LedgerApp) -> None:
    checkpoint, _ = _sealed(app, _stud_lines(), *JACKPOT)
    bundle, result = _judged(app, checkpoint, *JACKPOT)
    assert result.findings == []
    assert "STUD/pool/PJ-1" in result.state_keys and bundle["state"]["before"] is not None
    # both tables move the pool: the other table's rounds between the notes are replayed
    assert {r["table"] for r in bundle["state"]["rounds"]} == {"STUD-01", "STUD-02"}


@pytest.mark.slow_postgres  # PostgreSQL's export and check: by default in the tests above
def test_a_planted_wrong_award_is_the_finding_verify_gives(app: LedgerApp) -> None:
    checkpoint, _ = _sealed(app, _stud_lines(planted=True), *JACKPOT)
    _, result = _judged(app, checkpoint, *JACKPOT)
    assert [(f.code, f.bet) for f in result.findings] == [("jackpot_mismatch", "j2")]
    assert result.findings[0].recorded == {"hand": "royal_flush", "amount": "99999"}


@pytest.mark.slow_postgres  # PostgreSQL's export and check: by default in the tests above
def test_a_3cb_round_with_carried_bets_is_rejudged(app: LedgerApp) -> None:
    lines = [dict(x) for x in simulate([GAMES["3CB"]], rounds=12, tables=1, seed=2).lines]
    carried = next(x for x in lines if x["type"] == "bet_carried")
    checkpoint, _ = _sealed(app, lines, carried["table"], carried["round"])
    bundle, result = _judged(app, checkpoint, carried["table"], carried["round"])
    before = bundle["state"]["before"]["entries"][f"3CB/table/{carried['table']}"]
    assert before["value"]["state"]["carry"]["bets"], "the carried bets come from the earlier note"
    assert result.findings == []


@pytest.mark.slow_postgres  # PostgreSQL's export and check: by default in the tests above
def test_a_3cb_round_whose_carried_bets_are_still_open_gets_the_notice(
    app: LedgerApp, tmp_path: Path
) -> None:
    """The table's newest round when sealed carried bets: ``check-bundle`` gives the
    ``carry_outstanding`` notice ``verify --round`` gives (information, exit 0)."""
    lines = [dict(x) for x in simulate([GAMES["3CB"]], rounds=12, tables=1, seed=2).lines]
    carried = next(x for x in lines if x["type"] == "bet_carried")
    table, target = carried["table"], carried["from_round"]
    lines = [x for x in lines if x["round"] <= target]  # the table plays no later round
    checkpoint, key = _sealed(app, lines, table, target)
    bundle, result = _judged(app, checkpoint, table, target)
    notices = [(f.code, f.bet, f.severity) for f in result.findings]
    assert ("carry_outstanding", carried["bet"], "info") in notices
    assert {f.code for f in result.findings} == {"carry_outstanding"} and not result.errors
    (tmp_path / "b.json").write_text(json.dumps(bundle))
    (tmp_path / "cp.json").write_text(checkpoint.dumps())
    (tmp_path / "pub.pem").write_bytes(public_pem(key.public_key()))
    shown = runner.invoke(
        cli_app,
        [
            "check-bundle",
            str(tmp_path / "b.json"),
            "--checkpoint",
            str(tmp_path / "cp.json"),
            "--public-key",
            str(tmp_path / "pub.pem"),
        ],
    )
    assert shown.exit_code == 0, shown.output
    assert f"carry_outstanding at {table}/{target} bet {carried['bet']}" in shown.output
    # Once a later round restated the bets, a bundle against a newer note gives no notice.
    everything = [dict(x) for x in simulate([GAMES["3CB"]], rounds=12, tables=1, seed=2).lines]
    _ingest(app, everything[len(lines) :])
    later = seal(app, key).checkpoint
    seal_tree(app, key, later)
    _, result = _judged(app, later, table, target)
    assert all(f.code != "carry_outstanding" for f in result.findings)


@pytest.mark.slow_postgres  # PostgreSQL's export and check: by default in the tests above
def test_an_sp9_round_is_rejudged_from_its_table_bank(app: LedgerApp) -> None:
    lines = [dict(x) for x in simulate([GAMES["SP9"]], rounds=12, tables=1, seed=2).lines]
    refused = next(x for x in lines if x["type"] == "bank_refused")
    checkpoint, _ = _sealed(app, lines, refused["table"], refused["round"])
    bundle, result = _judged(app, checkpoint, refused["table"], refused["round"])
    assert result.state_keys == [f"SP9/table/{refused['table']}"] and result.findings == []
    assert bundle["state"]["before"]["entries"][result.state_keys[0]]["value"]["state"]["banker"] is not None


def n(section: dict[str, Any]) -> int:
    """The events of the state part's first round."""
    count: int = section["rounds"][0]["events"]
    return count


def _flip(text: str) -> str:
    raw = bytearray(base64.b64decode(text))
    raw[0] ^= 1
    return base64.b64encode(bytes(raw)).decode()


TAMPERS = {
    "before entry": (
        lambda s: s["before"]["entries"]["STUD/pool/PJ-1"]["value"]["state"].update(balance="1.00"),
        "the state entry STUD/pool/PJ-1 is not the one the earlier note signs",
    ),
    "after entry": (
        lambda s: s["after"]["STUD/pool/PJ-1"]["value"].update(moves=1),
        "the state entry STUD/pool/PJ-1 is not the one the bundle's note signs",
    ),
    "entry proof": (
        lambda s: s["after"]["STUD/pool/PJ-1"].update(proof=_flip(s["after"]["STUD/pool/PJ-1"]["proof"])),
        "is not the one the bundle's note signs",
    ),
    "round proof": (
        lambda s: s.update(hashes=_flip(s["hashes"])),  # the first hash of the first round's proof
        "is not leaf",
    ),
    "round left out": (
        lambda s: s.update(rounds=s["rounds"][1:], events=pack_events(unpack_events(s["events"])[n(s) :])),
        "a round is missing, added or out of order",
    ),
    "round twice": (
        lambda s: s.update(
            rounds=[s["rounds"][0], *s["rounds"]],
            events=pack_events(unpack_events(s["events"])[: n(s)] + unpack_events(s["events"])),
        ),
        "do not close between its two notes, once each",
    ),
    "consistency": (
        lambda s: s["before"].update(consistency=_flip(s["before"]["consistency"])),
        "the consistency proof fails",
    ),
}


@pytest.fixture(scope="module")
def _sealed_jackpot(module_db_url: str) -> tuple[dict[str, Any], Checkpoint]:
    """The jackpot round's Merkle bundle and its checkpoint, built once per store for the tests
    that only change the bundle (check-bundle reads no store)."""
    ledger = open_ledger(module_db_url)
    try:
        checkpoint, _ = _sealed(ledger, _stud_lines(), *JACKPOT)
        return export_round(ledger, *JACKPOT, checkpoint, merkle=True), checkpoint
    finally:
        ledger.close()


@pytest.fixture
def jackpot_bundle(_sealed_jackpot: tuple[dict[str, Any], Checkpoint]) -> tuple[dict[str, Any], Checkpoint]:
    """A fresh copy of the module's jackpot bundle, and its checkpoint."""
    bundle, checkpoint = _sealed_jackpot
    return copy.deepcopy(bundle), checkpoint


@pytest.mark.slow_postgres  # PostgreSQL's export and check: by default in the tests above
@pytest.mark.parametrize("tamper", sorted(TAMPERS))
def test_a_changed_state_part_breaks_the_proof(
    jackpot_bundle: tuple[dict[str, Any], Checkpoint], tamper: str
) -> None:
    bundle, checkpoint = jackpot_bundle
    change, message = TAMPERS[tamper]
    bad = copy.deepcopy(bundle)
    change(bad["state"])
    result = check_bundle(bad, checkpoint)
    assert len(result.problems) == 1 and message in result.problems[0], result.problems
    assert not result.judged


def _witness(folder: Path, name: str) -> Any:
    path = folder / name
    ran = runner.invoke(
        cli_app, ["witness", "keygen", "--out", str(path), "--name", f"regulator.example/{name}"]
    )
    assert ran.exit_code == 0, ran.output
    return load_signing_key(str(path)), str(path) + ".vkey"


@pytest.mark.slow_postgres  # PostgreSQL's export and check: by default in the tests above
def test_check_bundle_offline_with_only_public_keys(app: LedgerApp, tmp_path: Path) -> None:
    """The inspector's files: the bundle, the checkpoint, the operator's public key, the
    witnesses' keys. The notes are cosigned 2 of 2; without the earlier note's cosignatures,
    or with a changed entry, exit 3 and one line."""
    checkpoint, key = _sealed(app, _stud_lines(planted=True), *JACKPOT)
    witnesses = [_witness(tmp_path, "w1"), _witness(tmp_path, "w2")]
    (tmp_path / "op.pub").write_bytes(public_pem(key.public_key()))
    (tmp_path / "cp.json").write_text(checkpoint.dumps())
    with Heads(app, create=False) as heads:
        sizes = heads.listing()
        notes = [heads.note_at(size) for size in sizes]
        for note in notes:
            assert note is not None
            lines = [
                cosign(note.body.text(), w.name, w.private_key, 1_700_000_000).line() for w, _ in witnesses
            ]
            heads.add_cosignatures(note.size, lines if note is notes[-1] else lines[:1])
    bundle = tmp_path / "round.json"
    bundle.write_text(json.dumps(export_round(app, *JACKPOT, checkpoint, merkle=True)))
    args = [
        "check-bundle",
        str(bundle),
        "--checkpoint",
        str(tmp_path / "cp.json"),
        "--public-key",
        str(tmp_path / "op.pub"),
        *[x for _, vkey in witnesses for x in ("--witness-key", vkey)],
    ]
    ran = runner.invoke(cli_app, [*args, "--quorum", "1"])
    assert ran.exit_code == 1, ran.output  # proven, and the planted award is an error finding
    assert ran.output.startswith(f"proof ok: {JACKPOT[0]}/{JACKPOT[1]}")
    assert "jackpot_mismatch at STUD-02/000006 bet j2" in ran.output
    assert "judged from the signed state of STUD/pool/PJ-1" in ran.output
    refused = runner.invoke(cli_app, [*args, "--quorum", "2"])
    assert refused.exit_code == 3
    [line] = refused.output.strip().splitlines()
    assert line.startswith("integrity broken: the state part's earlier note: the checkpoint note of ")
    assert line.endswith("1 of 2 required cosignatures are valid; none valid from regulator.example/w2")
    obj = json.loads(bundle.read_text())
    obj["state"]["after"]["STUD/pool/PJ-1"]["value"]["state"]["balance"] = "0.00"
    bundle.write_text(json.dumps(obj))
    broken = runner.invoke(cli_app, [*args, "--quorum", "1"])
    assert broken.exit_code == 3
    assert broken.output.strip().splitlines() == [
        "proof broken: the state entry STUD/pool/PJ-1 is not the one the bundle's note signs "
        "(changed, or its proof is wrong)"
    ]


@pytest.mark.slow_postgres  # PostgreSQL's export and check: by default in the tests above
@pytest.mark.parametrize(
    "section",
    [
        {},
        {"game": "STUD", "keys": "x", "before": 1, "after": [], "rounds": {}, "events": 5, "hashes": None},
        {"game": "RL", "keys": [], "before": None, "after": {}, "rounds": [], "events": "", "hashes": ""},
        {"game": "STUD", "keys": [], "before": None, "after": {}, "rounds": [{"events": -1}], "hashes": ""},
        {
            "game": "STUD",
            "keys": ["STUD/pool/PJ-1"],
            "before": None,
            "after": {},
            "rounds": [],
            "hashes": "!",
        },
    ],
)
def test_a_hostile_state_part_is_one_problem(
    jackpot_bundle: tuple[dict[str, Any], Checkpoint], section: dict[str, Any]
) -> None:
    bundle, checkpoint = jackpot_bundle
    result = check_bundle({**bundle, "state": section}, checkpoint)
    assert len(result.problems) == 1 and not result.judged, result.problems


@pytest.mark.slow_postgres  # PostgreSQL's export and check: by default in the tests above
def test_a_bomb_of_packed_events_is_refused(jackpot_bundle: tuple[dict[str, Any], Checkpoint]) -> None:
    bundle, checkpoint = jackpot_bundle
    state = copy.deepcopy(bundle["state"])
    state["events"] = base64.b64encode(zlib.compress(b"[" + b" " * (1 << 25) + b"]", 9)).decode()
    result = check_bundle({**bundle, "state": state}, checkpoint)
    assert len(result.problems) == 1 and "unpack to more than" in result.problems[0]


def test_a_store_that_compresses_its_rows_exports_and_rejudges(db_url: str) -> None:
    """The tree hashes the compressed rows: the bundle carries the last rows' stored bytes,
    which must decompress to the events; an encrypted store is refused with one line."""
    app = open_ledger(db_url, extra_env={"COMPRESSOR_TOPIC": "eventsourcing.compressor:ZlibCompressor"})
    try:
        checkpoint, _ = _sealed(app, _stud_lines(planted=True), *JACKPOT)
        bundle = export_round(app, *JACKPOT, checkpoint, merkle=True)
        assert "stored" in bundle["merkle"] and all("stored" in r for r in bundle["state"]["rounds"])
        result = check_bundle(bundle, checkpoint)
        assert result.ok and result.judged, result.problems
        assert [f.to_json() for f in result.findings] == _verify_findings(app, *JACKPOT)
        bad = copy.deepcopy(bundle)
        bad["merkle"]["stored"] = base64.b64encode(zlib.compress(b"not the event")).decode()
        assert check_bundle(bad, checkpoint).problems == [
            "the round's last event: the stored bytes it carries are not its last event"
        ]
    finally:
        app.close()


def test_an_encrypted_store_refuses_merkle_bundles(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from eventsourcing.cryptography import AESCipher

    monkeypatch.setenv("LEDGER_CIPHER_KEY", AESCipher.create_key(32))
    app = open_ledger(db_url)
    try:
        checkpoint, _ = _sealed(app, _stud_lines(), *JACKPOT)
        with pytest.raises(BundleError, match="encryption at rest cannot export a Merkle proof"):
            export_round(app, *JACKPOT, checkpoint, merkle=True)
        assert check_bundle(export_round(app, *JACKPOT, checkpoint), checkpoint).ok  # chain links still work
    finally:
        app.close()


def test_notes_without_a_state_root_still_prove_rounds(app: LedgerApp, examples: Path) -> None:
    """A note sealed before state roots (no ledger/state line) still proves a round's events;
    a round that needs the state is refused with one line until a newer seal."""
    key = generate_key()
    with open(examples / "stud.jsonl", encoding="utf-8") as stream:
        Ingestor(app).ingest(numbered_lines(stream))
    with open(examples / "rl.jsonl", encoding="utf-8") as stream:
        Ingestor(app).ingest(numbered_lines(stream))
    checkpoint = seal(app, key).checkpoint
    with MerkleLog(app) as log, Heads(app) as heads:
        note = seal_note(log, heads, key, checkpoint).note  # as sealed before state roots
    assert "ledger/state" not in note.note
    rl = check_bundle(export_round(app, "RL-01", "000001", checkpoint, merkle=True), checkpoint)
    assert rl.ok and rl.judged
    with pytest.raises(BundleError, match="signs no state root"):
        export_round(app, "STUD-01", "000001", checkpoint, merkle=True)
