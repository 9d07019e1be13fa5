"""``python -m bench``: ledger ingest and verify against the bare framework and the raw floor.

One command, from the repository root::

    python -m bench --rounds 20000 --out bench-results.json

It writes a seeded multi-game feed (every game with a simulator), then on SQLite and, when a
server answers, on PostgreSQL measures, in the same process and run:

1. the raw floor (driver-only write in one transaction, plain cursor read);
2. the independent bare framework baseline (:mod:`bench.bare`: ``json.loads`` + plain
   aggregates + ``Application.save`` of 100 closed rounds at a time; log read with decoding);
3. ``ledger ingest`` (events/s) and 4. ``ledger verify`` (rounds/s, events/s);

   2-4 each run in a child process of their own (``python -m bench.bare`` and
   ``python -m bench.run``), timed from once the store is open to the end of the work, so
   start-up (interpreter, imports, connection) is left out of both sides in the same way;
   wall and process CPU, bare and ledger alternating which goes first, medians of the runs;
5. peak RSS of ingest and verify, each in a fresh process, at the ``--memory`` sizes (SQLite);
6. ``verify --jobs 2`` against ``--jobs 1``, with a check that the findings are identical;
7. the targets of issue 15, resumable verification (:mod:`bench.resumable`: ``verify --since``,
   replay and recall from a checkpoint, ``--jobs 2`` by segments, peak RSS of ``--since``), at
   the ``--resumable`` sizes;
8. where valgrind is installed, the two ratios of issue 17 once more in **instructions** per
   feed event (:mod:`bench.instructions`, on a feed of ``--instructions`` rounds): a count
   that the machine's load does not move; and the **data-cache misses** per event (L1 data,
   L2; cachegrind) of ingest beside the bare append and of verify beside the bare read, with
   bare ÷ ledger.

Then it prints a markdown table with the ratios and targets and writes everything as JSON.
Timings are noisy on a shared machine; the ratios compare figures taken side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from bench.breakdown import ingest_stages, verify_stages
from bench.feed import FeedFile, write_feed
from bench.floor import feed_rows, raw_read, raw_write
from bench.memory import measure
from bench.stores import DEFAULT_PG, Store, Stores, pg_reachable

TARGETS = {
    "ingest_vs_bare_append": 1.2,
    "verify_vs_bare_read_decode": 1.0,
    "ingest_cpu_us_per_event_sqlite": 20.0,
    "verify_cpu_us_per_event_sqlite": 10.0,
    "verify_rss_growth": 1.5,
    "jobs2_vs_jobs1": 1.6,
}
"""Ratios: at least; CPU µs per feed event and peak-RSS growth: at most."""
AT_MOST = {"ingest_cpu_us_per_event_sqlite", "verify_cpu_us_per_event_sqlite", "verify_rss_growth"}


def main(argv: list[str] | None = None) -> int:
    """Run the harness; returns the process exit code (0 unless something failed to run)."""
    args = _parser().parse_args(argv)
    workdir = tempfile.mkdtemp(prefix="ledger-bench-", dir=args.workdir)
    pg = None if args.no_pg else args.pg
    if pg is not None and (problem := pg_reachable(pg)) is not None:
        print(f"PostgreSQL not reachable at {pg} ({problem}): SQLite only", file=sys.stderr)
        pg = None
    stores = Stores(workdir, pg)
    results: dict[str, Any] = {"info": _info(args), "targets": TARGETS}
    try:
        feed = write_feed(
            os.path.join(workdir, "feed.jsonl"),
            args.rounds,
            tables=args.tables,
            seed=args.seed,
            games=args.games,
        )
        results["feed"] = {
            "rounds": feed.rounds,
            "lines": feed.lines,
            "bytes": feed.bytes,
            "games": list(feed.games),
            "tables_per_game": feed.tables,
            "seed": args.seed,
        }
        _say(f"feed: {feed.rounds} rounds, {feed.lines} lines, games {' '.join(feed.games)}")
        runs = [_one_run(stores, feed, args, ledger_first=bool(n % 2)) for n in range(args.runs)]
        results["runs"] = runs
        results["median"] = _medians(runs)
        if args.memory:
            results["memory"] = _memory(stores, workdir, args)
            stores.drop_all()
        results["verdict"] = _verdict(results)
        if args.instructions != "off":
            results["instructions"] = _instructions(args)
            results["verdict"].update(_instructions_verdict(results["instructions"]))
        if args.resumable != "off":
            from bench import resumable

            results["resumable"] = resumable.for_harness(stores, workdir, _resumable_argv(args))
            results["verdict"].update(
                {f"issue 15: {name}": v for name, v in results["resumable"]["verdict"].items()}
            )
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


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rounds", type=int, default=5_000, help="rounds in the timed feed")
    p.add_argument("--tables", type=int, default=10, help="tables per game")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--games",
        type=lambda v: [g for g in v.split(",") if g],
        default=None,
        help="comma-separated game keys (default: every game with a simulator)",
    )
    p.add_argument(
        "--runs",
        type=int,
        default=3,
        help="timed runs (figures are medians; bare and ledger alternate which goes first)",
    )
    p.add_argument(
        "--pg",
        default=DEFAULT_PG,
        help="PostgreSQL URL (a schema per store is "
        "created and dropped); default LEDGER_TEST_PG or the local test database",
    )
    p.add_argument("--no-pg", action="store_true", help="SQLite only")
    p.add_argument("--jobs", type=int, default=2, help="compare verify --jobs N with --jobs 1 (0 skips)")
    p.add_argument(
        "--memory",
        type=lambda v: [int(x) for x in v.split(",") if x],
        default=[2_000, 20_000],
        help="round counts for the peak-RSS runs, comma-separated ('' skips); the "
        "growth target compares the largest with the smallest (the issue's 1 M vs "
        "100 k: pass 100000,1000000, about an hour here)",
    )
    p.add_argument(
        "--resumable",
        default="default",
        metavar="SIZES",
        help="issue 15's targets (bench.resumable): 'default' (400 k events + 20 k "
        "new; several minutes per store), 'small' (its --small), 'off', or "
        "BASE,NEW,MID feed events",
    )
    p.add_argument(
        "--instructions",
        default="300",
        metavar="ROUNDS",
        type=_rounds_or_off,
        help="count instructions and data-cache misses per event with valgrind on a feed "
        "of ROUNDS rounds (bench.instructions --cache; about half an hour on two busy cores "
        "at 300), or 'off'; "
        "skipped with a note where valgrind is not installed",
    )
    p.add_argument("--workdir", default=None, help="where feeds and SQLite files go")
    p.add_argument("--keep", action="store_true", help="keep the work folder")
    p.add_argument("--out", default="bench-results.json")
    return p


def _rounds_or_off(value: str) -> str:
    if value != "off" and not (value.isdigit() and int(value) > 0):
        raise argparse.ArgumentTypeError(f"a number of rounds or off, not {value!r}")
    return value


def _resumable_argv(args: argparse.Namespace) -> list[str]:
    """``bench.resumable``'s options for ``--resumable``."""
    argv = ["--seed", str(args.seed)]
    if args.resumable == "small":
        return [*argv, "--small"]
    if args.resumable != "default":
        try:
            base, new, mid = (int(v) for v in args.resumable.split(","))
        except ValueError:
            raise SystemExit(
                f"--resumable takes default, small, off or BASE,NEW,MID, not {args.resumable!r}"
            ) from None
        argv += [
            "--base-events",
            str(base),
            "--new-events",
            str(new),
            "--mid-events",
            str(mid),
            "--tables",
            "1",
            "--new-tables",
            "1",
        ]
    return argv


