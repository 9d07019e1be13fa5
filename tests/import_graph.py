"""The import graph of ``ledger``, ``projections`` and ``cli``, read from the source (``ast``).

Shared by ``tests/test_import_graph.py`` (no cycle, no hidden cycle) and ``tests/test_layers.py``
(no import runs up across the layers). Every ``import`` and ``from … import`` is read wherever it
stands — module level, ``if TYPE_CHECKING:`` block or function body — and each is returned with
where it stood, so that a test can decide what it allows. ``cli.main`` imports a command's module
with ``importlib`` when the command runs: each module of ``cli/`` that declares ``COMMANDS`` is an
import of ``cli.main`` too.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("ledger", "projections", "cli")


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()
"""Every first-party module by dotted name (a package by its own name), and its file."""


@dataclass(frozen=True)
class Import:
    """One name an import statement reads."""

    module: str
    """The importing module."""
    target: str
    """The full name read (``from a import b`` → ``a.b``)."""
    owner: str | None
    """The first-party module ``target`` is or lies in; ``None`` for a third-party or stdlib one."""
    statement: str
    """The statement, as source text."""
    local: bool
    """Inside a function body."""
    type_checking: bool
    """Inside an ``if TYPE_CHECKING:`` block (read by the type checker only)."""


def owner(name: str) -> str | None:
    """The first-party module ``name`` is or lies in (``a.b.C`` → ``a.b``), else ``None``."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _targets(module: str, statement: dict[str, Any]) -> list[str]:
    """Full names an import statement (as :func:`_read` gives it) reads (``from a import b`` →
    ``a.b``)."""
    if statement["from"] is None:
        return list(statement["names"])
    base = statement["from"]
    if statement["level"]:
        package = module.split(".")
        if MODULES[module].name != "__init__.py":
            package.pop()
        package = package[: len(package) - (statement["level"] - 1)]
        base = ".".join([*package, *([statement["from"]] if statement["from"] else [])])
    return [f"{base}.{name}" if f"{base}.{name}" in MODULES else base for name in statement["names"]]


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _statements(tree: ast.AST) -> list[tuple[ast.Import | ast.ImportFrom, bool, bool]]:
    """Every import statement under ``tree``, with (inside a function, inside TYPE_CHECKING)."""
    out: list[tuple[ast.Import | ast.ImportFrom, bool, bool]] = []
    work: list[tuple[ast.AST, bool, bool]] = [(tree, False, False)]
    while work:
        node, local, checking = work.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            out.append((node, local, checking))
            continue
        local = local or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        if isinstance(node, ast.If) and _is_type_checking(node):
            work += [(child, local, True) for child in node.body]
            work += [(child, local, checking) for child in node.orelse]
            continue
        # An import is a statement: no expression holds one, so expressions are not walked.
        work += [
            (child, local, checking)
            for child in ast.iter_child_nodes(node)
            if not isinstance(child, ast.expr)
        ]
    return out


def _parse(source: str) -> dict[str, Any]:
    """What the graph needs of one file's source: its import statements (source text, the
    ``from`` module or ``None``, the relative level, the names, inside a function, inside
    ``TYPE_CHECKING``) and whether it assigns ``COMMANDS`` at module level."""
    tree = ast.parse(source)
    return {
        "statements": [
            {
                "text": ast.unparse(node),
                "from": (node.module or "") if isinstance(node, ast.ImportFrom) else None,
                "level": node.level if isinstance(node, ast.ImportFrom) else 0,
                "names": [alias.name for alias in node.names],
                "local": local,
                "checking": checking,
            }
            for node, local, checking in _statements(tree)
        ],
        "commands": any(
            isinstance(n, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "COMMANDS" for t in n.targets)
            for n in tree.body
        ),
    }


CACHE = Path(tempfile.gettempdir()) / f"ledger-tests-import-graph-{os.getuid()}.json"
"""What :func:`_parse` found in each source, by the SHA-256 of the source and the Python version
(parsing all of ``ledger``, ``projections`` and ``cli`` is about 1.3 s of CPU; a file read back
from here is one whose bytes are exactly those parsed)."""


@cache
def _parsed() -> dict[str, dict[str, Any]]:
    """:func:`_parse` of every module, by dotted name: from :data:`CACHE` where the source is
    unchanged, parsed (and the cache rewritten) where it is not."""
    try:
        stored = json.loads(CACHE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stored = {}
    if not isinstance(stored, dict):
        stored = {}
    version = sys.version.split()[0]
    out: dict[str, dict[str, Any]] = {}
    fresh: dict[str, dict[str, Any]] = {}
    for module, path in MODULES.items():
        source = path.read_bytes()
        key = f"{version}:{hashlib.sha256(source).hexdigest()}"
        found = stored.get(key)
        if not isinstance(found, dict) or set(found) != {"statements", "commands"}:
            found = _parse(source.decode("utf-8"))
        out[module] = fresh[key] = found
    if fresh.keys() != stored.keys():
        partial = CACHE.with_name(f"{CACHE.name}.{os.getpid()}")
        try:
            partial.write_text(json.dumps(fresh), encoding="utf-8")
            os.replace(partial, CACHE)
        except OSError:
            partial.unlink(missing_ok=True)
    return out


def command_modules() -> set[str]:
    """Modules of ``cli/`` that declare ``COMMANDS``: ``cli.main`` imports each when its command
    runs (``importlib``), an edge the ``import`` statements do not show."""
    return {m for m, found in _parsed().items() if m.startswith("cli.") and found["commands"]}


@cache
def imports(module: str) -> tuple[Import, ...]:
    """Every name ``module`` imports, wherever the statement stands."""
    found = [
        Import(module, target, owner(target), statement["text"], statement["local"], statement["checking"])
        for statement in _parsed()[module]["statements"]
        for target in _targets(module, statement)
    ]
    if module == "cli.main":
        found += [
            Import(module, m, m, "importlib (COMMANDS)", False, False) for m in sorted(command_modules())
        ]
    return tuple(found)
