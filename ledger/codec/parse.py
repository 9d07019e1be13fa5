"""Parsing one feed line into its model, or a :class:`Rejection` that says exactly why not.

A rejection names the line number, the field (a dotted path such as ``spot.numbers.1``), a
stable ``code`` from :data:`REJECT_CODES`, and a message. Parsing is bounded: a line over
:data:`MAX_LINE_BYTES`, nesting deeper than JSON allows here, NaN/Infinity and numbers beyond
reason are rejected with a code, never an exception.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ledger.domain.rulebook import complete_rulebook
from ledger.feed.envelope import FeedEvent, RoundOpened
from ledger.feed.window import Window, outside_window
from ledger.games import GAMES

MAX_LINE_BYTES = 256 * 1024
"""The longest feed line accepted (a Mah-Jong round_opened is well under 2 KiB)."""

REJECT_CODES: dict[str, str] = {
    "line_too_long": f"the line is longer than {MAX_LINE_BYTES} bytes",
    "invalid_json": "the line is not valid JSON (or not UTF-8, or holds NaN/Infinity)",
    "not_an_object": "the line is JSON but not an object",
    "unsupported_version": "`v` is not 1",
    "unknown_game": "`game` is not one of SP9 FPC 3CB MJ RL STUD",
    "unknown_type": "`type` is not an event of this game",
    "missing_field": "a required field is absent",
    "unknown_key": "a key the format does not define (a typo must not pass silently)",
    "bad_money": "money that is not a decimal string with at most two decimals",
    "bad_card": "a card not in the notation AS, TD, 7C",
    "bad_tile": "a Mah-Jong tile not in the notation 1B-9D, EW SW WW NW, RD GD WD",
    "bad_code": "a table, round, bet or player id outside [A-Za-z0-9._-]{1,40}",
    "bad_timestamp": "`at` is not an RFC 3339 timestamp with offset, or lies outside the accepted "
    "window (LEDGER_EARLIEST_AT / LEDGER_LATEST_AT, docs/SECURITY.md)",
    "duplicate_key": "a JSON object (the line, a spot, a rulebook, …) names the same key twice",
    "bad_rulebook": "the rulebook has an unknown key or a bad value (FEED Appendix A)",
    "invalid_value": "a field has the wrong type or a value out of range",
    "seq_gap": "`seq` skips: the previous seq of this round was not stored",
    "not_opened": "the first line of a round must be round_opened with seq 1",
    "game_mismatch": "the line's game differs from the game its round was opened with",
    "event_after_close": "a line after round_closed or round_voided",
    "conflicting_duplicate": "same table, round and seq as a stored event, different content",
}
"""Every reason a line can be rejected at ingest, by stable code."""

_PYDANTIC_CODES = {
    "missing": "missing_field",
    "extra_forbidden": "unknown_key",
    "bad_money": "bad_money",
    "bad_card": "bad_card",
    "bad_tile": "bad_tile",
    "bad_code": "bad_code",
    "bad_timestamp": "bad_timestamp",
}


@dataclass(frozen=True)
class Rejection:
    """Why one feed line cannot be stored."""

    line: int
    code: str
    message: str
    field: str | None = None

    def as_dict(self, text: str | bytes | None = None) -> dict[str, Any]:
        """The rejects-file form; ``text`` is the original line (cut to 4 KiB if longer)."""
        out: dict[str, Any] = {
            "line": self.line,
            "code": self.code,
            "field": self.field,
            "message": self.message,
        }
        if text is not None:
            if isinstance(text, bytes):
                text = text[:4096].decode("utf-8", errors="replace")
            out["text"] = text[:4096]
        return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


class DuplicateKey(ValueError):
    """A JSON object names one key twice (``{"amount":"1","amount":"5000"}``)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} appears twice in one object")
        self.key = key


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook``: the object as a dict, unless a key repeats (then the last one
    would silently win)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return obj


def load_json(text: str | bytes) -> Any:
    """``json.loads`` that refuses NaN and Infinity (RFC 8259 has neither) and an object that
    names a key twice, at any depth (:class:`DuplicateKey`)."""
    return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_object)


