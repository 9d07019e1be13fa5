"""The codec's fast mode equals its reference mode, over generated feed lines of all six games.

One property: a short feed — lines of the example feeds and of the simulators (``ledger.tools.simulate``,
with injected errors), each kept or made hostile (a field deleted, a value of the wrong type, a
huge number, unicode, a duplicated key, other whitespace or key order, truncated JSON, an extra
field, another table, round or time) and some repeated, so that the shortcuts' caches are hit —
goes through :func:`ledger.codec.parse_line` fast and as the reference, one parser of each per
feed. Every line must give the same fact and the same stored bytes, or the same rejection (code,
field, message). Every stored fact's row, as parsed and with damaged bytes, must then decode the
same through :func:`ledger.codec.decode_row` fast and as the reference (same fact, or the same
error), and decode to the fact parsed.

The property runs the Hypothesis profile's examples (few in the developer's tier, where every
seed line is also checked as it is, many in a full run); the slow tier adds
:data:`EXAMPLES_SLOW` feeds.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger.codec import LineParser, Parsed, RowDecoder, decode_row, parse_line
from ledger.codec.chain import frame
from ledger.codec.facts import topic_of
from ledger.codec.parse import Rejection
from ledger.games import GAMES
from ledger.tools.simulate import simulate

EXAMPLES_SLOW = 3000
GAME_FILES = ("rl", "fpc", "3cb", "sp9", "mj", "stud")
DIGEST = "ab" * 32


@cache
def _seeds() -> tuple[bytes, ...]:
    """Every example line of the six games, and a small simulated feed with injected errors."""
    folder = Path(os.environ["LEDGER_EXAMPLES"])
    lines = [
        line.encode()
        for name in GAME_FILES
        for line in (folder / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    sim = simulate(list(GAMES.values()), rounds=3, tables=1, seed=29, error_rate=0.5)
    lines += [json.dumps(line, separators=(",", ":")).encode() for line in sim.lines]
    return tuple(lines)


@cache
def _openings() -> tuple[bytes, ...]:
    """The seed lines that open a round (the costliest line, with a shortcut of its own)."""
    return tuple(line for line in _seeds() if b'"type":"round_opened"' in line)


@cache
def _seed_strategies() -> tuple[st.SearchStrategy[bytes], st.SearchStrategy[bytes]]:
    """Drawing from the openings and from every seed line: built once (a ``sampled_from`` made
    at each draw had its label computed again over every seed line, most of the property's
    time)."""
    return st.sampled_from(_openings()), st.sampled_from(_seeds())


def test_the_seeds_cover_every_game() -> None:
    games = {json.loads(line)["game"] for line in _seeds()}
    assert games == set(GAMES) and len(GAMES) == 6


HOSTILE: list[Any] = [
    None,
    True,
    0,
    -1,
    10**40,
    1.5,
    "1e999",
    "",
    "x" * 300,
    "ÄÖ€😀",
    "\u0000",
    [],
    {},
    ["AS"],
    {"kind": "straight"},
    "1.005",
    "-0.00",
    "2026-13-40T99:99:99+08:00",
    "2026-11-21T20:00:03Z",
]


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path of a decoded line (dict keys and list indices)."""
    found: list[tuple[Any, ...]] = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        found.append((*prefix, key))
        found += _paths(value, (*prefix, key))
    return found


def _parent(obj: Any, path: tuple[Any, ...]) -> Any:
    for step in path[:-1]:
        obj = obj[step]
    return obj


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


_CHANGES = st.sampled_from(
    [
        "keep",
        "keep",
        "delete",
        "value",
        "duplicate",
        "spaces",
        "truncate",
        "extra",
        "reorder",
        "own",
        "escape",
        "number",
    ]
)
_SPACES = st.sampled_from(range(6))
_DUPLICATE_KEY = st.sampled_from(["v", "table", "round", "seq", "at", "type", "amount", "bet"])
_DUPLICATE_VALUE = st.sampled_from(['"5000"', "1", '"A"', '"2026-11-21T20:00:03+08:00"'])
_HOSTILE = st.sampled_from(HOSTILE)
_NUMBER = st.one_of(st.integers(), st.decimals(allow_nan=False).map(str))
_EXTRA_KEY = st.sampled_from(["extra", "rules", "rules_hash", "note", "Table"])
_OWN_FIELD = st.sampled_from(["table", "round", "at", "seq"])
_OWN_VALUE = {
    "table": st.one_of(
        st.from_regex(r"[A-Za-z0-9._-]{1,12}", fullmatch=True),
        st.sampled_from(["a" * 40, "a" * 41, "tä", "x y", ""]),
    ),
    "at": st.sampled_from(
        [
            "2026-11-21T20:00:03+08:00",
            "2026-11-21T12:00:03+00:00",
            "2026-11-21T12:00:03Z",
            "2026-11-21T20:00:03.500000+08:00",
            "1999-01-01T00:00:00+00:00",
            "2026-11-21 20:00:03+08:00",
        ]
    ),
    "seq": st.sampled_from([1, 2, 9999999, 0, "1", 1.0]),
}
_OWN_VALUE["round"] = _OWN_VALUE["table"]
"""The strategies :func:`_line` draws from, built once: one built at each draw was validated
again each time, a third of the property's time."""


