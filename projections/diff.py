"""Comparing two states of a view row by row, as canonical JSON text.

Shared by the updater (a rebuild compared with the stored rows) and ``projections.check``
(verify's "rebuild equals incremental"), so neither imports the other for it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from projections.base import MemoryRows, Row


def encode_row(row: Row) -> str:
    """A row's stored text: canonical JSON (sorted keys). Decimals must already be strings."""
    return json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Difference:
    """One key whose stored row differs from the rebuilt one (``None``: absent)."""

    view: str
    key: str
    stored: dict[str, object] | None
    rebuilt: dict[str, object] | None


def compare(view: str, stored: MemoryRows, rebuilt: MemoryRows) -> list[Difference]:
    """Keys whose rows differ (compared as canonical JSON text)."""
    keys = sorted(set(stored.rows) | set(rebuilt.rows))
    out = []
    for key in keys:
        a, b = stored.rows.get(key), rebuilt.rows.get(key)
        if (a is None) != (b is None) or (a is not None and b is not None and encode_row(a) != encode_row(b)):
            out.append(Difference(view, key, a, b))
    return out
