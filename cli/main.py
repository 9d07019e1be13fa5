"""The root ``ledger`` command: one sub-command per job, documented by its docstring.

Each module of ``cli/`` that defines ``COMMANDS`` (functions, or ``typer.Typer`` groups such as
``ledger projections``) is registered here, in the order of its ``ORDER``; adding a command is
adding a module, without touching this file.

Start-up costs only what the command uses: the commands are found by reading the source of
``cli/`` (:func:`command_manifest`, with ``ast``: name, module, order and help text), and a
command's module, with the heavy parts of ``ledger`` it imports, is imported only when that
command runs (:class:`LazyCommands`). ``ledger --version`` imports none of them and
``ledger --help`` lists them from the manifest. A module whose ``COMMANDS`` cannot be read
without running it is imported at once, as before.

:class:`LedgerGroup` applies the operations contract of ``cli.contract`` to every command: an
exception a command does not handle becomes one line on stderr and exit 2 (a store problem or a
usage error) or 4 (a bug), with the error object on stdout under ``--json``.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import os
import pkgutil
import sys
import traceback
from collections.abc import Iterator, MutableMapping, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from typer import _click
from typer.core import TyperCommand, TyperGroup

import cli
from cli.contract import (
    EXIT_CODES,
    EXIT_INTEGRITY,
    EXIT_INTERNAL,
    EXIT_USAGE,
    begin,
    debug,
    report_error,
    state,
)
from ledger.domain.errors import LedgerError, damage_in


def _exit_codes_help() -> str:
    return "Exit codes: " + "; ".join(f"{code} {text}" for code, text in EXIT_CODES.items()) + "."


class LedgerGroup(TyperGroup):
    """The root group: records the arguments, finds its commands lazily (:class:`LazyCommands`)
    and maps usage errors and unhandled exceptions to one line and an exit code."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = LazyCommands(self.commands)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        """Run the command line (the console script and ``CliRunner`` both come here)."""
        argv = list(args) if args is not None else sys.argv[1:]
        begin(argv)
        return super().main(
            args=argv,
            prog_name=prog_name or "ledger",
            complete_var=complete_var,
            standalone_mode=standalone_mode,
            windows_expand_args=windows_expand_args,
            **extra,
        )

    def make_context(
        self, info_name: str | None, args: list[str], parent: _click.Context | None = None, **extra: Any
    ) -> _click.Context:
        """Parse the root options; a usage error there is one line and exit 2."""
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except _click.exceptions.ClickException as exc:
            _usage_error(exc)

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:
        """The command if it was loaded, else a stub with its name and help (for listings)."""
        commands = self.commands
        if isinstance(commands, LazyCommands):
            return commands.loaded_or_stub(cmd_name)
        return commands.get(cmd_name)

    def list_commands(self, ctx: _click.Context) -> list[str]:
        """The names, in order, without building the commands."""
        return list(self.commands)

    def resolve_command(
        self, ctx: _click.Context, args: list[str]
    ) -> tuple[str | None, _click.Command | None, list[str]]:
        """Load the command about to run (its module is imported here, not before)."""
        if args and args[0] in self.commands:
            _LOADED.setdefault(args[0], self.commands[args[0]])
        return super().resolve_command(ctx, args)

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
        except _click.exceptions.ClickException as exc:  # bad option or value
            _usage_error(exc)
        except Exception as exc:
            _damaged(exc)
            store = _store_problem(exc)
            if store is not None:
                report_error(store, EXIT_USAGE)
                raise typer.Exit(code=EXIT_USAGE) from None
            if debug():
                traceback.print_exc()
            report_error(
                f"{type(exc).__name__}: {_one_line(exc)} — this is a bug in ledger; "
                "rerun with --debug (or LEDGER_DEBUG=1) for the traceback and report it",
                EXIT_INTERNAL,
                prefix="internal error",
            )
            raise typer.Exit(code=EXIT_INTERNAL) from None


def _usage_error(exc: _click.exceptions.ClickException) -> NoReturn:
    """Word a usage error as every other error (one line, the error object under ``--json``)
    and exit 2; ``ledger`` alone still prints the help."""
    if isinstance(exc, _click.exceptions.NoArgsIsHelpError):
        raise exc
    message = " ".join(exc.format_message().split())
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, _click.exceptions.UsageError) and ctx is not None:
        message += f" (see `{ctx.command_path} --help`)"
    report_error(message, EXIT_USAGE)
    raise typer.Exit(code=EXIT_USAGE) from None


_PLAIN = {
    "str": "TEXT",
    "int": "N",
    "float": "NUMBER",
    "int range": "N",
    "float range": "NUMBER",
    "path": "PATH",
    "file": "FILE",
    "directory": "DIR",
    "Path": "PATH",
    "bool": "",
}


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
    """A damaged store (``ledger.domain.errors.damage_in``) ends every command alike: one line and
    exit 3 (integrity broken), never "internal error"."""
    damage = damage_in(exc)
    if damage is not None:
        report_error(
            f"{_one_line(damage)} (`ledger verify` shows what can still be read)",
            EXIT_INTEGRITY,
            prefix="integrity broken",
        )
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
    from eventsourcing.persistence import InterfaceError, OperationalError, ProgrammingError

    text = _one_line(exc)
    if (psycopg is not None and isinstance(exc, psycopg.errors.InsufficientPrivilege)) or (
        isinstance(exc, ProgrammingError) and "permission denied" in text
    ):
        return (
            f"permission denied: {text} (this database role may not do that: see "
            "`ledger init --roles` in docs/CLI.md)"
        )
    if isinstance(exc, OperationalError | InterfaceError) or (
        psycopg is not None and isinstance(exc, psycopg.OperationalError)
    ):
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
    + _exit_codes_help()
    + "\n\nReference: docs/CLI.md.",
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
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            metavar="URL",
            envvar="LEDGER_DB",
            help="Database URL for the command (may also follow the command): sqlite:///PATH "
            "(default sqlite:///ledger.db) or postgresql://USER@HOST:PORT/DB[?schema=NAME].",
        ),
    ] = None,
    debug_flag: Annotated[
        bool, typer.Option("--debug", help="Show the traceback of an internal error (also LEDGER_DEBUG=1).")
    ] = False,
    version: Annotated[
        bool,
        typer.Option("--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Event-sourced audit and settlement ledger for Macau table games."""
    state.debug_flag = debug_flag
    if (
        db is not None
        and ctx.get_parameter_source("db") is not None
        and ctx.get_parameter_source("db").name == "COMMANDLINE"  # type: ignore[union-attr]
    ):
        ctx.meta["ledger.db"] = db


