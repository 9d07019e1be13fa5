"""The chain check's fast paths give exactly the findings of the plain check.

:class:`~ledger.verify.integrity.ChainVerifier` splits frames in place, keeps digests as bytes
and accepts a link without decoding it when its bytes are the ones the ledger writes for the
events it covers. :class:`_Reference` is the plain check (every frame through ``unframe``,
every link through ``Linked.model_validate_json``); both are fed the same rows, also damaged
ones, and must report the same findings, word for word.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from ledger.codec.chain import (
    CHAIN_TOPIC,
    FrameError,
    Linked,
    frame,
    genesis,
    next_digest,
    unframe,
)
from ledger.feed.envelope import TERMINAL_TYPES
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import LedgerApp, RawRow
from ledger.verify.integrity import ChainVerifier
from tests.conftest import tiered

Row = tuple[str, int, str, bytes]


class _Reference:
    """The chain check without shortcuts: what each row must give."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.last: dict[str, tuple[int, str]] = {}
        self.since: list[tuple[str, int, str]] = []
        self.head: str | None = None
        self.ended: set[str] = set()

    def check(self, oid: str, version: int, topic: str, state: bytes) -> bytes | None:
        try:
            digest, content = unframe(state)
        except FrameError as exc:
            self._broken(oid, version, f"stored event cannot be read: {exc}")
            self.last[oid] = (version, "")
            return None
        previous = self.last.get(oid)
        expected: str | None
        if version == 1:
            expected = genesis(UUID(oid))
        elif previous is None:
            self._broken(
                oid,
                version,
                "an event was added to a round after it ended"
                if oid in self.ended
                else f"version {version} has no stored version {version - 1}",
            )
            expected = None
        else:
            if previous[0] != version - 1:
                self._broken(
                    oid,
                    version,
                    f"version {previous[0] + 1} to {version - 1} of "
                    "this aggregate are missing (removed or reordered)",
                )
            expected = previous[1]
        if expected is not None and next_digest(expected, content) != digest:
            self._broken(
                oid,
                version,
                "the stored bytes do not match their chain digest: the "
                "event was changed, or an event before it was",
            )
        self.last[oid] = (version, digest)
        if topic == CHAIN_TOPIC:
            self._link(oid, version, content, digest)
        else:
            self.since.append((oid, version, digest))
            if topic.endswith(tuple("/" + t for t in TERMINAL_TYPES)):
                del self.last[oid]
                self.ended.add(oid)
        return content

    def _link(self, oid: str, version: int, content: bytes, digest: str) -> None:
        try:
            link = Linked.model_validate_json(content)
        except ValueError as exc:
            self._broken(oid, version, f"a chain link cannot be read: {exc}")
            self.since.clear()
            return
        listed = [(e.aggregate.hex, e.first, e.last, e.digest) for e in link.entries]
        spans: dict[str, list[Any]] = {}
        for aggregate, v, d in self.since:
            if aggregate in spans:
                spans[aggregate][1:] = [v, d]
            else:
                spans[aggregate] = [v, v, d]
        actual = [(a, s[0], s[1], s[2]) for a, s in spans.items()]
        if listed != actual:
            self._broken(
                oid,
                version,
                f"chain link {version} lists {_describe(listed)} but "
                f"the store holds {_describe(actual)} since the link before it "
                "(events removed, added or reordered)",
            )
        self.since.clear()
        self.head = digest

    def _broken(self, oid: str, version: int, why: str) -> None:
        self.messages.append(f"{why} (aggregate {UUID(oid)}, version {version})")


def _describe(spans: list[tuple[str, int, int, str]]) -> str:
    return f"{len(spans)} aggregate(s), {sum(b - a + 1 for _, a, b, _ in spans)} event(s)"


def _rows(app: LedgerApp, examples: Path) -> list[Row]:
    for name in ("rl.jsonl", "fpc.jsonl"):
        with open(examples / name, encoding="utf-8") as stream:
            assert Ingestor(app, batch_events=40).ingest(numbered_lines(stream)).rejected == []
    raw: list[RawRow] = [row for page in app.rows() for row in page]
    return [(oid, version, topic, state) for _, oid, version, topic, state in raw]


def _both(app: LedgerApp, rows: list[Row]) -> tuple[list[str], list[str]]:
    new, ref = ChainVerifier(app.ledger_mapper), _Reference()
    one_by_one = [new.check_raw(*row) for row in rows]
    assert one_by_one == [ref.check(*row) for row in rows]
    assert new.head == ref.head
    # The batch loop verify runs (pages of 7 rows here) gives each row's content and the same
    # findings, in the same order, as the rows checked one by one.
    batched = ChainVerifier(app.ledger_mapper)
    numbered = [(n, *row) for n, row in enumerate(rows, 1)]
    contents = [c for at in range(0, len(numbered), 7) for c in batched.check_rows(numbered[at : at + 7])]
    assert contents == one_by_one
    assert batched.findings == new.findings
    assert (batched.head, batched.events, batched.to_json() if batched.at_link else None) == (
        new.head,
        new.events,
        new.to_json() if new.at_link else None,
    )
    # Findings name the (damaged) content's table/round where they can; compare the words.
    return [f.message for f in new.findings], ref.messages


