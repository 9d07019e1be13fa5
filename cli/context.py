"""What every command shares: the ledger from ``--db`` / ``LEDGER_DB``, and the usage checks
(round targets, output formats, a named table or pool) that exit 2 with one line."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, TypeVar

import typer

from ledger.errors import StoreError
from ledger.store import LedgerApp, open_ledger

T = TypeVar("T")

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


@contextmanager
def opened(db: str | None) -> Iterator[LedgerApp]:
    """The ledger for the length of a command, then closed; exit 2 with one line if it cannot be
    opened or a :class:`StoreError` (a store problem, not a finding) ends the command."""
    app = open_app(db)
    try:
        yield app
    except StoreError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    finally:
        app.close()


def round_target(target: str) -> tuple[str, str]:
    """``TABLE/ROUND`` split in two, or exit 2 with the expected form."""
    table, sep, round_ = target.partition("/")
    if not sep or not table or not round_:
        typer.echo("error: give the round as TABLE/ROUND, e.g. RL-01/000417", err=True)
        raise typer.Exit(code=2)
    return table, round_


def one_format(as_json: bool, as_csv: bool) -> None:
    """``--json`` and ``--csv`` exclude each other (exit 2)."""
    if as_json and as_csv:
        typer.echo("error: choose one of --json and --csv", err=True)
        raise typer.Exit(code=2)


def only(items: dict[str, T], wanted: str | None, noun: str) -> dict[str, T]:
    """``items`` narrowed to ``wanted`` (all if ``None``), or exit 2 naming what exists."""
    if wanted is None:
        return items
    if wanted not in items:
        typer.echo(f"error: no {noun} {wanted!r} in the store"
                   + (f"; {noun}s: {', '.join(items)}" if items else ""), err=True)
        raise typer.Exit(code=2)
    return {wanted: items[wanted]}
