"""ledger: an event-sourced audit and settlement ledger for Macau table games.

Table systems send every bet, card, die, spin, tile and payout as a feed line
(``ledger.feed``); the ledger stores each as an immutable, hash-chained event (``ledger.storage.store``,
``ledger.codec.chain``), replays each round and re-derives its outcome under the regulation
(``ledger.games``), and reports every difference (``ledger.verify``).

Importing the package imports none of that: ``from ledger import open_ledger`` (and the other
names of ``__all__``) loads its module on first use, so a light module such as
``ledger.domain.errors`` costs only itself (``ledger --version`` starts in a fraction of a second).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ledger.services.ingest import Ingestor, IngestReport
    from ledger.storage.store import LedgerApp, open_ledger
    from ledger.verify.engine import Selection, VerifyReport, verify_store

_HOMES = {
    "IngestReport": "ledger.services.ingest",
    "Ingestor": "ledger.services.ingest",
    "LedgerApp": "ledger.storage.store",
    "Selection": "ledger.verify.engine",
    "VerifyReport": "ledger.verify.engine",
    "open_ledger": "ledger.storage.store",
    "verify_store": "ledger.verify.engine",
}
"""Each public name and the module it lives in, imported when the name is first read."""

__all__ = [
    "IngestReport",
    "Ingestor",
    "LedgerApp",
    "Selection",
    "VerifyReport",
    "open_ledger",
    "verify_store",
]


def __getattr__(name: str) -> Any:
    """Import the module of a public name on first use (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'ledger' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
