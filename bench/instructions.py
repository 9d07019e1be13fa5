"""Instructions per feed event: the ledger against the bare framework, counted, not timed.

``python -m bench.instructions`` writes a seeded six-game feed and counts, with valgrind's
callgrind, the instructions the CPU executes per feed event for each of four workloads on
SQLite:

- ``bare_append`` — :func:`bench.bare.bare_ingest` of the feed into a fresh store;
- ``ingest`` — ``Ingestor(app).ingest`` of the feed into a fresh store (``ledger ingest``);
- ``bare_read`` — :func:`bench.bare.bare_read` of a store holding the feed;
- ``verify`` — ``verify_store(app)`` of a store holding the feed (``ledger verify``).

Each workload runs in a child process under callgrind once with one pass and once with two;
the difference, divided by the feed's lines, is one warm pass per event, so interpreter
start-up, imports and first-use costs drop out. ``PYTHONHASHSEED`` is fixed, so two runs of the
same code count the same to within a fraction of a per cent, on an idle or a loaded machine
alike — which wall-clock and CPU seconds on a shared machine do not (they swing by ±25 % from
one run to the next here).

``--cache`` also runs every workload under cachegrind, with the cache and the branch
predictor simulated (``--cache-sim=yes --branch-sim=yes``) and this machine's L1 instruction,
L1 data and L2 sizes (from ``/sys``), and reports per event what instruction counts do not
see: the L1 instruction-cache misses, the L1 data and L2 data misses (an instruction that
misses the L2 costs tens of cycles), and the mispredicted branches, conditional and indirect
(each one a refill of the pipeline). :func:`render` then prints each pair side by side — the bare
figure, the ledger's, and bare ÷ ledger — in each of these (``python -m bench`` counts them
so, where valgrind is installed).

The ratios are bare / ledger, like the harness's time ratios: ≥ 1.0 means the ledger executes
no more instructions per event than the bare framework does for less work. Without valgrind
(``apt-get install valgrind``) the harness skips this part and says so.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOADS = ("bare_append", "ingest", "bare_read", "verify")
PAIRS = {
    "ingest_vs_bare_append": ("ingest", "bare_append"),
    "verify_vs_bare_read_decode": ("verify", "bare_read"),
}
"""Each ratio (named as the harness's targets): the ledger workload and the bare one."""

_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")
_D1_MISSES = re.compile(r"D1\s+misses:\s+([\d,]+)")
_LL_MISSES = re.compile(r"LLd\s+misses:\s+([\d,]+)")
_I1_MISSES = re.compile(r"I1\s+misses:\s+([\d,]+)")
_MISPREDICTS = re.compile(r"Mispredicts:\s+([\d,]+)\s+\(\s*([\d,]+)\s+cond\s+\+\s+([\d,]+)\s+ind\s*\)")


def valgrind() -> str | None:
    """The valgrind executable, or ``None`` where it is not installed."""
    return shutil.which("valgrind")


def parse_counts(report: str) -> dict[str, int]:
    """The counts in valgrind's closing summary (its stderr): ``instructions`` always;
    ``i1_misses``, ``d1_misses`` and ``l2_misses`` (data misses in the simulated last level)
    when the cache was simulated; ``mispredicts`` and its parts ``mispredicts_cond`` and
    ``mispredicts_ind`` when the branch predictor was."""
    counts: dict[str, int] = {}
    for key, pattern in (
        ("instructions", _REFS),
        ("i1_misses", _I1_MISSES),
        ("d1_misses", _D1_MISSES),
        ("l2_misses", _LL_MISSES),
    ):
        found = pattern.findall(report)
        if found:
            counts[key] = int(found[-1].replace(",", ""))
    branches = _MISPREDICTS.findall(report)
    if branches:
        for key, value in zip(
            ("mispredicts", "mispredicts_cond", "mispredicts_ind"), branches[-1], strict=True
        ):
            counts[key] = int(value.replace(",", ""))
    if "instructions" not in counts:
        raise RuntimeError(f"no instruction count in valgrind's report: {report[-500:]!r}")
    return counts


def per_event(one: dict[str, int], two: dict[str, int], events: int) -> dict[str, float]:
    """One pass per event: the two-pass run less the one-pass run, divided by ``events``."""
    return {key: (two[key] - one[key]) / events for key in one if key in two}


MEASURES = (
    ("instructions", "instructions"),
    ("i1_misses", "L1i misses"),
    ("d1_misses", "L1d misses"),
    ("l2_misses", "L2 misses"),
    ("mispredicts", "mispredicted branches"),
    ("mispredicts_cond", "mispredicted conditional branches"),
    ("mispredicts_ind", "mispredicted indirect branches"),
)
"""Each per-event figure a pair is compared in, and its label (L2 misses: data misses in the
simulated last level, which is given this machine's L2)."""
LABELS = {
    "ingest_vs_bare_append": "ingest vs bare append",
    "verify_vs_bare_read_decode": "verify vs bare read+decode",
}


def side_by_side(figures: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    """Each pair measured, in each figure both sides have: the bare figure per event, the
    ledger's, and bare ÷ ledger (≥ 1.0: the ledger does, or misses, less per event)."""
    rows: list[dict[str, Any]] = []
    for name, (ledger, bare) in PAIRS.items():
        if ledger not in figures or bare not in figures:
            continue
        for key, label in MEASURES:
            if key in figures[ledger] and key in figures[bare]:
                mine, theirs = figures[ledger][key], figures[bare][key]
                rows.append(
                    {
                        "pair": name,
                        "measure": key,
                        "label": f"{LABELS[name]}: {label}/event",
                        "bare": theirs,
                        "ledger": mine,
                        "ratio": theirs / mine if mine > 0 else None,
                    }
                )
    return rows


def ratios(figures: dict[str, dict[str, float]]) -> dict[str, float]:
    """Bare / ledger instructions for each pair measured (≥ 1.0: the ledger executes fewer)."""
    out: dict[str, float] = {}
    for name, (ledger, bare) in PAIRS.items():
        if ledger in figures and bare in figures:
            out[name] = figures[bare]["instructions"] / figures[ledger]["instructions"]
    return out


CACHES = {("1", "Instruction"): "l1i", ("1", "Data"): "l1d", ("2", "Unified"): "l2"}
"""The caches read from ``/sys`` (level, type) and the name each is given."""


def cache_sizes(base: str = "/sys/devices/system/cpu/cpu0/cache") -> dict[str, int]:
    """This machine's L1 instruction, L1 data and L2 cache (size in bytes, ways, line), from
    ``/sys`` (``base``): ``l1i_*``, ``l1d_*`` and ``l2_*``. Where ``/sys`` does not say, or says
    what cachegrind cannot simulate (a set count not a power of two), the L1 data and L2 take
    the values of a recent server core, and the ``l1i_*`` keys are left out (cachegrind then
    simulates its own default L1 instruction cache). Each cache is read on its own: one
    unreadable entry leaves the others as read."""
    sizes = {"l1d": (48 * 1024, 12, 64), "l2": (2 * 1024 * 1024, 16, 64)}
    try:
        indexes = sorted(os.listdir(base))
    except OSError:
        indexes = []
    for index in indexes:
        folder = os.path.join(base, index)

        def read(name: str, folder: str = folder) -> str:
            with open(os.path.join(folder, name), encoding="ascii") as f:
                return f.read().strip()

        try:
            name = CACHES.get((read("level"), read("type")))
            if name is None:
                continue
            size = read("size").upper()  # "48K", "2048K"
            size_bytes = int(size[:-1]) * {"K": 1024, "M": 1024 * 1024}[size[-1]]
            triple = (size_bytes, int(read("ways_of_associativity")), int(read("coherency_line_size")))
        except (OSError, ValueError, KeyError, IndexError):
            continue  # this one as by default
        if _simulable(*triple):
            sizes[name] = triple
    return {
        f"{name}_{part}": value
        for name in ("l1i", "l1d", "l2")
        if name in sizes
        for part, value in zip(("bytes", "ways", "line"), sizes[name], strict=True)
    }


def _simulable(size: int, ways: int, line: int) -> bool:
    """Whether cachegrind accepts this cache: a line of at least 16 bytes and a power of two,
    and a whole number of sets that is a power of two."""
    if ways <= 0 or line < 16 or line & (line - 1) or size % (ways * line):
        return False
    sets = size // (ways * line)
    return sets > 0 and not sets & (sets - 1)


def measure(
    rounds: int = 300,
    *,
    tables: int = 10,
    seed: int = 1,
    workloads: tuple[str, ...] = WORKLOADS,
    cache: bool = False,
    workdir: str | None = None,
) -> dict[str, Any]:
    """Count every workload on one seeded feed; returns the figures (see the docstring)."""
    tool = valgrind()
    if tool is None:
        raise RuntimeError("valgrind is not installed (apt-get install valgrind)")
    from bench.feed import write_feed

    folder = tempfile.mkdtemp(prefix="ledger-instr-", dir=workdir)
    try:
        feed = write_feed(os.path.join(folder, "feed.jsonl"), rounds, tables=tables, seed=seed)
        _fill_stores(folder, feed.path, workloads)
        jobs = [(work, passes, False) for work in workloads for passes in (1, 2)]
        if cache:
            jobs += [(work, passes, True) for work in workloads for passes in (1, 2)]
        sizes = cache_sizes()
        with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
            counted = dict(
                zip(
                    jobs,
                    pool.map(lambda job: _count(tool, folder, feed.path, *job, sizes=sizes), jobs),
                    strict=True,
                )
            )
        figures = {
            work: per_event(counted[(work, 1, False)], counted[(work, 2, False)], feed.lines)
            for work in workloads
        }
        for work in workloads:
            if (work, 1, True) in counted:
                misses = per_event(counted[(work, 1, True)], counted[(work, 2, True)], feed.lines)
                figures[work].update({k: v for k, v in misses.items() if k != "instructions"})
        return {
            "feed": {
                "rounds": feed.rounds,
                "lines": feed.lines,
                "seed": seed,
                "tables_per_game": tables,
                "games": list(feed.games),
            },
            "per_event": figures,
            "ratios": ratios(figures),
            "side_by_side": side_by_side(figures),
            "cache": sizes if cache else None,
        }
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _fill_stores(folder: str, feed: str, workloads: tuple[str, ...]) -> None:
    """The stores the read workloads read: the feed ingested by each side, outside valgrind."""
    if "verify" in workloads:
        _child(["fill-ledger", folder, feed])
    if "bare_read" in workloads:
        _child(["fill-bare", folder, feed])


def _child(args: list[str]) -> None:
    subprocess.run(
        [sys.executable, "-m", "bench.instructions", "--child", *args],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )


def _count(
    tool: str, folder: str, feed: str, work: str, passes: int, cache: bool, *, sizes: dict[str, int]
) -> dict[str, int]:
    """Run one workload ``passes`` times in a child under valgrind; its counts."""
    if cache:
        options = [
            "--tool=cachegrind",
            "--cache-sim=yes",
            "--branch-sim=yes",
            "--cachegrind-out-file=/dev/null",
            f"--D1={sizes['l1d_bytes']},{sizes['l1d_ways']},{sizes['l1d_line']}",
            f"--LL={sizes['l2_bytes']},{sizes['l2_ways']},{sizes['l2_line']}",
        ]
        if "l1i_bytes" in sizes:
            options.append(f"--I1={sizes['l1i_bytes']},{sizes['l1i_ways']},{sizes['l1i_line']}")
    else:
        options = ["--tool=callgrind", "--callgrind-out-file=/dev/null"]
    env = dict(os.environ, PYTHONHASHSEED="0")
    done = subprocess.run(
        [
            tool,
            *options,
            sys.executable,
            "-m",
            "bench.instructions",
            "--child",
            work,
            folder,
            feed,
            str(passes),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{work} under valgrind failed: {done.stderr[-1500:]}")
    return parse_counts(done.stderr)


def _run_child(work: str, folder: str, feed: str, passes: int) -> None:
    """What a child process does: fill a store (``fill-ledger``, ``fill-bare``), or run one
    workload ``passes`` times (an append into a fresh store each time)."""
    ledger_db, bare_db = os.path.join(folder, "ledger.db"), os.path.join(folder, "bare.db")
    if work == "fill-ledger":
        _ingest(ledger_db, feed)
        return
    if work == "fill-bare":
        _bare_append(bare_db, feed)
        return
    if work not in WORKLOADS:
        raise SystemExit(f"unknown workload {work!r}")
    for n in range(passes):
        fresh = os.path.join(folder, f"{work}-{os.getpid()}-{n}.db")
        if work == "ingest":
            _ingest(fresh, feed)
        elif work == "bare_append":
            _bare_append(fresh, feed)
        elif work == "verify":
            _verify(ledger_db)
        else:
            _bare_read(bare_db)


def _ingest(db: str, feed: str) -> None:
    from ledger.services.ingest import Ingestor, bounded_lines
    from ledger.storage.store import open_ledger

    app = open_ledger("sqlite:///" + db)
    with open(feed, "rb") as lines:
        report = Ingestor(app).ingest(bounded_lines(lines))
    app.close()
    if report.rejected:
        raise SystemExit(f"the feed was not ingested clean: {report.rejected[:1]}")


def _verify(db: str) -> None:
    from ledger.storage.store import open_ledger
    from ledger.verify.engine import verify_store

    app = open_ledger("sqlite:///" + db)
    if verify_store(app).exit_code != 0:
        raise SystemExit("the feed did not verify clean")
    app.close()


def _bare_append(db: str, feed: str) -> None:
    from bench.bare import bare_app, bare_ingest

    bare = bare_app("sqlite:///" + db)
    bare_ingest(bare, feed)
    bare.close()


def _bare_read(db: str) -> None:
    from bench.bare import bare_app, bare_read

    bare = bare_app("sqlite:///" + db)
    bare_read(bare)
    bare.close()


def render(result: dict[str, Any]) -> str:
    """The figures as a markdown table."""
    fig = result["per_event"]
    feed = result["feed"]
    lines = [
        f"per feed event (valgrind: instructions by callgrind, misses and mispredictions by "
        f"cachegrind; one warm pass; SQLite; {feed['rounds']:,} rounds, {feed['lines']:,} lines)",
        "",
        "| workload | instructions/event | L1i misses/event | L1d misses/event | L2 misses/event "
        "| mispredicted branches/event (conditional + indirect) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for work in WORKLOADS:
        if work in fig:
            one = fig[work]
            cells = [f"{one['instructions']:,.0f}"] + [
                f"{one[k]:,.0f}" if k in one else "-" for k in ("i1_misses", "d1_misses", "l2_misses")
            ]
            if "mispredicts" in one:
                parts = (one["mispredicts"], one["mispredicts_cond"], one["mispredicts_ind"])
                cells.append("{:,.0f} ({:,.0f} + {:,.0f})".format(*parts))
            else:
                cells.append("-")
            lines.append(f"| {work} | " + " | ".join(cells) + " |")
    lines.append("")
    for name, value in result["ratios"].items():
        ledger, bare = PAIRS[name]
        lines.append(f"{ledger} / {bare}, in instructions (bare ÷ ledger): {value:.2f}  ")
    pairs = side_by_side(fig)
    if pairs:
        lines += [
            "",
            "| per feed event (valgrind, SQLite) | bare | ledger | bare ÷ ledger |",
            "|---|---:|---:|---:|",
        ]
        for row in pairs:
            ratio = "-" if row["ratio"] is None else f"{row['ratio']:.2f}"
            lines.append(f"| {row['label']} | {row['bare']:,.0f} | {row['ledger']:,.0f} | {ratio} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.instructions``; returns the exit code."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        work, folder, feed, *rest = argv[1:]
        _run_child(work, folder, feed, int(rest[0]) if rest else 1)
        return 0
    p = argparse.ArgumentParser(
        prog="python -m bench.instructions",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=300,
        help="rounds in the feed (300: ~14 k lines, about 6 minutes on two idle cores; about half "
        "an hour with --cache on two busy ones)",
    )
    p.add_argument("--tables", type=int, default=10, help="tables per game")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--only",
        type=lambda v: tuple(w for w in v.split(",") if w),
        default=WORKLOADS,
        help=f"workloads, comma-separated (default: {','.join(WORKLOADS)})",
    )
    p.add_argument(
        "--cache",
        action="store_true",
        help="also simulate the L1 instruction, L1 data and L2 caches and the branch predictor for "
        "every workload (cachegrind; slower)",
    )
    p.add_argument("--workdir", default=None)
    p.add_argument("--out", default=None, help="also write the figures as JSON here")
    args = p.parse_args(argv)
    unknown = set(args.only) - set(WORKLOADS)
    if unknown:
        p.error(f"unknown workload(s): {', '.join(sorted(unknown))}")
    if valgrind() is None:
        print("valgrind is not installed (apt-get install valgrind): nothing counted", file=sys.stderr)
        return 2
    result = measure(
        args.rounds,
        tables=args.tables,
        seed=args.seed,
        workloads=args.only,
        cache=args.cache,
        workdir=args.workdir,
    )
    if args.out:
        with open(args.out, "w", encoding="utf-8") as out:
            json.dump(result, out, indent=1)
            out.write("\n")
    print(render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
