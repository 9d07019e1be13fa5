"""The command reference (docs/CLI.md), generated from the command line itself.

``python -m cli.reference`` rewrites docs/CLI.md; ``python -m cli.reference --check`` exits 1
if the file differs from what the commands say (a test runs the same comparison). After adding
or changing a command or an option, regenerate and commit the file.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any

import typer

from cli.contract import EXIT_CODES
from cli.main import app

DOC = Path(__file__).resolve().parents[1] / "docs" / "CLI.md"

_INTRO = """\
# ledger command reference

Generated from the command line by `python -m cli.reference` (a test fails when this file and
`ledger … --help` disagree): do not edit by hand.

Every command takes `-h` / `--help`. `ledger --version` prints the version;
`ledger --install-completion` installs shell completion. The database is chosen by `--db URL`
given after the command or before it (`ledger --db URL verify`), else `LEDGER_DB`, else
`sqlite:///ledger.db`. Only `ingest` and `init` create a store: any other command given a URL
with no ledger exits 2 with one line naming the URL, and creates nothing.
"""

_JSON = """\
## JSON output

Every `--json` output is one object on standard output whose first key is
`"schema_version"` (now 1; 2 for `ledger stats`; raised only on an incompatible change).
Keys are fixed: a key of an object is present in every object of that kind, `null` when it
does not apply. Each output has a JSON Schema in [docs/schemas/](schemas/):

| output | schema |
|---|---|
| `verify --json` | [verify.json](schemas/verify.json) |
| one finding (in verify, replay, recall) | [finding.json](schemas/finding.json) |
| `ingest --json` | [ingest.json](schemas/ingest.json) |
| `replay --json` | [replay.json](schemas/replay.json) |
| `recall --json` | [recall.json](schemas/recall.json) |
| `report --day D --json` | [report-day.json](schemas/report-day.json) |
| `commission --json` | [commission.json](schemas/commission.json) |
| `jackpot --json` | [jackpot.json](schemas/jackpot.json) |
| `bank --json` | [bank.json](schemas/bank.json) |
| `export --json` | [export.json](schemas/export.json) |
| `seal --json` | [seal.json](schemas/seal.json) |
| `check-bundle FILE --json` | [check-bundle.json](schemas/check-bundle.json) |
| `init --json` (and `--print-sql --json`) | [init.json](schemas/init.json) |
| `keygen --json` | [keygen.json](schemas/keygen.json) |
| `export-round --json` | [export-round.json](schemas/export-round.json) |
| `simulate --json` | [simulate.json](schemas/simulate.json) |
| `projections update --json` | [projections-update.json](schemas/projections-update.json) |
| `projections status --json` | [projections-status.json](schemas/projections-status.json) |
| `projections rebuild --json` | [projections-rebuild.json](schemas/projections-rebuild.json) |
| `demo --json` | [demo.json](schemas/demo.json) |
| `stats --json` | [stats.json](schemas/stats.json) |
| `reconcile FILE --json` | [reconcile.json](schemas/reconcile.json) |
| any command that cannot run | [error.json](schemas/error.json) |

A finding always has `code`, `table`, `round`, `bet`, `rule`, `expected`, `recorded`,
`message`, `severity` (`error`, `warning` or `info`), `seq` (the feed `seq` of the event it is
about), `party` (a Super Pan 9 bank layer or a Mah-Jong party) and `seat` (a Three Card
Baccarat place or a Mah-Jong seat); the last three are `null` when they do not apply.
`verify --json` adds `checkpoint` (`null` without `--checkpoint`): the file, the link, events
and head it covers, and the `key_id` its signature was checked with (`key_source`:
`public_key` when `--public-key` was given, else `checkpoint`).

When a command given `--json` cannot run (exit 2, 3 or 4) it still prints one object:
`{"schema_version": 1, "error": "…", "exit_code": N}`, and the same message as one line on
standard error.

