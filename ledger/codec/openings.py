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
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from ledger.codec.library import is_plain_model, model_with, pin_method
from ledger.codec.native import fast_validate_json, native_validate_json
from ledger.codec.parse import parse_line
from ledger.domain.rulebook import Rulebook
from ledger.feed.envelope import RoundOpened
from ledger.feed.types import Timestamp
from ledger.feed.window import accepted_window
from ledger.games import GAMES

_OPENING = re.compile(
    rb'\{"v":1,"table":"([A-Za-z0-9._-]{1,40})","game":"([A-Z0-9]{1,8})","round":'
    rb'"([A-Za-z0-9._-]{1,40})","seq":1,"at":"([^"\\]{1,64})","type":"round_opened",'
)
_OWN_FIELDS = (b'"table":', b'"round":', b'"at":')
_PLACE_TABLE = "table.placeholder"
_PLACE_ROUND = "round.placeholder"
_PLACE_AT = b"2000-01-01T00:00:00+00:00"
_TIMESTAMP: TypeAdapter[datetime] = TypeAdapter(Timestamp)
MAX_TEMPLATES = 256
"""Distinct tails remembered (one per table and rulebook in practice)."""
MAX_OPENING_TIMES = 4096
"""Distinct ``at`` bytes of openings remembered."""


TEMPLATE_MISSES = 8
TEMPLATE_PROBE_EVERY = 32
"""A reader that skips templates (:class:`OpeningDecoder`): after :data:`TEMPLATE_MISSES`
templates of one class and game built in a row with no opening filled from any of them (a
game whose openings differ after the round's own fields, as Mah-Jong's players and capital
do), only every :data:`TEMPLATE_PROBE_EVERY`-th new tail of that game gets a template; the
others are validated directly, which gives the same fact at a third of the cost."""


class _Templates:
    """Validated placeholder openings, by game and tail bytes."""

    def __init__(self, *, skip: bool = False) -> None:
        self._known: dict[tuple[Any, bytes, bytes], Any] = {}
        self._skip = skip
        """Whether a game whose templates are never reused stops getting them (see
        :data:`TEMPLATE_MISSES`)."""
        self._misses: dict[tuple[Any, bytes], int] = {}
        """Templates built in a row for each class and game since one was last reused."""
        self._times: dict[bytes, datetime | None] = {}
        self._hashes: dict[bytes, str] = {}
        """Rulebook content hashes by the rulebook's JSON (tables differing only in their
        croupier share a rulebook: each gets a template of its own, not a hash of its own)."""
        self.hits = 0

    def fill(self, key: Any, content: bytes, validate: Any) -> Any:
        """The opening of ``content`` from a template, or ``None`` (validate in full)."""
        match = _OPENING.match(content)
        if match is None:
            return None
        slot = (key, match.group(2), content[match.end() :])
        template = self._known.get(slot)
        if template is None:
            if self._skip:
                game = (key, slot[1])
                misses = self._misses[game] = self._misses.get(game, 0) + 1
                if misses > TEMPLATE_MISSES and (misses - TEMPLATE_MISSES) % TEMPLATE_PROBE_EVERY:
                    return None
            template = _template(slot[1], slot[2], validate, self._hashes)
            if len(self._known) >= MAX_TEMPLATES:
                self._known.clear()
            self._known[slot] = template
        elif self._skip:
            self._misses[(key, slot[1])] = 0
        if template is False:
            return None
        at = self._time(match.group(4))
        if at is None:
            return None
        self.hits += 1
        return template.fill(match.group(1).decode("ascii"), match.group(3).decode("ascii"), at)

    def _time(self, text: bytes) -> datetime | None:
        """``at`` as the model validates it (a pure function of its bytes, so remembered:
        rounds opened at one moment at many tables share it); ``None`` if it is refused."""
        times = self._times
        if text in times:
            return times[text]
        try:
            at: datetime | None = _TIMESTAMP.validate_json(b'"' + text + b'"')
        except ValidationError:
            at = None
        if len(times) >= MAX_OPENING_TIMES:
            times.clear()
        times[text] = at
        return at


