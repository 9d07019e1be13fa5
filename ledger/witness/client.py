"""Asking witnesses to cosign a checkpoint: over HTTP (C2SP ``tlog-witness``) or through a
directory carried to an air-gapped witness.

:func:`request_cosignature` asks one witness. A target ``http(s)://…`` gets ``POST
/add-checkpoint``; on the protocol's 409 (the witness cosigned another size last) it asks once
more, with a consistency proof from the size the witness returned. Any other directory-like target
is an offline exchange: the request is written to ``DIR/checkpoint-SIZE-ROOT.request``; once
``ledger witness cosign`` has put ``….response`` beside it, the same call reads the cosignature
(or, if the answer is the witness's size, writes the request again from that size; if it is a
refusal, ``STATUS REASON``, raises :class:`WitnessError` with it). Until then it raises
:class:`WitnessPending`.

:func:`collect_cosignatures` asks several witnesses at once and raises :class:`QuorumError`
unless at least ``quorum`` of them cosigned (distinct witness names; and, when their keys are
given, valid ``cosignature/v1`` signatures of this checkpoint by those keys).
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ledger.domain.errors import LedgerError
from ledger.proof.note import (
    SIGNATURE_PREFIX,
    CheckpointBody,
    NoteError,
    NoteSignature,
    Verifier,
    cosignature_time,
    parse_note,
    parse_signature_line,
)
from ledger.witness.protocol import CONFLICT, OK, SIZE_CONTENT_TYPE, request_body
from ledger.witness.state import write_atomically

ProofFor = Callable[[int], list[bytes]]
"""``proof_for(old_size)``: the consistency proof from ``old_size`` to the checkpoint's size."""
MAX_ANSWER_BYTES = 1 << 16
TIMEOUT_SECONDS = 10.0


class WitnessError(Exception):
    """A witness that could not be reached, refused the checkpoint, or answered nonsense."""


class WitnessPending(WitnessError):
    """An offline request written (or still waiting) for ``ledger witness cosign``."""


class QuorumError(WitnessError):
    """Fewer witnesses cosigned than the quorum asks; the message names each failure."""


def is_http(target: str) -> bool:
    """Whether ``target`` is a witness URL (else a directory of the offline exchange)."""
    return target.startswith(("http://", "https://"))


def request_cosignature(
    target: str,
    note: str,
    old_size: int,
    proof_for: ProofFor,
    *,
    witness: Verifier | None = None,
    timeout: float = TIMEOUT_SECONDS,
) -> NoteSignature:
    """One witness's cosignature of the checkpoint ``note`` (see the module's docstring).

    ``old_size`` is the size this witness is believed to have cosigned last (0: none, or not
    known); with ``witness`` (its verifier key), the answer must be its valid cosignature.
    """
    body = _checkpoint(note)
    if is_http(target):
        lines = _over_http(target, note, body, old_size, proof_for, timeout)
    else:
        lines = _over_directory(Path(target), note, body, old_size, proof_for)
    return _pick(target, lines, body, witness)


def _checkpoint(note: str) -> CheckpointBody:
    try:
        return CheckpointBody.parse(parse_note(note).text)
    except NoteError as exc:
        raise WitnessError(f"not a checkpoint note: {exc}") from None


