"""``ledger ingest``: append feed files to the ledger (FEED §9)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import IO, Annotated, Any, BinaryIO

import typer

from cli.context import DbOption, open_app
from cli.contract import fail
from cli.render import err, print_json, progress_bar
from ledger.feed.parse import Rejection
from ledger.ingest import Ingestor, IngestReport, bounded_lines


def ingest(
    files: Annotated[list[str], typer.Argument(
        metavar="FILE", help="Feed files (JSON Lines); - reads standard input.")],
    db: DbOption = None,
    rejects: Annotated[str | None, typer.Option(
        metavar="FILE",
        help="Where rejected lines go (JSON Lines: file, line, code, field, message, text), "
             "for every input. Default: FILE.rejects.jsonl next to each input.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Store feed lines as immutable events; reject malformed lines with a reason.

    Exit code 0: every line stored (or already stored). 1: some lines rejected. 2: usage error.
    """
    for name in files:
        if name != "-" and not Path(name).is_file():
            fail(f"no such file: {name}")
    app = open_app(db, create=True)
    summaries: list[dict[str, Any]] = []
    worst = 0
    shared = _RejectsFile(rejects) if rejects else None  # every file's rejects, each named
    try:
        for name in files:
            report, rejects_path = _ingest_one(app, name, shared)
            if report.tree_error:
                err.print(f"warning: {name}: events stored, but the Merkle tree was not extended "
                          f"({report.tree_error}); `ledger seal` catches it up", markup=False)
            worst = max(worst, report.exit_code)
            summaries.append(_summary(name, report, rejects_path))
    finally:
        app.close()
        if shared is not None:
            shared.close()
    if as_json:
        print_json(summaries[0] if len(summaries) == 1 else {"files": summaries})
    else:
        for s in summaries:
            typer.echo(_line(s))
    raise typer.Exit(code=worst)


def _ingest_one(app: Any, name: str,
                shared: _RejectsFile | None) -> tuple[IngestReport, str | None]:
    sink = shared or _RejectsFile("stdin.rejects.jsonl" if name == "-"
                                  else name + ".rejects.jsonl")
    sink.source = name
    before = sink.count
    stream: BinaryIO = sys.stdin.buffer if name == "-" else open(name, "rb")  # noqa: SIM115
    size = None if name == "-" else os.path.getsize(name)
    bar = progress_bar(size, f"ingest {name}")
    try:
        if bar is None:
            report = Ingestor(app).ingest(bounded_lines(stream), on_reject=sink.write)
        else:
            with bar:
                task = bar.add_task("ingest", total=size)
                report = Ingestor(app).ingest(bounded_lines(stream), on_reject=sink.write,
                                              on_progress=lambda n: bar.advance(task, n))
    finally:
        if sink is not shared:
            sink.close()
        if stream is not sys.stdin.buffer:
            stream.close()
    return report, sink.path if sink.count > before else None


class _RejectsFile:
    """Opened (truncated) on the first rejected line only, so a clean ingest leaves no file
    behind; with ``--rejects R`` one file collects the rejects of every input, each line
    naming its input file."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.source = ""
        self.count = 0
        self._file: IO[str] | None = None

    def write(self, rejection: Rejection, text: str | bytes) -> None:
        if self._file is None:
            self._file = open(self.path, "w", encoding="utf-8")  # noqa: SIM115
        self.count += 1
        record = {"file": self.source, **rejection.as_dict(text)}
        self._file.write(json.dumps(record, ensure_ascii=False) + "\n")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


def _summary(name: str, r: IngestReport, rejects_path: str | None) -> dict[str, Any]:
    return {"file": name, "lines": r.lines, "stored": r.stored, "duplicates": r.duplicates,
            "rejected": len(r.rejected), "rounds_opened": r.rounds_opened,
            "rejects_file": rejects_path, "seconds": round(r.seconds, 3),
            "rejections": [x.as_dict() for x in r.rejected[:1000]]}


def _line(s: dict[str, Any]) -> str:
    text = (f"{s['file']}: {s['lines']} lines, {s['stored']} stored, {s['duplicates']} already "
            f"stored, {s['rejected']} rejected ({s['seconds']}s)")
    for x in s["rejections"][:20]:
        text += f"\n  line {x['line']}: {x['code']}: {x['message']}"
    if s["rejected"] > 20:
        text += f"\n  … {s['rejected'] - 20} more"
    if s["rejects_file"]:
        text += f"\n  rejected lines written to {s['rejects_file']}"
    return text

ORDER = 10
COMMANDS = [ingest]
