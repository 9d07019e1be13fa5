"""``ledger ingest``: append feed files to the ledger (FEED §9)."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Annotated, Any, BinaryIO

import typer

from cli.context import DbOption, open_app
from cli.contract import fail
from cli.render import err, print_json, progress_bar
from ledger.codec.parse import Rejection
from ledger.live.follower import FollowOptions
from ledger.live.run import FollowError, FollowRequest, follow, make_bounds, parse_duration
from ledger.proof.seal import SEAL_KEY_ENV, SealError, load_private_key
from ledger.services.ingest import Ingestor, IngestReport, bounded_lines
from ledger.storage.store import database_url, redact
from ledger.witness.client import QuorumError
from ledger.witness.sealing import check_options


def ingest(
    files: Annotated[
        list[str] | None,
        typer.Argument(metavar="FILE", help="Feed files (JSON Lines); - reads standard input."),
    ] = None,
    db: DbOption = None,
    rejects: Annotated[
        str | None,
        typer.Option(
            metavar="FILE",
            help="Where rejected lines go (JSON Lines: file, line, code, field, message, text), "
            "for every input. Default: FILE.rejects.jsonl next to each input.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
    follow: Annotated[
        str | None,
        typer.Option(
            "--follow",
            metavar="SOURCE",
            rich_help_panel="Live",
            help="Follow SOURCE instead of reading files: a file being appended (followed across "
            "rotation), - for standard input, or nats://HOST:PORT/STREAM (a durable JetStream "
            "consumer on STREAM.<table>). Each round is judged as it closes; each finding is "
            "printed at once as one JSON line (with detected_at).",
        ),
    ] = None,
    batch_lines: Annotated[
        int,
        typer.Option(
            min=1,
            max=20_000,
            rich_help_panel="Live",
            help="--follow: most lines per committed batch (a batch grows toward it only while the "
            "previous one is being stored).",
        ),
    ] = 5000,
    batch_window: Annotated[
        str,
        typer.Option(
            metavar="DURATION",
            rich_help_panel="Live",
            help="--follow: a batch is committed at the latest this long after its first line.",
        ),
    ] = "200ms",
    seal_every: Annotated[
        str | None,
        typer.Option(
            metavar="DURATION",
            rich_help_panel="Live",
            help="--follow: store an incremental checkpoint this often (e.g. 30s, 5m); needs the "
            "sealing key (--seal-key or LEDGER_SEAL_KEY).",
        ),
    ] = None,
    seal_key: Annotated[
        str | None,
        typer.Option(
            metavar="FILE",
            rich_help_panel="Live",
            help="--follow: the Ed25519 sealing key (PEM) for --seal-every.",
        ),
    ] = None,
    witness: Annotated[
        list[str] | None,
        typer.Option(
            "--witness",
            metavar="URL_OR_DIR",
            rich_help_panel="Live",
            help="--follow --seal-every: a witness to cosign each timed checkpoint (repeatable), as "
            "`ledger seal --witness`; a missed quorum is logged and counted, and following goes on.",
        ),
    ] = None,
    quorum: Annotated[
        int | None,
        typer.Option(
            "--quorum",
            metavar="K",
            rich_help_panel="Live",
            help="--follow --witness: how many witnesses must cosign (default: all).",
        ),
    ] = None,
    metrics_port: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=65535,
            rich_help_panel="Live",
            help="--follow: serve Prometheus metrics and health on 127.0.0.1:PORT/metrics.",
        ),
    ] = None,
    durable: Annotated[
        str, typer.Option(rich_help_panel="Live", help="--follow nats://: the durable consumer's name.")
    ] = "ledger-follower",
    state: Annotated[
        str | None,
        typer.Option(
            metavar="FILE",
            rich_help_panel="Live",
            help="--follow FILE: where the follower records how far it has read (default FILE.follow.json).",
        ),
    ] = None,
    idle_exit: Annotated[
        str | None,
        typer.Option(
            metavar="DURATION",
            rich_help_panel="Live",
            help="--follow: stop (exit 0) once nothing came for this long, counted once following started.",
        ),
    ] = None,
    told_copy: Annotated[
        str | None,
        typer.Option(
            metavar="FILE",
            rich_help_panel="Live",
            help="--follow without the sealing key: keep a copy of the told row in FILE (out of "
            "reach of SQL), so a restart does not tell every finding again (docs/OPERATIONS.md).",
        ),
    ] = None,
) -> None:
    """Store feed lines as immutable events; reject malformed lines with a reason.

    Exit code 0: every line stored (or already stored). 1: some lines rejected. 2: usage error.
    With --follow: 0 stopped cleanly (SIGTERM, end of input, --idle-exit), 2 could not start
    (another follower on the store, unreachable source) or stopped with lines it could not
    store, 3 the newest checkpoint does not agree with the store.
    """
    if follow is not None:
        if files:
            fail("give either FILE... or --follow SOURCE, not both")
        _follow(
            follow,
            db,
            rejects,
            batch_lines,
            batch_window,
            _Sealing(seal_every, seal_key, witness or [], quorum),
            metrics_port,
            durable,
            state,
            idle_exit,
            told_copy,
        )
    if not files:
        fail("give FILE... (or - for standard input), or --follow SOURCE")
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
                err.print(
                    f"warning: {name}: events stored, but the Merkle tree was not extended "
                    f"({report.tree_error}); `ledger seal` catches it up",
                    markup=False,
                )
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


@dataclass
class _Sealing:
    """``--seal-every``, ``--seal-key``, ``--witness`` and ``--quorum`` of ``--follow``."""

    every: str | None
    key: str | None
    witnesses: list[str]
    quorum: int | None

    def apply(self, options: FollowOptions) -> None:
        """Into the follower's options; ``ValueError``, ``SealError`` or ``QuorumError``."""
        if self.every is None:
            if self.witnesses or self.quorum is not None:
                raise ValueError("--witness and --quorum cosign the timed checkpoints: give --seal-every")
            return
        options.seal_every = parse_duration(self.every)
        if self.key is None and not os.environ.get(SEAL_KEY_ENV):
            fail(f"--seal-every needs the sealing key: pass --seal-key FILE or set {SEAL_KEY_ENV}")
        options.seal_key = load_private_key(self.key)
        options.quorum = check_options(self.witnesses, self.quorum)
        options.witnesses = tuple(self.witnesses)


