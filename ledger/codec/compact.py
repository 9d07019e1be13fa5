"""Compact facts: a feed model's facts without a ``__dict__``, built by pydantic-core from the
model's own (natively swapped) core schema.

A fact decoded by a model's validator is three objects: the instance, its ``__dict__`` and
its ``__pydantic_fields_set__``. :func:`compact_validate_json` gives, per model class, a
validator that builds one object instead: an instance of :func:`compact_class` of the model, a
plain class generated from it whose fields are slots. The validator is the model's own core
schema (with the feed's field types checked natively, ``ledger.codec.native``) in which each
``model`` node — the fact's and every nested one (a bet's spot) — is a ``dataclass`` node with
slots over the same fields, field schemas, aliases, validators and extra-key rule; so it
accepts exactly what the model accepts, and a refusal is sent to the model itself by the
caller (``ledger.codec.rows``), whose error is then reported.

The compact class is **not** a subclass of the model: every ``BaseModel`` subclass inherits
``BaseModel.__getattr__``, which puts each attribute read of its instances on CPython's slow
attribute hook and keeps the interpreter from specialising it (a slot read then costs several
times a plain class's). It takes the model's class attributes instead — its properties,
methods and class variables, and ``BaseModel``'s methods (``model_dump``, ``repr``), with the
model's serializer — and its ``__class__`` is the model. So a compact fact **is** an instance
of its model for ``isinstance`` (which asks an object's ``__class__``; pydantic's
``ModelMetaclass`` ignores ``ABCMeta.register``), and ``fact.__class__`` is the model class,
which is what a lookup by class must use: ``type(fact)`` is the compact class, a subclass of
nothing but ``object`` (``ledger.domain.round``, Mah-Jong's and 3CB's handler tables look up
``fact.__class__``). It reads the same attributes with the same values, and compares, hashes,
prints, dumps and pickles like the model instance built from the same bytes (``model_dump``,
``repr``, ``==`` either way round; a pickled one comes back as the model instance). It is
read-only. What it lacks is ``__dict__`` storage: pydantic's methods read a ``__dict__`` built
on demand from the slots, and ``model_fields_set`` is every field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel
from pydantic_core import core_schema

from ledger.codec.library import model_with, schema_validator

_COMPACT: dict[type, type] = {}
"""The compact class of each model class, made once."""


def _as_dict(self: Any) -> dict[str, Any]:
    return {name: getattr(self, name) for name in self.__compact_fields__}


def _fields_set(self: Any) -> set[str]:
    return set(self.__compact_fields__)


def _values(self: Any) -> tuple[Any, ...]:
    return tuple([getattr(self, name) for name in self.__compact_fields__])


def _eq(self: Any, other: object) -> Any:
    if not isinstance(other, BaseModel):
        return NotImplemented
    if getattr(type(other), "__compact_model__", type(other)) is not self.__compact_model__:
        return False
    return _values(self) == tuple([getattr(other, name) for name in self.__compact_fields__])


def _hash(self: Any) -> int:
    values = _values(self)
    return hash(values[0] if len(values) == 1 else values)


def _reduce(self: Any) -> tuple[Any, ...]:
    return (_model, (self.__compact_model__, _as_dict(self)))


def _model(cls: type, values: dict[str, Any]) -> Any:
    """The model instance of a compact fact's values (what a compact fact unpickles as)."""
    return model_with(cls, values, values)


def _frozen(self: Any, name: str, value: Any = None) -> None:
    raise AttributeError(f"a stored fact is read-only ({type(self).__name__}.{name})")


_NOT_COPIED = frozenset(
    {
        # the class's own layout and identity
        "__dict__",
        "__weakref__",
        "__slots__",
        "__module__",
        "__qualname__",
        "__doc__",
        "__annotations__",
        "__abstractmethods__",
        "_abc_impl",
        "__orig_bases__",
        "__parameters__",
        "__signature__",
        "__class_getitem__",
        "__init_subclass__",
        "__pydantic_init_subclass__",
        # what a compact fact does its own way (read-only, slots, no attribute hook)
        "__new__",
        "__init__",
        "__getattr__",
        "__setattr__",
        "__delattr__",
        "__eq__",
        "__hash__",
        "__reduce__",
        "__reduce_ex__",
        "__getstate__",
        "__setstate__",
        "__copy__",
        "__deepcopy__",
        "__replace__",
        "_setattr_handler",
        "__pydantic_setattr_handlers__",
        "__pydantic_fields_set__",
        "__pydantic_extra__",
        "__pydantic_private__",
        # not a pydantic class of its own: pydantic-core would take a "complete" class's
        # validator for the class's own (building model instances), not the compact schema
        "__pydantic_complete__",
        "__pydantic_validator__",
    }
)
"""Class attributes of a model (and its bases, ``BaseModel`` included) a compact class does not
take: its own layout, and what it does its own way."""


