"""Game logic lives in the game folders: ``ledger/verify/``, ``ledger/report/``,
``ledger/stats/`` and ``projections/`` name no game.

Read from the source (``ast``), not by importing. A module of those folders fails when it

- imports a game's own module (``ledger.games.<game folder>`` or anything below it), or
- holds a string that is a game's code (``"SP9"``, ``"MJ"``, …) or a game folder's name
  (``"super_pan9"``), outside a docstring.

What is truly generic stays allowed: the registry ``ledger.games`` (``GAMES``, looked up by
the round's own ``game`` field), ``ledger.games.base`` (the ``Game`` record, its hooks and the
records they return) and ``ledger.games.money`` (the money helpers every game's ``money.py``
builds on). Docstrings and comments may name games as examples; logic may not.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ledger.games import GAMES

ROOT = Path(__file__).resolve().parent.parent
GENERIC_FOLDERS = ("ledger/verify", "ledger/report", "ledger/stats", "projections")
GAME_FOLDERS = frozenset(
    p.name for p in (ROOT / "ledger" / "games").iterdir() if p.is_dir() and (p / "__init__.py").is_file()
)
ALLOWED_GAME_MODULES = frozenset({"ledger.games", "ledger.games.base", "ledger.games.money"})
GAME_WORDS = frozenset(GAMES) | GAME_FOLDERS


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string nodes that are docstrings (module, class, function)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
        # attribute docstrings: a bare string right after an assignment
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for stmt in body:
                if (
                    isinstance(stmt, ast.Expr)
                    and isinstance(stmt.value, ast.Constant)
                    and isinstance(stmt.value.value, str)
                ):
                    found.add(id(stmt.value))
    return found


def _imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        return [node.module] + [
            f"{node.module}.{alias.name}" for alias in node.names if node.module == "ledger.games"
        ]
    return []


def game_mentions(source: str) -> list[str]:
    """Each mention of a game in a module's code, as ``line: what``."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        for name in _imported(node):
            if (
                name.startswith("ledger.games.")
                and name not in ALLOWED_GAME_MODULES
                and name.removeprefix("ledger.games.") not in {"GAMES", "Game"}
            ):
                found.append(f"{node.lineno}: imports {name}")  # type: ignore[attr-defined]
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docs
            and node.value in GAME_WORDS
        ):
            found.append(f"{node.lineno}: names the game {node.value!r}")
    return found


def test_generic_folders_name_no_game() -> None:
    offenders = {}
    for folder in GENERIC_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            mentions = game_mentions(path.read_text())
            if mentions:
                offenders[str(path.relative_to(ROOT))] = mentions
    assert not offenders, offenders


def test_the_guard_sees_each_kind_of_mention() -> None:
    """The check fails on what it is for, and lets docstrings and the registry be."""
    assert game_mentions('if rnd.game == "SP9":\n    pass\n') == ["1: names the game 'SP9'"]
    assert game_mentions("X = {'MJ': 1}\n") == ["1: names the game 'MJ'"]
    assert game_mentions("from ledger.games.mahjong.round import outcome\n") == [
        "1: imports ledger.games.mahjong.round"
    ]
    assert game_mentions("import ledger.games.roulette.tables\n") == [
        "1: imports ledger.games.roulette.tables"
    ]
    assert game_mentions("from ledger.games import super_pan9\n") == ["1: imports ledger.games.super_pan9"]
    assert (
        game_mentions(
            '"""SP9 and MJ, as examples."""\nfrom ledger.games import GAMES\n'
            "from ledger.games.base import Game\n"
            "from ledger.games.money import money_of\n"
        )
        == []
    )
    assert {"SP9", "FPC", "3CB", "MJ", "RL", "STUD", "super_pan9", "mahjong"} <= GAME_WORDS
