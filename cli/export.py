"""``ledger export``: CSV, Parquet and Beancount files for finance, with a SHA-256 manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cli.commission import cutoff_option, parse_day
from cli.context import DbOption, opened
from cli.contract import fail
from cli.render import out, print_json, working
from ledger.domain.errors import UsageError
from projections.export import FORMATS, export

KEPT = ("MANIFEST.json", "SHA256SUMS")


def export_command(
    folder: Annotated[
        Path,
        typer.Option(
            "--out", metavar="DIR", help="Folder to write (created if missing; must be empty unless --force)."
        ),
    ],
    db: DbOption = None,
    formats: Annotated[
        str, typer.Option("--format", metavar="LIST", help="Comma-separated: " + ",".join(FORMATS) + ".")
    ] = ",".join(FORMATS),
    day_from: Annotated[
        str | None, typer.Option("--from", metavar="DATE", help="First gaming day, YYYY-MM-DD.")
    ] = None,
    day_to: Annotated[
        str | None, typer.Option("--to", metavar="DATE", help="Last gaming day, YYYY-MM-DD.")
    ] = None,
    cutoff_hour: Annotated[
        int | None,
        typer.Option(
            metavar="HOUR",
            help="Gaming-day cut-off hour in Macau time (default: LEDGER_GAMING_DAY_CUTOFF or 6).",
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Write into a folder that is not empty; files of an earlier export "
            "that this one does not write are removed.",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the manifest as JSON.")] = False,
) -> None:
    """Export rounds, bets, settlements, the commission reconciliation and every projection row
    as CSV and/or Parquet, and a Beancount journal of the house's movements per gaming day
    (bean-check clean, balance assertions equal to the projections). MANIFEST.json and
    SHA256SUMS list the SHA-256 of every file (check with: cd DIR && sha256sum -c SHA256SUMS).
    Reads only: views behind the log are completed in memory.

    Exit code 0: written. 2: usage error (or a folder that is not empty, without --force).
    """
    chosen = [f.strip() for f in formats.split(",") if f.strip()]
    first, last = parse_day(day_from, "--from"), parse_day(day_to, "--to")
    cutoff = cutoff_option(cutoff_hour)
    if folder.exists() and not folder.is_dir():
        fail(f"--out {folder} is a file, not a folder")
    before = {p.name for p in folder.iterdir()} if folder.is_dir() else set()
    if before and not force:
        fail(
            f"--out {folder} is not empty ({len(before)} entries): choose an empty folder, "
            "or give --force to replace an earlier export there"
        )
    with opened(db) as app:
        try:
            with working(f"exporting to {folder}"):
                manifest = export(
                    app, folder, formats=chosen, cutoff_hour=cutoff, day_from=first, day_to=last
                )
        except (UsageError, OSError) as exc:
            fail(str(exc))
    written = {str(f["name"]) for f in manifest.files} | set(KEPT)
    for name in sorted(before - written):  # never a stale file beside the new manifest
        stale = folder / name
        if stale.is_file() or stale.is_symlink():
            stale.unlink()
    if as_json:
        print_json(manifest.to_json())
        return
    for f in manifest.files:
        out.print(f"{f['sha256']}  {f['name']}  ({f['rows']} rows, {f['bytes']} bytes)", markup=False)
    out.print(f"manifest: {folder / 'MANIFEST.json'}; store head {manifest.meta['store_head']}", markup=False)


export_command.__name__ = "export"
ORDER = 62
COMMANDS = [export_command]
