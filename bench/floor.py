"""The raw floor: the feed's rows written and read with the drivers alone.

One row per feed line, shaped like the library's events table (aggregate id, version, topic,
the line's bytes), written in **one transaction**: ``sqlite3.executemany`` on SQLite, binary
``COPY`` with psycopg on PostgreSQL. Read back with a plain cursor (a server-side cursor on
PostgreSQL). Nothing is parsed, checked or decoded: this is what the disk and driver cost.
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any
from uuid import NAMESPACE_URL, uuid5

from bench.stores import Store

SQLITE_DDL = (
    "CREATE TABLE stored_events (originator_id TEXT, originator_version INTEGER, "
    "topic TEXT, state BLOB, PRIMARY KEY (originator_id, originator_version))"
)
PG_DDL = (
    "CREATE TABLE raw_events (originator_id uuid NOT NULL, originator_version bigint NOT NULL, "
    "topic text, state bytea, notification_id bigserial, "
    "PRIMARY KEY (originator_id, originator_version)); "
    "CREATE UNIQUE INDEX raw_events_nid ON raw_events (notification_id)"
)


def feed_rows(path: str) -> list[tuple[Any, int, str, bytes]]:
    """``(aggregate id, seq, topic, line bytes)`` for every line of the feed."""
    rows = []
    with open(path, "rb") as feed:
        for raw in feed:
            line = json.loads(raw)
            oid = uuid5(NAMESPACE_URL, f"/raw/{line['table']}/{line['round']}")
            rows.append((oid, line["seq"], f"{line['game']}/{line['type']}", raw.rstrip(b"\n")))
    return rows


def raw_write(store: Store, rows: list[tuple[Any, int, str, bytes]]) -> float:
    """Seconds to write ``rows`` in one transaction."""
    if store.kind == "sqlite":
        conn = sqlite3.connect(store.sqlite_path, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(SQLITE_DDL)
        text_rows = [(str(r[0]), r[1], r[2], r[3]) for r in rows]
        started = time.perf_counter()
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO stored_events VALUES (?,?,?,?)", text_rows)
        conn.execute("COMMIT")
        seconds = time.perf_counter() - started
        conn.close()
        return seconds
    with store.pg_connect() as conn:
        conn.execute(PG_DDL)
        conn.commit()
        started = time.perf_counter()
        with (
            conn.cursor() as cur,
            cur.copy(
                "COPY raw_events (originator_id, originator_version, topic, state) FROM STDIN (FORMAT BINARY)"
            ) as copy,
        ):
            copy.set_types(["uuid", "int8", "text", "bytea"])
            for row in rows:
                copy.write_row(row)
        conn.commit()
        return time.perf_counter() - started


def raw_read(store: Store) -> tuple[float, int]:
    """Seconds to read every row back in order, and how many rows."""
    count = 0
    if store.kind == "sqlite":
        conn = sqlite3.connect(store.sqlite_path)
        started = time.perf_counter()
        for _row in conn.execute("SELECT rowid, * FROM stored_events ORDER BY rowid"):
            count += 1
        seconds = time.perf_counter() - started
        conn.close()
        return seconds, count
    with store.pg_connect() as conn:
        started = time.perf_counter()
        with conn.cursor(name="floor") as cur:
            cur.itersize = 5000
            cur.execute("SELECT * FROM raw_events ORDER BY notification_id")
            for _row in cur:
                count += 1
        seconds = time.perf_counter() - started
        conn.commit()
    return seconds, count
