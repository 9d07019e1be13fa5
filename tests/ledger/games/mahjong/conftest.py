"""Mah-Jong test fixtures: a small builder of feeds — dealt hands, then play, then money.

The deal follows ``tables.deal_order``: each seat's tiles are dealt in the order given, so the
last tile listed for East is his last dealt tile. Lines go through the real path (JSON →
``parse_line`` → ``Round.replay`` → ``check_round``).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from ledger.codec.parse import Rejection, parse_line
from ledger.domain.findings import Finding
from ledger.domain.round import Round
from ledger.games.mahjong import GAME
from ledger.games.mahjong.round import derive
from ledger.games.mahjong.tables import deal_order
from ledger.games.mahjong.tiles import CODES, SIMPLIFIED_KINDS
from ledger.verify.checks import check_round


class Script:
    """Feed lines of one game, written step by step."""

    def __init__(
        self,
        hands: dict[str, str],
        *,
        variant: str = "conventional",
        stake: str = "25/50",
        capital: dict[str, str] | None = None,
        round_wind: str = "E",
        rulebook: dict[str, Any] | None = None,
    ) -> None:
        self.lines: list[dict[str, Any]] = []
        seats = [s for s in "ESWN" if s in hands]
        opened: dict[str, Any] = dict(
            currency="MOP",
            variant=variant,
            stake=stake,
            players={s: f"P-{s}" for s in seats},
            capital=capital or {s: "5000" for s in seats},
            round_wind=round_wind,
            game_no=1,
        )
        if rulebook:
            opened["rulebook"] = rulebook
        self.add("round_opened", **opened)
        self.used: Counter[str] = Counter()
        self.variant = variant
        queues = {s: hands[s].split() for s in seats}
        for seat in deal_order(variant, tuple(seats)):  # type: ignore[arg-type]
            self.draw(seat, queues[seat].pop(0))
        assert not any(queues.values()), queues

    def add(self, type_: str, **fields: Any) -> dict[str, Any]:
        seq = len(self.lines) + 1
        line = {
            "v": 1,
            "table": "MJ-T",
            "game": "MJ",
            "round": "g1",
            "seq": seq,
            "at": f"2026-11-20T10:{seq // 60:02d}:{seq % 60:02d}+08:00",
            "type": type_,
            **{k.rstrip("_"): v for k, v in fields.items()},
        }
        self.lines.append(line)
        return line

    def draw(self, seat: str, tile: str, frm: str = "wall") -> Script:
        self.used[tile] += 1
        self.add("tile_drawn", seat=seat, tile=tile, from_=frm)
        return self

    def discard(self, seat: str, tile: str) -> Script:
        self.add("tile_discarded", seat=seat, tile=tile)
        return self

    def turn(self, seat: str, tile: str) -> Script:
        """Draw a tile from the wall and discard it at once."""
        return self.draw(seat, tile).discard(seat, tile)

    def claim(self, seat: str, kind: str, tiles: str, frm: str) -> Script:
        self.add("meld_claimed", seat=seat, kind=kind, tiles=tiles.split(), from_=frm)
        return self

    def win(self, seat: str, tile: str, source: str, frm: str | None = None) -> Script:
        fields: dict[str, Any] = {"seat": seat, "tile": tile, "source": source}
        if frm:
            fields["from_"] = frm
        self.add("win_declared", **fields)
        return self

    def pay(self, frm: str, to: str, amount: str, reason: str = "win") -> Script:
        self.add("payment_made", from_=frm, to=to, amount=amount, reason=reason)
        return self

    def commission(self, seat: str, amount: str) -> Script:
        self.add("commission_charged", seat=seat, amount=amount)
        return self

    def close(self) -> Script:
        self.add("round_closed")
        return self

    def pool(self, keep: Counter[str]) -> list[str]:
        """Every tile of the set not yet drawn, less ``keep``, in a fixed order."""
        kinds = range(34) if self.variant == "conventional" else SIMPLIFIED_KINDS
        left = Counter({CODES[k]: 4 for k in kinds}) - self.used - keep
        return sorted(left.elements())

    def round(self) -> Round:
        events = []
        for n, line in enumerate(self.lines, start=1):
            event = parse_line(json.dumps(line), n)
            assert not isinstance(event, Rejection), event
            events.append(event)
        return Round.replay(events)

    def findings(self) -> list[Finding]:
        """The error findings, less ``round_incomplete`` for a game cut short by the test."""
        return [
            f
            for f in check_round(self.round(), GAME)
            if f.severity == "error" and f.code != "round_incomplete"
        ]

    def codes(self) -> list[tuple[str, str | None]]:
        """``(code, seat)`` of each error finding, in order; a game cut short for the test is not
        reported as ``round_incomplete``."""
        return [(f.code, f.extra.get("seat")) for f in self.findings()]

    def steps(self) -> list[str]:
        return [s.text for s in derive(self.round()).steps]

    def copy(self) -> Script:
        other = object.__new__(Script)
        other.lines = [dict(line) for line in self.lines]
        other.used = Counter(self.used)
        other.variant = self.variant
        return other


@pytest.fixture
def mj() -> type[Script]:
    """The feed builder class."""
    return Script
