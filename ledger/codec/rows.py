"""A stored row → the decoded fact that the round stream, verify and replay use.

:func:`decode_row` is the entry point; :class:`RowDecoder` is the same for a whole pass (the
round stream, ``ledger.storage.stream``, holds one and calls its parts row by row).

- ``fast=False`` is the **reference**: the row's model (``ledger.codec.facts.TOPICS``) and its
  ``model_validate_json``.
- ``fast=True`` decodes a feed fact with the model's native twin (``ledger.codec.native``: the
  same model, its feed field types checked in Rust), and a ``round_opened`` from a template
  validated once per distinct rulebook (``ledger.codec.openings.OpeningDecoder``). Bytes a
  shortcut refuses are decoded again by ``model_validate_json``, so an error is the model's.
  ``Kind.compact`` is the native twin building compact facts (``ledger.codec.compact``: the
  model's slotted twin, no ``__dict__``), which ``ledger verify``'s pass judges.

A game's decoders are built on the first row of that game the process reads, so a pass over
a store without STUD rounds never imports STUD.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ledger.codec.chain import unframe
from ledger.codec.facts import TOPICS
from ledger.codec.native import compact_validate_json, fast_validate_json, native_validate_json
from ledger.codec.openings import OpeningDecoder
from ledger.feed.envelope import TERMINAL_TYPES, FeedEvent, FeedModel, RoundOpened
from ledger.games import GAMES

TERMINAL_SUFFIXES = tuple("/" + t for t in TERMINAL_TYPES)
"""Topic endings of the events after which a round takes no more lines."""
OPENING_SUFFIX = "/round_opened"

Decode = Callable[[bytes], Any]


@dataclass(frozen=True, slots=True)
class Kind:
    """How to decode one feed topic (every one but ``round_opened``)."""

    first: Decode
    """Tried first (fast: the native validator alone); raises ``ValueError`` when it refuses."""
    decode: Decode
    """The decoder whose error is reported (fast: native, then the model on a refusal)."""
    cls: type
    ends: bool
    """Whether the topic's event ends a round."""
    compact: Decode
    """Like :attr:`first`, giving a compact fact (``ledger.codec.compact``; fast: slotted, no
    ``__dict__``); the plain mode's is the model's own, like :attr:`first`."""


_KINDS: dict[bool, dict[str, Kind]] = {True: {}, False: {}}
"""The kinds of every feed topic of the games loaded so far, fast and plain, by topic."""
_LOADED: dict[bool, set[str]] = {True: set(), False: set()}
"""The games whose topics are in :data:`_KINDS`, per mode."""


def load_kinds(topic: str, fast: bool = True) -> bool:
    """Add the kinds of the game ``topic`` belongs to, if not yet there: whether any were."""
    key = topic.partition("/")[0]
    loaded = _LOADED[fast]
    if key in loaded or key not in GAMES:
        return False
    loaded.add(key)
    kinds = _KINDS[fast]
    for cls in GAMES[key].events:
        name = f"{key}/{cls.TYPE}"
        if name.endswith(OPENING_SUFFIX) or not issubclass(cls, FeedEvent) or issubclass(cls, RoundOpened):
            continue
        ends = name.endswith(TERMINAL_SUFFIXES)
        if fast:
            kinds[name] = Kind(
                native_validate_json(cls), fast_validate_json(cls), cls, ends, compact_validate_json(cls)
            )
        else:
            plain = cls.model_validate_json
            kinds[name] = Kind(plain, plain, cls, ends, plain)
    return True


def all_kinds(fast: bool = True) -> dict[str, Kind]:
    """The kind of every feed topic of every game but ``round_opened`` (every game loaded)."""
    for key in GAMES:
        load_kinds(f"{key}/", fast)
    return dict(_KINDS[fast])


def validator(cls: type, *, fast: bool = True) -> Decode:
    """``cls.model_validate_json``, natively where it can when ``fast`` (same results, same
    errors)."""
    return fast_validate_json(cls) if fast else cls.model_validate_json  # type: ignore[attr-defined]


class RowDecoder:
    """The decoders of one pass over stored rows (see the module docstring)."""

    def __init__(self, *, fast: bool = True) -> None:
        self.fast = fast
        self.kinds = _KINDS[fast]
        """The kinds loaded so far, by topic (the pass looks each row's topic up here first)."""
        self._openings = OpeningDecoder() if fast else None

    def kind(self, topic: str) -> Kind | None:
        """The kind of ``topic``, its game's kinds loaded first if need be (``None``: not a
        feed topic, or an opening)."""
        kind = self.kinds.get(topic)
        if kind is None and load_kinds(topic, self.fast):
            kind = self.kinds.get(topic)
        return kind

    def opening(self, topic: str, content: bytes) -> FeedEvent:
        """A stored ``round_opened`` (``ValueError`` if it cannot be decoded)."""
        cls: Any = TOPICS.get(topic)
        if cls is None:
            raise ValueError(f"unknown topic {topic!r}")
        if self._openings is None:
            fact: FeedEvent = cls.model_validate_json(content)
            return fact
        opened: FeedEvent = self._openings.decode(cls, content)
        return opened

    def feed_fact(self, topic: str, content: bytes) -> FeedEvent:
        """One stored feed fact (``ValueError`` if it cannot be decoded, or is no feed fact)."""
        kind = self.kind(topic)
        if kind is not None:
            fact: FeedEvent = kind.decode(content)
            return fact
        if not topic.endswith(OPENING_SUFFIX):
            raise ValueError(f"unknown topic {topic!r}")
        return self.opening(topic, content)

    def fact(self, topic: str, content: bytes) -> FeedModel:
        """Any stored fact: a feed fact, a table's round start, a chain link."""
        cls = TOPICS.get(topic)
        if cls is None:
            raise ValueError(f"unknown topic {topic!r}")
        if issubclass(cls, FeedEvent):
            return self.feed_fact(topic, content)
        fact: FeedModel = validator(cls, fast=self.fast)(content)
        return fact


@dataclass(frozen=True, slots=True)
class Decoded:
    """A stored row, opened and decoded."""

    digest: str
    content: bytes
    fact: FeedModel


def decode_row(
    topic: str,
    state: bytes,
    *,
    open_state: Callable[[bytes], tuple[str, bytes]] = unframe,
    decoder: RowDecoder | None = None,
    fast: bool = True,
) -> Decoded:
    """One stored row (its topic and stored bytes) → its digest, content and fact.

    ``open_state`` decrypts, decompresses and unframes (``LedgerMapper.open_state``; default a
    plain frame); ``decoder`` carries the caches of a pass (its own ``fast`` then applies).
    Raises ``FrameError`` for a row that cannot be opened, ``ValueError`` (``ValidationError``
    is one) for one that cannot be decoded."""
    digest, content = open_state(state)
    decoder = decoder if decoder is not None else RowDecoder(fast=fast)
    return Decoded(digest, content, decoder.fact(topic, content))