def _spaced(raw: bytes, which: int) -> bytes:
    """The line with other whitespace: one of six ways."""
    if which == 0:
        return b" " + raw
    if which == 1:
        return raw + b" "
    if which == 2:
        return raw.replace(b'","', b'", "', 1)
    if which == 3:
        return raw.replace(b'":', b'" :', 1)
    if which == 4:
        return json.dumps(json.loads(raw)).encode()
    return json.dumps(json.loads(raw), indent=1).encode()


@st.composite
def _line(draw: st.DrawFn) -> bytes:
    """A seed line, as it is or made hostile in one way."""
    openings, seeds = _seed_strategies()
    raw = draw(openings if draw(st.integers(0, 3)) == 0 else seeds)
    change = draw(_CHANGES)
    if change == "keep":
        return raw
    if change == "truncate":
        return raw[: draw(st.integers(0, len(raw) - 1))]
    if change == "spaces":
        return _spaced(raw, draw(_SPACES))
    if change == "duplicate":
        key, value = draw(_DUPLICATE_KEY), draw(_DUPLICATE_VALUE)
        cut = raw.rindex(b"}")
        return raw[:cut] + f',"{key}":{value}'.encode() + raw[cut:]
    if change == "escape":  # the first letter of the type as a \u escape: the same JSON string
        start = raw.find(b'"type":"') + len(b'"type":"')
        return raw[:start] + b"\\u%04x" % raw[start] + raw[start + 1 :]
    obj = json.loads(raw)
    paths = _paths(obj)
    if change == "delete":
        path = draw(st.sampled_from(paths))
        parent = _parent(obj, path)
        del parent[path[-1]]
    elif change == "value":
        path = draw(st.sampled_from(paths))
        _parent(obj, path)[path[-1]] = draw(_HOSTILE)
    elif change == "number":
        path = draw(st.sampled_from(paths))
        _parent(obj, path)[path[-1]] = draw(_NUMBER)
    elif change == "extra":
        obj[draw(_EXTRA_KEY)] = draw(_HOSTILE)
    elif change == "reorder":
        keys = list(obj)
        order = draw(st.permutations(keys))
        obj = {key: obj[key] for key in order}
    elif change == "own":
        field = draw(_OWN_FIELD)
        obj[field] = draw(_OWN_VALUE[field])
    return _dumps(obj)


def _outcome(decode: Any, *args: Any) -> Any:
    try:
        return ("fact", decode(*args))
    except ValueError as exc:  # ValidationError is one
        errors = exc.errors() if hasattr(exc, "errors") else str(exc)
        return ("error", type(exc).__name__, errors)


def _check_feed(lines: list[bytes]) -> None:
    fast, plain = LineParser(fast=True), LineParser(fast=False)
    fast_rows, plain_rows = RowDecoder(fast=True), RowDecoder(fast=False)
    for n, line in enumerate(lines, 1):
        got = parse_line(line, n, parser=fast)
        want = parse_line(line, n, parser=plain)
        assert got == want, line
        if isinstance(got, Rejection):
            continue
        assert isinstance(got, Parsed)
        topic = topic_of(got.fact)
        state = frame(DIGEST, got.content)
        stored = decode_row(topic, state, decoder=fast_rows)
        assert stored == decode_row(topic, state, decoder=plain_rows)
        assert stored.fact == got.fact and stored.content == got.content and stored.digest == DIGEST
        for damaged in (got.content.replace(b'"', b"'", 1), got.content[:-1], got.content + b" ", b"{}"):
            assert _outcome(fast_rows.fact, topic, damaged) == _outcome(plain_rows.fact, topic, damaged)


_FEEDS = st.lists(_line(), min_size=1, max_size=8).flatmap(
    lambda lines: st.permutations(lines + lines[: len(lines) // 2])
)
"""A short feed; half of its lines come twice (the caches of the fast mode are then hit)."""
_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@settings(**_SETTINGS)  # type: ignore[arg-type]
@given(_FEEDS)
def test_fast_parsing_and_decoding_equal_the_reference(lines: list[bytes]) -> None:
    _check_feed(lines)


@pytest.mark.slow
@settings(max_examples=EXAMPLES_SLOW, **_SETTINGS)  # type: ignore[arg-type]
@given(_FEEDS)
def test_fast_parsing_and_decoding_equal_the_reference_at_length(lines: list[bytes]) -> None:
    _check_feed(lines)


def test_the_whole_seed_feed_gives_equal_results_and_the_shortcuts_are_taken() -> None:
    """Every seed line in order (the shortcuts' usual case), then again (every cache warm)."""
    lines = list(_seeds())
    _check_feed(lines + lines)
    parser = LineParser()
    for n, line in enumerate(lines, 1):
        parser.parse(line, n)
    assert parser.canonical > len(lines) // 2
