"""The benchmark feed: seeded, every game that has a simulator, written as JSON Lines.

Games are picked up at run time (``ledger.games.GAMES`` entries with a ``simulate_round``), so
the feed grows as simulators land. Large feeds are written in chunks of at most
:data:`CHUNK_ROUNDS` rounds so that generation never holds the whole feed in memory; each
chunk after the first plays on its own tables (table codes suffixed ``-cN``), with its own
jackpot pools (``rulebook.jackpot.pool`` suffixed the same way: a simulated pool's state lives
in one chunk), later in time.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ledger.games import GAMES
from ledger.games.base import Game
from ledger.tools.simulate import DEFAULT_START, simulate
from ledger.tools.simulators import SIMULATORS

CHUNK_ROUNDS = 20_000
ROUND_INTERVAL = timedelta(seconds=90)


@dataclass(frozen=True)
class FeedFile:
    """A written feed: where, how many lines and rounds, which games."""

    path: str
    lines: int
    rounds: int
    games: tuple[str, ...]
    tables: int
    bytes: int


def simulated_games(keys: list[str] | None = None) -> list[Game]:
    """Every registered game that has a simulator today (or those of ``keys`` among them)."""
    games = [g for g in GAMES.values() if g.key in SIMULATORS]
    if keys:
        unknown = set(keys) - {g.key for g in games}
        if unknown:
            raise ValueError(f"no simulator for {' '.join(sorted(unknown))}")
        games = [g for g in games if g.key in keys]
    return games


def write_feed(
    path: str,
    rounds: int,
    *,
    tables: int = 10,
    seed: int = 1,
    chunk_rounds: int = CHUNK_ROUNDS,
    games: list[str] | None = None,
    first_chunk: int = 0,
) -> FeedFile:
    """Write about ``rounds`` rounds (rounded up to whole rounds per table) over every game
    with a simulator, or the ``games`` named.

    ``first_chunk`` numbers the chunks from there: a feed written with ``first_chunk=K > 0``
    plays on its own tables (``-cK``, …) later in time, so it can follow another feed in the
    same store (``bench.resumable``'s "new events since the checkpoint")."""
    chosen = simulated_games(games)
    if not chosen:
        raise RuntimeError("no game has a simulator")
    per_chunk_tables = tables * len(chosen)
    total_per_table = max(1, math.ceil(rounds / per_chunk_tables))
    chunk_per_table = max(1, chunk_rounds // per_chunk_tables)
    lines = made = size = 0
    with open(path, "w", encoding="utf-8") as out:
        chunk = first_chunk
        while made < total_per_table * per_chunk_tables:
            left = total_per_table - made // per_chunk_tables
            per_table = min(chunk_per_table, left)
            start = DEFAULT_START + ROUND_INTERVAL * (chunk * (chunk_per_table + 1))
            sim = simulate(
                chosen,
                rounds=per_table,
                tables=tables,
                seed=seed + chunk,
                start=start,
                round_interval=ROUND_INTERVAL,
            )
            for line in sim.lines:
                if chunk:
                    _own_chunk(line, chunk)
                text = json.dumps(line, separators=(",", ":")) + "\n"
                out.write(text)
                size += len(text)
                lines += 1
            made += sim.rounds
            chunk += 1
    return FeedFile(path, lines, made, tuple(g.key for g in chosen), tables, size)


def _own_chunk(line: dict[str, Any], chunk: int) -> None:
    """Give a later chunk's line its own table and its own jackpot pool."""
    line["table"] = f"{line['table']}-c{chunk}"
    rulebook = line.get("rulebook")
    jackpot = rulebook.get("jackpot") if isinstance(rulebook, dict) else None
    if isinstance(rulebook, dict) and isinstance(jackpot, dict) and isinstance(jackpot.get("pool"), str):
        # Copies: a simulator may hand every round the same rulebook object.
        line["rulebook"] = {**rulebook, "jackpot": {**jackpot, "pool": f"{jackpot['pool']}-c{chunk}"}}
