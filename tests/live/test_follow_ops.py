"""Operating a follower: sealing on a timer (with the witness hook) and resuming the judge from
the newest checkpoint, metrics over HTTP, the views following, the database away for a while,
the broker restarted mid-stream."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ledger.live.follower import Follower, FollowOptions
from ledger.live.metrics import FollowerMetrics
from ledger.live.publish import publish_lines
from ledger.live.sources import Bounds, FileSource, NatsSource
from ledger.live.views import follow_views
from ledger.proof import checkpoints
from ledger.proof.seal import generate_key
from ledger.storage.store import open_ledger
from ledger.verify.engine import verify_store
from projections.registry import registered_views
from tests.conftest import require_postgres
from tests.live.conftest import Captured, batch_store, nats_server_and_port, run_follower, store_rows


def _write(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"".join(line + b"\n" for line in lines))


def _seal_while_following(
    tmp_path: Path, lines: list[bytes], key: Ed25519PrivateKey, *, name_key: Ed25519PrivateKey | None
) -> tuple[Follower, list[checkpoints.Sealed], Follower, list[checkpoints.StoredCheckpoint], int]:
    """Follow a file fed in steps, sealing every 0.3 s (the store's sealing public key named
    first when ``name_key``); then start a second follower on the same store. Both followers,
    what the first sealed, the stored checkpoints (under ``key``) and verify's finding count."""
    feed = tmp_path / "feed.jsonl"
    feed.write_bytes(b"")
    app = open_ledger(f"sqlite:///{tmp_path / 'l.db'}")
    if name_key is not None:
        checkpoints.name_sealing_key(app, name_key.public_key())
    sealed: list[checkpoints.Sealed] = []
    follower = Follower(
        app,
        FileSource(str(feed)),
        out=Captured(),
        log=Captured(),
        options=FollowOptions(Bounds(100, 0.05), seal_every=0.3, seal_key=key, idle_exit=1.0),
    )
    follower.on_sealed.append(sealed.append)

    async def main() -> None:
        task = asyncio.create_task(follower.run())
        with feed.open("ab") as f:
            for n in range(0, len(lines), 100):
                f.write(b"".join(line + b"\n" for line in lines[n : n + 100]))
                f.flush()
                await asyncio.sleep(0.15)
        await task

    try:
        asyncio.run(main())
        stored = checkpoints.read_checkpoints(
            app, checkpoints.SealingKey(key.public_key(), "the test's key")
        ).valid
        again, _ = run_follower(app, FileSource(str(feed)), idle=0.3)
        report = verify_store(app)
    finally:
        app.close()
    return follower, sealed, again, stored, len(report.findings)


@pytest.mark.slow
def test_seal_every_stores_checkpoints_and_a_restart_judges_from_the_newest(
    tmp_path: Path, lines: list[bytes]
) -> None:
    key = generate_key()
    follower, sealed, again, stored, findings = _seal_while_following(tmp_path, lines, key, name_key=key)
    assert len(sealed) >= 2 and [s.number for s in sealed] == [s.number for s in stored]
    assert follower.metrics.seal_age._value.get() >= 0  # set since the last seal
    # Started again, it judges from the newest checkpoint, valid under the store's sealing
    # public key; every finding was told by the first follower, once: none is told again.
    assert again.judge.resumed_from == stored[-1].number
    assert "judging from checkpoint" in again.log.text  # type: ignore[attr-defined]
    assert len(follower.out.records) == findings > 0  # type: ignore[attr-defined]
    assert again.out.records == []  # type: ignore[attr-defined]


@pytest.mark.slow
def test_a_restart_without_the_sealing_public_key_judges_from_the_start_and_says_so(
    tmp_path: Path, lines: list[bytes]
) -> None:
    _, sealed, again, _, _ = _seal_while_following(tmp_path, lines, generate_key(), name_key=None)
    assert sealed and again.judge.resumed_from is None
    assert "no sealing public key is configured" in again.log.text  # type: ignore[attr-defined]
    assert again.out.records == []  # type: ignore[attr-defined]


