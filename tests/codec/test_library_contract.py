"""What ``ledger.codec.library`` relies on in pydantic, eventsourcing and ``uuid`` still holds.

Each test names the library behaviour it pins; a failure after an upgrade says which trick
broke. The installed versions must lie within the bounds the module was checked against
(:data:`ledger.codec.library.CHECKED`), and ``pyproject.toml`` must state the same bounds.
"""

from __future__ import annotations

import inspect
import pickle
import re
import sqlite3
import sys
import tomllib
from contextlib import closing
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Any
from uuid import UUID, uuid4

import pytest
from eventsourcing.persistence import StoredEvent
from eventsourcing.sqlite import SQLiteApplicationRecorder
from pydantic import BaseModel, PlainValidator
from pydantic_core import core_schema

from ledger.codec.library import (
    CHECKED,
    BulkSQLiteRecorder,
    HashedUUID,
    hashed_uuid,
    is_plain_model,
    model_with,
    pin_method,
    plain_stored_event,
    schema_validator,
    stored_event,
    stored_event_layout_known,
)
from ledger.codec.native import native_validate_json
from ledger.codec.parse import parse_line
from ledger.feed.types import NATIVE
from ledger.storage.store import open_ledger

ROOT = Path(__file__).resolve().parents[2]


def _first(path: Path, type_name: str) -> str:
    """The first line of an example feed whose type is ``type_name``."""
    return next(raw for raw in path.read_text(encoding="utf-8").splitlines() if f'"{type_name}"' in raw)


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


@pytest.mark.parametrize("name", sorted(CHECKED))
def test_the_installed_version_is_one_the_tricks_were_checked_against(name: str) -> None:
    low, high = CHECKED[name]
    installed = version(name)
    assert _release(low) <= _release(installed) < _release(high), (
        f"{name} {installed} is outside {low} … <{high}, the versions ledger.codec.library was "
        "checked against: run tests/codec, then widen CHECKED and pyproject.toml together"
    )


def test_pyproject_bounds_the_dependencies_as_the_module_was_checked() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {re.split(r"[\[<>=!~ ]", d, maxsplit=1)[0]: d for d in project["dependencies"]}
    for name in ("pydantic", "eventsourcing", "nats-py"):
        low, high = CHECKED[name]
        assert f">={low}" in declared[name] and f"<{high}" in declared[name], declared[name]


# -- pydantic ----------------------------------------------------------------------------------


class _Counted(BaseModel):
    """A model whose field runs a Python function: what the native validators replace."""

    code: Annotated[str, PlainValidator(lambda v: _calls.append(v) or str(v))]


class _Outer(BaseModel):
    inner: _Counted


_calls: list[Any] = []


def _swapped(schema: Any) -> Any:
    if isinstance(schema, dict):
        if schema.get("type") == "function-plain":
            return core_schema.str_schema()
        return {
            k: (v if k in ("cls", "serialization", "metadata") else _swapped(v)) for k, v in schema.items()
        }
    if isinstance(schema, list):
        return [_swapped(v) for v in schema]
    return schema


def test_a_swapped_schema_is_built_as_given_not_from_the_nested_models_prebuilt_validator() -> None:
    """pydantic-core reuses a complete model's own validator for a nested ``model`` node unless
    the class is marked incomplete (``__pydantic_complete__``): the swap must reach inside."""
    validate = schema_validator(_swapped(_Outer.__pydantic_core_schema__)).validate_json
    _calls.clear()
    got = validate(b'{"inner":{"code":"A"}}')
    assert _calls == [], "the nested model's own (Python) validator ran: the swap was ignored"
    assert got == _Outer.model_validate_json(b'{"inner":{"code":"A"}}')
    assert _Outer.__pydantic_complete__ is True and _Counted.__pydantic_complete__ is True
    assert _calls == ["A"]  # the model's own path still runs its function


def _python_calls(run: Any, codes: set[Any]) -> int:
    """How many calls of functions with these code objects ``run()`` makes."""
    seen: list[Any] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code in codes:
            seen.append(frame.f_code)

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return len(seen)


def test_the_native_validator_of_a_feed_model_runs_no_python_field_function(examples: Path) -> None:
    """The feed's field functions (``ledger.feed.types.NATIVE``) are replaced natively in the
    swapped schema: the model's own path calls them, the native one never."""
    codes = {f.__code__ for f in NATIVE if hasattr(f, "__code__")}
    line = _first(examples / "rl.jsonl", "bet_placed").encode()
    fact = parse_line(line, 1)
    cls: Any = type(fact)
    native = native_validate_json(cls)
    assert _python_calls(lambda: cls.model_validate_json(line), codes) > 0
    assert _python_calls(lambda: native(line), codes) == 0
    assert native(line) == fact


def test_model_with_equals_model_copy(examples: Path) -> None:
    line = next(
        raw
        for raw in (examples / "sp9.jsonl").read_text(encoding="utf-8").splitlines()
        if "round_opened" in raw
    )
    fact = parse_line(line, 1)
    assert is_plain_model(fact)
    update = {"table": "T-9", "round": "r9", "at": fact.at}  # type: ignore[union-attr]
    copied = fact.model_copy(update=update)  # type: ignore[union-attr]
    values = {**fact.__dict__, **update}
    built = model_with(type(fact), values, fact.__pydantic_fields_set__ | set(update))  # type: ignore[union-attr]
    assert built == copied
    assert built.__dict__ == copied.__dict__
    assert built.__pydantic_fields_set__ == copied.__pydantic_fields_set__
    assert built.model_dump_json() == copied.model_dump_json()
    assert pickle.loads(pickle.dumps(built)) == copied


