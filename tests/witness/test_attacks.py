"""Attacks on the log that witnesses (separate processes, over HTTP) must refuse: a split view,
a rollback, a replayed cosignature, a truncated log, and a witness whose state was deleted or
rolled back (what it then accepts is documented in docs/WITNESS.md, and tested here)."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

from cli.main import app
from ledger.proof.note import NoteError, cosign, parse_note, require_quorum
from ledger.witness.client import QuorumError, WitnessError, collect_cosignatures, request_cosignature
from ledger.witness.keys import load_signing_key, load_witness_key


@pytest.fixture(scope="module")
def vkeys(keys):
    return [load_witness_key(str(k) + ".vkey") for k in keys.witnesses]


def cosigned(log, signatures, size=None):
    return parse_note(log.note(size) + "".join(s.line() + "\n" for s in signatures))


def test_split_view_same_size_other_root_is_refused_by_any_witness_that_saw_one(witnesses, log, vkeys):
    other = log.fork(5, "other history")
    assert other.body().size == log.body().size and other.body().root != log.body().root
    w1, w2 = (w.url for w in witnesses)
    request_cosignature(w1, log.note(), 0, log.proof_for(), witness=vkeys[0])
    request_cosignature(w2, other.note(), 0, other.proof_for(), witness=vkeys[1])
    with pytest.raises(WitnessError, match=r"refused the checkpoint of size 10 \(422\)"):
        request_cosignature(w1, other.note(), 0, other.proof_for())
    with pytest.raises(WitnessError, match=r"\(422\)"):
        request_cosignature(w2, log.note(), 10, log.proof_for())
    for view in (log, other):  # neither history gets the 2-of-2 quorum
        with pytest.raises(QuorumError, match="1 of 2 required"):
            collect_cosignatures([w1, w2], view.note(), {}, view.proof_for(), 2, witnesses=vkeys)


def test_a_later_fork_of_a_cosigned_checkpoint_is_refused(witnesses, log):
    request_cosignature(witnesses[0].url, log.note(), 0, log.proof_for())
    rewritten = log.fork(3, "rewritten").grow(6)
    with pytest.raises(WitnessError, match=r"\(422\)"):
        request_cosignature(witnesses[0].url, rewritten.note(), 10, rewritten.proof_for())


def test_rollback_an_older_checkpoint_presented_as_the_newest_is_refused(witnesses, log):
    request_cosignature(witnesses[0].url, log.note(), 0, log.proof_for())
    with pytest.raises(WitnessError, match="size 10, newer than this one"):
        request_cosignature(witnesses[0].url, log.note(6), 0, log.proof_for(6))
    with pytest.raises(WitnessError, match=r"\(400\).*above the checkpoint's size"):
        request_cosignature(witnesses[0].url, log.note(6), 10, lambda old: [])


def test_truncated_log_after_a_cosigned_checkpoint_is_refused(witnesses, log):
    request_cosignature(witnesses[0].url, log.note(), 0, log.proof_for())
    truncated = log.fork(7, "unused")
    truncated.leaves = truncated.leaves[:7]
    truncated.grow(5, "after truncation")
    with pytest.raises(WitnessError, match=r"\(422\)"):
        request_cosignature(witnesses[0].url, truncated.note(), 10, truncated.proof_for())
    with pytest.raises(WitnessError, match="newer than this one"):
        request_cosignature(witnesses[0].url, truncated.note(7), 0, truncated.proof_for(7))


def test_a_replayed_cosignature_does_not_count_for_another_root(witnesses, log, vkeys, keys):
    sig = request_cosignature(witnesses[0].url, log.note(), 0, log.proof_for(), witness=vkeys[0])
    assert require_quorum(cosigned(log, [sig]), vkeys[:1], 1)
    log.grow(1)
    with pytest.raises(NoteError, match="0 of 1 required cosignatures"):
        require_quorum(cosigned(log, [sig]), vkeys[:1], 1)  # old cosignature on the new root
    rewritten = log.fork(3, "rewritten")
    with pytest.raises(NoteError, match=r"none valid from regulator\.example/w1"):
        require_quorum(cosigned(rewritten, [sig], 10), vkeys[:1], 1)
    # a cosignature made by another key under the witness's name does not count either
    forged = cosign(
        log.body().text(), "regulator.example/w1", load_signing_key(keys.witnesses[1]).private_key, 1
    )
    with pytest.raises(NoteError):
        require_quorum(cosigned(log, [forged]), vkeys[:1], 1)


@pytest.mark.slow  # two more witness processes, as the rollback below; the witnesses' refusals by
# default in the tests above
def test_deleted_state_refuses_to_start_and_a_new_one_is_outvoted(
    witnesses, keys, log, vkeys, tmp_path, start_witness
):
    """A witness whose state is deleted does not start again by itself (exit 2); restarted with
    --init it trusts the next checkpoint it sees (a fork included), and only the quorum with a
    witness that kept its state refuses the fork."""
    logs = [keys.log_option(log.origin)]
    w3 = start_witness(keys.witnesses[2], logs, tmp_path / "w3")
    request_cosignature(w3.url, log.note(), 0, log.proof_for(), witness=vkeys[2])
    request_cosignature(witnesses[0].url, log.note(), 0, log.proof_for(), witness=vkeys[0])
    w3.stop()
    shutil.rmtree(tmp_path / "w3")
    ran = CliRunner().invoke(
        app,
        [
            "witness",
            "serve",
            "--key",
            str(keys.witnesses[2]),
            "--log",
            logs[0],
            "--state",
            str(tmp_path / "w3"),
            "--listen",
            "127.0.0.1:0",
        ],
    )
    assert ran.exit_code == 2 and "not a witness state directory" in ran.stderr
    w3 = start_witness(keys.witnesses[2], logs, tmp_path / "w3", init=True)
    fork = log.fork(4, "rewritten").grow(2)
    request_cosignature(w3.url, fork.note(), 0, fork.proof_for(), witness=vkeys[2])  # accepted
    with pytest.raises(QuorumError, match=r"1 of 2 required.*422"):
        collect_cosignatures(
            [w3.url, witnesses[0].url], fork.note(), {}, fork.proof_for(), 2, witnesses=[vkeys[2], vkeys[0]]
        )


@pytest.mark.slow  # two more witness processes, as the deleted state above
def test_rolled_back_state_resumes_from_its_old_size(witnesses, keys, log, vkeys, tmp_path, start_witness):
    """A witness whose state is restored from an old copy answers 409 with the old size: the
    honest log goes on from there, and a fork after the old size but before what it had cosigned
    is accepted by it alone; the witness that kept its state refuses the fork, and the checkpoint
    the rolled-back witness had cosigned proves the fork inconsistent."""
    logs = [keys.log_option(log.origin)]
    w3 = start_witness(keys.witnesses[2], logs, tmp_path / "w3")
    request_cosignature(w3.url, log.note(), 0, log.proof_for())
    shutil.copytree(tmp_path / "w3", tmp_path / "w3-at-10", ignore=shutil.ignore_patterns("lock"))
    log.grow(6)
    honest16 = cosigned(log, [request_cosignature(w3.url, log.note(), 10, log.proof_for())])
    request_cosignature(witnesses[0].url, log.note(), 0, log.proof_for())
    w3.stop()
    shutil.rmtree(tmp_path / "w3")
    shutil.copytree(tmp_path / "w3-at-10", tmp_path / "w3")
    w3 = start_witness(keys.witnesses[2], logs, tmp_path / "w3", init=False)
    fork = log.fork(12, "rewritten after 12")
    forked16 = cosigned(
        fork, [request_cosignature(w3.url, fork.note(), 16, fork.proof_for(), witness=vkeys[2])]
    )
    # w3 has now cosigned two roots of size 16: the two notes prove it was rolled back
    assert require_quorum(honest16, vkeys[2:], 1) == require_quorum(forked16, vkeys[2:], 1)
    assert honest16.text.splitlines()[1] == forked16.text.splitlines()[1] == "16"
    assert honest16.text != forked16.text
    with pytest.raises(QuorumError, match="1 of 2 required"):
        collect_cosignatures(
            [w3.url, witnesses[0].url], fork.note(), {}, fork.proof_for(), 2, witnesses=[vkeys[2], vkeys[0]]
        )
    log.grow(2)
    with pytest.raises(WitnessError, match=r"\(422\)"):  # w3 is on the fork now: it refuses
        request_cosignature(w3.url, log.note(), 16, log.proof_for())  # the honest log, w1 does not
    request_cosignature(witnesses[0].url, log.note(), 16, log.proof_for(), witness=vkeys[0])
