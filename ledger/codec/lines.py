"""A feed line → the fact ingest stores, with its canonical bytes, or a :class:`Rejection`.

:func:`parse_line` is the entry point; :class:`LineParser` is the same for a whole ingest (it
keeps the shortcuts' caches and reads the accepted window of event times once).

- ``fast=False`` is the **reference**: ``ledger.codec.parse.parse_line`` (``json.loads`` with
  the duplicate-key and NaN checks, then ``model_validate`` of the game's model), and the
  fact's bytes are :func:`~ledger.codec.facts.content_of` of it.
- ``fast=True`` adds the shortcuts of ``ledger.codec.openings``: a *canonical* line (exactly
  the bytes the ledger would store) is validated natively from its bytes and stored as it is;
  a ``round_opened`` is filled in from a template validated once per distinct rulebook. Any
  line they do not take goes to the reference path, so every rejection is the reference's.

``tests/codec/test_fast_equals_reference.py`` checks that both modes give the same facts, the
same stored bytes and the same rejections, over generated lines of every game, valid and
hostile.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from ledger.codec.facts import content_of
from ledger.codec.openings import OpeningParser
from ledger.codec.parse import MAX_LINE_BYTES, Rejection
from ledger.codec.parse import parse_line as reference_parse
from ledger.feed.envelope import FeedEvent
from ledger.feed.window import accepted_window


@dataclass(frozen=True, slots=True)
class Parsed:
    """An accepted feed line: the fact ingest stores and its canonical stored bytes."""

    fact: FeedEvent
    content: bytes


class LineParser:
    """Parses the lines of one ingest, fast or as the reference (see the module docstring).

    :meth:`parse` gives ``(fact or rejection, stored bytes or None)``: the bytes are given when
    the line itself is them (a canonical line), else ``None`` (:func:`content_of` the fact when
    it is stored; a line that is then refused costs no serialising)."""

    def __init__(self, max_bytes: int = MAX_LINE_BYTES, *, fast: bool = True) -> None:
        self.max_bytes = max_bytes
        self.fast = fast
        self._shortcuts = OpeningParser(max_bytes) if fast else None
        self._window: tuple[datetime, datetime] | None = None
        self.parse: Callable[[str | bytes, int], tuple[FeedEvent | Rejection, bytes | None]] = (
            self._reference if self._shortcuts is None else self._shortcuts.parse_with_content
        )
        """The line's fact (or rejection) and, if the line is canonical, its stored bytes (the
        shortcuts' own method when fast: no call in between, once per line of an ingest)."""

    @property
    def canonical(self) -> int:
        """Lines taken by the canonical shortcut so far."""
        return 0 if self._shortcuts is None else self._shortcuts.canonical

    def _reference(self, text: str | bytes, line_no: int) -> tuple[FeedEvent | Rejection, bytes | None]:
        if self._window is None:
            self._window = accepted_window()
        return reference_parse(text, line_no, max_bytes=self.max_bytes, window=self._window), None


def parse_line(
    line: str | bytes,
    line_no: int = 0,
    *,
    max_bytes: int = MAX_LINE_BYTES,
    parser: LineParser | None = None,
    fast: bool = True,
) -> Parsed | Rejection:
    """One feed line → :class:`Parsed` (the fact and its stored bytes) or a :class:`Rejection`,
    exactly as ingest decides (the round's own checks — ``seq``, duplicates — aside).

    ``parser`` carries the shortcuts' caches and the accepted window of event times from line
    to line (one per ingest; its own ``fast`` and ``max_bytes`` then apply); without it a fresh
    one is used."""
    if parser is None:
        parser = LineParser(max_bytes, fast=fast)
    fact, content = parser.parse(line, line_no)
    if isinstance(fact, Rejection):
        return fact
    return Parsed(fact, content if content is not None else content_of(fact))
