"""Judging rounds as they close, with the very pass ``ledger verify`` runs.

:class:`LiveJudge` holds one :class:`~ledger.verify.engine.VerifyPass` for the follower's life.
After each commit it reads the rows stored since the last it read (also rows another writer
stored) and feeds them to the pass, which judges each round when its closing row is read, with
the game sessions and carried bets kept in memory: the same judge, in the same store order, as
a later ``ledger verify``, so the findings are the same. A silent table's open round just stays
in play: only the end of a verify pass judges unfinished rounds, and a follower never ends it.

At start the pass takes up the snapshot of the newest stored checkpoint (``ledger seal``,
``--seal-every``) when there is one, so only the rows after it are read again; their findings
are told again (at least once, never lost across a restart).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ledger import checkpoints
from ledger.findings import Finding
from ledger.store import LedgerApp
from ledger.verify.engine import VerifyPass
from ledger.verify.snapshot import SnapshotError


class ResumeRefused(Exception):
    """The newest checkpoint does not agree with the store: the follower will not start on it
    (exit 3)."""


@dataclass(frozen=True)
class LiveFinding:
    """A finding, and when the follower made it."""

    finding: Finding
    detected_at: datetime

    def to_json(self) -> dict[str, Any]:
        """The finding's JSON (docs/schemas/finding.json) plus ``detected_at`` (UTC, ISO 8601)."""
        return {**self.finding.to_json(), "detected_at": self.detected_at.isoformat(timespec="milliseconds")}


class LiveJudge:
    """The verify pass of a follower (see the module docstring)."""

    def __init__(self, app: LedgerApp) -> None:
        self.app = app
        self.scan = VerifyPass(app.ledger_mapper)
        self.position = 0
        """The notification id of the last row judged."""
        self.rounds = 0
        self.resumed_from: int | None = None
        """The checkpoint number the pass started from (``None``: the whole log)."""

    def resume_from_checkpoint(self) -> None:
        """Take up the newest stored checkpoint's snapshot, if there is one and it agrees with
        the store; :class:`ResumeRefused` if it does not."""
        with checkpoints.CheckpointStore(self.app, create=False) as table:
            stored = table.latest()
            if stored is None:
                return
            try:
                snapshot = table.snapshot(stored)
            except SnapshotError as exc:
                raise ResumeRefused(str(exc)) from None
        problems = checkpoints.resume_findings(self.app, stored.checkpoint)
        if problems:
            raise ResumeRefused(f"checkpoint {stored.number}: {problems[0].message}")
        try:
            self.scan.resume(snapshot)
        except SnapshotError as exc:
            raise ResumeRefused(str(exc)) from None
        self.position = snapshot.position
        self.resumed_from = stored.number

    def advance(self) -> list[LiveFinding]:
        """Read and judge every row stored since the last call; the findings they make."""
        scan = self.scan
        for page in self.app.rows(after=self.position):
            scan.feed(page)
            self.position = page[-1][0]
        detected = datetime.now(UTC)
        self.rounds += scan.report.rounds_checked
        scan.report.rounds_checked = 0
        found = [LiveFinding(f, detected) for _, batch in scan.keyed for f in batch]
        scan.keyed.clear()
        return found
