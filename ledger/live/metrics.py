"""The follower's health and metrics in the Prometheus text format (``prometheus_client``).

``--metrics-port PORT`` serves them over HTTP (``GET /metrics``); every name starts with
``ledger_follow_``. Each follower has a registry of its own, so several can run in one process
(the tests do).
"""

from __future__ import annotations

import time
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.exposition import generate_latest


class FollowerMetrics:
    """The counters and gauges of one follower."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.lines = Counter(
            "ledger_follow_lines",
            "Feed lines read, by outcome (stored, duplicate, rejected).",
            ["outcome"],
            registry=r,
        )
        self.findings = Counter(
            "ledger_follow_findings",
            "Findings made by the live judge, by severity.",
            ["severity"],
            registry=r,
        )
        self.rounds = Counter("ledger_follow_rounds_judged", "Rounds judged as they closed.", registry=r)
        self.lag = Gauge(
            "ledger_follow_lag",
            "How far the follower is behind its source "
            "(messages for NATS, bytes for a file, queued lines for stdin).",
            registry=r,
        )
        self.commit_seconds = Histogram(
            "ledger_follow_commit_seconds",
            "Time to store and judge one batch.",
            registry=r,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
        )
        self.up = Gauge(
            "ledger_follow_up",
            "1 while the follower stores what it reads; 0 while it waits for the database.",
            registry=r,
        )
        self.last_seal = Gauge(
            "ledger_follow_last_seal_timestamp_seconds",
            "When the follower last stored a checkpoint (0: not yet).",
            registry=r,
        )
        self.seal_age = Gauge(
            "ledger_follow_seal_age_seconds",
            "Seconds since the follower last stored a checkpoint (-1: not yet).",
            registry=r,
        )
        self.seal_age.set_function(self._seal_age)
        self.cosign = Counter(
            "ledger_follow_cosign",
            "Timed checkpoints offered to the witnesses, by outcome (cosigned: the quorum "
            "cosigned; missed: fewer than the quorum did, nothing stored for that note).",
            ["outcome"],
            registry=r,
        )
        self.last_cosigned = Gauge(
            "ledger_follow_last_cosigned_timestamp_seconds",
            "When a quorum of witnesses last cosigned a follower's checkpoint (0: not yet).",
            registry=r,
        )
        self.unjudged = Gauge(
            "ledger_follow_unjudged_lines",
            "Lines stored and not judged yet (judging is put off while the follower catches up).",
            registry=r,
        )
        self.errors = Counter(
            "ledger_follow_errors",
            "Errors the follower waited out (database unreachable, broker away), by kind.",
            ["kind"],
            registry=r,
        )
        self.last_error = Gauge(
            "ledger_follow_last_error_timestamp_seconds",
            "When the last error happened (0: none).",
            registry=r,
        )
        self.last_error_info = Gauge(
            "ledger_follow_last_error",
            "The last error's message (value 1 on the current one).",
            ["kind", "message"],
            registry=r,
        )
        self.up.set(1)

    def _seal_age(self) -> float:
        last = self.last_seal._value.get()
        return -1.0 if last == 0 else time.time() - last

    def error(self, kind: str, message: str) -> None:
        """Count an error and make it the last one."""
        self.errors.labels(kind).inc()
        self.last_error.set(time.time())
        self.last_error_info.clear()
        self.last_error_info.labels(kind, message[:200]).set(1)

    def text(self) -> str:
        """Everything, in the Prometheus text format."""
        return generate_latest(self.registry).decode()

    def serve(self, port: int, address: str = "127.0.0.1") -> Any:
        """Serve ``/metrics`` over HTTP in a thread; the server."""
        return start_http_server(port, address, registry=self.registry)
