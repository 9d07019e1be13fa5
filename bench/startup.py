"""``python -m bench.startup``: what ``ledger`` costs before it does any work.

Runs the installed console script in fresh processes, alternating the cases from run to run,
and reports the median **process CPU time** (user + system, from ``wait4``) of each, against
issue 31's targets: ``ledger --version`` ≤ 0.15 s, ``ledger --help`` ≤ 0.3 s, any command on an
empty store ≤ 0.4 s. CPU time rather than wall time, so that a machine shared with other work
moves the figures little. Then, for ``--version`` and ``verify`` on the empty store, a summary of
``python -X importtime``: the modules imported, their total import time, and the heaviest
top-level packages (cumulative microseconds, as ``-X importtime`` prints them)::

    python -m bench.startup              # 7 runs of each case
    python -m bench.startup --runs 3 --json startup.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EMPTY = "{db}"
"""Stands for the URL of the empty store in a case's arguments."""

CASES: dict[str, tuple[list[str], float]] = {
    "--version": (["--version"], 0.15),
    "--help": (["--help"], 0.30),
    "verify (empty store)": (["verify", "--db", EMPTY], 0.40),
    "commission (empty store)": (["commission", "--db", EMPTY], 0.40),
    "jackpot (empty store)": (["jackpot", "--db", EMPTY], 0.40),
    "replay (empty store)": (["replay", "RL-01/000001", "--db", EMPTY], 0.40),
    "projections status (empty store)": (["projections", "status", "--db", EMPTY], 0.40),
}
"""Each case: the arguments of ``ledger`` and its target in CPU seconds (at most)."""


def ledger_command() -> list[str]:
    """The installed console script beside this interpreter, else ``python -m cli.main``."""
    script = Path(sys.executable).with_name("ledger")
    return [str(script)] if script.exists() else [sys.executable, "-m", "cli.main"]


def cpu_seconds(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, int]:
    """Run ``argv`` to the end; its user + system CPU seconds and its exit status."""
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, process.returncode


@dataclass(frozen=True)
class ImportSummary:
    """What ``python -X importtime`` says of one command."""

    modules: int
    total_us: int
    top: list[tuple[str, int]]
    """The heaviest top-level imports: (module, cumulative µs)."""


def parse_importtime(text: str, top: int = 8) -> ImportSummary:
    """Read the ``import time: self | cumulative | name`` lines of ``-X importtime``."""
    modules, total, roots = 0, 0, []
    for line in text.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative, name = line.removeprefix("import time:").split("|", 2)
        modules += 1
        total += int(self_us)
        if not name.startswith("  "):  # one space follows the bar; nesting adds two per level
            roots.append((name.strip(), int(cumulative)))
    return ImportSummary(modules, total, sorted(roots, key=lambda r: -r[1])[:top])


def importtime(args: list[str], env: dict[str, str]) -> ImportSummary:
    """``-X importtime`` of ``ledger ARGS`` in a fresh interpreter."""
    done = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-c",
            "import sys; from cli.main import main; sys.argv[0] = 'ledger'; main()",
            *args,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    return parse_importtime(done.stderr)


def measure(runs: int, only: list[str] | None = None) -> dict[str, Any]:
    """Median CPU seconds of every case (``only``: those named), and the import summaries."""
    names = [n for n in CASES if not only or n.split()[0] in only or n in only]
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEDGER_")}
    with tempfile.TemporaryDirectory(prefix="ledger-startup-") as work:
        db = f"sqlite:///{Path(work) / 'empty.db'}"
        if any(EMPTY in CASES[n][0] for n in names):
            made = subprocess.run(
                [*ledger_command(), "init", "--db", db], capture_output=True, text=True, env=env, timeout=120
            )
            if made.returncode != 0:
                raise RuntimeError(f"ledger init failed: {made.stderr.strip()}")
        samples: dict[str, list[float]] = {n: [] for n in names}
        codes: dict[str, int] = {}
        for run in range(runs):
            for name in names if run % 2 == 0 else reversed(names):
                argv = [a.replace(EMPTY, db) for a in CASES[name][0]]
                seconds, codes[name] = cpu_seconds([*ledger_command(), *argv], env)
                samples[name].append(seconds)
        imports = {
            label: importtime([a.replace(EMPTY, db) for a in args], env)
            for label, args in (
                ("--version", ["--version"]),
                ("verify (empty store)", ["verify", "--db", EMPTY]),
            )
            if label in names
        }
    return {
        "runs": runs,
        "cases": {
            n: {
                "cpu_s": round(statistics.median(samples[n]), 3),
                "target_s": CASES[n][1],
                "exit_code": codes[n],
                "met": statistics.median(samples[n]) <= CASES[n][1],
            }
            for n in names
        },
        "imports": {
            label: {
                "modules": s.modules,
                "total_ms": round(s.total_us / 1000, 1),
                "top_ms": {m: round(us / 1000, 1) for m, us in s.top},
            }
            for label, s in imports.items()
        },
    }


def render(results: dict[str, Any]) -> str:
    """The figures as markdown tables."""
    lines = [
        f"Start-up, median process CPU (user + system) of {results['runs']} runs:",
        "",
        "| command | CPU s | target | met | exit |",
        "|---|---|---|---|---|",
    ]
    for name, c in results["cases"].items():
        lines.append(
            f"| `ledger {name}` | {c['cpu_s']:.3f} | ≤ {c['target_s']:.2f} | "
            f"{'yes' if c['met'] else 'NO'} | {c['exit_code']} |"
        )
    for label, s in results["imports"].items():
        heavy = ", ".join(f"{m} {ms:.0f}" for m, ms in s["top_ms"].items())
        lines += [
            "",
            f"`python -X importtime` of `ledger {label}`: {s['modules']} modules, "
            f"{s['total_ms']:.0f} ms of imports; heaviest (cumulative ms): {heavy}",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Measure, print the tables, optionally write the JSON."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.startup",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--runs", type=int, default=7, help="runs of each case (median)")
    parser.add_argument("--only", default="", help="comma-separated cases, e.g. --only=--version,verify")
    parser.add_argument("--json", dest="out", default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    results = measure(args.runs, [o for o in args.only.split(",") if o] or None)
    print(render(results))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
        print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
