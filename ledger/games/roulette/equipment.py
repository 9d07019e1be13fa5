"""What the statistics collect from a roulette table: its wheel (every ``spin_result``: the
pocket, and its colour for the runs test), with the wheel's layout for the sector test and the
wheel plot. ``GAME.equipment``."""

from __future__ import annotations

from ledger.games.base import Equipment
from ledger.games.roulette.tables import RED_NUMBERS, WHEEL_ORDER

EQUIPMENT = Equipment("wheel", red=RED_NUMBERS, wheel_order=WHEEL_ORDER)
