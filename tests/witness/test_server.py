"""`ledger witness serve` as a separate process, spoken to over HTTP: every C2SP tlog-witness
answer, hostile input (malformed, huge, wrong origin, wrong proof length, many at once) answered
without a crash and without changing the state, and the client's 409 retry and quorum."""

from __future__ import annotations

import base64
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ledger.proof.note import (
    cosignature_time,
    open_note,
    parse_note,
    require_quorum,
    sign_note,
    verifier_key,
)
from ledger.witness.client import QuorumError, WitnessError, collect_cosignatures, request_cosignature
from ledger.witness.keys import load_witness_key
from ledger.witness.protocol import MAX_REQUEST_BYTES, request_body


def post(url: str, body: bytes, path: str = "/add-checkpoint") -> tuple[int, str, str]:
    request = urllib.request.Request(url + path, data=body, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers["Content-Type"], response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read().decode()


def add(url, log, old, size=None, proof=None):
    size = len(log.leaves) if size is None else size
    proof = log.proof_for(size)(old) if proof is None else proof
    return post(url, request_body(old, proof, log.note(size)))


def test_first_checkpoint_is_cosigned_with_a_valid_timestamped_cosignature(witnesses, keys, log):
    status, content_type, text = add(witnesses[0].url, log, 0)
    assert status == 200 and content_type.startswith("text/plain")
    note = parse_note(log.note() + text)
    w1 = load_witness_key(str(keys.witnesses[0]) + ".vkey")
    assert require_quorum(note, [w1], 1) == ["regulator.example/w1"]
    assert abs(cosignature_time(note.signatures[1], w1, note.text) - time.time()) < 60


def test_an_extension_with_its_consistency_proof_is_cosigned(witnesses, log):
    assert add(witnesses[0].url, log, 0, size=7)[0] == 200
    log.grow(9)
    assert add(witnesses[0].url, log, 7)[0] == 200
    assert add(witnesses[0].url, log, len(log.leaves))[0] == 200  # the same again: cosigned again


def test_stale_old_size_is_409_with_the_witness_size(witnesses, log):
    assert add(witnesses[0].url, log, 0, size=6)[0] == 200
    status, content_type, text = add(witnesses[0].url, log, 3)
    assert (status, content_type, text) == (409, "text/x.tlog.size", "6\n")
    status, _, text = add(witnesses[0].url, log, 0)
    assert (status, text) == (409, "6\n")


def test_unknown_origin_is_404(witnesses, keys):
    note = sign_note(
        "other.example/log\n1\n" + base64.b64encode(b"\1" * 32).decode() + "\n",
        "other.example/log",
        keys.operator,
    )
    status, _, text = post(witnesses[0].url, request_body(0, [], note))
    assert status == 404 and "other.example/log" in text


def test_a_note_not_signed_by_the_operator_is_403(witnesses, log):
    forged = sign_note(log.body().text(), log.origin, Ed25519PrivateKey.generate())
    status, _, text = post(witnesses[0].url, request_body(0, [], forged))
    assert status == 403 and "not signed by the operator" in text


def test_a_tampered_operator_signature_is_403(witnesses, log):
    note = log.note()
    head, _, sig = note.rstrip("\n").rpartition(" ")
    raw = bytearray(base64.b64decode(sig))
    raw[-1] ^= 1
    status, _, _ = post(
        witnesses[0].url, request_body(0, [], f"{head} {base64.b64encode(bytes(raw)).decode()}\n")
    )
    assert status == 403


def test_an_inconsistent_proof_is_422_and_changes_nothing(witnesses, log):
    assert add(witnesses[0].url, log, 0, size=5)[0] == 200
    log.grow(4)
    proof = log.proof_for()(5)
    proof[0] = bytes(32)
    assert add(witnesses[0].url, log, 5, proof=proof)[0] == 422
    assert add(witnesses[0].url, log, 0)[2] == "5\n"  # the state is still size 5
    assert add(witnesses[0].url, log, 5)[0] == 200


@pytest.mark.parametrize(
    "body, reason",
    [
        (b"", "no empty line"),
        (b"old 0\n", "no empty line"),
        (b"new 0\n\nx", "starts with 'old SIZE'"),
        (b"old 01\n\nx", "leading zeros"),
        (b"old -1\n\nx", "leading zeros"),
        (b"old 0\n!!!\n\nx", "not base64"),
        (b"old 0\nAAAA\n\nx", "32 bytes"),
        (b"old 0\n\n", "no checkpoint"),
        (b"old 0\n\nnot a note\n", "blank line"),
        (b"old 0\n\n\xff\xfe\n\n\xe2\x80\x94 x AAAAAAA=\n", "UTF-8"),
        (b"old 0\n" + b"A" * 43 + b"=\n" * 64 + b"\nx", "more than 63"),
    ],
)
def test_malformed_requests_are_400_with_the_reason(witnesses, body, reason):
    status, _, text = post(witnesses[0].url, body)
    assert status == 400 and reason in text


def test_old_size_above_the_checkpoint_is_400(witnesses, log):
    status, _, text = add(witnesses[0].url, log, 11, proof=[])
    assert status == 400 and "above the checkpoint's size" in text


def test_a_proof_of_the_wrong_length_is_400(witnesses, log):
    assert add(witnesses[0].url, log, 0, size=3)[0] == 200
    proof = log.proof_for()(3)
    for wrong in (proof[:-1], [*proof, proof[0]], []):
        status, _, text = add(witnesses[0].url, log, 3, proof=wrong)
        assert status == 400 and f"has {len(proof)} hashes" in text
    assert add(witnesses[0].url, log, 0)[2] == "3\n"


def test_a_body_above_the_limit_is_refused_unread(witnesses, log):
    status, _, _ = post(witnesses[0].url, b"old 0\n\n" + b"x" * (MAX_REQUEST_BYTES + 1))
    assert status == 413


def test_other_paths_and_methods_are_refused(witnesses):
    assert post(witnesses[0].url, b"old 0\n\nx", "/nothing")[0] == 404
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(witnesses[0].url + "/add-checkpoint", timeout=10)
    assert raised.value.code == 405


def test_many_requests_at_once_are_answered_and_serialised_per_log(witnesses, log):
    """32 concurrent extensions that each claim the witness is at size 10: the log's lock lets
    exactly one through; every other one meets the new size (409); the state is that one's."""
    log.grow(20)
    assert add(witnesses[1].url, log, 0, size=10)[0] == 200
    sizes = [11 + i % 20 for i in range(32)]
    bodies = [request_body(10, log.proof_for(size)(10), log.note(size)) for size in sizes]
    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda b: post(witnesses[1].url, b), bodies))
    winners = [size for size, answer in zip(sizes, answers, strict=True) if answer[0] == 200]
    assert len(winners) == 1
    assert all(a[:3] == (409, "text/x.tlog.size", f"{winners[0]}\n") for a in answers if a[0] != 200)
    assert add(witnesses[1].url, log, winners[0])[0] == 200  # the log goes on from there


