"""The bare framework baseline: the same feed through plain ``eventsourcing``, nothing more.

Each line is parsed with ``json.loads`` and becomes one event of a plain dataclass aggregate (one
aggregate per round, id from table and round), with the library's default mapper and JSON
transcoder. No validation, no integrity chain, no duplicate detection. Aggregates are saved in
batches of at most ``batch_events`` events (as ``ledger ingest`` does), and a round is forgotten
once its closing line is saved. Reading back goes through the notification log in pages of
1,000 with the library's decoding, and nothing else.
"""

from __future__ import annotations

import json
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event

TERMINAL = frozenset({"round_closed", "round_voided"})


class BareRound(Aggregate):
    """One round: every feed line is one event carrying the line's fields as a dict."""

    @staticmethod
    def create_id(line: dict[str, Any]) -> UUID:
        """The same natural key as the ledger's rounds."""
        return uuid5(NAMESPACE_URL, f"/bare/{line['table']}/{line['round']}")

    @event("Opened")
    def __init__(self, line: dict[str, Any]) -> None:
        self.lines = 1

    @event("Line")
    def add(self, line: dict[str, Any]) -> None:
        """Record one more feed line."""
        self.lines += 1


class BareApp(Application[UUID]):
    """The library's application with its defaults."""

    name = "Bare"


def bare_app(url: str) -> BareApp:
    """The bare application on the store at ``url`` (``sqlite:///…`` or ``postgresql://…``),
    with the library's environment for it, as the ledger's own store would get."""
    from ledger.storage.store import environment_for

    return BareApp(env=environment_for(url))


def bare_ingest(app: BareApp, path: str, batch_events: int = 500) -> int:
    """Store every line of the feed at ``path``; returns the number of events saved."""
    open_rounds: dict[tuple[str, str], BareRound] = {}
    touched: dict[UUID, BareRound] = {}
    ended: list[tuple[str, str]] = []
    pending = saved = 0
    with open(path, "rb") as feed:
        for raw in feed:
            line = json.loads(raw)
            key = (line["table"], line["round"])
            if line["type"] == "round_opened":
                rnd = open_rounds[key] = BareRound(line=line)
            else:
                rnd = open_rounds[key]
                rnd.add(line=line)
            touched[rnd.id] = rnd
            if line["type"] in TERMINAL:
                ended.append(key)
            pending += 1
            if pending >= batch_events:
                saved += _save(app, touched, open_rounds, ended)
                pending = 0
    return saved + _save(app, touched, open_rounds, ended)


def _save(
    app: BareApp,
    touched: dict[UUID, BareRound],
    open_rounds: dict[tuple[str, str], BareRound],
    ended: list[tuple[str, str]],
) -> int:
    if not touched:
        return 0
    recordings = app.save(*touched.values())
    touched.clear()
    for key in ended:
        del open_rounds[key]
    ended.clear()
    return len(recordings)


def bare_read(app: BareApp, page: int = 1000) -> int:
    """Read the whole notification log and decode every event; returns how many."""
    mapper = app.mapper
    recorder = app.recorder
    start = count = 0
    while True:
        rows = recorder.select_notifications(start, page, inclusive_of_start=False)
        if not rows:
            return count
        for row in rows:
            mapper.to_domain_event(row)
        count += len(rows)
        start = rows[-1].id
