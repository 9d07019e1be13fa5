"""``python -m bench.resumable``: the targets of issue 15 (resumable verification), measured.

One command, from the repository root (``--small`` for a quick run; PostgreSQL optional)::

    python -m bench.resumable --out bench-resumable.json

It writes two seeded feeds with :func:`bench.feed.write_feed`: the *base* (``--base-events``,
about 400 k feed events) and the *new* events (``--new-events``, about 20 k, on tables of their
own, later in time). Then, on SQLite and, when a server answers, on PostgreSQL:

1. **big store**: the base ingested in ``--nights`` parts, ``seal`` after each (the nightly job),
   then the new events; ``verify --since last`` (from the newest stored checkpoint) against a
   full verify of a **fresh store holding only the new events** (target: at most 1.5 ×);
2. ``replay`` of the newest STUD and 3CB round and ``recall --last 10`` of their tables (rounds
   after the checkpoint) from the nearest checkpoint against ``from_start=True`` (the reading of
   the whole log before issue 15; target: at least 10 × faster), with the same findings;
3. ``verify --jobs 2`` by segments (``verify_parallel_segments``: two processes, each from a
   stored checkpoint) against one process (``verify_store``): at least 1.7 ×, identical
   findings, and every row read once (the segments' ``events`` add up to the one pass's);
4. peak RSS of ``verify --since last`` in a fresh process (``python -m bench.memory since``) on
   the big store and on a **mid store** (``--mid-events`` of the base, sealed, then the same new
   events): independent of the store's size (target: growth at most 1.1 ×).

Ratios are taken inside one run, side by side; client CPU (this process and its waited-for
children) is printed beside wall time, since the machine may be shared. Nothing here is a test:
``tests/bench`` only checks that the code path runs on tiny sizes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from bench.feed import FeedFile, write_feed
from bench.memory import measure
from bench.stores import DEFAULT_PG, Stores, pg_reachable
from ledger.storage.store import LedgerApp
from ledger.verify.engine import VerifyReport

T = TypeVar("T")

TARGETS = {
    "since_vs_fresh": 1.5,
    "replay_speedup": 10.0,
    "recall_speedup": 10.0,
    "segments2_vs_one": 1.7,
    "since_rss_growth": 1.1,
}
"""Speed-ups: at least; ``verify --since`` against a fresh store and RSS growth: at most."""
AT_MOST = {"since_vs_fresh", "since_rss_growth"}

DEFAULTS = {"base_events": 400_000, "new_events": 20_000, "mid_events": 40_000}
SMALL = {"base_events": 40_000, "new_events": 4_000, "mid_events": 8_000}
NEW_FEED_CHUNK = 100
"""The new events' chunk number in :func:`bench.feed.write_feed`: tables ``-c100``."""
ROUND_GAMES = ("STUD", "3CB")
"""Games whose rounds are judged in context (jackpot pool; carried bets and shoe)."""


def main(argv: list[str] | None = None) -> int:
    """Run the measurements; returns the process exit code (0 unless something failed to run)."""
    args = parse(argv)
    pg = None if args.no_pg else args.pg
    if pg is not None and (problem := pg_reachable(pg)) is not None:
        print(f"PostgreSQL not reachable at {pg} ({problem}): SQLite only", file=sys.stderr)
        pg = None
    workdir = tempfile.mkdtemp(prefix="ledger-resumable-", dir=args.workdir)
    stores = Stores(workdir, pg)
    try:
        results = run(stores, workdir, args)
    finally:
        stores.drop_all()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    with open(args.out, "w", encoding="utf-8") as out:
        json.dump(results, out, indent=1)
        out.write("\n")
    print(render(results))
    print(f"\nwrote {args.out}")
    return 0


