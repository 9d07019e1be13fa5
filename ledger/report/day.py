"""One gaming day per table: rounds, turnover, hold, commission and findings.

Computed straight from the store, without the persisted projections: every closed (or voided)
round is streamed in store order (:func:`projections.base.closed_rounds`) and judged by the same
:class:`~ledger.verify.judge.RoundJudge` as ``ledger verify``, so the findings counted here are
exactly verify's. A round belongs to the **gaming day** of its ``round_opened`` time, as finance
counts it (:mod:`projections.gaming_day`: Macau time, from the cut-off hour
``LEDGER_GAMING_DAY_CUTOFF``, default 06:00), so the day page and ``ledger commission`` always
cover the same rounds. Rounds still in play are not counted.

The rounds are found **by position** when the store is sealed with a seal index
(:mod:`ledger.report.day_index`): the pass starts at the checkpoint before the day's first
round (every game's state taken up from its checked snapshot) and stops after the day's last
one, instead of reading the whole store; the figures and findings are the same. Without a usable
index (no sealing key, an index row missing or not valid) the whole store is read, and
:attr:`DaySummary.note` says why when checkpoints are stored.

What the figures mean (all from what the table **recorded**, in the round's currency). Each
comes from the round's game's money hooks (``ledger.games.<game>.money``), the same the
``house`` view and the exports use:

- **turnover** — stakes placed: each ``bet_placed`` amount plus any ``bet_increased`` raise of a
  carried bet (a carried stake is not counted twice). Mah-Jong has no bets: its turnover is the
  sum of the ``payment_made`` amounts between players.
- **hold** — the house's result before commission. House-banked games (RL, FPC, 3CB, STUD):
  stakes kept minus prizes paid, ``Σ (stake − returned − won)`` over settled bets; a ``carry``
  settlement counts nothing until the carried bet is settled; a STUD jackpot award is paid by
  the jackpot pool (or the house's jackpot expense), not out of hold. SP9 is banked by a player
  seat: the house's result is the casino layer's ``bank_settled.result`` (RULES §1.6). Mah-Jong
  is played between players: the house holds nothing but commission.
- **commission** — ``bet_settled.commission`` + ``bank_settled.commission`` +
  ``commission_charged.amount``, kept apart from hold (RULES §0.3).
- **hold Δ rules** — over the bets the rules settled (``Derivation.expected``) of games where
  the house is the other side of every bet, the hold the table recorded minus the hold the
  rules derive: not zero means the table paid wrong.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

from ledger.domain.findings import Finding
from ledger.domain.money import plain
from ledger.domain.round import Round
from ledger.feed.envelope import BetPlaced
from ledger.games import GAMES
from ledger.games.base import Derivation
from ledger.games.money import money_of
from ledger.proof.checkpoints import stored_rows
from ledger.report.day_index import DayPlan, plan_day
from ledger.storage.store import LedgerApp
from ledger.verify.judge import Judged, RoundJudge, judge_rounds
from projections.base import closed_rounds
from projections.gaming_day import check_cutoff, day_of, default_cutoff

ZERO = Decimal(0)


@dataclass
class TableDay:
    """One table's figures for one day."""

    table: str
    game: str
    currency: str
    rounds: int = 0
    voided: int = 0
    bets: int = 0
    turnover: Decimal = ZERO
    hold: Decimal = ZERO
    commission: Decimal = ZERO
    hold_delta: Decimal = ZERO
    findings: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        """The findings that are errors."""
        return [f for f in self.findings if f.severity == "error"]

    @property
    def house_income(self) -> Decimal:
        """Hold plus commission: what the house took from the table."""
        return self.hold + self.commission

    def to_json(self) -> dict[str, Any]:
        """The row as JSON (amounts as two-decimal strings, :func:`ledger.domain.money.plain`)."""
        return {
            "table": self.table,
            "game": self.game,
            "currency": self.currency,
            "rounds": self.rounds,
            "voided": self.voided,
            "bets": self.bets,
            "turnover": plain(self.turnover),
            "hold": plain(self.hold),
            "commission": plain(self.commission),
            "hold_delta": plain(self.hold_delta),
            "findings": len(self.errors),
            "findings_by_code": dict(sorted(Counter(f.code for f in self.errors).items())),
        }


