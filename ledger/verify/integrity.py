"""Checking the integrity chain (``ledger.chain``) against the stored bytes, in one pass.

:class:`ChainVerifier` is fed every stored row in notification order. For each aggregate it
recomputes ``SHA-256(previous digest ‖ stored content)`` and compares it with the stored digest;
for each chain link it checks that the link lists exactly the events written since the link
before it. What this detects, and what it cannot, is in ``docs/INTEGRITY.md``.

Memory stays flat: a round's entry is dropped once its closing event has been checked, and
only the events since the last link are held.
"""

from __future__ import annotations

import json
from array import array
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from ledger.chain import (
    CHAIN_ID,
    CHAIN_TOPIC,
    FrameError,
    Linked,
    genesis,
    next_digest,
    unframe,
)
from ledger.feed.envelope import TERMINAL_TYPES
from ledger.findings import Finding
from ledger.store import LedgerMapper

MAX_CHAIN_FINDINGS = 1000
_TERMINAL_SUFFIXES = tuple("/" + t for t in TERMINAL_TYPES)
_CHAIN_ID_TEXT = CHAIN_ID.hex


@dataclass
class ChainVerifier:
    """Recomputes every aggregate's chain and the store-wide chain of links.

    Aggregates are keyed by the text of their id (hashing a ``str`` is far cheaper than hashing
    a ``UUID``). Ended rounds are remembered only as 64-bit prefixes of their ids, so a store of
    a million rounds costs 8 MB here, not a set of a million ids.
    """

    mapper: LedgerMapper
    findings: list[Finding] = field(default_factory=list)
    head: str | None = None
    heads_seen: set[str] = field(default_factory=set)
    events: int = 0
    _last: dict[str, tuple[int, str]] = field(default_factory=dict)
    _ended: array[int] = field(default_factory=lambda: array("Q"))
    _ended_set: set[int] | None = None
    _since_link: list[tuple[str, int, str]] = field(default_factory=list)
    _truncated: int = 0

    @property
    def broken(self) -> bool:
        """Whether any integrity finding was made."""
        return bool(self.findings) or self._truncated > 0

    @property
    def at_link(self) -> bool:
        """Whether every event read so far is covered by a link (true right after a link)."""
        return not self._since_link

    def to_json(self) -> dict[str, Any]:
        """What the check needs to go on from here (right after a link): the events counted,
        the head, and the last version and digest of every aggregate that can still grow.

        Rounds that ended are not carried (they are what makes the state grow with the
        store): an event added later to one of them is still caught, as a version with no
        version before it."""
        if self._since_link:
            raise ValueError("the chain state is only written down right after a link")
        return {"events": self.events, "head": self.head,
                "last": {oid: [version, digest]
                         for oid, (version, digest) in sorted(self._last.items())}}

    def load(self, data: dict[str, Any]) -> None:
        """Take up the state :meth:`to_json` wrote."""
        events, head, last = data["events"], data["head"], data["last"]
        if type(events) is not int or not isinstance(head, str) or not isinstance(last, dict):
            raise ValueError("the chain state is malformed")
        self.events = events
        self.head = head
        self.heads_seen.add(head)
        self._last = {str(oid): (int(v), str(d)) for oid, (v, d) in last.items()}

    def check(self, row: Any) -> bytes | None:
        """Check one stored row (a library ``Notification``); returns its content bytes."""
        oid = row.originator_id
        return self.check_raw(oid.hex if isinstance(oid, UUID) else UUID(str(oid)).hex,
                              row.originator_version, row.topic, row.state)

    def check_raw(self, oid: str, version: int, topic: str, state: bytes) -> bytes | None:
        """Check one stored row given as its parts (``oid`` as ``UUID.hex``); returns its
        content bytes if they can be read."""
        self.events += 1
        try:
            if self.mapper.cipher is None and self.mapper.compressor is None:
                digest, content = unframe(state)  # what open_state does without them
            else:
                digest, content = self.mapper.open_state(state)
        except FrameError as exc:
            self._broken(oid, version, None, f"stored event cannot be read: {exc}")
            self._last[oid] = (version, "")
            return None
        previous = self._last.get(oid)
        if version == 1:
            expected_prev: str | None = genesis(UUID(oid))
        elif previous is None:
            why = ("an event was added to a round after it ended" if self._has_ended(oid)
                   else f"version {version} has no stored version {version - 1}")
            self._broken(oid, version, content, why)
            expected_prev = None
        elif previous[0] != version - 1:
            self._broken(oid, version, content, f"version {previous[0] + 1} to {version - 1} "
                         "of this aggregate are missing (removed or reordered)")
            expected_prev = previous[1]
        else:
            expected_prev = previous[1]
        if expected_prev is not None and next_digest(expected_prev, content) != digest:
            self._broken(oid, version, content, "the stored bytes do not match their chain "
                         "digest: the event was changed, or an event before it was")
        self._last[oid] = (version, digest)
        if topic == CHAIN_TOPIC:
            self._check_link(oid, version, content, digest)
        else:
            self._since_link.append((oid, version, digest))
            if topic.endswith(_TERMINAL_SUFFIXES):
                del self._last[oid]
                self._ended.append(_prefix(oid))
                if self._ended_set is not None:
                    self._ended_set.add(_prefix(oid))
        return content

    def _has_ended(self, oid: str) -> bool:
        """Whether a round with this id ended earlier (only asked of a broken store)."""
        if self._ended_set is None:
            self._ended_set = set(self._ended)
        return _prefix(oid) in self._ended_set

    def finish(self, expect_head: str | None = None) -> None:
        """After the last row: every event must be covered by a link; the head must be known."""
        if self._since_link:
            oid, version, _ = self._since_link[0]
            self._broken(oid, version, None, f"{len(self._since_link)} stored event(s) after the "
                         "newest chain link are covered by no link (a link was removed, or "
                         "events were added outside the ledger)")
        if expect_head is not None and expect_head not in self.heads_seen:
            self.findings.append(Finding(
                "chain_broken", None, None, rule="integrity (--expect-head)",
                message=f"the store does not contain the expected head {expect_head}: events "
                        "recorded up to that head were removed or rewritten",
                expected={"head": expect_head}, recorded={"head": self.head}))

    def _check_link(self, oid: str, version: int, content: bytes, digest: str) -> None:
        if oid != _CHAIN_ID_TEXT:
            self._broken(oid, version, content, "a chain link outside the chain aggregate")
        try:
            link = Linked.model_validate_json(content)
        except ValueError as exc:
            self._broken(oid, version, content, f"a chain link cannot be read: {exc}")
            self._since_link.clear()
            return
        listed = [(e.aggregate.hex, e.first, e.last, e.digest) for e in link.entries]
        actual = _spans(self._since_link)
        if listed != actual:
            self._broken(oid, version, content,
                         f"chain link {version} lists {_describe(listed)} but the store holds "
                         f"{_describe(actual)} since the link before it (events removed, "
                         "added or reordered)")
        self._since_link.clear()
        self.head = digest
        self.heads_seen.add(digest)

    def _broken(self, oid: str, version: int, content: bytes | None, why: str) -> None:
        if len(self.findings) >= MAX_CHAIN_FINDINGS:
            self._truncated += 1
            return
        where = _where(content)
        self.findings.append(Finding(
            "chain_broken", where.get("table"), where.get("round"), rule="integrity",
            message=f"{why} (aggregate {UUID(oid)}, version {version})",
            seq=where.get("seq") if isinstance(where.get("seq"), int) else version))