@pytest.mark.slow
def test_a_restart_does_not_use_a_checkpoint_signed_by_another_key(
    tmp_path: Path, lines: list[bytes]
) -> None:
    store_key, other = generate_key(), generate_key()
    _, sealed, _, _, _ = _seal_while_following(tmp_path, lines, other, name_key=None)
    app = open_ledger(f"sqlite:///{tmp_path / 'l.db'}")
    try:
        checkpoints.name_sealing_key(app, store_key.public_key())
        third, _ = run_follower(app, FileSource(str(tmp_path / "feed.jsonl")), idle=0.3)
    finally:
        app.close()
    assert sealed and third.judge.resumed_from is None
    assert "no stored checkpoint is valid under the sealing public key" in third.log.text  # type: ignore[attr-defined]
    # The told row was signed by the other key too: nothing proves it, so the findings are told
    # again (ledger.live.told), and the follower says why.
    assert "has a signature that is not valid under" in third.log.text  # type: ignore[attr-defined]
    assert third.out.records  # type: ignore[attr-defined]


def test_metrics_are_served_in_the_prometheus_text_format(tmp_path: Path, lines: list[bytes]) -> None:
    feed = tmp_path / "feed.jsonl"
    _write(feed, lines)
    metrics = FollowerMetrics()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server, _ = metrics.serve(port)
    app = open_ledger(f"sqlite:///{tmp_path / 'l.db'}")
    try:
        follower = Follower(
            app,
            FileSource(str(feed)),
            out=Captured(),
            log=Captured(),
            metrics=metrics,
            options=FollowOptions(idle_exit=0.5),
        )
        asyncio.run(follower.run())
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    finally:
        server.shutdown()
        app.close()
    assert f'ledger_follow_lines_total{{outcome="stored"}} {float(len(lines))}' in text
    for name in (
        "ledger_follow_findings_total",
        "ledger_follow_lag ",
        "ledger_follow_up 1.0",
        "ledger_follow_seal_age_seconds -1.0",
        "ledger_follow_rounds_judged_total",
        "ledger_follow_commit_seconds_bucket",
        "ledger_follow_last_error_timestamp",
    ):
        assert name in text, name


def test_the_views_follow_the_log(tmp_path: Path, lines: list[bytes]) -> None:
    url = f"sqlite:///{tmp_path / 'l.db'}"
    app = open_ledger(url)
    from ledger.services.ingest import Ingestor

    Ingestor(app).ingest(enumerate(lines[:300], 1))
    moved: list[tuple[str, int]] = []
    stop = threading.Event()

    def feed_more() -> None:
        time.sleep(0.4)
        writer = open_ledger(url)
        Ingestor(writer).ingest(enumerate(lines[300:], 301))
        writer.close()
        time.sleep(0.6)
        stop.set()

    threading.Thread(target=feed_more).start()
    try:
        updates = follow_views(
            app,
            registered_views(),
            every=0.1,
            stop=stop,
            on_moved=lambda name, pos: moved.append((name, pos)),
        )
        head = max(row[0] for page in app.rows() for row in page)
    finally:
        app.close()
    assert updates >= 2  # once at start, once after the lines came
    views = {name for name, _ in moved}
    assert views == {v.name for v in registered_views()}
    assert all(max(p for n, p in moved if n == v) >= head - 1000 for v in views)


