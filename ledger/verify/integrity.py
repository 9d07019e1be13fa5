"""Checking the integrity chain (``ledger.codec.chain``) against the stored bytes, in one pass.

:class:`ChainVerifier` is fed every stored row in notification order. For each aggregate it
recomputes ``SHA-256(previous digest ‖ stored content)`` and compares it with the stored digest;
for each chain link it checks that the link lists exactly the events written since the link
before it. What this detects, and what it cannot, is in ``docs/INTEGRITY.md``.

Memory stays flat: a round's entry is dropped once its closing event has been checked, and
only the events since the last link are held.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from hashlib import sha256
from typing import Any
from uuid import UUID

from ledger.codec.chain import (
    CHAIN_ID,
    CHAIN_TOPIC,
    FRAME_HEAD,
    FRAME_MID,
    FRAME_TAIL,
    GENESIS_TAG,
    FrameError,
    Linked,
)
from ledger.codec.frame import Split, splitter
from ledger.domain.errors import StoreDamaged
from ledger.domain.findings import Finding
from ledger.feed.envelope import TERMINAL_TYPES
from ledger.storage.store import LedgerMapper, RawRow

MAX_CHAIN_FINDINGS = 1000
_DIGEST_START = len(FRAME_HEAD)
_DIGEST_END = _DIGEST_START + 64
_CONTENT_START = _DIGEST_END + len(FRAME_MID)
_TERMINAL_SUFFIXES = tuple("/" + t for t in TERMINAL_TYPES)
_CHAIN_ID_TEXT = CHAIN_ID.hex
_OTHER, _TERMINAL, _LINK = "other", "terminal", "link"
"""What a row's topic means to the chain: a link, the end of a round, anything else."""


