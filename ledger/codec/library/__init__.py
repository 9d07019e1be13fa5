"""Every place the codec relies on how pydantic, eventsourcing or ``uuid`` work inside.

The codec's fast mode is the reference mode (``fast=False``: the libraries' public calls)
with a few shortcuts that reach past a library's public surface. They all live here, and
nowhere else, so that a library upgrade has one place to break and one test file that says
so (``tests/codec/test_library_contract.py``):

- **pydantic** — :func:`schema_validator` builds a validator of a changed core schema by
  marking the model classes it names incomplete for a moment (``__pydantic_complete__``), so
  pydantic-core does not reuse their own ("prebuilt") validators; :func:`model_with` builds a
  model instance straight from its ``__dict__`` (what ``model_copy(update=…)`` gives);
  :func:`pin_method` gives one frozen instance an attribute of its own (the rulebook hash
  cache), relying on pydantic comparing and serialising fields only.
- **eventsourcing** — :func:`stored_event` builds a ``StoredEvent`` from its ``__dict__``
  (the frozen dataclass's layout); :class:`BulkSQLiteRecorder` and
  ``ledger.codec.library.postgres.BulkPostgresRecorder`` replace the recorders' private
  ``_insert_events`` / ``_insert_stored_events`` with one statement per save, and take a save
  as :class:`StoredColumns` (four lists, no ``StoredEvent`` per row) through the library's own
  ``insert_events`` (its transaction, locks and retries unchanged).
- **uuid** — :class:`HashedUUID` is a ``UUID`` that keeps its hash (``UUID.__hash__`` is
  ``hash(self.int)``) and ``hex``.

:data:`CHECKED` names the versions each trick was checked against; ``pyproject.toml`` bounds
the dependencies to them, and the contract test fails if an installed version is outside.

The bulk recorders, in detail:

- **SQLite.** The library runs one ``execute`` per row (to collect each ``lastrowid``).
  :class:`BulkSQLiteRecorder` runs one ``executemany`` and derives the notification ids: inside
  the write transaction nobody else inserts, and a rowid table gives each new row
  ``max(rowid) + 1``, so the rows of one ``executemany`` get consecutive ids ending at
  ``last_insert_rowid()``.
- **Several saves in one transaction** (:class:`SaveGroup`): passed to ``insert_events`` as one
  sequence of rows that knows where each save ends; they commit or not as a whole.
- **PostgreSQL.** The library sends one array of a composite type, which psycopg dumps as
  text in Python (regex-escaping every ``bytea``: ~40 % of its client time).
  ``BulkPostgresRecorder`` (in ``ledger.codec.library.postgres``, so that a SQLite store never
  loads the driver) sends four arrays of plain types (``uuid[]``, ``bigint[]``, ``text[]``,
  ``bytea[]``) in binary, unnested in the same ``INSERT … RETURNING``. Saves stay capped at
  ``ledger.storage.store.SAVE_EVENTS_MAX`` events.

Selected by the ``APPLICATION_RECORDER_TOPIC`` setting in :func:`ledger.storage.store.open_ledger`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import fields as dataclass_fields
from typing import Any, overload
from uuid import UUID

from eventsourcing.persistence import StoredEvent
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteCursor
from pydantic_core import SchemaValidator

CHECKED: dict[str, tuple[str, str]] = {
    "pydantic": ("2.10", "2.15"),
    "pydantic-core": ("2.27", "2.51"),
    "eventsourcing": ("9.5.6", "9.6"),
    "nats-py": ("2.16", "2.17"),
}
"""Each library the tricks rely on: the lowest version checked, and the first one not checked
(``pyproject.toml`` states the same bounds). nats-py's is the live receiver's
(``ledger.live.receiver._DirectClient`` overrides the client's private ``_process_msg``)."""

SQLITE_TOPIC = "ledger.codec.library:BulkSQLiteRecorder"
POSTGRES_TOPIC = "ledger.codec.library.postgres:BulkPostgresRecorder"
"""In a module of its own: the library imports it (and the driver) only for a PostgreSQL store."""

_set = object.__setattr__
_new = object.__new__


# -- pydantic ----------------------------------------------------------------------------------


def model_classes(schema: Any, found: set[type] | None = None) -> set[type]:
    """Every model class a core schema builds (its ``model`` nodes)."""
    found = set() if found is None else found
    if isinstance(schema, dict):
        if schema.get("type") == "model" and isinstance(schema.get("cls"), type):
            found.add(schema["cls"])
        for key, value in schema.items():
            if key not in ("serialization", "metadata", "cls"):
                model_classes(value, found)
    elif isinstance(schema, list):
        for value in schema:
            model_classes(value, found)
    return found


def schema_validator(schema: Any) -> SchemaValidator:
    """A validator of ``schema`` itself. pydantic-core reuses a complete model class's own
    validator for a ``model`` node ("prebuilt"), which would bring back what the schema
    replaced; the classes are marked incomplete while the new validator is built, then
    restored."""
    classes = [c for c in model_classes(schema) if c.__dict__.get("__pydantic_complete__") is True]
    try:
        for cls in classes:
            type.__setattr__(cls, "__pydantic_complete__", False)
        return SchemaValidator(schema)
    finally:
        for cls in classes:
            type.__setattr__(cls, "__pydantic_complete__", True)


def is_plain_model(model: Any) -> bool:
    """Whether ``model_copy`` would carry nothing but ``__dict__`` and the set fields (no extra
    keys, no private attributes): then :func:`model_with` equals it."""
    return model.__pydantic_extra__ is None and getattr(model, "__pydantic_private__", None) is None


def model_with(cls: type, values: dict[str, Any], fields_set: Iterable[str]) -> Any:
    """An instance of the (plain) model ``cls`` whose ``__dict__`` is ``values`` (taken, not
    copied) and whose set fields are ``fields_set``, built without validation: what
    ``model_copy(update=…)`` gives, without its generic steps."""
    fact: Any = _new(cls)
    _set(fact, "__dict__", values)
    _set(fact, "__pydantic_extra__", None)
    _set(fact, "__pydantic_fields_set__", set(fields_set))
    _set(fact, "__pydantic_private__", None)
    return fact


class Known:
    """A method's answer, computed once (picklable, unlike a lambda)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __call__(self) -> Any:
        return self.value


def pin_method(model: Any, name: str, value: Any) -> None:
    """Make ``model.<name>()`` answer ``value`` for this (frozen) instance only. Pydantic
    compares and serialises fields only, so the instance stays equal to, and dumps as, an
    unpinned one."""
    _set(model, name, Known(value))


# -- eventsourcing -----------------------------------------------------------------------------

STORED_EVENT_FIELDS = ["originator_id", "originator_version", "topic", "state"]


def plain_stored_event(originator_id: UUID, originator_version: int, topic: str, state: bytes) -> StoredEvent:
    """``StoredEvent(...)``: the library's constructor (the reference)."""
    return StoredEvent(
        originator_id=originator_id, originator_version=originator_version, topic=topic, state=state
    )


def _stored_event(originator_id: UUID, originator_version: int, topic: str, state: bytes) -> StoredEvent:
    event = _new(StoredEvent)
    _set(
        event,
        "__dict__",
        {
            "originator_id": originator_id,
            "originator_version": originator_version,
            "topic": topic,
            "state": state,
        },
    )
    return event


def stored_event_layout_known() -> bool:
    """Whether ``StoredEvent`` is still a plain frozen dataclass of these four fields (no
    slots, no ``__post_init__``), so that :func:`stored_event` may fill its ``__dict__``."""
    return (
        not hasattr(StoredEvent, "__slots__")
        and not hasattr(StoredEvent, "__post_init__")
        and [f.name for f in dataclass_fields(StoredEvent)] == STORED_EVENT_FIELDS
    )


stored_event = _stored_event if stored_event_layout_known() else plain_stored_event
"""``StoredEvent(...)`` with these values, built with its ``__dict__`` at once (the library's
class is a frozen dataclass whose ``__init__`` sets each field through ``object.__setattr__``);
the constructor itself if the class is laid out otherwise."""


class StoredColumns(Sequence[StoredEvent]):
    """The rows of one save as four columns: what the bulk recorders send, with no
    ``StoredEvent`` built per row. Passed to the library's ``insert_events`` like a list of
    stored events (it is one: an item is built on demand), so the library's transaction, lock
    and id fetching run as for any save; the bulk recorders read the columns directly."""

    __slots__ = ("_hexes", "ids", "states", "topics", "versions")

    def __init__(self, ids: list[UUID], versions: list[int], topics: list[str], states: list[bytes]) -> None:
        self.ids, self.versions, self.topics, self.states = ids, versions, topics, states
        self._hexes: list[str] | None = None

    @property
    def hexes(self) -> list[str]:
        """The ids as 32 hex digits (how the SQLite table stores them), computed once."""
        if self._hexes is None:
            self._hexes = [i.hex for i in self.ids]
        return self._hexes

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, index: int) -> StoredEvent: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[StoredEvent]: ...

    def __getitem__(self, index: int | slice) -> StoredEvent | Sequence[StoredEvent]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return stored_event(self.ids[index], self.versions[index], self.topics[index], self.states[index])


