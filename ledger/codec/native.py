"""Native decoders of the feed models: the same models, validated in Rust where the field types
allow it.

The feed's field types (codes, money, timestamps, cards, tiles, card places) validate with plain
Python functions, so that a bad value is rejected with the feed's own code and message
(``bad_code``, ``bad_money``, …). Pydantic calls each of them from Rust once per field of every
line: about a third of the cost of decoding a stored fact. :func:`fast_validate_json` gives,
per model class, a validator built from the model's own core schema with each such function
replaced by a native schema that accepts **exactly the same JSON values** and gives **equal
results** (:data:`ledger.feed.types.NATIVE`; cards and tiles below): a pattern-checked string,
a ``Decimal`` of it, a literal looked up in the table of every card or tile. Everything else —
the model class, its fields, strictness, extra keys, nested models, the game folders' own
validators — is the model's own schema, unchanged. The result is an instance of the model
class, equal to what ``cls.model_validate_json`` returns for the same bytes.

Used where a refusal is not reported as it stands but sends the bytes to the full path:

- ``ledger verify``'s pass (``ledger.storage.stream``), whose facts are compact
  (:func:`compact_validate_json`, ``ledger.codec.compact``);

- the fast row decoders (``ledger.codec.rows``), which ``ledger verify`` and the views read
  stored rows with;
- ingest's canonical-line shortcut (``ledger.codec.openings.OpeningParser``), whose refusals
  go to the full path, so a rejection's code, field and message are the full path's.

Bytes the native validator refuses are validated again by the model itself, so an error is
always the model's own and the fast path can change no message;
``tests/codec/test_fast_decoders.py`` pins that the native validators accept what the
models accept, refuse what they refuse, and give equal facts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_core import CoreSchema, core_schema

from ledger.codec.compact import compact_validate_json as _compact_validate_json
from ledger.codec.library import schema_validator
from ledger.domain.equipment import _CARDS, _TILES, _parse_card, _parse_tile
from ledger.feed.types import NATIVE


def _natives() -> dict[Callable[[object], object], CoreSchema]:
    natives = dict(NATIVE)
    natives[_parse_card] = core_schema.no_info_after_validator_function(
        _CARDS.__getitem__, core_schema.literal_schema(sorted(map(str, _CARDS)))
    )
    natives[_parse_tile] = core_schema.no_info_after_validator_function(
        _TILES.__getitem__, core_schema.literal_schema(sorted(map(str, _TILES)))
    )
    return natives


def _swap(node: Any, natives: dict[Callable[[object], object], CoreSchema]) -> Any:
    """A copy of a core schema with every known plain validator replaced by its native twin."""
    if isinstance(node, dict):
        if node.get("type") == "function-plain" and isinstance(node.get("function"), dict):
            native = natives.get(node["function"].get("function"))
            if native is not None:
                return native
        return {
            key: (value if key in ("serialization", "metadata", "cls") else _swap(value, natives))
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_swap(value, natives) for value in node]
    return node


_FAST: dict[type, Callable[[bytes], Any]] = {}


def fast_validate_json(cls: type) -> Callable[[bytes], Any]:
    """``cls.model_validate_json``, with the feed's field types checked natively (see the
    module docstring). Bytes the native validator refuses are validated again by the model
    itself, so what this raises is exactly what ``model_validate_json`` raises."""
    known = _FAST.get(cls)
    if known is None:
        native = native_validate_json(cls)
        slow = cls.model_validate_json  # type: ignore[attr-defined]

        def decode(content: bytes) -> Any:
            try:
                return native(content)
            except ValueError:  # ValidationError is one
                return slow(content)

        known = _FAST[cls] = decode
    return known


_NATIVE: dict[type, Callable[[bytes], Any]] = {}


def native_validate_json(cls: type) -> Callable[[bytes], Any]:
    """The native validator alone, for callers that send whatever it refuses to the full path
    themselves (ingest's canonical lines): its errors are its own, never reported."""
    known = _NATIVE.get(cls)
    if known is None:
        schema = _swap(cls.__pydantic_core_schema__, _natives())  # type: ignore[attr-defined]
        known = _NATIVE[cls] = schema_validator(schema).validate_json
    return known


def compact_validate_json(cls: type) -> Callable[[bytes], Any]:
    """The native validator building compact facts (``ledger.codec.compact``): the same
    schema as :func:`native_validate_json`, each model a slotted class of it. Like that one,
    its errors are its own: the caller sends what it refuses to the full path."""
    return _compact_validate_json(cls, lambda schema: _swap(schema, _natives()))
