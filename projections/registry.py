"""The registry of views the updater keeps: commission, house movements, jackpot pool, bank.

Names are unique: they key the tracking records.
"""

from __future__ import annotations

from projections.bank import BankView
from projections.base import View
from projections.commission import CommissionView
from projections.house import HouseView
from projections.jackpot import JackpotView


def registered_views() -> list[View]:
    """A fresh instance of every view, in a stable order."""
    return [CommissionView(), HouseView(), JackpotView(), BankView()]


def view_named(name: str) -> View:
    """The registered view called ``name``; ``KeyError`` listing the names otherwise."""
    views = {v.name: v for v in registered_views()}
    if name not in views:
        raise KeyError(f"no view {name!r}; views: {', '.join(views)}")
    return views[name]
