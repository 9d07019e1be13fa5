"""``ledger simulate``: realistic, seeded feeds with injected dealer errors.

Each game's ``simulate.py`` plays one round into a :class:`RoundBuilder`; this module runs many
tables of many games side by side, interleaves their lines in time order as a live feed would,
and injects errors at a given rate. Every injected error is returned as an
:class:`~ledger.games.base.Injected` — the finding verify must report — so tests can check that
verify finds exactly those and nothing else. The same seed gives the same feed, byte for byte.
"""

from __future__ import annotations

import heapq
import json
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from ledger.games.base import Game, Injected

ERROR_KINDS: dict[str, str] = {
    "wrong_payout": "settlement_mismatch",
    "late_bet": "bet_after_close",
    "missing_settlement": "missing_settlement",
    "wrong_commission": "commission_mismatch",
    "mj_wrong_fan": "payment_mismatch",
    "mj_liability_ignored": "payment_mismatch",
    "mj_missing_commission": "commission_mismatch",
}
"""Error kinds a simulator may inject, and the finding code each must produce."""

COMMON_KINDS: tuple[str, ...] = ("wrong_payout", "late_bet", "missing_settlement",
                                 "wrong_commission")
"""The kinds every game with bets and settlements can inject; games add their own."""

MACAU = timezone(timedelta(hours=8))
DEFAULT_START = datetime(2026, 11, 20, 10, 0, tzinfo=MACAU)


@dataclass
class RoundBuilder:
    """Collects one round's feed lines, numbering ``seq`` and advancing the clock."""

    table: str
    game: str
    round: str
    start: datetime
    lines: list[dict[str, Any]] = field(default_factory=list)
    step: timedelta = timedelta(seconds=2)
    table_state: dict[str, Any] = field(default_factory=dict)
    """Kept from round to round of one table (a 3CB carried tie, an SP9 bank's run)."""
    game_state: dict[str, Any] = field(default_factory=dict)
    """Shared by every table of the game in one simulation."""
    _bets: int = 0

    def add(self, type_: str, **fields: Any) -> dict[str, Any]:
        """Append one line of ``type_`` with the given fields; returns it for later edits."""
        seq = len(self.lines) + 1
        at = self.start + self.step * (seq - 1)
        line = {"v": 1, "table": self.table, "game": self.game, "round": self.round,
                "seq": seq, "at": at.isoformat(), "type": type_, **fields}
        self.lines.append(line)
        return line

    def next_bet(self) -> str:
        """A fresh bet id for this round: ``b1``, ``b2``, …"""
        self._bets += 1
        return f"b{self._bets}"

    def injected(self, kind: str, bet: str | None) -> Injected:
        """Record that ``kind`` was injected here, as the finding verify must report."""
        return Injected(ERROR_KINDS[kind], self.table, self.round, bet)


@dataclass
class Simulation:
    """A simulated feed: its lines in time order and the errors injected into it."""

    lines: list[dict[str, Any]]
    injected: list[Injected]
    rounds: int

    def write(self, path: str) -> str:
        """Write the feed as JSON Lines and the injected errors next to it; returns the sidecar path."""
        with open(path, "w", encoding="utf-8") as out:
            for line in self.lines:
                out.write(json.dumps(line, separators=(",", ":")) + "\n")
        sidecar = path + ".errors.json"
        with open(sidecar, "w", encoding="utf-8") as out:
            json.dump([i.as_dict() for i in self.injected], out, indent=1)
            out.write("\n")
        return sidecar


def simulate(
    games: Sequence[Game],
    *,
    rounds: int,
    tables: int,
    seed: int,
    error_rate: float = 0.0,
    start: datetime = DEFAULT_START,
    round_interval: timedelta = timedelta(seconds=90),
    rounds_for: dict[str, int] | None = None,
    game_state: dict[str, dict[str, Any]] | None = None,
) -> Simulation:
    """Play ``rounds`` rounds on each of ``tables`` tables of every game in ``games``.

    ``rounds_for`` overrides ``rounds`` per game key (a Mah-Jong game is a long "round"); its
    tables then play fewer, longer rounds over the same day. ``game_state`` seeds a game's shared
    state by key (``{"STUD": stud.simulate.force_plan([...])}`` forces jackpot hands for a demo).

    Each round gets an injected error with probability ``error_rate`` (one error per round at
    most, of a kind the game supports), so the sidecar lists exactly what verify must find.
    """
    if not 0.0 <= error_rate <= 1.0:
        raise ValueError("error_rate is a probability, from 0 to 1")
    rng = random.Random(seed)
    streams: list[list[dict[str, Any]]] = []
    injected: list[Injected] = []
    total = 0
    for game in games:
        if game.simulate_round is None:
            raise ValueError(f"{game.key} has no simulator yet")
        game_rounds = (rounds_for or {}).get(game.key, rounds)
        total += game_rounds * tables
        interval = round_interval * rounds / game_rounds  # a table's day lasts as long
        shared: dict[str, Any] = dict((game_state or {}).get(game.key, {}))
        for t in range(1, tables + 1):
            table = f"{game.key}-{t:02d}"
            table_rng = random.Random(rng.getrandbits(64))
            table_state: dict[str, Any] = {}
            stream: list[dict[str, Any]] = []
            for r in range(1, game_rounds + 1):
                kind = None
                if game.injectable and table_rng.random() < error_rate:
                    kind = table_rng.choice(game.injectable)
                builder = RoundBuilder(table, game.key, f"{r:06d}", start + interval * r,
                                       table_state=table_state, game_state=shared)
                injected += game.simulate_round(builder, table_rng, kind)
                stream += builder.lines
            streams.append(stream)
    lines = list(_merge_by_time(streams))
    for game in games:
        if game.finish_feed is not None:
            injected = game.finish_feed(lines, injected)
    return Simulation(lines, injected, total)


def _merge_by_time(streams: list[list[dict[str, Any]]]) -> Iterator[dict[str, Any]]:
    """Interleave per-table streams by timestamp, as a property-wide live feed arrives."""
    keyed = [[(line["at"], i, n, line) for n, line in enumerate(s)] for i, s in enumerate(streams)]
    for _, _, _, line in heapq.merge(*keyed):
        yield line
