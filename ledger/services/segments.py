"""Segments of the log between stored checkpoints: verified apart, merged into one full verify.

Consecutive stored checkpoints (``ledger.proof.checkpoints``) cut the log into segments; checkpoint 0
is the start of the store and ``head`` its end. :func:`verify_segment` verifies the rows
``(A.position, B.position]`` starting from A's snapshot and ends by checking that the state it
derived at B's row equals B's signed snapshot, so a segment proves the next one's starting point:
verifying every segment, in any order and on any number of processes or machines, is a full
verification. Only the segment that reaches the head reports what the end of the log reveals
(rounds still in play, outstanding carries, session ends).

Each part keeps, for every finding, the place it takes in a single pass (``keys``: phase,
notification id, tie-break; ``(0, 0, 0)`` for integrity findings, which a single pass prints
first). :func:`merge` puts the parts in log order and takes first every part's integrity
findings, then every part's other findings (each part's are in pass order, and the end of the
log's only in the last part), and adds up the counts, so the merged report equals
``verify_store``'s. :func:`verify_parallel_segments` runs ``--jobs N`` this
way where checkpoints exist: each row is read by one process only.

A checkpoint bounds a segment only if its signature is valid under the store's sealing public
key (``--public-key``, else ``ledger.proof.checkpoints.sealing_key``); a row that is not valid is never
used. Each part is bound to what it was run on: the store's identity (the digest of its first
chain link), the snapshot digests of the checkpoints at its ends, and the head it saw (the
newest row and the newest link's digest). :func:`merge` refuses parts that do not chain: another
store, another head, or an end that is not the next part's start. It cannot tell a report run
on a byte-identical copy of the store from one run on the store (docs/INTEGRITY.md).
"""

from __future__ import annotations

import itertools
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ledger.codec.chain import CHAIN_ID
from ledger.domain.errors import SealError, UsageError
from ledger.domain.findings import Finding
from ledger.proof.checkpoints import (
    NO_SEALING_KEY,
    CheckpointStore,
    InvalidCheckpoint,
    SealingKey,
    StoredCheckpoint,
    lacks_counters,
    sealing_key,
    without_counters,
)
from ledger.proof.seal import checkpoint_findings, raw_public
from ledger.storage.store import LedgerApp, open_ledger
from ledger.verify.engine import Selection, VerifyReport, verify_store
from ledger.verify.partition import verify_parallel
from ledger.verify.snapshot import Snapshot, SnapshotError

Key = tuple[int, int, int]
INTEGRITY_KEY: Key = (0, 0, 0)
"""The place of an integrity finding that is not tied to a row: first, as in a single pass."""

HEAD = "head"


@dataclass
class Part:
    """One verified segment: its bounds, its report and each finding's single-pass place."""

    start: int
    """Checkpoint number it starts from (0: the start of the store)."""
    end: int | None
    """Checkpoint number it ends at (``None``: the head)."""
    start_position: int
    end_position: int | None
    report: VerifyReport
    keys: list[Key] = field(default_factory=list)
    store: str | None = None
    """The store's identity: the digest of its first chain link (``None``: no link)."""
    start_digest: str | None = None
    """The snapshot digest the start checkpoint signs (``None``: the start of the store)."""
    end_digest: str | None = None
    """The snapshot digest the end checkpoint signs (``None``: the head)."""
    seen: dict[str, Any] | None = None
    """The head the part saw: ``{"row": newest row id, "head": newest link's digest}``."""

    def segment_json(self) -> dict[str, Any]:
        """``segment`` in ``verify --segment --json``."""
        return {
            "from": self.start,
            "to": HEAD if self.end is None else self.end,
            "from_position": self.start_position,
            "to_position": self.end_position,
            "events": self.report.events,
            "integrity": "ok" if self.report.integrity_ok else "broken",
            "store": self.store,
            "from_snapshot": self.start_digest,
            "to_snapshot": self.end_digest,
            "seen": self.seen,
        }