def compact_class(cls: type) -> type:
    """The compact class of the model ``cls``: a plain slotted class with the same name and
    the model's class attributes, whose ``__class__`` is the model (see the module docstring)."""
    known = _COMPACT.get(cls)
    if known is None:
        names = tuple(cls.model_fields)  # type: ignore[attr-defined]
        namespace: dict[str, Any] = {}
        for base in reversed(cls.__mro__[:-1]):  # BaseModel first, the model last; not object
            namespace.update(
                (key, value)
                for key, value in vars(base).items()
                if key not in _NOT_COPIED and key not in names
            )
        namespace.update(
            {
                "__slots__": names,
                "__module__": cls.__module__,
                "__qualname__": cls.__qualname__,
                "__doc__": cls.__doc__,
                "__compact_fields__": names,
                "__compact_model__": cls,
                "__dict__": property(_as_dict),
                "__pydantic_fields_set__": property(_fields_set),
                "__pydantic_extra__": None,
                "__pydantic_private__": None,
                # what ``isinstance`` (and so pydantic) asks of an object for its class
                "__class__": cls,
                "__eq__": _eq,
                "__hash__": _hash,
                "__setattr__": _frozen,
                "__delattr__": _frozen,
                "__reduce__": _reduce,
            }
        )
        # a plain class (not the model metaclass, no model built, no ``BaseModel.__getattr__``
        # hook on every attribute read), an instance of the model by its ``__class__``
        known = _COMPACT[cls] = type(cls.__name__, (), namespace)
    return known


def _dataclasses(node: Any) -> Any:
    """A copy of a core schema with each ``model`` node a ``dataclass`` node with slots over
    the same fields (building the model's compact class)."""
    if isinstance(node, dict):
        if node.get("type") == "model" and isinstance(node.get("cls"), type):
            return _dataclass(node)
        return {
            key: (value if key in ("serialization", "metadata", "cls") else _dataclasses(value))
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_dataclasses(value) for value in node]
    return node


def _dataclass(node: dict[str, Any]) -> Any:
    cls: type = node["cls"]
    inner = node["schema"]
    if inner.get("type") != "model-fields" or inner.get("computed_fields") or node.get("root_model"):
        raise ValueError(f"{cls.__name__}: no compact class for this model's schema")
    if node.get("post_init") or node.get("custom_init"):
        raise ValueError(f"{cls.__name__}: a model with its own init has no compact class")
    config: Any = node.get("config") or {}
    fields = [
        core_schema.dataclass_field(
            name,
            _dataclasses(field["schema"]),
            validation_alias=field.get("validation_alias"),
        )
        for name, field in inner["fields"].items()
    ]
    if [f["name"] for f in fields] != list(cls.model_fields):  # type: ignore[attr-defined]
        raise ValueError(f"{cls.__name__}: its core schema's fields are not its model's")
    return core_schema.dataclass_schema(
        compact_class(cls),
        core_schema.dataclass_args_schema(
            cls.__name__, fields, extra_behavior=config.get("extra_fields_behavior")
        ),
        [f["name"] for f in fields],
        cls_name=cls.__name__,
        ref=node.get("ref"),
        slots=True,
        frozen=True,
        strict=node.get("strict"),
        config=config,
    )


_VALIDATORS: dict[type, Callable[[bytes], Any]] = {}


def compact_validate_json(cls: type, swap: Callable[[Any], Any]) -> Callable[[bytes], Any]:
    """A validator of the JSON bytes of a ``cls`` fact giving its compact fact: the model's
    core schema after ``swap`` (the native field types), each model node a slotted dataclass.
    It raises ``ValueError`` where the model would (the caller asks the model for its error)."""
    known = _VALIDATORS.get(cls)
    if known is None:
        schema = _dataclasses(swap(cls.__pydantic_core_schema__))  # type: ignore[attr-defined]
        known = _VALIDATORS[cls] = schema_validator(schema).validate_json
    return known