def _template(
    game: bytes, tail: bytes, validate: Any, hashes: dict[bytes, str]
) -> _Template | Literal[False]:
    if any(name in tail for name in _OWN_FIELDS):
        return False  # the tail may name one of the round's own fields again
    probe = (
        b'{"v":1,"table":"'
        + _PLACE_TABLE.encode()
        + b'","game":"'
        + game
        + b'","round":"'
        + _PLACE_ROUND.encode()
        + b'","seq":1,"at":"'
        + _PLACE_AT
        + b'","type":"round_opened",'
        + tail
    )
    template = validate(probe)
    if not isinstance(template, RoundOpened):
        return False
    if (
        template.table != _PLACE_TABLE
        or template.round != _PLACE_ROUND
        or template.seq != 1
        or template.at != _TIMESTAMP.validate_json(b'"' + _PLACE_AT + b'"')
    ):
        return False
    if template.rules is not None:
        # Every round filled from this template shares this frozen rulebook, and verify checks
        # its hash once per round (7-10 % of verify): hash it once. Pydantic compares and
        # serialises fields only, so the instance stays equal to a freshly validated one.
        pin_method(template.rules, "content_hash", _rules_hash(template.rules, hashes))
    return _Template(template)


def _rules_hash(rules: Rulebook, hashes: dict[bytes, str]) -> str:
    """``rules.content_hash()``, remembered by the rulebook's own JSON: equal JSON is an equal
    ``model_dump(mode="json")``, hence equal canonical bytes and hash; any other byte is
    another key, so a changed rulebook is always hashed afresh."""
    key = rules.__pydantic_serializer__.to_json(rules)
    digest = hashes.get(key)
    if digest is None:
        digest = rules.content_hash()
        if len(hashes) >= MAX_TEMPLATES:
            hashes.clear()
        hashes[key] = digest
    return digest


class _Template:
    """A validated placeholder opening, and how to give a copy of it with a round's own fields.

    :meth:`fill` equals ``opening.model_copy(update={"table": …, "round": …, "at": …})`` — a new
    instance of the same class whose ``__dict__`` is a copy of the template's with the three
    fields replaced and whose set fields gain the three — built without ``model_copy``'s
    generic steps (its update loop, ``extra`` and private copies: these models have neither).
    """

    __slots__ = ("cls", "fields", "fields_set", "opening", "plain")

    def __init__(self, opening: RoundOpened) -> None:
        self.opening = opening
        self.cls = type(opening)
        self.fields = opening.__dict__
        self.fields_set = opening.__pydantic_fields_set__ | {"table", "round", "at"}
        # Anything that model_copy would carry besides __dict__ and the set fields: then use it.
        self.plain = is_plain_model(opening)

    def fill(self, table: str, round: str, at: datetime) -> Any:
        """The opening with the round's own ``table``, ``round`` and ``at``."""
        if not self.plain:
            return self.opening.model_copy(update={"table": table, "round": round, "at": at})
        values = self.fields.copy()
        values["table"] = table
        values["round"] = round
        values["at"] = at
        return model_with(self.cls, values, self.fields_set)


class OpeningDecoder:
    """``decode(cls, content)`` equals ``cls.model_validate_json(content)`` for stored facts."""

    def __init__(self) -> None:
        self._templates = _Templates(skip=True)
        self._probes: dict[Any, Any] = {}

    def decode(self, cls: Any, content: bytes) -> Any:
        """The validated fact; raises exactly what ``model_validate_json`` raises.

        Bytes no template takes are validated by the model's native twin (which gives the
        model's own errors), and a rulebook they carry answers ``content_hash`` from the hashes
        already computed, as a template's does."""
        if cls is None:
            raise ValueError("unknown topic")
        probe = self._probes.get(cls)
        if probe is None:
            probe = self._probes[cls] = _prober(cls)
        if probe is False:
            return cls.model_validate_json(content)
        fact = self._templates.fill(cls, content, probe)
        if fact is not None:
            return fact
        fact = fast_validate_json(cls)(content)
        rules = fact.rules
        if rules is not None and is_plain_model(rules):
            pin_method(rules, "content_hash", _rules_hash(rules, self._templates._hashes))
        return fact