def _info(args: argparse.Namespace) -> dict[str, Any]:
    from importlib.metadata import version

    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "sqlite": sqlite3.sqlite_version,
        "eventsourcing": version("eventsourcing"),
        "psycopg": version("psycopg"),
        "pydantic": version("pydantic"),
        "args": vars(args),
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Wall seconds of ``fn()`` and its value; its process CPU seconds go to ``_LAST_CPU``."""
    cpu = time.process_time()
    started = time.perf_counter()
    value = fn()
    _LAST_CPU[0] = time.process_time() - cpu
    return time.perf_counter() - started, value


_LAST_CPU = [0.0]


def _one_run(
    stores: Stores, feed: FeedFile, args: argparse.Namespace, *, ledger_first: bool = False
) -> dict[str, Any]:
    """One run on every store; ``ledger_first`` swaps the order of the A/B pair."""
    run: dict[str, Any] = {}
    rows = feed_rows(feed.path)
    for kind in stores.kinds():
        fig: dict[str, Any] = {}
        raw = stores.fresh(kind, "raw")
        seconds = raw_write(raw, rows)
        fig["raw_write_rows_s"] = len(rows) / seconds
        seconds, count = raw_read(raw)
        fig["raw_read_rows_s"] = count / seconds
        raw.drop()
        _say(f"{kind}: raw floor done")

        if ledger_first:
            fig.update(_ledger(stores.fresh(kind, "ledger"), feed, args.jobs))
        fig.update(_bare(stores.fresh(kind, "bare"), feed))
        if not ledger_first:
            fig.update(_ledger(stores.fresh(kind, "ledger"), feed, args.jobs))
        per_event = 1e6 / feed.lines
        for what in ("bare_append", "bare_read_decode", "ingest", "verify"):
            fig[f"{what}_cpu_us_event"] = fig[f"{what}_cpu_s"] * per_event
        fig["ratio_ingest_vs_bare_append"] = fig["ingest_events_s"] / fig["bare_append_events_s"]
        fig["ratio_verify_vs_bare_read_decode"] = fig["verify_events_s"] / fig["bare_read_decode_events_s"]
        # The same ratios in client CPU seconds: less noisy on a shared machine, but blind to
        # the PostgreSQL server's work and to fsync waits.
        fig["cpu_ratio_ingest_vs_bare_append"] = fig["bare_append_cpu_s"] / fig["ingest_cpu_s"]
        fig["cpu_ratio_verify_vs_bare_read_decode"] = fig["bare_read_decode_cpu_s"] / fig["verify_cpu_s"]
        run[kind] = fig
    return run


def _child(argv: list[str]) -> dict[str, Any]:
    """Run ``python -m <argv>`` from the repository root; the JSON it prints last."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run(
        [sys.executable, "-m", *argv], cwd=root, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"python -m {' '.join(argv[:2])} failed: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _bare(store: Store, feed: FeedFile) -> dict[str, Any]:
    """The bare framework's append and read + decode of the same feed, on a fresh store, each
    in a process of its own (``python -m bench.bare``)."""
    fig: dict[str, Any] = {}
    done = _child(["bench.bare", "ingest", feed.path, store.url, "--json"])
    fig["bare_append_events_s"] = done["events"] / done["seconds"]
    fig["bare_append_cpu_s"] = done["cpu_seconds"]
    done = _child(["bench.bare", "read", store.url, "--json"])
    fig["bare_read_decode_events_s"] = done["events"] / done["seconds"]
    fig["bare_read_decode_cpu_s"] = done["cpu_seconds"]
    store.drop()
    _say(f"{store.kind}: bare framework done")
    return fig


