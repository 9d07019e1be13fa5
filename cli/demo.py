"""``ledger demo``: simulate, ingest, verify, report — on the embedded default."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from cli.render import out, print_json
from ledger.tools.demo import DemoReport, run_demo

DEMO_DIR = "ledger-demo"
"""Where the demo keeps its feed and store by default, so its hints work when copied."""
DEMO_FILES = ("demo.db", "demo.db-wal", "demo.db-shm", "demo-feed.jsonl", "demo-feed.jsonl.errors.json")


def demo(
    rounds: Annotated[int, typer.Option(min=1, metavar="N", help="Rounds per table.")] = 300,
    tables: Annotated[int, typer.Option(min=1, max=20, metavar="N", help="Tables per game.")] = 3,
    seed: Annotated[int, typer.Option(metavar="N", help="Random seed.")] = 2026,
    error_rate: Annotated[
        float, typer.Option(min=0.0, max=1.0, metavar="RATE", help="Share of rounds with an injected error.")
    ] = 0.02,
    keep: Annotated[
        str,
        typer.Option(
            metavar="DIR",
            help="Where to keep the feed and the SQLite store (an earlier demo's files there are replaced).",
        ),
    ] = DEMO_DIR,
    temporary: Annotated[
        bool, typer.Option("--temporary", help="Use a temporary folder, removed at the end.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Simulate a day at a few tables with injected dealer errors, ingest it, verify it, and
    report what was found against what was injected. The store stays in ./ledger-demo (see
    --keep) for `ledger replay`, `recall`, `report`… with the --db the demo prints.

    Exit 0 when they match exactly, 1 when they do not."""
    if temporary:
        with tempfile.TemporaryDirectory(prefix="ledger-demo-") as tmp:
            report = run_demo(Path(tmp), rounds=rounds, tables=tables, seed=seed, error_rate=error_rate)
        folder = None
    else:
        folder = Path(keep).resolve()
        folder.mkdir(parents=True, exist_ok=True)
        for name in DEMO_FILES:  # a fresh store: never an earlier demo's rounds mixed in
            (folder / name).unlink(missing_ok=True)
        report = run_demo(folder, rounds=rounds, tables=tables, seed=seed, error_rate=error_rate)
    db = f"sqlite:///{folder / 'demo.db'}" if folder is not None else None
    if as_json:
        print_json({**_json(report), "db": db})
    else:
        _print(report, db)
    raise typer.Exit(code=0 if report.ok else 1)


def _json(r: DemoReport) -> dict[str, object]:
    return {
        "games": r.games,
        "rounds": r.simulation.rounds,
        "events": r.ingest.stored,
        "injected": len(r.simulation.injected),
        "findings_by_code": dict(Counter(f.code for f in r.verify.errors)),
        "missed": [list(m) for m in r.missed],
        "unexpected": [list(u) for u in r.unexpected],
        "integrity": "ok" if r.verify.integrity_ok else "broken",
        "head": r.verify.head,
        "seconds": round(r.seconds, 2),
        "ok": r.ok,
    }


def _print(r: DemoReport, db: str | None) -> None:
    by_code = Counter(f.code for f in r.verify.errors)
    injected = Counter(i.code for i in r.simulation.injected)
    out.print(
        f"[bold]ledger demo[/bold]: {', '.join(r.games)} — {r.simulation.rounds} rounds, "
        f"{r.ingest.stored} events ingested in {r.ingest.seconds:.2f}s, verified in "
        f"{r.verify.seconds:.2f}s"
    )
    out.print(f"integrity {'ok' if r.verify.integrity_ok else 'BROKEN'}, head {r.verify.head}")
    out.print("\n  finding code            injected   found")
    for code in sorted(set(by_code) | set(injected)):
        out.print(f"  {code:<22} {injected[code]:>9} {by_code[code]:>7}")
    for i in r.simulation.injected[:5]:
        hint = f"ledger replay {i.table}/{i.round}" + (f" --db {db}" if db else "")
        out.print(
            f"    e.g. {i.code} at {i.table}/{i.round}" + (f" bet {i.bet}" if i.bet else "") + f"   ({hint})",
            markup=False,
        )
    verdict = (
        "[green]every injected error found, nothing else[/green]"
        if r.ok
        else f"[red]missed {len(r.missed)}, unexpected {len(r.unexpected)}[/red]"
    )
    out.print(f"\n{verdict}; {r.seconds:.1f}s in all")
    if db:
        out.print(f"store kept: try  ledger verify --db {db}", markup=False)


ORDER = 90
COMMANDS = [demo]