def test_client_retries_once_from_the_size_of_a_409(witnesses, keys, log):
    w1 = load_witness_key(str(keys.witnesses[0]) + ".vkey")
    request_cosignature(witnesses[0].url, log.note(4), 0, log.proof_for(4), witness=w1)
    log.grow(5)
    sig = request_cosignature(witnesses[0].url, log.note(), 0, log.proof_for(), witness=w1)
    assert cosignature_time(sig, w1, log.body().text()) is not None


def test_client_refuses_an_older_checkpoint_than_the_witness_has(witnesses, log):
    request_cosignature(witnesses[0].url, log.note(8), 0, log.proof_for(8))
    with pytest.raises(WitnessError, match="newer than this one"):
        request_cosignature(witnesses[0].url, log.note(5), 0, log.proof_for(5))


def test_collect_reaches_a_quorum_of_two_and_names_what_failed(witnesses, keys, log):
    vkeys = [load_witness_key(str(k) + ".vkey") for k in keys.witnesses[:2]]
    urls = [w.url for w in witnesses]
    sigs = collect_cosignatures(urls, log.note(), {}, log.proof_for(), 2, witnesses=vkeys)
    note = open_note(
        log.note() + "".join(s.line() + "\n" for s in sigs),
        [verifier_key(log.origin, keys.operator.public_key())],
    )
    assert require_quorum(note, vkeys, 2) == ["regulator.example/w1", "regulator.example/w2"]
    with pytest.raises(QuorumError, match=r"1 of 2 required .*127\.0\.0\.1:9/add-checkpoint: unreachable"):
        collect_cosignatures([urls[0], "http://127.0.0.1:9"], log.note(), {}, log.proof_for(), 2, timeout=2)
