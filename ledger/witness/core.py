"""The cosigning policy: a witness cosigns a log's checkpoint only if the log's operator signed it
and a consistency proof shows it extends the checkpoint the witness cosigned last.

:meth:`Witness.add_checkpoint` answers one C2SP ``tlog-witness`` request body, whether it came
over HTTP (:mod:`ledger.witness.server`) or from a file (``ledger witness cosign``). Checks, in
order: the body's form (400), the log (404), the operator's signature (403), ``old`` against the
checkpoint's size and the proof's length (400), ``old`` against the witness's own size (409),
the proof (422). Only then is the checkpoint stored (atomically, under the log's lock) and
cosigned; any refusal leaves the state as it was.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

from ledger.merkle.rfc6962 import EMPTY_ROOT, verify_consistency
from ledger.proof.note import CheckpointBody, NoteError, Verifier, cosign, open_note, parse_note
from ledger.witness.keys import WitnessKey
from ledger.witness.protocol import (
    BAD_REQUEST,
    FORBIDDEN,
    NOT_FOUND,
    UNPROCESSABLE,
    Answer,
    RequestError,
    conflict,
    consistency_proof_length,
    cosigned,
    parse_request,
    refusal,
)
from ledger.witness.state import StateError, WitnessState


class Witness:
    """A witness: its key, the logs it follows (origin → operator key) and its state."""

    def __init__(
        self,
        key: WitnessKey,
        logs: Mapping[str, Verifier],
        state: WitnessState,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.key = key
        self.logs = dict(logs)
        self.state = state
        self.clock = clock
        self._locks = {origin: threading.Lock() for origin in self.logs}

    def latest(self, origin: str) -> tuple[int, bytes]:
        """The size and root of the latest checkpoint cosigned for ``origin`` ((0, empty root)
        if none); :class:`StateError` if the stored one is not a checkpoint of that log."""
        stored = self.state.latest(origin)
        if stored is None:
            return 0, EMPTY_ROOT
        try:
            body = CheckpointBody.parse(open_note(stored, [self.logs[origin]]).text)
        except NoteError as exc:
            raise StateError(f"the stored checkpoint of {origin} does not verify: {exc}") from None
        if body.origin != origin:
            raise StateError(f"the stored checkpoint of {origin} names the log {body.origin}")
        return body.size, body.root

    def sizes(self) -> dict[str, int]:
        """Each followed log's latest cosigned size (checks every stored checkpoint: a damaged
        state is found at start, not at the first request)."""
        return {origin: self.latest(origin)[0] for origin in sorted(self.logs)}

    def add_checkpoint(self, request: bytes) -> Answer:
        """Answer one ``add-checkpoint`` request body (see the module's docstring)."""
        try:
            parsed = parse_request(request)
            note = parse_note(parsed.note)
            body = CheckpointBody.parse(note.text)
        except (RequestError, NoteError) as exc:
            return refusal(BAD_REQUEST, str(exc))
        log = self.logs.get(body.origin)
        if log is None:
            return refusal(NOT_FOUND, f"this witness does not follow the log {body.origin!r}")
        try:
            open_note(parsed.note, [log])
        except NoteError as exc:
            return refusal(FORBIDDEN, f"not signed by the operator of {body.origin}: {exc}")
        if parsed.old_size > body.size:
            return refusal(
                BAD_REQUEST, f"old size {parsed.old_size} is above the checkpoint's size {body.size}"
            )
        expected = consistency_proof_length(parsed.old_size, body.size)
        if len(parsed.proof) != expected:
            return refusal(
                BAD_REQUEST,
                f"a consistency proof from {parsed.old_size} to "
                f"{body.size} has {expected} hashes, not "
                f"{len(parsed.proof)}",
            )
        with self._locks[body.origin]:
            size, root = self.latest(body.origin)
            if parsed.old_size != size:
                return conflict(size)
            if not verify_consistency(size, body.size, root, body.root, parsed.proof) or (
                body.size == 0 and body.root != EMPTY_ROOT
            ):
                return refusal(
                    UNPROCESSABLE,
                    f"the checkpoint of size {body.size} does not "
                    f"extend the one of size {size} this witness "
                    "cosigned",
                )
            if (size, root) != (body.size, body.root) or self.state.latest(body.origin) is None:
                self.state.store(body.origin, parsed.note)
            signature = cosign(note.text, self.key.name, self.key.private_key, int(self.clock()))
        return cosigned([signature.line()])