@dataclass
class ChainVerifier:
    """Recomputes every aggregate's chain and the store-wide chain of links.

    Aggregates are keyed by the text of their id (hashing a ``str`` is far cheaper than hashing
    a ``UUID``). Ended rounds are remembered only as 64-bit prefixes of their ids, so a store of
    a million rounds costs 8 MB here, not a set of a million ids.
    """

    mapper: LedgerMapper
    fast: bool = True
    """Split stored frames with the codec's fast split (``False``: its reference)."""
    findings: list[Finding] = field(default_factory=list)
    head: str | None = None
    expect: str | None = None
    """The head ``--expect-head`` names, when it is known before the pass (then whether it was
    read is kept whatever :attr:`heads` says)."""
    heads: bool = True
    """Keep every head read in :attr:`heads_seen`, for a :meth:`finish` told its expected head
    only at the end. A pass told it first (or with none) sets this false: one head per link
    would grow with the store."""
    heads_seen: set[str] = field(default_factory=set)
    """Every head read (with :attr:`heads`)."""
    _expect_seen: bool = False
    events: int = 0
    _last: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    """Each aggregate's last version and its digest, as the stored ASCII bytes."""
    _ended: array[int] = field(default_factory=lambda: array("Q"))
    _ended_set: set[int] | None = None
    _since_link: list[tuple[str, int, bytes]] = field(default_factory=list)
    _truncated: int = 0
    _topics: dict[str, str] = field(default_factory=dict)
    """The kind (:data:`_LINK`, :data:`_TERMINAL`, :data:`_OTHER`) of each topic seen."""

    def __post_init__(self) -> None:
        # Chosen once, not per row: without a cipher or compressor a row is its frame.
        mapper = self.mapper
        plain = mapper.cipher is None and mapper.compressor is None
        self._split: Split = splitter(None if plain else mapper.open_state, fast=self.fast)
        self._plain = plain and self.fast
        """Whether :meth:`check_raw` may read a row's frame in place (its fast path)."""

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
        return {
            "events": self.events,
            "head": self.head,
            "last": {
                oid: [version, digest.decode("ascii")]
                for oid, (version, digest) in sorted(self._last.items())
            },
        }

    def load(self, data: dict[str, Any]) -> None:
        """Take up the state :meth:`to_json` wrote."""
        events, head, last = data["events"], data["head"], data["last"]
        if type(events) is not int or not isinstance(head, str) or not isinstance(last, dict):
            raise ValueError("the chain state is malformed")
        self.events = events
        self.head = head
        self._saw(head)
        # A digest that is not ASCII (UnicodeEncodeError, a ValueError) is refused here; no
        # pass writes one down.
        self._last = {str(oid): (int(v), str(d).encode("ascii")) for oid, (v, d) in last.items()}

    def check(self, row: Any) -> bytes | None:
        """Check one stored row (a library ``Notification``); returns its content bytes."""
        oid = row.originator_id
        return self.check_raw(
            oid.hex if isinstance(oid, UUID) else UUID(str(oid)).hex,
            row.originator_version,
            row.topic,
            row.state,
        )

    def check_raw(self, oid: str, version: int, topic: str, state: bytes) -> bytes | None:
        """Check one stored row given as its parts (``oid`` as ``UUID.hex``); returns its
        content bytes if they can be read (:meth:`check_rows` of that one row)."""
        return self.check_rows(((0, oid, version, topic, state),))[0]

    def check_rows(self, rows: Sequence[RawRow]) -> list[bytes | None]:
        """Check a batch of stored rows, in order; returns each one's content bytes, or
        ``None`` where they cannot be read.

        This is the loop ``ledger verify`` runs over every stored row, so it is written for
        speed. On a plain store (no cipher, no compressor) the usual row — the next version of
        its aggregate, a well-formed frame whose digest checks — is settled in the loop itself
        by one hash over the stored content and a comparison of the stored digest bytes (the
        ASCII hex the next digest hashes) with the hash's; anything else takes
        :meth:`_check_split`, the codec's split and the full set of findings. The kind of
        each topic is looked up once."""
        if not self._plain:
            return [self._check_split(oid, version, topic, state) for _, oid, version, topic, state in rows]
        contents: list[bytes | None] = []
        keep = contents.append
        last, since, topics = self._last, self._since_link, self._topics
        for _, oid, version, topic, state in rows:
            if version == 1:
                prev = _genesis(oid)
            else:
                previous = last.get(oid)
                if previous is None or previous[0] != version - 1:
                    keep(self._check_split(oid, version, topic, state))
                    continue
                prev = previous[1]
            content = state[_CONTENT_START:-1]
            digest = sha256(prev + content).hexdigest().encode()
            # The frame's head, digest and middle compared at once (one slice, not three):
            # the same tests as the split's.
            if not (state[:_CONTENT_START] == FRAME_HEAD + digest + FRAME_MID and state[-1:] == FRAME_TAIL):
                keep(self._check_split(oid, version, topic, state))
                continue
            self.events += 1
            # What :meth:`_after` does, inline for the usual row (no call per row).
            kind = topics.get(topic)
            if kind is _OTHER:
                last[oid] = (version, digest)
                since.append((oid, version, digest))
            elif kind is _TERMINAL:
                since.append((oid, version, digest))
                last.pop(oid, None)
                self._end(oid)
            else:
                last[oid] = (version, digest)
                self._after(oid, version, topic, content, digest)
            keep(content)
        return contents

    def _after(self, oid: str, version: int, topic: str, content: bytes, digest: bytes) -> None:
        """What every row leads to once its own digest is settled: a link is checked, any
        other row waits for the next link, and a round's closing row ends its chain."""
        kind = self._topics.get(topic)
        if kind is None:
            kind = self._topics[topic] = _topic_kind(topic)
        if kind is _LINK:
            self._check_link(oid, version, content, digest.decode("ascii"))
        else:
            self._since_link.append((oid, version, digest))
            if kind is _TERMINAL:
                del self._last[oid]
                self._end(oid)

    def _end(self, oid: str) -> None:
        """A round's closing row is checked: its chain ends (an event added later is caught)."""
        prefix = _prefix(oid)
        self._ended.append(prefix)
        if self._ended_set is not None:
            self._ended_set.add(prefix)

    def _check_split(self, oid: str, version: int, topic: str, state: bytes) -> bytes | None:
        """:meth:`check_raw` of any row, through the codec's split of its frame (the
        reference the fast path of :meth:`check_raw` agrees with)."""
        self.events += 1
        try:
            digest, content = self._split(state)
        except FrameError as exc:
            self._unreadable(oid, version, exc)
            return None
        last = self._last
        if version == 1:
            expected_prev: bytes | None = _genesis(oid)
        else:
            previous = last.get(oid)
            if previous is None:
                why = (
                    "an event was added to a round after it ended"
                    if self._has_ended(oid)
                    else f"version {version} has no stored version {version - 1}"
                )
                self._broken(oid, version, content, why)
                expected_prev = None
            else:
                if previous[0] != version - 1:
                    self._broken(
                        oid,
                        version,
                        content,
                        f"version {previous[0] + 1} to "
                        f"{version - 1} of this aggregate are missing (removed or "
                        "reordered)",
                    )
                expected_prev = previous[1]
        if expected_prev is not None and sha256(expected_prev + content).hexdigest().encode() != digest:
            self._broken(
                oid,
                version,
                content,
                "the stored bytes do not match their chain "
                "digest: the event was changed, or an event before it was",
            )
        last[oid] = (version, digest)
        self._after(oid, version, topic, content, digest)
        return content

    def _unreadable(self, oid: str, version: int, exc: FrameError) -> None:
        """A row whose stored bytes cannot be opened: the chain of its aggregate goes on from
        an empty digest (so the next event is reported too)."""
        self._broken(oid, version, None, f"stored event cannot be read: {exc}")
        self._last[oid] = (version, b"")

    def _has_ended(self, oid: str) -> bool:
        """Whether a round with this id ended earlier (only asked of a broken store)."""
        if self._ended_set is None:
            self._ended_set = set(self._ended)
        return _prefix(oid) in self._ended_set

    def finish(self, expect_head: str | None = None) -> None:
        """After the last row: every event must be covered by a link; the head must be known."""
        if self._since_link:
            oid, version, _ = self._since_link[0]
            self._broken(
                oid,
                version,
                None,
                f"{len(self._since_link)} stored event(s) after the "
                "newest chain link are covered by no link (a link was removed, or "
                "events were added outside the ledger)",
            )
        if expect_head is not None and not self.seen(expect_head):
            self.findings.append(
                Finding(
                    "chain_broken",
                    None,
                    None,
                    rule="integrity (--expect-head)",
                    message=f"the store does not contain the expected head {expect_head}: events "
                    "recorded up to that head were removed or rewritten",
                    expected={"head": expect_head},
                    recorded={"head": self.head},
                )
            )

    def _check_link(self, oid: str, version: int, content: bytes, digest: str) -> None:
        if oid != _CHAIN_ID_TEXT:
            self._broken(oid, version, content, "a chain link outside the chain aggregate")
        actual = _spans(self._since_link)
        if not _lists_exactly(content, actual):  # else the link reads and lists ``actual``
            try:
                link = Linked.model_validate_json(content)
            except ValueError as exc:
                self._broken(oid, version, content, f"a chain link cannot be read: {exc}")
                self._since_link.clear()
                return
            listed = [(e.aggregate.hex, e.first, e.last, e.digest) for e in link.entries]
            if listed != actual:
                self._mislisted(oid, version, content, listed, actual)
        self._since_link.clear()
        self.head = digest
        self._saw(digest)

    def _saw(self, head: str) -> None:
        if self.heads:
            self.heads_seen.add(head)
        if head == self.expect:
            self._expect_seen = True

    def seen(self, head: str) -> bool:
        """Whether the pass read ``head`` (without :attr:`heads`, only :attr:`expect` can be
        asked about)."""
        if head == self.expect:
            return self._expect_seen
        if not self.heads:
            raise ValueError("this pass kept only whether its expected head was read")
        return head in self.heads_seen

    def _mislisted(
        self,
        oid: str,
        version: int,
        content: bytes,
        listed: list[tuple[str, int, int, str]],
        actual: list[tuple[str, int, int, str]],
    ) -> None:
        self._broken(
            oid,
            version,
            content,
            f"chain link {version} lists {_describe(listed)} but the store holds "
            f"{_describe(actual)} since the link before it (events removed, "
            "added or reordered)",
        )

    def _broken(self, oid: str, version: int, content: bytes | None, why: str) -> None:
        if len(self.findings) >= MAX_CHAIN_FINDINGS:
            self._truncated += 1
            return
        where = _where(content)
        self.findings.append(
            Finding(
                "chain_broken",
                where.get("table"),
                where.get("round"),
                rule="integrity",
                message=f"{why} (aggregate {UUID(oid)}, version {version})",
                seq=where.get("seq") if isinstance(where.get("seq"), int) else version,
            )
        )


