"""Starting a follower from the command line's values: the durations, the lock, the rejects
file, the metrics server, and the asyncio loop (``cli.ingest`` calls :func:`follow`)."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import IO

from ledger.live.follower import Follower, FollowOptions, TextSink
from ledger.live.judging import ResumeRefused
from ledger.live.lock import FollowerLock, FollowerRunning
from ledger.live.metrics import FollowerMetrics
from ledger.live.sources import Bounds, NatsSource, SourceError, open_source
from ledger.storage.store import LedgerApp

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h)?$")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def parse_duration(text: str) -> float:
    """``200ms``, ``30s``, ``5m``, ``1h`` or plain seconds, in seconds; ``ValueError`` if not."""
    match = _DURATION.match(text.strip())
    if match is None or float(match.group(1)) <= 0:
        raise ValueError(f"{text!r} is not a duration such as 200ms, 30s, 5m or 1h")
    return float(match.group(1)) * _UNIT[match.group(2)]


class FollowError(Exception):
    """The follower could not start; ``code`` is the exit code (2 could not run, 3 integrity)."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class FollowRequest:
    """What ``ledger ingest --follow`` was asked."""

    source: str
    url: str
    options: FollowOptions
    rejects_path: str | None = None
    state_path: str | None = None
    durable: str = "ledger-follower"
    metrics_port: int | None = None
    metrics_address: str = "127.0.0.1"


def default_rejects_path(source: str) -> str:
    """Where rejected lines go by default: beside a followed file, else in the working
    folder (``stdin.rejects.jsonl``, ``STREAM.rejects.jsonl``)."""
    if source == "-":
        return "stdin.rejects.jsonl"
    if source.startswith("nats://"):
        return source.rstrip("/").rsplit("/", 1)[-1] + ".rejects.jsonl"
    return source + ".rejects.jsonl"


def follow(
    app: LedgerApp, request: FollowRequest, *, out: TextSink | None = None, log: TextSink | None = None
) -> int:
    """Run a follower to its end; its exit code. :class:`FollowError` if it cannot start."""
    try:
        source = open_source(request.source, state=request.state_path, durable=request.durable)
    except SourceError as exc:
        raise FollowError(str(exc)) from None
    lock = FollowerLock(request.url)
    try:
        lock.acquire()
    except FollowerRunning as exc:
        raise FollowError(str(exc)) from None
    rejects = LazyFile(request.rejects_path or default_rejects_path(request.source))
    metrics = FollowerMetrics()
    server = None
    try:
        if request.metrics_port is not None:
            try:
                server = metrics.serve(request.metrics_port, request.metrics_address)
            except OSError as exc:
                raise FollowError(
                    f"cannot serve metrics on port {request.metrics_port}: {exc.strerror or exc}"
                ) from None
        if request.options.judge_process is None:
            request.options.judge_process = request.url
        follower = Follower(
            app, source, options=request.options, out=out, log=log, rejects=rejects, metrics=metrics
        )
        try:
            return asyncio.run(follower.run())
        except SourceError as exc:
            raise FollowError(str(exc)) from None
        except ResumeRefused as exc:
            raise FollowError(str(exc), 3) from None
    finally:
        if server is not None:
            server[0].shutdown()
        rejects.close()
        lock.release()


class LazyFile:
    """A file opened for appending on its first write only, so a follower that rejects
    nothing leaves no rejects file behind."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._file: IO[str] | None = None

    def write(self, text: str) -> int:
        """Append ``text`` (opening the file first if needed)."""
        if self._file is None:
            self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
        return self._file.write(text)

    def flush(self) -> None:
        """Flush what was written."""
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        """Close the file if it was opened."""
        if self._file is not None:
            self._file.close()


def make_bounds(lines: int, window: str) -> Bounds:
    """The batch bounds from ``--batch-lines`` and ``--batch-window``."""
    return Bounds(lines, parse_duration(window))


__all__ = ["FollowError", "FollowRequest", "NatsSource", "follow", "make_bounds", "parse_duration"]
