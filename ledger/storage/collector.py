"""The cyclic garbage collector during one long pass (an ingest, a verify).

A pass makes and drops millions of small objects (decoded facts, rounds, findings). Reference
counting frees nearly all of them at once; the cyclic collector, which by default runs after
every 700 net container allocations, then walks the objects still alive — the facts of the
rounds in play — hundreds of times per 100 k events and finds almost nothing. Measured on a
92,761-event six-game store: 170 collections, 8-11 % of a verify's CPU; with the first
generation's threshold at :data:`PASS_THRESHOLD`, no collection at all and 4 MB more peak
memory (``bench/README.md``).

:func:`pass_collector` raises that threshold for the pass and puts the old one back after,
also on an error. Cyclic garbage is still collected, after :data:`PASS_THRESHOLD` net
allocations instead of 700, so memory stays bounded however long the pass. The setting is
the process's: a program that runs passes in threads shares it while a pass runs.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

PASS_THRESHOLD = 50_000
"""Net container allocations between two collections of the youngest generation during a
pass (Python's default is 700)."""


@contextmanager
def pass_collector(threshold: int = PASS_THRESHOLD) -> Iterator[None]:
    """Run the body with the youngest generation's threshold at least ``threshold``; the
    thresholds are restored after. Nested passes keep the outer setting."""
    before = gc.get_threshold()
    if before[0] == 0 or before[0] >= threshold:  # collection off, or already raised
        yield
        return
    gc.set_threshold(threshold, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
