"""``python -m bench.live``: issue 28's figures for following the tables, measured.

One command, from the repository root (NATS with JetStream at ``--nats``, default
``nats://127.0.0.1:4222``; PostgreSQL optional)::

    python -m bench.live --out bench-live.json

On SQLite and, when a server answers, on PostgreSQL, with one seeded simulated property
(every game, ``--tables`` tables each, 5 % of rounds with an injected dealer error):

1. **batch ingest rate**: ``Ingestor.ingest`` of the whole feed into a fresh store (lines/s),
   and the CPU seconds it took;
2. **sustained follow rate**: the feed published to a fresh stream first, then one follower
   (in this process; receiving in a process of its own and judging in another, as the command
   does) reads it into a fresh store; lines stored / time from its first line read to its last
   batch committed (target: at least 0.8 × the batch rate), and lines / time to the end of its
   judging (the follower puts judging off while it is behind, so this is the rate findings keep
   up with); and the CPU seconds of the follower's process (storing; all of it, and from its
   first line read to its last commit, against the batch ingest's: ``storing_cpu_vs_batch``,
   target at most 1.05) and of its two children (receiving; judging and the Merkle tree);
   and, on Linux, how long the batch ingest's thread and the follower's storing thread were
   ready to run but waited for a core (``/proc/thread-self/schedstat``), and the ratio of the
   two rates with those waits taken out (``follow_vs_batch_unqueued``: what the follower would
   do against the batch ingest with a core free for each; the target stays the wall-clock ratio).
   Batch and follow run one after the other ``--runs`` times (default 3) and the medians are
   shown, each ratio the median of the runs' ratios: on a shared machine the wall-clock rates
   move with the load (printed before and after), the CPU seconds much less;
3. **latency at ``--rate`` events/s** (default 2,000): a follower started as the command
   (``ledger ingest --follow nats://…``, its own process) while this process publishes the
   feed in real time and listens on ``ledger.findings.>``; for each round with a finding, the
   time from its ``round_closed`` being handed to the connection to its first finding
   arriving (only this store's findings, by their ``Nats-Msg-Id``: another follower on the same
   server publishes on the same subjects); p50 and p99; target: p99 at most 1 s.

Both clocks are this process's, so the latency includes the broker, the follower's batch
window (200 ms) and the findings' way back. Nothing here is a test: ``tests/bench`` does not run
it; ``tests/live`` checks the behaviour.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nats

from bench.stores import DEFAULT_PG, Store, Stores, pg_reachable
from ledger.games import GAMES
from ledger.live.follower import Follower, FollowOptions, run_queue_seconds
from ledger.live.judging import finding_ids
from ledger.live.publish import publish_lines
from ledger.live.sources import NatsAddress, NatsSource
from ledger.services.ingest import Ingestor
from ledger.storage.store import open_ledger
from ledger.tools.simulate import simulate

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"p99_latency_s": 1.0, "follow_vs_batch": 0.8, "storing_cpu_vs_batch": 1.05}


class _Sink:
    """Where the in-process follower's findings and log go (counted, not kept)."""

    def __init__(self) -> None:
        self.lines = 0

    def write(self, text: str) -> int:
        self.lines += text.count("\n")
        return len(text)

    def flush(self) -> None:
        pass


def feed(tables: int, rounds: int, seed: int) -> list[bytes]:
    """The simulated property: every game, ``tables`` tables each, 5 % of rounds with an error."""
    sim = simulate(
        [GAMES[k] for k in ("RL", "FPC", "3CB", "SP9", "STUD", "MJ")],
        rounds=rounds,
        tables=tables,
        seed=seed,
        error_rate=0.05,
    )
    return [json.dumps(line, separators=(",", ":")).encode() for line in sim.lines]


def _cpu(who: int = resource.RUSAGE_SELF) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


@dataclass
class BatchRate:
    """A batch ingest's rate (lines/s), CPU seconds, wall seconds, and seconds its thread
    waited for a core."""

    rate: float
    cpu: float
    seconds: float
    queued: float


