"""The independent bare-eventsourcing baseline: what a user of the framework would write.

The same feed through plain ``eventsourcing`` with no validation, no integrity chain and no
duplicate detection, exactly as the independent baseline of issue 31 does it:

- **append** (:func:`bare_ingest`): each line ``json.loads``-ed; one plain aggregate per round
  (id from table and round), every line one plain event of it; ``Application.save`` of 100
  closed rounds at a time, the rounds still in play saved once, at the end;
- **read + decode** (:func:`bare_read`): every notification read in pages of 1,000 and decoded
  with the application's mapper.

The library's defaults throughout: its own recorders, mapper and JSON transcoder. Run alone, in
a process of its own, as the harness runs it (``python -m bench`` times both sides this way, so
start-up is left out of both in the same way)::

    python -m bench.bare ingest FEED DB     # prints the seconds the work took
    python -m bench.bare read DB
    python -m bench.bare ingest FEED DB --json   # {"seconds", "cpu_seconds", "events"}

``DB`` is a SQLite file path, a ``sqlite:///…`` or ``postgresql://…`` URL (``?schema=`` honoured),
or ``pg:NAME`` (database ``NAME`` on 127.0.0.1:5432 as user ``postgres``; ``POSTGRES_HOST``,
``POSTGRES_PORT``, ``POSTGRES_USER``, ``POSTGRES_PASSWORD`` override). The timing starts once
the application is made (imports and connection excluded) and ends when the work is done;
``cpu_seconds`` is the process CPU (user + system) over the same span.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event


class Round(Aggregate):
    """One round: its lines, each one plain event carrying the decoded line."""

    @staticmethod
    def create_id(table: str, round: str) -> UUID:
        """The round's id from its natural key."""
        return uuid5(NAMESPACE_URL, f"/{table}/{round}")

    @event("Opened")
    def __init__(self, table: str, round: str, line: dict[str, Any]) -> None:
        self.lines = [line]

    @event("Line")
    def add(self, line: dict[str, Any]) -> None:
        """One more line of the round."""
        self.lines.append(line)


class Bare(Application[UUID]):
    """The library's application with its defaults."""


BareApp = Bare
"""The name the harness's other modules use."""

ROUNDS_PER_SAVE = 100
"""Closed rounds per ``Application.save``."""


def environment(db: str) -> dict[str, str]:
    """The library's settings for ``db`` (see the module docstring)."""
    if db.startswith("pg:") or db.startswith(("postgresql://", "postgres://")):
        if db.startswith("pg:"):
            name, host, port, user, password, schema = (
                db[3:],
                os.environ.get("POSTGRES_HOST", "127.0.0.1"),
                os.environ.get("POSTGRES_PORT", "5432"),
                os.environ.get("POSTGRES_USER", "postgres"),
                os.environ.get("POSTGRES_PASSWORD", ""),
                None,
            )
        else:
            parts = urlsplit(db)
            name = unquote(parts.path.lstrip("/")) or "postgres"
            host = unquote(parts.hostname or "127.0.0.1")
            port = str(parts.port or 5432)
            user = unquote(parts.username or "postgres")
            password = unquote(parts.password or "")
            schema = parse_qs(parts.query).get("schema", [None])[0]
        env = {
            "PERSISTENCE_MODULE": "eventsourcing.postgres",
            "POSTGRES_DBNAME": name,
            "POSTGRES_HOST": host,
            "POSTGRES_PORT": port,
            "POSTGRES_USER": user,
            "POSTGRES_PASSWORD": password,
        }
        if schema:
            env["POSTGRES_SCHEMA"] = schema
        return env
    path = db[len("sqlite:///") :] if db.startswith("sqlite:///") else db
    return {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": path}


def bare_app(db: str) -> Bare:
    """The bare application on ``db``."""
    return Bare(env=environment(db))


def bare_ingest(app: Bare, path: str) -> int:
    """Store every line of the feed at ``path``; returns the number of events saved."""
    open_rounds: dict[tuple[str, str], Round] = {}
    batch: list[Round] = []
    saved = 0
    with open(path) as feed:
        for raw in feed:
            line = json.loads(raw)
            key = (line["table"], line["round"])
            rnd = open_rounds.get(key)
            if rnd is None:
                rnd = Round(line["table"], line["round"], line)
                open_rounds[key] = rnd
            else:
                rnd.add(line)
            if line["type"] in ("round_closed", "round_voided"):
                batch.append(open_rounds.pop(key))
                if len(batch) >= ROUNDS_PER_SAVE:
                    saved += len(app.save(*batch))
                    batch = []
    return saved + len(app.save(*batch, *open_rounds.values()))


def bare_read(app: Bare, page: int = 1000) -> int:
    """Read the whole notification log and decode every event; returns how many."""
    start = 1
    count = 0
    while True:
        rows = app.recorder.select_notifications(start=start, limit=page)
        if not rows:
            return count
        for row in rows:
            app.mapper.to_domain_event(row)
        count += len(rows)
        start = rows[-1].id + 1


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str]) -> int:
    """``ingest FEED DB`` or ``read DB`` (see the module docstring)."""
    as_json = "--json" in argv
    args = [a for a in argv if a != "--json"]
    if len(args) == 3 and args[0] == "ingest":
        app = bare_app(args[2])
        work: Any = lambda: bare_ingest(app, args[1])  # noqa: E731
    elif len(args) == 2 and args[0] == "read":
        app = bare_app(args[1])
        work = lambda: bare_read(app)  # noqa: E731
    else:
        print("usage: python -m bench.bare ingest FEED DB | read DB [--json]", file=sys.stderr)
        return 2
    cpu, started = _cpu(), time.perf_counter()
    events = work()
    seconds, cpu = time.perf_counter() - started, _cpu() - cpu
    app.close()
    if as_json:
        print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "events": events}))
    else:
        print(f"{seconds:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
