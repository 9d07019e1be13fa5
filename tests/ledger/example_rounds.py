"""The example feeds' facts, parsed and grouped by round: shared by the judging tests."""

from __future__ import annotations

from pathlib import Path

from ledger.codec.parse import parse_line
from ledger.feed.envelope import FeedEvent

GAME_FILES = ("rl", "fpc", "3cb", "sp9", "mj", "stud")
"""The example feed of every game, by file stem."""


def example_rounds(examples: Path) -> list[list[FeedEvent]]:
    """Every round of the example feeds, its facts in feed order."""
    rounds: dict[tuple[str, str], list[FeedEvent]] = {}
    n = 0
    for name in GAME_FILES:
        for line in (examples / f"{name}.jsonl").read_text().splitlines():
            if line.strip():
                n += 1
                fact = parse_line(line.encode(), n)
                assert isinstance(fact, FeedEvent)
                rounds.setdefault((fact.table, fact.round), []).append(fact)
    return list(rounds.values())
