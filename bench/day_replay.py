"""``python -m bench.day_replay``: ``report --day`` by position and replay/recall near a state point.

One command, from the repository root (``--rounds 300`` for a quick run)::

    python -m bench.day_replay --rounds 1500 --out bench-day-replay.json

It simulates every game with a simulator on ``--tables`` tables each, ``--rounds`` rounds per
table one every ``--minutes`` minutes (so the feed spans several gaming days), ingests it into a
SQLite store one gaming day at a time and seals after each day (the nightly job, a checkpoint
file kept per day). Then, each command run as ``ledger`` in a child process (its CPU time
measured, start-up included, median of ``--runs``):

- ``report --day D --json`` against ``verify --since`` the checkpoint sealed just before day D,
  for an early, a middle and the last full day, with ``report --day`` also run with the seal
  index out of reach (``LEDGER_SEAL_PUBLIC_KEY`` unset: today's full pass) and its JSON compared
  byte for byte;
- ``replay`` of a 3CB, an SP9 and a STUD round early, in the middle and late in a checkpoint
  interval, and ``recall --last 10`` of their tables, against the same command with no sealing
  key (the pass from the start of the store), outputs compared.

Nothing here is a test; speed is never asserted in ``tests``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from bench.feed import simulated_games
from ledger.proof.checkpoints import seal, write_snapshot_file
from ledger.proof.seal import generate_key, public_pem
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import open_ledger
from ledger.tools.simulate import DEFAULT_START, simulate
from projections.gaming_day import day_of, default_cutoff

LEDGER = str(Path(sys.executable).with_name("ledger"))


@dataclass(frozen=True)
class Built:
    """A sealed store of several gaming days."""

    url: str
    public_key: Path
    days: list[date]
    checkpoints: dict[date, Path]
    """Per day, the checkpoint file sealed right before its first line was ingested."""
    rows: int
    lines: int


def build(workdir: Path, rounds: int, tables: int, minutes: int, seed: int, every: int = 1) -> Built:
    """Simulate, ingest one gaming day at a time, seal after each ``every`` days (checkpoint
    files kept)."""
    sim = simulate(
        simulated_games(),
        rounds=rounds,
        tables=tables,
        seed=seed,
        start=DEFAULT_START,
        round_interval=timedelta(minutes=minutes),
    )
    cutoff = default_cutoff()
    by_day: dict[date, list[dict[str, Any]]] = {}
    for line in sim.lines:
        at = line["at"]
        when = at if not isinstance(at, str) else _parse(at)
        by_day.setdefault(day_of(when, cutoff), []).append(line)
    url = f"sqlite:///{workdir / 'days.db'}"
    key = generate_key()
    public = workdir / "seal.key.pub"
    public.write_bytes(public_pem(key.public_key()))
    app = open_ledger(url, create=True)
    checkpoints: dict[date, Path] = {}
    try:
        for n, (day, lines) in enumerate(sorted(by_day.items())):
            if n and n % every == 0:
                sealed = seal(app, key)
                path = workdir / f"cp-{day.isoformat()}.json"
                path.write_text(sealed.checkpoint.dumps(), encoding="utf-8")
                write_snapshot_file(path, sealed.snapshot)
                checkpoints[day] = path
            feed = workdir / f"feed-{day.isoformat()}.jsonl"
            feed.write_text("".join(json.dumps(x, default=str) + "\n" for x in lines), encoding="utf-8")
            with open(feed, encoding="utf-8") as stream:
                Ingestor(app).ingest(numbered_lines(stream))
        seal(app, key)
        rows = app.count_rows(upto=2**62)
    finally:
        app.close()
    return Built(url, public, sorted(by_day), checkpoints, rows, len(sim.lines))


def _parse(text: str) -> Any:
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def cpu_of(args: list[str], env: dict[str, str], program: str = LEDGER) -> tuple[float, bytes]:
    """CPU seconds (user + system) of one ``ledger`` child process, and its standard output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([program, *args], env=env, capture_output=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"ledger {' '.join(args)}: exit {done.returncode}: {done.stderr.decode()[-400:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


BEFORE = (
    "import sys, ledger.services.replay as r; r._from_state_point = lambda *a, **k: None; "
    "from cli.main import main; sys.argv[0] = 'ledger'; main()"
)
"""``ledger`` as it judged a round before the seal index: a pass from the nearest checkpoint."""


def median_cpu(
    args: list[str], env: dict[str, str], runs: int, *, before: bool = False
) -> tuple[float, bytes]:
    """The median CPU of ``runs`` runs and the output of the last (``before``: the pass from the
    checkpoint, :data:`BEFORE`)."""
    figures, out = [], b""
    for _ in range(runs):
        cpu, out = cpu_of(
            ["-c", BEFORE, *args] if before else args, env, sys.executable if before else LEDGER
        )
        figures.append(cpu)
    return statistics.median(figures), out


def main(argv: list[str] | None = None) -> int:
    """Build the store, measure, print a markdown table and write the JSON (``--out``)."""
    parser = argparse.ArgumentParser(prog="python -m bench.day_replay", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1500, help="rounds per table")
    parser.add_argument("--tables", type=int, default=2, help="tables per game")
    parser.add_argument("--minutes", type=int, default=10, help="minutes between two rounds of a table")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seal-days", type=int, default=1, help="days between two seals")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", default=None)
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--reuse", action="store_true", help="measure the store --workdir already holds")
    args = parser.parse_args(argv)
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="day-replay-"))
    workdir.mkdir(parents=True, exist_ok=True)
    built = _reused(workdir) if args.reuse else None
    if built is None:
        built = build(workdir, args.rounds, args.tables, args.minutes, args.seed, args.seal_days)
        _keep(workdir, built)
    print(f"store: {built.lines} feed lines, {built.rows} rows, {len(built.days)} gaming days ({built.url})")
    results = {"store": {"lines": built.lines, "rows": built.rows, "days": len(built.days)}}
    results.update(measure(built, args.runs))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2, default=str) + "\n", encoding="utf-8")
    return 0


