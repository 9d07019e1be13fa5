"""The registry of the six games: ``GAMES[key]`` is each game's :class:`~ledger.games.base.Game`.

Every game folder has the same files (see ``ledger.games.base``).
"""

from __future__ import annotations

from ledger.games.base import Game
from ledger.games.fish_prawn_crab import GAME as FISH_PRAWN_CRAB
from ledger.games.mahjong import GAME as MAHJONG
from ledger.games.roulette import GAME as ROULETTE
from ledger.games.stud_poker import GAME as STUD_POKER
from ledger.games.super_pan9 import GAME as SUPER_PAN9
from ledger.games.three_card_baccarat import GAME as THREE_CARD_BACCARAT

GAMES: dict[str, Game] = {
    g.key: g for g in (SUPER_PAN9, FISH_PRAWN_CRAB, THREE_CARD_BACCARAT, MAHJONG, ROULETTE, STUD_POKER)
}

__all__ = ["GAMES", "Game"]