def store_identity(app: LedgerApp) -> tuple[str | None, dict[str, Any]]:
    """The store's identity (its first chain link's digest) and the head it has now."""
    first = app.stored(CHAIN_ID, gt=0, lte=1)
    newest = app.stored(CHAIN_ID, desc=True, limit=1)
    row = app.recorder.max_notification_id() or 0
    return (first[0].digest if first else None, {"row": row, "head": newest[0].digest if newest else None})


def parse_segment(text: str) -> tuple[int, int | None]:
    """``A..B`` (B a number or ``head``) → ``(A, B)``, ``None`` for the head."""
    first, sep, last = text.partition("..")
    try:
        if not sep:
            raise ValueError
        start = int(first)
        end = None if last == HEAD else int(last)
    except ValueError:
        raise UsageError(
            f"--segment takes A..B with checkpoint numbers (0 = the start of the "
            f"store, B may be {HEAD}), not {text!r}"
        ) from None
    if start < 0 or (end is not None and end <= start):
        raise UsageError(f"--segment {text}: A must be >= 0 and B greater than A")
    return start, end


def finding_keys(report: VerifyReport) -> list[Key]:
    """Each of ``report.findings``' single-pass place (integrity findings first)."""
    places: dict[int, Key] = {}
    for key, found in getattr(report, "keyed", []):
        for f in found:
            places[id(f)] = (key[0], key[1], key[2])
    return [places.get(id(f), INTEGRITY_KEY) for f in report.findings]


def _broken(report: VerifyReport, message: str, expected: dict[str, Any] | None = None) -> None:
    report.integrity_ok = False
    report.findings.insert(
        0,
        Finding("chain_broken", None, None, rule="integrity (--segment)", message=message, expected=expected),
    )


def _bound(
    store: CheckpointStore, key: SealingKey, number: int, app: LedgerApp
) -> tuple[StoredCheckpoint, list[Finding]]:
    stored = store.checked(number, key)
    if isinstance(stored, InvalidCheckpoint):
        raise SealError(f"stored checkpoint {number} is not valid: {stored.reason}")
    if stored is None:
        last = store.newest(key)
        raise UsageError(
            f"no stored checkpoint {number} (the newest is "
            f"{last.number if last else 'none: run ledger seal'})"
        )
    return stored, checkpoint_findings(app, stored.checkpoint, count_events=False)


def segment_key(app: LedgerApp, public_key: Ed25519PublicKey | None) -> SealingKey:
    """The key a segment's checkpoints are checked with; :class:`UsageError` if none."""
    if public_key is not None:
        return SealingKey(public_key, "--public-key")
    try:
        configured = sealing_key(app)
    except SealError as exc:  # an unreadable LEDGER_SEAL_PUBLIC_KEY: a usage error
        raise UsageError(str(exc)) from None
    if configured is None:
        raise UsageError(f"{NO_SEALING_KEY}: give --public-key FILE")
    return configured