def child(argv: list[str]) -> dict[str, Any]:
    """``ingest URL FEED`` or ``verify URL``: what ``python -m bench.run`` does in the harness's
    child process, timed from once the store is open (wall and process CPU seconds). The game
    packages (imported lazily, by a command's first line of each game) are imported before
    the clock starts: start-up, like the bare side's imports."""
    from bench.resumable import timed
    from ledger.games import GAMES
    from ledger.services.ingest import Ingestor, bounded_lines
    from ledger.storage.store import open_ledger

    for key in GAMES:  # start-up: the game packages a command imports at its first line of each
        GAMES[key]
    app = open_ledger(argv[1])
    try:
        if argv[0] == "ingest":
            with open(argv[2], "rb") as lines:
                took, report = timed(lambda: Ingestor(app).ingest(bounded_lines(lines)))
            return {
                "seconds": took.wall,
                "cpu_seconds": took.cpu,
                "stored": report.stored,
                "rejected": [str(r) for r in report.rejected[:1]],
            }
        from ledger.verify.engine import verify_store

        took, verified = timed(lambda: verify_store(app))
        return {
            "seconds": took.wall,
            "cpu_seconds": took.cpu,
            "exit_code": verified.exit_code,
            "findings": [str(f) for f in verified.findings[:1]],
            "rounds_checked": verified.rounds_checked,
            "events": verified.events,
        }
    finally:
        app.close()