def test_a_pinned_method_leaves_the_instance_equal_and_dumping_the_same(examples: Path) -> None:
    line = next(
        raw
        for raw in (examples / "rl.jsonl").read_text(encoding="utf-8").splitlines()
        if "round_opened" in raw
    )
    rules = parse_line(line, 1).rules  # type: ignore[union-attr]
    other = rules.model_copy()
    digest = rules.content_hash()
    pin_method(rules, "content_hash", "pinned")
    assert rules.content_hash() == "pinned" and other.content_hash() == digest
    assert rules == other and other == rules
    assert rules.model_dump_json() == other.model_dump_json()
    assert rules.model_dump() == other.model_dump()
    again = pickle.loads(pickle.dumps(rules))
    assert again == other and again.content_hash() == "pinned"


# -- eventsourcing -----------------------------------------------------------------------------


def test_stored_event_is_a_frozen_dataclass_of_four_fields_and_the_fast_builder_equals_it() -> None:
    assert stored_event_layout_known(), "StoredEvent is laid out otherwise: stored_event falls back"
    args = (uuid4(), 3, "RL/spin_result", b'{"chain":"x","fact":{}}')
    fast, plain = stored_event(*args), plain_stored_event(*args)
    assert fast == plain and type(fast) is StoredEvent
    assert (fast.originator_id, fast.originator_version, fast.topic, fast.state) == args
    with pytest.raises(AttributeError):
        fast.topic = "x"  # type: ignore[misc]


def test_the_sqlite_recorder_still_writes_a_save_through_insert_events(tmp_path: Path) -> None:
    """The library's ``insert_events`` calls the private ``_insert_events(c, stored_events)``
    once per save: the one statement :class:`BulkSQLiteRecorder` replaces."""
    params = list(inspect.signature(SQLiteApplicationRecorder._insert_events).parameters)
    assert params[:3] == ["self", "c", "stored_events"]
    app = open_ledger(f"sqlite:///{tmp_path / 'l.db'}")
    recorder = app.recorder
    assert type(recorder) is BulkSQLiteRecorder
    calls: list[int] = []
    original = recorder._insert_events

    def counted(c: Any, stored_events: Any, **kw: Any) -> Any:
        calls.append(len(stored_events))
        return original(c, stored_events, **kw)

    recorder._insert_events = counted  # type: ignore[method-assign]
    oid = uuid4()
    rows = [stored_event(oid, v, "RL/x", b"{}") for v in (1, 2, 3)]
    ids = recorder.insert_events(rows)
    assert calls == [3]
    with closing(sqlite3.connect(tmp_path / "l.db")) as conn:
        stored = [r[0] for r in conn.execute("SELECT rowid FROM stored_events ORDER BY rowid")]
    assert list(ids or []) == stored and len(stored) == 3


def test_the_postgres_recorder_still_has_the_parts_the_bulk_recorder_overrides() -> None:
    """``_insert_stored_events(curs, stored_events)``, ``_lock_table``, ``_notify_channel``; the
    behaviour itself is checked on a real server by ``test_ingest_fast_paths``."""
    from eventsourcing.postgres import PostgresApplicationRecorder

    from ledger.codec.library.postgres import BulkPostgresRecorder

    params = list(inspect.signature(PostgresApplicationRecorder._insert_stored_events).parameters)
    assert params[:3] == ["self", "curs", "stored_events"]
    for name in ("_lock_table", "_notify_channel"):
        assert callable(getattr(PostgresApplicationRecorder, name))
    assert BulkPostgresRecorder._insert_stored_events is not PostgresApplicationRecorder._insert_stored_events


# -- uuid --------------------------------------------------------------------------------------


def test_a_hashed_uuid_equals_hashes_and_pickles_as_the_plain_one() -> None:
    plain = UUID("12345678-1234-5678-1234-567812345678")
    fast = hashed_uuid(plain)
    assert isinstance(fast, HashedUUID) and fast == plain and plain == fast
    assert hash(fast) == hash(plain) == hash(plain.int)
    assert fast.hex == plain.hex and str(fast) == str(plain) and fast.bytes == plain.bytes
    assert {plain: 1}[fast] == 1
    back = pickle.loads(pickle.dumps(fast))
    assert type(back) is UUID and back == plain


# -- nats-py -----------------------------------------------------------------------------------


def test_the_nats_client_still_hands_each_message_to_process_msg_with_these_parameters() -> None:
    """The live receiver takes its subscription's messages from the client's private
    ``_process_msg`` (ledger.live.receiver._DirectClient): the method must still be there and be
    called with the same parameters, else the receiver would silently receive nothing."""
    import inspect

    from nats.aio.client import Client
    from nats.protocol import parser

    params = list(inspect.signature(Client._process_msg).parameters)
    assert params == ["self", "sid", "subject", "reply", "data", "headers"], params
    assert "await self.nc._process_msg(sid, subject, reply, payload, hdr)" in inspect.getsource(parser)