def verify_segment(
    app: LedgerApp,
    start: int,
    end: int | None,
    *,
    public_key: Ed25519PublicKey | None = None,
    expect_head: str | None = None,
) -> Part:
    """Verify segment ``start..end`` of the store (see the module docstring).

    :class:`UsageError` if a checkpoint number is not stored, or if a checkpoint bounds the
    segment and no sealing public key is given or configured; :class:`SealError` (integrity
    broken) if the checkpoint's row is not valid under that key (``seal --list`` says why).
    A snapshot that does not match its checkpoint, a checkpoint the store contradicts, or a
    derived state that differs from the end's snapshot is a ``chain_broken`` finding.
    """
    problems: list[Finding] = []
    snapshot: Snapshot | None = None
    first: StoredCheckpoint | None = None
    last: StoredCheckpoint | None = None
    identity, seen = store_identity(app)
    with CheckpointStore(app, create=False) as store:
        if (start or end is not None) and not store.exists:
            raise UsageError("the store holds no checkpoint: run ledger seal first")
        key = segment_key(app, public_key) if start or end is not None else None
        if start:
            assert key is not None
            first, found = _bound(store, key, start, app)
            problems += found
            try:
                snapshot = store.snapshot(first)
            except SnapshotError as exc:
                return _refused(start, end, first, str(exc), identity, seen)
        if end is not None:
            assert key is not None
            last, found = _bound(store, key, end, app)
            problems += found

    def part(report: VerifyReport) -> Part:
        return Part(
            start,
            end,
            first.position if first else 0,
            last.position if last else None,
            report,
            finding_keys(report),
            identity,
            first.checkpoint.snapshot if first else None,
            last.checkpoint.snapshot if last else None,
            seen,
        )

    if problems:
        return part(VerifyReport(integrity_ok=False, findings=problems))
    report = verify_store(
        app,
        start=snapshot,
        stop=None if last is None else last.position,
        expect_head=expect_head if last is None else None,
    )
    if last is not None:
        derived = report.snapshot
        if (derived is None or derived.digest != last.checkpoint.snapshot) and not _same_but_counters(
            app, derived, snapshot, last
        ):
            _broken(
                report,
                f"the state derived at checkpoint {end} (row {last.position}) "
                f"differs from its signed snapshot: a row of segment {start}..{end} or a "
                "snapshot was changed",
                {
                    "snapshot": last.checkpoint.snapshot,
                    "derived": None if derived is None else derived.digest,
                },
            )
    return part(report)


def _same_but_counters(
    app: LedgerApp, derived: Snapshot | None, start: Snapshot | None, end: StoredCheckpoint
) -> bool:
    """Whether ``derived`` is ``end``'s signed snapshot but for the rounds counters, where
    either end of the segment was sealed before the counters existed: a segment that starts
    from such a snapshot cannot count from the start of the log, and one that ends at such a
    snapshot derives counters it never signed. Everything else is still compared."""
    if derived is None:
        return False
    try:
        with CheckpointStore(app, create=False) as store:
            signed = store.snapshot(end)
    except SnapshotError:
        return False
    if not (lacks_counters(signed) or (start is not None and lacks_counters(start))):
        return False
    return derived.position == signed.position and without_counters(derived.state) == without_counters(
        signed.state
    )


def _refused(
    start: int, end: int | None, first: StoredCheckpoint, why: str, identity: str | None, seen: dict[str, Any]
) -> Part:
    report = VerifyReport(integrity_ok=False)
    _broken(report, why)
    return Part(
        start,
        end,
        first.position,
        None,
        report,
        finding_keys(report),
        identity,
        first.checkpoint.snapshot,
        None,
        seen,
    )


def merge(parts: list[Part], *, one_head: bool = True) -> VerifyReport:
    """One report from segments that cover the store from 0 to the head, in single-pass order
    (parts in any order; they are put in log order).

    :class:`UsageError` if the parts leave a gap, overlap, or do not reach from the start of
    the store to its head, or do not chain (:func:`check_chained`; ``one_head=False``: the
    parts may have seen different heads, as the processes of one ``--jobs`` run on a store
    still being written do).
    """
    if not parts:
        raise UsageError("nothing to merge")
    ordered = sorted(parts, key=lambda p: p.start_position)
    expected_from = 0
    for part in ordered:
        if part.start_position != expected_from:
            raise UsageError(
                f"the segments do not cover the store: segment {part.start}.."
                f"{HEAD if part.end is None else part.end} starts at row "
                f"{part.start_position}, the one before ends at row "
                f"{expected_from}"
            )
        if part.end_position is None and part is not ordered[-1]:
            raise UsageError("two segments reach the head")
        expected_from = part.end_position if part.end_position is not None else -1
    if ordered[-1].end is not None:
        raise UsageError(f"the segments do not reach the head: the last ends at checkpoint {ordered[-1].end}")
    check_chained(ordered, one_head=one_head)
    chain: list[Finding] = []
    keyed: list[Finding] = []
    for part in ordered:
        for key, found in zip(part.keys, part.report.findings, strict=True):
            (chain if key == INTEGRITY_KEY else keyed).append(found)
    report = VerifyReport()
    report.findings = chain + keyed
    report.rounds_checked = sum(p.report.rounds_checked for p in ordered)
    report.rounds_with_findings = sum(p.report.rounds_with_findings for p in ordered)
    report.events = sum(p.report.events for p in ordered)
    report.integrity_ok = all(p.report.integrity_ok for p in ordered)
    report.head = ordered[-1].report.head
    report.seconds = sum(p.report.seconds for p in ordered)
    return report


