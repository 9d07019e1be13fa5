"""The C2SP ``tlog-witness`` request body and the witness's answers, as pure functions.

A request to ``POST /add-checkpoint`` is::

    old SIZE
    BASE64(HASH)          (zero or more lines: the consistency proof from SIZE)
                          (an empty line)
    CHECKPOINT            (the signed note)

``SIZE`` is the size of the checkpoint the client believes the witness cosigned last (0 if
none). The answers: 200 with the witness's cosignature line(s); 400 a malformed request (or
``old`` above the checkpoint's size, or a proof of the wrong length); 403 no valid signature by
the log's key; 404 a log the witness does not follow; 409 ``old`` is not the witness's size,
with that size in a ``text/x.tlog.size`` body; 422 the proof does not verify.

>>> body = request_body(0, [], "o\\n1\\n" + "A" * 43 + "=\\n\\n— o AAAAAA==\\n")
>>> parse_request(body).old_size
0
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass

from ledger.merkle.rfc6962 import HASH_SIZE, split
from ledger.proof.note import MAX_NOTE_BYTES

MAX_PROOF_LINES = 63
"""The protocol's cap on proof lines (a proof between trees below 2³¹ leaves has at most 62)."""
MAX_REQUEST_BYTES = MAX_NOTE_BYTES + 64 * 64
"""A request body larger than this is refused unread (413)."""
SIZE_CONTENT_TYPE = "text/x.tlog.size"
NOTE_CONTENT_TYPE = "text/plain; charset=utf-8"

OK = 200
BAD_REQUEST = 400
FORBIDDEN = 403
NOT_FOUND = 404
CONFLICT = 409
TOO_LARGE = 413
UNPROCESSABLE = 422


class RequestError(ValueError):
    """A request body that is not an ``add-checkpoint`` request (answered 400)."""


@dataclass(frozen=True)
class AddCheckpoint:
    """A parsed request: the old size, the consistency proof and the checkpoint note's bytes."""

    old_size: int
    proof: tuple[bytes, ...]
    note: bytes


@dataclass(frozen=True)
class Answer:
    """The witness's answer: an HTTP status, a content type and a body (text)."""

    status: int
    body: str
    content_type: str = NOTE_CONTENT_TYPE

    @property
    def ok(self) -> bool:
        """Whether the checkpoint was cosigned."""
        return self.status == OK


def request_body(old_size: int, proof: Sequence[bytes], note: str) -> bytes:
    """The body of an ``add-checkpoint`` request."""
    lines = [f"old {old_size}", *(base64.b64encode(p).decode() for p in proof)]
    return ("\n".join(lines) + "\n\n" + note).encode("utf-8")


def _decimal(text: str, what: str) -> int:
    if not text.isascii() or not text.isdigit() or (text != "0" and text.startswith("0")) or len(text) > 20:
        raise RequestError(f"{what} is not a decimal number without leading zeros")
    value = int(text)
    if value >= 1 << 64:
        raise RequestError(f"{what} is above 2^64")
    return value


def parse_request(body: bytes) -> AddCheckpoint:
    """Read an ``add-checkpoint`` body; :class:`RequestError` naming the line that is wrong."""
    if len(body) > MAX_REQUEST_BYTES:
        raise RequestError(f"the request is larger than {MAX_REQUEST_BYTES} bytes")
    head, sep, note = body.partition(b"\n\n")
    if not sep:
        raise RequestError("the request has no empty line between the proof and the checkpoint")
    try:
        lines = head.decode("ascii").split("\n")
    except UnicodeDecodeError:
        raise RequestError("the old size and proof lines are not ASCII") from None
    first = lines[0]
    if not first.startswith("old "):
        raise RequestError("line 1: the request starts with 'old SIZE'")
    old_size = _decimal(first[4:], "line 1: the old size")
    if len(lines) - 1 > MAX_PROOF_LINES:
        raise RequestError(f"the consistency proof has more than {MAX_PROOF_LINES} lines")
    proof = []
    for number, line in enumerate(lines[1:], start=2):
        try:
            raw = base64.b64decode(line, validate=True)
        except (ValueError, binascii.Error):
            raise RequestError(f"line {number}: a proof line is not base64") from None
        if len(raw) != HASH_SIZE:
            raise RequestError(f"line {number}: a proof hash is {HASH_SIZE} bytes, not {len(raw)}")
        proof.append(raw)
    if not note:
        raise RequestError("the request carries no checkpoint after the empty line")
    return AddCheckpoint(old_size, tuple(proof), note)


def consistency_proof_length(old_size: int, new_size: int) -> int:
    """How many hashes an RFC 9162 consistency proof from ``old_size`` to ``new_size`` has."""
    if not 0 <= old_size <= new_size:
        raise ValueError(f"no consistency proof from {old_size} to {new_size}")
    if old_size in (0, new_size):
        return 0
    count, m, n, complete = 0, old_size, new_size, True
    while m != n:
        k = split(n)
        count += 1
        if m <= k:
            n = k
        else:
            m, n, complete = m - k, n - k, False
    return count + (0 if complete else 1)


def cosigned(lines: Sequence[str]) -> Answer:
    """200: the cosignature line(s), each ending in a newline."""
    return Answer(OK, "".join(line + "\n" for line in lines))


def conflict(size: int) -> Answer:
    """409: the size of the checkpoint the witness cosigned last."""
    return Answer(CONFLICT, f"{size}\n", SIZE_CONTENT_TYPE)


def refusal(status: int, reason: str) -> Answer:
    """An error answer with a one-line reason."""
    return Answer(status, reason.replace("\n", " ") + "\n")
