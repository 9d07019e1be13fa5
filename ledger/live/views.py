"""``ledger projections update --follow``: keep the finance views caught up with the log.

Every ``every`` seconds the views are brought to the end of the log with the exactly-once
updater (``projections.updater.catch_up``: rows and position commit together), so a follower
of the views can be killed at any moment and started again. SIGTERM or SIGINT ends it after the
update in hand. An unreachable database is waited out, and said.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Sequence
from types import FrameType

from ledger.storage.store import LedgerApp
from projections.base import View
from projections.updater import catch_up


def follow_views(
    app: LedgerApp,
    views: Sequence[View],
    *,
    every: float,
    stop: threading.Event | None = None,
    batch_rounds: int = 500,
    on_moved: Callable[[str, int], None] | None = None,
    on_error: Callable[[Exception], None] | None = None,
    errors: tuple[type[Exception], ...] = (),
    idle_exit: float | None = None,
) -> int:
    """Update the views every ``every`` seconds until ``stop`` is set (SIGTERM, SIGINT), or
    until no view moved for ``idle_exit`` seconds; the number of updates that moved a view."""
    stop = stop if stop is not None else _stop_on_signals()
    last: dict[str, int] = {}
    moved_updates = 0
    idle = 0.0
    while not stop.is_set():
        try:
            positions = catch_up(app, views, batch_rounds=batch_rounds)
        except errors as exc:
            if on_error is not None:
                on_error(exc)
            stop.wait(max(every, 1.0))
            continue
        moved = {name: pos for name, pos in positions.items() if last.get(name) != pos}
        last.update(positions)
        if moved:
            moved_updates += 1
            idle = 0.0
            for name, position in moved.items():
                if on_moved is not None:
                    on_moved(name, position)
        else:
            idle += every
            if idle_exit is not None and idle >= idle_exit:
                break
        stop.wait(every)
    return moved_updates


def _stop_on_signals() -> threading.Event:
    stop = threading.Event()

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)
    return stop
