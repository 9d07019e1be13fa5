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
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from pydantic import ValidationError

from ledger.chain import CHAIN_TOPIC, FrameError
from ledger.feed.envelope import FeedEvent
from ledger.findings import Finding
from ledger.games import GAMES
from ledger.openings import OpeningDecoder
from ledger.store import TOPICS, LedgerApp, LedgerMapper, RawRow
from ledger.stream import KINDS, OPENING_SUFFIX, TERMINAL_SUFFIXES
from ledger.table import TABLE_TOPIC, RoundStarted
from ledger.verify.integrity import ChainVerifier
from ledger.verify.judge import Judged, RoundJudge

_PAIR_WHAT = {"opened": "round_opened event", "started": "table round-start event"}


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
    cpu_seconds: list[float] = field(default_factory=list)
    """``--jobs``: CPU seconds of the assignment pass, then of each worker (for the benchmark)."""

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
    chain = ChainVerifier(app.ledger_mapper)
    scan = VerifyPass(app.ledger_mapper, selection, chain=chain, on_judged=on_judged)
    for page in app.rows():
        scan.feed(page)
        if on_progress is not None:
            on_progress(len(page))
    report = scan.finish(expect_head)
    report.seconds = time.perf_counter() - started
    return report


Keyed = tuple[tuple[int, int, int], list[Finding]]
"""Findings with the place they take in a single pass: (phase, notification id, tie-break)."""

_DECODED, _UNFINISHED, _SESSION = 1, 2, 3


