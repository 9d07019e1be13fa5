"""Cosigning a follower's timed checkpoints (``ledger ingest --follow … --seal-every D --witness
URL|DIR … --quorum K``), as ``ledger seal --witness`` does.

After each checkpoint the follower stores, :class:`Cosigner` signs the store's Merkle tree at
the checkpoint's row (a checkpoint note, :func:`ledger.merkle.sealing.seal_tree`, in the
follower's database thread) and then, in a thread of its own so the follower keeps storing
meanwhile, asks the witnesses to cosign it (:func:`ledger.witness.sealing.witness_note`); their
cosignatures are stored beside the note. When fewer than K cosign, nothing is stored for that
note, the follower says so (one log line, ``ledger_follow_cosign_total{outcome="missed"}``) and
follows on; the next checkpoint is offered again. While one checkpoint is being cosigned a newer
one waits its turn (only the newest waiting one is offered).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ledger.domain.errors import first_line
from ledger.live.metrics import FollowerMetrics
from ledger.merkle.heads import StoredNote
from ledger.merkle.sealing import seal_tree
from ledger.proof import checkpoints
from ledger.storage.store import LedgerApp
from ledger.witness.client import TIMEOUT_SECONDS
from ledger.witness.sealing import Witnessed, witness_note


class Cosigner:
    """The witnesses' step after each checkpoint a follower stores (see the module docstring)."""

    def __init__(
        self,
        app: LedgerApp,
        key: Ed25519PrivateKey,
        witnesses: Sequence[str],
        quorum: int,
        *,
        metrics: FollowerMetrics,
        say: Callable[[str], None],
        timeout: float = TIMEOUT_SECONDS,
    ) -> None:
        self.app = app
        self.key = key
        self.witnesses = list(witnesses)
        self.quorum = quorum
        self.metrics = metrics
        self.say = say
        self.timeout = timeout
        self.cosigned = 0
        self.missed = 0
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ledger-follow-witness")
        self._running: asyncio.Task[None] | None = None
        self._waiting: checkpoints.Sealed | None = None

    def note(self, sealed: checkpoints.Sealed) -> StoredNote:
        """In the database thread: sign the tree at the checkpoint's row; the stored note."""
        return seal_tree(self.app, self.key, sealed.checkpoint).note

    def offer(self, sealed: checkpoints.Sealed, db: ThreadPoolExecutor) -> None:
        """Cosign ``sealed`` now, or once the one being cosigned is done (``db``: the
        follower's database thread, where the note is signed)."""
        if self._running is not None and not self._running.done():
            self._waiting = sealed
            return
        self._running = asyncio.ensure_future(self._cosign(sealed, db))

    async def _cosign(self, sealed: checkpoints.Sealed, db: ThreadPoolExecutor) -> None:
        loop = asyncio.get_running_loop()
        number = sealed.number
        try:
            stored = await loop.run_in_executor(db, self.note, sealed)
            witnessed = await loop.run_in_executor(self._pool, self._ask, stored)
        except Exception as exc:  # QuorumError, a refused note, the store away: said, followed on
            self.missed += 1
            self.metrics.cosign.labels("missed").inc()
            message = first_line(exc)
            self.metrics.error("witness", message)
            self.say(f"checkpoint {number} not cosigned (quorum {self.quorum}): {message}; following on")
        else:
            self.cosigned += 1
            self.metrics.cosign.labels("cosigned").inc()
            self.metrics.last_cosigned.set_to_current_time()
            self.say(
                f"checkpoint {number} cosigned by {', '.join(witnessed.names())} "
                f"(quorum {self.quorum}; {witnessed.added} new cosignature(s) stored)"
            )
        waiting, self._waiting = self._waiting, None
        if waiting is not None:
            self._running = asyncio.ensure_future(self._cosign(waiting, db))

    def _ask(self, stored: StoredNote) -> Witnessed:
        return witness_note(self.app, stored, self.witnesses, self.quorum, timeout=self.timeout)

    async def drain(self) -> None:
        """Wait for the cosigning in hand (at the follower's end)."""
        while self._running is not None and not self._running.done():
            await asyncio.shield(self._running)
        self._pool.shutdown(wait=True)