def _name(part: Part) -> str:
    return f"segment {part.start}..{HEAD if part.end is None else part.end}"


def check_chained(ordered: list[Part], *, one_head: bool = True) -> None:
    """:class:`UsageError` unless the parts (in log order) were run on one store that had one
    head, each starting at the checkpoint (snapshot digest) the one before ends at."""
    first = ordered[0]
    for part in ordered:
        if part.store is None or part.seen is None:
            raise UsageError(
                f"{_name(part)} names no store or head (a report of an older "
                "ledger, or of an empty store): run the segment again"
            )
        if part.store != first.store:
            raise UsageError(
                f"{_name(part)} was run on another store (first chain link "
                f"{part.store}, {_name(first)}'s is {first.store})"
            )
        if one_head and part.seen != first.seen:
            raise UsageError(
                f"{_name(part)} saw another head ({part.seen}, {_name(first)} saw "
                f"{first.seen}): the reports were made at other times or on "
                "other copies; run every segment against one head"
            )
    if first.start_digest is not None:
        raise UsageError(f"{_name(first)} does not start at the start of the store")
    for before, after in itertools.pairwise(ordered):
        if before.end_digest is None or before.end_digest != after.start_digest:
            raise UsageError(
                f"{_name(after)} starts at the snapshot {after.start_digest}, "
                f"{_name(before)} ends at {before.end_digest}: they do not chain"
            )


# --- JSON parts (verify --segment --json, verify --merge) ------------------------------------

_FINDING_FIELDS = (
    "code",
    "table",
    "round",
    "bet",
    "rule",
    "expected",
    "recorded",
    "message",
    "severity",
    "seq",
)


def finding_from_json(obj: dict[str, Any]) -> Finding:
    """A finding from its ``to_json`` object."""
    extra = {
        k: v
        for k, v in obj.items()
        if k not in _FINDING_FIELDS and not (k in ("party", "seat") and v is None)
    }
    return Finding(
        obj["code"],
        obj["table"],
        obj["round"],
        obj["message"],
        rule=obj["rule"],
        bet=obj["bet"],
        expected=obj["expected"],
        recorded=obj["recorded"],
        severity=obj["severity"],
        seq=obj["seq"],
        extra=extra,
    )


def part_from_json(obj: Any, name: str) -> Part:
    """A part from a ``verify --segment --json`` report; :class:`UsageError` if it is not one."""
    try:
        segment, keys = obj["segment"], obj["keys"]
        report = VerifyReport(
            rounds_checked=int(obj["rounds_checked"]),
            rounds_with_findings=int(obj["rounds_with_findings"]),
            events=int(obj["events"]),
            findings=[finding_from_json(f) for f in obj["findings"]],
            integrity_ok=obj["integrity"] == "ok",
            head=obj["head"],
        )
        to = segment["to"]
        seen = segment.get("seen")
        part = Part(
            int(segment["from"]),
            None if to == HEAD else int(to),
            int(segment["from_position"]),
            None if segment["to_position"] is None else int(segment["to_position"]),
            report,
            [(int(a), int(b), int(c)) for a, b, c in keys],
            _text(segment.get("store")),
            _text(segment.get("from_snapshot")),
            _text(segment.get("to_snapshot")),
            {"row": int(seen["row"]), "head": _text(seen["head"])} if isinstance(seen, dict) else None,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(
            f"{name} is not a ledger verify --segment --json report ({type(exc).__name__}: {exc})"
        ) from None
    if len(part.keys) != len(report.findings):
        raise UsageError(f"{name}: keys and findings differ in number")
    return part


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"{value!r} is not text")


