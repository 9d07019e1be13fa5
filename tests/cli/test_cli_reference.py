"""docs/CLI.md is generated from the commands: it must match them, option for option."""

from __future__ import annotations

import re
from typing import Any

import typer

from cli.main import app
from cli.reference import DOC, render


def test_the_reference_is_what_the_commands_say() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), (
        "docs/CLI.md is out of date: run python -m cli.reference and commit it"
    )


def _leaves(cmd: Any, path: list[str]) -> list[tuple[list[str], Any]]:
    sub = getattr(cmd, "commands", None)
    if not sub:
        return [(path, cmd)]
    return [leaf for name, c in sub.items() for leaf in _leaves(c, [*path, name])]


def test_every_option_of_every_help_is_in_the_reference(ledger_cli: Any) -> None:
    doc = DOC.read_text(encoding="utf-8")
    leaves = _leaves(typer.main.get_command(app), [])
    assert len(leaves) >= 15
    for path, _ in leaves[:6]:  # a sample of the help texts as `ledger … --help` prints them
        shown = ledger_cli(*path, "--help")
        assert shown.code == 0
        for option in set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", shown.stdout)):
            assert option in doc, (path, option)
    for path, cmd in leaves:
        assert f"### `ledger {' '.join(path)}`" in doc
        for param in cmd.params:
            for option in param.opts:
                if option.startswith("--") and not param.hidden:
                    assert option in doc, (path, option)
