"""ledger: an event-sourced audit and settlement ledger for Macau table games.

Table systems send every bet, card, die, spin, tile and payout as a feed line
(``ledger.feed``); the ledger stores each as an immutable, hash-chained event (``ledger.store``,
``ledger.chain``), replays each round and re-derives its outcome under the regulation
(``ledger.games``), and reports every difference (``ledger.verify``).
"""

from ledger.ingest import Ingestor, IngestReport
from ledger.store import LedgerApp, open_ledger
from ledger.verify.engine import Selection, VerifyReport, verify_store

__all__ = [
    "IngestReport",
    "Ingestor",
    "LedgerApp",
    "Selection",
    "VerifyReport",
    "open_ledger",
    "verify_store",
]
