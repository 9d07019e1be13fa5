"""What a game's simulator plays into: a :class:`RoundBuilder` per round, the errors it injects
(:class:`Injected`) and the equipment bias of a table.

Low in the import graph (it imports nothing of the ledger) so that each game's ``simulate.py``,
``ledger/tools/simulators.py`` and ``ledger/tools/simulate.py`` can all use it without a cycle.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any


@dataclass(frozen=True)
class Injected:
    """An error a simulator put into a feed on purpose: the finding verify must report."""

    code: str
    table: str
    round: str
    bet: str | None

    def as_dict(self) -> dict[str, Any]:
        """JSON form for the sidecar file."""
        return {"code": self.code, "table": self.table, "round": self.round, "bet": self.bet}


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

COMMON_KINDS: tuple[str, ...] = ("wrong_payout", "late_bet", "missing_settlement", "wrong_commission")
"""The kinds every game with bets and settlements can inject; games add their own."""


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
    croupier: str | None = None
    """Written on ``round_opened`` when set."""
    bias: TableBias | None = None
    """Unfair equipment of this table, if any (``ledger simulate --bias``)."""
    _bets: int = 0

    def add(self, type_: str, **fields: Any) -> dict[str, Any]:
        """Append one line of ``type_`` with the given fields; returns it for later edits."""
        seq = len(self.lines) + 1
        at = self.start + self.step * (seq - 1)
        line = {
            "v": 1,
            "table": self.table,
            "game": self.game,
            "round": self.round,
            "seq": seq,
            "at": at.isoformat(),
            "type": type_,
            **fields,
        }
        if type_ == "round_opened" and self.croupier is not None:
            line["croupier"] = self.croupier
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
class TableBias:
    """Unfair equipment for one simulated table (``ledger simulate --bias``).

    ``weights`` makes an outcome (a roulette pocket, a face of every die) that many times as
    likely as the others; ``die_weights`` does it for one die only (``(die, face)``, from 1);
    ``missing`` names cards taken out of every shoe or deck; ``extra`` cards added to every
    shoe of more than one deck (a 3CB shoe: in a single deck a second copy is a duplicate verify
    reports, not a statistic).
    """

    weights: dict[int, float] = field(default_factory=dict)
    die_weights: dict[tuple[int, int], float] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)

    def pocket(self, rng: random.Random) -> int:
        """A roulette number 0–36 from this wheel."""
        if not self.weights:
            return rng.randint(0, 36)
        return rng.choices(range(37), [self.weights.get(n, 1.0) for n in range(37)])[0]

    def die(self, rng: random.Random, die: int) -> int:
        """A face 1–6 of die number ``die`` (from 1) of this shaker."""
        weights = [self.die_weights.get((die, f), self.weights.get(f, 1.0)) for f in range(1, 7)]
        if all(w == 1.0 for w in weights):
            return rng.randint(1, 6)
        return rng.choices(range(1, 7), weights)[0]
