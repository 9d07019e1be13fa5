"""docs/FEED.md and docs/schemas/feed-line.json say what the code does: the schema file is
``ledger schema feed``, the field tables are ``ledger schema feed --markdown``, every example
line fits the schema, and every finding and rejection code the code can emit is documented."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from cli.schema import schema_text
from ledger.codec.parse import REJECT_CODES
from ledger.codec.schema import event_tables_markdown, feed_line_schema
from ledger.domain.findings import FINDING_CODES

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FEED = (DOCS / "FEED.md").read_text(encoding="utf-8")
BEGIN = "<!-- BEGIN generated: ledger schema feed --markdown -->"
END = "<!-- END generated -->"
REGENERATE = "python -m tests.docs.regenerate"


def generated_section(text: str) -> str:
    """What docs/FEED.md holds between its generated-section markers."""
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[start:end].strip("\n")


def test_the_committed_schema_is_what_ledger_schema_feed_prints() -> None:
    committed = (DOCS / "schemas" / "feed-line.json").read_text(encoding="utf-8")
    assert committed == schema_text(), f"out of date: {REGENERATE}"
    result = CliRunner().invoke(app, ["schema", "feed"])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == json.loads(committed)


def test_the_field_tables_of_feed_md_are_generated_from_the_models() -> None:
    assert generated_section(FEED) == event_tables_markdown().strip("\n"), (
        f"docs/FEED.md §12 is out of date: {REGENERATE}"
    )
    result = CliRunner().invoke(app, ["schema", "feed", "--markdown"])
    assert result.exit_code == 0 and "| `spin_result` | `number`: int 0–36 |" in result.stdout


def _definition(schema: dict[str, Any], line: dict[str, Any]) -> dict[str, Any]:
    """The definition a line must satisfy: its game's event of its type."""
    defs = schema["$defs"]
    game = defs[f"game.{line['game']}"]
    for ref in game["oneOf"]:
        event = defs[ref["$ref"].rsplit("/", 1)[-1]]
        if event["properties"]["type"]["const"] == line["type"]:
            return dict(event)
    raise AssertionError(f"{line['game']} has no type {line['type']} in the schema")


def _fits(value: Any, prop: dict[str, Any]) -> bool:
    """The checks a line's top-level values must pass (type, pattern, const, enum, range)."""
    if "anyOf" in prop:
        return any(_fits(value, p) for p in prop["anyOf"])
    if "const" in prop:
        return bool(value == prop["const"])
    if "enum" in prop:
        return value in prop["enum"]
    kind = prop.get("type")
    if kind == "string":
        return isinstance(value, str) and re.search(prop.get("pattern", ""), value) is not None
    if kind == "integer":
        return (
            isinstance(value, int)
            and not isinstance(value, bool)
            and prop.get("minimum", value) <= value <= prop.get("maximum", value)
        )
    if kind == "null":
        return value is None
    types = {"boolean": bool, "array": list, "object": dict}
    return kind not in types or isinstance(value, types[kind])


@pytest.mark.parametrize("name", ["3cb", "fpc", "mj", "rl", "sp9", "stud"])
def test_every_example_line_fits_the_schema(name: str) -> None:
    schema = feed_line_schema()
    for text in (ROOT / "tests" / "examples" / f"{name}.jsonl").read_text().splitlines():
        line = json.loads(text)
        event = _definition(schema, line)
        assert set(event["required"]) <= set(line), (text, event["required"])
        assert set(line) <= set(event["properties"]), text
        for key, value in line.items():
            assert _fits(value, event["properties"][key]), (key, value, event["properties"][key])


def test_the_schema_rejects_what_ingest_rejects() -> None:
    schema = feed_line_schema()
    line = {
        "v": 1,
        "table": "RL-01",
        "game": "RL",
        "round": "1",
        "seq": 1,
        "at": "2026-11-21T20:00:00+08:00",
        "type": "bet_settled",
        "bet": "b1",
        "result": "win",
        "returned": "100",
        "won": 3500,
        "commission": "0",
    }
    event = _definition(schema, line)
    assert not _fits(line["won"], event["properties"]["won"])  # money is a string
    assert not _fits("95.505", event["properties"]["returned"])
    assert not _fits("2026-11-21 20:00", event["properties"]["at"])
    assert "rules_hash" not in _definition(schema, {**line, "type": "round_opened"})["properties"]


@pytest.mark.parametrize("code", sorted(FINDING_CODES))
def test_every_finding_code_is_documented_in_feed_md(code: str) -> None:
    assert re.search(rf"^\| `{code}` \|", FEED, re.M), code


@pytest.mark.parametrize("code", sorted(REJECT_CODES))
def test_every_rejection_code_is_documented_in_feed_md(code: str) -> None:
    assert re.search(rf"^\| `{code}` \|", FEED, re.M), code