def _prefix(oid: str) -> int:
    """The first 64 bits of an aggregate id given as ``UUID.hex``."""
    return int(oid[:16], 16)


def _genesis(oid: str) -> bytes:
    """``genesis(UUID(oid))`` as ASCII bytes, without building a ``UUID`` (this runs for the
    first event of every round). Ids that are not 32 hex digits take the ``UUID`` path, so
    they are read (or refused) exactly as ``UUID`` reads them."""
    try:
        raw = bytes.fromhex(oid) if len(oid) == 32 else b""
    except ValueError:
        raw = b""
    if len(raw) != 16:  # not 32 hex digits (``fromhex`` also skips spaces)
        try:
            raw = UUID(oid).bytes
        except ValueError:
            raise StoreDamaged(
                f"a stored row's aggregate id {oid[:40]!r} is not a UUID: "
                "the row was not written by the ledger"
            ) from None
    return sha256(GENESIS_TAG + raw).hexdigest().encode("ascii")


def _topic_kind(topic: str) -> str:
    if topic == CHAIN_TOPIC:
        return _LINK
    return _TERMINAL if topic.endswith(_TERMINAL_SUFFIXES) else _OTHER


def _spans(events: list[tuple[str, int, bytes]]) -> list[tuple[str, int, int, str]]:
    """One ``(aggregate, first, last, digest of last)`` per aggregate, in order of first
    appearance (what a link lists for the same events)."""
    # A dict keeps the position of a key's first insertion and the value of its last.
    last = {oid: (version, digest) for oid, version, digest in events}
    first = {oid: version for oid, version, _ in reversed(events)}
    return [(oid, first[oid], version, digest.decode("ascii")) for oid, (version, digest) in last.items()]


