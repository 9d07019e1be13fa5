"""``ledger verify``: replay every selected round from the store and report what differs.

One streaming pass over the notification log, in the order the ledger stored events:

1. every row goes through the :class:`~ledger.verify.integrity.ChainVerifier` (all rows, also
   those of unselected rounds, because integrity is a property of the whole store);
2. the facts of selected rounds are decoded and gathered; when a round ends it is replayed
   (:class:`~ledger.round.Round`) and judged by a :class:`~ledger.verify.judge.RoundJudge`, then
   dropped, so memory holds only the rounds still in play. Rounds of games whose rules span
   rounds (carried bets, bank runs, a jackpot pool) are all judged, in store order, and only the
   findings of selected rounds are kept.

Exit codes (FEED §10): 0 nothing found, 1 findings, 3 integrity broken (3 wins over 1).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from pydantic import ValidationError

from ledger.chain import CHAIN_TOPIC
from ledger.feed.envelope import TERMINAL_TYPES, FeedEvent
from ledger.games import GAMES
from ledger.store import TOPICS, LedgerApp
from ledger.table import TABLE_TOPIC, RoundStarted
from ledger.verify.findings import Finding
from ledger.verify.integrity import ChainVerifier
from ledger.verify.judge import Judged, RoundJudge


@dataclass(frozen=True)
class Selection:
    """Which rounds to judge (integrity is always checked over the whole store)."""

    table: str | None = None
    game: str | None = None
    round: str | None = None

    def matches(self, fact: FeedEvent) -> bool:
        """Whether a round, known by its ``round_opened``, is selected."""
        return ((self.table is None or fact.table == self.table)
                and (self.game is None or fact.game == self.game)
                and (self.round is None or fact.round == self.round))


@dataclass
class VerifyReport:
    """The result of one verify run."""

    rounds_checked: int = 0
    rounds_with_findings: int = 0
    events: int = 0
    findings: list[Finding] = field(default_factory=list)
    integrity_ok: bool = True
    head: str | None = None
    seconds: float = 0.0

    @property
    def errors(self) -> list[Finding]:
        """Findings that are errors (not information)."""
        return [f for f in self.findings if f.severity == "error"]

    @property
    def exit_code(self) -> int:
        """3 integrity broken, else 1 if any error finding, else 0."""
        if not self.integrity_ok:
            return 3
        return 1 if self.errors else 0

    def to_json(self) -> dict[str, Any]:
        """The object ``ledger verify --json`` prints (FEED §10), plus ``head`` and ``events``."""
        return {
            "rounds_checked": self.rounds_checked,
            "rounds_with_findings": self.rounds_with_findings,
            "integrity": "ok" if self.integrity_ok else "broken",
            "head": self.head,
            "events": self.events,
            "findings": [f.to_json() for f in self.findings],
        }


def verify_store(
    app: LedgerApp,
    selection: Selection = Selection(),
    *,
    expect_head: str | None = None,
    on_progress: Callable[[int], None] | None = None,
    on_judged: Callable[[Judged], None] | None = None,
) -> VerifyReport:
    """Verify the store: integrity of every event, rules of every selected round.

    ``on_judged`` receives each selected round as it is judged (``ledger replay`` uses it to
    see a round derived in the context of every earlier round).
    """
    started = time.perf_counter()
    report = VerifyReport()
    chain = ChainVerifier(app.ledger_mapper)
    judge = RoundJudge()
    open_rounds: dict[UUID, list[FeedEvent]] = {}
    selected: set[UUID] = set()
    newest: dict[str, str] = {}
    for page in app.notifications():
        for row in page:
            content = chain.check(row)
            if content is None or row.topic == CHAIN_TOPIC:
                continue
            if row.topic == TABLE_TOPIC:
                started_round = _decode(RoundStarted, content, row, report)
                if isinstance(started_round, RoundStarted):
                    newest[started_round.table] = started_round.round
                continue
            oid = row.originator_id
            is_opening = row.topic.endswith("/round_opened")
            if not is_opening and oid not in open_rounds:
                continue
            fact = _decode(TOPICS.get(row.topic), content, row, report)
            if not isinstance(fact, FeedEvent):
                continue
            if is_opening:
                if selection.matches(fact):
                    selected.add(oid)
                    open_rounds[oid] = [fact]
                elif GAMES[fact.game].follows_rounds:
                    open_rounds[oid] = [fact]
                continue
            open_rounds[oid].append(fact)
            if fact.type in TERMINAL_TYPES:
                judged = judge.judge(open_rounds.pop(oid))
                _keep(judged, oid, selected, report, on_judged)
        if on_progress is not None:
            on_progress(len(page))
    for oid, facts in open_rounds.items():
        first = facts[0]
        judged = judge.judge(facts, is_newest=newest.get(first.table) == first.round)
        _keep(judged, oid, selected, report, on_judged)
    report.findings += [f for f in judge.finish() if _selected_finding(f, selection)]
    chain.finish(expect_head)
    report.findings = chain.findings + report.findings
    report.integrity_ok = report.integrity_ok and not chain.broken
    report.head = chain.head
    report.events = chain.events
    report.seconds = time.perf_counter() - started
    return report


def _keep(judged: Judged, oid: UUID, selected: set[UUID], report: VerifyReport,
          on_judged: Callable[[Judged], None] | None) -> None:
    """Count and keep the findings of a selected round; a followed-only round leaves no trace."""
    if oid not in selected:
        return
    selected.discard(oid)
    report.rounds_checked += 1
    if any(f.severity == "error" for f in judged.findings):
        report.rounds_with_findings += 1
    report.findings += judged.findings
    if on_judged is not None:
        on_judged(judged)


def _selected_finding(finding: Finding, selection: Selection) -> bool:
    return ((selection.table is None or finding.table == selection.table)
            and (selection.round is None or finding.round == selection.round))


def _decode(cls: Any, content: bytes, row: Any, report: VerifyReport) -> Any:
    """Decode stored content, or report why it cannot be (only a tampered store gets here)."""
    try:
        if cls is None:
            raise ValueError(f"unknown topic {row.topic!r}")
        return cls.model_validate_json(content)
    except (ValidationError, ValueError) as exc:
        report.integrity_ok = False
        report.findings.append(Finding(
            "chain_broken", None, None, rule="integrity",
            message=f"stored event {row.originator_id} v{row.originator_version} "
                    f"({row.topic}) cannot be decoded: {str(exc).splitlines()[0]}"))
        return None
