"""Signed checkpoints of the integrity chain: tamper evidence that survives the writer.

The chain (``ledger.codec.chain``) lets ``ledger verify`` prove a store is *self-consistent*; it cannot
prove the store is the one that was written, because whoever controls the writer can delete the
newest saves or recompute a whole new, consistent chain. A **checkpoint** closes that gap: it is
a small JSON file, signed with an Ed25519 key the writer does not need to hold, that commits to

- ``head``: the digest of one chain link, which by the chain's construction commits to every
  event stored up to that link;
- ``links``: that link's version (how many saves the store had), and
- ``events``: how many stored events (feed, table and link events) that link covers;
- (format v2, what ``ledger seal`` writes) ``position``: the notification id of that link's row,
  and ``snapshot``: the digest of the verifier's state right after it
  (:class:`~ledger.verify.snapshot.Snapshot`), so ``verify --since`` and ``verify --segment``
  can continue from there without reading what came before (``ledger.proof.checkpoints`` stores them);
- (v2, since ``id_sum``) ``id_sum``: the sum of the notification ids of every row at or before
  ``position``, so a resumed pass sees a row deleted there and a copy planted at another id
  (``ledger.proof.checkpoints.planted_rows``).

``verify --checkpoint`` then needs the store to hold a link with exactly that version and digest,
covering exactly that many events, on a chain that verifies end to end. A truncated store has no
such link; a rewritten chain (every digest recomputed) has another digest at that version; any
changed byte breaks the chain below it. Only someone with the private key can make a checkpoint
that matches a forged store, and the public key alone checks one. ``docs/SECURITY.md`` states the
threat model.

Keys are PEM files (``ledger keygen``, or ``openssl genpkey -algorithm ed25519``). The sealing key
comes from ``--key FILE``, or ``LEDGER_SEAL_KEY`` (PEM text, or the raw 32 bytes in base64).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, TypeVar

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ledger.codec.chain import CHAIN_ID, CHAIN_TOPIC, Linked
from ledger.domain.errors import SealError as SealError  # raised here; defined in the error tree
from ledger.domain.findings import Finding
from ledger.storage.store import LedgerApp, Recorded
from ledger.verify.integrity import ChainVerifier
from ledger.verify.snapshot import Snapshot, SnapshotError

CHECKPOINT_FORMAT = "ledger-checkpoint-v2"
"""What ``ledger seal`` writes: v1's fields plus ``position`` and ``snapshot``."""
CHECKPOINT_FORMAT_V1 = "ledger-checkpoint-v1"
"""Checkpoints sealed before snapshots: still read, and still checked by ``verify --checkpoint``."""
SEAL_KEY_ENV = "LEDGER_SEAL_KEY"
"""Environment variable holding the sealing (private) key: PEM text or base64 of 32 raw bytes."""

_CHAIN_PAGE = 500


# -- keys ------------------------------------------------------------------------------------


def generate_key() -> Ed25519PrivateKey:
    """A new Ed25519 sealing key."""
    return Ed25519PrivateKey.generate()


def private_pem(key: Ed25519PrivateKey) -> bytes:
    """The private key as unencrypted PKCS#8 PEM (what ``openssl genpkey`` writes)."""
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def public_pem(key: Ed25519PublicKey) -> bytes:
    """The public key as SubjectPublicKeyInfo PEM (what ``openssl pkey -pubout`` writes)."""
    return key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def raw_public(key: Ed25519PublicKey) -> bytes:
    """The 32 raw bytes of a public key."""
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id(key: Ed25519PublicKey) -> str:
    """A short, stable name of a public key: ``sha256:`` and 16 hex digits of its raw bytes."""
    return "sha256:" + hashlib.sha256(raw_public(key)).hexdigest()[:16]


_Key = TypeVar("_Key", Ed25519PrivateKey, Ed25519PublicKey)


@dataclass(frozen=True)
class KeyKind(Generic[_Key]):
    """One kind of Ed25519 key: its class, its name in messages and how it is read from PEM
    and from its 32 raw bytes (what :func:`parse_key` takes)."""

    cls: type[_Key]
    name: str
    from_pem: Callable[[bytes], object]
    from_raw: Callable[[bytes], _Key]


PRIVATE_KEY = KeyKind(
    Ed25519PrivateKey,  # type: ignore[type-abstract]  # only for isinstance, never built
    "private",
    lambda pem: serialization.load_pem_private_key(pem, password=None),
    Ed25519PrivateKey.from_private_bytes,
)
PUBLIC_KEY = KeyKind(
    Ed25519PublicKey,  # type: ignore[type-abstract]  # only for isinstance, never built
    "public",
    serialization.load_pem_public_key,
    Ed25519PublicKey.from_public_bytes,
)


