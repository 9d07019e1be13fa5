"""Publishing feed lines onto a NATS JetStream stream, paced in real time (``ledger simulate
--publish nats://HOST:PORT/STREAM --rate N``).

Each line goes to ``STREAM.<table>``; the stream is created when it does not exist. Lines are
sent in order on one connection (so each table's lines are stored in order) with the plain
publish, and the publisher waits at the end until the stream holds them all.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ledger.live.follower import subject_token
from ledger.live.sources import NatsAddress, connect_nats, ensure_stream


@dataclass
class Published:
    """What a publisher sent."""

    lines: int = 0
    seconds: float = 0.0


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
