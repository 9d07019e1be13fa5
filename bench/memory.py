"""Peak memory of one ingest or one verify, each in a fresh process.

``python -m bench.memory ingest URL FEED``, ``python -m bench.memory verify URL`` or
``python -m bench.memory since URL`` (``verify --since last``: from the newest stored checkpoint)
prints one JSON object: the process's peak resident set (``VmHWM``), seconds and counts; a
verify also gives, at the end of its pass (every row read, its structures still held), the
resident set, the C allocator's figures and Python's small-object arenas.
:func:`measure` runs that child and returns its answer.

``python -m bench.memory scale --sizes 100000,1000000 --games FPC`` grows one SQLite store to
each size in turn (the feed written straight into the ingesting child through a pipe, so no feed
file is kept; each step adds the rounds between the previous size and this one, on tables of its
own), measures the ingest of each step and a full verify at each size, and prints the ratio of
the largest verify's peak to the smallest's (issue 31: at most 1.5); ``--pg URL`` measures a fresh
PostgreSQL schema instead. It appends one JSON line per measurement to ``--log`` as it goes.
The build is made cheap: one chunk of the feed is simulated and every chunk written as a copy of
it on its own tables and times (``--simulate-chunks`` simulates each), and the build's SQLite
commits do not wait for the disk. ``--trace DIR`` also verifies each size with ``tracemalloc``
on and dumps a snapshot of the end of the pass; ``python -m bench.memory compare A.snap B.snap
--rounds N`` then lists what the larger store's pass holds more, by the traceback that
allocated it, in bytes per round.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def measure(*args: str) -> dict[str, Any]:
    """Run one child measurement and return its JSON answer."""
    out = subprocess.run(
        [sys.executable, "-m", "bench.memory", *args], cwd=ROOT, check=True, capture_output=True, text=True
    )
    answer: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return answer


def _peak_mb() -> float:
    """This process image's peak resident set, in MB.

    Linux's ``VmHWM`` starts afresh at ``exec``; ``ru_maxrss`` does not (it keeps the peak of
    the forked parent, here the harness holding a whole feed), so it is only the fallback.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _unsynced_sqlite() -> None:
    """Open every SQLite connection of this process with ``synchronous = OFF``.

    For the stores the bench builds only (``ingest ... --unsynced``): a commit then waits for no
    ``fsync``, which is most of a build's wall time on a loaded disk; what a commit writes, and so
    the store and the memory measured, is the same. Such a store may not survive a power cut,
    which a bench store need not."""
    from eventsourcing.sqlite import SQLiteConnectionPool

    create = SQLiteConnectionPool._create_connection

    def create_unsynced(self: SQLiteConnectionPool) -> Any:
        connection = create(self)
        connection._sqlite_conn.execute("PRAGMA synchronous = OFF")
        return connection

    SQLiteConnectionPool._create_connection = create_unsynced  # type: ignore[method-assign]


_MALLINFO2 = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"
"""The fields of glibc's ``struct mallinfo2``, in order (each a ``size_t``)."""


def _malloc_mb() -> dict[str, float]:
    """The C allocator's figures (glibc ``mallinfo2``): bytes in use in its blocks (``uordblks``,
    which holds everything but Python's small objects and the large blocks it maps on its own),
    the heap it holds (``arena``) and its own mapped blocks (``hblkhd``), in MB; and Python's
    small-object allocator's arenas (256 KiB each), from ``sys._debugmallocstats``."""
    import ctypes
    import tempfile

    figures: dict[str, float] = {}
    try:

        class _Info(ctypes.Structure):
            _fields_ = [(name, ctypes.c_size_t) for name in _MALLINFO2.split(" ")]

        libc = ctypes.CDLL(None)
        libc.mallinfo2.restype = _Info
        info = libc.mallinfo2()
        figures.update(
            malloc_in_use_mb=round(info.uordblks / 2**20, 2),
            malloc_heap_mb=round(info.arena / 2**20, 2),
            malloc_mapped_mb=round(info.hblkhd / 2**20, 2),
        )
    except (OSError, AttributeError):  # not glibc
        pass
    with tempfile.TemporaryFile("w+", encoding="utf-8") as out:
        saved = os.dup(2)
        sys.stderr.flush()
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        for line in out:
            if line.startswith("# arenas allocated current"):
                figures["pymalloc_arenas_mb"] = int(line.split("=")[1].replace(",", "")) / 4
    return figures


