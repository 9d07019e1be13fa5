"""The registry of the six games: ``GAMES[key]`` is each game's :class:`~ledger.games.base.Game`.

Every game folder has the same files (see ``ledger.games.base``).

The registry is lazy: a game's package (its rules, models and tables) is imported on the first
lookup of its key, so a command that touches one game, or none (any command on an empty store),
does not pay for the other five. The keys and their order are fixed here; ``key in GAMES``,
``list(GAMES)`` and ``len(GAMES)`` load nothing, and iterating values or items loads every game.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from ledger.games.base import Game


def _super_pan9() -> Game:
    from ledger.games.super_pan9 import GAME

    return GAME


def _fish_prawn_crab() -> Game:
    from ledger.games.fish_prawn_crab import GAME

    return GAME


def _three_card_baccarat() -> Game:
    from ledger.games.three_card_baccarat import GAME

    return GAME


def _mahjong() -> Game:
    from ledger.games.mahjong import GAME

    return GAME


def _roulette() -> Game:
    from ledger.games.roulette import GAME

    return GAME


def _stud_poker() -> Game:
    from ledger.games.stud_poker import GAME

    return GAME


class GameRegistry(Mapping[str, Game]):
    """The six games by key, each game's package imported on the first lookup of its key."""

    def __init__(self, loaders: dict[str, Callable[[], Game]]) -> None:
        self._loaders = loaders
        self._loaded: dict[str, Game] = {}

    def __getitem__(self, key: str) -> Game:
        game = self._loaded.get(key)
        if game is None:
            game = self._loaders[key]()  # KeyError for an unknown key, as a dict gives
            if game.key != key:
                raise AssertionError(f"the registry's key {key!r} loads the game {game.key!r}")
            self._loaded[key] = game
        return game

    def __contains__(self, key: object) -> bool:
        return key in self._loaders

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaders)

    def __len__(self) -> int:
        return len(self._loaders)


GAMES: Mapping[str, Game] = GameRegistry(
    {
        "SP9": _super_pan9,
        "FPC": _fish_prawn_crab,
        "3CB": _three_card_baccarat,
        "MJ": _mahjong,
        "RL": _roulette,
        "STUD": _stud_poker,
    }
)

__all__ = ["GAMES", "Game", "GameRegistry"]
