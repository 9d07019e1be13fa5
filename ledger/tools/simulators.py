"""The simulator of each game, by game key, for ``ledger simulate``, the demo and the benchmarks.

Kept out of the production :class:`~ledger.games.base.Game` record: nothing that ingests,
stores or verifies a feed imports a simulator, and a simulator may freely use the feed parser
and the rules (it checks its own output with them) without an import cycle.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ledger.games import GAMES
from ledger.games.base import Game
from ledger.games.fish_prawn_crab import simulate as fish_prawn_crab
from ledger.games.mahjong import simulate as mahjong
from ledger.games.roulette import simulate as roulette
from ledger.games.stud_poker import simulate as stud_poker
from ledger.games.super_pan9 import simulate as super_pan9
from ledger.games.three_card_baccarat import simulate as three_card_baccarat
from ledger.tools.builder import COMMON_KINDS, Injected, RoundBuilder

RoundSimulator = Callable[[RoundBuilder, random.Random, "str | None"], list[Injected]]
"""Plays one round into a builder; the third argument names the error to inject, if any."""

FeedFinisher = Callable[[list[dict[str, Any]], list[Injected]], list[Injected]]
"""Edits the merged feed lines in place; takes and returns the list of injected errors."""


@dataclass(frozen=True)
class Simulator:
    """How to simulate one game: a round at a time, then (optionally) over the merged feed."""

    simulate_round: RoundSimulator
    injectable: tuple[str, ...] = ()
    """The error kinds it can inject (see ``ledger.tools.builder.ERROR_KINDS``)."""
    finish_feed: FeedFinisher | None = None
    """Run once over the merged, time-ordered feed (the order the ledger will store it), for
    state shared across tables, such as a linked jackpot pool."""


SIMULATORS: dict[str, Simulator] = {
    "FPC": Simulator(fish_prawn_crab.simulate_round, fish_prawn_crab.INJECTABLE),
    "MJ": Simulator(mahjong.simulate_round, mahjong.INJECTABLE),
    "RL": Simulator(roulette.simulate_round, COMMON_KINDS),
    "STUD": Simulator(stud_poker.simulate_round, stud_poker.INJECTABLE, stud_poker.finish_feed),
    "SP9": Simulator(super_pan9.simulate_round, (*super_pan9.INJECTABLE, *super_pan9.EXTRA_KINDS)),
    "3CB": Simulator(three_card_baccarat.simulate_round, three_card_baccarat.INJECTABLE),
}
"""Every game with a simulator, by key."""


def simulated_games() -> list[Game]:
    """The games that have a simulator, in registry order."""
    return [game for key, game in GAMES.items() if key in SIMULATORS]
