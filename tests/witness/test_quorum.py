"""The auditor's quorum check (`--witness-key`, `--quorum`) on checkpoint notes, in process."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ledger.proof.note import CheckpointBody, cosign, sign_note
from ledger.witness.keys import load_signing_key, parse_log_option
from ledger.witness.quorum import QuorumRefused, QuorumUsage, quorum_from_options, require_witnessed

HEAD = "ab" * 32


@pytest.fixture(scope="module")
def parts(keys):
    body = CheckpointBody(
        "casino.example/ledger", 12, b"\7" * 32, (f"ledger/chain 5 {HEAD}", "ledger/snapshot 9 cd")
    )
    note = sign_note(body.text(), body.origin, keys.operator)
    signers = [load_signing_key(k) for k in keys.witnesses]
    lines = [cosign(body.text(), s.name, s.private_key, 1_700_000_000).line() + "\n" for s in signers]
    files = [str(k) + ".vkey" for k in keys.witnesses[:2]]
    return body, note, lines, files


def test_options_default_to_every_key_and_refuse_nonsense(parts, keys):
    _, _, _, files = parts
    assert quorum_from_options(None, None) is None
    assert quorum_from_options(files, None).required == 2
    assert quorum_from_options([*files, files[0]], 1).required == 1
    for quorum in (0, 3):
        with pytest.raises(QuorumUsage, match="between 1 and the number of distinct"):
            quorum_from_options([*files, files[0]], quorum)
    with pytest.raises(QuorumUsage, match="--quorum needs the witnesses' keys"):
        quorum_from_options([], 1)
    path = keys.folder / "log.vkey"
    path.write_text(parse_log_option(keys.log_option())[1].vkey() + "\n")
    with pytest.raises(QuorumUsage, match=r"not a witness's cosignature/v1 key"):
        quorum_from_options([str(path)], 1)


def test_a_note_with_the_quorum_is_accepted_and_names_its_cosigners(parts, keys):
    _, note, lines, files = parts
    quorum = quorum_from_options(files, 2)
    _, _, names = require_witnessed(
        note + lines[0] + lines[1] + lines[2],
        keys.operator.public_key(),
        quorum,
        events=12,
        links=5,
        head=HEAD,
    )
    assert names == ["regulator.example/w1", "regulator.example/w2"]


@pytest.mark.parametrize(
    "which, message",
    [
        (
            lambda n, ls: n + ls[0],
            r"1 of 2 required cosignatures are valid; none valid from "
            r"regulator\.example/w2",
        ),
        (lambda n, ls: n + ls[0] + ls[0] + ls[2], "1 of 2 required"),  # a line twice, another witness
        (lambda n, ls: n, "0 of 2 required"),
    ],
)
def test_too_few_valid_cosignatures_are_refused(parts, keys, which, message):
    _, note, lines, files = parts
    with pytest.raises(QuorumRefused, match=message):
        require_witnessed(which(note, lines), keys.operator.public_key(), quorum_from_options(files, 2))


def test_a_note_that_does_not_match_the_checkpoint_or_the_operator_is_refused(parts, keys):
    _, note, lines, files = parts
    quorum = quorum_from_options(files, 1)
    cosigned = note + lines[0]
    with pytest.raises(QuorumRefused, match="not of the checkpoint's 13 events"):
        require_witnessed(cosigned, keys.operator.public_key(), quorum, events=13)
    with pytest.raises(QuorumRefused, match="does not name the checkpoint's link 6"):
        require_witnessed(cosigned, keys.operator.public_key(), quorum, links=6, head=HEAD)
    with pytest.raises(QuorumRefused, match="not the operator's"):
        require_witnessed(cosigned, Ed25519PrivateKey.generate().public_key(), quorum)
    with pytest.raises(QuorumRefused, match="not the operator's"):
        require_witnessed("junk", keys.operator.public_key(), quorum)


def _ledger(*args):
    from typer.testing import CliRunner

    from cli.main import app

    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.mark.parametrize(
    "args, message",
    [
        (["seal", "--quorum", "1"], "--quorum needs the witnesses"),
        (["seal", "--witness", "http://127.0.0.1:9", "--quorum", "2"], "--quorum 2: between 1 and"),
        (["verify", "--witness-key", "W"], "--witness-key goes with --since, --segment or"),
        (["verify", "--since", "last", "--quorum", "1"], "--quorum needs the witnesses' keys"),
        (["verify", "--since", "last", "--witness-key", "/nonexistent.vkey"], "cannot read"),
    ],
)
def test_quorum_options_given_wrongly_are_exit_2_in_one_line(tmp_path, keys, args, message):
    args = [a.replace("W", f"{keys.witnesses[0]}.vkey") if a == "W" else a for a in args]
    done = _ledger(
        *args,
        "--db",
        f"sqlite:///{tmp_path / 'none.db'}",
        *(["--key", keys.folder / "op.key"] if args[0] == "seal" else []),
    )
    assert done.exit_code == 2 and message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "none.db").exists()
