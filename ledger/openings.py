"""Fast paths for ``round_opened``: one validation per distinct rulebook, not one per round.

A ``round_opened`` carries its table's rulebook (and, once stored, the completed rulebook and
its hash), which makes it the most expensive line to validate — about twenty times a bet — while
every round of a table repeats the same bytes after the round's own fields. Both classes here
split such a line as tables and the ledger write it::

    {"v":1,"table":T,"game":G,"round":R,"seq":1,"at":A,"type":"round_opened",<tail>

validate ``<tail>`` once per distinct bytes (with placeholders for T, R and A), and fill in the
round's own T, R and A, each validated as its field type validates it.

The result equals the full validation of the same bytes. Whenever anything differs from that
shape — another key order, spaces, escapes, a tail that names ``table``, ``round`` or ``at``
again, any validation error — they return ``None`` and the caller validates in full, so
rejections, findings and their messages are exactly those of the full path.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ledger.feed.envelope import RoundOpened
from ledger.feed.fast import native_validate_json
from ledger.feed.parse import parse_line
from ledger.feed.types import Timestamp
from ledger.feed.window import accepted_window
from ledger.games import GAMES

_OPENING = re.compile(
    rb'\{"v":1,"table":"([A-Za-z0-9._-]{1,40})","game":"([A-Z0-9]{1,8})","round":'
    rb'"([A-Za-z0-9._-]{1,40})","seq":1,"at":"([^"\\]{1,64})","type":"round_opened",')
_OWN_FIELDS = (b'"table":', b'"round":', b'"at":')
_PLACE_TABLE = "table.placeholder"
_PLACE_ROUND = "round.placeholder"
_PLACE_AT = b"2000-01-01T00:00:00+00:00"
_TIMESTAMP: TypeAdapter[datetime] = TypeAdapter(Timestamp)
MAX_TEMPLATES = 256
"""Distinct tails remembered (one per table and rulebook in practice)."""


class _Templates:
    """Validated placeholder openings, by game and tail bytes."""

    def __init__(self) -> None:
        self._known: dict[tuple[Any, bytes], Any] = {}
        self.hits = 0

    def fill(self, key: Any, content: bytes, validate: Any) -> Any:
        """The opening of ``content`` from a template, or ``None`` (validate in full)."""
        match = _OPENING.match(content)
        if match is None:
            return None
        tail = content[match.end():]
        slot = (key, match.group(2) + b"|" + tail)
        template = self._known.get(slot)
        if template is None:
            template = _template(match.group(2), tail, validate)
            if len(self._known) >= MAX_TEMPLATES:
                self._known.clear()
            self._known[slot] = template
        if template is False:
            return None
        try:
            at = _TIMESTAMP.validate_json(b'"' + match.group(4) + b'"')
        except ValidationError:
            return None
        self.hits += 1
        return template.model_copy(update={
            "table": match.group(1).decode("ascii"), "round": match.group(3).decode("ascii"),
            "at": at})


def _template(game: bytes, tail: bytes, validate: Any) -> Any:
    if any(name in tail for name in _OWN_FIELDS):
        return False  # the tail may name one of the round's own fields again
    probe = (b'{"v":1,"table":"' + _PLACE_TABLE.encode() + b'","game":"' + game
             + b'","round":"' + _PLACE_ROUND.encode() + b'","seq":1,"at":"' + _PLACE_AT
             + b'","type":"round_opened",' + tail)
    template = validate(probe)
    if not isinstance(template, RoundOpened):
        return False
    if (template.table != _PLACE_TABLE or template.round != _PLACE_ROUND or template.seq != 1
            or template.at != _TIMESTAMP.validate_json(b'"' + _PLACE_AT + b'"')):
        return False
    if template.rules is not None:
        # Every round filled from this template shares this frozen rulebook, and verify checks
        # its hash once per round (7-10 % of verify): hash it once. Pydantic compares and
        # serialises fields only, so the instance stays equal to a freshly validated one.
        object.__setattr__(template.rules, "content_hash", _Known(template.rules.content_hash()))
    return template


class _Known:
    """A frozen rulebook's ``content_hash``, computed once (picklable, unlike a lambda)."""

    def __init__(self, digest: str) -> None:
        self.digest = digest

    def __call__(self) -> str:
        return self.digest


class OpeningDecoder:
    """``decode(cls, content)`` equals ``cls.model_validate_json(content)`` for stored facts."""

    def __init__(self) -> None:
        self._templates = _Templates()

    def decode(self, cls: Any, content: bytes) -> Any:
        """The validated fact; raises exactly what ``model_validate_json`` raises."""
        if cls is None:
            raise ValueError("unknown topic")
        if issubclass(cls, RoundOpened):
            fact = self._templates.fill(cls, content, lambda probe: _or_none(cls, probe))
            if fact is not None:
                return fact
        return cls.model_validate_json(content)


def _or_none(cls: Any, probe: bytes) -> Any:
    try:
        return cls.model_validate_json(probe)
    except (ValidationError, ValueError):
        return None


