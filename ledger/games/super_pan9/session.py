"""The Super Pan 9 bank across rounds: runs, carried capital, refusals, alternating decks.

Verify feeds :class:`BankSession` every SP9 round in store order; per table it keeps a
:class:`TableBank` — the state a table's bank left after its last closed round — and
:func:`advance` derives the next round against it:

- **Runs** (art. 5(1), S12): a seat may hold the bank for ``sp9.max_bank_rounds`` (2)
  consecutive rounds; each later round needs a ``bank_extended`` whose consents include every
  other seated place (the dealt player seats and the co-banking seats) [I].
- **Carried capital** (art. 5(4), S10): a banker who keeps the bank after a round in which its
  layer won must post at least the previous capital plus the winnings net of commission; it may
  add more, never less [I]. After a lost round only ``sp9.min_bank`` applies (S11, per round).
- **Refusal** (art. 5(2)): when a round records ``bank_refused``, the seat that takes the bank
  must have placed a bet in the table's previous round.
- **Decks** (art. 2(1)): two decks alternate; a round naming the same ``deck`` as the table's
  previous round is ``invalid_deal``.

Only closed rounds move the state; a voided or unfinished round is derived alone and leaves the
bank where it stood [I]. The state is plain data (:meth:`TableBank.to_json`) so that the bank
projection folds rounds with the same function.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ledger.domain.findings import Finding
from ledger.domain.money import text as amount_text
from ledger.domain.round import Round
from ledger.games.base import Derivation, Step
from ledger.games.super_pan9.round import BankFacts, analyse
from ledger.games.super_pan9.tables import CARRY_RULE, DECK_RULE, REFUSAL_RULE, RUN_RULE


@dataclass(frozen=True)
class TableBank:
    """Where a table's bank stood after its last closed round."""

    round: str
    banker: int | None
    run: int
    """Consecutive closed rounds the banker has held the bank, this one included."""
    capital: Decimal
    """The banker's posted capital in that round."""
    carry: Decimal | None
    """The least the same banker must post next round (capital + net winnings), if it won."""
    bettors: tuple[int, ...]
    deck: str | None

    def to_json(self) -> dict[str, Any]:
        """JSON form (decimals as strings), for projection rows."""
        return {
            "round": self.round,
            "banker": self.banker,
            "run": self.run,
            "capital": str(self.capital),
            "carry": None if self.carry is None else str(self.carry),
            "bettors": list(self.bettors),
            "deck": self.deck,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TableBank:
        """Inverse of :meth:`to_json`."""
        return cls(
            data["round"],
            data["banker"],
            int(data["run"]),
            Decimal(data["capital"]),
            None if data["carry"] is None else Decimal(data["carry"]),
            tuple(data["bettors"]),
            data["deck"],
        )


@dataclass
class BankAdvance:
    """A round derived in context: its derivation (the cross-round findings in
    ``session_findings``), its bank facts, the run it is part of, and the table's bank after
    it."""

    derivation: Derivation
    bank: BankFacts
    run: int
    after: TableBank | None


@dataclass(frozen=True)
class BankContext:
    """What the session knew of a round beyond its derivation (``Derivation.context``): the
    bank's facts, the run, and the table's bank after it when the round moved it."""

    bank: BankFacts
    run: int
    after: TableBank | None


def advance(before: TableBank | None, rnd: Round) -> BankAdvance:
    """Derive ``rnd`` against the bank its table left (``before``), and move the state on."""
    analysis = analyse(rnd)
    derivation, bank = analysis.derivation, analysis.bank
    found = derivation.session_findings

    def find(code: str, rule: str, message: str) -> None:
        found.append(Finding(code, rnd.table, rnd.round, message, rule=rule))

    if bank.banker is None:
        return BankAdvance(derivation, bank, 0, before)
    continues = before is not None and before.banker == bank.banker
    run = before.run + 1 if continues and before is not None else 1
    limit = rnd.rules.sp9.max_bank_rounds
    if run > limit:
        if bank.extension is None:
            find(
                "bank_rule_broken",
                RUN_RULE,
                f"seat {bank.banker} holds the bank for a {_nth(run)} consecutive round "
                f"without a bank_extended (the limit is {limit})",
            )
        else:
            missing = sorted(set(bank.others) - set(bank.extension))
            if missing:
                find(
                    "bank_rule_broken",
                    RUN_RULE,
                    f"seat {bank.banker} holds the bank for a {_nth(run)} consecutive round; "
                    "the extension lacks the consent of seat"
                    + ("s " if len(missing) > 1 else " ")
                    + ", ".join(map(str, missing)),
                )
        derivation.steps.append(Step.later(RUN_RULE, _run_text, run, bank.banker))
    if continues and before is not None and before.carry is not None and bank.capital < before.carry:
        find(
            "bank_rule_broken",
            CARRY_RULE,
            f"seat {bank.banker} keeps the bank after winning round {before.round}: its "
            f"capital must be at least {amount_text(before.carry)} (the previous "
            f"{amount_text(before.capital)} plus the winnings net of commission), it posted "
            f"{amount_text(bank.capital)}",
        )
    if bank.refused and before is not None and bank.banker not in before.bettors:
        find(
            "bank_rule_broken",
            REFUSAL_RULE,
            f"the bank was refused and passed to seat {bank.banker}, which placed no bet in "
            f"round {before.round}",
        )
    if before is not None and bank.deck is not None and bank.deck == before.deck:
        found.append(
            Finding(
                "invalid_deal",
                rnd.table,
                rnd.round,
                f"deck {bank.deck} was also used in round {before.round}: the two decks alternate",
                rule=DECK_RULE,
            )
        )
    if not rnd.is_closed:
        return BankAdvance(derivation, bank, run, before)
    net = bank.banker_net
    carry = bank.capital + net if net is not None and net > 0 else None
    after = TableBank(rnd.round, bank.banker, run, bank.capital, carry, tuple(bank.bettors), bank.deck)
    return BankAdvance(derivation, bank, run, after)


@dataclass
class BankSession:
    """The SP9 :class:`~ledger.games.base.GameSession`: one :class:`TableBank` per table."""

    tables: dict[str, TableBank] = field(default_factory=dict)

    def advance(self, rnd: Round) -> BankAdvance:
        """Derive ``rnd`` in context and keep its table's new state; the derivation's
        ``context`` is the round's :class:`BankContext`."""
        before = self.tables.get(rnd.table)
        advanced = advance(before, rnd)
        if advanced.after is not None:
            self.tables[rnd.table] = advanced.after
        moved = advanced.after is not None and advanced.after is not before
        advanced.derivation.context = BankContext(
            advanced.bank, advanced.run, advanced.after if moved else None
        )
        return advanced

    def derive(self, rnd: Round) -> Derivation:
        """The per-round derivation plus the findings that need earlier rounds."""
        return self.advance(rnd).derivation

    def finish(self) -> list[Finding]:
        """Nothing: every bank rule is decided when its round is derived."""
        return []

    def to_json(self) -> dict[str, Any]:
        """Each table's bank, as plain JSON."""
        return {table: bank.to_json() for table, bank in sorted(self.tables.items())}

    def load(self, data: dict[str, Any]) -> None:
        """Restore :meth:`to_json`."""
        self.tables = {table: TableBank.from_json(bank) for table, bank in data.items()}


def _run_text(run: int, banker: int | None) -> str:
    return f"round {run} of seat {banker}'s bank"


def _nth(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
