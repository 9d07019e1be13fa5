"""The table: the order in which a table played its rounds.

One aggregate per table records a :class:`RoundStarted` fact each time a round of that table is
opened in the ledger. It is what "the table's next round" (3CB carry-over), "the last ten
rounds" (recall) and "the newest round of a table" (``round_incomplete``) are read from.
"""

from __future__ import annotations

from typing import ClassVar, Literal
from uuid import NAMESPACE_URL, UUID, uuid5

from ledger.feed.envelope import FeedModel
from ledger.feed.types import Code, GameKey, Timestamp

TABLE_TOPIC = "table/round_started"


def table_id(table: str) -> UUID:
    """The aggregate id of a table: ``uuid5`` of its code."""
    return uuid5(NAMESPACE_URL, f"/ledger/tables/{table}")


class RoundStarted(FeedModel):
    """A round of this table was opened (its ``round_opened`` was stored)."""

    TYPE: ClassVar[str] = "round_started"

    type: Literal["round_started"] = "round_started"
    table: Code
    round: Code
    game: GameKey
    at: Timestamp


class Table:
    """A table's rounds, oldest first."""

    def __init__(self, code: str) -> None:
        self.id = table_id(code)
        self.code = code
        self.rounds: list[RoundStarted] = []

    def record(self, fact: RoundStarted) -> None:
        """Append one started round."""
        self.rounds.append(fact)

    @property
    def newest_round(self) -> str | None:
        """The round opened last, if any."""
        return self.rounds[-1].round if self.rounds else None