def _rss_mb() -> float:
    """This process's resident set now (``VmRSS``), in MB."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _at_end_of_pass(figures: dict[str, Any], snapshot: str | None) -> None:
    """Have every verify pass record, just before it finishes (every row read, its structures
    still held: where a pass holds the most), the resident set and the allocators' figures in
    ``figures``; with ``snapshot``, also dump a ``tracemalloc`` snapshot there."""
    from ledger.verify.engine import VerifyPass

    finish = VerifyPass.finish

    def finish_measured(self: VerifyPass, *args: Any, **kwargs: Any) -> Any:
        import gc

        gc.collect()
        figures.update(rss_end_of_pass_mb=round(_rss_mb(), 1), **_malloc_mb())
        if snapshot:
            import tracemalloc

            figures["traced_mb"] = round(tracemalloc.get_traced_memory()[0] / 2**20, 2)
            tracemalloc.take_snapshot().dump(snapshot)
        return finish(self, *args, **kwargs)

    VerifyPass.finish = finish_measured  # type: ignore[method-assign]


def _child(argv: list[str]) -> dict[str, Any]:
    if "--unsynced" in argv:
        argv = [a for a in argv if a != "--unsynced"]
        _unsynced_sqlite()
    from ledger.services.ingest import Ingestor, bounded_lines
    from ledger.storage.store import open_ledger

    what, url = argv[0], argv[1]
    baseline = _peak_mb()
    end_of_pass: dict[str, Any] = {}
    if what == "trace":
        # verify, with every allocation traced (argv[3] frames, 10 if not given) and a snapshot
        # dumped at the end of the pass in argv[2]; its peak is tracemalloc's, not a figure to
        # compare.
        import tracemalloc

        tracemalloc.start(int(argv[3]) if len(argv) > 3 else 10)
        _at_end_of_pass(end_of_pass, argv[2])
    elif what == "verify":
        _at_end_of_pass(end_of_pass, None)
    app = open_ledger(url)
    started = time.perf_counter()
    if what == "ingest":
        with open(argv[2], "rb") as feed:
            report = Ingestor(app).ingest(bounded_lines(feed))
        result: dict[str, Any] = {"stored": report.stored, "rejected": len(report.rejected)}
    else:
        from ledger.verify.engine import verify_store

        if what == "since":
            from bench.resumable import verify_since

            verified = verify_since(app)
        else:
            verified = verify_store(app)
        result = {
            "rounds": verified.rounds_checked,
            "events": verified.events,
            "findings": len(verified.findings),
            "exit_code": verified.exit_code,
        }
    seconds = time.perf_counter() - started
    app.close()
    return {
        "what": what,
        "peak_rss_mb": round(_peak_mb(), 1),
        "rss_after_imports_mb": round(baseline, 1),
        "seconds": round(seconds, 3),
        **result,
        **end_of_pass,
    }


def write_replicated(
    path: str, rounds: int, *, tables: int, seed: int, games: list[str] | None, first_chunk: int
) -> Any:
    """Write the feed :func:`bench.feed.write_feed` would (the same chunks, tables, jackpot pools
    and times, ``first_chunk`` on), but simulate only one chunk and write every chunk as a copy
    of it: its table codes suffixed and its times moved to the chunk's own. Simulating is a
    third of a large build's work; copying a line is a few string joins and one date.

    Each chunk then plays the same rounds (cards, dice, bets) as the first one, which does not
    change what a round costs to store or to verify, nor what a pass keeps of it."""
    from datetime import datetime

    from bench.feed import CHUNK_ROUNDS, ROUND_INTERVAL, FeedFile, _own_chunk, simulated_games
    from ledger.tools.simulate import DEFAULT_START, simulate

    chosen = simulated_games(games)
    per_chunk_tables = tables * len(chosen)
    total_per_table = max(1, -(-rounds // per_chunk_tables))
    chunk_per_table = max(1, CHUNK_ROUNDS // per_chunk_tables)
    template = simulate(
        chosen,
        rounds=min(chunk_per_table, total_per_table),
        tables=tables,
        seed=seed,
        start=DEFAULT_START,
        round_interval=ROUND_INTERVAL,
    )
    # Each line as (round, prefix, table, middle, time, suffix): the JSON text around the two
    # fields a copy changes. Lines with a jackpot pool (which a copy renames too) keep the dict.
    parts: list[tuple[int, Any, str, str, datetime | None, str]] = []
    for line in template.lines:
        number = int(line.get("round") or 0)
        if isinstance(line.get("rulebook"), dict) and "jackpot" in line["rulebook"]:
            parts.append((number, line, "", "", None, ""))
            continue
        text = json.dumps({**line, "table": "\x00", "at": "\x01"}, separators=(",", ":"))
        prefix, rest = text.split('"\\u0000"', 1)
        if '"\\u0001"' in prefix:
            raise RuntimeError("a line whose time comes before its table")
        middle, suffix = rest.split('"\\u0001"', 1)
        parts.append((number, prefix, str(line["table"]), middle, datetime.fromisoformat(line["at"]), suffix))
    lines = made = size = 0
    chunk = first_chunk
    with open(path, "w", encoding="utf-8") as out:
        while made < total_per_table * per_chunk_tables:
            per_table = min(chunk_per_table, total_per_table - made // per_chunk_tables)
            shift = ROUND_INTERVAL * (chunk * (chunk_per_table + 1))
            tag = f"-c{chunk}" if chunk else ""
            for number, prefix, table, middle, at, suffix in parts:
                if number > per_table:
                    continue
                if at is None:
                    line = dict(prefix)
                    line["at"] = (datetime.fromisoformat(line["at"]) + shift).isoformat()
                    if chunk:
                        _own_chunk(line, chunk)
                    text = json.dumps(line, separators=(",", ":")) + "\n"
                else:
                    text = f'{prefix}"{table}{tag}"{middle}"{(at + shift).isoformat()}"{suffix}\n'
                out.write(text)
                size += len(text)
                lines += 1
            made += per_table * per_chunk_tables
            chunk += 1
    return FeedFile(path, lines, made, tuple(g.key for g in chosen), tables, size)


def measure_piped(
    url: str,
    rounds: int,
    *,
    games: list[str] | None,
    tables: int,
    seed: int,
    first_chunk: int,
    fifo: str,
    replicate: bool = True,
) -> tuple[dict[str, Any], int]:
    """Ingest ``rounds`` generated rounds into ``url`` in a child process that reads the feed
    from a named pipe while this process writes it; return the child's answer (with the feed's
    lines and rounds) and the next chunk number."""
    from bench.feed import CHUNK_ROUNDS, simulated_games, write_feed

    if os.path.exists(fifo):
        os.remove(fifo)
    os.mkfifo(fifo)
    child = subprocess.Popen(
        [sys.executable, "-m", "bench.memory", "ingest", url, fifo, "--unsynced"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        write = write_replicated if replicate else write_feed
        feed = write(fifo, rounds, tables=tables, seed=seed, games=games, first_chunk=first_chunk)
        out, _ = child.communicate()
    finally:
        if child.poll() is None:
            child.kill()
        os.remove(fifo)
    if child.returncode:
        raise RuntimeError(f"ingest child failed ({child.returncode})")
    answer: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    answer.update(lines=feed.lines, feed_rounds=feed.rounds)
    per_chunk_tables = tables * len(simulated_games(games))
    chunk_per_table = max(1, CHUNK_ROUNDS // per_chunk_tables)
    per_table = -(-feed.rounds // per_chunk_tables)
    return answer, first_chunk + -(-per_table // chunk_per_table)


def scale(argv: list[str]) -> dict[str, Any]:
    """Grow one store (SQLite, or a PostgreSQL schema with ``--pg``) through ``--sizes`` and
    measure ingest and verify at each."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.memory scale")
    parser.add_argument("--sizes", default="5000,20000", help="rounds, comma-separated, ascending")
    parser.add_argument(
        "--games", default="", help="game keys, comma-separated (default: every simulated game)"
    )
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", default=os.path.join(ROOT, "bench-memory"))
    parser.add_argument("--log", default="", help="append each measurement as a JSON line here")
    parser.add_argument("--keep", action="store_true", help="keep the store")
    parser.add_argument(
        "--pg", default="", help="a PostgreSQL URL: measure a fresh schema there instead of SQLite"
    )
    parser.add_argument(
        "--trace",
        default="",
        help="a folder: also verify each size once more with tracemalloc on and dump a snapshot "
        "of the end of the pass there (SIZE.snap), for `python -m bench.memory compare`",
    )
    parser.add_argument(
        "--simulate-chunks", action="store_true", help="simulate every chunk of the feed (slower)"
    )
    parser.add_argument("--trace-frames", type=int, default=10, help="frames of each traced allocation")
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(",") if s)
    games = [g for g in args.games.split(",") if g] or None
    os.makedirs(args.workdir, exist_ok=True)
    db = os.path.join(args.workdir, f"scale-{os.getpid()}.db")
    url = f"sqlite:///{db}"
    store = None
    if args.pg:
        from bench.stores import Stores

        store = Stores(args.workdir, args.pg).fresh("postgres", "scale")
        url = store.url
    fifo = os.path.join(args.workdir, f"feed-{os.getpid()}.fifo")

    def log(entry: dict[str, Any]) -> None:
        print(json.dumps(entry), file=sys.stderr, flush=True)
        if args.log:
            with open(args.log, "a", encoding="utf-8") as out:
                out.write(json.dumps(entry) + "\n")

    results: dict[str, Any] = {
        "store": "postgres" if args.pg else "sqlite",
        "games": games or "all",
        "tables": args.tables,
        "seed": args.seed,
        "sizes": {},
    }
    done = chunk = 0
    try:
        for size in sizes:
            ingest, chunk = measure_piped(
                url,
                size - done,
                games=games,
                tables=args.tables,
                seed=args.seed,
                first_chunk=chunk,
                fifo=fifo,
                replicate=not args.simulate_chunks,
            )
            done += ingest["feed_rounds"]
            log({"size": size, **ingest})
            verify = measure("verify", url)
            log({"size": size, **verify})
            results["sizes"][str(size)] = {"rounds": done, "ingest": ingest, "verify": verify}
            if args.trace:
                os.makedirs(args.trace, exist_ok=True)
                snap = os.path.join(args.trace, f"{size}.snap")
                traced = measure("trace", url, snap, str(args.trace_frames))
                log({"size": size, **traced})
                results["sizes"][str(size)]["trace"] = traced
    finally:
        if store is not None and not args.keep:
            store.drop()
        if not args.keep:
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(db + suffix):
                    os.remove(db + suffix)
    if len(results["sizes"]) >= 2:
        small, large = results["sizes"][str(sizes[0])], results["sizes"][str(sizes[-1])]
        results["verify_peak_ratio"] = round(
            large["verify"]["peak_rss_mb"] / small["verify"]["peak_rss_mb"], 3
        )
    log(results)
    return results


