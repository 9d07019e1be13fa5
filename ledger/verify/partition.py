"""``ledger verify --jobs N``: the same verify, its rounds judged by N processes.

How the work is split, so that the findings are those of a single pass:

- **Whole tables.** Every round of a table goes to one worker, so carried bets and an SP9 bank
  (state per table) are followed in store order as in a single pass. Tables whose rounds name the
  same jackpot pool (``rules.jackpot.pool``, STUD's linked progressive) form one group that goes
  to one worker, so a pool is followed across its tables in store order too.
- **Balanced.** A first, cheap pass reads only the ``table/round_started`` rows (one per round)
  and the openings that name a jackpot, and counts stored events per topic in SQL. A table's
  weight is an estimate of its CPU time: rounds × its game's events per round × the game's
  measured cost per event (:func:`us_per_event`). Groups are dealt out heaviest first to the
  least-loaded worker.
- **Integrity once.** Worker 0 also checks the integrity chain of every row (so every row is
  covered exactly once, and the head is the same); it starts with a load of
  :data:`CHAIN_US_PER_ROW` per stored row for it. Each worker reads the log itself, with its own
  connection, and decodes only the rows of its own tables.
- **Merged in order.** Each worker keeps its findings with the place they take in a single pass
  (``VerifyPass.keyed``); the merge sorts by that place. Findings only the end of the log
  reveals (game sessions) come last, worker by worker.

Workers are forked where the platform allows (spawned elsewhere) and open their own store.
"""

from __future__ import annotations

import heapq
import json
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from ledger.codec.chain import FrameError
from ledger.domain.findings import Finding
from ledger.domain.table import TABLE_TOPIC, table_id
from ledger.games import GAMES
from ledger.storage.store import LedgerApp, open_ledger
from ledger.verify.engine import Keyed, Selection, VerifyPass, VerifyReport, verify_store
from ledger.verify.integrity import ChainVerifier

CHAIN_US_PER_ROW = 3.5
"""Worker 0's extra load for checking the chain of one stored row, in the units of
:func:`us_per_event` (the check itself costs ~2.5 us; 2.5 to 4.5 balanced the workers within the noise)."""

DEFAULT_US = 18.0
"""The cost per event of a game the registry does not know."""


def us_per_event(game: str) -> float:
    """Verify's CPU per stored event of ``game``, in microseconds (``Game.us_per_event``,
    measured on simulated feeds, SQLite, one core; only their ratios matter); a game the
    registry does not know counts :data:`DEFAULT_US`. Read on use: it loads the game."""
    return GAMES[game].us_per_event if game in GAMES else DEFAULT_US


@dataclass
class _Part:
    """What one worker found."""

    report: VerifyReport
    keyed: list[Keyed]
    chain_findings: list[Finding] = field(default_factory=list)
    cpu_seconds: float = 0.0


