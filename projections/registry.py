"""The registry of views the updater keeps: commission, house movements, jackpot pool, bank.

The jackpot and bank views are imported when their modules exist (they land separately); a
missing module simply leaves its view out. Names are unique: they key the tracking records.
"""

from __future__ import annotations

import importlib

from projections.base import View

_OPTIONAL = (("projections.jackpot", "JackpotView"), ("projections.bank", "BankView"))


def registered_views() -> list[View]:
    """A fresh instance of every view, in a stable order."""
    from projections.commission import CommissionView
    from projections.house import HouseView

    views: list[View] = [CommissionView(), HouseView()]
    for module_name, class_name in _OPTIONAL:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise  # the module exists but something it imports does not: a real error
            continue
        cls = getattr(module, class_name, None)
        if isinstance(cls, type) and issubclass(cls, View):
            views.append(cls())
    return views


def view_named(name: str) -> View:
    """The registered view called ``name``; ``KeyError`` listing the names otherwise."""
    views = {v.name: v for v in registered_views()}
    if name not in views:
        raise KeyError(f"no view {name!r}; views: {', '.join(views)}")
    return views[name]
