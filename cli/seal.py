"""``ledger seal`` and ``ledger keygen``: signed checkpoints of the chain head (docs/SECURITY.md)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from cli.context import DbOption, open_app
from cli.contract import fail
from cli.render import print_json, working
from ledger.seal import (
    SEAL_KEY_ENV,
    SealError,
    generate_key,
    key_id,
    load_private_key,
    private_pem,
    public_pem,
    seal_store,
)
from ledger.store import database_url, redact


def seal(
    out: Annotated[str, typer.Option("--out", help="Where to write the checkpoint (JSON).")],
    db: DbOption = None,
    key: Annotated[str | None, typer.Option(
        help=f"The Ed25519 private key (PEM). Default: the {SEAL_KEY_ENV} environment variable "
             "(PEM text or base64 of the 32 raw bytes).")] = None,
    label: Annotated[str | None, typer.Option(
        help="A name for the store in the checkpoint (default: the database URL, no password).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the checkpoint.")] = False,
) -> None:
    """Verify the integrity chain, then write a signed checkpoint of its head.

    Keep checkpoints (and the public key) where the writer cannot reach them; `ledger verify
    --checkpoint FILE --public-key PUB` later proves the store still holds everything they cover.
    Exit code 0: sealed. 2: usage error (no key, unreadable key). 3: the store does not verify.
    """
    try:
        private = load_private_key(key)
    except SealError as exc:
        fail(f"{exc}")
    app = open_app(db)
    try:
        with working("verifying the chain before sealing"):
            checkpoint = seal_store(app, private, store=label if label is not None
                                    else redact(database_url(db)))
    except SealError as exc:
        broken = "does not verify" in str(exc)
        fail(str(exc), 3 if broken else 2, prefix="integrity broken" if broken else "error")
    finally:
        app.close()
    Path(out).write_text(checkpoint.dumps(), encoding="utf-8")
    if as_json:
        print_json(checkpoint.to_json())
    else:
        pos = checkpoint.position
        typer.echo(f"sealed link {pos.links} ({pos.events} events), head {pos.head}, "
                   f"key {checkpoint.key_id} -> {out}")


def keygen(
    out: Annotated[str, typer.Option("--out", help="The private key file to write (PEM, mode "
                                     "0600); the public key goes to OUT.pub.")],
    force: Annotated[bool, typer.Option(help="Overwrite existing files.")] = False,
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
    typer.echo(f"wrote {private_path} (private, keep it from the writer) and {public_path} "
               f"(public); key {key_id(key.public_key())}")

ORDER = 40
COMMANDS = [seal, keygen]
