"""The aggregate ids of the rows ingest writes: a round's and a table's.

``fast=True`` gives each id once per (table, round) or table code, remembered, as a
:class:`~ledger.codec.library.HashedUUID` (equal to the plain ``UUID``, hashing from a stored
value); ``fast=False`` is the reference: :func:`ledger.domain.round.round_id` and
:func:`ledger.domain.table.table_id` themselves, a SHA-1 and a ``UUID`` per call.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from uuid import UUID

from ledger.codec.library import hashed_uuid
from ledger.domain.round import round_id
from ledger.domain.table import table_id


@lru_cache(maxsize=1 << 12)
def fast_round_id(table: str, round: str) -> UUID:
    """:func:`~ledger.domain.round.round_id`, remembered (every line of a round asks for it)."""
    return hashed_uuid(round_id(table, round))


@lru_cache(maxsize=1 << 12)
def fast_table_id(code: str) -> UUID:
    """:func:`~ledger.domain.table.table_id`, remembered."""
    return hashed_uuid(table_id(code))


def id_makers(fast: bool = True) -> tuple[Callable[[str, str], UUID], Callable[[str], UUID]]:
    """``(round id of (table, round), table id of a code)``, fast or the reference."""
    return (fast_round_id, fast_table_id) if fast else (round_id, table_id)
