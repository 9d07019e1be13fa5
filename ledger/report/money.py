"""Money not tied to one bet, derived against recorded, for a round page.

A bet's settlement sits in the bets table of a round page; money outside bets (an SP9 bank's
layers, the payments and commission between Mah-Jong players) is each game's to say: its
``page.py``, called through ``Game.money_tables``, puts each field beside what the table
recorded (a :class:`~ledger.games.base.MoneyTable`) so that a page can highlight exactly the
field that differs. This module only writes the amounts; the findings themselves stay verify's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from ledger.domain.round import Round
from ledger.games import GAMES
from ledger.games.base import ComparedField, Derivation
from ledger.games.base import MoneyTable as GameMoneyTable
from ledger.report.numbers import amount

__all__ = ["MoneyRow", "MoneyTable", "Pair", "money_tables"]


class Pair(ComparedField):
    """One field, as derived and as recorded, as the page writes it."""

    @staticmethod
    def text(value: Decimal | str | None) -> str:
        """A field's value as the page writes it."""
        if value is None:
            return "—"
        return amount(value) if isinstance(value, Decimal) else value


@dataclass
class MoneyRow:
    """One layer or one payment: who (as the page writes it), then each compared field."""

    who: list[str]
    fields: list[ComparedField]

    @property
    def agrees(self) -> bool:
        """Whether every field agrees."""
        return not any(p.differs for p in self.fields)


@dataclass
class MoneyTable:
    """A derived-against-recorded table with its article, as the page writes it."""

    title: str
    who: list[str]
    fields: list[str]
    rule: str
    rows: list[MoneyRow] = field(default_factory=list)


def money_tables(rnd: Round, derivation: Derivation) -> list[MoneyTable]:
    """The round's money tables (none for a game whose money is all in its bets), with the
    amounts among each row's ``who`` written as the page writes amounts."""
    game = GAMES.get(rnd.game)
    if game is None:
        return []
    return [_written(t) for t in game.money_tables(rnd, derivation)]


def _written(table: GameMoneyTable) -> MoneyTable:
    rows = [
        MoneyRow([amount(w) if isinstance(w, Decimal) else w for w in row.who], row.fields)
        for row in table.rows
    ]
    return MoneyTable(table.title, table.who, table.fields, table.rule, rows)