def _prefix(oid: str) -> int:
    """The first 64 bits of an aggregate id given as ``UUID.hex``."""
    return int(oid[:16], 16)


def _spans(events: list[tuple[str, int, str]]) -> list[tuple[str, int, int, str]]:
    spans: dict[str, list[Any]] = {}
    for oid, version, digest in events:
        if oid in spans:
            spans[oid][1:] = [version, digest]
        else:
            spans[oid] = [version, version, digest]
    return [(oid, s[0], s[1], s[2]) for oid, s in spans.items()]


def _describe(spans: list[tuple[str, int, int, str]]) -> str:
    return f"{len(spans)} aggregate(s), {sum(last - first + 1 for _, first, last, _ in spans)} event(s)"


def _where(content: bytes | None) -> dict[str, Any]:
    """Best effort: the table, round and seq named in (possibly damaged) content."""
    if content is None:
        return {}
    try:
        obj = json.loads(content)
    except ValueError:
        return {}
    return obj if isinstance(obj, dict) else {}


def unreadable_store(exc: BaseException) -> Finding:
    """The finding when the store itself cannot be read (a damaged SQLite file, say): the chain
    cannot be shown intact, so it counts as broken."""
    return Finding("chain_broken", None, None, rule="integrity",
                   message=f"the store cannot be read: {exc}")