# --- --jobs N over segments ------------------------------------------------------------------


UNEVEN = 1.5
"""``--jobs N`` splits by segments only if no process gets more than this many times its even
share of the rows (else the checkpoints are too unevenly placed, and tables balance better)."""


def plan(app: LedgerApp, jobs: int, key: SealingKey | None = None) -> list[tuple[int, int | None]] | None:
    """``jobs`` consecutive segments of about the same number of rows, cut at stored
    checkpoints valid under ``key`` (default: the configured sealing key); ``None`` if there
    is no such checkpoint (or no key), or if the checkpoints cannot cut it evenly enough
    (:data:`UNEVEN`)."""
    try:
        key = key or sealing_key(app)
        if key is None:
            return None
        with CheckpointStore(app, create=False) as store:
            stored = store.read(key).valid
    except (SealError, SnapshotError):
        return None
    if not stored:
        return None
    total = app.recorder.max_notification_id() or 0
    cuts: list[tuple[int, int | None]] = []
    start, start_pos = 0, 0
    for index in range(1, jobs):
        target = total * index / jobs
        best = None
        for s in stored:
            if s.position <= start_pos:
                continue
            if best is None or abs(s.position - target) < abs(best.position - target):
                best = s
        if best is None:
            break
        cuts.append((start, best.number))
        start, start_pos = best.number, best.position
    cuts.append((start, None))
    bounds = [0] + [next(s.position for s in stored if s.number == b) for _, b in cuts[:-1]]
    sizes = [b - a for a, b in zip(bounds, [*bounds[1:], total], strict=True)]
    if len(cuts) < 2 or max(sizes) > UNEVEN * total / jobs:
        return None  # checkpoints too unevenly placed: tables balance better
    return cuts


def verify_parallel_segments(
    url: str, selection: Selection = Selection(), *, jobs: int = 2, expect_head: str | None = None
) -> VerifyReport:
    """``verify --jobs N``: by segments where checkpoints exist (each row read once), else by
    tables (``ledger.verify.partition``). The findings are those of one pass."""
    from_tables = selection != Selection()
    segments = None
    key: bytes | None = None
    if not from_tables:
        app = open_ledger(url)
        try:
            configured = sealing_key(app)
            segments = plan(app, jobs, configured)
            key = None if configured is None else raw_public(configured.key)
        finally:
            app.close()
    if segments is None or len(segments) < 2:
        return verify_parallel(url, selection, jobs=jobs, expect_head=expect_head)
    started = time.perf_counter()
    context = multiprocessing.get_context(
        "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    )
    with ProcessPoolExecutor(max_workers=len(segments) - 1, mp_context=context) as pool:
        futures = [pool.submit(_work, url, a, b, expect_head, key) for a, b in segments[1:]]
        parts = [_work(url, *segments[0], expect_head, key)]
        parts += [f.result() for f in futures]
    report = merge(parts, one_head=False)  # one store, one run: the head may move meanwhile
    report.seconds = time.perf_counter() - started
    return report


def _work(url: str, start: int, end: int | None, expect_head: str | None, key: bytes | None) -> Part:
    app = open_ledger(url, extra_env={"CREATE_TABLE": "n"})
    try:
        return verify_segment(
            app,
            start,
            end,
            expect_head=expect_head,
            public_key=None if key is None else Ed25519PublicKey.from_public_bytes(key),
        )
    finally:
        app.close()
