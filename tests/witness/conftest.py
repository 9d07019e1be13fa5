"""Fixtures for the witness: a log made of leaves (roots and proofs from the RFC's reference
definitions, from all the leaves), operator and witness keys on disk, and witness processes
(`ledger witness serve` on a free loopback port, stopped at the end of the run)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ledger.merkle.rfc6962 import leaf_hash, reference_consistency, reference_root
from ledger.proof.note import CheckpointBody, sign_note
from ledger.proof.seal import private_pem, public_pem
from ledger.witness.keys import write_key_files
from tests.conftest import full_run

ORIGIN = "casino.example/ledger"
ORIGINS = [f"casino.example/ledger-{i}" for i in range(120)]
"""The logs the witnesses follow: each test takes a fresh one (:func:`log`)."""


@dataclass
class Log:
    """An operator's log: its origin, key and leaves; checkpoint notes of any size."""

    origin: str
    key: Ed25519PrivateKey
    leaves: list[bytes] = field(default_factory=list)

    def grow(self, count: int, tag: str = "row") -> Log:
        start = len(self.leaves)
        self.leaves += [leaf_hash(f"{tag} {start + i}".encode()) for i in range(count)]
        return self

    def body(self, size: int | None = None) -> CheckpointBody:
        size = len(self.leaves) if size is None else size
        return CheckpointBody(self.origin, size, reference_root(self.leaves[:size]), ("ext 1",))

    def note(self, size: int | None = None) -> str:
        return sign_note(self.body(size).text(), self.origin, self.key)

    def proof_for(self, size: int | None = None) -> Callable[[int], list[bytes]]:
        size = len(self.leaves) if size is None else size
        leaves = list(self.leaves[:size])
        return lambda old: reference_consistency(old, leaves)

    def fork(self, keep: int, tag: str) -> Log:
        """The same origin and key, the first ``keep`` leaves, then other leaves."""
        other = Log(self.origin, self.key, list(self.leaves[:keep]))
        return other.grow(len(self.leaves) - keep, tag)


@dataclass
class Keys:
    """Key files of one test module: the operator's and three witnesses'."""

    folder: Path
    operator: Ed25519PrivateKey
    operator_pub: Path
    witnesses: list[Path]

    def log_option(self, origin: str = ORIGIN) -> str:
        return f"{origin}={self.operator_pub}"


@pytest.fixture(scope="session")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Keys:
    folder = tmp_path_factory.mktemp("keys")
    operator = Ed25519PrivateKey.generate()
    (folder / "op.key").write_bytes(private_pem(operator))
    (folder / "op.key.pub").write_bytes(public_pem(operator.public_key()))
    witnesses = []
    for i, name in enumerate(("regulator.example/w1", "regulator.example/w2", None)):
        write_key_files(folder / f"w{i + 1}.key", name)
        witnesses.append(folder / f"w{i + 1}.key")
    return Keys(folder, operator, folder / "op.key.pub", witnesses)


@pytest.fixture(scope="session")
def _unused_origins() -> Iterator[str]:
    return iter(ORIGINS)


@pytest.fixture
def log(keys: Keys, _unused_origins: Iterator[str]) -> Log:
    """A log of 10 leaves under an origin no other test used."""
    return Log(next(_unused_origins), keys.operator).grow(10)


@dataclass
class Running:
    """A witness process: its URL and how to stop it."""

    url: str
    process: subprocess.Popen[str]
    state: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def witness_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "cli.main", "witness", *args]


def start(key: Path, logs: list[str], state: Path, *, init: bool = True) -> Running:
    """Start `ledger witness serve` on a free loopback port and wait for its URL."""
    args = ["serve", "--key", str(key), "--state", str(state), "--listen", "127.0.0.1:0"]
    for value in logs:
        args += ["--log", value]
    if init:
        args.append("--init")
    process = subprocess.Popen(
        witness_command(*args),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    deadline = time.monotonic() + 20
    while "listening on" not in line and time.monotonic() < deadline and process.poll() is None:
        line = process.stdout.readline()
    if "listening on" not in line:
        process.kill()
        raise RuntimeError(f"the witness did not start: {line!r}")
    url = line.split("listening on ")[1].split()[0]
    return Running(url, process, state)


class InProcess:
    """A witness served by this process: the same key, logs, state and HTTP application as
    ``ledger witness serve`` (:func:`ledger.witness.server.serve_async`), on its own event loop
    in a thread, on a free loopback port, until :meth:`stop`."""

    def __init__(self, key: Path, logs: list[str], state: Path) -> None:
        import asyncio
        import threading

        from ledger.witness.core import Witness
        from ledger.witness.keys import load_signing_key, parse_log_option
        from ledger.witness.server import serve_async
        from ledger.witness.state import WitnessState

        signing = load_signing_key(str(key), None)
        self.opened = WitnessState(state, init=True, witness=signing.vkey())
        self.state = state
        witness = Witness(signing, dict(parse_log_option(value) for value in logs), self.opened)
        self.loop = asyncio.new_event_loop()
        self._stop = asyncio.Event()
        urls: list[str] = []
        ready = threading.Event()

        def told(addresses: list[str]) -> None:
            urls.extend(addresses)
            ready.set()

        def run() -> None:
            try:
                self.loop.run_until_complete(serve_async(witness, "127.0.0.1", 0, told, self._stop))
            finally:
                ready.set()  # a witness that failed to start does not keep the caller waiting
                self.loop.close()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        if not ready.wait(20) or not urls:
            raise RuntimeError("the witness did not start")
        self.url = urls[0]

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self._stop.set)
        self.thread.join(10)
        self.opened.close()


@pytest.fixture(scope="session")
def witnesses(
    keys: Keys, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[list[Running] | list[InProcess]]:
    """Two witnesses (w1, w2) following every origin of ORIGINS, for the whole run (each test
    has an origin of its own, :func:`log`): started once, not once per module. In a full run
    they are ``ledger witness serve`` processes (each start and stop costs about a second of
    CPU); in the developer's tier they are served by this process (:class:`InProcess`, the same
    application over HTTP), and the ``serve`` process is exercised there by
    tests/witness/test_bench.py (two processes, every checkpoint cosigned through them)."""
    logs = [keys.log_option(origin) for origin in ORIGINS]
    folders = [tmp_path_factory.mktemp(f"state{i}") for i in range(2)]
    running: list[Running] | list[InProcess]
    if full_run(request.config):
        running = [start(keys.witnesses[i], logs, folders[i]) for i in range(2)]
    else:
        running = [InProcess(keys.witnesses[i], logs, folders[i]) for i in range(2)]
    yield running
    for r in running:
        r.stop()


@pytest.fixture
def start_witness() -> Iterator[Callable[..., Running]]:
    """Start more witness processes in a test (stopped at its end)."""
    started: list[Running] = []

    def starter(key: Path, logs: list[str], state: Path, *, init: bool = True) -> Running:
        running = start(key, logs, state, init=init)
        started.append(running)
        return running

    yield starter
    for running in started:
        running.stop()
