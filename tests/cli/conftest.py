"""Fixtures for CLI tests: ``ledger ARGS`` run in this process through typer's test runner
(``ledger_cli``: the same root group, exit-code mapping, environment, working folder and
standard input as the console script, without a second of imports per call), the installed
console script in a real subprocess for the few tests that need one per command
(``ledger_process``: signals, the real exit status, a fresh interpreter), and each ``--json``
output checked against docs/schemas (``json_schema``)."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

LEDGER = str(Path(sys.executable).with_name("ledger"))
SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"


@dataclass
class Ran:
    """What one command did."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def _unset() -> dict[str, str | None]:
    """The variables a test must not inherit from the shell that runs it."""
    return {k: None for k in os.environ if k.startswith("LEDGER_DB") or k == "LEDGER_DEBUG"}


def ledger_process(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None, stdin: str | None = None
) -> Ran:
    """Run the installed ``ledger ARGS`` in a subprocess (no LEDGER_DB leaking in unless
    given)."""
    base = {k: v for k, v in os.environ.items() if k not in _unset()}
    done = subprocess.run(
        [LEDGER, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**base, **(env or {})},
        cwd=cwd,
        input=stdin,
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def ledger(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None, stdin: str | None = None
) -> Ran:
    """Run ``ledger ARGS`` in this process, as the console script would in a subprocess: the
    environment (no LEDGER_DB leaking in unless given), working folder and standard input are
    those given; an exception the command lets through is raised here, not hidden."""
    from cli.main import app

    with contextlib.chdir(cwd or Path.cwd()):
        done = CliRunner().invoke(
            app, list(args), input=stdin, env={**_unset(), **(env or {})}, catch_exceptions=True
        )
    if done.exception is not None and not isinstance(done.exception, SystemExit):
        raise done.exception
    return Ran(done.exit_code, done.stdout, done.stderr)


def check_schema(body: Any, name: str) -> None:
    """Validate one ``--json`` output against docs/schemas/NAME.json (its ``$ref``s to other
    files of docs/schemas resolved in place)."""
    _validator(name, resolved=True).validate(body)


def plain_validate(body: Any, name: str) -> None:
    """Validate against docs/schemas/NAME.json as a plain ``jsonschema`` validator reads the
    file alone: no resolver, no registry."""
    _validator(name, resolved=False).validate(body)


@functools.cache
def _validator(name: str, resolved: bool) -> Any:
    """The validator of docs/schemas/NAME.json, built once per run: the schema is checked
    against its meta-schema here, once, rather than on every output as ``jsonschema.validate``
    does (tens of milliseconds each)."""
    import jsonschema

    schema = json.loads((SCHEMAS / f"{name}.json").read_text(encoding="utf-8"))
    if resolved:
        schema = _resolved(schema)
    kind = jsonschema.validators.validator_for(schema)
    kind.check_schema(schema)
    return kind(schema)


def _resolved(schema: Any) -> Any:
    """The schema with each ``{"$ref": "NAME.json"}`` replaced by that file of docs/schemas."""
    if isinstance(schema, dict):
        if set(schema) == {"$ref"} and not schema["$ref"].startswith("#"):
            return _resolved(json.loads((SCHEMAS / schema["$ref"]).read_text()))
        return {k: _resolved(v) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_resolved(v) for v in schema]
    return schema


@pytest.fixture(scope="session")
def ledger_cli() -> Any:
    """``ledger_cli(*args, env=..., cwd=..., stdin=...) -> Ran``, in this process."""
    return ledger


@pytest.fixture(scope="session")
def ledger_real() -> Any:
    """``ledger_real(*args, env=..., cwd=..., stdin=...) -> Ran``: the installed console script
    in a subprocess (about 0.1 s of start-up for ``--version``, more for a command that reads a
    store)."""
    return ledger_process


@pytest.fixture(scope="session")
def json_schema() -> Any:
    """``json_schema(body, name)``: validate against docs/schemas/NAME.json."""
    return check_schema
