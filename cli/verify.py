"""``ledger verify``: replay rounds, report findings, check integrity (FEED §10)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from eventsourcing.persistence import InterfaceError, OperationalError

from cli.context import DbOption, open_app
from cli.contract import fail
from cli.render import out, print_json, print_verify, progress_bar
from ledger.errors import SealError
from ledger.feed.types import GAME_KEYS
from ledger.seal import (
    Checkpoint,
    checkpoint_findings,
    key_id,
    load_public_key,
    read_checkpoint,
)
from ledger.store import LedgerApp, database_url
from ledger.verify.engine import Selection, VerifyReport, verify_store
from ledger.verify.integrity import unreadable_store
from ledger.verify.partition import verify_parallel
from projections.check import check_projections


def verify(
    db: DbOption = None,
    table: Annotated[str | None, typer.Option(metavar="TABLE",
                                              help="Only rounds of this table.")] = None,
    game: Annotated[str | None, typer.Option(metavar="GAME", help="Only rounds of this game: "
                                             + " ".join(GAME_KEYS) + ".")] = None,
    round: Annotated[str | None, typer.Option("--round", metavar="ROUND",
                                              help="Only rounds with this id.")] = None,
    expect_head: Annotated[str | None, typer.Option(
        metavar="DIGEST",
        help="Fail (exit 3) unless the store still contains this head digest, printed by an "
             "earlier verify: catches truncation of the newest events.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    jobs: Annotated[int, typer.Option(
        "--jobs", min=1, help="Processes judging rounds (whole tables each; the integrity "
                              "chain is checked once). The findings are the same for any N.")] = 1,
    checkpoint: Annotated[str | None, typer.Option(
        metavar="FILE", help="A signed checkpoint (ledger seal): fail (exit 3) unless the store still holds "
             "every event it covers, unchanged. See docs/SECURITY.md.")] = None,
    public_key: Annotated[str | None, typer.Option(
        metavar="FILE", help="The sealer's public key (PEM) to check the checkpoint's signature; without it "
             "the key inside the checkpoint is used (proves the file intact, not its author).")
    ] = None,
    projections: Annotated[bool, typer.Option(
        "--projections/--no-projections",
        help="Also check that each stored projection equals a rebuild from position 0 "
             "(projection_mismatch); only when the whole store is verified.")] = True,
    summary: Annotated[bool, typer.Option(
        "--summary", help="Print only the summary lines (counts by code, integrity, head), "
                          "not each finding.")] = False,
    quiet: Annotated[bool, typer.Option(
        "--quiet", "-q", help="Print nothing: the exit code says it all (errors still go "
                              "to stderr).")] = False,
) -> None:
    """Re-derive every selected round under its stored rulebook and check the integrity chain.

    Reads only. Exit code 0: nothing found. 1: findings. 2: usage error, no ledger at the URL,
    or a --table/--game/--round that matches no round. 3: integrity broken (wins over 1).
    """
    if game is not None and game not in GAME_KEYS:
        fail(f"--game must be one of {' '.join(GAME_KEYS)}")
    sealed, key = _checkpoint(checkpoint, public_key) if checkpoint else (None, None)
    selection = Selection(table=table, game=game, round=round)
    app = open_app(db)
    try:
        report = _run(app, selection,
                      sealed.position.head if sealed and not expect_head else expect_head,
                      jobs=jobs, db=db)
        if sealed is not None:
            _check_checkpoint(app, sealed, report)
        if projections and table is None and game is None and round is None and report.integrity_ok:
            _check_projections(app, report)
    finally:
        app.close()
    selected = table is not None or game is not None or round is not None
    if selected and report.rounds_checked == 0 and report.integrity_ok:
        fail("no round matches " + " ".join(
            f"--{name} {value}" for name, value in (("table", table), ("game", game),
                                                    ("round", round)) if value is not None)
             + " (nothing was checked)")
    seal_info = _checkpoint_json(checkpoint, sealed, key, public_key) if sealed else None
    if as_json:
        print_json({**report.to_json(), "checkpoint": seal_info})
    elif not quiet:
        print_verify(report, findings=not summary)
        if seal_info is not None:
            out.print(f"checkpoint {checkpoint}: link {seal_info['links']} "
                      f"({seal_info['events']} events), head {seal_info['head']}, sealed "
                      f"{seal_info['sealed_at']}; signature checked with key "
                      f"{seal_info['key_id']} "
                      + ("from --public-key" if public_key else
                         "taken from the checkpoint itself (proves the file intact, not its "
                         "author: give --public-key)"), markup=False)
    raise typer.Exit(code=report.exit_code)


def _checkpoint_json(path: str | None, sealed: Checkpoint, key: Ed25519PublicKey | None,
                     public_key: str | None) -> dict[str, Any]:
    """Which checkpoint was checked, and with which key (``checkpoint`` in verify's JSON)."""
    pos = sealed.position
    return {"file": path, "links": pos.links, "events": pos.events, "head": pos.head,
            "sealed_at": sealed.sealed_at, "store": sealed.store,
            "key_id": key_id(key) if key is not None else sealed.key_id,
            "key_source": "public_key" if public_key else "checkpoint",
            "public_key_file": public_key}


def _checkpoint(path: str, public_key: str | None) -> tuple[Checkpoint, Ed25519PublicKey]:
    """Read a checkpoint and check its signature: a bad one is tampering (exit 3)."""
    try:
        sealed = read_checkpoint(path)
        key = load_public_key(public_key) if public_key else None
    except SealError as exc:
        fail(f"{exc}")
    try:
        checked = sealed.check_signature(key)
    except SealError as exc:
        fail(f"{exc}", 3, prefix="integrity broken")
    return sealed, checked


def _check_checkpoint(app: LedgerApp, sealed: Checkpoint, report: VerifyReport) -> None:
    findings = checkpoint_findings(app, sealed)
    if findings:
        report.findings = findings + report.findings
        report.integrity_ok = False


def _check_projections(app: LedgerApp, report: VerifyReport) -> None:
    """Rebuild equals incremental, for every view the updater has stored (issue 6)."""
    report.findings += check_projections(app)


def _run(app: LedgerApp, selection: Selection, expect_head: str | None, *, jobs: int = 1,
         db: str | None = None) -> VerifyReport:
    try:
        if jobs > 1:
            return _run_parallel(selection, expect_head, jobs, db)
        return _run_one(app, selection, expect_head)
    except (OperationalError, InterfaceError) as exc:  # the server went away: not tampering
        fail(f"the store cannot be reached: {exc}")
    except Exception as exc:  # e.g. "database disk image is malformed" on a damaged file
        return VerifyReport(integrity_ok=False, findings=[unreadable_store(exc)])


def _run_one(app: LedgerApp, selection: Selection, expect_head: str | None) -> VerifyReport:
    """One process, with a progress bar on a terminal."""
    try:
        total = app.recorder.max_notification_id() or 0
    except Exception:  # a damaged file: let verify report it
        total = 0
    bar = progress_bar(total, "verify")
    if bar is None:
        return verify_store(app, selection, expect_head=expect_head)
    with bar:
        task = bar.add_task("verify", total=total)
        return verify_store(app, selection, expect_head=expect_head,
                            on_progress=lambda n: bar.advance(task, n))


def _run_parallel(selection: Selection, expect_head: str | None, jobs: int,
                  db: str | None) -> VerifyReport:
    """``--jobs N``: each worker opens the store itself (no progress bar)."""
    return verify_parallel(database_url(db), selection, jobs=jobs, expect_head=expect_head)

ORDER = 20
COMMANDS = [verify]