def parse_key(data: bytes, kind: KeyKind[_Key]) -> _Key:
    """A key of ``kind`` (:data:`PRIVATE_KEY`, :data:`PUBLIC_KEY`) from PEM, or from base64 of
    its 32 raw bytes; :class:`SealError` if it is not one."""
    text = data.strip()
    try:
        if text.startswith(b"-----BEGIN"):
            key = kind.from_pem(text)
        else:
            key = kind.from_raw(base64.b64decode(text, validate=True))
    except (ValueError, TypeError) as exc:
        raise SealError(f"not an Ed25519 {kind.name} key: {exc}") from None
    if not isinstance(key, kind.cls):
        raise SealError(f"the key is {type(key).__name__}, not Ed25519")
    return key


def parse_private_key(data: bytes) -> Ed25519PrivateKey:
    """A private key from PEM, or from base64 of its 32 raw bytes (:func:`parse_key`)."""
    return parse_key(data, PRIVATE_KEY)


def parse_public_key(data: bytes) -> Ed25519PublicKey:
    """A public key from PEM, or from base64 of its 32 raw bytes (:func:`parse_key`)."""
    return parse_key(data, PUBLIC_KEY)


def load_private_key(path: str | None) -> Ed25519PrivateKey:
    """The sealing key from ``path``, else from ``LEDGER_SEAL_KEY``."""
    if path is not None:
        return parse_private_key(_read(path, "key"))
    value = os.environ.get(SEAL_KEY_ENV)
    if not value:
        raise SealError(f"no sealing key: pass --key FILE or set {SEAL_KEY_ENV}")
    return parse_private_key(value.encode())


def load_public_key(path: str) -> Ed25519PublicKey:
    """A public key file (PEM or base64 raw)."""
    return parse_public_key(_read(path, "public key"))


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise SealError(f"cannot read the {what} {path}: {exc.strerror or exc}") from None


# -- checkpoints -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ChainPosition:
    """A point of the store-wide chain: a link's version, digest and the events it covers."""

    links: int
    events: int
    head: str


@dataclass(frozen=True)
class Checkpoint:
    """A signed :class:`ChainPosition`; from format v2 on, also the link row's notification id
    (``row``) and the digest of the verifier's snapshot there (``snapshot``)."""

    position: ChainPosition
    sealed_at: str
    store: str
    public_key: str
    key_id: str
    signature: str
    row: int | None = None
    """Notification id of the chain link row (``position`` in the file); ``None`` in v1."""
    snapshot: str | None = None
    """SHA-256 hex of the snapshot taken right after that row; ``None`` in v1."""
    id_sum: int | None = None
    """Sum of the notification ids of the rows at or before ``row``; ``None`` in v1 and in v2
    checkpoints sealed before it was signed."""

    @property
    def format(self) -> str:
        """``ledger-checkpoint-v2``, or ``-v1`` for a checkpoint without a snapshot."""
        return CHECKPOINT_FORMAT_V1 if self.snapshot is None else CHECKPOINT_FORMAT

    def payload(self) -> dict[str, Any]:
        """Everything the signature covers."""
        return _payload(
            self.position,
            self.sealed_at,
            self.store,
            self.public_key,
            self.key_id,
            self.row,
            self.snapshot,
            self.id_sum,
        )

    def to_json(self) -> dict[str, Any]:
        """The checkpoint file's object."""
        return {**self.payload(), "signature": self.signature}

    def dumps(self) -> str:
        """The checkpoint file's text."""
        return json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n"

    def check_signature(self, public_key: Ed25519PublicKey | None = None) -> Ed25519PublicKey:
        """Raise :class:`SealError` unless the signature is valid under ``public_key``.

        Without a key, the key embedded in the checkpoint is used: that proves the file is intact,
        not who made it (see ``docs/SECURITY.md``). Returns the key that was used.
        """
        key = public_key or parse_public_key(self.public_key.encode())
        try:
            key.verify(base64.b64decode(self.signature), _canonical(self.payload()))
        except (InvalidSignature, ValueError):
            raise SealError(
                f"the checkpoint's signature is not valid under key {key_id(key)}: "
                "the file was changed or sealed with another key"
            ) from None
        return key