def _ledger(store: Store, feed: FeedFile, jobs: int) -> dict[str, Any]:
    from ledger.storage.store import open_ledger

    fig: dict[str, Any] = {}
    done = _child(["bench.run", "ingest", store.url, feed.path])
    if done["rejected"] or done["stored"] != feed.lines:
        raise RuntimeError(
            f"ingest stored {done['stored']} of {feed.lines} lines; first rejection: {done['rejected']}"
        )
    seconds = done["seconds"]
    fig["ingest_events_s"] = done["stored"] / seconds
    fig["ingest_seconds"] = seconds
    fig["ingest_cpu_s"] = done["cpu_seconds"]
    _say(f"{store.kind}: ledger ingest done ({seconds:.1f}s)")
    done = _child(["bench.run", "verify", store.url])
    if done["exit_code"] != 0:
        raise RuntimeError(f"verify of a clean feed found finding(s), first: {done['findings']}")
    seconds = done["seconds"]
    fig["verify_seconds"] = seconds
    fig["verify_cpu_s"] = done["cpu_seconds"]
    fig["verify_rounds_s"] = done["rounds_checked"] / seconds
    fig["verify_events_s"] = feed.lines / seconds
    fig["verify_rows_s"] = done["events"] / seconds
    _say(f"{store.kind}: ledger verify done ({seconds:.1f}s)")
    app = open_ledger(store.url)
    try:
        fig["verify_stages_cpu_us_event"] = verify_stages(app, feed.lines, fig["verify_cpu_s"])
        fig["ingest_stages_cpu_us_event"] = ingest_stages(feed.path, feed.lines, fig["ingest_cpu_s"])
        _say(f"{store.kind}: stage breakdown done")
    finally:
        app.close()
    if jobs > 1:
        fig.update(_jobs(store, jobs))
    store.drop()
    return fig


def _jobs(store: Store, jobs: int) -> dict[str, Any]:
    from ledger.verify.partition import verify_parallel

    one_s, one = _timed(lambda: verify_parallel(store.url, jobs=1))
    one_cpu = _LAST_CPU[0]
    many_s, many = _timed(lambda: verify_parallel(store.url, jobs=jobs))
    same = one.to_json() == many.to_json()
    # Critical path in CPU seconds: the assignment pass, then the busiest worker.
    critical = many.cpu_seconds[0] + max(many.cpu_seconds[1:])
    _say(
        f"{store.kind}: verify --jobs {jobs} {one_s / many_s:.2f}x wall, "
        f"{one_cpu / critical:.2f}x CPU critical path, identical findings: {same}"
    )
    return {
        "jobs": jobs,
        "jobs1_seconds": one_s,
        "jobsN_seconds": many_s,
        "ratio_jobsN_vs_jobs1": one_s / many_s,
        "jobs_identical_findings": same,
        "jobs1_cpu_s": one_cpu,
        "jobsN_cpu_s": many.cpu_seconds,
        "cpu_ratio_jobsN_vs_jobs1": one_cpu / critical,
    }


def _medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in runs[0]:
        out[kind] = {}
        for key, value in runs[0][kind].items():
            values = [r[kind][key] for r in runs]
            if isinstance(value, bool):
                out[kind][key] = all(values)
            elif isinstance(value, (int, float)) and not isinstance(value, list):
                out[kind][key] = statistics.median(values)
            elif isinstance(value, dict):  # a stage breakdown: the median of each stage
                out[kind][key] = {stage: statistics.median(v[stage] for v in values) for stage in value}
    return out


