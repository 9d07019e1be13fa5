"""``ledger seal`` and ``ledger keygen``: signed, stored checkpoints of the chain head with the
verifier's snapshot (docs/SECURITY.md, docs/INTEGRITY.md)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from cli.context import DbOption, open_app
from cli.contract import fail
from cli.render import print_json, working
from ledger.merkle.heads import stored_origin
from ledger.merkle.sealing import NoteRefused, NoteSealed, seal_tree
from ledger.proof.checkpoints import (
    NO_SEALING_KEY,
    Checkpoints,
    CheckpointStore,
    SealRefused,
    StoredCheckpoint,
    note_path,
    read_checkpoints,
    sealing_key,
    snapshot_file_bytes,
    snapshot_path,
    write_snapshot_file,
)
from ledger.proof.checkpoints import seal as incremental_seal
from ledger.proof.seal import (
    SEAL_KEY_ENV,
    SealError,
    generate_key,
    key_id,
    load_private_key,
    private_pem,
    public_pem,
)
from ledger.storage.store import LedgerApp, database_url, redact
from ledger.witness.client import QuorumError
from ledger.witness.sealing import Witnessed, check_options, witness_note


def seal(
    out: Annotated[
        str | None,
        typer.Option(
            "--out",
            help="Also write the checkpoint to this file (JSON), and its snapshot beside "
            "it (cp.json -> cp.snapshot.json).",
        ),
    ] = None,
    db: DbOption = None,
    key: Annotated[
        str | None,
        typer.Option(
            help=f"The Ed25519 private key (PEM). Default: the {SEAL_KEY_ENV} environment variable "
            "(PEM text or base64 of the 32 raw bytes)."
        ),
    ] = None,
    label: Annotated[
        str | None,
        typer.Option(help="A name for the store in the checkpoint (default: the database URL, no password)."),
    ] = None,
    full: Annotated[
        bool,
        typer.Option(
            "--full",
            help="Verify the whole store instead of continuing from the newest stored "
            "checkpoint (e.g. after a key change).",
        ),
    ] = False,
    list_: Annotated[
        bool,
        typer.Option(
            "--list",
            help="Only list the stored checkpoints, each checked with the sealing public "
            "key (--public-key, LEDGER_SEAL_PUBLIC_KEY or the one named at ledger "
            "init; no private key needed), and name every invalid row (exit 3).",
        ),
    ] = False,
    public_key: Annotated[
        str | None,
        typer.Option(
            "--public-key", metavar="FILE", help="With --list: the sealing public key to check the rows with."
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the checkpoint (with --list: the list).")
    ] = False,
    witness: Annotated[
        list[str] | None,
        typer.Option(
            "--witness",
            metavar="URL_OR_DIR",
            help="A witness to cosign the checkpoint note (repeatable): its URL (C2SP tlog-witness), "
            "or a directory for an offline witness (`ledger witness cosign`). See "
            "docs/WITNESS.md.",
        ),
    ] = None,
    quorum: Annotated[
        int | None,
        typer.Option(
            "--quorum",
            metavar="K",
            help="How many --witness must cosign, else exit 3 and no cosignature stored (default: all).",
        ),
    ] = None,
) -> None:
    """Verify the store, then sign and store a checkpoint of its head with the verifier's snapshot.

    Incremental: it continues from the newest stored checkpoint (its signature checked with the
    key's public key, its snapshot with its digest, its head with the store), so only what was
    stored since is read; the first seal reads everything. Keep checkpoint files (and the public
    key) where the writer cannot reach them; `ledger verify --checkpoint FILE --public-key PUB`
    proves the store still holds everything they cover, and `verify --since FILE|last` verifies
    only what came after. Rows of the checkpoints table not signed by this key are skipped.
    It also signs and stores the C2SP checkpoint note of the Merkle tree of the rows up to the
    checkpoint (origin, size, root; docs/INTEGRITY.md), written beside --out as cp.note, after
    re-hashing the rows stored since the previous note.
    Exit code 0: sealed (or nothing new to seal). 2: usage error (no key, unreadable key, a key
    other than the store's sealing public key, empty store, an --out that cannot be written;
    checked before anything is stored). 3: the store or its newest checkpoint does not verify
    or its stored Merkle tree does not verify (with --list: a stored row is invalid); with
    --witness, also fewer than --quorum witnesses cosigned (docs/WITNESS.md).
    """
    if list_:
        _list(db, as_json, public_key)
        return
    try:
        private = load_private_key(key)
        required = check_options(witness, quorum)
    except (SealError, QuorumError) as exc:
        fail(f"{exc}")
    if out is not None:
        _check_out(out)
    app = open_app(db)
    try:
        with working("verifying before sealing"):
            sealed = incremental_seal(
                app, private, full=full, store=label if label is not None else redact(database_url(db))
            )
            noted = seal_tree(app, private, sealed.checkpoint)
        snapshot_bytes = snapshot_file_bytes(app, sealed.snapshot)
        witnessed = witness_note(app, noted.note, witness or [], required) if required else None
    except (SealRefused, NoteRefused) as exc:
        fail(str(exc), 3, prefix="integrity broken")
    except QuorumError as exc:
        fail(f"checkpoint note of {noted.note.size} rows not cosigned: {exc}", 3, prefix="integrity broken")
    except SealError as exc:
        fail(str(exc))
    finally:
        app.close()
    checkpoint = sealed.checkpoint
    for skipped in sealed.skipped:
        sys.stderr.write(
            f"note: stored checkpoint row {skipped.number!r} skipped (not valid "
            f"under key {checkpoint.key_id}): {skipped.reason}\n"
        )
    if out is not None:
        try:
            Path(out).write_text(checkpoint.dumps(), encoding="utf-8")
            write_snapshot_file(out, snapshot_bytes)
            note_path(out).write_text(
                witnessed.note.cosigned() if witnessed else noted.note.note, encoding="utf-8"
            )
        except OSError as exc:
            fail(
                f"checkpoint {sealed.number} is stored, but {out} could not be written: {exc.strerror or exc}"
            )
    if as_json:
        print_json(
            {
                **checkpoint.to_json(),
                "number": sealed.number,
                "new": sealed.new,
                "resumed_from": sealed.resumed_from,
                "note": _note_json(noted),
                **({"witnesses": witnessed.to_json()} if witnessed else {}),
            }
        )
        return
    pos = checkpoint.position
    where = f" -> {out}, {snapshot_path(out)} and {note_path(out)}" if out is not None else ""
    if not sealed.new:
        typer.echo(
            f"nothing stored since checkpoint {sealed.number} (link {pos.links}, head {pos.head}){where}"
        )
        _echo_note(noted)
        _echo_witnessed(witnessed)
        return
    since = (
        f"continued from checkpoint {sealed.resumed_from}, {sealed.events_read} events read"
        if sealed.resumed_from is not None
        else f"full pass, {sealed.events_read} events read"
    )
    typer.echo(
        f"sealed checkpoint {sealed.number}: link {pos.links} ({pos.events} events) at row "
        f"{checkpoint.row}, head {pos.head}, key {checkpoint.key_id} ({since}){where}"
    )
    _echo_note(noted)
    _echo_witnessed(witnessed)


def _echo_witnessed(witnessed: Witnessed | None) -> None:
    if witnessed is not None:
        typer.echo(
            f"checkpoint note cosigned by {', '.join(witnessed.names())} (quorum "
            f"{witnessed.quorum}; {witnessed.added} new cosignature(s) stored)"
        )


def _note_json(noted: NoteSealed) -> dict[str, object]:
    body = noted.note.body
    return {
        "origin": body.origin,
        "size": body.size,
        "root": body.root.hex(),
        "new": noted.new,
        "rehashed": noted.rehashed,
        "text": noted.note.note,
    }


def _echo_note(noted: NoteSealed) -> None:
    body = noted.note.body
    what = "signed" if noted.new else "already signed"
    typer.echo(f"checkpoint note {what}: {body.origin}, tree of {body.size} rows, root {body.root.hex()}")


def _check_out(out: str) -> None:
    """``--out``: its folder must exist and be writable before anything is stored (exit 2)."""
    path = Path(out)
    folder = path.parent
    if not folder.is_dir():
        fail(f"--out {out}: the folder {folder} does not exist (nothing was sealed)")
    for target in (path, snapshot_path(path), note_path(out)):
        if target.is_dir():
            fail(f"--out {out}: {target} is a folder (nothing was sealed)")
        if (target.exists() and not os.access(target, os.W_OK)) or not os.access(folder, os.W_OK):
            fail(f"--out {out}: {target} cannot be written (nothing was sealed)")


def _list(db: str | None, as_json: bool, public_key: str | None) -> None:
    """``seal --list``: every stored checkpoint, oldest first, checked; the invalid rows named
    (exit 3)."""
    app = open_app(db)
    try:
        key = sealing_key(app, public_key)
        found = read_checkpoints(app, key)
        bad_snapshots = _bad_snapshots(app, found)
        origin = stored_origin(app)
    except SealError as exc:
        fail(str(exc))
    finally:
        app.close()
    invalid = [i.to_json() for i in found.invalid] + bad_snapshots
    valid = [s for s in found.valid if s.number not in {b["number"] for b in bad_snapshots}]
    if not found.trusted and not as_json:  # --json says it: key_id null
        sys.stderr.write(
            f"note: {NO_SEALING_KEY}; each row was checked with the key it "
            "carries (intact, not who sealed it)\n"
        )
    if as_json:
        print_json(
            {
                "checkpoints": [s.to_json() for s in valid],
                "invalid": invalid,
                "key_id": found.key.key_id if found.key else None,
                "key_source": found.key.source if found.key else None,
                "origin": origin,
            }
        )
    else:
        typer.echo(f"origin: {origin or '(not set: ledger init --origin NAME, or the first seal)'}")
        if not valid and not invalid:
            typer.echo("no stored checkpoint (ledger seal stores one)")
        else:
            _print_listing(valid)
    for bad in invalid:
        sys.stderr.write(
            f"integrity broken: stored checkpoint row {bad['number']!r} is "
            f"invalid (skipped by every command): {bad['reason']}\n"
        )
    if invalid:
        raise typer.Exit(code=3)


def _bad_snapshots(app: LedgerApp, found: Checkpoints) -> list[dict[str, object]]:
    """The valid checkpoints whose stored snapshot does not match the digest they sign."""
    bad: list[dict[str, object]] = []
    with CheckpointStore(app, create=False) as table:
        for stored in found.valid:
            try:
                table.snapshot(stored)
            except SealError as exc:
                bad.append({"number": stored.number, "reason": str(exc)})
    return bad


def _print_listing(valid: list[StoredCheckpoint]) -> None:
    typer.echo(
        f"{'number':>6} {'position':>10} {'links':>7} {'events':>10}  sealed_at                         head"
    )
    for s in valid:
        pos = s.checkpoint.position
        typer.echo(
            f"{s.number:>6} {s.position:>10} {pos.links:>7} {pos.events:>10}  "
            f"{s.checkpoint.sealed_at:<32}  {pos.head}"
        )


def keygen(
    out: Annotated[
        str,
        typer.Option(
            "--out", help="The private key file to write (PEM, mode 0600); the public key goes to OUT.pub."
        ),
    ],
    force: Annotated[bool, typer.Option(help="Overwrite existing files.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Make an Ed25519 sealing key pair (same files as `openssl genpkey -algorithm ed25519`).

    Give the private key only to the sealer; give the public key (OUT.pub) to auditors.
    """
    private_path, public_path = Path(out), Path(out + ".pub")
    for path in (private_path, public_path):
        if path.exists() and not force:
            fail(f"{path} exists (use --force to overwrite)")
    key = generate_key()
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as stream:
        stream.write(private_pem(key))
    public_path.write_bytes(public_pem(key.public_key()))
    if as_json:
        print_json(
            {
                "private_key": str(private_path),
                "public_key": str(public_path),
                "key_id": key_id(key.public_key()),
            }
        )
        return
    typer.echo(
        f"wrote {private_path} (private, keep it from the writer) and {public_path} "
        f"(public); key {key_id(key.public_key())}"
    )


ORDER = 40
COMMANDS = [seal, keygen]