_CANONICAL = re.compile(
    rb'\{"v":1,"table":"[A-Za-z0-9._-]{1,40}","game":"([A-Z0-9]{1,8})","round":'
    rb'"[A-Za-z0-9._-]{1,40}","seq":[1-9][0-9]{0,6},"at":"([^"\\]{1,64})",'
    rb'"type":"([a-z_]{1,40})",')
"""The envelope as the ledger writes it: every value but ``at`` in the one form pydantic
writes it (codes need no escape, ``seq`` has no leading zero); ``at`` is checked apart."""
MAX_BODIES = 1 << 14
"""Canonical bodies remembered (the bytes after the envelope)."""


class OpeningParser:
    """``parse(text, line_no)`` equals ``ledger.feed.parse.parse_line`` for feed lines.

    Besides the ``round_opened`` templates it has a second shortcut, for **canonical** lines:
    a line whose bytes are exactly what the ledger stores for it (pydantic's JSON of the
    validated fact: keys in declaration order, no spaces, no escape it would not write, no
    duplicate key, no absent default). Such a line is validated straight from its bytes
    (``model_validate_json``: no ``json.loads``, no Python dict), and its bytes *are* its
    stored content, so it is not serialised a second time. The shortcut is taken only when
    serialising the validated fact gives back the very same bytes; a line with a duplicated
    key (serialised once, so shorter), another key order or spelling, or any validation error
    takes the full path of ``parse_line`` — the one place a duplicate-key check needs to sit —
    so every rejection is unchanged. The validation is the models' native twin
    (``ledger.feed.fast``): it accepts what they accept, with equal results.

    The accepted window of event times (``ledger.feed.window``) is read once, at the parser's
    first line (one ingest): the shortcuts compare against it; a time outside it takes the
    full path, which rejects it.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._window: tuple[datetime, datetime] | None = None
        self._templates = _Templates()
        self._bodies: set[tuple[type, bytes]] = set()
        self.canonical = 0

    def parse(self, text: str | bytes, line_no: int) -> Any:
        """The parsed event or rejection, as ``parse_line`` gives it."""
        return self.parse_with_content(text, line_no)[0]

    def parse_with_content(self, text: str | bytes, line_no: int) -> tuple[Any, bytes | None]:
        """``(parse(text, line_no), content)``: ``content`` is the fact's stored bytes when the
        line was canonical (the line itself), else ``None`` (serialise the fact)."""
        if len(text) <= self.max_bytes:
            window = self._window
            if window is None:
                window = self._window = accepted_window()
            raw = text if isinstance(text, bytes) else text.encode("utf-8")
            match = _CANONICAL.match(raw)
            if match is not None and match.group(3) != b"round_opened":
                fact = self._canonical(match, raw)
                if fact is not None and window[0] <= fact.at < window[1]:
                    self.canonical += 1
                    return fact, raw
            elif b'"type":"round_opened"' in raw[:200]:
                fact = self._templates.fill(
                    "line", raw, lambda probe: parse_line(probe, 0, window=False))
                if fact is not None and window[0] <= fact.at < window[1]:
                    return fact, None
        return parse_line(text, line_no, max_bytes=self.max_bytes), None


    def _canonical(self, match: re.Match[bytes], raw: bytes) -> Any:
        """The fact of a canonical line, or ``None`` (take the full path).

        Serialising the fact to compare (about a third of the cost) is needed once per
        distinct *body* (the bytes after the envelope) and class: a body seen in a canonical
        line before serialises to the same bytes again, and an envelope matching
        :data:`_CANONICAL` serialises to itself once ``at`` is written as the fact writes it.
        """
        cls = _feed_classes().get((match.group(1), match.group(3)))
        if cls is None:
            return None
        try:
            fact = native_validate_json(cls)(raw)
        except (ValidationError, ValueError):
            return None
        body = (cls, raw[match.end():])
        if body in self._bodies:  # only classes whose validators cannot see the envelope
            if fact.at.isoformat().encode("ascii") == match.group(2):
                return fact
            return None
        if fact.model_dump_json(exclude_none=True).encode() != raw:
            return None
        if _self_contained(cls):
            if len(self._bodies) >= MAX_BODIES:
                self._bodies.clear()
            self._bodies.add(body)
        return fact


_CLASSES: dict[tuple[bytes, bytes], Any] = {}


def _feed_classes() -> dict[tuple[bytes, bytes], Any]:
    """``(game, type)`` as bytes → the feed model (what ``parse_object`` looks up)."""
    if not _CLASSES:
        for key, game in GAMES.items():
            for cls in game.events:
                _CLASSES[(key.encode("ascii"), cls.TYPE.encode("ascii"))] = cls
    return _CLASSES


_SELF_CONTAINED: dict[type, bool] = {}


def _self_contained(cls: type) -> bool:
    """Whether ``cls`` validates its body without looking at other fields: no model validator
    and no field validator (either may read the envelope and change a body value)."""
    known = _SELF_CONTAINED.get(cls)
    if known is None:
        decorators = getattr(cls, "__pydantic_decorators__", None)
        known = _SELF_CONTAINED[cls] = (decorators is not None
                                        and not decorators.model_validators
                                        and not decorators.field_validators)
    return known
