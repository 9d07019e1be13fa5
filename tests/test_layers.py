"""The layers of ``docs/ARCHITECTURE.md``: each imports only the layers below it.

:data:`LAYERS` is the rule, bottom first: the packages (and modules) each layer holds. Every
module of ``ledger``, ``projections`` and ``cli`` lies in exactly one layer (the most specific
entry that names it), and every import it makes — module level, function body or
``if TYPE_CHECKING:`` block alike, read by :mod:`tests.import_graph` — reads a module of its own
layer or of a layer below, unless the pair is in :data:`EXEMPT` with its reason. The document
states the same rule: the table :func:`layer_table` writes is in ``docs/ARCHITECTURE.md`` word
for word, and the ``__init__.py`` of each layer package says which layers it may import.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase

from tests.import_graph import MODULES, ROOT, Import, imports


@dataclass(frozen=True)
class Layer:
    """One layer: its name, what it holds, and the packages or modules that form it."""

    name: str
    holds: str
    members: tuple[str, ...]
    """A package (with everything under it), an ``fnmatch`` pattern of module names, or
    ``=name`` for that one module alone."""


LAYERS: tuple[Layer, ...] = (
    Layer(
        "domain",
        "values and aggregates: money, findings, errors, citations, rulebooks, equipment, the "
        "round and table aggregates (facts only), the feed's vocabulary (envelope, field types)",
        ("ledger.domain", "ledger.feed"),
    ),
    Layer(
        "games", "the GAMES registry and each game's models, rules, derivation and hooks", ("ledger.games",)
    ),
    Layer(
        "codec",
        "bytes to facts and facts to stored bytes: line parsing, the shortcuts, the bulk "
        "recorders, chain framing, the feed's JSON schema",
        ("ledger.codec",),
    ),
    Layer(
        "storage",
        "the event store (LedgerApp), the SQL dialects, the log read as rounds, the collector of long passes",
        ("ledger.storage",),
    ),
    Layer("verify", "one pass over the log: chain check, judge, comparisons, snapshot", ("ledger.verify",)),
    Layer(
        "proof",
        "what proves the log: seal and checkpoints, notes, the Merkle log, witnesses, round bundles",
        ("ledger.proof", "ledger.merkle", "ledger.witness"),
    ),
    Layer(
        "projections", "read models folded from closed rounds, their updater and exports", ("projections",)
    ),
    Layer(
        "services",
        "what the commands run: ingest, replay, verify by segments, ledger init, reports, "
        "statistics, the live follower",
        ("ledger.services", "ledger.report", "ledger.stats", "ledger.live"),
    ),
    Layer(
        "tools",
        "simulators (each game's simulate.py) and the demo; no production code imports them",
        ("ledger.tools", "ledger.games.*.simulate"),
    ),
    Layer("entry", "the command line, and the package's lazily loaded public names", ("=ledger", "cli")),
)
"""The layers, bottom first."""

EXEMPT: dict[tuple[str, str], str] = {}
"""(importing module, imported module) pairs allowed to read a layer above, and why."""

NEW_PACKAGES = ("ledger.domain", "ledger.storage", "ledger.proof", "ledger.services", "ledger.tools")
"""The layer packages whose ``__init__.py`` must state what they may import."""


def _matches(member: str, module: str) -> bool:
    if member.startswith("="):
        return module == member[1:]
    if "*" in member:
        return fnmatchcase(module, member)
    return module == member or module.startswith(member + ".")


def layer_of(module: str) -> int | None:
    """The index in :data:`LAYERS` of the most specific entry naming ``module``, else ``None``."""
    best: tuple[int, int] | None = None
    for index, layer in enumerate(LAYERS):
        for member in layer.members:
            if _matches(member, module) and (best is None or len(member.lstrip("=")) > best[0]):
                best = (len(member.lstrip("=")), index)
    return None if best is None else best[1]


def upward(i: Import) -> str | None:
    """What is wrong with import ``i`` if it reads a layer above its module's (and is not
    exempt), else ``None``."""
    mine = layer_of(i.module)
    if i.owner is None or mine is None or (i.module, i.owner) in EXEMPT:
        return None
    theirs = layer_of(i.owner)
    if theirs is None or theirs <= mine:
        return None
    where = " (TYPE_CHECKING)" if i.type_checking else " (in a function)" if i.local else ""
    return f"{i.module} [{LAYERS[mine].name}] imports {i.owner} [{LAYERS[theirs].name}]{where}: {i.statement}"


def upward_imports() -> list[str]:
    """Every import that reads a layer above its own (and is not exempt)."""
    return sorted({bad for module in MODULES for i in imports(module) if (bad := upward(i)) is not None})


def _members_text(layer: Layer) -> str:
    return ", ".join(f"`{m.lstrip('=')}`" for m in layer.members)


def layer_table() -> str:
    """The layers as the Markdown table ``docs/ARCHITECTURE.md`` shows, top first."""
    rows = ["| layer | packages and modules | holds | may import |", "|---|---|---|---|"]
    for index in reversed(range(len(LAYERS))):
        layer = LAYERS[index]
        below = ", ".join(lower.name for lower in reversed(LAYERS[:index])) or "nothing first-party"
        rows.append(f"| {layer.name} | {_members_text(layer)} | {layer.holds} | {below} |")
    return "\n".join(rows) + "\n"


def may_import(name: str) -> str:
    """The sentence a layer package's docstring holds: the layers below it, nearest first."""
    index = [layer.name for layer in LAYERS].index(name)
    below = [lower.name for lower in reversed(LAYERS[:index])]
    return f"It may import the layers below it: {', '.join(below) or 'none'}."


def test_every_module_lies_in_a_layer() -> None:
    assert [m for m in MODULES if layer_of(m) is None] == []


def test_no_import_runs_up_across_the_layers() -> None:
    assert upward_imports() == []


def test_the_exemptions_are_still_needed() -> None:
    for module, imported in EXEMPT:
        assert module in MODULES and imported in MODULES
        assert any(i.owner == imported for i in imports(module)), (module, imported)


def test_the_document_states_these_layers() -> None:
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert layer_table() in text, "docs/ARCHITECTURE.md: paste the table tests/test_layers.py prints"


def test_the_document_names_only_modules_that_exist() -> None:
    """The two paths name the modules the code runs: each file the document names is there."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    named = set(re.findall(r"(?<![\w/.-])((?:ledger|projections|cli)/[\w/]+\.py)", text))
    assert named and sorted(n for n in named if not (ROOT / n).is_file()) == []


def test_each_layer_package_says_what_it_may_import() -> None:
    for package in NEW_PACKAGES:
        path = MODULES[package]
        doc = " ".join((ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "").split())
        name = next(layer.name for layer in LAYERS if package in layer.members)
        assert may_import(name) in doc, (package, may_import(name))


def test_a_module_is_in_its_most_specific_layer() -> None:
    assert LAYERS[layer_of("ledger.games.roulette.simulate") or 0].name == "tools"
    assert LAYERS[layer_of("ledger.games.roulette.rules") or 0].name == "games"
    assert LAYERS[layer_of("ledger") or 0].name == "entry"


def test_an_upward_import_is_found_and_a_downward_one_is_not() -> None:
    up = Import(
        "ledger.storage.store", "ledger.verify.engine.verify_store", "ledger.verify.engine", "…", False, True
    )
    down = Import(
        "ledger.verify.engine", "ledger.storage.store.LedgerApp", "ledger.storage.store", "…", False, False
    )
    assert upward(up) is not None and "TYPE_CHECKING" in (upward(up) or "")
    assert upward(down) is None


if __name__ == "__main__":
    print(layer_table())