Read commands (`verify`, `replay`, `recall`, `report`, `commission`, `jackpot`, `bank`,
`export`, `seal`, `export-round`, `stats`, `reconcile`, `projections status`) never write to
the store, so they run as a read-only database role. When the stored finance views are behind
the log they add the missing rounds in memory; in text output a note on standard error says by
how many (`ledger projections update` stores them).
"""


def _exit_codes() -> str:
    rows = "\n".join(f"| {code} | {text} |" for code, text in EXIT_CODES.items())
    return (
        "## Exit codes\n\nEach code means one thing, for every command:\n\n"
        "| code | meaning |\n|---|---|\n" + rows + "\n\nAn unexpected exception is one line "
        "on standard error (`internal error: …`) and exit 4; `ledger --debug …` or "
        "`LEDGER_DEBUG=1` adds the traceback.\n"
    )


def _placeholder(param: Any, ctx: Any) -> str:
    shown = param.display_type_rich(ctx)
    return f" {shown}" if shown else ""


def _names(param: Any, ctx: Any) -> str:
    names = " / ".join([*param.opts, *param.secondary_opts])
    return f"`{names}{_placeholder(param, ctx)}`"


def _help(param: Any) -> str:
    text = " ".join((getattr(param, "help", None) or "").split())
    extra = []
    if getattr(param, "envvar", None) and getattr(param, "show_envvar", False):
        extra.append(f"env {param.envvar}")
    default = param.default
    if param.required:
        extra.append("required")
    elif (
        default not in (None, False, (), [])
        and not callable(default)
        and not getattr(param, "is_flag", False)
    ):
        extra.append(f"default {default}")
    return (text + (f" ({'; '.join(extra)})" if extra else "")).replace("|", "\\|")


def _command(path: list[str], cmd: Any, parent: Any) -> list[str]:
    ctx = typer.Context(cmd, info_name=path[-1], parent=parent)
    lines = [f"### `{' '.join(path)}`", ""]
    usage = " ".join(cmd.collect_usage_pieces(ctx))
    lines += ["```", f"{' '.join(path)} {usage}".rstrip(), "```", ""]
    doc = inspect.cleandoc(cmd.help or "")
    if doc:
        lines += [doc, ""]
    args = [p for p in cmd.params if p.param_type_name == "argument"]
    opts = [p for p in cmd.params if p.param_type_name == "option" and not getattr(p, "hidden", False)]
    if args or opts:
        lines += ["| argument / option | meaning |", "|---|---|"]
        for p in args:
            lines.append(f"| `{p.display_type_rich(ctx) or p.name.upper()}` | {_help(p)} |")
        for p in opts:
            lines.append(f"| {_names(p, ctx)} | {_help(p)} |")
        lines.append("")
    return lines


def render() -> str:
    """docs/CLI.md as the commands describe themselves."""
    root = typer.main.get_command(app)
    ctx = typer.Context(root, info_name="ledger")
    out = [_INTRO, _exit_codes(), _JSON, "## Global options", "", "| option | meaning |", "|---|---|"]
    for p in root.params:
        if p.param_type_name == "option" and not getattr(p, "hidden", False):
            out.append(f"| {_names(p, ctx)} | {_help(p)} |")
    out += ["", "## Commands", ""]
    commands: dict[str, Any] = getattr(root, "commands", {})
    for name, cmd in commands.items():
        sub = getattr(cmd, "commands", None)
        if sub:
            group_ctx = typer.Context(cmd, info_name=name, parent=ctx)
            out += [f"### `ledger {name}`", "", inspect.cleandoc(cmd.help or ""), ""]
            for sub_name, sub_cmd in sub.items():
                out += _command(["ledger", name, sub_name], sub_cmd, group_ctx)
        else:
            out += _command(["ledger", name], cmd, ctx)
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str]) -> int:
    """Write docs/CLI.md, or with ``--check`` say whether it is current (exit 1 if not)."""
    text = render()
    if "--check" in argv:
        current = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
        if current != text:
            sys.stderr.write(f"{DOC} is out of date: run python -m cli.reference\n")
            return 1
        return 0
    DOC.write_text(text, encoding="utf-8")
    sys.stdout.write(f"wrote {DOC}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
