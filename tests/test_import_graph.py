"""The import graph of ``ledger``, ``projections`` and ``cli`` has no cycle, and no cycle is hidden.

The graph is read from the source (``ast``, by :mod:`tests.import_graph`, which
``tests/test_layers.py`` reads too), not by importing: every ``import`` and
``from … import`` of a first-party module is an edge, wherever it stands (module level,
``TYPE_CHECKING`` block or function body). A function-local import of a first-party module is
how a cycle gets dodged, so it fails too, unless listed in :data:`LAZY_FIRST_PARTY` with the
reason; a function-local import of a third-party library is allowed only for the heavy or
optional ones in :data:`LAZY_THIRD_PARTY`.

The command line defers imports on purpose, so that ``ledger --version`` and ``ledger --help``
start in a fraction of a second: ``cli.main`` imports a command's module only when that command
runs (with ``importlib``, which the graph counts as an edge from ``cli.main`` to every module
that declares ``COMMANDS``), and the pairs of :data:`LAZY_CLI` are allowed inside functions of
``cli/`` only, each with its reason. A deferred import still counts as an edge, so a lazy
import that would close a cycle fails :func:`test_no_import_cycle` all the same.
"""

from __future__ import annotations

import sys

from tests.import_graph import MODULES, imports

_GAME_ON_FIRST_LOOKUP = (
    "the games' registry imports a game's package (rules, models, tables) on the first lookup "
    "of its key, so that a command on a store without that game (or an empty one) does not pay "
    "for it; the game packages never import the registry"
)
LAZY_FIRST_PARTY: dict[tuple[str, str], str] = {
    ("ledger.games", f"ledger.games.{game}"): _GAME_ON_FIRST_LOOKUP
    for game in ("super_pan9", "fish_prawn_crab", "three_card_baccarat", "mahjong", "roulette", "stud_poker")
}
"""(importing module, imported module) pairs allowed inside a function, and why."""

LAZY_CLI: dict[tuple[str, str], str] = {
    ("cli.main", "eventsourcing"): "the store's exception classes, read only when a command "
    "failed: importing eventsourcing would cost every start-up "
    "(`ledger --version`) about 0.1 s",
    ("cli.projections", "ledger.live.follower"): "only `projections update --follow` needs it; "
    "it loads the NATS client and prometheus, ~0.2 s of every other projections command",
    ("cli.projections", "ledger.live.run"): "only `projections update --follow` parses --every; "
    "same modules as ledger.live.follower",
    ("cli.render", "rich"): "rich.progress, only when a progress bar is drawn on a terminal (~0.01 s "
    "of every command's start-up otherwise)",
}
"""(module of ``cli/``, imported first-party module or third-party package) pairs allowed
inside a function to keep start-up light, and why."""

LAZY_THIRD_PARTY: dict[str, str] = {
    "pyarrow": "heavy and optional: only `ledger export --format parquet` needs it",
    "psycopg": "only a PostgreSQL store needs the driver; SQLite runs without loading it",
    "scipy": "heavy: only `ledger stats` and the day page's surveillance read its exact tails",
    "numpy": "comes with scipy, for the same statistics only",
    "aiohttp": "only `ledger witness serve` runs an HTTP server; every other command starts "
    "without loading it",
}
"""Top-level third-party packages that may be imported inside a function, and why."""


def _graph() -> tuple[dict[str, set[str]], list[str]]:
    """Edges between first-party modules, and the function-local imports that are not allowed."""
    edges: dict[str, set[str]] = {}
    bad: list[str] = []
    for module in MODULES:
        found = imports(module)
        edges[module] = {i.owner for i in found if i.owner is not None} - {module}
        for i in found:
            if not i.local:
                continue
            top = i.target.partition(".")[0]
            if (module, i.owner or top) in LAZY_CLI:
                continue
            if i.owner is not None:
                if (module, i.owner) not in LAZY_FIRST_PARTY:
                    bad.append(f"{module}: {i.statement}")
            elif top not in sys.stdlib_module_names and top not in LAZY_THIRD_PARTY:
                bad.append(f"{module}: {i.statement}")
    return edges, bad


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_packages_are_found() -> None:
    assert {"ledger.storage.store", "projections.updater", "cli.main", "ledger.games.base"} <= set(MODULES)


def test_no_import_cycle() -> None:
    edges, _ = _graph()
    assert _cycles(edges) == []


def test_no_function_local_import_dodges_a_cycle() -> None:
    _, bad = _graph()
    assert bad == []


def test_lazy_imports_of_the_command_line_stay_in_the_command_line() -> None:
    assert all(module.startswith("cli.") and module in MODULES for module, _ in LAZY_CLI)


def test_cli_main_reaches_every_command_module() -> None:
    edges, _ = _graph()
    assert {"cli.verify", "cli.ingest", "cli.projections"} <= edges["cli.main"]


def test_a_lazy_import_that_closes_a_cycle_is_still_a_cycle() -> None:
    edges, _ = _graph()
    assert _cycles({**edges, "cli.contract": edges["cli.contract"] | {"cli.main"}}) != []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_production_code_never_imports_a_simulator() -> None:
    """Only ``ledger.tools.simulators`` (and what serves ``ledger simulate``) reaches a simulator."""
    edges, _ = _graph()
    simulators = {m for m in MODULES if m.startswith("ledger.games.") and m.endswith(".simulate")}
    importers = {m for m, deps in edges.items() if deps & simulators and m not in simulators}
    assert importers <= {"ledger.tools.simulators", "cli.simulate", "ledger.tools.demo"}