def _prober(cls: Any) -> Any:
    """How to validate a placeholder opening of ``cls``; ``False`` if ``cls`` is no opening."""
    if not issubclass(cls, RoundOpened):
        return False
    return lambda probe: _or_none(cls, probe)


def _or_none(cls: Any, probe: bytes) -> Any:
    try:
        return cls.model_validate_json(probe)
    except (ValidationError, ValueError):
        return None


_CANONICAL = re.compile(
    rb'\{"v":1,"table":"[A-Za-z0-9._-]{1,40}","game":"([A-Z0-9]{1,8})","round":'
    rb'"[A-Za-z0-9._-]{1,40}","seq":[1-9][0-9]{0,6},"at":"([^"\\]{1,64})",'
    rb'"type":"([a-z_]{1,40})"(?:,|\}\Z)'
)
"""The envelope as the ledger writes it: every value but ``at`` in the one form pydantic
writes it (codes need no escape, ``seq`` has no leading zero); ``at`` is checked apart.
A line of an event without fields of its own (``round_closed``) ends right after ``type``."""
MAX_BODIES = 1 << 14
"""Canonical bodies remembered (the bytes after the envelope)."""
MAX_TIMES = 1 << 14
"""Checked ``at`` bytes of canonical lines remembered."""
SKIP_AFTER_MISSES = 8
PROBE_EVERY = 32
"""After :data:`SKIP_AFTER_MISSES` lines of one class in a row that were not canonical (their
body not seen before), only every :data:`PROBE_EVERY`-th line of that class tries the canonical
shortcut; the others go straight to the full path, which gives the same fact. One canonical
line starts the count again."""