def compare(argv: list[str]) -> list[dict[str, Any]]:
    """What the end of the pass holds more on the larger store than on the smaller, grouped by
    the traceback that allocated it, largest first: ``compare SMALL.snap LARGE.snap --rounds
    N`` (N, the rounds the larger store has more) also gives the bytes per round of each."""
    import argparse
    import tracemalloc

    parser = argparse.ArgumentParser(prog="python -m bench.memory compare")
    parser.add_argument("small")
    parser.add_argument("large")
    parser.add_argument("--rounds", type=int, default=0, help="rounds the larger store has more")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--frames", type=int, default=6, help="frames of each traceback printed")
    args = parser.parse_args(argv)
    small, large = tracemalloc.Snapshot.load(args.small), tracemalloc.Snapshot.load(args.large)
    keep = tracemalloc.Filter(False, tracemalloc.__file__)
    small, large = small.filter_traces([keep]), large.filter_traces([keep])
    diffs = large.compare_to(small, "traceback")
    total = sum(d.size_diff for d in diffs)
    rows: list[dict[str, Any]] = []
    for diff in diffs[: args.top]:
        rows.append(
            {
                "bytes": diff.size_diff,
                "blocks": diff.count_diff,
                **({"bytes_per_round": round(diff.size_diff / args.rounds, 2)} if args.rounds else {}),
                "traceback": [f"{f.filename}:{f.lineno}" for f in diff.traceback][-args.frames :],
            }
        )
    print(
        json.dumps(
            {
                "total_bytes": total,
                **({"total_bytes_per_round": round(total / args.rounds, 2)} if args.rounds else {}),
            }
        )
    )
    for row in rows:
        print(json.dumps(row))
    return rows


if __name__ == "__main__":
    if sys.argv[1:2] == ["scale"]:
        print(json.dumps(scale(sys.argv[2:])))
    elif sys.argv[1:2] == ["compare"]:
        compare(sys.argv[2:])
    else:
        print(json.dumps(_child(sys.argv[1:])))
