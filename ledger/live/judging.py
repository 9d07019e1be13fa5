"""Judging rounds as they close, with the very pass ``ledger verify`` runs.

:class:`LiveJudge` holds one :class:`~ledger.verify.engine.VerifyPass` for the follower's life.
After each commit it reads the rows stored since the last it read (also rows another writer
stored) and feeds them to the pass, which judges each round when its closing row is read, with
the game sessions and carried bets kept in memory: the same judge, in the same store order, as
a later ``ledger verify``, so the findings are the same. A silent table's open round just stays
in play: only the end of a verify pass judges unfinished rounds, and a follower never ends it.

At start the pass takes up the snapshot of the newest stored checkpoint (``ledger seal``,
``--seal-every``) valid under the store's sealing public key (``LEDGER_SEAL_PUBLIC_KEY`` or
``ledger init --seal-public-key``, as every reader of a checkpoint checks it:
:func:`ledger.proof.checkpoints.sealing_key`), so only the rows after it are read again. With no such
key, or no checkpoint valid under it, the pass starts from the beginning of the log and
:attr:`LiveJudge.note` says why. The findings of rounds closed at rows up to
:attr:`LiveJudge.told_through` (``ledger.live.told``) were told before: they are kept back.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ledger.domain.findings import Finding
from ledger.live.told import finding_id, store_identity
from ledger.proof import checkpoints
from ledger.storage.store import LedgerApp, RawRow
from ledger.verify.engine import VerifyPass
from ledger.verify.snapshot import SnapshotError

KEEP_ROWS = 100_000
"""At most this many rows read are kept for the Merkle tree between two :meth:`LiveJudge.take_read`."""


class ResumeRefused(Exception):
    """The newest checkpoint does not agree with the store: the follower will not start on it
    (exit 3)."""


@dataclass(frozen=True)
class LiveFinding:
    """A finding, when the follower made it, and where the pass made it: the key of its round
    (kind, closing row, order) and its place among that round's findings (its message id)."""

    finding: Finding
    detected_at: datetime
    key: tuple[int, int, int] = (0, 0, 0)
    index: int = 0

    def to_json(self, store: str | None = None) -> dict[str, Any]:
        """The finding's JSON (docs/schemas/finding.json) plus ``detected_at`` (UTC, ISO 8601)
        and, given the store's identity (:func:`ledger.live.told.store_identity`), ``finding_id``:
        the same each time this store's judge makes this finding, so a line told again (after a
        kill) is known as a repeat (docs/FEED.md)."""
        detected = self.detected_at.isoformat(timespec="milliseconds")
        record = {**self.finding.to_json(), "detected_at": detected}
        if store is not None:
            record["finding_id"] = finding_id(store, self.key, self.index)
        return record


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
        self.note: str | None = None
        """Why stored checkpoints were not used, when there are some and none was."""
        self.told_through = 0
        """Findings of rounds closed at rows up to this one were told before (kept back)."""
        self.keep_read = False
        """Keep the rows each :meth:`advance` reads, for :meth:`take_read` (the Merkle tree is
        extended from them: ``ledger.live.tree``), the first :data:`KEEP_ROWS` of them (a
        judging from the start of a large log does not hold it all; the tree reads the rest)."""
        self._read: list[RawRow] = []

    def resume_from_checkpoint(self, told: int | None = None) -> None:
        """Take up the newest checkpoint valid under the store's sealing public key (at a row
        up to ``told``, the row through which the findings were told, when it is known: the
        rounds after it must be judged again), if there is one and it agrees with the store
        (:class:`ResumeRefused` if it does not); else start from the beginning, :attr:`note`
        saying why."""
        key = checkpoints.sealing_key(self.app)
        with checkpoints.CheckpointStore(self.app, create=False) as table:
            if not table.exists:
                return
            skipped: list[checkpoints.InvalidCheckpoint] = []
            stored = None
            if key is not None:
                where = "" if told is None else f" WHERE position <= {table.p}"
                params = () if told is None else (told,)
                stored = next(table.valid_rows(key, where, params, skipped=skipped), None)
            if stored is None:
                self.note = _why_from_start(key, table.newest(None), skipped)
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
        """Read and judge every row stored since the last call; the findings they make, but
        those of rounds closed at rows up to :attr:`told_through`."""
        scan = self.scan
        keep = self._read if self.keep_read else None
        for page in self.app.rows(after=self.position):
            scan.feed(page)
            self.position = page[-1][0]
            if keep is not None and len(keep) < KEEP_ROWS:
                keep += page
        detected = datetime.now(UTC)
        self.rounds += scan.report.rounds_checked
        scan.report.rounds_checked = 0
        told = self.told_through
        found = [
            LiveFinding(f, detected, key, index)
            for key, batch in scan.keyed
            if not 0 < key[1] <= told
            for index, f in enumerate(batch)
        ]
        scan.keyed.clear()
        return found

    def take_read(self) -> list[RawRow]:
        """The rows read since the last call, in order (with :attr:`keep_read`)."""
        rows, self._read = self._read, []
        return rows


def _why_from_start(
    key: checkpoints.SealingKey | None,
    intact: checkpoints.StoredCheckpoint | None,
    skipped: list[checkpoints.InvalidCheckpoint],
) -> str | None:
    """What the follower says when stored checkpoints exist but none is used (``None``: there
    are none)."""
    if intact is None and not skipped:
        return None
    if key is None:
        return f"{checkpoints.NO_SEALING_KEY}; judging from the start of the log"
    why = f" ({skipped[0].reason})" if skipped else ""
    return (
        f"no stored checkpoint is valid under the sealing public key {key.key_id} "
        f"({key.source}){why}; judging from the start of the log"
    )


def finding_ids(app: LedgerApp) -> set[str]:
    """The ``finding_id`` (the ``Nats-Msg-Id``) of every finding of the store, from one judge
    run over it: what a follower of this store tells, once each."""
    store = store_identity(app)
    return {finding_id(store, f.key, f.index) for f in LiveJudge(app).advance()}
