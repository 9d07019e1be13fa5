"""Building the ledger application from ``--db`` / ``LEDGER_DB``; nothing else."""

from __future__ import annotations

from typing import Annotated

import typer

from ledger.errors import StoreError
from ledger.store import LedgerApp, open_ledger

DbOption = Annotated[
    str | None,
    typer.Option("--db", envvar="LEDGER_DB", show_envvar=True,
                 help="Database URL: sqlite:///PATH (default sqlite:///ledger.db) or "
                      "postgresql://USER@HOST:PORT/DB[?schema=NAME]."),
]


def open_app(db: str | None) -> LedgerApp:
    """Open the ledger, or exit with code 2 and a one-line reason."""
    try:
        return open_ledger(db)
    except StoreError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
