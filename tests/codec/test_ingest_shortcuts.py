"""Ingest's shortcuts of issue 17 (second pass) give exactly what the full paths give.

- a canonical line of an event without fields of its own (``round_closed``) is taken as it
  stands, and its time is checked as the full path checks it;
- lines of a class that keep coming in another key order skip the shortcut without changing
  any fact, stored byte or rejection;
- a ``round_opened`` filled from a template equals ``model_copy`` of it and a fresh validation;
- the full path checks a time against the window the ingest read, with the same message.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from ledger.codec.openings import PROBE_EVERY, SKIP_AFTER_MISSES, OpeningDecoder, OpeningParser
from ledger.codec.parse import MAX_LINE_BYTES, Rejection, parse_line
from ledger.domain.rulebook import Rulebook
from ledger.feed.envelope import FeedEvent, RoundOpened
from ledger.feed.window import accepted_window
from ledger.storage.store import TOPICS, content_of, topic_of

ENVELOPE = '"v":1,"table":"RL-07","game":"RL","round":"R1","seq":{seq},"at":"{at}"'


def _line(seq: int, type_: str, at: str = "2026-11-21T20:00:03+08:00", body: str = "") -> bytes:
    return ("{" + ENVELOPE.format(seq=seq, at=at) + f',"type":"{type_}"{body}}}').encode()


@pytest.mark.parametrize(
    "at",
    [
        "2026-11-21T20:00:03+08:00",
        "2026-11-21T20:00:03Z",
        "2026-11-21T20:00:03.500+08:00",
        "2026-11-21T20:00:03.5+08:00",
        "1999-12-31T23:59:59+00:00",
        "2100-01-01T00:00:00+00:00",
        "2026-13-01T00:00:00+08:00",
        "2026-11-21 20:00:03+08:00",
    ],
)
def test_an_event_without_fields_of_its_own_parses_as_the_full_path(at: str) -> None:
    parser = OpeningParser(MAX_LINE_BYTES)
    for n in range(3):  # first seen, then from the remembered body and time
        line = _line(4 + n, "betting_closed", at)
        fact, content = parser.parse_with_content(line, n + 1)
        assert fact == parse_line(line, n + 1)
        if content is not None:
            assert isinstance(fact, FeedEvent)
            assert content == line == content_of(fact)
    canonical = at in ("2026-11-21T20:00:03+08:00", "2026-11-21T20:00:03.500000+08:00")
    assert (parser.canonical == 3) == canonical


@pytest.mark.parametrize("ending", [b" ", b"\t", b',"x":1}', b"}}"])
def test_an_empty_body_line_with_anything_after_it_takes_the_full_path(ending: bytes) -> None:
    line = _line(4, "betting_closed")[:-1] + ending
    parser = OpeningParser(MAX_LINE_BYTES)
    fact, content = parser.parse_with_content(line, 7)
    assert content is None
    assert fact == parse_line(line, 7)


def _bet(n: int, canonical: bool, order: str = "amount-first") -> bytes:
    amount, spot = f'"amount":"{n}"', '"spot":{"kind":"red"}'
    if canonical:
        body = f',"bet":"b{n}",{spot},{amount}'
    elif order == "amount-first":
        body = f',"bet":"b{n}",{amount},{spot}'
    else:  # another form: a space after each comma of the body
        body = f', "bet":"b{n}", {spot}, {amount}'
    return _line(n + 1, "bet_placed", body=body)


def _same_as_full_path(parser: OpeningParser, line: bytes, n: int) -> bytes | None:
    fact, content = parser.parse_with_content(line, n)
    assert fact == parse_line(line, n)
    if content is not None:
        assert isinstance(fact, FeedEvent)
        assert content == content_of(fact)
        assert content == line or sorted(content) == sorted(line)  # as written, or reordered
    elif not isinstance(fact, Rejection):
        assert content_of(fact) == parse_line(line, n).model_dump_json(exclude_none=True).encode()  # type: ignore[union-attr]
    return content


def test_a_class_whose_lines_keep_another_form_skips_the_shortcut_with_equal_results() -> None:
    parser = OpeningParser(MAX_LINE_BYTES)
    lines = [_bet(n, canonical=False, order="spaced") for n in range(1, 3 * PROBE_EVERY)]
    lines += [_bet(n, canonical=True) for n in range(100, 100 + 2 * PROBE_EVERY)]
    lines += [_bet(n, canonical=False, order="spaced") for n in range(300, 310)]
    lines.insert(40, _bet(7, canonical=False).replace(b'"amount":"7"', b'"amount":"7.001"'))
    lines.insert(41, _bet(8, canonical=False)[:-1] + b',"bet":"b9"}')  # a duplicated key
    for n, line in enumerate(lines, 1):
        _same_as_full_path(parser, line, n)
    # the canonical lines after the others were found canonical again (all but the probes' wait)
    assert parser.canonical >= 2 * PROBE_EVERY - PROBE_EVERY
    assert SKIP_AFTER_MISSES < PROBE_EVERY


@pytest.mark.parametrize(
    "change",
    [
        None,  # reordered, taken
        (b'"amount":"5"', b'"amount":"5","amount":"5"'),  # a key twice, same value
        (b'"amount":"5"', b'"amount":"5","bet":"b5"'),  # a key twice, longer line
        (b'"amount":"5"', b'"amount":"6"'),  # another value: still reordered, equal facts
        (b'"amount":"5"', b'"amount":"5.00"'),  # money is kept as written: still taken
        (b'"amount":"5"', b'"amount":"\\u0035"'),  # an escape
        (b'"kind":"red"', b'"kind" :"red"'),
        (b'"spot":{"kind":"red"}', b'"spot":{"kind":"red","kind":"red"}'),  # nested key twice
        (b'"bet":"b5"', b'"bet":"b5","bat":"b5"'),  # an extra key
        (b'"bet":"b5"', b'"bet":"b5" '),
        (b'"amount":"5"', b'"amount":5'),
        (b'"amount":"5"', b'"amount":NaN'),
    ],
)
def test_a_reordered_line_is_taken_only_as_the_same_members_in_another_order(
    change: tuple[bytes, bytes] | None,
) -> None:
    parser = OpeningParser(MAX_LINE_BYTES)
    line = _bet(5, canonical=False)
    if change is not None:
        assert change[0] in line
        line = line.replace(*change)
    content = _same_as_full_path(parser, line, 1)
    if change is None or change[1] in (b'"amount":"6"', b'"amount":"5.00"'):
        assert content is not None and content != line
        assert parser.reordered == 1
    else:
        assert parser.reordered == 0


def test_reordered_lines_of_every_shape_equal_the_full_path(examples: Path) -> None:
    """Every example line of every game with its body's members in reverse order (and nested
    objects' too): taken or not, the same fact, bytes and rejection as the full path."""
    parser = OpeningParser(MAX_LINE_BYTES)
    envelope = ("v", "table", "game", "round", "seq", "at", "type")
    for n, text in enumerate(
        (
            line
            for name in ("rl", "fpc", "3cb", "sp9", "mj", "stud")
            for line in (examples / f"{name}.jsonl").read_text().splitlines()
            if line.strip()
        ),
        1,
    ):
        obj = json.loads(text)
        head = {k: obj[k] for k in envelope if k in obj}
        body = [(k, v) for k, v in obj.items() if k not in head]
        for variant in (
            dict(head, **dict(reversed(body))),
            dict(head, **{k: dict(reversed(v.items())) if isinstance(v, dict) else v for k, v in body}),
        ):
            line = json.dumps(variant, separators=(",", ":")).encode()
            _same_as_full_path(parser, line, n)
    assert parser.reordered > 0


