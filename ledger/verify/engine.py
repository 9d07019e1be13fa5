"""``ledger verify``: replay every selected round from the store and report what differs.

One streaming pass over the notification log, in the order the ledger stored events, read
through the one reader of the log (:class:`~ledger.storage.stream.RoundStream`):

1. every row goes through the :class:`~ledger.verify.integrity.ChainVerifier`, a tap on the
   stream (all rows, also those of unselected rounds, because integrity is a property of the
   whole store);
2. the facts of selected rounds are decoded and gathered; when a round ends it is replayed
   (:class:`~ledger.domain.round.Round`) and judged by a :class:`~ledger.verify.judge.RoundJudge`, then
   dropped, so memory holds only the rounds still in play. Rounds of games whose rules span
   rounds (carried bets, bank runs, a jackpot pool) are all judged, in store order, and only the
   findings of selected rounds are kept.

The state of a pass can be written down after any chain link and taken up again
(:class:`~ledger.verify.snapshot.Snapshot`): ``verify --since`` and segments start there.

Exit codes (FEED §10): 0 nothing found, 1 findings, 3 integrity broken (3 wins over 1).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from pydantic import ValidationError

from ledger.codec.chain import FrameError
from ledger.codec.rows import validator
from ledger.domain.findings import Finding
from ledger.domain.table import TABLE_TOPIC, RoundStarted
from ledger.feed.envelope import FeedEvent, RoundOpened
from ledger.games import GAMES
from ledger.storage.collector import pass_collector
from ledger.storage.store import LedgerApp, LedgerMapper, RawRow
from ledger.storage.stream import Check, ClosedRound, RoundStream
from ledger.verify.integrity import ChainVerifier
from ledger.verify.judge import Judged, RoundJudge
from ledger.verify.snapshot import Snapshot, SnapshotError

_PAIR_WHAT = {"opened": "round_opened event", "started": "table round-start event"}


@dataclass(frozen=True)
class Selection:
    """Which rounds to judge (integrity is always checked over the whole store)."""

    table: str | None = None
    game: str | None = None
    round: str | None = None

    def matches(self, fact: FeedEvent) -> bool:
        """Whether a round, known by its ``round_opened``, is selected."""
        return (
            (self.table is None or fact.table == self.table)
            and (self.game is None or fact.game == self.game)
            and (self.round is None or fact.round == self.round)
        )


Keyed = tuple[tuple[int, int, int], list[Finding]]
"""Findings with the place they take in a single pass: (phase, notification id, tie-break)."""


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
    snapshot: Snapshot | None = None
    """The state of the pass where it stopped (``verify_store(stop=…)`` or ``snapshot=True``)."""
    keyed: list[Keyed] = field(default_factory=list)
    """The rules' findings (``findings`` less the chain's), each with its place in a single
    pass, in the order the pass made them: the parts of a log read in consecutive pieces
    (segments) give a single pass's findings as all their chain findings, then all these, in
    the order of the pieces."""

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
    start: Snapshot | None = None,
    stop: int | None = None,
    snapshot: bool = False,
) -> VerifyReport:
    """Verify the store: integrity of every event, rules of every selected round.

    ``on_judged`` receives each selected round as it is judged (``ledger replay`` uses it to
    see a round derived in the context of every earlier round).

    ``start`` continues from a snapshot (``ledger.verify.snapshot``): only rows after its
    position are read, and the chain, the rounds in play and every game's state are taken up
    from it. ``stop`` reads rows up to that notification id only and leaves out what only the
    end of the log reveals (rounds unfinished, carried bets outstanding, sessions ending);
    ``report.snapshot`` is then the state there. ``snapshot`` takes ``report.snapshot`` at the
    end of the log too. A snapshot is ``None`` when the last row read is not a chain link.
    """
    started = time.perf_counter()
    chain = ChainVerifier(app.ledger_mapper, expect=expect_head, heads=False)
    wants_state = snapshot or stop is not None
    scan = VerifyPass(
        app.ledger_mapper, selection, chain=chain, on_judged=on_judged, keep_content=wants_state
    )  # kept content is only for a snapshot
    if start is not None:
        scan.resume(start)
    with pass_collector():  # facts are freed by reference counting: see ledger.storage.collector
        for page in app.rows(after=None if start is None else start.position):
            last_page = stop is not None and page[-1][0] > stop
            if stop is not None and last_page:
                page = [row for row in page if row[0] <= stop]
            scan.feed(page)
            if on_progress is not None:
                on_progress(len(page))
            if last_page:
                break
        taken = scan.snapshot() if wants_state else None
        report = scan.finish(expect_head, end_of_log=stop is None)
    report.snapshot = taken
    if start is not None:
        report.events -= start.events
    report.seconds = time.perf_counter() - started
    return report


_DECODED, _UNFINISHED, _SESSION = 1, 2, 3
_decode_started = validator(RoundStarted)
"""``RoundStarted.model_validate_json``, natively where it can (it raises the model's own
errors)."""


class _VerifyStream(RoundStream):
    """The log as :class:`VerifyPass` reads it: its hooks on the one round stream."""

    def __init__(
        self, scan: VerifyPass, mapper: LedgerMapper, check: Check | None, keep_content: bool
    ) -> None:
        super().__init__(
            mapper,
            on_unreadable=scan.undecodable,
            check=check,
            partial=False,
            keep_content=keep_content,
            probe=False,
        )
        self.scan = scan

    def admit(self, content: bytes) -> bool:
        owns = self.scan.owns
        return owns is None or owns(_table_of(content))

    def opened(self, position: int, aggregate: str, fact: FeedEvent) -> bool:
        return self.scan.opened(position, aggregate, fact)

    def wants_table_rows(self, aggregate: str) -> bool:
        owned = self.scan.owned_tables
        return owned is None or aggregate in owned

    def started(self, position: int, aggregate: str, version: int, content: bytes) -> None:
        self.scan.started(position, aggregate, version, content)


class VerifyPass:
    """One streaming pass over stored rows in notification order, read through
    :class:`~ledger.storage.stream.RoundStream`.

    With a ``chain`` it checks the integrity of every row (a tap on the stream); with ``owns``
    it judges only the tables ``owns`` accepts (a partition of ``ledger verify --jobs``).
    Findings are kept with the place they would take in a single pass, so partitions merge
    into the same list. :meth:`snapshot` writes the state of the pass down after a chain link;
    :meth:`resume` takes it up again.
    """

    def __init__(
        self,
        mapper: LedgerMapper,
        selection: Selection = Selection(),
        *,
        chain: ChainVerifier | None = None,
        owns: Callable[[str], bool] | None = None,
        owned_tables: frozenset[str] | None = None,
        on_judged: Callable[[Judged], None] | None = None,
        keep_content: bool = False,
    ) -> None:
        self.mapper = mapper
        self.selection = selection
        self.chain = chain
        self.owns = owns
        self.owned_tables = owned_tables
        self.on_judged = on_judged
        self.report = VerifyReport()
        self.keyed: list[Keyed] = []
        self._judge = RoundJudge()
        self._stream = _VerifyStream(self, mapper, chain.check_rows if chain else None, keep_content)
        self._opened_at: dict[str, int] = {}
        self._selected: set[str] = set()
        self._newest: dict[str, str] = {}
        self._unpaired: dict[tuple[str, str], tuple[str, int]] = {}

    def feed(self, rows: Iterable[RawRow]) -> None:
        """Take the next rows of the log, oldest first.

        The rounds that close within ``rows`` are judged once every row is read, in the order
        they closed: reading (the chain check, then decoding and gathering) and judging each
        run as a loop of its own, which keeps each one's working set in the processor's
        caches (interleaved, they evicted each other's: ``bench/README.md`` counts the
        misses). A round's judgement reads only its own facts and the rounds judged before
        it, so it is the same as judging it the moment it closes. What its close settles for
        the pass (its place in :attr:`_opened_at`, whether it is selected) is settled as the
        rows come."""
        opened_at = self._opened_at
        ended: list[tuple[ClosedRound, bool]] = []
        for closed in self._stream.closed(rows):
            # Now, not after the batch: a later row of it may open the same aggregate again
            # (only in a tampered store) and must find the first round's place taken.
            oid = closed.aggregate
            del opened_at[oid]
            ended.append((closed, self._unselect(oid)))
        for closed, wanted in ended:
            judged = self._judged(closed.facts, closed.position)
            if wanted:
                self._keep(judged, (_DECODED, closed.position, 1))

    # -- the stream's hooks -----------------------------------------------------------------

    def opened(self, nid: int, oid: str, fact: FeedEvent) -> bool:
        """A round's opening: pair it with its table's start; gather it if selected or its
        game follows rounds."""
        self._pair((fact.table, fact.round), nid, "opened")
        if self.selection.matches(fact):
            self._selected.add(oid)
        elif not GAMES[fact.game].follows_rounds:
            return False
        self._opened_at[oid] = nid
        return True

    def started(self, nid: int, oid: str, version: int, content: bytes) -> None:
        """A table's ``round_started``: the table's newest round, paired with its opening."""
        try:
            started_round = _decode_started(content)
        except (ValidationError, ValueError) as exc:
            self.undecodable(nid, oid, version, TABLE_TOPIC, exc)
            return
        self._newest[started_round.table] = started_round.round
        self._pair((started_round.table, started_round.round), nid, "started")

    def undecodable(self, nid: int, oid: str, version: int, topic: str, exc: Exception) -> None:
        """Stored content that cannot be decoded (only a tampered store gets here); a row that
        cannot even be opened is the chain check's to report."""
        if isinstance(exc, FrameError):
            return
        self.report.integrity_ok = False
        self.keyed.append(
            (
                (_DECODED, nid, 0),
                [
                    Finding(
                        "chain_broken",
                        None,
                        None,
                        rule="integrity",
                        message=f"stored event {UUID(oid)} v{version} "
                        f"({topic}) cannot be decoded: {str(exc).splitlines()[0]}",
                    )
                ],
            )
        )

    def _pair(self, key: tuple[str, str], nid: int, kind: str) -> None:
        """Match a round's opening with its table's ``round_started`` (both are written in one
        save); whichever comes first waits for the other."""
        other = self._unpaired.pop(key, None)
        if other is None:
            self._unpaired[key] = (kind, nid)
        elif other[0] == kind:  # a second opening, or a second start, of the same round
            self._unpaired[key] = (kind, nid)
            self._broken_round(key, nid, f"a second {_PAIR_WHAT[kind]} of a round already stored")

    def _broken_round(self, key: tuple[str, str], nid: int, why: str) -> None:
        self.report.integrity_ok = False
        self.keyed.append(
            (
                (_DECODED, nid, 0),
                [
                    Finding(
                        "chain_broken",
                        key[0],
                        key[1],
                        rule="integrity",
                        message=f"{why}: rows were added outside the ledger",
                    )
                ],
            )
        )

    # -- the end ----------------------------------------------------------------------------

    def finish(self, expect_head: str | None = None, *, end_of_log: bool = True) -> VerifyReport:
        """After the last row: judge unfinished rounds, close sessions, finish the chain.

        With ``end_of_log`` false (a segment that stops before the end) only the chain is
        finished: rounds in play, carried bets and sessions go on past the rows read.
        """
        report = self.report
        if end_of_log:
            self._end_of_log()
        chain = self.chain
        if chain is not None:
            chain.finish(expect_head)
            report.integrity_ok = report.integrity_ok and not chain.broken
            report.head = chain.head
            report.events = chain.events
        report.keyed = self.keyed
        report.findings = (list(chain.findings) if chain is not None else []) + [
            f for _, found in self.keyed for f in found
        ]
        return report

    def _end_of_log(self) -> None:
        for key, (kind, nid) in self._unpaired.items():
            missing = "opened" if kind == "started" else "started"
            self._broken_round(
                key, nid, f"the store holds a {_PAIR_WHAT[kind]} of this round but no {_PAIR_WHAT[missing]}"
            )
        self._unpaired.clear()
        for oid, facts in self._stream.gathering.items():
            first = facts[0]
            judged = self._judged(
                facts, self._opened_at[oid], is_newest=self._newest.get(first.table) == first.round
            )
            if self._unselect(oid):
                self._keep(judged, (_UNFINISHED, self._opened_at[oid], 0))
        self._stream.gathering.clear()
        self._opened_at.clear()
        selection = self.selection
        kept = [f for f in self._judge.finish() if _selected_finding(f, selection)]
        if kept:
            self.keyed.append(((_SESSION, 0, 0), kept))

    # -- snapshots --------------------------------------------------------------------------

    def snapshot(self) -> Snapshot | None:
        """The state of the pass, if the last row read was a chain link that verified and the
        pass keeps content (``keep_content``); else ``None``."""
        stream, chain = self._stream, self.chain
        link = stream.link
        if (
            chain is None
            or link is None
            or link[0] != stream.position
            or chain.head is None
            or chain.broken
            or stream.contents is None
            or not chain.at_link
        ):
            return None
        rounds = {
            oid: {
                "opened": self._opened_at[oid],
                "stored": [[topic, content.decode()] for topic, content in stored],
            }
            for oid, stored in sorted(stream.contents.items())
        }
        unpaired = [[table, rnd, kind, nid] for (table, rnd), (kind, nid) in sorted(self._unpaired.items())]
        state = {
            "chain": chain.to_json(),
            "rounds": rounds,
            "tables": {"newest": dict(sorted(self._newest.items())), "unpaired": unpaired},
            "judge": self._judge.to_json(),
        }
        return Snapshot(link[0], link[1], chain.events, chain.head, state)

    def resume(self, snapshot: Snapshot) -> None:
        """Take up the state :meth:`snapshot` wrote (before feeding the rows after it).

        :class:`~ledger.verify.snapshot.SnapshotError` if the state cannot be read."""
        state = snapshot.state
        try:
            if self.chain is not None:
                self.chain.load(state["chain"])
            for oid, held in state["rounds"].items():
                stored = [(str(topic), str(text).encode()) for topic, text in held["stored"]]
                facts = [self._stream.decode(topic, content) for topic, content in stored]
                if not facts or not isinstance(facts[0], RoundOpened):
                    raise ValueError(f"round {oid} in play does not start with its opening")
                if self.owns is not None and not self.owns(facts[0].table):
                    continue
                if self.selection.matches(facts[0]):
                    self._selected.add(oid)
                elif not GAMES[facts[0].game].follows_rounds:
                    continue
                self._opened_at[oid] = int(held["opened"])
                self._stream.gathering[oid] = facts
                if self._stream.contents is not None:
                    self._stream.contents[oid] = stored
            tables = state["tables"]
            self._newest.update({str(t): str(r) for t, r in tables["newest"].items()})
            for table, rnd, kind, nid in tables["unpaired"]:
                self._unpaired[(table, rnd)] = (kind, int(nid))
            self._judge.load(state["judge"])
        except (KeyError, TypeError, ValueError, ValidationError) as exc:
            raise SnapshotError(
                f"the snapshot's state cannot be taken up: "
                f"{str(exc).splitlines()[0] if str(exc) else repr(exc)}"
            ) from None
        self._stream.position = snapshot.position
        self._stream.link = (snapshot.position, snapshot.links)

    # -- judging ----------------------------------------------------------------------------

    def _judged(self, facts: list[FeedEvent], nid: int, *, is_newest: bool = False) -> Judged:
        return self._judge.judge(facts, is_newest=is_newest)

    def _unselect(self, oid: str) -> bool:
        """Whether the round was selected; it is not any more (its findings are kept once)."""
        if oid not in self._selected:
            return False
        self._selected.discard(oid)
        return True

    def _keep(self, judged: Judged, key: tuple[int, int, int]) -> None:
        """Count and keep the findings of a selected round (a round judged only because its
        game follows rounds is not kept: it leaves no trace)."""
        report = self.report
        report.rounds_checked += 1
        if any(f.severity == "error" for f in judged.findings):
            report.rounds_with_findings += 1
        if judged.findings:
            self.keyed.append((key, judged.findings))
        if self.on_judged is not None:
            self.on_judged(judged)


def _table_of(content: bytes) -> str:
    """The table of a stored feed fact, read from its first bytes (``""`` if not readable)."""
    if content.startswith(b'{"v":1,"table":"'):
        end = content.find(b'"', 16)
        if end > 16:
            return content[16:end].decode("ascii", errors="replace")
    return ""


def _selected_finding(finding: Finding, selection: Selection) -> bool:
    return (selection.table is None or finding.table == selection.table) and (
        selection.round is None or finding.round == selection.round
    )
