"""Bets that outlive their round: a ``carry`` settlement must reappear in the table's next round.

A 3CB tie or three-figures odd/even bet (RULES §3.7) and a STUD jackpot bet of a void round
(RULES §6.7) are settled ``carry``; the table restates them at the start of its next round
(``bet_carried`` / ``jackpot_carried``, same bet id, same amount) and may raise a carried 3CB bet
with ``bet_increased`` — never lower (FEED §5). The tracker follows every round of such games in
store order and reports, as ``carry_mismatch``:

- a carried bet that vanished (not restated in the table's next round);
- a restatement with a different amount, or naming another round than the table's previous one;
- a restatement of a bet that was never carried;

and, as ``invalid_bet``, a ``bet_increased`` that lowers the stake or names a bet not carried.
A carried bet that the table *paid* in the round it tied is the game's business
(``settlement_mismatch`` from its rules).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ledger.domain.findings import Finding
from ledger.domain.money import text
from ledger.domain.round import Round

CARRY_RULE = "FEED §5 (carry-over); RULES §3.7, §6.7"


@dataclass(frozen=True)
class Carry:
    """One bet settled ``carry``: where it came from and the stake that stays in play."""

    bet: str
    round: str
    amount: Decimal


class CarryTracker:
    """Per table, the bets the previous round carried; checks each round against them."""

    def __init__(self) -> None:
        self._pending: dict[str, tuple[str, dict[str, Carry]]] = {}

    def follow(self, rnd: Round) -> list[Finding]:
        """Check the bets ``rnd`` restates against its table's previous round, then remember what
        ``rnd`` carries. Rounds of one table must come in store order."""
        pending = self._pending.get(rnd.table)
        # Nothing restated, raised or owed from the table's previous round (most rounds):
        # nothing to check.
        checked = rnd.carried or rnd.increases or (pending is not None and pending[1])
        findings = list(self._check(rnd)) if checked else []
        bets = rnd.bets
        carries = {
            bet_id: Carry(bet_id, rnd.round, rnd.stake(bet_id))
            for bet_id, settled in rnd.settlements.items()
            if settled[0].result == "carry" and bet_id in bets
        }
        self._pending[rnd.table] = (rnd.round, carries)
        return findings

    def to_json(self, tables: Callable[[str], bool] = lambda _: True) -> dict[str, Any]:
        """What each table (those ``tables`` accepts) carries into its next round, as JSON."""
        return {
            table: {"round": rnd, "bets": {b: [c.round, str(c.amount)] for b, c in sorted(carries.items())}}
            for table, (rnd, carries) in sorted(self._pending.items())
            if tables(table)
        }

    def load(self, data: dict[str, Any]) -> None:
        """Add the tables :meth:`to_json` gave (replacing what they carried)."""
        for table, pending in data.items():
            self._pending[table] = (
                pending["round"],
                {b: Carry(b, c[0], Decimal(c[1])) for b, c in pending["bets"].items()},
            )

    def outstanding(self) -> list[Finding]:
        """At the end of the log: every carried bet no later round has restated yet — stakes
        still in play, a liability of the table (``carry_outstanding``, information)."""
        return [
            Finding(
                "carry_outstanding",
                table,
                carry.round,
                rule=CARRY_RULE,
                bet=bet_id,
                severity="info",
                message=f"bet {bet_id} of {text(carry.amount)} carried from round {carry.round} "
                f"is still in play: the table has no later round yet",
            )
            for table, (_, pending) in sorted(self._pending.items())
            for bet_id, carry in pending.items()
        ]

    def _check(self, rnd: Round) -> Iterator[Finding]:
        previous, pending = self._pending.get(rnd.table, (None, {}))
        for bet_id, restated in rnd.carried.items():
            carry = pending.get(bet_id)
            if carry is None:
                yield _finding(
                    rnd,
                    bet_id,
                    f"bet {bet_id} is restated from round "
                    f"{restated.from_round}, but the table's previous round "
                    f"({previous or 'none'}) did not carry it",
                    seq=restated.seq,
                )
            elif restated.from_round != carry.round:
                yield _finding(
                    rnd,
                    bet_id,
                    f"bet {bet_id} was carried from round {carry.round}, "
                    f"restated as from round {restated.from_round}",
                    seq=restated.seq,
                )
            elif restated.amount != carry.amount:
                verb = "reduced" if restated.amount < carry.amount else "changed"
                yield _finding(
                    rnd,
                    bet_id,
                    f"carried bet {bet_id} {verb} from {text(carry.amount)} to "
                    f"{text(restated.amount)} when restated (raise only by bet_increased)",
                    expected={"amount": str(carry.amount)},
                    recorded={"amount": str(restated.amount)},
                    seq=restated.seq,
                )
        for bet_id, carry in pending.items():
            if bet_id not in rnd.carried:
                yield _finding(
                    rnd,
                    bet_id,
                    f"bet {bet_id} was settled carry in round "
                    f"{carry.round} but is not restated in the table's next round "
                    f"({rnd.round}): the carried stake of {text(carry.amount)} vanished",
                )
        for bet_id, raises in rnd.increases.items():
            stake = rnd.carried[bet_id].amount if bet_id in rnd.carried else None
            for raised in raises:
                if stake is None:
                    yield Finding(
                        "invalid_bet",
                        rnd.table,
                        rnd.round,
                        rule="FEED §5",
                        bet=bet_id,
                        seq=raised.seq,
                        message=f"bet_increased names bet {bet_id}, which is not a carried bet of this round",
                    )
                    break
                if raised.amount < stake:
                    yield Finding(
                        "invalid_bet",
                        rnd.table,
                        rnd.round,
                        rule="FEED §5; RULES §3.7",
                        bet=bet_id,
                        seq=raised.seq,
                        message=f"carried bet {bet_id} lowered from {text(stake)} to "
                        f"{text(raised.amount)}; a carried bet may only be raised",
                        expected={"amount": f">= {stake}"},
                        recorded={"amount": str(raised.amount)},
                    )
                stake = max(stake, raised.amount)


def _finding(rnd: Round, bet: str, message: str, **kw: object) -> Finding:
    return Finding("carry_mismatch", rnd.table, rnd.round, message, rule=CARRY_RULE, bet=bet, **kw)  # type: ignore[arg-type]
