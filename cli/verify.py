"""``ledger verify``: replay rounds, report findings, check integrity (FEED §10)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from eventsourcing.persistence import InterfaceError, OperationalError

from cli.context import DbOption, open_app
from cli.contract import fail
from cli.quorum import QuorumOption, WitnessKeyOption, asked, notes_for, require, require_segment
from cli.render import err, out, print_json, print_verify, progress_bar
from ledger.domain.errors import SealError, UsageError
from ledger.domain.findings import Finding
from ledger.feed.types import GAME_KEYS
from ledger.merkle.sample import SampleError
from ledger.merkle.sample import sample as spot_sample
from ledger.proof.checkpoints import (
    NO_SEALING_KEY,
    SealingKey,
    latest,
    load_snapshot,
    read_checkpoints,
    resume_findings,
    sealing_key,
    snapshot_path,
)
from ledger.proof.seal import (
    Checkpoint,
    checkpoint_findings,
    key_id,
    load_public_key,
    read_checkpoint,
)
from ledger.services.segments import (
    Part,
    parse_segment,
    part_from_json,
    verify_parallel_segments,
    verify_segment,
)
from ledger.services.segments import merge as merge_parts
from ledger.storage.store import LedgerApp, database_url
from ledger.verify.engine import Selection, VerifyReport, verify_store
from ledger.verify.integrity import unreadable_store
from ledger.verify.snapshot import Snapshot, SnapshotError
from ledger.witness.quorum import Quorum
from projections.check import check_projections


def verify(
    db: DbOption = None,
    table: Annotated[str | None, typer.Option(metavar="TABLE", help="Only rounds of this table.")] = None,
    game: Annotated[
        str | None,
        typer.Option(metavar="GAME", help="Only rounds of this game: " + " ".join(GAME_KEYS) + "."),
    ] = None,
    round: Annotated[
        str | None, typer.Option("--round", metavar="ROUND", help="Only rounds with this id.")
    ] = None,
    expect_head: Annotated[
        str | None,
        typer.Option(
            metavar="DIGEST",
            help="Fail (exit 3) unless the store still contains this head digest, printed by an "
            "earlier verify: catches truncation of the newest events.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            min=1,
            help="Processes: where stored checkpoints cut the log evenly enough (and no "
            "--table/--game/--round), each verifies consecutive segments (every row read "
            "once); else each judges whole tables (the integrity chain checked once). The "
            "findings are the same for any N.",
        ),
    ] = 1,
    checkpoint: Annotated[
        str | None,
        typer.Option(
            metavar="FILE",
            help="A signed checkpoint (ledger seal): fail (exit 3) unless the store still holds "
            "every event it covers, unchanged. See docs/SECURITY.md.",
        ),
    ] = None,
    public_key: Annotated[
        str | None,
        typer.Option(
            metavar="FILE",
            help="The sealer's public key (PEM) to check the checkpoint's signature "
            "(default: LEDGER_SEAL_PUBLIC_KEY, else the key named at ledger init); without any, "
            "a checkpoint FILE is checked with the key inside it (proves the file intact, not "
            "its author) and a stored checkpoint is not used.",
        ),
    ] = None,
    projections: Annotated[
        bool,
        typer.Option(
            "--projections/--no-projections",
            help="Also check that each stored projection equals a rebuild from position 0 "
            "(projection_mismatch); only when the whole store is verified.",
        ),
    ] = True,
    summary: Annotated[
        bool,
        typer.Option(
            "--summary",
            help="Print only the summary lines (counts by code, integrity, head), not each finding.",
        ),
    ] = False,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet", "-q", help="Print nothing: the exit code says it all (errors still go to stderr)."
        ),
    ] = False,
    since: Annotated[
        str | None,
        typer.Option(
            metavar="CHECKPOINT",
            help="Verify only what came after a checkpoint: a checkpoint FILE (its snapshot beside "
            "it, FILE.snapshot.json, else the stored one) or `last` (the newest stored "
            "checkpoint valid under the sealing public key; with no key given or configured, "
            "the whole store is verified, and said so). Checks its signature, that the store "
            "holds its head and the rows it covers (count and sum of ids), and its snapshot; "
            "exit 3 if any does not match. See docs/INTEGRITY.md.",
        ),
    ] = None,
    segment: Annotated[
        str | None,
        typer.Option(
            metavar="A..B",
            help="Verify one segment between stored checkpoints A and B (0 = the start of the "
            "store, B may be `head`; `ledger seal --list`), from A's snapshot, ending with a "
            "check that the derived state equals B's (exit 3 if not). A and B must be valid "
            "under the sealing public key (--public-key or configured; exit 2 without one). "
            "Every segment verified is a full verification; merge their --json reports with "
            "--merge.",
        ),
    ] = None,
    merge: Annotated[
        bool,
        typer.Option(
            "--merge",
            help="Merge REPORTS, the --json outputs of `verify --segment` covering the "
            "store from 0 to head, into the report of one full pass (reads no "
            "store). Refuses (exit 2) reports of another store, that saw another "
            "head, or whose checkpoints do not chain.",
        ),
    ] = False,
    sample: Annotated[
        int | None,
        typer.Option(
            "--sample",
            metavar="N",
            min=1,
            help="Spot-audit history: re-hash N rows drawn uniformly from the tree of the newest "
            "checkpoint note and check each one's Merkle proof against the root it signs "
            "(needs --public-key); prints the chance a rewrite of a share of history went "
            "unseen. Alone, or with --since (which does not see rows before its checkpoint). "
            "With --witness-key: against the newest note --quorum of them cosigned (exit 3 if "
            "none). Exit 3 if a drawn row does not match. See docs/INTEGRITY.md.",
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            metavar="S",
            help="With --sample: the seed of the draw (default: a fresh "
            "random one, printed, so a run can be repeated).",
        ),
    ] = None,
    reports: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="REPORTS", help="With --merge: the segment reports (JSON files).", show_default=False
        ),
    ] = None,
    witness_key: WitnessKeyOption = None,
    quorum: QuorumOption = None,
) -> None:
    """Re-derive every selected round under its stored rulebook and check the integrity chain.

    Reads only. --since verifies only what came after a checkpoint, --segment one segment
    between stored checkpoints, --merge joins segment reports (docs/INTEGRITY.md,
    docs/OPERATIONS.md). Exit code 0: nothing found. 1: findings. 2: usage error, no ledger at
    the URL, or a --table/--game/--round that matches no round. 3: integrity broken (wins
    over 1): also a checkpoint or snapshot that does not match, or, with --witness-key, a
    checkpoint without --quorum valid cosignatures by those witnesses (docs/WITNESS.md).
    """
    if game is not None and game not in GAME_KEYS:
        fail(f"--game must be one of {' '.join(GAME_KEYS)}")
    selection = Selection(table=table, game=game, round=round)
    selected = table is not None or game is not None or round is not None
    _exclusive(
        since=since,
        segment=segment,
        merge=merge,
        checkpoint=checkpoint,
        selected=selected,
        jobs=jobs,
        reports=reports,
    )
    show = _Show(as_json=as_json, quiet=quiet, summary=summary)
    if merge:
        _verify_merge(reports or [], show)
    witnesses = asked(witness_key, quorum)
    if sample is not None or seed is not None:
        _check_sample_options(
            sample, public_key, since=since, segment=segment, checkpoint=checkpoint, selected=selected
        )
        if since is None:
            _sample_only(db, sample or 0, seed, public_key or "", witnesses, as_json=as_json, quiet=quiet)
    if witnesses is not None and since is None and segment is None and checkpoint is None:
        fail("--witness-key goes with --since, --segment or --checkpoint")
    keys = _Keys(public_key, expect_head, witnesses)
    if since is not None:
        run = _verify_since(db, since, selection, keys, sample, seed)
    elif segment is not None:
        run = _verify_segment(db, segment, keys)
    else:
        run = _verify_store(
            db, selection, checkpoint, keys, jobs=jobs, projections=projections and not selected
        )
    if selected and run.report.rounds_checked == 0 and run.report.integrity_ok:
        _no_round_matches(selection)
    _finish(run, show, checkpoint, witnesses)


@dataclass(frozen=True)
class _Show:
    """How the report is printed: ``--json``, ``--quiet``, ``--summary``."""

    as_json: bool
    quiet: bool
    summary: bool


@dataclass(frozen=True)
class _Keys:
    """What a mode checks the store against: the sealer's public key file, the expected head
    and the witnesses whose cosignatures are required."""

    public_key: str | None
    expect_head: str | None
    witnesses: Quorum | None


@dataclass
class _Run:
    """What one mode of verify found: the report, the JSON's context keys (``checkpoint``,
    ``since``, ``note``, ``sample``, ``segment``, ``keys``) and the witnesses who cosigned."""

    report: VerifyReport
    extra: dict[str, Any] = field(default_factory=lambda: {"checkpoint": None, "since": None})
    cosigners: list[str] = field(default_factory=list)


def _verify_merge(reports: list[str], show: _Show) -> None:
    """``--merge``: the segment reports joined into the report of one full pass (no store)."""
    merged, parts = merge_reports(reports)
    extra = {"checkpoint": None, "since": None, "segments": [p.segment_json() for p in parts]}
    _print(merged, as_json=show.as_json, quiet=show.quiet, summary=show.summary, extra=extra)
    raise typer.Exit(code=merged.exit_code)


def _verify_since(
    db: str | None, since: str, selection: Selection, keys: _Keys, sample: int | None, seed: int | None
) -> _Run:
    """``--since CHECKPOINT``: only what came after the checkpoint (and ``--sample``'s audit)."""
    app = open_app(db)
    try:
        report, info = _since(app, since, keys.public_key, selection, keys.expect_head, keys.witnesses)
        run = _Run(report)
        run.extra["since"] = info
        if info is None:
            run.extra["note"] = f"{NO_SEALING_KEY}: the whole store was verified"
        else:
            run.cosigners = info.pop("cosigners")
        if sample is not None:
            run.extra["sample"] = _sample(app, sample, seed, keys.public_key or "", keys.witnesses)
    finally:
        app.close()
    return run


def _verify_segment(db: str | None, segment: str, keys: _Keys) -> _Run:
    """``--segment A..B``: one segment between stored checkpoints, its quorum checked first."""
    app = open_app(db)
    try:
        cosigners = require_segment(keys.witnesses, app, segment, keys.public_key)
        report, part, parts_keys = _segment(app, segment, keys.public_key, keys.expect_head)
    finally:
        app.close()
    run = _Run(report, cosigners=cosigners)
    run.extra["segment"], run.extra["keys"] = part, parts_keys
    return run


def _verify_store(
    db: str | None, selection: Selection, checkpoint: str | None, keys: _Keys, *, jobs: int, projections: bool
) -> _Run:
    """The whole store (or the selected rounds), against a checkpoint FILE if one is given,
    and the stored projections against a rebuild when ``projections``."""
    sealed, key = _checkpoint(checkpoint, keys.public_key) if checkpoint else (None, None)
    app = open_app(db)
    cosigners: list[str] = []
    try:
        if sealed is not None and key is not None:
            cosigners = require(
                keys.witnesses, sealed, key, notes_for(app, sealed, checkpoint), f"checkpoint {checkpoint}"
            )
        if jobs > 1:
            _configured_key(app)
        head = sealed.position.head if sealed and not keys.expect_head else keys.expect_head
        report = _run(app, selection, head, jobs=jobs, db=db)
        if sealed is not None:
            _check_checkpoint(app, sealed, report)
        if projections and report.integrity_ok:
            _check_projections(app, report)
    finally:
        app.close()
    run = _Run(report, cosigners=cosigners)
    if sealed is not None:
        run.extra["checkpoint"] = _checkpoint_json(checkpoint, sealed, key, keys.public_key)
    return run


def _no_round_matches(selection: Selection) -> None:
    """Exit 2: a --table/--game/--round that selects no round."""
    chosen = (("table", selection.table), ("game", selection.game), ("round", selection.round))
    named = " ".join(f"--{name} {value}" for name, value in chosen if value is not None)
    fail(f"no round matches {named} (nothing was checked)")


def _finish(run: _Run, show: _Show, checkpoint: str | None, witnesses: Quorum | None) -> None:
    """Print the report and its context, and exit with its code (3 if a sampled row failed)."""
    _print(run.report, as_json=show.as_json, quiet=show.quiet, summary=show.summary, extra=run.extra)
    extra = run.extra
    if not show.as_json and not show.quiet:
        _print_context(extra, checkpoint)
        if run.cosigners:
            out.print(
                f"checkpoint note cosigned by {', '.join(run.cosigners)} (quorum "
                f"{witnesses.required if witnesses else 0})",
                markup=False,
            )
        if "sample" in extra:
            _print_sample(extra["sample"])
    sampled_ok = "sample" not in extra or not extra["sample"]["problems"]
    raise typer.Exit(code=run.report.exit_code if sampled_ok else 3)


def _check_sample_options(
    sample: int | None,
    public_key: str | None,
    *,
    since: str | None,
    segment: str | None,
    checkpoint: str | None,
    selected: bool,
) -> None:
    if sample is None:
        fail("--seed goes with --sample N")
    if segment is not None or checkpoint is not None or selected:
        fail("--sample goes alone or with --since (not --segment, --checkpoint, --table, --game or --round)")
    if public_key is None:
        fail("--sample needs the sealer's public key (--public-key FILE) to open the checkpoint note")


def _sample(
    app: LedgerApp, count: int, seed: int | None, public_key: str, witnesses: Quorum | None = None
) -> dict[str, Any]:
    """The ``sample`` object of the report; exit 2 or 3 if it cannot be drawn (with
    ``witnesses``: exit 3 when no stored note carries their quorum of cosignatures)."""
    keys = [w.vkey() for w in witnesses.witnesses] if witnesses else []
    try:
        return spot_sample(
            app,
            count,
            load_public_key(public_key),
            seed=seed,
            witnesses=keys,
            quorum=witnesses.required if witnesses else 0,
        ).to_json()
    except SealError as exc:
        fail(f"{exc}")
    except SampleError as exc:
        fail(str(exc), exc.code, prefix="integrity broken" if exc.code == 3 else "error")


def _sample_only(
    db: str | None,
    count: int,
    seed: int | None,
    public_key: str,
    witnesses: Quorum | None,
    *,
    as_json: bool,
    quiet: bool,
) -> None:
    """``verify --sample N`` alone: the spot audit, no pass over the log."""
    app = open_app(db)
    try:
        found = _sample(app, count, seed, public_key, witnesses)
    finally:
        app.close()
    if as_json:
        print_json({"sample": found})
    elif not quiet:
        _print_sample(found)
    raise typer.Exit(code=3 if found["problems"] else 0)


def _print_sample(found: dict[str, Any]) -> None:
    for problem in found["problems"]:
        out.print(f"sample: {problem}", markup=False)
    chances = ", ".join(f"{float(share):.1%} of them: {p:.3g}" for share, p in found["unseen_chance"].items())
    verdict = (
        f"{len(found['problems'])} do not match: integrity broken"
        if found["problems"]
        else "every one matches"
    )
    out.print(
        f"sample: {found['rows']} of the {found['size']} rows of {found['origin']}'s "
        f"checkpoint note (root {found['root']}) re-hashed and proven, {verdict}; "
        f"{found['hashes_read']} stored hashes read; seed {found['seed']}",
        markup=False,
    )
    out.print(f"sample: chance a rewrite would have gone unseen, had it touched {chances}", markup=False)


def _exclusive(
    *,
    since: str | None,
    segment: str | None,
    merge: bool,
    checkpoint: str | None,
    selected: bool,
    jobs: int,
    reports: list[str] | None,
) -> None:
    """One line for each combination of options that makes no sense."""
    if reports and not merge:
        fail(f"unexpected argument {reports[0]!r} (report files go with --merge)")
    modes = [
        name
        for name, on in (
            ("--since", since is not None),
            ("--segment", segment is not None),
            ("--merge", merge),
            ("--checkpoint", checkpoint is not None),
        )
        if on
    ]
    if len(modes) > 1:
        fail(f"{modes[0]} and {modes[1]} cannot be combined")
    if merge and not reports:
        fail("--merge needs the segment reports: ledger verify --merge R1.json R2.json ...")
    if (segment is not None or merge) and selected:
        fail(f"{modes[0]} verifies whole segments: no --table, --game or --round")
    if (since is not None or segment is not None or merge) and jobs > 1:
        fail(f"{modes[0]} runs in one process (run segments as separate jobs instead)")


def _print(report: VerifyReport, *, as_json: bool, quiet: bool, summary: bool, extra: dict[str, Any]) -> None:
    if as_json:
        print_json({**report.to_json(), **extra})
    elif not quiet:
        print_verify(report, findings=not summary)


_SOURCES = {
    "public_key": "from --public-key",
    "env": "from LEDGER_SEAL_PUBLIC_KEY",
    "init": "named at ledger init",
    "checkpoint": "taken from the checkpoint itself (proves the file intact, not its "
    "author: give --public-key)",
}


def _source(info: dict[str, Any]) -> str:
    return _SOURCES[info["key_source"]]


def _print_context(extra: dict[str, Any], checkpoint: str | None) -> None:
    """The readable lines saying which checkpoint, snapshot or segment was used."""
    seal_info, since_info, part = extra["checkpoint"], extra["since"], extra.get("segment")
    if extra.get("note"):
        err.print(f"note: {extra['note']}", markup=False)
    if seal_info is not None:
        out.print(
            f"checkpoint {checkpoint}: link {seal_info['links']} "
            f"({seal_info['events']} events), head {seal_info['head']}, sealed "
            f"{seal_info['sealed_at']}; signature checked with key "
            f"{seal_info['key_id']} {_source(seal_info)}",
            markup=False,
        )
    if since_info is not None:
        out.print(
            f"since checkpoint {since_info['checkpoint']}"
            + (f" (number {since_info['number']})" if since_info["number"] else "")
            + f": row {since_info['position']}, link {since_info['links']}, sealed "
            f"{since_info['sealed_at']}; snapshot from the {since_info['snapshot_source']}"
            f"; signature checked with key {since_info['key_id']} "
            f"{_source(since_info)}",
            markup=False,
        )
    if part is not None:
        out.print(
            f"segment {part['from']}..{part['to']}: rows {part['from_position']}.."
            f"{part['to_position'] if part['to_position'] is not None else 'head'}"
            + (
                ""
                if part["to"] == "head"
                else f"; the state derived at checkpoint {part['to']} "
                + (
                    "equals its snapshot"
                    if part["integrity"] == "ok"
                    else "was not checked equal to its snapshot"
                )
            ),
            markup=False,
        )


def _since(
    app: LedgerApp,
    since: str,
    public_key: str | None,
    selection: Selection,
    expect_head: str | None,
    witnesses: Quorum | None = None,
) -> tuple[VerifyReport, dict[str, Any] | None]:
    """``--since``: check the checkpoint and its snapshot (and, with witness keys, the quorum of
    its note), then verify only what came after. ``--since last`` with no sealing public key:
    the whole store, and ``None``."""
    number: int | None = None
    path: str | None = None
    try:
        key = sealing_key(app, public_key)
        if since == "last":
            if key is None:  # an unchecked stored checkpoint is never resumed from
                if witnesses is not None:
                    fail(
                        "--witness-key with --since last needs the sealing public key "
                        "(LEDGER_SEAL_PUBLIC_KEY, --public-key or ledger init --seal-public-key)"
                    )
                return _run(app, selection, expect_head), None
            sealed, number = _last(app, key)
        else:
            path = since
            sealed = read_checkpoint(since)
    except SealError as exc:
        fail(f"{exc}")
    if sealed.snapshot is None:
        fail(
            f"{since} is a {sealed.format} checkpoint: it signs no snapshot (verify "
            "--checkpoint checks it; seal again for one --since can start from)"
        )
    try:
        checked = sealed.check_signature(key.key if key else None)
    except SealError as exc:
        fail(f"{exc}", 3, prefix="integrity broken")
    cosigners = require(witnesses, sealed, checked, notes_for(app, sealed, path), f"--since {since}")
    pos = sealed.position
    info: dict[str, Any] = {
        "checkpoint": since,
        "file": path,
        "number": number,
        "position": sealed.row,
        "links": pos.links,
        "events": pos.events,
        "head": pos.head,
        "snapshot": sealed.snapshot,
        "snapshot_source": None,
        "sealed_at": sealed.sealed_at,
        "store": sealed.store,
        "key_id": key_id(checked),
        "key_source": key.kind if key else "checkpoint",
        "public_key_file": public_key,
        "cosigners": cosigners,
    }  # popped by verify()
    problems = resume_findings(app, sealed)
    if problems:
        return VerifyReport(integrity_ok=False, findings=problems), info
    try:
        found = load_snapshot(app, sealed, path)
    except SnapshotError as exc:
        return VerifyReport(
            integrity_ok=False,
            findings=[
                Finding(
                    "chain_broken",
                    None,
                    None,
                    rule="integrity (--since)",
                    message=str(exc),
                    expected={"snapshot": sealed.snapshot},
                )
            ],
        ), info
    except SealError as exc:
        fail(f"{exc}")
    if found is None:
        fail(
            f"no snapshot of checkpoint {since}: neither "
            + (f"{snapshot_path(path)} nor " if path else "")
            + "the store holds one"
        )
    snapshot, info["snapshot_source"] = found
    return _run(app, selection, expect_head, start=snapshot), info


def _configured_key(app: LedgerApp) -> None:
    """``--jobs``: an unreadable sealing public key is a usage error (exit 2), not damage."""
    try:
        sealing_key(app)
    except SealError as exc:
        fail(str(exc))


def _last(app: LedgerApp, key: SealingKey) -> tuple[Checkpoint, int]:
    """``--since last``: the newest stored checkpoint valid under ``key``; exit 3 if the table
    holds only invalid rows, 2 if it holds none."""
    stored = latest(app, key)
    if stored is not None:
        return stored.checkpoint, stored.number
    found = read_checkpoints(app, key)  # none valid: why (rarely)
    if found.invalid:
        fail(
            f"--since last: no stored checkpoint is valid under key {key.key_id} "
            f"({key.source}); {len(found.invalid)} invalid row(s): ledger seal --list names "
            "them",
            3,
            prefix="integrity broken",
        )
    fail("--since last: the store holds no checkpoint (run ledger seal first)")


def _segment(
    app: LedgerApp, segment: str, public_key: str | None, expect_head: str | None
) -> tuple[VerifyReport, dict[str, Any], list[list[int]]]:
    """``--segment A..B``: one segment, with its single-pass keys for ``--merge``."""
    try:
        start, end = parse_segment(segment)
        key = load_public_key(public_key) if public_key else None
    except (UsageError, SealError) as exc:
        fail(f"{exc}")
    try:
        part = verify_segment(app, start, end, public_key=key, expect_head=expect_head)
    except UsageError as exc:
        fail(f"{exc}")
    except SnapshotError as exc:
        fail(str(exc), 3, prefix="integrity broken")
    except SealError as exc:
        fail(f"{exc}", 3, prefix="integrity broken")
    except (OperationalError, InterfaceError) as exc:
        fail(f"the store cannot be reached: {exc}")
    return part.report, part.segment_json(), [list(k) for k in part.keys]


def merge_reports(paths: list[str]) -> tuple[VerifyReport, list[Part]]:
    """``--merge``: the single-pass report from segment reports (files), and the parts."""
    parts = []
    for path in paths:
        try:
            obj = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            fail(f"cannot read {path}: {exc.strerror or exc}")
        except ValueError as exc:
            fail(f"{path} is not JSON: {exc}")
        try:
            parts.append(part_from_json(obj, path))
        except UsageError as exc:
            fail(f"{exc}")
    try:
        return merge_parts(parts), sorted(parts, key=lambda p: p.start_position)
    except UsageError as exc:
        fail(f"{exc}")


def _checkpoint_json(
    path: str | None, sealed: Checkpoint, key: Ed25519PublicKey | None, public_key: str | None
) -> dict[str, Any]:
    """Which checkpoint was checked, and with which key (``checkpoint`` in verify's JSON)."""
    pos = sealed.position
    return {
        "file": path,
        "links": pos.links,
        "events": pos.events,
        "head": pos.head,
        "sealed_at": sealed.sealed_at,
        "store": sealed.store,
        "key_id": key_id(key) if key is not None else sealed.key_id,
        "key_source": "public_key" if public_key else "checkpoint",
        "public_key_file": public_key,
    }


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


def _run(
    app: LedgerApp,
    selection: Selection,
    expect_head: str | None,
    *,
    jobs: int = 1,
    db: str | None = None,
    start: Snapshot | None = None,
) -> VerifyReport:
    try:
        if jobs > 1:
            return _run_parallel(selection, expect_head, jobs, db)
        return _run_one(app, selection, expect_head, start)
    except (OperationalError, InterfaceError) as exc:  # the server went away: not tampering
        fail(f"the store cannot be reached: {exc}")
    except Exception as exc:  # e.g. "database disk image is malformed" on a damaged file
        return VerifyReport(integrity_ok=False, findings=[unreadable_store(exc)])


def _run_one(
    app: LedgerApp, selection: Selection, expect_head: str | None, start: Snapshot | None = None
) -> VerifyReport:
    """One process, with a progress bar on a terminal (``start``: resume from a snapshot)."""
    try:
        total = (app.recorder.max_notification_id() or 0) - (start.position if start else 0)
    except Exception:  # a damaged file: let verify report it
        total = 0
    bar = progress_bar(max(total, 0), "verify", unit="events")
    if bar is None:
        return verify_store(app, selection, expect_head=expect_head, start=start)
    with bar:
        task = bar.add_task("verify", total=max(total, 0))
        return verify_store(
            app, selection, expect_head=expect_head, start=start, on_progress=lambda n: bar.advance(task, n)
        )


def _run_parallel(selection: Selection, expect_head: str | None, jobs: int, db: str | None) -> VerifyReport:
    """``--jobs N``: each worker opens the store itself (no progress bar); by segments where
    stored checkpoints allow it, else by tables."""
    return verify_parallel_segments(database_url(db), selection, jobs=jobs, expect_head=expect_head)


ORDER = 20
COMMANDS = [verify]
