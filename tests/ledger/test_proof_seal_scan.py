"""``scan_chain`` (``ledger.proof.seal``), the whole-store pass of a v1 seal, keeps what verify's
pass keeps: no head per save (one per link would grow with the store), and still finds the
newest link and refuses a broken chain."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ledger.codec.chain import CHAIN_ID, unframe
from ledger.proof.seal import (
    ChainPosition,
    SealError,
    checkpoint_findings,
    generate_key,
    scan_chain,
    seal_store,
)
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import LedgerApp


def _fill(app: LedgerApp, examples: Path) -> None:
    for name in ("rl.jsonl", "fpc.jsonl"):
        with open(examples / name, encoding="utf-8") as stream:
            assert Ingestor(app, batch_events=8).ingest(numbered_lines(stream)).rejected == []


def test_the_scan_keeps_no_head_per_save_and_finds_the_newest_link(app: LedgerApp, examples: Path) -> None:
    _fill(app, examples)
    newest = app.stored(CHAIN_ID)[-1]
    assert newest.originator_version > 10  # many saves: a head kept per save would show
    scan = scan_chain(app)
    assert scan.ok and scan.findings == []
    assert not scan.verifier.heads and scan.verifier.heads_seen == set()
    assert scan.position is not None
    assert (scan.position.links, scan.position.head) == (newest.originator_version, newest.digest)
    assert scan.position.events == len([row for page in app.rows() for row in page])
    checkpoint = seal_store(app, generate_key())
    assert checkpoint.position == scan.position
    assert checkpoint_findings(app, checkpoint) == []


def test_the_scan_without_heads_still_refuses_a_broken_chain(
    app: LedgerApp, raw: Any, examples: Path
) -> None:
    _fill(app, examples)
    notification_id, state = raw.rows()[5]
    _digest, content = unframe(state)
    raw.set_state(notification_id, state.replace(content[:20], content[:19] + b" "))
    scan = scan_chain(app)
    assert not scan.ok and scan.findings
    assert scan.verifier.heads_seen == set()
    with pytest.raises(SealError, match="does not verify"):
        seal_store(app, generate_key())
    assert isinstance(scan.position, ChainPosition)  # the newest link is still named
