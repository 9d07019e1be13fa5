"""What the statistics collect from a Super Pan 9 table: its shoe (cards, read alike in every
game) and its four dice (each die of every valid ``dice_thrown``: a rethrown throw is not
counted). ``GAME.equipment``."""

from __future__ import annotations

from collections.abc import Sequence

from ledger.feed.envelope import FeedEvent
from ledger.games.base import Equipment


def throw(event: FeedEvent) -> Sequence[int] | None:
    """The faces of a valid ``dice_thrown``."""
    if event.type != "dice_thrown" or getattr(event, "valid", None) is False:
        return None
    return list(getattr(event, "dice", None) or ())


EQUIPMENT = Equipment("shoe", throw=throw)
