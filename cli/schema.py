"""``ledger schema feed``: the JSON Schema of a feed line, generated from the feed's models.

``docs/schemas/feed-line.json`` is this command's output, kept equal to it by a test:
``ledger schema feed > docs/schemas/feed-line.json`` after changing a feed model.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from ledger.codec.schema import event_tables_markdown, feed_line_schema

schema = typer.Typer(
    name="schema", no_args_is_help=True, help="JSON Schemas of what the ledger reads: `ledger schema feed`."
)


def schema_text() -> str:
    """The feed-line schema as the committed file holds it (2-space indent, UTF-8, final
    newline)."""
    return json.dumps(feed_line_schema(), indent=2, ensure_ascii=False) + "\n"


@schema.command("feed")
def feed_command(
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print the event-type tables of docs/FEED.md instead.")
    ] = False,
) -> None:
    """Print the JSON Schema (draft 2020-12) of one feed line: the envelope and every event type
    of every game, with the notation of codes, money, timestamps, cards and tiles.

    Exit code 0.
    """
    sys.stdout.write(event_tables_markdown() if markdown else schema_text())


ORDER = 95
COMMANDS = [schema]
