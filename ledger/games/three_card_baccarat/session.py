"""3-Card Baccarat across rounds: each table's shoe, which spans rounds (``deal.read_deal``).

Verify feeds :class:`ThreeCardSession` every 3CB round in store order; each round is then
derived by ``round.derive_dealt`` against its table's shoe as the earlier rounds left it.
"""

from __future__ import annotations

from typing import Any

from ledger.domain.findings import Finding
from ledger.domain.round import Round
from ledger.games.base import Derivation
from ledger.games.three_card_baccarat.deal import Shoe, read_deal, shoe_from_json, shoe_to_json
from ledger.games.three_card_baccarat.round import derive_dealt


class ThreeCardSession:
    """Each table's shoe across rounds, for one verify run (``ledger.games.base.GameSession``)."""

    def __init__(self) -> None:
        self._shoes: dict[str, Shoe | None] = {}
        self._json: dict[str, dict[str, Any] | None] = {}
        """Each table's shoe as JSON, kept until the table's next round moves it."""

    def derive(self, rnd: Round) -> Derivation:
        """Derive ``rnd`` against its table's shoe, then move the shoe past it."""
        deal, shoe = read_deal(rnd, self._shoes.get(rnd.table))
        self._shoes[rnd.table] = shoe
        self._json.pop(rnd.table, None)
        return derive_dealt(rnd, deal)

    def finish(self) -> list[Finding]:
        """Nothing: an open carried bet at the end of the log is a liability, not an error."""
        return []

    def to_json(self) -> dict[str, Any]:
        """Each table's shoe, as plain JSON."""
        for table, shoe in self._shoes.items():
            if table not in self._json:
                self._json[table] = None if shoe is None else shoe_to_json(shoe)
        return dict(sorted(self._json.items()))

    def load(self, data: dict[str, Any]) -> None:
        """Restore :meth:`to_json`."""
        self._shoes = {table: None if shoe is None else shoe_from_json(shoe) for table, shoe in data.items()}
        self._json = dict(data)