@dataclass(frozen=True)
class CommandEntry:
    """One command of ``ledger`` as its module's source declares it, before it is imported."""

    name: str
    module: str
    order: int
    help: str
    group: bool
    """A ``typer.Typer`` group (``ledger projections …``), listed after the plain commands."""
    attribute: str
    """The name of the function or group in its module."""

    def load(self) -> _click.Command:
        """Import the module and build this command (typer reads the signature here)."""
        module = importlib.import_module(self.module)
        return _built(getattr(module, self.attribute))[self.name]

    def stub(self) -> _click.Command:
        """A command with this entry's name and help only: what a listing needs."""
        return TyperCommand(name=self.name, help=self.help, callback=None)


def _built(*commands: Any) -> dict[str, _click.Command]:
    """The click commands typer builds for these functions and groups, by name."""
    holder = typer.Typer()
    holder.callback()(_no_options)
    for command in commands:
        if isinstance(command, typer.Typer):
            holder.add_typer(command)
        else:
            holder.command()(command)
    built = typer.main.get_command(holder)
    return dict(getattr(built, "commands", {}))


def _no_options() -> None:
    """The callback of the holder group :func:`_built` makes (a group, even of one command)."""


class _Unreadable(Exception):
    """A module whose commands cannot be read from its source alone."""


def _literal_str(node: ast.expr | None) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    raise _Unreadable


def _entries_from_source(module: str, tree: ast.Module) -> list[CommandEntry]:
    """The commands ``tree`` declares in ``COMMANDS`` (and ``ORDER``), read without running it.

    Raises :class:`_Unreadable` for anything other than the plain forms: functions (with an
    optional ``f.__name__ = "name"``) and ``x = typer.Typer(name=..., help=...)``.
    """
    order, listed = 100, None
    functions: dict[str, str] = {}
    renamed: dict[str, str] = {}
    groups: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            functions[node.name] = inspect.cleandoc(ast.get_docstring(node) or "")
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Name) and target.id == "ORDER":
                order = ast.literal_eval(value)
            elif isinstance(target, ast.Name) and target.id == "COMMANDS":
                if not isinstance(value, ast.List | ast.Tuple):
                    raise _Unreadable
                listed = [e.id if isinstance(e, ast.Name) else "" for e in value.elts]
            elif (
                isinstance(target, ast.Attribute)
                and target.attr == "__name__"
                and isinstance(target.value, ast.Name)
            ):
                renamed[target.value.id] = _literal_str(value)
            elif (
                isinstance(target, ast.Name)
                and isinstance(value, ast.Call)
                and ast.unparse(value.func) == "typer.Typer"
            ):
                kw = {k.arg: k.value for k in value.keywords}
                groups[target.id] = (
                    _literal_str(kw.get("name")),
                    inspect.cleandoc(_literal_str(kw.get("help"))),
                )
    if listed is None:
        return []
    entries = []
    for attribute in listed:
        if attribute in groups:
            name, text = groups[attribute]
            entries.append(CommandEntry(name, module, order, text, True, attribute))
        elif attribute in functions:
            name = typer.main.get_command_name(renamed.get(attribute, attribute))
            entries.append(CommandEntry(name, module, order, functions[attribute], False, attribute))
        else:
            raise _Unreadable
    return entries