class _Proxy:
    """A TCP forwarder to PostgreSQL that can be cut and restored: the database 'unreachable
    for a while' over real sockets."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(50)
        self.port = self.listener.getsockname()[1]
        self.open = True
        self.pairs: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.open:
                client.close()
                continue
            server = socket.create_connection(self.target)
            self.pairs += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(a: socket.socket, b: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := a.recv(65536):
                b.sendall(data)
        for s in (a, b):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        self.open = False
        for s in self.pairs:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
        self.pairs = []

    def restore(self) -> None:
        self.open = True


@pytest.mark.postgres
@pytest.mark.slow
def test_the_database_away_for_a_while_is_waited_out(tmp_path: Path, lines: list[bytes]) -> None:
    """The connection pool reconnects on its own back-off (seconds), so this takes ~10 s."""
    require_postgres()
    lines = lines[:600]
    from tests.conftest import PG_BASE, _drop_schema

    schema = "t_live_" + os.urandom(5).hex()
    host_url = PG_BASE.split("?")[0]
    proxy = _Proxy(("127.0.0.1", 5432))
    url = host_url.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}") + f"?schema={schema}"
    feed = tmp_path / "feed.jsonl"
    feed.write_bytes(b"")
    app = open_ledger(url)
    log = Captured()
    follower = Follower(
        app,
        FileSource(str(feed)),
        out=Captured(),
        log=log,
        options=FollowOptions(Bounds(100, 0.05), idle_exit=3.0),
    )

    async def main() -> None:
        task = asyncio.create_task(follower.run())
        with feed.open("ab") as f:
            f.write(b"".join(line + b"\n" for line in lines[:200]))
        await asyncio.sleep(0.8)
        proxy.cut()
        with feed.open("ab") as f:
            f.write(b"".join(line + b"\n" for line in lines[200:]))
        await asyncio.sleep(1.0)
        proxy.restore()
        await task

    try:
        asyncio.run(main())
    finally:
        app.close()
        proxy.listener.close()
    try:
        assert "waiting for the database" in log.text and "reachable again" in log.text
        assert follower.metrics.errors.labels("database")._value.get() >= 1
        assert follower.summary.stored == len(lines) and follower.summary.unstored == 0
        direct = host_url + f"?schema={schema}"
        assert store_rows(direct) == store_rows(batch_store(tmp_path / "batch.db", lines))
    finally:
        _drop_schema(schema)


@pytest.mark.nats
@pytest.mark.slow
def test_the_broker_restarted_mid_stream(tmp_path: Path, lines: list[bytes]) -> None:
    """A NATS server of the test's own (its store on disk), stopped and started again while
    the follower reads: nothing lost, nothing doubled."""
    server, port = nats_server_and_port()
    store = tmp_path / "js"

    def start() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [server, "-js", "-a", "127.0.0.1", "-p", str(port), "-sd", str(store)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(50):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                return proc
            time.sleep(0.1)
        raise AssertionError("nats-server did not start")

    url = f"nats://127.0.0.1:{port}/RESTART"
    broker = start()
    try:
        asyncio.run(publish_lines(url, lines[:300]))
        app = open_ledger(f"sqlite:///{tmp_path / 'l.db'}")
        log = Captured()
        follower = Follower(
            app,
            NatsSource(url),
            out=Captured(),
            log=log,
            # Idle counts from the last line read, also while the broker is away: the stop, the
            # restart (JetStream reads its store back), the follower's reconnect (0.5 s apart)
            # and the publisher's new connection must all fit in it, on a loaded machine too
            # (2 s did not, once, in CI).
            options=FollowOptions(Bounds(100, 0.05), idle_exit=6.0),
        )

        async def main() -> None:
            nonlocal broker
            task = asyncio.create_task(follower.run())
            await asyncio.sleep(1.0)
            broker.terminate()
            broker.wait()
            await asyncio.sleep(0.5)
            broker = start()
            await publish_lines(url, lines[300:])
            await task

        try:
            asyncio.run(main())
        finally:
            app.close()
    finally:
        broker.terminate()
        broker.wait()
    assert follower.summary.stored == len(lines)
    assert store_rows(f"sqlite:///{tmp_path / 'l.db'}") == store_rows(
        batch_store(tmp_path / "batch.db", lines)
    )
