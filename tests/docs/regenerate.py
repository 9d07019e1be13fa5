"""Rewrite the generated parts of the docs: ``python -m tests.docs.regenerate``.

docs/schemas/feed-line.json from ``ledger schema feed``, and the field tables of docs/FEED.md
§12 from ``ledger schema feed --markdown``; tests/docs/test_docs_feed.py fails until they match.
"""

from __future__ import annotations

from pathlib import Path

from cli.schema import schema_text
from ledger.codec.schema import event_tables_markdown

ROOT = Path(__file__).resolve().parents[2]
BEGIN = "<!-- BEGIN generated: ledger schema feed --markdown -->"
END = "<!-- END generated -->"


def main() -> None:
    """Write both files."""
    (ROOT / "docs" / "schemas" / "feed-line.json").write_text(schema_text(), encoding="utf-8")
    feed = ROOT / "docs" / "FEED.md"
    text = feed.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    feed.write_text(f"{head}{BEGIN}\n{event_tables_markdown().strip()}\n{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    main()
