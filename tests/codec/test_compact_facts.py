"""Compact facts (``ledger.codec.compact``) are the model's facts in fewer objects.

- Every feed fact of the six games' example feeds and of a simulated feed with injected
  errors, decoded compact, is an instance of its model (its ``__class__``; its own class is a
  plain slotted one, without ``BaseModel``'s attribute hook), has the same fields with equal values
  of the same types, and compares, hashes, prints, dumps and pickles like the model instance
  decoded from the same bytes; it holds no dict or set of its own and cannot be changed.
- Hostile bytes (the fast-equals-reference property's lines): the compact validator refuses
  exactly what the model's native validator refuses, and gives an equal fact otherwise (so a
  stored fact the model refuses still goes to the model, whose error verify reports): the
  Hypothesis profile's feeds by default, 200 more in the slow tier.
- ``ledger verify`` on a store with injected errors and tampered rows, on both stores, gives
  the same report and judges every round the same with compact facts as with model facts.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import pickle
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from pydantic import BaseModel

from bench.feed import simulated_games
from ledger.codec import LineParser, Parsed, RowDecoder, parse_line
from ledger.codec import rows as codec_rows
from ledger.codec.chain import frame, unframe
from ledger.codec.compact import compact_class
from ledger.codec.facts import content_of, topic_of
from ledger.feed.envelope import FeedEvent
from ledger.services.ingest import Ingestor
from ledger.storage.store import open_ledger
from ledger.tools.simulate import simulate
from ledger.verify.engine import verify_store
from ledger.verify.judge import Judged
from tests.codec.test_fast_equals_reference import _FEEDS, _SETTINGS, _seeds


def _stored(lines: list[bytes]) -> Iterator[tuple[codec_rows.Kind, bytes]]:
    """The kind and canonical content of every line that parses to a feed fact but an opening."""
    parser, decoder = LineParser(), RowDecoder()
    for n, line in enumerate(lines, 1):
        parsed = parse_line(line, n, parser=parser)
        if isinstance(parsed, Parsed):
            kind = decoder.kind(topic_of(parsed.fact))
            if kind is not None:
                yield kind, parsed.content


def _outcome(decode: Any, content: bytes) -> Any:
    try:
        return decode(content)
    except ValueError:
        return "refused"


def test_a_compact_fact_is_its_model_instance_in_one_object() -> None:
    seen: set[type] = set()
    for kind, content in _stored(list(_seeds())):
        model, compact = kind.first(content), kind.compact(content)
        cls = type(model)
        assert cls is kind.cls and type(compact) is compact_class(cls) and type(compact) is not cls
        assert isinstance(compact, cls) and isinstance(compact, FeedEvent) and isinstance(compact, BaseModel)
        # a plain slotted class whose ``__class__`` is the model: no ``BaseModel.__getattr__``
        # hook on its attribute reads, and a lookup by ``fact.__class__`` finds the model
        assert compact.__class__ is cls and type(compact).__mro__ == (type(compact), object)
        assert not hasattr(type(compact), "__getattr__")
        for name in cls.model_fields:
            mine, theirs = getattr(compact, name), getattr(model, name)
            nested = isinstance(theirs, BaseModel)
            assert mine == theirs and type(mine) is (compact_class(type(theirs)) if nested else type(theirs))
        assert compact == model and model == compact
        assert not compact != model  # noqa: SIM202
        assert hash(compact) == hash(model)
        assert repr(compact) == repr(model) and str(compact) == str(model)
        assert compact.model_dump() == model.model_dump()
        assert compact.model_dump(mode="json") == model.model_dump(mode="json")
        assert content_of(compact) == content_of(model) == content
        back = pickle.loads(pickle.dumps(compact))
        assert back == model and type(back) is cls
        with pytest.raises(AttributeError):
            compact.seq = 9  # type: ignore[misc]
        assert object.__getattribute__(compact, "__dict__") == {
            name: getattr(model, name) for name in cls.model_fields
        }
        seen.add(cls)
    assert len(seen) > 30  # the events of every game


def test_a_compact_fact_takes_fewer_objects_than_its_model_instance() -> None:
    kind, content = next(_stored(list(_seeds())))
    model, compact = kind.first(content), kind.compact(content)
    model_bytes = (
        sys.getsizeof(model) + sys.getsizeof(model.__dict__) + sys.getsizeof(model.__pydantic_fields_set__)
    )
    assert sys.getsizeof(compact) < model_bytes / 2
    held = gc.get_referents(compact)  # the fields' values, and no dict or set of its own
    assert not any(type(x) in (dict, set) for x in held)
    assert any(type(x) in (dict, set) for x in gc.get_referents(model))


def test_a_nested_model_is_compact_too_and_equal() -> None:
    spots = 0
    for kind, content in _stored(list(_seeds())):
        spot = getattr(kind.compact(content), "spot", None)
        if spot is not None:
            model_spot = kind.first(content).spot
            assert isinstance(spot, type(model_spot)) and type(spot) is compact_class(type(model_spot))
            assert spot == model_spot and hash(spot) == hash(model_spot)
            spots += 1
    assert spots > 20


EXAMPLES_SLOW = 200
"""Hostile feeds of the slow tier's run of the property (the default tier runs the Hypothesis
profile's few, a full run the profile's many and these)."""


@settings(**_SETTINGS)  # type: ignore[arg-type]
@given(_FEEDS)
def test_compact_refuses_what_the_model_refuses_and_equals_it_otherwise(lines: list[bytes]) -> None:
    _compact_is_exact(lines)


@pytest.mark.slow
@settings(max_examples=EXAMPLES_SLOW, **_SETTINGS)  # type: ignore[arg-type]
@given(_FEEDS)
def test_compact_refuses_what_the_model_refuses_and_equals_it_otherwise_at_length(lines: list[bytes]) -> None:
    _compact_is_exact(lines)


def _compact_is_exact(lines: list[bytes]) -> None:
    """Each feed line of a topic with a compact validator: refused by it exactly when the
    model's native validator refuses it, else decoded to an equal fact that prints the same."""
    decoder = RowDecoder()
    for line in lines:
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        topic = f"{obj.get('game')}/{obj.get('type')}" if isinstance(obj, dict) else ""
        kind = (
            decoder.kind(topic)
            if isinstance(obj.get("game") if isinstance(obj, dict) else None, str)
            else None
        )
        if kind is None:
            continue
        got, want = _outcome(kind.compact, line), _outcome(kind.first, line)
        assert (got == "refused") == (want == "refused"), line
        if got != "refused":
            assert got == want and repr(got) == repr(want)