def batch_rate(store: Store, lines: list[bytes]) -> BatchRate:
    """One batch ingest into a fresh store: its rate, process CPU and waits for a core."""
    app = open_ledger(store.url)
    try:
        cpu, queued = _cpu(), run_queue_seconds()
        report = Ingestor(app).ingest(enumerate(lines, 1))
        cpu, queued = _cpu() - cpu, run_queue_seconds() - queued
    finally:
        app.close()
    return BatchRate(len(lines) / report.seconds, cpu, report.seconds, queued)


async def _drop_stream(url: str) -> None:
    address = NatsAddress.parse(url)
    nc = await nats.connect(address.server)
    try:
        await nc.jetstream().delete_stream(address.stream)
    finally:
        await nc.close()


@dataclass
class FollowRate:
    """A follower's rates (lines/s) and the CPU seconds it took: its own process (storing,
    the batches, the acknowledgements), all of it and from its first line read to its last
    commit, and its two children's (receiving; judging and the Merkle tree); the seconds from
    its first line read to its last commit, and of them those its storing thread waited for a
    core."""

    stored: float
    judged: float
    cpu: float
    storing_cpu: float
    children_cpu: float
    seconds: float
    queued: float


def follow_rate(store: Store, lines: list[bytes], nats_base: str) -> FollowRate:
    """Lines per second a follower stores from a stream that already holds the feed: to its
    last commit, and to the end of its judging (judging is put off while it is behind)."""
    url = f"{nats_base}/BENCH{uuid.uuid4().hex[:10]}"
    asyncio.run(publish_lines(url, lines))
    app = open_ledger(store.url)
    cpu, children = _cpu(), _cpu(resource.RUSAGE_CHILDREN)
    try:
        follower = Follower(
            app,
            NatsSource(url, "bench"),
            out=_Sink(),
            log=_Sink(),
            rejects=_Sink(),
            options=FollowOptions(idle_exit=1.0, judge_process=store.url),
        )
        asyncio.run(follower.run())
        cpu, children = _cpu() - cpu, _cpu(resource.RUSAGE_CHILDREN) - children
    finally:
        app.close()
        asyncio.run(_drop_stream(url))
    s = follower.summary
    assert s.stored == len(lines) and s.first_line_at and s.last_commit_at and s.last_judged_at
    return FollowRate(
        s.stored / (s.last_commit_at - s.first_line_at),
        s.stored / (s.last_judged_at - s.first_line_at),
        cpu,
        s.storing_cpu,
        children,
        s.last_commit_at - s.first_line_at,
        s.storing_queued,
    )


def store_finding_ids(url: str) -> set[str]:
    """The ``Nats-Msg-Id`` of every finding of the store at ``url``."""
    app = open_ledger(url, create=False)
    try:
        return finding_ids(app)
    finally:
        app.close()


@dataclass
class Latency:
    """Round closes sent and findings received, by (table, round)."""

    closed_at: dict[tuple[str, str], float] = field(default_factory=dict)
    found_at: dict[tuple[str, str], float] = field(default_factory=dict)
    heard: list[tuple[str, tuple[str, str], float]] = field(default_factory=list)
    """Every finding heard on ``ledger.findings.>``: message id, (table, round), when."""

    def sent(self, line: bytes) -> None:
        if b'"type":"round_closed"' in line:
            data = json.loads(line)
            self.closed_at[(data["table"], data["round"])] = time.monotonic()

    async def received(self, msg: Any) -> None:
        now = time.monotonic()
        data = json.loads(msg.data)
        self.heard.append(((msg.headers or {}).get("Nats-Msg-Id", ""), (data["table"], data["round"]), now))

    def keep(self, ours: set[str]) -> None:
        """Each of this store's rounds' first finding."""
        for msg_id, key, at in self.heard:
            if msg_id in ours:
                self.found_at.setdefault(key, at)

    def seconds(self) -> list[float]:
        return sorted(self.found_at[k] - self.closed_at[k] for k in self.found_at if k in self.closed_at)