def _follow(
    source: str,
    db: str | None,
    rejects: str | None,
    batch_lines: int,
    batch_window: str,
    sealing: _Sealing,
    metrics_port: int | None,
    durable: str,
    state: str | None,
    idle_exit: str | None,
    told_copy: str | None = None,
) -> None:
    try:
        options = FollowOptions(make_bounds(batch_lines, batch_window))
        options.idle_exit = parse_duration(idle_exit) if idle_exit else None
        options.told_copy = told_copy
        options.store_label = redact(database_url(db))
        sealing.apply(options)
    except (ValueError, SealError, QuorumError) as exc:
        fail(str(exc))
    if source != "-" and not source.startswith("nats://") and not Path(source).is_file():
        fail(f"no such file: {source}")
    app = open_app(db, create=True)
    request = FollowRequest(source, database_url(db), options, rejects, state, durable, metrics_port)
    try:
        code = follow(app, request)
    except FollowError as exc:
        fail(str(exc), exc.code, prefix="integrity broken" if exc.code == 3 else "error")
    finally:
        app.close()
    raise typer.Exit(code=code)


def _ingest_one(app: Any, name: str, shared: _RejectsFile | None) -> tuple[IngestReport, str | None]:
    sink = shared or _RejectsFile("stdin.rejects.jsonl" if name == "-" else name + ".rejects.jsonl")
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
                report = Ingestor(app).ingest(
                    bounded_lines(stream), on_reject=sink.write, on_progress=lambda n: bar.advance(task, n)
                )
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
    return {
        "file": name,
        "lines": r.lines,
        "stored": r.stored,
        "duplicates": r.duplicates,
        "rejected": len(r.rejected),
        "rounds_opened": r.rounds_opened,
        "rejects_file": rejects_path,
        "seconds": round(r.seconds, 3),
        "rejections": [x.as_dict() for x in r.rejected[:1000]],
    }


def _line(s: dict[str, Any]) -> str:
    text = (
        f"{s['file']}: {s['lines']} lines, {s['stored']} stored, {s['duplicates']} already "
        f"stored, {s['rejected']} rejected ({s['seconds']}s)"
    )
    for x in s["rejections"][:20]:
        text += f"\n  line {x['line']}: {x['code']}: {x['message']}"
    if s["rejected"] > 20:
        text += f"\n  … {s['rejected'] - 20} more"
    if s["rejects_file"]:
        text += f"\n  rejected lines written to {s['rejects_file']}"
    return text


ORDER = 10
COMMANDS = [ingest]