def _payload(
    position: ChainPosition,
    sealed_at: str,
    store: str,
    public_key: str,
    kid: str,
    row: int | None = None,
    snapshot: str | None = None,
    id_sum: int | None = None,
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "format": CHECKPOINT_FORMAT_V1,
        "links": position.links,
        "events": position.events,
        "head": position.head,
        "sealed_at": sealed_at,
        "store": store,
        "public_key": public_key,
        "key_id": kid,
    }
    if snapshot is not None:
        payload.update(format=CHECKPOINT_FORMAT, position=row, snapshot=snapshot)
        if id_sum is not None:
            payload["id_sum"] = id_sum
    return payload


def _canonical(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def sign(
    position: ChainPosition,
    key: Ed25519PrivateKey,
    *,
    store: str = "",
    sealed_at: datetime | None = None,
    snapshot: Snapshot | None = None,
    id_sum: int | None = None,
) -> Checkpoint:
    """Sign a chain position: a v2 checkpoint with ``snapshot`` (taken at that position), else v1;
    ``id_sum`` (v2 only): the sum of the ids of the rows at or before the snapshot's row."""
    row = digest = None
    if snapshot is not None:
        if (snapshot.links, snapshot.events, snapshot.head) != (
            position.links,
            position.events,
            position.head,
        ):
            raise SnapshotError(
                f"the snapshot stands at link {snapshot.links}, the position to seal is link {position.links}"
            )
        row, digest = snapshot.position, snapshot.digest
    at = (sealed_at or datetime.now(UTC)).isoformat()
    public = key.public_key()
    pub = base64.b64encode(raw_public(public)).decode()
    kid = key_id(public)
    if snapshot is None:
        id_sum = None
    signature = key.sign(_canonical(_payload(position, at, store, pub, kid, row, digest, id_sum)))
    return Checkpoint(
        position, at, store, pub, kid, base64.b64encode(signature).decode(), row, digest, id_sum
    )


def parse_checkpoint(text: str | bytes) -> Checkpoint:
    """Read a checkpoint file's text; :class:`SealError` if it is not one."""
    try:
        obj = json.loads(text)
        if not isinstance(obj, dict) or obj.get("format") not in (CHECKPOINT_FORMAT, CHECKPOINT_FORMAT_V1):
            raise ValueError(f"not a {CHECKPOINT_FORMAT} (or v1) file")
        links, events, head = obj["links"], obj["events"], obj["head"]
        if (
            type(links) is not int
            or type(events) is not int
            or links < 1
            or events < 1
            or not isinstance(head, str)
            or len(head) != 64
        ):
            raise ValueError("links, events or head out of range")
        sealed_at, store, public_key, kid, signature = fields = [
            obj[k] for k in ("sealed_at", "store", "public_key", "key_id", "signature")
        ]
        if not all(isinstance(v, str) for v in fields):
            raise ValueError("a field is not text")
        row = digest = id_sum = None
        if obj["format"] == CHECKPOINT_FORMAT:
            row, digest, id_sum = obj["position"], obj["snapshot"], obj.get("id_sum")
            if type(row) is not int or row < 1 or not isinstance(digest, str) or len(digest) != 64:
                raise ValueError("position or snapshot out of range")
            if id_sum is not None and type(id_sum) is not int:
                raise ValueError("id_sum is not an integer")
    except (ValueError, KeyError) as exc:
        raise SealError(f"not a checkpoint: {exc}") from None
    except RecursionError:
        raise SealError("not a checkpoint: its JSON is nested too deeply") from None
    return Checkpoint(
        ChainPosition(links, events, head),
        sealed_at,
        store,
        public_key,
        kid,
        signature,
        row=row,
        snapshot=digest,
        id_sum=id_sum,
    )


def read_checkpoint(path: str) -> Checkpoint:
    """Read a checkpoint file."""
    return parse_checkpoint(_read(path, "checkpoint"))


# -- the store side --------------------------------------------------------------------------


@dataclass
class ChainScan:
    """One integrity pass over the whole store: every digest rechecked, the newest link found."""

    verifier: ChainVerifier
    position: ChainPosition | None = None
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the chain verified."""
        return not self.verifier.broken


def scan_chain(app: LedgerApp) -> ChainScan:
    """Recheck the chain of the whole store (no game rules) and find its newest link.

    The pass keeps what verify's does (``ledger.verify.integrity``): a digest per aggregate
    that can still grow and the newest link, not every head read (one per save: that would
    grow with the store)."""
    verifier = ChainVerifier(app.ledger_mapper, heads=False)
    scan = ChainScan(verifier)
    for page in app.rows():  # every row, whatever its id
        verifier.check_rows(page)
        # The page's newest link, as it stood when it was read: no later row of the page moves
        # the head (only a link does), and every row read counts one event.
        for index in range(len(page) - 1, -1, -1):
            if page[index][3] == CHAIN_TOPIC:
                if verifier.head is not None:
                    behind = len(page) - 1 - index
                    scan.position = ChainPosition(page[index][2], verifier.events - behind, verifier.head)
                break
    verifier.finish()
    scan.findings = verifier.findings
    return scan


def seal_store(app: LedgerApp, key: Ed25519PrivateKey, *, store: str = "") -> Checkpoint:
    """Verify the chain, then sign its newest link (a v1 checkpoint, no snapshot).
    :class:`SealError` if it does not verify. ``ledger seal`` uses ``ledger.proof.checkpoints.seal``,
    which also signs and stores the verifier's snapshot."""
    scan = scan_chain(app)
    if not scan.ok:
        first = scan.findings[0].message if scan.findings else "integrity broken"
        raise SealError(f"the store does not verify; refusing to seal it: {first}")
    if scan.position is None:
        raise SealError("the store is empty: nothing to seal")
    return sign(scan.position, key, store=store)


def chain_links(app: LedgerApp, *, first: int = 1, last: int | None = None) -> Iterator[Recorded]:
    """The chain's links ``first..last`` (default: to the newest), oldest first, in pages."""
    after = first - 1
    while last is None or after < last:
        page = app.stored(
            CHAIN_ID,
            gt=after,
            lte=None if last is None else min(last, after + _CHAIN_PAGE),
            limit=_CHAIN_PAGE,
        )
        if not page:
            return
        yield from page
        after = page[-1].originator_version


def _link_row(app: LedgerApp, row: int) -> tuple[int, int] | None:
    """(row, version) of the first chain link row at or after notification id ``row``."""
    for page in app.rows(page=1, after=row - 1, topics=[CHAIN_TOPIC]):
        for nid, _, version, _, _ in page:
            return nid, version
    return None


def covered_events(link: Linked) -> int:
    """How many events one link covers: those it lists, and itself."""
    return sum(e.last - e.first + 1 for e in link.entries) + 1


def checkpoint_findings(
    app: LedgerApp, checkpoint: Checkpoint, *, count_events: bool = True
) -> list[Finding]:
    """What the store contradicts in a checkpoint; empty if it holds everything it covered.

    Complements a full chain verify (``verify_store(expect_head=checkpoint.head)``), which proves
    every event up to the head is unchanged: here the head must sit at the checkpointed version
    and cover the checkpointed number of events. A v2 checkpoint's link must also sit at its
    row (``position``). ``count_events=False`` skips the walk over every earlier link that counts
    the events (time and memory in proportion to the links): what ``verify --since``, ``--segment``
    and the incremental seal use, since they do not re-read the chain before the checkpoint
    anyway (docs/INTEGRITY.md) and the snapshot the checkpoint signs carries the count.
    """
    pos = checkpoint.position
    problems: list[str] = []
    try:
        found = app.stored(CHAIN_ID, gt=pos.links - 1, lte=pos.links)
        if not found:
            problems.append(
                f"the store has no chain link {pos.links}: the newest saves covered "
                "by the checkpoint were removed"
            )
        elif found[0].digest != pos.head:
            problems.append(
                f"chain link {pos.links} has digest {found[0].digest}, the checkpoint "
                f"says {pos.head}: history up to the checkpoint was rewritten"
            )
        elif checkpoint.row is not None and (where := _link_row(app, checkpoint.row)) != (
            checkpoint.row,
            pos.links,
        ):
            problems.append(
                f"chain link {pos.links} is not at row {checkpoint.row} (the first "
                f"link from there: {where}): rows were moved or removed"
            )
        elif not count_events:
            pass
        else:
            events = 0
            for rec in chain_links(app, last=pos.links):
                assert isinstance(rec.fact, Linked)
                events += covered_events(rec.fact)
            if events != pos.events:
                problems.append(
                    f"links 1-{pos.links} cover {events} events, the checkpoint says {pos.events}"
                )
    except Exception as exc:  # a damaged row: the chain verify reports the detail
        problems.append(f"the chain links up to the checkpoint cannot be read: {exc}")
    return [
        Finding(
            "chain_broken",
            None,
            None,
            rule="integrity (--checkpoint)",
            message=m,
            expected={"links": pos.links, "events": pos.events, "head": pos.head},
        )
        for m in problems
    ]