def _keep(workdir: Path, built: Built) -> None:
    (workdir / "built.json").write_text(
        json.dumps(
            {
                "url": built.url,
                "public_key": str(built.public_key),
                "days": [d.isoformat() for d in built.days],
                "checkpoints": {d.isoformat(): str(p) for d, p in built.checkpoints.items()},
                "rows": built.rows,
                "lines": built.lines,
            }
        ),
        encoding="utf-8",
    )


def _reused(workdir: Path) -> Built | None:
    path = workdir / "built.json"
    if not path.exists():
        return None
    kept = json.loads(path.read_text(encoding="utf-8"))
    return Built(
        kept["url"],
        Path(kept["public_key"]),
        [date.fromisoformat(d) for d in kept["days"]],
        {date.fromisoformat(d): Path(p) for d, p in kept["checkpoints"].items()},
        kept["rows"],
        kept["lines"],
    )


def _envs(built: Built) -> tuple[dict[str, str], dict[str, str]]:
    keyed = {**os.environ, "LEDGER_DB": built.url, "LEDGER_SEAL_PUBLIC_KEY": str(built.public_key)}
    plain = {k: v for k, v in keyed.items() if k != "LEDGER_SEAL_PUBLIC_KEY"}
    return keyed, plain


def measure(built: Built, runs: int) -> dict[str, Any]:
    """Every figure of the module docstring. ``verify --since`` the day's checkpoint reads to
    the end of the log; the day's own share of it is that less ``verify --since`` the next
    day's checkpoint (``day_verify_cpu_s``, start-up cancelled), and the ratio the issue asks is
    also given against that share plus one start-up (``verify --since`` the newest checkpoint,
    which reads nothing new: ``startup_cpu_s``)."""
    keyed, plain = _envs(built)
    full_days = [d for d in built.days[1:-1] if d in built.checkpoints] or list(built.checkpoints)
    picks = sorted({full_days[0], full_days[len(full_days) // 2], full_days[-1]})
    startup, _ = median_cpu(["verify", "--since", "last"], keyed, runs)
    days: list[dict[str, Any]] = []
    print(f"\nstart-up (verify --since last, nothing new): {startup:.3f} s CPU")
    print(
        "\n| day | report --day | verify --since (to the end) | ratio | the day's verify + start-up | ratio "
        "| full-pass report | same JSON |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for day in picks:
        report, out = median_cpu(["report", "--day", day.isoformat(), "--json"], keyed, runs)
        since, _ = median_cpu(["verify", "--since", str(built.checkpoints[day])], keyed, runs)
        later = [d for d in built.days if d > day and d in built.checkpoints]
        after, _ = (
            median_cpu(["verify", "--since", str(built.checkpoints[later[0]])], keyed, runs)
            if later
            else (0.0, b"")
        )
        own = since - after + startup if later else since
        full, slow_out = median_cpu(["report", "--day", day.isoformat(), "--json"], plain, 1)
        row = {
            "day": day.isoformat(),
            "report_cpu_s": round(report, 3),
            "verify_since_cpu_s": round(since, 3),
            "ratio": round(report / since, 2),
            "day_verify_cpu_s": round(own, 3),
            "ratio_to_day": round(report / own, 2),
            "full_pass_report_cpu_s": round(full, 3),
            "identical": out == slow_out,
        }
        days.append(row)
        print(
            f"| {row['day']} | {row['report_cpu_s']} | {row['verify_since_cpu_s']} | {row['ratio']} | "
            f"{row['day_verify_cpu_s']} | {row['ratio_to_day']} | {row['full_pass_report_cpu_s']} | "
            f"{row['identical']} |"
        )
    return {
        "startup_cpu_s": round(startup, 3),
        "days": days,
        "replay": measure_replay(built, keyed, plain, runs),
    }


def measure_replay(
    built: Built, keyed: dict[str, str], plain: dict[str, str], runs: int
) -> list[dict[str, Any]]:
    """Replay of rounds early, mid and late in a checkpoint interval; recall --last 10."""
    from ledger.domain.table import TABLE_TOPIC
    from ledger.proof.checkpoints import listing

    os.environ["LEDGER_SEAL_PUBLIC_KEY"] = str(built.public_key)
    app = open_ledger(built.url)
    try:
        stored = listing(app)
        middle = stored[len(stored) // 2]
        previous = max((s for s in stored if s.position < middle.position), key=lambda s: s.position)
        starts: dict[str, list[tuple[int, str, str]]] = {}
        for rows in app.rows(after=previous.position, topics=(TABLE_TOPIC,)):
            for nid, oid, version, topic, state in rows:
                if nid > middle.position:
                    break
                fact = app.ledger_mapper.to_domain_event(_stored(oid, version, topic, state)).fact
                starts.setdefault(fact.game, []).append((nid, fact.table, fact.round))
    finally:
        app.close()
    found: list[dict[str, Any]] = []
    print(
        "\n| game | where | replay | before: from the checkpoint | from the start | same | recall --last 10 |"
    )
    print("|---|---|---|---|---|---|---|")
    for game in ("3CB", "SP9", "STUD"):
        picked = starts.get(game, [])
        if len(picked) < 3:
            continue
        for where, (_, table, rnd) in zip(
            ("early", "middle", "late"), (picked[1], picked[len(picked) // 2], picked[-5]), strict=True
        ):
            target = f"{table}/{rnd}"
            near, out = median_cpu(["replay", target, "--json"], keyed, runs)
            slow, slow_out = median_cpu(["replay", target, "--json"], plain, 1)
            checkpoint, checkpoint_out = median_cpu(["replay", target, "--json"], keyed, 1, before=True)
            recall, _ = median_cpu(["recall", "--table", table, "--last", "10", "--json"], keyed, runs)
            same = _without_start(out) == _without_start(slow_out) and out == checkpoint_out
            row = {
                "game": game,
                "where": where,
                "round": target,
                "replay_cpu_s": round(near, 3),
                "replay_from_start_cpu_s": round(slow, 3),
                "replay_from_checkpoint_cpu_s": round(checkpoint, 3),
                "same": same,
                "recall_cpu_s": round(recall, 3),
            }
            found.append(row)
            print(
                f"| {game} | {where} ({target}) | {row['replay_cpu_s']} | "
                f"{row['replay_from_checkpoint_cpu_s']} | {row['replay_from_start_cpu_s']} | {same} | "
                f"{row['recall_cpu_s']} |"
            )
    return found


def _without_start(out: bytes) -> Any:
    body = json.loads(out)
    if isinstance(body, dict):
        body.pop("judged_from", None)
    return body


def _stored(oid: str, version: int, topic: str, state: bytes) -> Any:
    from uuid import UUID

    from eventsourcing.persistence import StoredEvent

    return StoredEvent(UUID(oid), version, topic, state)


if __name__ == "__main__":
    sys.exit(main())
