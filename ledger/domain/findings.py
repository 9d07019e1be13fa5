"""Findings: what verify reports, with a stable code, the article, expected vs recorded.

The JSON form is binding (FEED.md §10). Codes are snake_case sentences; :data:`FINDING_CODES`
documents each, and the README's list is generated from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

BETTING_CLOSED_RULE = "FEED §10 (betting closes)"
"""The rule a ``bet_after_close`` finding cites (FEED §10)."""

Severity = Literal["error", "warning", "info"]
"""Only ``error`` findings make ``ledger verify`` exit 1; ``warning`` and ``info`` leave the
exit code at 0 (they are reported in the JSON with their severity)."""

FINDING_CODES: dict[str, str] = {
    "settlement_mismatch": "a bet's recorded result, returned or won differs from the derived "
    "one; or a bank layer's result",
    "commission_mismatch": "recorded commission (bet, bank layer or Mah-Jong) differs from the derived one",
    "missing_settlement": "a closed or voided round has a bet with no bet_settled, or Mah-Jong "
    "payments are missing",
    "bet_after_close": "a bet placed after betting closed (after the dice / spin / first card)",
    "invalid_bet": "a bet the rules do not allow (spot not on the layout, stake outside the "
    "table limits, raise ≠ 2 × ante, …)",
    "invalid_deal": "duplicate card, wrong number of cards, cards dealt out of the derived order",
    "jackpot_mismatch": "a jackpot award differs from the one derived from the pool at that point",
    "bank_capital_exceeded": "an SP9 bank won or lost more than its capital",
    "bank_rule_broken": "SP9 bank held too long, capital reduced, bank passed to a non-bettor",
    "payment_mismatch": "a Mah-Jong payment differs from the derived one",
    "round_incomplete": "a round with no round_closed / round_voided (info, not an error, for "
    "the newest round of a table)",
    "chain_broken": "integrity: a stored event does not match the chain, or the expected head "
    "is not in the store (exit code 3)",
    "duplicate_bet": "a bet id placed twice in one round (the first placement is the one settled)",
    "unknown_bet": "a bet_settled for a bet id never placed in the round",
    "duplicate_settlement": "a bet settled more than once",
    "outcome_missing": "a closed round whose outcome (spin, dice, cards) was never recorded",
    "rulebook_hash_mismatch": "the stored rulebook does not hash to the stored rulebook hash",
    "carry_mismatch": "a bet settled carry that is not restated in the table's next round, or "
    "is restated with another amount, or a restated bet that was never "
    "carried",
    "carry_outstanding": "information: a bet carried from the table's newest round, not yet "
    "restated because no later round exists (a stake still in play)",
    "projection_mismatch": "a projection's stored view differs from a rebuild from position 0",
    "timestamp_disorder": "warning (exit 0): an event of a round timed before the event before "
    "it, or a round closed or voided before it was opened (both times "
    "given)",
}
"""Every finding code with its meaning (FEED §10 plus the ones this ledger adds)."""


@dataclass(frozen=True)
class Finding:
    """One thing verify found, about a bet, a round, a deal or the store."""

    code: str
    table: str | None
    round: str | None
    message: str
    rule: str | None = None
    bet: str | None = None
    expected: dict[str, Any] | None = None
    recorded: dict[str, Any] | None = None
    severity: Severity = "error"
    seq: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.code not in FINDING_CODES:
            raise ValueError(f"undocumented finding code {self.code!r}")

    def to_json(self) -> dict[str, Any]:
        """The FEED §10 shape plus ``severity``, ``seq``, ``party`` and ``seat``: every key is
        present in every finding, ``null`` when it does not apply (docs/schemas/finding.json)."""
        out: dict[str, Any] = {
            "code": self.code,
            "table": self.table,
            "round": self.round,
            "bet": self.bet,
            "rule": self.rule,
            "expected": self.expected,
            "recorded": self.recorded,
            "message": self.message,
            "severity": self.severity,
            "seq": self.seq,
            "party": self.extra.get("party"),
            "seat": self.extra.get("seat"),
        }
        out.update({k: v for k, v in self.extra.items() if k not in out})
        return out


class RoundRef(Protocol):
    """Anything that names a round: its table and round id (a :class:`ledger.domain.round.Round`)."""

    @property
    def table(self) -> str: ...

    @property
    def round(self) -> str: ...


def round_finding(
    code: str, rnd: RoundRef, bet: str | None, rule: str, message: str, **kw: object
) -> Finding:
    """A finding about round ``rnd`` (and ``bet``, if any), citing ``rule``; ``kw`` are the other
    fields of :class:`Finding` (``expected``, ``recorded``, ``severity``, ``seq``, ``extra``)."""
    return Finding(code, rnd.table, rnd.round, message, rule=rule, bet=bet, **kw)  # type: ignore[arg-type]
