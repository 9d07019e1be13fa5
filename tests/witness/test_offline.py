"""`ledger witness keygen` and `ledger witness cosign` (file in, file out) with the directory
exchange of the client; the state directory's refusals (not initialised, in use, not empty); key
files and verifier keys."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from typer.testing import CliRunner

from cli.main import app
from ledger.proof.note import (
    CheckpointBody,
    cosigner_key,
    parse_note,
    parse_verifier,
    require_quorum,
    sign_note,
)
from ledger.witness.client import WitnessError, WitnessPending, request_cosignature
from ledger.witness.core import Witness
from ledger.witness.keys import (
    WitnessKeyError,
    default_name,
    load_signing_key,
    load_witness_key,
    parse_log_option,
)
from ledger.witness.protocol import request_body
from ledger.witness.state import StateError, WitnessState

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "schemas" / "witness-cosign.json"


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def run(*args: str) -> Ran:
    """`ledger witness ARGS`, in process (the server tests run it as a real process)."""
    result = CliRunner().invoke(app, ["witness", *args])
    return Ran(result.exit_code, result.stdout, result.stderr)


def test_keygen_writes_private_public_and_verifier_key(tmp_path):
    ran = run("keygen", "--out", str(tmp_path / "w.key"), "--name", "regulator.example/w9")
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "w.key").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "w.key.pub").read_text().startswith("-----BEGIN PUBLIC KEY-----")
    vkey = (tmp_path / "w.key.vkey").read_text().strip()
    assert vkey.startswith("regulator.example/w9+") and vkey in ran.stdout
    assert load_signing_key(tmp_path / "w.key").vkey() == vkey
    again = run("keygen", "--out", str(tmp_path / "w.key"))
    assert again.returncode == 2 and "exists (use --force" in again.stderr


def test_a_public_key_file_names_the_witness_by_its_derived_name(tmp_path, keys):
    pub = load_witness_key(str(keys.witnesses[2]) + ".pub")
    assert pub.name.startswith("ledger-witness-")
    assert pub.vkey() == load_witness_key(str(keys.witnesses[2]) + ".vkey").vkey()
    with pytest.raises(WitnessKeyError, match="log's key"):
        (tmp_path / "log.vkey").write_text(parse_log_option(keys.log_option())[1].vkey())
        load_witness_key(tmp_path / "log.vkey")


def test_verifier_keys_whose_base64_holds_a_plus_are_read():
    for _ in range(200):
        public = Ed25519PrivateKey.generate().public_key()
        vkey = cosigner_key(default_name(public), public)
        if "+" in vkey.split("+", 2)[2]:
            assert parse_verifier(vkey).vkey() == vkey
            return
    pytest.fail("no key with '+' in its base64 in 200 tries")


def test_a_state_must_be_initialised_once_and_is_locked_while_used(tmp_path):
    with pytest.raises(StateError, match=r"not a witness state directory.*--init"):
        WitnessState(tmp_path / "missing")
    state = WitnessState(tmp_path / "s", init=True)
    with pytest.raises(StateError, match="in use by another witness"):
        WitnessState(tmp_path / "s")
    state.close()
    WitnessState(tmp_path / "s").close()
    with pytest.raises(StateError, match="not empty"):
        WitnessState(tmp_path / "s", init=True)


def cosign_args(keys, state, request, *extra):
    return (
        "cosign",
        "--key",
        str(keys.witnesses[0]),
        "--log",
        keys.log_option(),
        "--state",
        str(state),
        "--in",
        str(request),
        *extra,
    )


def test_offline_exchange_through_a_directory(tmp_path, keys, log):
    """The log writes a request; the air-gapped witness answers it; the log reads the answer;
    a request from a size the witness did not cosign last is answered with its size (exit 1) and
    written again from that size."""
    exchange, state = tmp_path / "exchange", tmp_path / "state"
    exchange.mkdir()
    w1 = load_witness_key(str(keys.witnesses[0]) + ".vkey")
    with pytest.raises(WitnessPending, match=r"wrote .*checkpoint-10-"):
        request_cosignature(str(exchange), log.note(), 0, log.proof_for())
    [request] = exchange.glob("*.request")
    with pytest.raises(WitnessPending, match="is waiting for"):
        request_cosignature(str(exchange), log.note(), 0, log.proof_for())
    ran = run(*cosign_args(keys, state, request, "--init"), "--log", keys.log_option(log.origin))
    assert ran.returncode == 0 and "cosigned ->" in ran.stdout, ran.stderr
    again = run(*cosign_args(keys, state, exchange), "--log", keys.log_option(log.origin))
    assert (again.returncode, again.stdout) == (0, "no request waiting\n")  # answered already
    sig = request_cosignature(str(exchange), log.note(), 0, log.proof_for(), witness=w1)
    assert require_quorum(parse_note(log.note() + sig.line() + "\n"), [w1], 1) == ["regulator.example/w1"]

    log.grow(5)
    with pytest.raises(WitnessPending):
        request_cosignature(str(exchange), log.note(), 3, log.proof_for())
    [request] = [p for p in exchange.glob("*.request") if "checkpoint-15-" in p.name]
    ran = run(*cosign_args(keys, state, request), "--log", keys.log_option(log.origin), "--json")
    assert ran.returncode == 1 and json.loads(ran.stdout)["answers"][0]["status"] == 409
    jsonschema.validate(json.loads(ran.stdout), json.loads(SCHEMA.read_text()))
    assert request.with_suffix(".response").read_text() == "10\n"
    with pytest.raises(WitnessPending):  # written again, from size 10
        request_cosignature(str(exchange), log.note(), 3, log.proof_for())
    assert request.read_bytes().startswith(b"old 10\n")
    assert (
        run(
            *cosign_args(keys, state, exchange),
            "--log",  # the directory: what waits
            keys.log_option(log.origin),
        ).returncode
        == 0
    )
    request_cosignature(str(exchange), log.note(), 3, log.proof_for(), witness=w1)

    fork = log.fork(12, "forked")  # same size, another root: refused, and the log is told why
    with pytest.raises(WitnessPending):
        request_cosignature(str(exchange), fork.note(), 15, fork.proof_for())
    refused = run(*cosign_args(keys, state, exchange), "--log", keys.log_option(log.origin))
    assert refused.returncode == 3 and "refused (422)" in refused.stderr
    with pytest.raises(WitnessError, match=r"the witness refused the checkpoint of size 15 \(422 "):
        request_cosignature(str(exchange), fork.note(), 15, fork.proof_for())


def test_offline_refusals_exit_3_or_2_and_keep_the_state(tmp_path, keys, log):
    state = tmp_path / "state"
    fork = log.fork(4, "forged")
    good, forged = tmp_path / "good.request", tmp_path / "forged.request"
    good.write_bytes(request_body(0, [], log.note()))
    forged.write_bytes(request_body(10, [], fork.note()))
    logs = ("--log", keys.log_option(log.origin))
    assert run(*cosign_args(keys, state, good, "--init"), *logs).returncode == 0
    ran = run(*cosign_args(keys, state, forged), *logs)
    assert ran.returncode == 3 and "integrity broken: " in ran.stderr and "refused (422)" in ran.stderr
    assert forged.with_suffix(".response").read_text().startswith("422 the checkpoint of size 10")
    unknown = run(*cosign_args(keys, state, good))  # only ORIGIN is followed, not log.origin
    assert unknown.returncode == 2 and "refused (404)" in unknown.stderr
    junk = tmp_path / "junk.request"
    junk.write_bytes(b"old x\n\n")
    assert run(*cosign_args(keys, state, junk), *logs).returncode == 2
    assert run(*cosign_args(keys, state, good), *logs).returncode == 1  # old 0: the witness is at 10
    good.write_bytes(request_body(10, [], log.note()))
    assert run(*cosign_args(keys, state, good), *logs).returncode == 0


def test_core_refuses_without_touching_the_state_file(tmp_path, keys, log):
    state = WitnessState(tmp_path / "s", init=True)
    witness = Witness(
        load_signing_key(keys.witnesses[0]),
        dict([parse_log_option(keys.log_option(log.origin))]),
        state,
        clock=lambda: 1_700_000_000,
    )
    assert witness.add_checkpoint(request_body(0, [], log.note())).ok
    [stored] = (tmp_path / "s" / "logs").iterdir()
    before = (stored.read_bytes(), stored.stat().st_mtime_ns)
    fork = log.fork(9, "other")
    for body in (
        request_body(10, [], fork.note()),
        request_body(0, [], fork.note()),
        request_body(10, [bytes(32)], fork.note()),
        b"old 10\n\n" + b"\0" * 100,
    ):
        assert not witness.add_checkpoint(body).ok
    assert (stored.read_bytes(), stored.stat().st_mtime_ns) == before
    assert stored.read_text() == log.note()
    assert not [p for p in (tmp_path / "s" / "logs").iterdir() if p.name.endswith(".tmp")]
    state.close()


def test_an_empty_tree_with_another_root_than_the_empty_one_is_refused(tmp_path, keys, log):
    state = WitnessState(tmp_path / "s", init=True)
    witness = Witness(
        load_signing_key(keys.witnesses[0]), dict([parse_log_option(keys.log_option(log.origin))]), state
    )
    assert witness.add_checkpoint(request_body(0, [], log.note(0))).ok  # the RFC's empty root
    bad = CheckpointBody(log.origin, 0, b"\1" * 32)
    answer = witness.add_checkpoint(request_body(0, [], sign_note(bad.text(), log.origin, keys.operator)))
    assert answer.status == 422
    state.close()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--listen", "localhost"], "expected HOST:PORT"),
        (["--listen", "127.0.0.1:99999"], "expected HOST:PORT"),
        (["--key", "/nonexistent/w.key"], "cannot read the witness key"),
        (["--log", "no-equals-sign"], "expected ORIGIN=OPERATOR.pub"),
        (["--log", "a b=OP"], "not a valid key name"),
    ],
)
def test_serve_refuses_bad_options_in_one_line(tmp_path, keys, args, message):
    base = {
        "--key": str(keys.witnesses[0]),
        "--log": keys.log_option(),
        "--listen": "127.0.0.1:0",
        "--state": str(tmp_path / "s"),
    }
    base.update(
        dict(zip(args[::2], [a.replace("OP", str(keys.operator_pub)) for a in args[1::2]], strict=True))
    )
    ran = run("serve", "--init", *[x for pair in base.items() for x in pair])
    assert ran.returncode == 2 and message in ran.stderr and len(ran.stderr.splitlines()) == 1


def test_serve_says_so_when_the_port_is_taken(tmp_path, keys):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        ran = run(
            "serve",
            "--key",
            str(keys.witnesses[0]),
            "--log",
            keys.log_option(),
            "--state",
            str(tmp_path / "s"),
            "--init",
            "--listen",
            f"127.0.0.1:{port}",
        )
    assert ran.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in ran.stderr


def test_serve_refuses_a_damaged_state_at_start(tmp_path, keys, log):
    state = WitnessState(tmp_path / "s", init=True)
    witness = Witness(
        load_signing_key(keys.witnesses[0]), dict([parse_log_option(keys.log_option(log.origin))]), state
    )
    assert witness.add_checkpoint(request_body(0, [], log.note())).ok
    assert witness.sizes() == {log.origin: 10}
    state.close()
    [stored] = (tmp_path / "s" / "logs").iterdir()
    stored.write_text(log.note().replace("\n10\n", "\n11\n"))
    ran = run(
        "serve",
        "--key",
        str(keys.witnesses[0]),
        "--log",
        keys.log_option(log.origin),
        "--state",
        str(tmp_path / "s"),
        "--listen",
        "127.0.0.1:0",
    )
    assert ran.returncode == 2 and "the stored checkpoint of" in ran.stderr
    assert "does not verify" in ran.stderr


def test_a_base64_public_key_with_plus_signs_is_not_taken_for_a_verifier_key(tmp_path):
    for _ in range(500):
        public = Ed25519PrivateKey.generate().public_key()
        raw = base64.b64encode(public.public_bytes_raw())
        if raw.count(b"+") >= 2:
            (tmp_path / "w.pub").write_bytes(raw + b"\n")
            assert load_witness_key(tmp_path / "w.pub").name == default_name(public)
            return
    pytest.fail("no key with two '+' in its base64 in 500 tries")


def test_a_state_belongs_to_the_witness_key_it_was_made_for(tmp_path, keys):
    w1, w2 = (load_signing_key(k).vkey() for k in keys.witnesses[:2])
    WitnessState(tmp_path / "s", init=True, witness=w1).close()
    WitnessState(tmp_path / "s", witness=w1).close()
    with pytest.raises(StateError, match=r"is the state of witness regulator\.example/w1"):
        WitnessState(tmp_path / "s", witness=w2)
