"""The root ``ledger`` command: one sub-command per job, documented by its docstring.

Each module of ``cli/`` that defines ``COMMANDS`` (functions, or ``typer.Typer`` groups such as
``ledger projections``) is registered here, in the order of its ``ORDER``; adding a command is
adding a module, without touching this file.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import typer

import cli

app = typer.Typer(
    name="ledger",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # a DSN with a password must never reach a traceback
    add_completion=False,
    help="Event-sourced audit and settlement ledger for Macau table games.\n\n"
         "Exit codes: 0 clean, 1 findings or rejected lines, 2 usage error, 3 integrity broken.",
)


def _register(root: typer.Typer) -> None:
    modules: list[Any] = []
    for info in pkgutil.iter_modules(cli.__path__):
        module = importlib.import_module(f"cli.{info.name}")
        if hasattr(module, "COMMANDS"):
            modules.append(module)
    for module in sorted(modules, key=lambda m: (getattr(m, "ORDER", 100), m.__name__)):
        for command in module.COMMANDS:
            if isinstance(command, typer.Typer):
                root.add_typer(command)
            else:
                root.command()(command)


_register(app)


def main() -> None:
    """Entry point of the ``ledger`` console script."""
    app()


if __name__ == "__main__":
    main()