@dataclass
class DaySummary:
    """Every table that played on one day, by table code."""

    day: date
    tables: list[TableDay]
    note: str | None = None
    """Why the whole store was read although checkpoints are stored (not in the JSON)."""

    def totals(self) -> dict[str, TableDay]:
        """One total row per currency (amounts in different currencies are never added)."""
        totals: dict[str, TableDay] = {}
        for t in self.tables:
            total = totals.setdefault(t.currency, TableDay("all tables", "", t.currency))
            total.rounds += t.rounds
            total.voided += t.voided
            total.bets += t.bets
            total.turnover += t.turnover
            total.hold += t.hold
            total.commission += t.commission
            total.hold_delta += t.hold_delta
            total.findings += t.findings
        return totals

    @property
    def has_errors(self) -> bool:
        """Whether any round of the day has an error finding."""
        return any(t.errors for t in self.tables)

    def to_json(self) -> dict[str, Any]:
        """``{"day", "tables": [...], "totals": {currency: row}}``."""
        return {
            "day": self.day.isoformat(),
            "tables": [t.to_json() for t in self.tables],
            "totals": {c: t.to_json() for c, t in sorted(self.totals().items())},
        }


def summarize_day(app: LedgerApp, day: date, cutoff_hour: int | None = None) -> DaySummary:
    """The day's figures per table, judged as verify judges them; ``cutoff_hour`` defaults to
    the ``LEDGER_GAMING_DAY_CUTOFF`` setting."""
    cutoff = default_cutoff() if cutoff_hour is None else check_cutoff(cutoff_hour)
    plan = plan_day(app, day, cutoff)
    note = None
    if isinstance(plan, str):
        note = f"{plan}: the whole store was read" if stored_rows(app) else None
        plan = DayPlan(None, None)
    elif plan.empty:
        return DaySummary(day, [])
    judge = RoundJudge()
    if plan.start is not None:
        judge.load(plan.start.state["judge"])
    rounds = _Bounded(closed_rounds(app, after=0 if plan.start is None else plan.start.position), plan.stop)
    tables: dict[str, TableDay] = {}
    on_day: set[tuple[str, str]] = set()
    for _, judged in judge_rounds(rounds, judge=judge, wanted=lambda r: day_of(r.opened_at, cutoff) == day):
        rnd = judged.round
        on_day.add((rnd.table, rnd.round))
        row = tables.setdefault(rnd.table, TableDay(rnd.table, rnd.game, rnd.opened.currency))
        add_round(row, judged)
        row.findings += judged.findings
    for finding in _at_end_of_log(judge, rounds, on_day):
        if finding.table in tables:
            tables[finding.table].findings.append(finding)
    return DaySummary(day, [tables[k] for k in sorted(tables)], note)


class _Bounded:
    """Closed rounds up to row ``stop`` (all with ``None``); :meth:`rest` gives those after."""

    def __init__(self, rounds: Iterator[tuple[int, Round]], stop: int | None) -> None:
        self.rounds = rounds
        self.stop = stop
        self.over: tuple[int, Round] | None = None

    def __iter__(self) -> Iterator[tuple[int, Round]]:
        for item in self.rounds:
            if self.stop is not None and item[0] > self.stop:
                self.over = item
                return
            yield item

    def rest(self) -> Iterator[tuple[int, Round]]:
        """The rounds that closed after ``stop``."""
        if self.over is not None:
            yield self.over
        yield from self.rounds


def _at_end_of_log(judge: RoundJudge, rounds: _Bounded, on_day: set[tuple[str, str]]) -> list[Finding]:
    """The end-of-log findings (:meth:`RoundJudge.finish`) about the day's rounds that a pass
    over the whole log would give. A pass that stopped early has the state after the day:
    a carried bet of a round of the day still outstanding there is outstanding at the end of
    the log unless a later round of its table closes, so the log is read on only until each
    such table's next closed round (usually a few rows)."""
    found = [f for f in judge.finish() if (f.table or "", f.round or "") in on_day]
    if rounds.stop is None or not found:
        return found
    waiting = {f.table for f in found}
    for _, rnd in rounds.rest():
        waiting.discard(rnd.table)
        if not waiting:
            break
    return [f for f in found if f.table in waiting]


def add_round(row: TableDay, judged: Judged) -> None:
    """Fold one judged round's figures into its table's row (the game's money hooks)."""
    rnd = judged.round
    money = money_of(GAMES[rnd.game])
    row.rounds += 1
    row.voided += rnd.is_voided
    row.bets += sum(1 for e in rnd.events if isinstance(e, BetPlaced))
    row.turnover += money.turnover(rnd)
    row.hold += money.house_result(rnd)
    row.commission += sum((c.amount for c in money.charges(rnd)), ZERO)
    if money.banks_bets:
        row.hold_delta += hold_delta(rnd, judged.derivation)


def hold_delta(rnd: Round, derivation: Derivation) -> Decimal:
    """Recorded minus derived hold, over the house-banked bets the rules settled."""
    delta = ZERO
    for bet_id, due in derivation.expected.items():
        settled = rnd.settlements.get(bet_id)
        if not settled or bet_id not in rnd.bets:
            continue
        stake, s = rnd.stake(bet_id), settled[0]
        recorded = ZERO if s.result == "carry" else stake - s.returned - s.won
        derived = ZERO if due.result == "carry" else stake - due.returned - due.won
        delta += recorded - derived
    return delta