_LINK_HEAD = re.compile(rb'\{"type":"linked","at":"[^"\\]*","entries":\[')
"""How the ledger writes a link up to its entries (``at`` has no quote or escape)."""
_HEX_DIGITS = b"0123456789abcdef"
_MAX_VERSION = 10**18
"""Versions below this are written in at most 18 digits (what the model reads back as written)."""


def _lower_hex(parts: list[str], width: int) -> bool:
    """Whether every one of (a non-empty list of) ``parts`` is ``width`` lowercase hex digits."""
    if {len(part) for part in parts} != {width}:
        return False
    # A character that is not ASCII becomes "?", which is no hex digit.
    return not "".join(parts).encode("ascii", "replace").translate(None, _HEX_DIGITS)


def _lists_exactly(content: bytes, spans: list[tuple[str, int, int, str]]) -> bool:
    """Whether ``content`` is the link the ledger writes for ``spans``: then
    ``Linked.model_validate_json(content)`` accepts it and lists exactly ``spans``.

    A shortcut for the check of every link (decoding a link of hundreds of entries costs as
    much as building and comparing its bytes many times over). Why it is exact: the entries
    are written from ``spans``, whose values are first checked to be what ``LinkEntry``
    accepts and reads back as written (ids of 32 lowercase hex digits, written as a UUID
    with its hyphens; ``int`` versions from 1 below 10**18, written in decimal; digests of 64
    lowercase hex digits), so every entry written is one the model accepts and reads back as
    those values, and the entries' own punctuation is the ledger's; the bytes around them
    are the model's own ``type`` and ``at`` with empty entries, validated by the model
    itself. Anything else (``False``) is decoded by the model, as before."""
    head = _LINK_HEAD.match(content)
    if head is None or content[-2:] != b"]}":
        return False
    end = head.end()
    if spans:
        oids = [oid for oid, _, _, _ in spans]
        versions = [first for _, first, _, _ in spans] + [last for _, _, last, _ in spans]
        if not (
            _lower_hex(oids, 32)
            and _lower_hex([digest for _, _, _, digest in spans], 64)
            and {type(v) for v in versions} == {int}
            and min(versions) >= 1
            and max(versions) < _MAX_VERSION
        ):
            return False
    entries = ",".join(
        [
            f'{{"aggregate":"{oid[:8]}-{oid[8:12]}-{oid[12:16]}-{oid[16:20]}-{oid[20:]}",'
            f'"first":{first},"last":{last},"digest":"{digest}"}}'
            for oid, first, last, digest in spans
        ]
    )
    if content[end:-2] != entries.encode("ascii"):
        return False
    try:
        Linked.model_validate_json(content[:end] + b"]}")
    except ValueError:  # a ValidationError
        return False
    return True


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
    return Finding("chain_broken", None, None, rule="integrity", message=f"the store cannot be read: {exc}")
