"""The integrity chain: every stored event is hashed with the one before it.

Design (documented for auditors in ``docs/INTEGRITY.md``):

- **Per aggregate.** Each aggregate (a round, a table, the chain itself) is a hash chain:
  ``digest(v) = SHA-256(digest(v-1) ‖ content(v))`` in hex, where ``content(v)`` is the exact
  stored bytes of event ``v``'s fact and ``digest(0)`` is :func:`genesis` of the aggregate id.
  The digest is stored in the event's frame (``{"chain":"<hex>","fact":<content>}``), so the
  chain is checked against the stored bytes themselves, not a re-encoding of them.
- **Across the store.** Every save appends one :class:`Linked` event to the single ``Chain``
  aggregate, listing for each aggregate it touched the versions it wrote and the digest of the
  last one. The chain aggregate is itself hash-chained, so its newest digest — the **head** —
  commits to every event ever stored. Two writers that race both try to write the same next
  chain version; the store's uniqueness constraint refuses one, which retries on the new head.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import ClassVar, Literal
from uuid import NAMESPACE_URL, UUID, uuid5

from pydantic import Field, StrictInt

from ledger.domain.errors import FrameError as FrameError  # raised here; defined in the error tree
from ledger.feed.envelope import FeedModel
from ledger.feed.types import Timestamp

CHAIN_ID: UUID = uuid5(NAMESPACE_URL, "/ledger/chain")
"""The id of the one ``Chain`` aggregate of a store."""

CHAIN_TOPIC = "chain/linked"

FRAME_HEAD = b'{"chain":"'
FRAME_MID = b'","fact":'
FRAME_TAIL = b"}"
_DIGEST_END = len(FRAME_HEAD) + 64
_CONTENT_START = _DIGEST_END + len(FRAME_MID)


GENESIS_TAG = b"ledger-chain-v1:"
"""What :func:`genesis` hashes before the aggregate id's 16 bytes."""


def genesis(aggregate_id: UUID) -> str:
    """``digest(0)`` of an aggregate: a value no other aggregate shares."""
    return hashlib.sha256(GENESIS_TAG + aggregate_id.bytes).hexdigest()


def next_digest(previous: str, content: bytes) -> str:
    """``SHA-256(previous ‖ content)`` in hex."""
    return hashlib.sha256(previous.encode("ascii") + content).hexdigest()


def frame(digest: str, content: bytes) -> bytes:
    """The stored form of a fact: its digest first, then its content bytes."""
    return FRAME_HEAD + digest.encode("ascii") + FRAME_MID + content + FRAME_TAIL


def next_digest_ascii(previous: bytes, content: bytes) -> bytes:
    """:func:`next_digest` with both digests as their ASCII bytes (what a frame stores): no
    encoding per row (the ingest)."""
    return hashlib.sha256(previous + content).hexdigest().encode()


def frames_ascii(digests: Iterable[bytes], contents: Iterable[bytes]) -> list[bytes]:
    """:func:`frame` of each (digest as ASCII bytes, content) pair: a save's rows at once."""
    join = b"".join
    return [join((FRAME_HEAD, d, FRAME_MID, c, FRAME_TAIL)) for d, c in zip(digests, contents, strict=True)]


def unframe(state: bytes) -> tuple[str, bytes]:
    """Split stored bytes into ``(digest, content)``; raise :class:`FrameError` if malformed."""
    if (
        not state.startswith(FRAME_HEAD)
        or state[_DIGEST_END:_CONTENT_START] != FRAME_MID
        or not state.endswith(FRAME_TAIL)
    ):
        raise FrameError("the stored bytes are not a framed fact")
    try:
        digest = state[len(FRAME_HEAD) : _DIGEST_END].decode("ascii")
    except UnicodeDecodeError:
        raise FrameError("the stored digest is not text") from None
    return digest, state[_CONTENT_START:-1]


class LinkEntry(FeedModel):
    """The versions one aggregate got in one save, and the digest of the last of them."""

    aggregate: UUID
    first: StrictInt = Field(ge=1)
    last: StrictInt = Field(ge=1)
    digest: str = Field(pattern=r"^[0-9a-f]{64}$")


class Linked(FeedModel):
    """One save's link in the store-wide chain: what it wrote, at what wall-clock time."""

    TYPE: ClassVar[str] = "linked"

    type: Literal["linked"] = "linked"
    at: Timestamp
    entries: tuple[LinkEntry, ...]


def link_entries(written: list[tuple[UUID, int, str]]) -> tuple[LinkEntry, ...]:
    """Group ``(aggregate, version, digest)`` in save order into one entry per aggregate.

    The values come from the writer's own records (versions it assigned, digests it computed),
    so the entries are built without re-validation: this runs on every save.
    """
    spans: dict[UUID, tuple[int, int, str]] = {}
    for aggregate, version, digest in written:
        span = spans.get(aggregate)
        spans[aggregate] = (version if span is None else span[0], version, digest)
    return tuple(
        LinkEntry.model_construct(aggregate=a, first=first, last=last, digest=digest)
        for a, (first, last, digest) in spans.items()
    )


def now() -> datetime:
    """Wall-clock time of a save, timezone-aware."""

    return datetime.now(UTC)