class SaveGroup(StoredColumns):
    """Several saves written in one transaction: their rows as one :class:`StoredColumns`, in
    order, and where each save ends (:attr:`ends`). They commit or not as a whole. SQLite
    inserts them with one ``executemany`` (its ids are consecutive: see the class above);
    PostgreSQL sends one statement per save, so that no statement carries more than one save
    (``ledger.storage.store.SAVE_EVENTS_MAX``: a larger one can hang)."""

    __slots__ = ("ends", "ids_found")

    def __init__(self, saves: Sequence[StoredColumns]) -> None:
        ids: list[UUID] = []
        versions: list[int] = []
        topics: list[str] = []
        states: list[bytes] = []
        ends: list[int] = []
        for save in saves:
            ids += save.ids
            versions += save.versions
            topics += save.topics
            states += save.states
            ends.append(len(ids))
        super().__init__(ids, versions, topics, states)
        self.ends = ends
        """The row index after each save's last row."""
        self.ids_found: list[int] = []
        """PostgreSQL: the notification ids returned, save after save."""

    def saves(self) -> Iterable[tuple[int, int]]:
        """Each save's rows as ``(start, stop)`` indexes."""
        start = 0
        for stop in self.ends:
            yield start, stop
            start = stop


class BulkSQLiteRecorder(SQLiteApplicationRecorder):
    """The library's SQLite application recorder, writing a save with one ``executemany``."""

    def _insert_events(
        self, c: SQLiteCursor, stored_events: Sequence[StoredEvent], **_: Any
    ) -> Sequence[int] | None:
        if not stored_events:
            return []
        if isinstance(stored_events, StoredColumns):
            rows: Iterable[tuple[Any, ...]] = zip(
                stored_events.hexes,
                stored_events.versions,
                stored_events.topics,
                stored_events.states,
                strict=True,
            )
        else:
            rows = [
                (
                    s.originator_id.hex if isinstance(s.originator_id, UUID) else s.originator_id,
                    s.originator_version,
                    s.topic,
                    s.state,
                )
                for s in stored_events
            ]
        c.executemany(self.insert_events_statement, rows)
        c.execute("SELECT last_insert_rowid()")
        last = int(c.fetchone()[0])
        first = last - len(stored_events) + 1
        return list(range(first, last + 1))


# -- uuid --------------------------------------------------------------------------------------


class HashedUUID(UUID):
    """A ``UUID`` that hashes from a stored value: ``UUID.__hash__`` is ``hash(self.int)``, and
    ingest looks every id up in dicts several times per line. Its ``hex`` (what the SQLite
    recorder writes, once per row) is stored too. Equal to, and hashing like, the plain
    ``UUID``; pickles as one."""

    __slots__ = ("_hash", "hex")
    _hash: int
    hex: str

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[Any, ...]:
        return (UUID, (str(self),))


def hashed_uuid(plain: UUID) -> UUID:
    """``plain`` as a :class:`HashedUUID` (equal to it)."""
    fast = HashedUUID(int=plain.int)
    _set(fast, "_hash", hash(plain))
    _set(fast, "hex", plain.hex)
    return fast
