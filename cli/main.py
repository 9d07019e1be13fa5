"""The root ``ledger`` command: one sub-command per job, documented by its docstring."""

from __future__ import annotations

import typer

from cli.demo import demo
from cli.ingest import ingest
from cli.replay import replay
from cli.simulate import simulate
from cli.verify import verify

app = typer.Typer(
    name="ledger",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # a DSN with a password must never reach a traceback
    add_completion=False,
    help="Event-sourced audit and settlement ledger for Macau table games.\n\n"
         "Exit codes: 0 clean, 1 findings or rejected lines, 2 usage error, 3 integrity broken.",
)
app.command()(ingest)
app.command()(verify)
app.command()(replay)
app.command()(simulate)
app.command()(demo)


def main() -> None:
    """Entry point of the ``ledger`` console script."""
    app()
