"""How a batch is closed (:func:`ledger.live.sources.batch_wait`), what a JetStream reply
subject tells the source (stream sequence, messages still pending on the server), and the
frames in which the receiving process hands messages over."""

from __future__ import annotations

import asyncio

from ledger.live.receiver import decode_messages, encode_messages, sequence_and_pending, status_of
from ledger.live.sources import Bounds, Line, NatsSource, batch_wait

BOUNDS = Bounds(lines=5000, seconds=0.2, linger=0.01)


def _futures() -> tuple[asyncio.Future[None], asyncio.Future[None]]:
    loop = asyncio.new_event_loop()
    done: asyncio.Future[None] = loop.create_future()
    done.set_result(None)
    pending: asyncio.Future[None] = loop.create_future()
    loop.close()
    return done, pending


def test_an_empty_batch_waits_for_the_window_then_goes_empty() -> None:
    done, _ = _futures()
    assert round(batch_wait(BOUNDS, 100.0, None, 100.05, done), 6) == 0.15
    assert batch_wait(BOUNDS, 100.0, None, 100.25, done) < 0


def test_with_the_database_idle_a_batch_goes_after_the_linger() -> None:
    done, _ = _futures()
    assert round(batch_wait(BOUNDS, 100.0, 100.0, 100.004, done), 6) == 0.006
    assert batch_wait(BOUNDS, 100.0, 100.0, 100.011, done) < 0
    assert batch_wait(Bounds(10, 0.005, 0.01), 100.0, 100.0, 100.006, done) < 0  # the window first


def test_while_the_previous_batch_is_stored_a_batch_keeps_growing() -> None:
    _, pending = _futures()
    assert batch_wait(BOUNDS, 100.0, 100.0, 100.5, pending) > 0  # past the window: it could not go anyway


def test_without_the_database_s_future_the_window_alone_bounds_a_batch() -> None:
    assert round(batch_wait(BOUNDS, 100.0, 100.0, 100.15, None), 6) == 0.05
    assert batch_wait(BOUNDS, 100.0, 100.0, 100.21, None) < 0


def test_the_reply_subject_gives_the_stream_sequence_and_the_pending_count() -> None:
    assert sequence_and_pending("$JS.ACK.TABLES.ledger-follower.1.4821.4790.1795724813620655427.1859") == (
        4821,
        1859,
    )
    with_domain = "$JS.ACK.hub.ACCHASH.TABLES.ledger-follower.2.17.16.1795724813620655427.0.tok"
    assert sequence_and_pending(with_domain) == (17, 0)
    assert sequence_and_pending("_INBOX.abc") == (0, 0)
    assert sequence_and_pending(b"$JS.ACK.TABLES.f.1.4821.4790.1795724813620655427.1859") == (4821, 1859)


def test_a_pull_request_s_end_is_told_from_a_message_with_headers() -> None:
    assert status_of(b"NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 2500\r\n\r\n") == b"408"
    assert status_of(b"NATS/1.0 404 No Messages\r\n\r\n") == b"404"
    assert status_of(b"NATS/1.0 100 Idle Heartbeat\r\n\r\n") == b"100"
    assert status_of(b"NATS/1.0\r\nNats-Msg-Id: abc\r\n\r\n") == b""  # a published header
    assert status_of(None) == status_of(b"") == b""


def test_a_frame_of_messages_comes_back_as_it_was_handed_over() -> None:
    messages = [(4821, b'{"v":1}', "RL-01"), (4822, b"", "MJ-02"), (4830, "中".encode() * 3, "RL-01")]
    frame = encode_messages(17, 1859, messages)
    got = decode_messages(frame[4:])  # after the length
    assert (got.first, got.pending) == (17, 1859)
    starts = [0, *got.ends[:-1]]
    back = [
        (sequence, got.data[start:end], table)
        for sequence, start, end, table in zip(got.sequences, starts, got.ends, got.tables, strict=True)
    ]
    assert back == messages


class _Consumers:
    """A JetStream context that answers ``consumer_info`` with 7 pending and counts the calls."""

    def __init__(self) -> None:
        self.asked = 0

    async def consumer_info(self, stream: str, durable: str) -> object:
        self.asked += 1
        return type("Info", (), {"num_pending": 7})()


def test_the_lag_asks_the_server_only_once_the_follower_has_caught_up() -> None:
    """While messages are pending, the count the last delivered one carried is the lag (asking
    the server every second then slowed its deliveries to a trickle); caught up, it is asked."""
    source = NatsSource("nats://127.0.0.1:4222/LAG", "lag")
    consumers = _Consumers()
    source.js = consumers
    source._behind = 3000
    source._buffer.extend(Line(n, b"{}") for n in range(5))
    assert asyncio.run(source.lag()) == 3005.0
    assert consumers.asked == 0
    source._behind = 0
    source._buffer.clear()
    assert asyncio.run(source.lag()) == 7.0
    assert consumers.asked == 1
