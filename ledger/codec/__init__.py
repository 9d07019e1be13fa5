"""The codec: everything that turns bytes into a fact, or a fact into stored bytes.

Two entry points, each with a reference mode (``fast=False``: the plain pydantic and
eventsourcing calls, no shortcut) that the fast mode must equal:

- :func:`parse_line` — a feed line → :class:`Parsed` (the fact ingest stores and its canonical
  bytes) or a :class:`~ledger.codec.parse.Rejection` (code, field, message), as ingest decides
  (``ledger.codec.lines``; :class:`LineParser` for a whole ingest);
- :func:`decode_row` — a stored row → its digest, content and the decoded fact the round
  stream, verify and replay use (``ledger.codec.rows``; :class:`RowDecoder` for a whole pass).

The parts: ``facts`` (topics, models, canonical bytes), ``native`` (the models' native
validators), ``openings`` (the canonical-line and ``round_opened`` shortcuts, the rulebook hash
cache), ``frame`` (the chain check's split of a stored frame), ``ids`` (ingest's aggregate
ids), and ``library`` — the one module that relies on library internals, with bounds on the
versions it was checked against (``tests/codec/test_library_contract.py``).

What may import it: ``ledger.storage.store`` (the mapper, the topics, the bulk recorders), ingest, the
round stream, the chain check. It imports the feed models, the games' registry and
``ledger.codec.chain``'s frame, never the store.
"""

from __future__ import annotations

from ledger.codec.lines import LineParser, Parsed, parse_line
from ledger.codec.rows import Decoded, RowDecoder, decode_row

__all__ = ["Decoded", "LineParser", "Parsed", "RowDecoder", "decode_row", "parse_line"]
