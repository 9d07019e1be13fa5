"""``ledger export``: CSV, Parquet and Beancount files for finance, with a SHA-256 manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cli.commission import cutoff_option, parse_day
from cli.context import DbOption, open_app
from cli.contract import fail
from cli.render import out, print_json
from ledger.errors import StoreError, UsageError
from projections.export import FORMATS, export


def export_command(
    to: Annotated[Path, typer.Option("--to", help="Folder to write (created if missing).")],
    db: DbOption = None,
    formats: Annotated[str, typer.Option(
        "--format", help="Comma-separated: " + ",".join(FORMATS) + ".")] = ",".join(FORMATS),
    day_from: Annotated[str | None, typer.Option("--from", help="First gaming day, YYYY-MM-DD.")] = None,
    day_to: Annotated[str | None, typer.Option("--until", help="Last gaming day, YYYY-MM-DD.")] = None,
    cutoff_hour: Annotated[int | None, typer.Option(
        help="Gaming-day cut-off hour in Macau time (default: LEDGER_GAMING_DAY_CUTOFF or 6).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the manifest as JSON.")] = False,
) -> None:
    """Export rounds, bets, settlements, the commission reconciliation and every projection row
    as CSV and/or Parquet, and a Beancount journal of the house's movements per gaming day
    (bean-check clean, balance assertions equal to the projections). MANIFEST.json and
    SHA256SUMS list the SHA-256 of every file (check with: cd DIR && sha256sum -c SHA256SUMS).

    Exit code 0: written. 2: usage error.
    """
    chosen = [f.strip() for f in formats.split(",") if f.strip()]
    first, last = parse_day(day_from, "--from"), parse_day(day_to, "--until")
    cutoff = cutoff_option(cutoff_hour)
    app = open_app(db)
    try:
        manifest = export(app, to, formats=chosen, cutoff_hour=cutoff, day_from=first,
                          day_to=last)
    except (UsageError, StoreError, OSError) as exc:
        fail(f"{exc}")
    finally:
        app.close()
    if as_json:
        print_json(manifest.to_json())
        return
    for f in manifest.files:
        out.print(f"{f['sha256']}  {f['name']}  ({f['rows']} rows, {f['bytes']} bytes)",
                  markup=False)
    out.print(f"manifest: {to / 'MANIFEST.json'}; store head {manifest.meta['store_head']}",
              markup=False)


export_command.__name__ = "export"
ORDER = 62
COMMANDS = [export_command]