def _entries_from_import(module_name: str) -> list[CommandEntry]:
    """The commands of a module whose source cannot be read alone: imported, as before."""
    module = importlib.import_module(module_name)
    entries = []
    order = getattr(module, "ORDER", 100)
    for command in getattr(module, "COMMANDS", []):
        attribute = next(k for k, v in vars(module).items() if v is command)
        for name, built in _built(command).items():
            entries.append(
                CommandEntry(
                    name, module_name, order, built.help or "", isinstance(command, typer.Typer), attribute
                )
            )
    return entries


def _command_sources() -> Iterator[tuple[str, Path, str]]:
    """Each module of ``cli/`` that may declare commands: its name, path and source."""
    for info in pkgutil.iter_modules(cli.__path__):
        path = Path(cli.__path__[0]) / f"{info.name}.py"
        source = path.read_text(encoding="utf-8") if path.is_file() else ""
        if "COMMANDS" not in source and path.is_file():
            continue
        yield f"cli.{info.name}", path, source


def _entries_of(name: str, source: str) -> list[CommandEntry]:
    try:
        return _entries_from_source(name, ast.parse(source))
    except (_Unreadable, ValueError, SyntaxError):
        return _entries_from_import(name)


def _in_order(entries: list[CommandEntry]) -> tuple[CommandEntry, ...]:
    return tuple(sorted(entries, key=lambda e: (e.group, e.order, e.module)))


@functools.cache
def command_manifest() -> tuple[CommandEntry, ...]:
    """Every command of ``ledger``, in the order of ``ledger --help``: plain commands by
    (``ORDER``, module), then groups the same way (as typer lists them)."""
    entries: list[CommandEntry] = []
    for name, _, source in _command_sources():
        entries += _entries_of(name, source)
    return _in_order(entries)


@functools.cache
def command_entry(command: str) -> CommandEntry | None:
    """The entry of one command, as :func:`command_manifest` would give it, parsing only the
    modules whose source mentions its name (a command's name is its function's name with ``_``
    as ``-``, or a literal in the source): running one command does not parse all of ``cli/``
    (~0.03 s)."""
    if command_manifest.cache_info().currsize:
        found = {e.name: e for e in command_manifest()}
        return found.get(command)
    spellings = {command.lower(), command.lower().replace("-", "_")}
    entries: list[CommandEntry] = []
    for name, _, source in _command_sources():
        lowered = source.lower()
        if any(s in lowered for s in spellings):
            entries += _entries_of(name, source)
    found = {e.name: e for e in _in_order(entries)}
    return found.get(command)


_LOADED: dict[str, _click.Command] = {}
"""Commands built so far in this process (``CliRunner`` tests run many commands in one)."""


class LazyCommands(MutableMapping[str, _click.Command]):
    """The root group's commands: names from :func:`command_manifest`, each command built (its
    module imported) the first time it is looked up by name."""

    def __init__(self, extra: MutableMapping[str, _click.Command]) -> None:
        self._extra = dict(extra)

    def _entries(self) -> dict[str, CommandEntry]:
        return {e.name: e for e in command_manifest()}

    def __getitem__(self, name: str) -> _click.Command:
        if name in self._extra:
            return self._extra[name]
        if name not in _LOADED:
            entry = command_entry(name)
            if entry is None:
                raise KeyError(name)
            _LOADED[name] = entry.load()
        return _LOADED[name]

    def loaded_or_stub(self, name: str) -> _click.Command | None:
        """The built command if it was built, else a stub for listings; ``None`` if unknown."""
        if name in self._extra:
            return self._extra[name]
        if name in _LOADED:
            return _LOADED[name]
        entry = command_entry(name)
        return entry.stub() if entry is not None else None

    def __setitem__(self, name: str, command: _click.Command) -> None:
        self._extra[name] = command

    def __delitem__(self, name: str) -> None:
        del self._extra[name]

    def __iter__(self) -> Iterator[str]:
        yield from self._entries()
        yield from (n for n in self._extra if n not in self._entries())

    def __len__(self) -> int:
        return len(set(self._entries()) | set(self._extra))

    def __contains__(self, name: object) -> bool:
        return name in self._extra or (isinstance(name, str) and command_entry(name) is not None)


def main() -> None:
    """Entry point of the ``ledger`` console script."""
    app()


if __name__ == "__main__":
    main()