class OpeningParser:
    """``parse(text, line_no)`` equals ``ledger.codec.parse.parse_line`` for feed lines.

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
    (``ledger.codec.native``): it accepts what they accept, with equal results.

    The accepted window of event times (``ledger.feed.window``) is read once, at the parser's
    first line (one ingest): the shortcuts compare against it; a time outside it takes the
    full path, which rejects it against the same window (not read again for every line).
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._window: tuple[datetime, datetime] | None = None
        self._templates = _Templates()
        self._bodies: set[tuple[type, bytes]] = set()
        self._times: dict[bytes, bool] = {}
        self._misses: dict[type, int] = {}
        """Lines of each class that were not canonical since the last one that was."""
        self.canonical = 0
        self.reordered = 0
        """Lines taken by the reordered-canonical shortcut (:func:`_reordered`) so far."""

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
                taken = self._canonical(match, raw, window)
                if taken is not None:
                    return taken
            elif b'"type":"round_opened"' in raw[:200]:
                fact = self._templates.fill("line", raw, lambda probe: parse_line(probe, 0, window=False))
                if fact is not None and window[0] <= fact.at < window[1]:
                    return fact, None
        return parse_line(text, line_no, max_bytes=self.max_bytes, window=self._window or True), None

    def _canonical(
        self, match: re.Match[bytes], raw: bytes, window: tuple[datetime, datetime]
    ) -> tuple[Any, bytes] | None:
        """``(fact, stored bytes)`` of a canonical line with ``at`` in the window, or of a
        *reordered* one (:func:`_reordered`); ``None``: take the full path.

        Serialising the fact to compare (about a third of the cost) is needed once per
        distinct *body* (the bytes after the envelope) and class: a body seen in a canonical
        line before serialises to the same bytes again, and an envelope matching
        :data:`_CANONICAL` serialises to itself once ``at`` is written as the fact writes it.
        """
        decoder = _DECODERS.get((match.group(1), match.group(3)))
        if decoder is None:
            decoder = _decoder(match.group(1), match.group(3))
            if decoder is None:
                return None
        cls, validate, self_contained = decoder
        body = (cls, raw[match.end() :])
        known = body in self._bodies  # only classes whose validators cannot see the envelope
        if not known:
            misses = self._misses.get(cls, 0)
            if misses >= SKIP_AFTER_MISSES and misses % PROBE_EVERY:
                # This class's lines keep coming in a form neither shortcut takes: validating
                # and serialising them only to find that costs a fifth of their full path.
                self._misses[cls] = misses + 1
                return None
        try:
            fact = validate(raw)
        except (ValidationError, ValueError):
            return None
        if known:
            at = match.group(2)
            ok = self._times.get(at)
            if ok is None:
                ok = self._time_ok(at, fact.at, window)
            if not ok:
                return None
            self.canonical += 1
            return fact, raw
        content = cls.__pydantic_serializer__.to_json(fact, exclude_none=True)
        if content != raw:
            if not (self_contained and _reordered(match.end(), raw, content)):
                self._misses[cls] = self._misses.get(cls, 0) + 1
                return None
            self._misses[cls] = 0
            if not window[0] <= fact.at < window[1]:
                return None
            self.reordered += 1
            return fact, content
        self._misses[cls] = 0
        if not window[0] <= fact.at < window[1]:
            return None
        if self_contained:
            if len(self._bodies) >= MAX_BODIES:
                self._bodies.clear()
            self._bodies.add(body)
        self.canonical += 1
        return fact, raw

    def _time_ok(self, text: bytes, at: datetime, window: tuple[datetime, datetime]) -> bool:
        """Whether ``at`` (validated from ``text`` by a self-contained class, so a function of
        ``text`` alone) is written back as ``text`` and lies in the window; remembered by
        ``text``, since many lines share a moment."""
        known = at.isoformat().encode("ascii") == text and window[0] <= at < window[1]
        if len(self._times) >= MAX_TIMES:
            self._times.clear()
        self._times[text] = known
        return known


_STRING = rb'"[^"\\]*"'
_FLAT_ARRAY = rb'\[[^{}\[\]"]*(?:' + _STRING + rb'[^{}\[\]"]*)*\]'
_FLAT_OBJECT = rb'\{[^{}\[\]"]*(?:(?:' + _STRING + rb"|" + _FLAT_ARRAY + rb')[^{}\[\]"]*)*\}'
_MEMBER = re.compile(
    rb'"[a-z_][a-z0-9_]*":(?:'
    + _STRING
    + rb"|-?(?:0|[1-9][0-9]*)|true|false|null|"
    + _FLAT_OBJECT
    + rb"|"
    + _FLAT_ARRAY
    + rb")"
)
"""One member of a body with no escape in it: a key and a string, an integer, a literal, an
array of no array or object, or an object holding no object and only such arrays."""


def _reordered(start: int, raw: bytes, content: bytes) -> bool:
    """Whether the line ``raw`` is the fact's canonical bytes ``content`` with the members of
    its body (after the envelope, which ends at ``start``) in another order.

    Both bodies are cut into members by :data:`_MEMBER`, and each cut must give back its body
    exactly (members joined by single commas; no backslash anywhere, so every string is one
    member's and no quote is escaped). ``content`` is pydantic's JSON, whose keys are distinct;
    the same multiset of members makes ``raw`` the same JSON object written in another order:
    no key twice, no NaN, no other value, so the full path would give the same fact (checked
    only for self-contained classes, whose validation cannot depend on the order)."""
    if len(raw) != len(content) or raw[:start] != content[:start] or raw[start - 1 : start] != b",":
        return False
    if b"\\" in raw or raw[-1:] != b"}":
        return False
    body, canonical = raw[start:-1], content[start:-1]
    got = _MEMBER.findall(body)
    want = _MEMBER.findall(canonical)
    return (
        len(got) == len(want)
        and b",".join(got) == body
        and b",".join(want) == canonical
        and sorted(got) == sorted(want)
    )


_Decoder = tuple[Any, Callable[[bytes], Any], bool]
_DECODERS: dict[tuple[bytes, bytes], _Decoder] = {}
"""``(game, type)`` as bytes → the feed model, its native validator, whether it is
self-contained (:func:`_self_contained`)."""


def _decoder(game: bytes, type_name: bytes) -> _Decoder | None:
    cls = _feed_classes().get((game, type_name))
    if cls is None:
        return None
    decoder = _DECODERS[(game, type_name)] = (cls, native_validate_json(cls), _self_contained(cls))
    return decoder


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
        known = _SELF_CONTAINED[cls] = (
            decorators is not None and not decorators.model_validators and not decorators.field_validators
        )
    return known