def verify_parallel(
    url: str, selection: Selection = Selection(), *, jobs: int = 2, expect_head: str | None = None
) -> VerifyReport:
    """Verify the store at ``url`` with ``jobs`` processes; the report equals ``verify_store``'s."""
    started = time.perf_counter()
    if jobs <= 1:
        app = open_ledger(url)
        try:
            return verify_store(app, selection, expect_head=expect_head)
        finally:
            app.close()
    cpu = time.process_time()
    app = open_ledger(url)
    try:
        assignment = assign(app, jobs)
    finally:
        app.close()
    cpu = time.process_time() - cpu
    context = multiprocessing.get_context(
        "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    )
    with ProcessPoolExecutor(max_workers=jobs - 1, mp_context=context) as pool:
        futures = [pool.submit(_work, url, i, assignment, selection, expect_head) for i in range(1, jobs)]
        parts = [_work(url, 0, assignment, selection, expect_head)]
        parts += [f.result() for f in futures]
    report = merge(parts)
    report.seconds = time.perf_counter() - started
    report.cpu_seconds = [cpu] + [p.cpu_seconds for p in parts]
    return report


def assign(app: LedgerApp, jobs: int) -> dict[str, int]:
    """Each table's worker: groups of tables linked by a jackpot pool, balanced by weight."""
    rounds: dict[str, int] = {}
    games: dict[str, str] = {}
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    openings = [f"{key}/round_opened" for key in GAMES]
    for page in app.rows(topics=[TABLE_TOPIC, *openings]):
        for _, _, _, topic, state in page:
            try:
                content = app.ledger_mapper.open_state(state)[1]
            except FrameError:
                continue
            if topic == TABLE_TOPIC:
                table = _field(content, "table")
                if table:
                    if table not in rounds:
                        games[table] = _field(content, "game")
                    rounds[table] = rounds.get(table, 0) + 1
                    find("t:" + table)
            elif b'"jackpot":' in content:
                table, pool = _field(content, "table"), _pool(content)
                if table and pool:
                    parent[find("t:" + table)] = find("p:" + pool)
    counts = app.topic_counts()
    per_round = _events_per_round(counts)
    weight = {t: n * per_round.get(games[t], 1.0) * us_per_event(games[t]) for t, n in rounds.items()}
    groups: dict[str, list[str]] = {}
    for table in rounds:
        groups.setdefault(find("t:" + table), []).append(table)
    loads = [(CHAIN_US_PER_ROW * sum(counts.values()), 0)] + [(0.0, i) for i in range(1, jobs)]
    heapq.heapify(loads)
    assignment: dict[str, int] = {}
    for members in sorted(groups.values(), key=lambda m: (-sum(weight[t] for t in m), m)):
        load, worker = heapq.heappop(loads)
        for table in members:
            assignment[table] = worker
        heapq.heappush(loads, (load + sum(weight[t] for t in members), worker))
    return assignment


def _events_per_round(counts: dict[str, int]) -> dict[str, float]:
    """Each game's stored events per round, from the event count of every topic."""
    events: dict[str, int] = {}
    for topic, n in counts.items():
        game = topic.split("/", 1)[0]
        events[game] = events.get(game, 0) + n
    return {
        game: events[game] / counts[f"{game}/round_opened"]
        for game in events
        if counts.get(f"{game}/round_opened")
    }


def merge(parts: list[_Part]) -> VerifyReport:
    """One report from the workers' parts, findings in single-pass order."""
    report = VerifyReport()
    keyed = sorted(
        ((key, worker, found) for worker, part in enumerate(parts) for key, found in part.keyed),
        key=lambda k: (k[0], k[1]),
    )
    first = parts[0].report
    report.findings = list(parts[0].chain_findings) + [f for _, _, found in keyed for f in found]
    report.rounds_checked = sum(p.report.rounds_checked for p in parts)
    report.rounds_with_findings = sum(p.report.rounds_with_findings for p in parts)
    report.integrity_ok = all(p.report.integrity_ok for p in parts)
    report.head = first.head
    report.events = first.events
    return report


def _work(
    url: str, index: int, assignment: dict[str, int], selection: Selection, expect_head: str | None
) -> _Part:
    cpu = time.process_time()
    # The store exists (the assignment pass opened it): concurrent CREATE TABLE on PostgreSQL
    # fails with "tuple concurrently updated" (EVENTSOURCING.md hazard 4).
    app = open_ledger(url, extra_env={"CREATE_TABLE": "n"})
    try:
        chain = (
            ChainVerifier(app.ledger_mapper, keep_heads=False, expect_head=expect_head)
            if index == 0
            else None
        )
        owned = frozenset(table_id(t).hex for t, w in assignment.items() if w == index)
        scan = VerifyPass(
            app.ledger_mapper,
            selection,
            chain=chain,
            owns=lambda table: assignment.get(table, 0) == index,
            owned_tables=owned,
        )
        for page in app.rows():
            scan.feed(page)
        report = scan.finish(expect_head)
    finally:
        app.close()
    return _Part(
        report, scan.keyed, list(chain.findings) if chain is not None else [], time.process_time() - cpu
    )


def _field(content: bytes, name: str) -> str:
    try:
        value = json.loads(content).get(name)
    except (ValueError, AttributeError):
        return ""
    return value if isinstance(value, str) else ""


def _pool(content: bytes) -> str:
    try:
        pool = json.loads(content)["rules"]["jackpot"]["pool"]
    except (ValueError, KeyError, TypeError):
        return ""
    return pool if isinstance(pool, str) else ""
