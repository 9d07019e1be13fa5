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
from dataclasses import dataclass
from functools import cache
from pathlib import Path

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


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """Full names an import statement reads (``from a import b`` → ``a.b``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".")
        if MODULES[module].name != "__init__.py":
            package.pop()
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, *([node.module] if node.module else [])])
    return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]


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


def command_modules() -> set[str]:
    """Modules of ``cli/`` that declare ``COMMANDS``: ``cli.main`` imports each when its command
    runs (``importlib``), an edge the ``import`` statements do not show."""
    return {
        m
        for m, path in MODULES.items()
        if m.startswith("cli.")
        and any(
            isinstance(n, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "COMMANDS" for t in n.targets)
            for n in ast.parse(path.read_text(encoding="utf-8")).body
        )
    }


@cache
def imports(module: str) -> tuple[Import, ...]:
    """Every name ``module`` imports, wherever the statement stands."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found = [
        Import(module, target, owner(target), ast.unparse(node), local, checking)
        for node, local, checking in _statements(tree)
        for target in _targets(module, node)
    ]
    if module == "cli.main":
        found += [
            Import(module, m, m, "importlib (COMMANDS)", False, False) for m in sorted(command_modules())
        ]
    return tuple(found)