def _relink(rows: list[Row], change: Any, which: int = 1) -> list[Row]:
    """The rows with the content of the ``which``-th link changed (and its frame's digest
    recomputed from the link before it, so only the content is at fault)."""
    out, seen, previous = [], 0, None
    for oid, version, topic, state in rows:
        if topic == CHAIN_TOPIC:
            seen += 1
            digest, content = unframe(state)
            if seen == which:
                content = change(content)
                digest = next_digest(previous or genesis(UUID(oid)), content)
                state = frame(digest, content)
            previous = digest
        out.append((oid, version, topic, state))
    return out


def _sub(pattern: bytes, replacement: bytes, count: int = 1) -> Any:
    return lambda content: re.sub(pattern, replacement, content, count=count)


LINK_CHANGES = {
    "untouched": lambda c: c,
    "uppercase aggregate": lambda c: re.sub(
        rb'"aggregate":"([0-9a-f-]{36})"', lambda m: b'"aggregate":"' + m[1].upper() + b'"', c, count=1
    ),
    "aggregate without hyphens": lambda c: re.sub(
        rb'"aggregate":"([0-9a-f-]{36})"',
        lambda m: b'"aggregate":"' + m[1].replace(b"-", b"") + b'"',
        c,
        count=1,
    ),
    "spaces": _sub(rb'","first":', b'", "first": '),
    "first 0": _sub(rb'"first":\d+', b'"first":0'),
    "first as text": _sub(rb'"first":(\d+)', rb'"first":"\1"'),
    "first with an exponent": _sub(rb'"first":(\d+)', rb'"first":\1e0'),
    "uppercase digest": lambda c: re.sub(
        rb'"digest":"([0-9a-f]{64})"', lambda m: b'"digest":"' + m[1].upper() + b'"', c, count=1
    ),
    "short digest": _sub(rb'"digest":"[0-9a-f]{2}', b'"digest":"'),
    "wrong digest": _sub(rb'"digest":"[0-9a-f]', b'"digest":"0'),
    "bad at": _sub(rb'"at":"[^"]*"', b'"at":"yesterday"'),
    "at without offset": _sub(rb'"at":"([^"+]*)\+00:00"', rb'"at":"\1"'),
    "escaped at": lambda c: c.replace(b'"at":"2', b'"at":"\\u0032', 1),
    "extra key": _sub(rb'"type":"linked"', b'"type":"linked","x":1'),
    "entry extra key": _sub(rb'"first":', b'"x":1,"first":'),
    "no entries": _sub(rb'"entries":\[.*\]', b'"entries":[]'),
    "one entry dropped": _sub(rb'\{"aggregate":[^}]*\},', b""),
    "entries twice": lambda c: c[:-2] + b"," + c[c.index(b"[") + 1 :],
    "truncated": lambda c: c[:-5],
    "trailing bytes": lambda c: c + b" ",
    "not json": lambda c: b"\xff" + c,
    "type changed": _sub(rb'"type":"linked"', b'"type":"link"'),
}


@pytest.mark.slow_postgres
@pytest.mark.parametrize("change", list(LINK_CHANGES))
@pytest.mark.parametrize("which", tiered([1, 3], 1))
def test_a_changed_link_gives_the_findings_of_the_plain_check(
    app: LedgerApp, examples: Path, change: str, which: int
) -> None:
    rows = _rows(app, examples)
    new, ref = _both(app, _relink(rows, LINK_CHANGES[change], which))
    assert new == ref
    assert (new == []) == (change == "untouched")


ROW_CHANGES = {
    "uppercase frame digest": lambda s: s[:10] + s[10:74].upper() + s[74:],
    "non-ascii frame digest": lambda s: s[:10] + b"\xe9" + s[11:],
    "short frame": lambda s: s[:60],
    "frame without its end": lambda s: s[:-1],
    "frame with a bad middle": lambda s: s[:74] + b'"."fact":' + s[83:],
    "content changed": lambda s: s[:-2] + b" }",
    "empty": lambda s: b"",
}


@pytest.mark.slow_postgres
@pytest.mark.parametrize("change", list(ROW_CHANGES))
@pytest.mark.parametrize("where", [0, 1, 7])
def test_a_damaged_row_gives_the_findings_of_the_plain_check(
    app: LedgerApp, examples: Path, change: str, where: int
) -> None:
    rows = _rows(app, examples)
    oid, version, topic, state = rows[where]
    rows[where] = (oid, version, topic, ROW_CHANGES[change](state))
    new, ref = _both(app, rows)
    assert new == ref
    assert new


def test_removed_and_reordered_rows_give_the_findings_of_the_plain_check(
    app: LedgerApp, examples: Path
) -> None:
    rows = _rows(app, examples)
    for damaged in (
        rows[:5] + rows[6:],
        [*rows[:3], rows[4], rows[3], *rows[5:]],
        rows + rows[-3:],
        [rows[0], *rows],
    ):
        new, ref = _both(app, damaged)
        assert new == ref


def test_the_chain_state_written_down_reads_back(app: LedgerApp, examples: Path) -> None:
    rows = _rows(app, examples)
    first = ChainVerifier(app.ledger_mapper)
    for row in rows:
        first.check_raw(*row)
    state = json.loads(json.dumps(first.to_json()))
    again = ChainVerifier(app.ledger_mapper)
    again.load(state)
    assert again.to_json() == first.to_json()
    assert all(isinstance(d, str) and len(d) == 64 for _, d in state["last"].values())