def _feed() -> list[bytes]:
    sim = simulate(simulated_games(), rounds=4, tables=2, seed=23, error_rate=0.3)
    return [json.dumps(obj, separators=(",", ":")).encode() for obj in sim.lines]


def _tamper(raw: Any) -> None:
    """Stored ``bet_settled`` rows the model refuses (a wrong amount, an extra key), framed as
    stored: verify reports them, in both modes, from the model's own error."""
    changed = 0
    for nid, state in raw.rows():
        digest, content = unframe(state)
        if b'"type":"bet_settled"' not in content:
            continue
        bad = content.replace(b'"won":"', b'"won":"x', 1) if changed % 2 else content[:-1] + b',"extra":1}'
        raw.set_state(nid, frame(digest, bad))
        changed += 1
        if changed == 4:
            return


def _judged(url: str) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    app = open_ledger(url)
    seen: list[tuple[Any, ...]] = []

    def keep(judged: Judged) -> None:
        d = judged.derivation
        seen.append(
            (
                judged.round.table,
                judged.round.round,
                [(type(f).__name__, f.model_dump()) for f in judged.round.events],
                [(s.text, s.rule) for s in d.steps],
                {bet: repr(due) for bet, due in d.expected.items()},
                [f.to_json() for f in judged.findings],
            )
        )

    report = verify_store(app, on_judged=keep)
    app.close()
    return report.to_json(), seen


def test_verify_judges_compact_facts_as_it_judges_model_facts(
    db_url: str, raw: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = open_ledger(db_url)
    Ingestor(app).ingest(enumerate(_feed(), 1))
    app.close()
    _tamper(raw)
    compact = _judged(db_url)
    assert any(f["code"] == "chain_broken" for f in compact[0]["findings"])  # the tampered rows
    assert compact[0]["rounds_checked"] > 20
    kinds = codec_rows._KINDS[True]
    monkeypatch.setattr(
        codec_rows,
        "_KINDS",
        {**codec_rows._KINDS, True: {t: dataclasses.replace(k, compact=k.first) for t, k in kinds.items()}},
    )
    model = _judged(db_url)
    assert compact == model
