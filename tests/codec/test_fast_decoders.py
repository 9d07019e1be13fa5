"""The native decoders (``ledger.codec.native``) accept exactly what the models accept, and give
equal facts: on every example line, and on each field of them replaced by hostile values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from ledger.codec.native import fast_validate_json, native_validate_json
from ledger.codec.rows import all_kinds
from ledger.domain.equipment import _CARDS, _TILES
from ledger.domain.rulebook import complete_rulebook
from ledger.games import GAMES

NAMES = ("rl", "fpc", "3cb", "sp9", "mj", "stud")

HOSTILE: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    7,
    8,
    -1,
    1.5,
    3.0,
    10**30,
    "",
    " ",
    "a",
    "a" * 40,
    "a" * 41,
    "ab c",
    "b1\n",
    "\nb1",
    "é",
    "b\u00e91",
    "１",
    "P-96",
    "x.y_z-1",
    "0",
    "00",
    "01",
    "1.",
    ".5",
    "1.5",
    "1.50",
    "1.505",
    "-1",
    "-0",
    "+1",
    "1e3",
    "NaN",
    "Infinity",
    " 100",
    "100 ",
    "100\n",
    "999999999999999",
    "1000000000000000",
    "0.00",
    "dealer",
    "banker",
    "2026-11-20T10:01:32+08:00",
    "2026-11-20T10:01:32Z",
    "2026-11-20T10:01:32.123456789+08:00",
    "2026-13-20T10:01:32+08:00",
    "2026-02-30T10:01:32+08:00",
    "2026-11-20T10:01:32",
    "2026-11-20 10:01:32+08:00",
    "2026-11-20T10:01:32+08:00\n",
    "2026-11-20T24:00:00+08:00",
    "AS",
    "TD",
    "1S",
    "AX",
    "as",
    "AS ",
    "10S",
    "A",
    "5B",
    "9D",
    "0B",
    "EW",
    "ew",
    "RD",
    "RD\n",
    [],
    ["AS"],
    {},
    {"kind": "x"},
    *list(_CARDS)[:8],
    *list(_TILES)[:8],
]


def _lines(examples: Path) -> list[bytes]:
    return [
        line.encode()
        for name in NAMES
        for line in (examples / f"{name}.jsonl").read_text().splitlines()
        if line.strip()
    ]


def _class(obj: dict[str, Any]) -> Any:
    return GAMES[obj["game"]].event_class(obj["type"])


def _outcome(decode: Any, content: bytes) -> Any:
    try:
        return ("ok", decode(content))
    except (ValidationError, ValueError):
        return ("refused", None)


_NATIVE: dict[Any, Any] = {}


def _native(cls: Any) -> Any:
    if cls not in _NATIVE:
        _NATIVE[cls] = native_validate_json(cls)
    return _NATIVE[cls]


def _same(cls: Any, content: bytes) -> None:
    slow = _outcome(cls.model_validate_json, content)
    fast = _outcome(_native(cls), content)
    assert fast[0] == slow[0], content
    if fast[1] is not None:
        assert type(fast[1]) is cls
        assert fast[1] == slow[1], content
        assert fast[1].model_dump_json() == slow[1].model_dump_json()


def test_every_example_line_decodes_as_its_model_does(examples: Path) -> None:
    for line in _lines(examples):
        obj = json.loads(line)
        if obj["type"] == "round_opened":
            obj["rules"] = json.loads(complete_rulebook(obj.get("rulebook")).model_dump_json())
        _same(_class(obj), json.dumps(obj).encode())


def test_hostile_values_are_refused_exactly_when_the_model_refuses_them(examples: Path) -> None:
    seen: set[tuple[Any, str]] = set()
    for line in _lines(examples):
        obj = json.loads(line)
        cls = _class(obj)
        for key, value in obj.items():
            if (cls, key) in seen or key in ("rulebook", "type", "game"):
                continue
            seen.add((cls, key))
            for bad in HOSTILE:
                _same(cls, json.dumps({**obj, key: bad}).encode())
            if isinstance(value, dict):  # one level down: a spot, a meld
                for inner in value:
                    for bad in HOSTILE:
                        _same(cls, json.dumps({**obj, key: {**value, inner: bad}}).encode())
            if isinstance(value, list) and value:
                for bad in HOSTILE:
                    _same(cls, json.dumps({**obj, key: [bad, *value[1:]]}).encode())
    assert len(seen) > 100


@pytest.mark.parametrize("topic", sorted(all_kinds()))
def test_the_verify_decoder_of_every_topic_is_the_native_one(topic: str) -> None:
    kind = all_kinds()[topic]
    assert kind.decode is fast_validate_json(kind.cls)
    assert kind.first is native_validate_json(kind.cls)
    plain = all_kinds(fast=False)[topic]
    assert plain.decode == plain.first == kind.cls.model_validate_json


def test_a_refused_row_raises_the_models_own_error(examples: Path) -> None:
    line = next(line for line in _lines(examples) if b'"bet_placed"' in line)
    bad = json.dumps({**json.loads(line), "amount": "1.505"}).encode()
    cls = _class(json.loads(line))
    with pytest.raises(ValidationError) as slow:
        cls.model_validate_json(bad)
    with pytest.raises(ValidationError) as fast:
        fast_validate_json(cls)(bad)
    assert fast.value.errors() == slow.value.errors()
    assert slow.value.errors()[0]["type"] == "bad_money"