def _openings(examples: Path) -> list[bytes]:
    return [
        line.encode()
        for name in ("rl", "fpc", "3cb", "sp9", "mj", "stud")
        for line in (examples / f"{name}.jsonl").read_text().splitlines()
        if '"round_opened"' in line
    ]


def test_a_filled_opening_equals_model_copy_and_a_fresh_validation(examples: Path) -> None:
    decoder = OpeningDecoder()
    for line in _openings(examples):
        stored = parse_line(line, 1)
        assert isinstance(stored, FeedEvent)
        cls = TOPICS[topic_of(stored)]
        decoder.decode(cls, content_of(stored))  # the template
        for n in range(3):
            other = stored.model_copy(
                update={"round": f"Z{n}", "at": datetime.fromisoformat(f"2026-11-2{n}T10:00:00.25+08:00")}
            )
            content = content_of(other)
            fact = decoder.decode(cls, content)
            fresh = cls.model_validate_json(content)
            assert fact == fresh == other
            assert type(fact) is type(fresh)
            assert fact.__dict__ == fresh.__dict__
            assert fact.__pydantic_fields_set__ == fresh.__pydantic_fields_set__
            assert fact.__pydantic_extra__ is None and fact.__pydantic_private__ is None
            assert content_of(fact) == content
    assert decoder._templates.hits >= 3 * len(_openings(examples)) - 12


def test_a_time_outside_the_window_is_rejected_with_the_same_message_on_every_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LEDGER_LATEST_AT", "2026-11-21T20:00:00+08:00")
    late = _line(2, "bet_placed", body=',"bet":"b1","amount":"5","spot":{"kind":"red"}')
    parser = OpeningParser(MAX_LINE_BYTES)
    got = parser.parse(late, 3)
    assert isinstance(got, Rejection) and got.code == "bad_timestamp"
    assert got == parse_line(late, 3) == parse_line(late, 3, window=accepted_window())
    assert json.loads(late)["at"] in got.message


def test_rulebook_hashes_are_shared_only_by_equal_rulebooks(examples: Path) -> None:
    stored = parse_line(_openings(examples)[0], 1)
    assert isinstance(stored, RoundOpened) and stored.rules is not None
    cls = TOPICS[topic_of(stored)]
    other_rules = Rulebook.model_validate({"limits": {"small": {"min": "1", "max": "2"}}})
    assert other_rules != stored.rules
    variants = [stored.model_copy(update={"croupier": f"D-{n}"}) for n in range(3)]
    variants.append(stored.model_copy(update={"croupier": "D-9", "rules": other_rules}))
    decoder = OpeningDecoder()
    for variant in variants:
        fact = decoder.decode(cls, content_of(variant))
        fresh = cls.model_validate_json(content_of(variant))
        assert fact == fresh == variant
        assert fact.rules.content_hash() == fresh.rules.content_hash()
    assert len(decoder._templates._hashes) == 2


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-21T20:00:03+08:00",
        "2026-11-21T21:00:03.250+08:00",
        "2026-11-21T12:00:03Z",
        "2026-11-21T12:00:03+00:00",
        "2026-11-21T12:00:03-00:00",
        "2026-11-21T12:00:03-05:30",
    ],
)
def test_parsed_times_share_one_zone_per_offset_and_equal_plain_parsing(text: str) -> None:
    from ledger.feed.types import _parse_timestamp

    parsed, plain = _parse_timestamp(text), datetime.fromisoformat(text)
    assert parsed == plain and hash(parsed) == hash(plain)
    assert parsed.isoformat() == plain.isoformat() and repr(parsed) == repr(plain)
    assert parsed.tzname() == plain.tzname()
    same_offset = _parse_timestamp(text.replace("-21T", "-22T"))
    assert same_offset.tzinfo is parsed.tzinfo
