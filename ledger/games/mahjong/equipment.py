"""What the statistics collect from a Mah-Jong table: its wall (the tiles each seat draws from
the wall during the deal, per seat, over 34 kinds, or the 28 of MJ-S). ``GAME.equipment``."""

from __future__ import annotations

from collections.abc import Iterator

from ledger.domain.round import Round
from ledger.games.base import Cells, Equipment, Pool
from ledger.games.mahjong.tiles import CODES, COPIES, KINDS, SIMPLIFIED_KINDS

_INDEX = {code: i for i, code in enumerate(CODES)}
_SIMPLIFIED = frozenset(SIMPLIFIED_KINDS)
_DEAL_OVER = frozenset({"tile_discarded", "meld_claimed", "kong_declared", "win_declared", "game_drawn"})
_FULL = Cells(tuple(CODES), tuple([1 / KINDS] * KINDS))
_SIMPLE = Cells(tuple(CODES), tuple(1 / len(_SIMPLIFIED) if i in _SIMPLIFIED else 0.0 for i in range(KINDS)))


def draws(rnd: Round) -> Iterator[tuple[str, int, int]]:
    """``(tiles:<seat>[:simplified], 34, tile kind)`` for each tile drawn from the wall in the
    deal, until the first discard, claim, kong or end."""
    suffix = ":simplified" if getattr(rnd.opened, "variant", None) == "simplified" else ""
    for event in rnd.events:
        kind = event.type
        if kind in _DEAL_OVER:
            return
        if kind == "tile_drawn" and getattr(event, "from_", None) == "wall":
            yield (
                f"tiles:{getattr(event, 'seat', None)}{suffix}",
                KINDS,
                _INDEX[str(getattr(event, "tile", None))],
            )


def cells(test: str) -> Cells | None:
    """The cells of a ``tiles:`` test."""
    if not test.startswith("tiles:"):
        return None
    return _SIMPLE if test.endswith(":simplified") else _FULL


_FULL_LABELS = tuple(CODES)
_SIMPLE_KINDS = tuple(sorted(_SIMPLIFIED))
_SIMPLE_LABELS = tuple(CODES[i] for i in _SIMPLE_KINDS)


def pool(rnd: Round) -> Pool | None:
    """The tiles drawn from the round's wall, deal and play (``from`` wall or tail: every tile
    that left the wall once), against the wall's composition: four of each of the 34 kinds
    (136 tiles), or of the 28 of MJ-S (112). ``None`` if no tile was drawn."""
    counts = [0] * KINDS
    for event in rnd.events:
        tile = getattr(event, "tile", None) if event.type == "tile_drawn" else None
        if tile is not None:
            counts[_INDEX[str(tile)]] += 1
    if not any(counts):
        return None
    if getattr(rnd.opened, "variant", None) == "simplified":
        return Pool(COPIES, _SIMPLE_LABELS, tuple(counts[i] for i in _SIMPLE_KINDS))
    return Pool(COPIES, _FULL_LABELS, tuple(counts))


EQUIPMENT = Equipment("wall", draws=draws, cells=cells, pool=pool)
