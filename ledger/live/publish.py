"""Publishing onto NATS JetStream.

- Feed lines, paced in real time (``ledger simulate --publish nats://HOST:PORT/STREAM --rate
  N``): each line goes to ``STREAM.<table>``; the stream is created when it does not exist.
  Lines are sent in order on one connection (so each table's lines are stored in order) with
  the plain publish, and the publisher waits at the end until the stream holds them all.
- A follower's findings and rejects (:func:`publish_acked`): onto the stream
  :data:`FINDINGS_STREAM` (``ledger.findings.<table>``, ``ledger.rejects.<table>``), each with
  a ``Nats-Msg-Id`` the server deduplicates and a publish acknowledgement awaited.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from nats.js.api import StorageType, StreamConfig
from nats.js.errors import NotFoundError

from ledger.live.sources import NatsAddress, connect_nats, ensure_stream


@dataclass
class Published:
    """What a publisher sent."""

    lines: int = 0
    seconds: float = 0.0


def subject_token(name: str | None) -> str:
    """A table code made safe as one NATS subject token (``_store`` for a store-wide finding)."""
    if not name:
        return "_store"
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


def table_of(line: bytes) -> str:
    """The table a feed line names (``unknown`` when it names none)."""
    try:
        data = json.loads(line)
    except ValueError:
        return "unknown"
    table = data.get("table") if isinstance(data, dict) else None
    return subject_token(table) if isinstance(table, str) and table else "unknown"


async def publish_lines(
    url: str,
    lines: Iterable[bytes],
    *,
    rate: float | None = None,
    tick: float = 0.01,
    on_sent: Callable[[bytes], None] | None = None,
) -> Published:
    """Publish ``lines`` in order, ``rate`` lines per second (as fast as possible if ``None``);
    returns once the stream has stored every one. ``on_sent`` is told of each line once it is
    handed to the connection (the benchmark's clock)."""
    address = NatsAddress.parse(url)
    nc = await connect_nats(address.server, name="ledger simulate")
    done = Published()
    try:
        js = nc.jetstream()
        await ensure_stream(js, address)
        before = (await js.stream_info(address.stream)).state.last_seq
        started = time.monotonic()
        for line in lines:
            await nc.publish(f"{address.stream}.{table_of(line)}", line)
            if on_sent is not None:
                on_sent(line)
            done.lines += 1
            if rate is not None:
                due = started + done.lines / rate
                wait = due - time.monotonic()
                if wait >= tick:
                    await nc.flush()
                    await asyncio.sleep(wait)
            elif done.lines % 1000 == 0:
                await nc.flush()
        await nc.flush()
        while (await js.stream_info(address.stream)).state.last_seq < before + done.lines:
            await asyncio.sleep(0.02)
        done.seconds = time.monotonic() - started
    finally:
        await nc.close()
    return done


# -- findings and rejects, through JetStream --------------------------------------------------

FINDINGS_STREAM = "LEDGER_FINDINGS"
"""The stream that keeps the findings and rejects a follower publishes (created if absent)."""
FINDINGS_SUBJECTS = ("ledger.findings.>", "ledger.rejects.>")
DUPLICATE_WINDOW_SECONDS = 600.0
"""How long the server remembers a ``Nats-Msg-Id``: a follower started again within it
publishes nothing twice."""
PUBLISH_ATTEMPTS = 3


@dataclass(frozen=True)
class Outgoing:
    """One finding or reject for JetStream: subject, JSON payload, message id."""

    subject: str
    payload: bytes
    msg_id: str


async def ensure_findings_stream(js: Any) -> None:
    """Create :data:`FINDINGS_STREAM` (file storage, the findings' and rejects' subjects, a
    duplicate window of :data:`DUPLICATE_WINDOW_SECONDS`) when it does not exist."""
    try:
        await js.stream_info(FINDINGS_STREAM)
    except NotFoundError:
        await js.add_stream(
            StreamConfig(
                name=FINDINGS_STREAM,
                subjects=list(FINDINGS_SUBJECTS),
                storage=StorageType.FILE,
                duplicate_window=DUPLICATE_WINDOW_SECONDS,
            )
        )


async def publish_acked(js: Any, items: list[Outgoing], *, retry_seconds: float = 1.0) -> list[str]:
    """Publish ``items`` through JetStream (each with its ``Nats-Msg-Id``, so a repeat is
    dropped by the server), waiting for the acknowledgements, again for those that failed
    (up to :data:`PUBLISH_ATTEMPTS` times); the errors of those never acknowledged."""
    pending = items
    errors: list[str] = []
    for attempt in range(PUBLISH_ATTEMPTS):
        results = await asyncio.gather(
            *(js.publish(o.subject, o.payload, headers={"Nats-Msg-Id": o.msg_id}) for o in pending),
            return_exceptions=True,
        )
        failed = [(o, r) for o, r in zip(pending, results, strict=True) if isinstance(r, BaseException)]
        if not failed:
            return []
        errors = [str(r) or type(r).__name__ for _, r in failed]
        pending = [o for o, _ in failed]
        if attempt < PUBLISH_ATTEMPTS - 1:
            await asyncio.sleep(retry_seconds)
    return errors
