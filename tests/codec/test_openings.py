"""The ``round_opened`` shortcut gives exactly what full validation gives, or steps aside."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from ledger.codec.openings import OpeningDecoder, OpeningParser
from ledger.codec.parse import MAX_LINE_BYTES, Rejection, parse_line
from ledger.feed.envelope import FeedEvent
from ledger.storage.store import TOPICS, content_of, topic_of

GAMES = ("rl", "fpc", "3cb", "sp9", "mj", "stud")


def _openings(examples: Path) -> list[bytes]:
    return [
        line.encode()
        for name in GAMES
        for line in (examples / f"{name}.jsonl").read_text().splitlines()
        if '"round_opened"' in line
    ]


def _other_round(line: bytes, n: int) -> bytes:
    obj = json.loads(line)
    obj.update(round=f"X{n:05d}", at=f"2026-11-2{n % 9}T1{n % 10}:00:00.5+08:00")
    return json.dumps(obj, separators=(",", ":")).encode()


def test_every_example_opening_parses_as_parse_line_parses_it(examples: Path) -> None:
    parser = OpeningParser(MAX_LINE_BYTES)
    lines = [_other_round(line, n) for line in _openings(examples) for n in range(3)]
    for n, line in enumerate(lines, 1):
        assert parser.parse(line, n) == parse_line(line, n)
    assert parser._templates.hits >= len(lines) - len(GAMES) * 2  # the shortcut did the work


def test_every_stored_opening_decodes_as_the_model_decodes_it(examples: Path) -> None:
    decoder = OpeningDecoder()
    facts = [parse_line(_other_round(line, n), 1) for line in _openings(examples) for n in range(3)]
    for fact in facts:
        assert isinstance(fact, FeedEvent)
        cls, content = TOPICS[topic_of(fact)], content_of(fact)
        assert decoder.decode(cls, content) == cls.model_validate_json(content) == fact
    assert decoder._templates.hits >= len(facts) - len(GAMES) * 2


@pytest.mark.parametrize(
    "edit",
    [
        (b'"currency":', b'"table":"EVIL","currency":'),  # a repeated key wins in JSON
        (b'"currency":', b'"at":"2020-01-01T00:00:00Z","currency":'),
        (b'"at":"2026', b'"at":"2026-13'),  # an impossible date
        (b'"round":"', b'"round":"has space '),  # not a code
        (b'"currency":"', b'"currency":"EUR'),  # fails in the shared tail
    ],
)
def test_odd_openings_get_the_full_validation_and_its_message(examples: Path, edit) -> None:
    line = _openings(examples)[0].replace(*edit, 1)
    parser = OpeningParser(MAX_LINE_BYTES)
    parser.parse(_openings(examples)[0], 1)  # a template for the unedited tail exists
    assert parser.parse(line, 9) == parse_line(line, 9)
    stored = parse_line(_openings(examples)[0], 1)
    assert isinstance(stored, FeedEvent)
    content = content_of(stored).replace(*edit, 1)
    cls = TOPICS[topic_of(stored)]
    decoder = OpeningDecoder()
    decoder.decode(cls, content_of(stored))
    try:
        expected = cls.model_validate_json(content)
    except ValidationError as exc:
        with pytest.raises(ValidationError) as got:
            decoder.decode(cls, content)
        assert str(got.value) == str(exc)
    else:
        assert decoder.decode(cls, content) == expected
    if edit[1].startswith(b'"table":"EVIL"'):
        parsed = parse_line(line, 9)
        assert isinstance(parsed, Rejection) or parsed.table == "EVIL"


def test_openings_whose_tails_never_repeat_stop_getting_templates_and_decode_the_same(
    examples: Path,
) -> None:
    """A game whose openings differ after the round's own fields (each its own croupier here,
    as Mah-Jong's players and capital differ) gets templates only now and then; every opening
    still equals the model's, and its rulebook's pinned hash is the rulebook's own."""
    from ledger.codec.openings import TEMPLATE_MISSES, TEMPLATE_PROBE_EVERY

    stored = [parse_line(line, 1) for line in _openings(examples)]
    opening = next(f for f in stored if isinstance(f, FeedEvent) and f.rules is not None)  # type: ignore[attr-defined]
    cls = TOPICS[topic_of(opening)]
    decoder = OpeningDecoder()
    count = TEMPLATE_MISSES + 2 * TEMPLATE_PROBE_EVERY
    for n in range(count):
        fact = opening.model_copy(update={"round": f"R{n:05d}", "croupier": f"D{n:05d}"})
        content = content_of(fact)
        got = decoder.decode(cls, content)
        want = cls.model_validate_json(content)
        assert got == want == fact
        assert got.rules.content_hash() == want.rules.content_hash()
    built = decoder._templates._misses[(cls, opening.game.encode())]
    assert built == count  # no template was ever reused
    # Templates only for the first misses and every probe after them.
    assert decoder._templates.hits == TEMPLATE_MISSES + 2
