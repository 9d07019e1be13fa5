"""What the statistics collect from a Fish-Prawn-Crab table: its shaker (each die of every
``dice_shown``, and small or big totals for the runs test). ``GAME.equipment``."""

from __future__ import annotations

from collections.abc import Sequence

from ledger.feed.envelope import FeedEvent
from ledger.games.base import Equipment


def throw(event: FeedEvent) -> Sequence[int] | None:
    """The faces of a ``dice_shown``."""
    if event.type != "dice_shown":
        return None
    return list(getattr(event, "dice", None) or ())


EQUIPMENT = Equipment("shaker", throw=throw, small_big_runs=True)
