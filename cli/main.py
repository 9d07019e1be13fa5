"""The root ``ledger`` command: one sub-command per job, documented by its docstring.

Each module of ``cli/`` that defines ``COMMANDS`` (functions, or ``typer.Typer`` groups such as
``ledger projections``) is registered here, in the order of its ``ORDER``; adding a command is
adding a module, without touching this file.

:class:`LedgerGroup` applies the operations contract of ``cli.contract`` to every command: an
exception a command does not handle becomes one line on stderr and exit 2 (a store problem) or
4 (a bug), with the error object on stdout under ``--json``.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
import traceback
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any

import typer
from eventsourcing.persistence import InterfaceError, OperationalError, ProgrammingError
from typer import _click
from typer.core import TyperGroup

import cli
from cli.contract import (
    EXIT_CODES,
    EXIT_INTEGRITY,
    EXIT_INTERNAL,
    EXIT_USAGE,
    begin,
    debug,
    error_object,
    print_json,
    report_error,
    state,
)
from ledger.errors import LedgerError, damage_in


def _exit_codes_help() -> str:
    return "Exit codes: " + "; ".join(f"{code} {text}" for code, text in EXIT_CODES.items()) + "."


class LedgerGroup(TyperGroup):
    """The root group: records the arguments and maps unhandled exceptions to exit codes."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             windows_expand_args: bool = True, **extra: Any) -> Any:
        """Run the command line (the console script and ``CliRunner`` both come here)."""
        argv = list(args) if args is not None else sys.argv[1:]
        begin(argv)
        return super().main(args=argv, prog_name=prog_name or "ledger", complete_var=complete_var,
                            standalone_mode=standalone_mode,
                            windows_expand_args=windows_expand_args, **extra)

    def invoke(self, ctx: Any) -> Any:
        """Invoke the sub-command; unhandled exceptions become one line and an exit code."""
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, SystemExit, KeyboardInterrupt):
            raise
        except BrokenPipeError:  # `ledger … | head`: the reader left; not an error of ours
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            raise typer.Exit(code=0) from None
        except LedgerError as exc:  # a store or usage problem the command did not word itself
            _damaged(exc)
            report_error(str(exc), EXIT_USAGE)
            raise typer.Exit(code=EXIT_USAGE) from None
        except Exception as exc:
            _damaged(exc)
            if isinstance(exc, _click.ClickException):  # bad option or value: typer prints it
                if state.argv and "--json" in state.argv and not state.json_printed:
                    print_json(error_object(exc.format_message(), exc.exit_code))
                raise
            store = _store_problem(exc)
            if store is not None:
                report_error(store, EXIT_USAGE)
                raise typer.Exit(code=EXIT_USAGE) from None
            if debug():
                traceback.print_exc()
            report_error(f"{type(exc).__name__}: {_one_line(exc)} — this is a bug in ledger; "
                         "rerun with --debug (or LEDGER_DEBUG=1) for the traceback and report it",
                         EXIT_INTERNAL, prefix="internal error")
            raise typer.Exit(code=EXIT_INTERNAL) from None


_PLAIN = {"str": "TEXT", "int": "N", "float": "NUMBER", "int range": "N",
          "float range": "NUMBER", "path": "PATH", "file": "FILE", "directory": "DIR",
          "Path": "PATH", "bool": ""}


def _plain_placeholder(self: Any, ctx: Any) -> str | None:
    """Help shows ``FILE``, ``N``, ``URL`` (or the option's metavar), nothing for a flag."""
    if self.metavar is not None:
        return str(self.metavar)
    if getattr(self, "is_flag", False):
        return None
    label = str(self.display_type(ctx)).strip("<>")
    many = label.startswith("list[")
    label = label.removeprefix("list[").removesuffix("]")
    plain = _PLAIN.get(label, label.upper())
    if not plain:
        return None
    return plain + ("..." if many or self.nargs != 1 else "")


for _cls in (typer.core.TyperOption, typer.core.TyperArgument):
    _cls.display_type_rich = _plain_placeholder  # type: ignore[method-assign]


def _damaged(exc: BaseException) -> None:
    """A damaged store (``ledger.errors.damage_in``) ends every command alike: one line and
    exit 3 (integrity broken), never "internal error"."""
    damage = damage_in(exc)
    if damage is not None:
        report_error(f"{_one_line(damage)} (`ledger verify` shows what can still be read)",
                     EXIT_INTEGRITY, prefix="integrity broken")
        raise typer.Exit(code=EXIT_INTEGRITY) from None


def _one_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[0] if lines else "(no message)"


def _store_problem(exc: BaseException) -> str | None:
    """The one-line reason if ``exc`` is the database refusing or going away, else ``None``."""
    try:
        import psycopg
    except ImportError:  # pragma: no cover - psycopg is a dependency
        psycopg = None  # type: ignore[assignment]
    text = _one_line(exc)
    if (psycopg is not None and isinstance(exc, psycopg.errors.InsufficientPrivilege)) or (
            isinstance(exc, ProgrammingError) and "permission denied" in text):
        return f"permission denied: {text} (this database role may not do that: see " \
               "`ledger init --roles` in docs/CLI.md)"
    if isinstance(exc, OperationalError | InterfaceError) or (
            psycopg is not None and isinstance(exc, psycopg.OperationalError)):
        return f"the store cannot be reached: {text}"
    return None


app = typer.Typer(
    name="ledger",
    cls=LedgerGroup,
    no_args_is_help=True,
    pretty_exceptions_enable=False,  # LedgerGroup words every error; --debug shows tracebacks
    pretty_exceptions_show_locals=False,  # a DSN with a password must never reach a traceback
    add_completion=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Event-sourced audit and settlement ledger for Macau table games.\n\n"
         + _exit_codes_help() + "\n\nReference: docs/CLI.md.",
)


def _version(value: bool) -> None:
    if value:
        try:
            number = version("ledger")
        except PackageNotFoundError:  # pragma: no cover - running from a source tree
            number = "unknown"
        typer.echo(f"ledger {number}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    db: Annotated[str | None, typer.Option(
        "--db", metavar="URL", envvar="LEDGER_DB",
        help="Database URL for the command (may also follow the command): sqlite:///PATH "
             "(default sqlite:///ledger.db) or postgresql://USER@HOST:PORT/DB[?schema=NAME].")
    ] = None,
    debug_flag: Annotated[bool, typer.Option(
        "--debug", help="Show the traceback of an internal error (also LEDGER_DEBUG=1).")
    ] = False,
    version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Event-sourced audit and settlement ledger for Macau table games."""
    state.debug_flag = debug_flag
    if db is not None and ctx.get_parameter_source("db") is not None and \
            ctx.get_parameter_source("db").name == "COMMANDLINE":  # type: ignore[union-attr]
        ctx.meta["ledger.db"] = db


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