def parser() -> argparse.ArgumentParser:
    """The command line of ``python -m bench.resumable``."""
    p = argparse.ArgumentParser(
        prog="python -m bench.resumable",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--small",
        action="store_true",
        help=f"quick run: base {SMALL['base_events']:,}, new {SMALL['new_events']:,}, "
        f"mid {SMALL['mid_events']:,} events (explicit sizes still win)",
    )
    p.add_argument(
        "--base-events",
        type=int,
        default=None,
        help=f"feed events before the checkpoint (default {DEFAULTS['base_events']:,})",
    )
    p.add_argument(
        "--new-events",
        type=int,
        default=None,
        help=f"feed events after it (default {DEFAULTS['new_events']:,})",
    )
    p.add_argument(
        "--mid-events",
        type=int,
        default=None,
        help=f"base events of the second store of the memory comparison (default {DEFAULTS['mid_events']:,})",
    )
    p.add_argument(
        "--nights", type=int, default=4, help="parts the base is ingested in, sealing after each (default 4)"
    )
    p.add_argument("--tables", type=int, default=10, help="tables per game in the base feed")
    p.add_argument(
        "--new-tables",
        type=int,
        default=2,
        help="tables per game in the new feed (few: recall --last 10 then reads "
        "rounds that are all after the checkpoint)",
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="timings of the fast side (since, replay/recall from a checkpoint) "
        "taken this many times, median",
    )
    p.add_argument("--pg", default=DEFAULT_PG, help="PostgreSQL URL (a schema per store)")
    p.add_argument("--no-pg", action="store_true", help="SQLite only")
    p.add_argument("--no-memory", action="store_true", help="skip the peak-RSS comparison")
    p.add_argument("--workdir", default=None, help="where feeds and SQLite files go")
    p.add_argument("--keep", action="store_true", help="keep the work folder")
    p.add_argument("--out", default="bench-resumable.json")
    return p


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """Parsed options, sizes filled in from ``--small`` or the defaults."""
    args = parser().parse_args(argv)
    sizes = SMALL if args.small else DEFAULTS
    for name, value in sizes.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if not 0 < args.mid_events < args.base_events:
        raise SystemExit("--mid-events must be between 0 and --base-events")
    return args


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _cpu() -> float:
    """CPU seconds of this process and of its children that were waited for."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


@dataclass(frozen=True)
class Timed:
    """Wall and client CPU seconds of one call."""

    wall: float
    cpu: float


def timed(fn: Callable[[], T]) -> tuple[Timed, T]:
    """Run ``fn`` once: its wall and CPU seconds, and its value."""
    cpu, started = _cpu(), time.perf_counter()
    value = fn()
    return Timed(time.perf_counter() - started, _cpu() - cpu), value


def timed_median(fn: Callable[[], T], repeat: int) -> tuple[Timed, T]:
    """``fn`` run ``repeat`` times: the median wall and CPU seconds, and the last value."""
    runs = [timed(fn) for _ in range(max(1, repeat))]
    return (
        Timed(statistics.median(t.wall for t, _ in runs), statistics.median(t.cpu for t, _ in runs)),
        runs[-1][1],
    )


# --- what is measured ------------------------------------------------------------------------


def verify_since(
    app: LedgerApp, public_key: Any = None, steps: dict[str, float] | None = None
) -> VerifyReport:
    """``ledger verify --since last [--public-key]``: check the newest stored checkpoint (its
    signature, that the store holds its head, its snapshot's digest), then verify only the rows
    after it. Raises ``RuntimeError`` if there is no checkpoint or it does not match.

    ``steps`` receives the CPU seconds of each step: ``checkpoint`` (reading it, its signature,
    its link at its row and the count of rows before it, ``ledger.proof.checkpoints.resume_findings``,
    as the CLI does), ``snapshot`` (loading and checking it) and ``verify`` (the rows after
    it)."""
    from ledger.proof.checkpoints import latest, load_snapshot, resume_findings
    from ledger.verify.engine import verify_store

    clock = [time.process_time()]

    def step(name: str) -> None:
        now = time.process_time()
        if steps is not None:
            steps[name] = steps.get(name, 0.0) + now - clock[0]
        clock[0] = now

    stored = latest(app)
    if stored is None:
        raise RuntimeError("no stored checkpoint")
    stored.checkpoint.check_signature(public_key)
    problems = resume_findings(app, stored.checkpoint)
    if problems:
        raise RuntimeError(f"checkpoint {stored.number}: {problems[0].message}")
    step("checkpoint")
    found = load_snapshot(app, stored.checkpoint)
    if found is None:
        raise RuntimeError(f"no snapshot of checkpoint {stored.number}")
    step("snapshot")
    report = verify_store(app, start=found[0])
    step("verify")
    return report


def ingest(app: LedgerApp, path: str) -> int:
    """Ingest one feed file as ``ledger ingest`` does; the rows it stored."""
    from ledger.services.ingest import Ingestor, bounded_lines

    with open(path, "rb") as lines:
        report = Ingestor(app).ingest(bounded_lines(lines))
    if report.rejected:
        raise RuntimeError(f"{path}: {len(report.rejected)} rejected line(s), first {report.rejected[:1]}")
    return report.stored


def split(path: str, cuts: list[int], prefix: str) -> list[str]:
    """Write ``path``'s lines into consecutive files ending after each line count of ``cuts``
    (the last file takes the rest); their paths."""
    paths: list[str] = []
    with open(path, "rb") as feed:
        bounds = [*cuts, None]
        out = None
        n = 0
        for index, bound in enumerate(bounds):
            name = f"{prefix}-{index + 1}.jsonl"
            paths.append(name)
            out = open(name, "wb")  # noqa: SIM115 - closed below, one file at a time
            try:
                for line in feed:
                    out.write(line)
                    n += 1
                    if bound is not None and n >= bound:
                        break
            finally:
                out.close()
    return paths


def prefix(path: str, lines: int, name: str) -> str:
    """The first ``lines`` lines of ``path``, written to ``name``."""
    with open(path, "rb") as feed, open(name, "wb") as out:
        for n, line in enumerate(feed):
            if n >= lines:
                break
            out.write(line)
    return name


def sized_feed(
    path: str, events: int, *, tables: int, seed: int, games: list[str] | None, first_chunk: int = 0
) -> FeedFile:
    """A feed of about ``events`` lines (at least): rounds estimated from a small sample."""
    per_round = _lines_per_round(tables, seed, games)
    rounds = max(1, round(events / per_round))
    return write_feed(path, rounds, tables=tables, seed=seed, games=games, first_chunk=first_chunk)


_PER_ROUND: dict[tuple[int, int, str], float] = {}


def _lines_per_round(tables: int, seed: int, games: list[str] | None) -> float:
    key = (tables, seed, ",".join(games or []))
    if key not in _PER_ROUND:
        sample = tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False)  # noqa: SIM115
        sample.close()
        try:
            feed = write_feed(sample.name, 12 * tables * 6, tables=tables, seed=seed, games=games)
        finally:
            os.remove(sample.name)
        _PER_ROUND[key] = feed.lines / feed.rounds
    return _PER_ROUND[key]


def newest_rounds(path: str, games: tuple[str, ...] = ROUND_GAMES) -> dict[str, tuple[str, str]]:
    """For each of ``games``: a table of the feed at ``path`` and that table's newest round."""
    found: dict[str, tuple[str, str]] = {}
    with open(path, "rb") as feed:
        for raw in feed:
            line = json.loads(raw)
            game = line.get("game")
            if game in games and (game not in found or found[game][0] == line["table"]):
                found[game] = (line["table"], line["round"])
    return found


def _same_replay(a: Any, b: Any) -> bool:
    """Two ``RoundReplay`` JSON objects equal but for where their pass started."""
    return {**a.to_json(), "judged_from": None} == {**b.to_json(), "judged_from": None}


def _same_recall(a: Any, b: Any) -> bool:
    return (
        a is not None
        and b is not None
        and len(a.rounds) == len(b.rounds)
        and all(_same_replay(x, y) for x, y in zip(a.rounds, b.rounds, strict=True))
    )


def _findings(report: VerifyReport) -> Any:
    body = report.to_json()
    return {k: v for k, v in body.items() if k not in ("seconds",)}


def measure_store_kind(
    stores: Stores,
    kind: str,
    feeds: dict[str, FeedFile],
    parts: list[str],
    mid_path: str,
    args: argparse.Namespace,
) -> dict[str, Any]:
    """Every measurement on one store kind (see the module docstring)."""
    from ledger.proof.checkpoints import listing
    from ledger.proof.checkpoints import seal as seal_store
    from ledger.proof.seal import generate_key, public_pem
    from ledger.report.recall import recall
    from ledger.services.replay import replay_round
    from ledger.services.segments import plan, verify_parallel_segments, verify_segment
    from ledger.storage.store import open_ledger
    from ledger.verify.engine import verify_store

    fig: dict[str, Any] = {}
    key = generate_key()
    # Readers use a stored checkpoint only once the store's sealing public key checks it.
    public = os.path.join(stores.workdir, f"seal-{kind}.pub")
    with open(public, "wb") as stream:
        stream.write(public_pem(key.public_key()))
    os.environ["LEDGER_SEAL_PUBLIC_KEY"] = public
    new = feeds["new"]

    # 1. The big store: nightly ingest + seal of the base, then the new events.
    big = stores.fresh(kind, "big")
    app = open_ledger(big.url)
    try:
        nights = []
        for path in parts:
            t_ingest, stored = timed(lambda path=path: ingest(app, path))  # type: ignore[misc]
            t_seal, sealed = timed(lambda: seal_store(app, key))
            nights.append(
                {
                    "stored": stored,
                    "ingest_s": t_ingest.wall,
                    "seal_s": t_seal.wall,
                    "seal_cpu_s": t_seal.cpu,
                    "seal_events_read": sealed.events_read,
                    "resumed_from": sealed.resumed_from,
                }
            )
            _say(
                f"{kind}: night {len(nights)}: {stored:,} rows in {t_ingest.wall:.1f}s, seal "
                f"{t_seal.wall:.1f}s ({sealed.events_read:,} rows read)"
            )
        fig["nights"] = nights
        t_new, stored_new = timed(lambda: ingest(app, new.path))
        fig["new_rows"] = stored_new
        fig["store_rows"] = app.recorder.max_notification_id() or 0
        fig["checkpoints"] = [s.position for s in listing(app)]
        _say(f"{kind}: big store {fig['store_rows']:,} rows ({stored_new:,} new in {t_new.wall:.1f}s)")

        steps: dict[str, float] = {}
        t_since, since = timed_median(lambda: verify_since(app, key.public_key(), steps), args.repeat)
        if since.exit_code != 0:
            raise RuntimeError(f"verify --since found {since.findings[:1]}")
        fig.update(
            since_s=t_since.wall,
            since_cpu_s=t_since.cpu,
            since_rows=since.events,
            since_steps_cpu_s={k: v / max(1, args.repeat) for k, v in steps.items()},
        )

        # 2. Replay and recall: from the nearest checkpoint against from the start.
        picks = newest_rounds(new.path)
        fig["rounds"] = {}
        for game, (table, round_) in sorted(picks.items()):
            one: dict[str, Any] = {"table": table, "round": round_}
            t_new_r, fast = timed_median(
                lambda t=table, r=round_: replay_round(  # type: ignore[misc]
                    app, t, r
                ),
                args.repeat,
            )
            t_old_r, slow = timed(
                lambda t=table, r=round_: replay_round(  # type: ignore[misc]
                    app, t, r, from_start=True
                )
            )
            t_new_c, fast_c = timed_median(
                lambda t=table: recall(app, t, 10),  # type: ignore[misc]
                args.repeat,
            )
            t_old_c, slow_c = timed(
                lambda t=table: recall(
                    app,
                    t,
                    10,  # type: ignore[misc]
                    from_start=True,
                )
            )
            one.update(
                replay_s=t_new_r.wall,
                replay_cpu_s=t_new_r.cpu,
                replay_from_start_s=t_old_r.wall,
                replay_from_start_cpu_s=t_old_r.cpu,
                replay_speedup=t_old_r.wall / t_new_r.wall,
                replay_cpu_speedup=t_old_r.cpu / max(t_new_r.cpu, 1e-9),
                replay_judged_from=None if fast is None else fast.judged_from,
                replay_same=fast is not None and slow is not None and _same_replay(fast, slow),
                recall_s=t_new_c.wall,
                recall_cpu_s=t_new_c.cpu,
                recall_from_start_s=t_old_c.wall,
                recall_from_start_cpu_s=t_old_c.cpu,
                recall_speedup=t_old_c.wall / t_new_c.wall,
                recall_cpu_speedup=t_old_c.cpu / max(t_new_c.cpu, 1e-9),
                recall_same=_same_recall(fast_c, slow_c),
            )
            fig["rounds"][game] = one
            _say(
                f"{kind}: {game} replay {one['replay_speedup']:.1f}x, recall "
                f"{one['recall_speedup']:.1f}x faster from the checkpoint"
            )

        # 3. Full verify: one process against two by segments.
        t_one, single = timed(lambda: verify_store(app))
        t_two, merged = timed(lambda: verify_parallel_segments(big.url, jobs=2))
        segments = plan(app, 2) or []
        seg_cpu = []
        seg_rows = []
        for a, b in segments:
            t_seg, part = timed(lambda a=a, b=b: verify_segment(app, a, b))  # type: ignore[misc]
            seg_cpu.append(t_seg.cpu)
            seg_rows.append(part.report.events)
        fig.update(
            full_s=t_one.wall,
            full_cpu_s=t_one.cpu,
            full_rows=single.events,
            full_exit=single.exit_code,
            jobs2_s=t_two.wall,
            jobs2_cpu_s=t_two.cpu,
            jobs2_rows=merged.events,
            segments=[[a, b] for a, b in segments],
            segment_rows=seg_rows,
            segment_cpu_s=seg_cpu,
            segments2_speedup=t_one.wall / t_two.wall,
            segments2_cpu_speedup=t_one.cpu / max(max(seg_cpu, default=0.0), 1e-9),
            segments2_identical=_findings(single) == _findings(merged),
            segments2_rows_once=(merged.events == single.events == sum(seg_rows) and len(segments) == 2),
            since_vs_full_rows=since.events / max(single.events, 1),
        )
        _say(
            f"{kind}: full verify {t_one.wall:.1f}s, --jobs 2 by segments {t_two.wall:.1f}s "
            f"({fig['segments2_speedup']:.2f}x), identical {fig['segments2_identical']}, "
            f"rows {merged.events:,} = {' + '.join(f'{r:,}' for r in seg_rows)}"
        )
    finally:
        app.close()

    # 1b. A fresh store holding only the new events: its full verify.
    fresh = stores.fresh(kind, "fresh")
    app = open_ledger(fresh.url)
    try:
        ingest(app, new.path)
        t_fresh, alone = timed_median(lambda: verify_store(app), args.repeat)
        fig.update(
            fresh_s=t_fresh.wall,
            fresh_cpu_s=t_fresh.cpu,
            fresh_rows=alone.events,
            since_vs_fresh=fig["since_s"] / t_fresh.wall,
            cpu_since_vs_fresh=fig["since_cpu_s"] / max(t_fresh.cpu, 1e-9),
        )
        _say(
            f"{kind}: verify --since {fig['since_s']:.2f}s ({fig['since_rows']:,} rows) vs "
            f"fresh store {t_fresh.wall:.2f}s ({alone.events:,} rows): "
            f"{fig['since_vs_fresh']:.2f}x"
        )
    finally:
        app.close()
    fresh.drop()

    # 4. Peak RSS of verify --since, in a fresh process, on two store sizes.
    if not args.no_memory:
        mid = stores.fresh(kind, "mid")
        app = open_ledger(mid.url)
        try:
            ingest(app, mid_path)
            seal_store(app, key)
            ingest(app, new.path)
            mid_rows = app.recorder.max_notification_id() or 0
        finally:
            app.close()
        small_rss = measure("since", mid.url)
        large_rss = measure("since", big.url)
        fig["memory"] = {
            "mid_rows": mid_rows,
            "mid": small_rss,
            "big": large_rss,
            "growth": large_rss["peak_rss_mb"] / small_rss["peak_rss_mb"],
        }
        _say(
            f"{kind}: verify --since peak RSS {small_rss['peak_rss_mb']} MB ({mid_rows:,} "
            f"rows) vs {large_rss['peak_rss_mb']} MB ({fig['store_rows']:,} rows)"
        )
        mid.drop()
    big.drop()
    return fig


def run(stores: Stores, workdir: str, args: argparse.Namespace) -> dict[str, Any]:
    """Write the feeds, measure on every store kind; the results with their verdict."""
    started = time.perf_counter()
    results: dict[str, Any] = {
        "targets": TARGETS,
        "args": {k: v for k, v in vars(args).items()},
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    games = getattr(args, "games", None)
    t_feed, base = timed(
        lambda: sized_feed(
            os.path.join(workdir, "base.jsonl"),
            args.base_events,
            tables=args.tables,
            seed=args.seed,
            games=games,
        )
    )
    new = sized_feed(
        os.path.join(workdir, "new.jsonl"),
        args.new_events,
        tables=args.new_tables,
        seed=args.seed,
        games=games,
        first_chunk=NEW_FEED_CHUNK,
    )
    nights = max(1, args.nights)
    cuts = [base.lines * n // nights for n in range(1, nights)]
    parts = split(base.path, cuts, os.path.join(workdir, "night"))
    mid = prefix(base.path, args.mid_events, os.path.join(workdir, "mid.jsonl"))
    results["feeds"] = {
        "base": {"lines": base.lines, "rounds": base.rounds, "games": list(base.games)},
        "new": {"lines": new.lines, "rounds": new.rounds},
        "mid_lines": args.mid_events,
        "nights": nights,
        "generate_s": round(time.perf_counter() - started, 1),
        "generate_base_s": round(t_feed.wall, 1),
    }
    _say(
        f"feeds: base {base.lines:,} lines ({base.rounds:,} rounds), new {new.lines:,} lines "
        f"({new.rounds:,} rounds), written in {results['feeds']['generate_s']}s"
    )
    results["stores"] = {}
    for kind in stores.kinds():
        results["stores"][kind] = measure_store_kind(
            stores, kind, {"base": base, "new": new}, parts, mid, args
        )
        stores.drop_all()
    results["elapsed_s"] = round(time.perf_counter() - started, 1)
    results["verdict"] = verdict(results)
    return results


def _check(value: float, target: str, **extra: Any) -> dict[str, Any]:
    bound = TARGETS[target]
    at_most = target in AT_MOST
    met = value <= bound if at_most else value >= bound
    for flag in extra.values():
        if isinstance(flag, bool):
            met = met and flag
    return {"value": value, "target": bound, "at_most": at_most, "met": met, **extra}


def verdict(results: dict[str, Any]) -> dict[str, Any]:
    """Each target of issue 15, per store kind: its figure and whether it is met."""
    out: dict[str, Any] = {}
    for kind, fig in results["stores"].items():
        out[f"{kind} verify --since / full verify of the new events alone"] = _check(
            fig["since_vs_fresh"], "since_vs_fresh", cpu=fig["cpu_since_vs_fresh"]
        )
        for game, one in fig["rounds"].items():
            out[f"{kind} replay {game} round, from-start / from checkpoint"] = _check(
                one["replay_speedup"],
                "replay_speedup",
                cpu=one["replay_cpu_speedup"],
                same=one["replay_same"],
            )
            out[f"{kind} recall --last 10 {game} table, from-start / from checkpoint"] = _check(
                one["recall_speedup"],
                "recall_speedup",
                cpu=one["recall_cpu_speedup"],
                same=one["recall_same"],
            )
        out[f"{kind} full verify, one process / --jobs 2 by segments"] = _check(
            fig["segments2_speedup"],
            "segments2_vs_one",
            cpu=fig["segments2_cpu_speedup"],
            identical=fig["segments2_identical"],
            rows_once=fig["segments2_rows_once"],
        )
        if "memory" in fig:
            out[f"{kind} verify --since peak RSS, big / mid store"] = _check(
                fig["memory"]["growth"], "since_rss_growth"
            )
    return out


def render(results: dict[str, Any]) -> str:
    """The figures and the verdict as markdown."""
    feeds = results["feeds"]
    lines = [
        f"issue 15: base {feeds['base']['lines']:,} feed events in {feeds['nights']} "
        f"nights (sealed after each), {feeds['new']['lines']:,} new; feeds written in "
        f"{feeds['generate_s']}s, whole run {results['elapsed_s']}s",
        "",
        "| measure | " + " | ".join(results["stores"]) + " |",
        "|---|" + "---:|" * len(results["stores"]),
    ]
    rows: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
        ("stored rows (big store)", lambda f: f"{f['store_rows']:,}"),
        (
            "seal: first (full) / last incremental, s",
            lambda f: f"{f['nights'][0]['seal_s']:.1f} / {f['nights'][-1]['seal_s']:.1f}",
        ),
        (
            "verify --since last: s (CPU s), rows read",
            lambda f: f"{f['since_s']:.2f} ({f['since_cpu_s']:.2f}), {f['since_rows']:,}",
        ),
        (
            "--since CPU s: checkpoint check / snapshot / verify",
            lambda f: " / ".join(
                f"{f['since_steps_cpu_s'][k]:.2f}" for k in ("checkpoint", "snapshot", "verify")
            ),
        ),
        (
            "full verify, store of the new events only: s (CPU s), rows",
            lambda f: f"{f['fresh_s']:.2f} ({f['fresh_cpu_s']:.2f}), {f['fresh_rows']:,}",
        ),
        ("full verify, one process: s (CPU s)", lambda f: f"{f['full_s']:.1f} ({f['full_cpu_s']:.1f})"),
        (
            "--jobs 2 by segments: s (CPU s all processes)",
            lambda f: f"{f['jobs2_s']:.1f} ({f['jobs2_cpu_s']:.1f})",
        ),
        (
            "segment rows (sum = one pass)",
            lambda f: " + ".join(f"{r:,}" for r in f["segment_rows"]) + f" = {f['full_rows']:,}",
        ),
    ]
    for game in ROUND_GAMES:
        rows.append(
            (
                f"replay {game}: checkpoint / from start, s",
                _pair_cell(game, "replay_s", "replay_from_start_s"),
            )
        )
        rows.append(
            (
                f"recall --last 10 {game}: checkpoint / from start, s",
                _pair_cell(game, "recall_s", "recall_from_start_s"),
            )
        )
    rows.append(
        (
            "verify --since peak RSS MB: mid / big store",
            lambda f: (
                f"{f['memory']['mid']['peak_rss_mb']} ({f['memory']['mid_rows']:,} rows) / "
                f"{f['memory']['big']['peak_rss_mb']} ({f['store_rows']:,} rows)"
                if "memory" in f
                else "-"
            ),
        )
    )
    for label, cell in rows:
        lines.append(f"| {label} | " + " | ".join(cell(f) for f in results["stores"].values()) + " |")
    lines += ["", render_verdict(results["verdict"])]
    return "\n".join(lines)


def _pair_cell(game: str, first: str, second: str) -> Callable[[dict[str, Any]], str]:
    def cell(fig: dict[str, Any]) -> str:
        one = fig["rounds"].get(game)
        return "-" if one is None else f"{one[first]:.2f} / {one[second]:.2f}"

    return cell


def render_verdict(verdict_: dict[str, Any]) -> str:
    """The targets as a markdown table (wall figure, client-CPU figure, met)."""
    lines = ["| target | value (wall) | client CPU | met |", "|---|---:|---:|---|"]
    for name, v in verdict_.items():
        sign = "≤" if v["at_most"] else "≥"
        cpu = f"{v['cpu']:.2f}" if "cpu" in v else "-"
        notes = [k for k in ("same", "identical", "rows_once") if v.get(k) is False]
        met = "yes" if v["met"] else "NO" + (f" ({', '.join(notes)} failed)" if notes else "")
        lines.append(f"| {name} {sign} {v['target']} | {v['value']:.2f} | {cpu} | {met} |")
    return "\n".join(lines)


def for_harness(stores: Stores, workdir: str, argv: list[str]) -> dict[str, Any]:
    """Run from ``python -m bench`` on its stores (``argv``: this module's options)."""
    return run(stores, workdir, parse(argv))


if __name__ == "__main__":
    raise SystemExit(main())
