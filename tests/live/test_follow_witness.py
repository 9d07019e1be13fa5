"""The follower's timed checkpoints cosigned by witnesses (``--seal-every … --witness URL|DIR
--quorum K``): with a witness process (``ledger witness serve``) the cosignature is stored
beside the checkpoint's note; with a witness that does not answer (an offline directory nobody
carries), the follower says the quorum was missed, counts it, and follows on to the end."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ledger.live.follower import Follower, FollowOptions
from ledger.live.sources import Bounds, FileSource
from ledger.merkle.heads import Heads, set_origin
from ledger.proof import checkpoints
from ledger.proof.seal import public_pem
from ledger.storage.store import open_ledger
from ledger.witness.keys import write_key_files
from tests.live.conftest import Captured
from tests.witness.conftest import start

ORIGIN = "casino.example/live-follower"


def _follow_and_seal(tmp_path: Path, lines: list[bytes], witness: str, key: Ed25519PrivateKey) -> Follower:
    """Follow a file fed in steps, sealing every 0.3 s with ``witness`` asked to cosign."""
    feed = tmp_path / "feed.jsonl"
    feed.write_bytes(b"")
    app = open_ledger(f"sqlite:///{tmp_path / 'l.db'}")
    set_origin(app, ORIGIN)
    checkpoints.name_sealing_key(app, key.public_key())
    follower = Follower(
        app,
        FileSource(str(feed)),
        out=Captured(),
        log=Captured(),
        options=FollowOptions(
            Bounds(100, 0.05), seal_every=0.3, seal_key=key, witnesses=(witness,), quorum=1, idle_exit=1.5
        ),
    )

    async def main() -> None:
        task = asyncio.create_task(follower.run())
        with feed.open("ab") as f:
            for n in range(0, len(lines), 300):
                f.write(b"".join(line + b"\n" for line in lines[n : n + 300]))
                f.flush()
                await asyncio.sleep(0.4)
        await task

    try:
        asyncio.run(main())
    finally:
        app.close()
    return follower


@pytest.mark.slow
def test_a_timed_checkpoint_is_cosigned_and_the_cosignature_stored(
    tmp_path: Path, lines: list[bytes]
) -> None:
    key = Ed25519PrivateKey.generate()
    (tmp_path / "op.pub").write_bytes(public_pem(key.public_key()))
    write_key_files(tmp_path / "w1.key", "regulator.example/w1")
    witness = start(tmp_path / "w1.key", [f"{ORIGIN}={tmp_path / 'op.pub'}"], tmp_path / "w1-state")
    try:
        follower = _follow_and_seal(tmp_path, lines, witness.url, key)
    finally:
        witness.stop()
    log = follower.log.text  # type: ignore[attr-defined]
    assert follower.summary.stored == len(lines) and follower.summary.seals >= 1
    assert follower.cosigner is not None and follower.cosigner.cosigned >= 1, log
    assert "cosigned by regulator.example/w1 (quorum 1" in log
    metrics = follower.metrics.text()
    assert f'ledger_follow_cosign_total{{outcome="cosigned"}} {float(follower.cosigner.cosigned)}' in metrics
    app = open_ledger(f"sqlite:///{tmp_path / 'l.db'}", create=False)
    try:
        with Heads(app) as heads:
            notes = [heads.note_at(size) for size in heads.listing()]
    finally:
        app.close()
    cosigned = [n for n in notes if n is not None and "regulator.example/w1" in n.cosigned()]
    assert len(cosigned) == follower.cosigner.cosigned


def test_a_missed_quorum_is_said_and_counted_and_following_goes_on(
    tmp_path: Path, lines: list[bytes]
) -> None:
    offline = tmp_path / "offline-witness"
    offline.mkdir()
    follower = _follow_and_seal(tmp_path, lines, str(offline), Ed25519PrivateKey.generate())
    log = follower.log.text  # type: ignore[attr-defined]
    assert follower.summary.stored == len(lines) and follower.summary.seals >= 1
    assert follower.cosigner is not None and follower.cosigner.cosigned == 0
    assert follower.cosigner.missed >= 1 and "not cosigned (quorum 1): 0 of 1 required" in log
    assert (
        f'ledger_follow_cosign_total{{outcome="missed"}} {float(follower.cosigner.missed)}'
        in follower.metrics.text()
    )
    assert list(offline.glob("checkpoint-*.request"))  # asked, waiting for the carried answer