def _post(url: str, data: bytes, timeout: float) -> tuple[int, str, str]:
    request = urllib.request.Request(
        url, data=data, method="POST", headers={"Content-Type": "text/plain; charset=utf-8"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return (
                response.status,
                response.headers.get_content_type(),
                response.read(MAX_ANSWER_BYTES).decode("utf-8", "replace"),
            )
    except urllib.error.HTTPError as exc:
        text = exc.read(MAX_ANSWER_BYTES).decode("utf-8", "replace")
        return exc.code, exc.headers.get_content_type(), text
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise WitnessError(f"{url}: unreachable: {reason}") from None


def _over_http(
    target: str, note: str, body: CheckpointBody, old_size: int, proof_for: ProofFor, timeout: float
) -> list[str]:
    url = target.rstrip("/") + "/add-checkpoint"
    for attempt in (1, 2):
        status, content_type, text = _post(url, request_body(old_size, proof_for(old_size), note), timeout)
        if status == OK:
            return text.splitlines()
        if status == CONFLICT and content_type == SIZE_CONTENT_TYPE and attempt == 1:
            old_size = _witness_size(target, text, body)
            continue
        first = text.strip().splitlines()[0] if text.strip() else "(no reason given)"
        raise WitnessError(f"{target} refused the checkpoint of size {body.size} ({status}): {first[:300]}")
    raise AssertionError("unreachable")  # pragma: no cover


def _witness_size(target: str, text: str, body: CheckpointBody) -> int:
    value = text.strip()
    if not value.isdigit() or len(value) > 20:
        raise WitnessError(f"{target} answered 409 without a size")
    size = int(value)
    if size > body.size:
        raise WitnessError(
            f"{target} has cosigned a checkpoint of size {size}, newer than this "
            f"one ({body.size}): an older checkpoint is being presented as the "
            "newest"
        )
    return size


def _slug(body: CheckpointBody) -> str:
    return f"checkpoint-{body.size}-{body.root.hex()[:16]}"


def _over_directory(
    folder: Path, note: str, body: CheckpointBody, old_size: int, proof_for: ProofFor
) -> list[str]:
    if not folder.is_dir():
        raise WitnessError(f"{folder}: not a witness URL (http(s)://…) nor an existing directory")
    request, response = folder / f"{_slug(body)}.request", folder / f"{_slug(body)}.response"
    try:
        if response.exists():
            text = response.read_text(encoding="utf-8", errors="replace")[:MAX_ANSWER_BYTES]
            if text.startswith(SIGNATURE_PREFIX):
                return text.splitlines()
            if not text.strip().isdigit():  # "STATUS REASON": the witness refused
                raise WitnessError(
                    f"{response}: the witness refused the checkpoint of size "
                    f"{body.size} ({text.strip()[:300]})"
                )
            old_size = _witness_size(str(response), text, body)
            response.unlink()
        elif request.exists():
            raise WitnessPending(f"{request} is waiting for `ledger witness cosign`")
        write_atomically(request, request_body(old_size, proof_for(old_size), note))
    except OSError as exc:
        raise WitnessError(f"{folder}: {exc.strerror or exc}") from None
    raise WitnessPending(
        f"wrote {request}: answer it with `ledger witness cosign --in {request}`, then seal again"
    )


def _pick(target: str, lines: Sequence[str], body: CheckpointBody, witness: Verifier | None) -> NoteSignature:
    signatures = []
    for line in lines:
        try:
            signatures.append(parse_signature_line(line))
        except NoteError as exc:
            raise WitnessError(f"{target} answered a line that is not a cosignature: {exc}") from None
    if witness is not None:
        signatures = [s for s in signatures if cosignature_time(s, witness, body.text()) is not None]
    if not signatures:
        raise WitnessError(f"{target} answered no valid cosignature of the checkpoint of size {body.size}")
    return signatures[0]


def collect_cosignatures(
    targets: Sequence[str],
    note: str,
    old_sizes: Mapping[str, int],
    proof_for: ProofFor,
    quorum: int,
    *,
    witnesses: Sequence[Verifier] = (),
    timeout: float = TIMEOUT_SECONDS,
) -> list[NoteSignature]:
    """Cosignatures of ``note`` from the witnesses at ``targets`` (asked in parallel); at least
    ``quorum`` of distinct witnesses, else :class:`QuorumError` naming every failure.

    ``old_sizes`` maps a target to the size it is believed to have cosigned last (missing: 0).
    With ``witnesses`` (their verifier keys), only valid cosignatures by those keys count.
    """
    if quorum < 1 or quorum > len(targets):
        raise QuorumError(f"a quorum of {quorum} needs at least that many witnesses (given {len(targets)})")
    body = _checkpoint(note)

    def ask(target: str) -> NoteSignature | str:
        try:
            signature = request_cosignature(
                target, note, old_sizes.get(target, 0), proof_for, timeout=timeout
            )
        except (WitnessError, LedgerError) as exc:  # a proof the store could not give, too
            return f"{target}: {exc}" if isinstance(exc, LedgerError) else str(exc)
        if witnesses and not any(cosignature_time(signature, w, body.text()) is not None for w in witnesses):
            return f"{target}: the cosignature of {signature.name} is not valid under any given witness key"
        return signature

    with ThreadPoolExecutor(max_workers=min(8, len(targets))) as pool:
        answers = list(pool.map(ask, targets))
    found: dict[tuple[str, bytes], NoteSignature] = {}
    for answer in answers:
        if isinstance(answer, NoteSignature):
            found.setdefault((answer.name, answer.key_id), answer)
    if len(found) < quorum:
        failures = "; ".join(a for a in answers if isinstance(a, str)) or "duplicate witnesses"
        raise QuorumError(f"{len(found)} of {quorum} required cosignatures collected: {failures}")
    return list(found.values())