def _memory(stores: Stores, workdir: str, args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for rounds in args.memory:
        path = os.path.join(workdir, f"memory-{rounds}.jsonl")
        feed = write_feed(path, rounds, tables=args.tables, seed=args.seed, games=args.games)
        store = stores.fresh("sqlite", f"mem{rounds}")
        ingest = measure("ingest", store.url, feed.path)
        verify = measure("verify", store.url)
        out[str(rounds)] = {"rounds": feed.rounds, "lines": feed.lines, "ingest": ingest, "verify": verify}
        _say(f"memory {rounds}: ingest {ingest['peak_rss_mb']} MB, verify {verify['peak_rss_mb']} MB")
        store.drop()
        os.remove(path)
    return out


def _verdict(results: dict[str, Any]) -> dict[str, Any]:
    med = results["median"]
    verdict: dict[str, Any] = {}
    for kind, fig in med.items():
        verdict[f"{kind} ingest / bare append"] = _check(
            fig["ratio_ingest_vs_bare_append"], "ingest_vs_bare_append"
        )
        verdict[f"{kind} verify / bare read+decode"] = _check(
            fig["ratio_verify_vs_bare_read_decode"], "verify_vs_bare_read_decode"
        )
        if kind == "sqlite":
            verdict["sqlite ingest client CPU µs/event"] = _check(
                fig["ingest_cpu_us_event"], "ingest_cpu_us_per_event_sqlite"
            )
            verdict["sqlite verify client CPU µs/event"] = _check(
                fig["verify_cpu_us_event"], "verify_cpu_us_per_event_sqlite"
            )
        if "ratio_jobsN_vs_jobs1" in fig:
            ok = _check(fig["ratio_jobsN_vs_jobs1"], "jobs2_vs_jobs1")
            ok["identical_findings"] = fig["jobs_identical_findings"]
            ok["met"] = ok["met"] and fig["jobs_identical_findings"]
            verdict[f"{kind} verify --jobs {fig['jobs']} / --jobs 1"] = ok
    memory = results.get("memory", {})
    if len(memory) >= 2:
        sizes = sorted(memory, key=int)
        small, large = sizes[0], sizes[-1]
        ratio = memory[large]["verify"]["peak_rss_mb"] / memory[small]["verify"]["peak_rss_mb"]
        verdict[f"verify peak RSS {int(large):,} / {int(small):,} rounds"] = _check(
            ratio, "verify_rss_growth"
        )
    return verdict


def _instructions(args: argparse.Namespace) -> dict[str, Any] | None:
    """Issue 17's two ratios in instructions per feed event, and the data-cache misses of each
    side (``bench.instructions`` with the cache simulated)."""
    from bench import instructions

    if instructions.valgrind() is None:
        _say("valgrind is not installed (apt-get install valgrind): instructions not counted")
        return None
    counted = instructions.measure(
        int(args.instructions), tables=args.tables, seed=args.seed, cache=True, workdir=args.workdir
    )
    _say(f"instructions counted ({counted['feed']['lines']} lines)")
    return counted


def _instructions_verdict(counted: dict[str, Any] | None) -> dict[str, Any]:
    if counted is None:
        return {}
    found = counted["ratios"]
    return {
        "sqlite ingest / bare append, instructions": _check(
            found["ingest_vs_bare_append"], "ingest_vs_bare_append"
        ),
        "sqlite verify / bare read+decode, instructions": _check(
            found["verify_vs_bare_read_decode"], "verify_vs_bare_read_decode"
        ),
    }


def _check(value: float, target: str) -> dict[str, Any]:
    bound = TARGETS[target]
    at_most = target in AT_MOST
    return {
        "value": value,
        "target": bound,
        "at_most": at_most,
        "met": value <= bound if at_most else value >= bound,
    }


def render(results: dict[str, Any]) -> str:
    """The results as a markdown table."""
    med = results["median"]
    kinds = list(med)
    rows = [
        ("raw floor write (rows/s, one txn)", "raw_write_rows_s"),
        ("raw floor read (rows/s)", "raw_read_rows_s"),
        ("bare framework append (events/s)", "bare_append_events_s"),
        ("bare framework read + decode (events/s)", "bare_read_decode_events_s"),
        ("ledger ingest (events/s)", "ingest_events_s"),
        ("ledger verify (feed events/s)", "verify_events_s"),
        ("ledger verify (stored rows/s)", "verify_rows_s"),
        ("ledger verify (rounds/s)", "verify_rounds_s"),
        ("bare append, client CPU µs/event", "bare_append_cpu_us_event"),
        ("bare read + decode, client CPU µs/event", "bare_read_decode_cpu_us_event"),
        ("ledger ingest, client CPU µs/event", "ingest_cpu_us_event"),
        ("ledger verify, client CPU µs/event", "verify_cpu_us_event"),
        ("ingest / bare append", "ratio_ingest_vs_bare_append"),
        ("verify / bare read+decode", "ratio_verify_vs_bare_read_decode"),
        ("verify --jobs N / --jobs 1 (speed-up)", "ratio_jobsN_vs_jobs1"),
        ("ingest / bare append, client CPU", "cpu_ratio_ingest_vs_bare_append"),
        ("verify / bare read+decode, client CPU", "cpu_ratio_verify_vs_bare_read_decode"),
        ("--jobs N speed-up, CPU critical path", "cpu_ratio_jobsN_vs_jobs1"),
    ]
    feed = results["feed"]
    lines = [
        f"feed: {feed['rounds']:,} rounds, {feed['lines']:,} lines, games "
        f"{' '.join(feed['games'])}; {len(results['runs'])} run(s), medians",
        "",
        "| measure | " + " | ".join(kinds) + " |",
        "|---|" + "---:|" * len(kinds),
    ]
    for label, key in rows:
        cells = [_fmt(med[k].get(key)) for k in kinds]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += _render_stages(med, kinds)
    memory = results.get("memory")
    if memory:
        lines += ["", "| peak RSS (SQLite, fresh process) | ingest MB | verify MB |", "|---|---:|---:|"]
        for size, m in memory.items():
            lines.append(
                f"| {int(size):,} rounds | {m['ingest']['peak_rss_mb']} | {m['verify']['peak_rss_mb']} |"
            )
    if results.get("instructions"):
        from bench.instructions import render as render_instructions

        lines += ["", render_instructions(results["instructions"])]
    if "resumable" in results:
        from bench.resumable import render as render_resumable

        lines += ["", render_resumable(results["resumable"]).split("\n\n| target")[0]]
    lines += ["", "| target | value | met |", "|---|---:|---|"]
    for name, v in results["verdict"].items():
        sign = "≤" if v.get("at_most") else "≥"
        lines.append(f"| {name} {sign} {v['target']} | {v['value']:.2f} | {'yes' if v['met'] else 'NO'} |")
    return "\n".join(lines)


def _render_stages(med: dict[str, Any], kinds: list[str]) -> list[str]:
    """Where ingest's and verify's client CPU goes (``bench.breakdown``), µs per feed event."""
    lines: list[str] = []
    for what in ("ingest", "verify"):
        key = f"{what}_stages_cpu_us_event"
        if not all(key in med[k] for k in kinds):
            continue
        lines += [
            "",
            f"| {what}: client CPU µs/event by stage | " + " | ".join(kinds) + " |",
            "|---|" + "---:|" * len(kinds),
        ]
        for stage in med[kinds[0]][key]:
            lines.append(
                f"| {stage} | " + " | ".join(f"{med[k][key].get(stage, 0.0):.1f}" for k in kinds) + " |"
            )
    return lines


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, float) and value < 10:
        return f"{value:.2f}"
    return f"{value:,.0f}"


if __name__ == "__main__":
    print(json.dumps(child(sys.argv[1:])))
