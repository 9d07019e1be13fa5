"""Fixtures for CLI tests: the installed ``ledger`` console script run as a scheduled job or a
user would (``ledger_cli``), each ``--json`` output checked against docs/schemas
(``json_schema``), and PostgreSQL stores initialised with roles of unique names
(``deployment``), dropped afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

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


def ledger(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
           stdin: str | None = None) -> Ran:
    """Run ``ledger ARGS`` in a subprocess (no LEDGER_DB leaking in unless given)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("LEDGER_DB")
            and k != "LEDGER_DEBUG"}
    done = subprocess.run([LEDGER, *args], capture_output=True, text=True, timeout=300,
                          env={**base, **(env or {})}, cwd=cwd, input=stdin)
    return Ran(done.returncode, done.stdout, done.stderr)


def check_schema(body: Any, name: str) -> None:
    """Validate one ``--json`` output against docs/schemas/NAME.json."""
    import jsonschema

    jsonschema.validate(body, _resolved(json.loads((SCHEMAS / f"{name}.json").read_text())))


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
    """``ledger_cli(*args, env=..., cwd=...) -> Ran``."""
    return ledger


@pytest.fixture(scope="session")
def json_schema() -> Any:
    """``json_schema(body, name)``: validate against docs/schemas/NAME.json."""
    return check_schema