class VerifyPass:
    """One streaming pass over stored rows in notification order.

    With a ``chain`` it checks the integrity of every row; with ``owns`` it judges only the
    tables ``owns`` accepts (a partition of ``ledger verify --jobs``). Findings are kept with
    the place they would take in a single pass, so partitions merge into the same list.
    """

    def __init__(self, mapper: LedgerMapper, selection: Selection = Selection(), *,
                 chain: ChainVerifier | None = None,
                 owns: Callable[[str], bool] | None = None,
                 owned_tables: frozenset[str] | None = None,
                 on_judged: Callable[[Judged], None] | None = None) -> None:
        self.mapper = mapper
        self.selection = selection
        self.chain = chain
        self.owns = owns
        self.owned_tables = owned_tables
        self.on_judged = on_judged
        self.report = VerifyReport()
        self.keyed: list[Keyed] = []
        self._judge = RoundJudge()
        self._decoder = OpeningDecoder()
        self._open: dict[str, tuple[int, list[FeedEvent]]] = {}
        self._selected: set[str] = set()
        self._newest: dict[str, str] = {}
        self._unpaired: dict[tuple[str, str], tuple[str, int]] = {}

    def feed(self, rows: Iterable[RawRow]) -> None:
        """Take the next rows of the log, oldest first."""
        chain = self.chain
        open_rounds = self._open
        owns = self.owns
        kinds = KINDS
        for nid, oid, version, topic, state in rows:
            if chain is not None:
                content = chain.check_raw(oid, version, topic, state)
                if content is None or topic == CHAIN_TOPIC:
                    continue
            elif topic == CHAIN_TOPIC:
                continue
            else:
                content = None
            kind = kinds.get(topic)
            if kind is not None and oid in open_rounds:
                # The common case: a known, not opening event of a round in play (one dict
                # lookup instead of the string tests below; the same decode and the same
                # bookkeeping).
                if content is None:
                    content = self._open_state(state)
                    if content is None:
                        continue
                try:
                    fact = kind[0](content)
                except (ValidationError, ValueError):
                    fact = self._decode(kind[1], content, nid, oid, version, topic)
                    if not isinstance(fact, FeedEvent):
                        continue
                open_rounds[oid][1].append(fact)
                if kind[2]:
                    facts = open_rounds.pop(oid)[1]
                    self._keep(self._judged(facts, nid), oid, (_DECODED, nid, 1))
                continue
            if topic == TABLE_TOPIC:
                if self.owned_tables is not None and oid not in self.owned_tables:
                    continue
                content = content if content is not None else self._open_state(state)
                if content is None:
                    continue
                started_round = self._decode(RoundStarted, content, nid, oid, version, topic)
                if isinstance(started_round, RoundStarted):
                    self._newest[started_round.table] = started_round.round
                    self._pair((started_round.table, started_round.round), nid, "started")
                continue
            is_opening = topic.endswith(OPENING_SUFFIX)
            if not is_opening and oid not in open_rounds:
                continue
            if content is None:
                content = self._open_state(state)
                if content is None:
                    continue
            if is_opening and owns is not None and not owns(_table_of(content)):
                continue
            fact = self._decode(TOPICS.get(topic), content, nid, oid, version, topic)
            if not isinstance(fact, FeedEvent):
                continue
            if is_opening:
                self._pair((fact.table, fact.round), nid, "opened")
                if self.selection.matches(fact):
                    self._selected.add(oid)
                    open_rounds[oid] = (nid, [fact])
                elif GAMES[fact.game].follows_rounds:
                    open_rounds[oid] = (nid, [fact])
                continue
            open_rounds[oid][1].append(fact)
            if topic.endswith(TERMINAL_SUFFIXES):
                facts = open_rounds.pop(oid)[1]
                self._keep(self._judged(facts, nid), oid, (_DECODED, nid, 1))

    def _pair(self, key: tuple[str, str], nid: int, kind: str) -> None:
        """Match a round's opening with its table's ``round_started`` (both are written in one
        save); whichever comes first waits for the other."""
        other = self._unpaired.pop(key, None)
        if other is None:
            self._unpaired[key] = (kind, nid)
        elif other[0] == kind:  # a second opening, or a second start, of the same round
            self._unpaired[key] = (kind, nid)
            self._broken_round(key, nid, f"a second {_PAIR_WHAT[kind]} of a round already "
                               "stored")

    def _broken_round(self, key: tuple[str, str], nid: int, why: str) -> None:
        self.report.integrity_ok = False
        self.keyed.append(((_DECODED, nid, 0), [Finding(
            "chain_broken", key[0], key[1], rule="integrity",
            message=f"{why}: rows were added outside the ledger")]))

    def finish(self, expect_head: str | None = None) -> VerifyReport:
        """After the last row: judge unfinished rounds, close sessions, finish the chain."""
        report = self.report
        for key, (kind, nid) in self._unpaired.items():
            missing = "opened" if kind == "started" else "started"
            self._broken_round(key, nid, f"the store holds a {_PAIR_WHAT[kind]} of this round "
                               f"but no {_PAIR_WHAT[missing]}")
        self._unpaired.clear()
        for oid, (opened_nid, facts) in self._open.items():
            first = facts[0]
            judged = self._judged(facts, opened_nid,
                                  is_newest=self._newest.get(first.table) == first.round)
            self._keep(judged, oid, (_UNFINISHED, opened_nid, 0))
        self._open.clear()
        selection = self.selection
        kept = [f for f in self._judge.finish() if _selected_finding(f, selection)]
        if kept:
            self.keyed.append(((_SESSION, 0, 0), kept))
        chain = self.chain
        if chain is not None:
            chain.finish(expect_head)
            report.integrity_ok = report.integrity_ok and not chain.broken
            report.head = chain.head
            report.events = chain.events
        report.findings = (list(chain.findings) if chain is not None else []) + [
            f for _, found in self.keyed for f in found]
        return report

    def _judged(self, facts: list[FeedEvent], nid: int, *, is_newest: bool = False) -> Judged:
        return self._judge.judge(facts, is_newest=is_newest)

    def _keep(self, judged: Judged, oid: str, key: tuple[int, int, int]) -> None:
        """Count and keep the findings of a selected round; a followed-only round leaves no trace."""
        if oid not in self._selected:
            return
        self._selected.discard(oid)
        report = self.report
        report.rounds_checked += 1
        if any(f.severity == "error" for f in judged.findings):
            report.rounds_with_findings += 1
        if judged.findings:
            self.keyed.append((key, judged.findings))
        if self.on_judged is not None:
            self.on_judged(judged)

    def _open_state(self, state: bytes) -> bytes | None:
        try:
            return self.mapper.open_state(state)[1]
        except FrameError:
            return None  # the integrity pass reports it

    def _decode(self, cls: Any, content: bytes, nid: int, oid: str, version: int,
                topic: str) -> Any:
        """Decode stored content, or report why it cannot be (only a tampered store gets here)."""
        try:
            if cls is None:
                raise ValueError(f"unknown topic {topic!r}")
            return self._decoder.decode(cls, content)
        except (ValidationError, ValueError) as exc:
            self.report.integrity_ok = False
            self.keyed.append(((_DECODED, nid, 0), [Finding(
                "chain_broken", None, None, rule="integrity",
                message=f"stored event {UUID(oid)} v{version} "
                        f"({topic}) cannot be decoded: {str(exc).splitlines()[0]}")]))
            return None


def _table_of(content: bytes) -> str:
    """The table of a stored feed fact, read from its first bytes (``""`` if not readable)."""
    if content.startswith(b'{"v":1,"table":"'):
        end = content.find(b'"', 16)
        if end > 16:
            return content[16:end].decode("ascii", errors="replace")
    return ""


def _selected_finding(finding: Finding, selection: Selection) -> bool:
    return ((selection.table is None or finding.table == selection.table)
            and (selection.round is None or finding.round == selection.round))
