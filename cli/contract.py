"""The operations contract every command follows: exit codes, JSON output, one-line errors.

Exit codes (``ledger --help`` and docs/CLI.md say the same):

====  ==========================================================================================
0     done, nothing found
1     findings (verify, replay, recall, report, commission differences) or rejected feed lines
2     the command could not run as asked: usage error, no ledger at the URL, a selection that
      matches nothing, the database cannot be reached or refuses the role
3     the store's integrity is broken (wins over 1); a damaged store too (a damaged database
      page, a row that is not a ledger row: ``ledger.domain.errors.StoreDamaged``), in every command
4     internal error: a bug in ledger (one line on stderr; the traceback with ``--debug`` or
      ``LEDGER_DEBUG=1``)
====  ==========================================================================================

JSON: :func:`cli.render.print_json` puts ``"schema_version"`` first in every object a command
prints; :func:`fail` prints ``{"schema_version", "error", "exit_code"}`` on standard output
when the command was given ``--json``, so a scheduled job always gets one object to parse.
A new command follows the contract by calling ``print_json`` for its output and ``fail`` for
every error it detects; exceptions it does not catch are mapped by :class:`cli.main.LedgerGroup`
(damage the store reports, :func:`ledger.domain.errors.damage_in`, to 3; a
:class:`~ledger.domain.errors.StoreError` to 2 with its message; anything else to 4).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, NoReturn

import typer

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTEGRITY = 3
EXIT_INTERNAL = 4

EXIT_CODES: dict[int, str] = {
    EXIT_OK: "done, nothing found",
    EXIT_FINDINGS: "findings, or rejected feed lines",
    EXIT_USAGE: "could not run as asked: usage error, no ledger at the URL, a selection that "
    "matches nothing, database unreachable or permission denied",
    EXIT_INTEGRITY: "the store's integrity is broken, or the store is damaged (wins over 1)",
    EXIT_INTERNAL: "internal error (a bug): rerun with --debug for the traceback",
}
"""Every exit code and its one meaning."""

SCHEMA_VERSION = 1
"""Version of every ``--json`` output (docs/schemas/); raised only on an incompatible change."""

DEBUG_ENV = "LEDGER_DEBUG"


class _State:
    """What the running command was given (set by :class:`cli.main.LedgerGroup`)."""

    def __init__(self) -> None:
        self.argv: list[str] = []
        self.json_printed = False
        self.debug_flag = False


state = _State()


def begin(argv: list[str]) -> None:
    """Record the arguments of the command about to run."""
    state.argv = list(argv)
    state.json_printed = False
    state.debug_flag = False


def wants_json() -> bool:
    """Whether the running command was given ``--json``."""
    return "--json" in state.argv


def debug() -> bool:
    """``--debug`` or ``LEDGER_DEBUG=1``: show tracebacks of internal errors."""
    return state.debug_flag or os.environ.get(DEBUG_ENV, "") not in ("", "0", "no", "false")


def print_json(obj: dict[str, Any]) -> None:
    """One JSON object on standard output, ``"schema_version"`` first (the object's own, if it
    has one: ``ledger stats`` is at its own version)."""
    version = obj.get("schema_version", SCHEMA_VERSION)
    body = {"schema_version": version, **{k: v for k, v in obj.items() if k != "schema_version"}}
    sys.stdout.write(json.dumps(body, indent=1, ensure_ascii=False) + "\n")
    sys.stdout.flush()
    state.json_printed = True


def error_object(message: str, code: int) -> dict[str, object]:
    """The JSON printed on an error exit (docs/schemas/error.json)."""
    return {"error": message, "exit_code": code}


def report_error(message: str, code: int = EXIT_USAGE, *, prefix: str = "error") -> None:
    """One line on stderr; with ``--json`` also the error object on stdout (once)."""
    sys.stderr.write(f"{prefix}: {message}\n")
    sys.stderr.flush()
    if wants_json() and not state.json_printed:
        print_json(error_object(message, code))


def fail(message: str, code: int = EXIT_USAGE, *, prefix: str = "error") -> NoReturn:
    """Report an error (see :func:`report_error`) and exit with ``code``."""
    report_error(message, code, prefix=prefix)
    raise typer.Exit(code=code)