def latency(store: Store, lines: list[bytes], nats_base: str, rate: float) -> dict[str, Any]:
    """p50 and p99 from a round's close being published to its first finding, at ``rate``."""
    url = f"{nats_base}/BENCH{uuid.uuid4().hex[:10]}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # Its own empty directory: ``python -m`` puts the working directory first on the path, and
    # a shared temporary directory may hold a stray module named like a library's.
    cwd = tempfile.mkdtemp(prefix="bench-live-")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cli.main",
            "ingest",
            "--db",
            store.url,
            "--follow",
            url,
            "--durable",
            "bench",
            "--idle-exit",
            "3s",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
    )
    assert proc.stderr is not None
    proc.stderr.readline()  # "following …": the consumer is there
    seen = Latency()

    async def run() -> float:
        nc = await nats.connect(nats_base)
        await nc.subscribe("ledger.findings.>", cb=seen.received)
        started = time.monotonic()
        await publish_lines(url, lines, rate=rate, on_sent=seen.sent)
        sent_seconds = time.monotonic() - started
        await asyncio.sleep(2.0)
        await nc.close()
        return sent_seconds

    try:
        sent_seconds = asyncio.run(run())
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
        asyncio.run(_drop_stream(url))
        shutil.rmtree(cwd, ignore_errors=True)
    seen.keep(store_finding_ids(store.url))
    found = seen.seconds()
    if len(found) < 2:
        said = proc.stderr.read().decode(errors="replace").strip()
        raise SystemExit(
            f"only {len(found)} rounds with findings came back: give more rounds"
            + (f"\nthe follower said:\n{said}" if said else "")
        )
    q = statistics.quantiles(found, n=100, method="inclusive")
    return {
        "rounds_with_findings": len(found),
        "p50_s": round(q[49], 3),
        "p99_s": round(q[98], 3),
        "max_s": round(found[-1], 3) if found else None,
        "achieved_rate": round(len(lines) / sent_seconds),
    }


def _unqueued(b: BatchRate, f: FollowRate) -> float:
    """The follow rate over the batch rate, each one's waits for a core taken out of its time."""
    return (b.seconds - b.queued) / (f.seconds - f.queued)


def _summary(runs: list[tuple[BatchRate, FollowRate]], lines: int) -> dict[str, Any]:
    """The medians of several runs (each a batch ingest and a follow, one after the other, so
    a ratio compares two measurements made under about the same load), and every run."""

    def median(values: list[float]) -> float:
        return statistics.median(values)

    return {
        "batch_lines_s": round(median([b.rate for b, _ in runs])),
        "follow_lines_s": round(median([f.stored for _, f in runs])),
        "follow_vs_batch": round(median([f.stored / b.rate for b, f in runs]), 2),
        "follow_judged_lines_s": round(median([f.judged for _, f in runs])),
        "judged_vs_batch": round(median([f.judged / b.rate for b, f in runs]), 2),
        "batch_cpu_s": round(median([b.cpu for b, _ in runs]), 2),
        "follow_cpu_s": round(median([f.cpu for _, f in runs]), 2),
        "follow_storing_cpu_s": round(median([f.storing_cpu for _, f in runs]), 2),
        "storing_cpu_vs_batch": round(median([f.storing_cpu / b.cpu for b, f in runs]), 2),
        "follow_children_cpu_s": round(median([f.children_cpu for _, f in runs]), 2),
        "batch_queued_s": round(median([b.queued for b, _ in runs]), 2),
        "follow_queued_s": round(median([f.queued for _, f in runs]), 2),
        "follow_vs_batch_unqueued": round(median([_unqueued(b, f) for b, f in runs]), 2),
        "runs": [
            {
                "batch_lines_s": round(b.rate),
                "batch_cpu_s": round(b.cpu, 2),
                "batch_s": round(b.seconds, 2),
                "batch_queued_s": round(b.queued, 2),
                "follow_lines_s": round(f.stored),
                "follow_vs_batch": round(f.stored / b.rate, 2),
                "follow_judged_lines_s": round(f.judged),
                "follow_cpu_s": round(f.cpu, 2),
                "follow_storing_cpu_s": round(f.storing_cpu, 2),
                "follow_children_cpu_s": round(f.children_cpu, 2),
                "follow_s": round(f.seconds, 2),
                "follow_queued_s": round(f.queued, 2),
                "follow_vs_batch_unqueued": round(_unqueued(b, f), 2),
            }
            for b, f in runs
        ],
    }


