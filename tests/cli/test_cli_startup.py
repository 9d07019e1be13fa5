"""Start-up: ``ledger --version`` and ``--help`` import no command module, a command imports
only its own, the lazy listing says what the eager one said, and usage errors are one line."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
import typer

from cli.main import LedgerGroup, _built, app, command_entry, command_manifest
from tests.conftest import tiered

_PROBE = (
    "import sys; from cli.main import main\n"
    "sys.argv = ['ledger', *sys.argv[1:]]\n"
    "try:\n    main()\n"
    "except SystemExit:\n    pass\n"
    "print(sorted(m for m in sys.modules if m.startswith(('cli.', 'ledger.', 'projections', "
    "'eventsourcing', 'pydantic', 'psycopg'))), file=sys.stderr)\n"
)


def _imported(*args: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, timeout=120)
    return eval(done.stderr.strip().splitlines()[-1])  # a list literal printed above


# A fresh interpreter each: --version by default, -V and --help in the slow tier.
@pytest.mark.parametrize("flag", tiered(["--version", "-V", "--help"], 1))
def test_version_and_help_import_no_command_module(flag: str) -> None:
    assert _imported(flag) == ["cli.contract", "cli.main", "ledger.domain", "ledger.domain.errors"], flag


def test_a_command_imports_its_module_and_not_the_others() -> None:
    imported = _imported("schema", "feed")
    assert "cli.schema" in imported
    assert not {"cli.verify", "cli.ingest", "cli.stats", "cli.demo"} & set(imported)


def test_the_manifest_lists_what_registering_every_module_gives() -> None:
    import importlib

    eager: dict[str, str] = {}
    groups: list[str] = []
    modules = sorted(
        {e.module for e in command_manifest()},
        key=lambda m: (getattr(importlib.import_module(m), "ORDER", 100), m),
    )
    for name in modules:
        for command in importlib.import_module(name).COMMANDS:
            for built_name, built in _built(command).items():
                (groups if isinstance(command, typer.Typer) else [None]).append(built_name)
                eager[built_name] = built.help or ""
    lazy = {e.name: e.help for e in command_manifest()}
    assert lazy == eager
    assert [e.name for e in command_manifest() if e.group] == [g for g in groups if g]
    assert len(lazy) >= 20


def test_one_command_is_found_as_the_manifest_lists_it_without_reading_every_module() -> None:
    listed = command_manifest()
    command_manifest.cache_clear()
    command_entry.cache_clear()
    try:
        for entry in listed:
            assert command_entry(entry.name) == entry
        assert command_entry("no-such-command") is None
        assert command_manifest.cache_info().currsize == 0  # found without the full manifest
    finally:
        command_manifest.cache_clear()
        command_entry.cache_clear()


def test_every_listed_command_builds_with_the_listed_help() -> None:
    root = typer.main.get_command(app)
    assert isinstance(root, LedgerGroup)
    for entry in command_manifest():
        assert root.commands[entry.name].help == entry.help
        assert root.get_command(typer.Context(root), entry.name) is root.commands[entry.name]


def test_short_version_flag(ledger_real: Any, ledger_cli: Any) -> None:
    ran = ledger_real("-V")
    assert ran.code == 0 and ran.stdout.startswith("ledger ")
    assert ledger_cli("--version").stdout == ran.stdout == ledger_cli("-V").stdout


def test_a_usage_error_is_one_line_and_exit_2(ledger_real: Any, ledger_cli: Any) -> None:
    ran = ledger_real("verify", "--no-such-option")
    assert ran.code == 2
    assert ran.stderr.count("\n") == 1
    assert ran.stderr.startswith("error: No such option: --no-such-option")
    assert "ledger verify --help" in ran.stderr
    unknown = ledger_cli("no-such-command")
    assert unknown.code == 2 and unknown.stderr.count("\n") == 1
    assert "No such command 'no-such-command'" in unknown.stderr


def test_a_usage_error_under_json_prints_the_error_object(ledger_cli: Any) -> None:
    ran = ledger_cli("replay", "--json")  # the round is missing
    assert ran.code == 2
    assert ran.json()["exit_code"] == 2 and "Missing argument" in ran.json()["error"]
    assert ran.stderr.count("\n") == 1


def test_ledger_alone_still_prints_the_help(ledger_cli: Any) -> None:
    ran = ledger_cli()
    assert ran.code == 2
    assert "Usage: ledger" in ran.stdout + ran.stderr and "verify" in ran.stdout + ran.stderr


def test_the_package_loads_its_public_names_on_first_use() -> None:
    probe = (
        "import sys, ledger\n"
        "assert 'ledger.storage.store' not in sys.modules and 'ledger.domain.errors' not in sys.modules\n"
        "from ledger import Ingestor, open_ledger, verify_store\n"
        "import ledger.storage.store, ledger.services.ingest, ledger.verify.engine\n"
        "assert open_ledger is ledger.storage.store.open_ledger\n"
        "assert Ingestor is ledger.services.ingest.Ingestor\n"
        "assert verify_store is ledger.verify.engine.verify_store\n"
        "assert set(ledger.__all__) <= set(dir(ledger))\n"
        "try:\n    ledger.nothing_of_that_name\n"
        "except AttributeError as exc:\n    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "no attribute 'nothing_of_that_name'" in done.stdout