def parse_line(
    text: str | bytes,
    line_no: int,
    *,
    max_bytes: int = MAX_LINE_BYTES,
    window: bool | Window = True,
) -> FeedEvent | Rejection:
    """Validate one line; a ``round_opened`` comes back with its completed, hashed rulebook.

    ``window=False`` skips the accepted-time check (``ledger.feed.window``): only for the
    placeholder lines of ``ledger.codec.openings``, whose filled-in times are checked there. A
    ``(earliest, latest)`` pair is the accepted window as already read (by an ingest, once),
    so that it is not read from the environment again for every line."""
    if len(text) > max_bytes:
        return Rejection(line_no, "line_too_long", f"the line is longer than the limit of {max_bytes} bytes")
    try:
        obj = load_json(text)
    except DuplicateKey as exc:
        return Rejection(
            line_no,
            "duplicate_key",
            f"{exc}: a repeated key is refused, never resolved (the last value would win)",
            exc.key,
        )
    except (ValueError, RecursionError) as exc:
        return Rejection(line_no, "invalid_json", f"not valid JSON: {exc}")
    if not isinstance(obj, dict):
        return Rejection(line_no, "not_an_object", f"expected a JSON object, got {type(obj).__name__}")
    return parse_object(obj, line_no, window=window)


def parse_object(obj: dict[str, Any], line_no: int, *, window: bool | Window = True) -> FeedEvent | Rejection:
    """Validate one decoded line (see :func:`parse_line`)."""
    if obj.get("v") != 1 or type(obj.get("v")) is not int:
        return Rejection(line_no, "unsupported_version", f"`v` must be 1, got {obj.get('v')!r}", "v")
    key = obj.get("game")
    game = GAMES.get(key) if isinstance(key, str) else None  # a list/object key is unhashable
    if game is None:
        return Rejection(
            line_no,
            "unknown_game",
            f"`game` must be one of {' '.join(GAMES)}, got {obj.get('game')!r}",
            "game",
        )
    type_name = obj.get("type")
    cls = game.event_class(type_name) if isinstance(type_name, str) else None
    if cls is None:
        return Rejection(line_no, "unknown_type", f"{game.key} has no event type {obj.get('type')!r}", "type")
    try:
        event = cls.model_validate(obj)
    except ValidationError as exc:
        return _from_validation_error(exc, obj, line_no)
    outside = None if window is False else outside_window(event.at, None if window is True else window)
    if outside is not None:
        return Rejection(line_no, "bad_timestamp", f"at: {outside}", "at")
    if isinstance(event, RoundOpened):
        return _with_rules(event, line_no)
    return event


def _with_rules(event: RoundOpened, line_no: int) -> RoundOpened | Rejection:
    if event.rules is not None or event.rules_hash is not None:
        return Rejection(
            line_no,
            "unknown_key",
            "`rules` and `rules_hash` are derived by the ledger; a feed sends `rulebook`",
            "rules",
        )
    try:
        rules = complete_rulebook(event.rulebook)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in ("rulebook", *err["loc"]))
        return Rejection(line_no, "bad_rulebook", f"{where}: {err['msg']}", where)
    for spot, limit in rules.limits.items():
        if limit.min is not None and limit.max is not None and limit.min > limit.max:
            where = f"rulebook.limits.{spot}"
            return Rejection(
                line_no,
                "bad_rulebook",
                f"{where}: min {limit.min} is above max {limit.max}: no stake could be valid",
                where,
            )
    return event.model_copy(update={"rules": rules, "rules_hash": rules.content_hash()})


def _field_path(loc: tuple[int | str, ...], obj: Any) -> str:
    """The dotted path of an error in the *input*, leaving out pydantic's union tags."""
    parts: list[str] = []
    node = obj
    for i, step in enumerate(loc):
        more = i + 1 < len(loc)
        if isinstance(node, dict) and more and node.get("kind") == step:
            continue  # the tag of a union discriminated by "kind"
        if isinstance(node, dict) and step in node:
            node = node[step]
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            node = node[int(step)]  # an index into the input list
        elif isinstance(step, str) and (
            (more and isinstance(node, dict)) or not isinstance(node, (dict, list))
        ):
            continue  # a union member name, or pydantic's "[key]" label
        parts.append(str(step))
    return ".".join(parts)


def _from_validation_error(exc: ValidationError, obj: Any, line_no: int) -> Rejection:
    errors = exc.errors()
    err = errors[0]
    where = _field_path(err["loc"], obj)
    code = _PYDANTIC_CODES.get(err["type"], "invalid_value")
    message = f"{where}: {err['msg']}" if where else err["msg"]
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more)"
    return Rejection(line_no, code, message, where or None)
