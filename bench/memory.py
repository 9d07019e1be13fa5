"""Peak memory of one ingest or one verify, each in a fresh process.

``python -m bench.memory ingest URL FEED``, ``python -m bench.memory verify URL`` or
``python -m bench.memory since URL`` (``verify --since last``: from the newest stored checkpoint)
prints one JSON object: the process's peak resident set (``VmHWM``), seconds and counts.
:func:`measure` runs that child and returns its answer.

``python -m bench.memory scale --sizes 100000,1000000 --games FPC`` grows one SQLite store to
each size in turn (the feed written straight into the ingesting child through a pipe, so no feed
file is kept; each step adds the rounds between the previous size and this one, on tables of its
own), measures the ingest of each step and a full verify at each size, and prints the ratio of
the largest verify's peak to the smallest's (issue 31: at most 1.5); ``--pg URL`` measures a fresh
PostgreSQL schema instead. It appends one JSON line per
measurement to ``--log`` as it goes.
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


def _child(argv: list[str]) -> dict[str, Any]:
    from ledger.services.ingest import Ingestor, bounded_lines
    from ledger.storage.store import open_ledger

    what, url = argv[0], argv[1]
    baseline = _peak_mb()
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
    }


def measure_piped(
    url: str, rounds: int, *, games: list[str] | None, tables: int, seed: int, first_chunk: int, fifo: str
) -> tuple[dict[str, Any], int]:
    """Ingest ``rounds`` generated rounds into ``url`` in a child process that reads the feed
    from a named pipe while this process writes it; return the child's answer (with the feed's
    lines and rounds) and the next chunk number."""
    from bench.feed import CHUNK_ROUNDS, simulated_games, write_feed

    if os.path.exists(fifo):
        os.remove(fifo)
    os.mkfifo(fifo)
    child = subprocess.Popen(
        [sys.executable, "-m", "bench.memory", "ingest", url, fifo],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        feed = write_feed(fifo, rounds, tables=tables, seed=seed, games=games, first_chunk=first_chunk)
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
            )
            done += ingest["feed_rounds"]
            log({"size": size, **ingest})
            verify = measure("verify", url)
            log({"size": size, **verify})
            results["sizes"][str(size)] = {"rounds": done, "ingest": ingest, "verify": verify}
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


if __name__ == "__main__":
    if sys.argv[1:2] == ["scale"]:
        print(json.dumps(scale(sys.argv[2:])))
    else:
        print(json.dumps(_child(sys.argv[1:])))