def main(argv: list[str] | None = None) -> int:
    """Measure, print a markdown table, write the JSON (``--out``)."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.live", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tables", type=int, default=5, help="tables per game (default 5)")
    parser.add_argument("--rounds", type=int, default=40, help="rounds per table (default 40)")
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--rate", type=float, default=2000.0, help="events/s for the latency")
    parser.add_argument("--nats", default=os.environ.get("LEDGER_TEST_NATS", "nats://127.0.0.1:4222"))
    parser.add_argument("--pg", default=DEFAULT_PG)
    parser.add_argument("--no-pg", action="store_true")
    parser.add_argument("--runs", type=int, default=3, help="batch and follow runs per store (default 3)")
    parser.add_argument("--out", default=None, help="write the figures here (JSON)")
    args = parser.parse_args(argv)
    pg = None if args.no_pg or pg_reachable(args.pg) else args.pg
    lines = feed(args.tables, args.rounds, args.seed)
    results: dict[str, Any] = {
        "lines": len(lines),
        "rate": args.rate,
        "runs": args.runs,
        "load_average_before": round(os.getloadavg()[0], 1),
        "stores": {},
    }
    with tempfile.TemporaryDirectory() as work:
        stores = Stores(work, pg)
        try:
            for kind in stores.kinds():
                runs = []
                for n in range(args.runs):
                    batch = batch_rate(stores.fresh(kind, f"batch{n}"), lines)
                    follow = follow_rate(stores.fresh(kind, f"follow{n}"), lines, args.nats)
                    runs.append((batch, follow))
                lat = latency(stores.fresh(kind, "latency"), lines, args.nats, args.rate)
                results["stores"][kind] = {**_summary(runs, len(lines)), **lat}
        finally:
            stores.drop_all()
    results["load_average_after"] = round(os.getloadavg()[0], 1)
    print(
        f"{len(lines)} lines; median of {args.runs} runs; latency at {args.rate:g} events/s; "
        f"load average {results['load_average_before']} before, {results['load_average_after']} after\n"
    )
    print(
        "| store | batch ingest (lines/s) | follow, stored (lines/s) | stored / batch (>= 0.8) | "
        "follow, judged (lines/s) | judged / batch | CPU s: batch / follower / its children | "
        "follower CPU first line to last commit / batch (<= 1.05) | "
        "s waiting for a core: batch / storing thread | stored / batch, those waits taken out | "
        "p50 (s) | p99 (s) (<= 1) | rounds with findings | rate reached |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for kind, r in results["stores"].items():
        print(
            f"| {kind} | {r['batch_lines_s']:,} | {r['follow_lines_s']:,} | "
            f"{r['follow_vs_batch']} | {r['follow_judged_lines_s']:,} | {r['judged_vs_batch']} | "
            f"{r['batch_cpu_s']} / {r['follow_cpu_s']} / {r['follow_children_cpu_s']} | "
            f"{r['storing_cpu_vs_batch']} ({r['follow_storing_cpu_s']} s) | "
            f"{r['batch_queued_s']} / {r['follow_queued_s']} | {r['follow_vs_batch_unqueued']} | "
            f"{r['p50_s']} | {r['p99_s']} | {r['rounds_with_findings']} | {r['achieved_rate']:,} |"
        )
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
