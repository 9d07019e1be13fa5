"""Field types of the feed (FEED.md §1): codes, timestamps, money, dice, seats.

Each type is strict about its JSON form — money is a *string* holding a decimal, ``seq`` is an
integer and never ``"3"`` — and carries an error message that says what was expected, because
those messages go verbatim into the rejects file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta, tzinfo
from decimal import Decimal
from functools import lru_cache
from typing import Annotated, Literal

from pydantic import Field, GetPydanticSchema, PlainSerializer, PlainValidator, StrictBool, StrictInt
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

GameKey = Literal["SP9", "FPC", "3CB", "MJ", "RL", "STUD"]
GAME_KEYS: tuple[GameKey, ...] = ("SP9", "FPC", "3CB", "MJ", "RL", "STUD")

_CODE = re.compile(r"[A-Za-z0-9._-]{1,40}")
_MONEY = re.compile(r"(0|[1-9][0-9]{0,14})(\.[0-9]{1,2})?")
_SIGNED_MONEY = re.compile(r"-?(0|[1-9][0-9]{0,14})(\.[0-9]{1,2})?")
_DECIMAL = re.compile(r"-?(0|[1-9][0-9]{0,14})(\.[0-9]{1,12})?")
_RFC3339 = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})"
)


NATIVE: dict[Callable[[object], object], CoreSchema] = {}
"""For each plain validator below, a pydantic-core schema that accepts exactly the same JSON
values and gives equal results, checked in Rust without a call into Python for most of them
(``ledger.codec.native`` builds the decoders of ``verify`` and of canonical ingest lines from them;
whatever a native schema refuses is validated again by the model itself, whose errors are the
ones reported)."""


_SHARED_DECIMAL = lru_cache(maxsize=4096)(Decimal)
"""``Decimal(text)``, one (immutable) instance shared per recent text: the same amounts come on
line after line, and a fact that holds an existing object costs no new one (fewer objects for
the data cache). Bounded."""


def _native_decimal(pattern: re.Pattern[str]) -> CoreSchema:
    return core_schema.no_info_after_validator_function(
        _SHARED_DECIMAL, core_schema.str_schema(strict=True, pattern=f"^{pattern.pattern}$")
    )


_KNOWN_CODES: set[str] = set()
"""Codes already found valid (tables, rounds, bet and player ids repeat on every line); bounded."""


def _code(value: object) -> str:
    if value.__class__ is str and value in _KNOWN_CODES:
        return value
    if not isinstance(value, str) or not _CODE.fullmatch(value):
        raise PydanticCustomError("bad_code", "expected 1-40 characters of A-Z a-z 0-9 . _ -")
    if len(_KNOWN_CODES) >= 65536:
        _KNOWN_CODES.clear()
    _KNOWN_CODES.add(value)
    return value


def _decimal_parser(pattern: re.Pattern[str], what: str, code: str = "bad_money") -> PlainValidator:
    def parse(value: object) -> Decimal:
        if isinstance(value, Decimal):
            return value
        if not isinstance(value, str):
            raise PydanticCustomError(
                code, f'{what} must be a JSON string like "100" or "95.50", not a {type(value).__name__}'
            )
        if not pattern.fullmatch(value):
            raise PydanticCustomError(code, f"{value!r} is not {what}")
        return Decimal(value)

    NATIVE[parse] = _native_decimal(pattern)
    return PlainValidator(parse)


def _timestamp(value: object) -> datetime:
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value
    if not isinstance(value, str):
        raise PydanticCustomError(
            "bad_timestamp", "expected an RFC 3339 timestamp with offset, like 2026-11-21T20:00:03.250+08:00"
        )
    return _parse_timestamp(value)


_ZONES: dict[timedelta | None, tzinfo | None] = {}
"""One ``tzinfo`` per offset: ``fromisoformat`` makes a new (equal) one for every string, and
CPython compares two datetimes fast only when they share their tzinfo object."""


@lru_cache(maxsize=4096)
def _parse_timestamp(value: str) -> datetime:
    """A valid timestamp string as an aware datetime (immutable, so cached: lines of one moment
    at many tables share it); an invalid one raises, and is not cached. Equal offsets share one
    ``tzinfo`` object (:data:`_ZONES`): the same value, ``isoformat``, equality and hash."""
    if not _RFC3339.fullmatch(value):
        raise PydanticCustomError(
            "bad_timestamp", "expected an RFC 3339 timestamp with offset, like 2026-11-21T20:00:03.250+08:00"
        )
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise PydanticCustomError("bad_timestamp", f"{value!r} is not a valid date and time: {exc}") from None
    zone = _ZONES.setdefault(parsed.utcoffset(), parsed.tzinfo)
    return parsed if parsed.tzinfo is zone else parsed.replace(tzinfo=zone)


NATIVE[_code] = core_schema.str_schema(strict=True, pattern=f"^{_CODE.pattern}$")
NATIVE[_timestamp] = core_schema.no_info_after_validator_function(
    _parse_timestamp, core_schema.str_schema(strict=True)
)


# Codes and timestamps are built as plain-function schemas directly (``GetPydanticSchema``), not
# with ``PlainValidator``, which would add a Python serializer wrapper called for every field
# written; a code is written as the string it is, a timestamp by ``datetime.isoformat``.
Code = Annotated[
    str, GetPydanticSchema(lambda _source, _handler: core_schema.no_info_plain_validator_function(_code))
]
"""A table code, round id, bet id or player id: ``[A-Za-z0-9._-]{1,40}``."""

Money = Annotated[
    Decimal,
    _decimal_parser(_MONEY, "a non-negative amount with at most two decimals"),
    PlainSerializer(str, return_type=str),
]
"""A non-negative amount, a JSON string with at most two decimals (FEED §1)."""

SignedMoney = Annotated[
    Decimal,
    _decimal_parser(_SIGNED_MONEY, "a signed amount with at most two decimals"),
    PlainSerializer(str, return_type=str),
]
"""A signed amount (SP9 ``bank_settled.result``)."""

DecimalText = Annotated[
    Decimal,
    _decimal_parser(_DECIMAL, "a decimal number", "bad_decimal"),
    PlainSerializer(str, return_type=str),
]
"""A decimal rate or increment written as a string (rulebook values)."""

Timestamp = Annotated[
    datetime,
    GetPydanticSchema(
        lambda _source, _handler: core_schema.no_info_plain_validator_function(
            _timestamp,
            serialization=core_schema.plain_serializer_function_ser_schema(
                datetime.isoformat, return_schema=core_schema.str_schema(), when_used="always"
            ),
        )
    ),
]
"""An RFC 3339 timestamp with an offset."""

Seq = Annotated[StrictInt, Field(ge=1, le=1_000_000)]
Die = Annotated[StrictInt, Field(ge=1, le=6)]
PlaceSeat = Annotated[StrictInt, Field(ge=1, le=7)]
"""A 3CB or STUD player place, 1–7 in dealing order."""
SP9Seat = Annotated[StrictInt, Field(ge=1, le=26)]
"""An SP9 player place, numbered counter-clockwise (at most 26 hands, SP9 S14)."""
Wind = Literal["E", "S", "W", "N"]
Flag = StrictBool


def place_or(house: str) -> GetPydanticSchema:
    """A validator for where a card goes in 3CB or STUD: a player place 1–7 or the house hand.

    The one error names both forms (``expected a player place 1-7 or "banker", got 8``) instead
    of pydantic's two union branches.
    """

    def parse(value: object) -> int | str:
        if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 7:
            return value
        if value == house:
            return house
        raise PydanticCustomError(
            "invalid_value",
            f'expected a player place 1-7 or "{house}", got {{value}}',
            {"value": repr(value)},
        )

    NATIVE[parse] = core_schema.union_schema(
        [core_schema.int_schema(strict=True, ge=1, le=7), core_schema.literal_schema([house])],
        mode="left_to_right",
    )
    # No serializer: the value is an int or a str, written as it is (in Rust, not through a
    # Python wrapper as a ``PlainValidator`` would add).
    return GetPydanticSchema(lambda _source, _handler: core_schema.no_info_plain_validator_function(parse))
