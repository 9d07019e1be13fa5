"""docs/WITNESS.md's shell blocks run as shown, in order, in one scratch folder: a witness key,
an operator's store, a witness process, a witnessed seal, a quorum verify, the offline exchange,
and the witness stopped. Plain `ledger …` lines run in this process; the rest in bash."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app

DOC = Path(__file__).resolve().parents[2] / "docs" / "WITNESS.md"
FENCE = re.compile(r"^```sh\n(.*?)^```$", re.MULTILINE | re.DOTALL)
EXIT = re.compile(r"#\s*exit (\d)\b")


def commands(text: str) -> list[str]:
    found = []
    for block in FENCE.findall(text):
        line = ""
        for raw in block.splitlines():
            line += raw.rstrip("\\") + (" " if raw.endswith("\\") else "")
            if not raw.endswith("\\"):
                found.append(line.strip())
                line = ""
    return [c for c in found if c]


# tests/docs/test_doc_examples.py runs the same blocks, with the same exit codes, by default.
@pytest.mark.slow
def test_every_command_of_the_witness_doc_runs_as_shown(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LEDGER_DB", raising=False)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    env.pop("LEDGER_DB", None)
    ran = []
    try:
        for command in commands(DOC.read_text(encoding="utf-8")):
            expected = int(m.group(1)) if (m := EXIT.search(command)) else 0
            ran.append(command)
            plain = command.split("#")[0].strip()
            if plain.startswith("ledger ") and not set(plain) & set("$&|<>;`*'\""):
                result = CliRunner().invoke(app, shlex.split(plain)[1:])  # no second of imports
                code, output = result.exit_code, result.output
            else:
                done = subprocess.run(
                    ["bash", "-c", command],
                    cwd=tmp_path,
                    env=env,
                    timeout=120,
                    capture_output=True,
                    text=True,
                )
                code, output = done.returncode, done.stdout + done.stderr
            assert code == expected, (command, output)
    finally:
        for pid in (tmp_path / "witness.pid", tmp_path / "witness2.pid"):
            if pid.exists() and pid.read_text().strip():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid.read_text()), signal.SIGTERM)
    assert any(c.startswith("ledger witness serve") for c in ran)
    assert any("--witness-key" in c for c in ran) and any(c.startswith("kill") for c in ran)


def test_the_doc_starts_a_witness_verifies_with_its_key_and_stops_it() -> None:
    """What the run above asserts of the document's commands, read without running them."""
    found = commands(DOC.read_text(encoding="utf-8"))
    assert any(c.startswith("ledger witness serve") for c in found)
    assert any("--witness-key" in c for c in found) and any(c.startswith("kill") for c in found)
