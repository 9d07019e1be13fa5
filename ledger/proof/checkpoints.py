"""Stored checkpoints and their snapshots: where ``verify --since``, ``--segment``, ``--jobs``,
``replay``, ``recall``, ``report`` and ``seal`` resume.

``ledger seal`` signs a v2 checkpoint (``ledger.proof.seal``): the chain head at a link row, the
digest of the verifier's :class:`~ledger.verify.snapshot.Snapshot` right after that row, and the
sum of the ids of the rows up to it. Both are kept, append-only, in one table beside the store's
events:

``ledger_checkpoints (number, position, links, events, head, digest, sealed_at, checkpoint,
snapshot)`` — ``number`` counts checkpoints from 1, ``position`` is the link row's notification
id, ``checkpoint`` the signed JSON text, ``snapshot`` the snapshot's canonical bytes compressed
with zlib and, with ``LEDGER_CIPHER_KEY``, encrypted under it. UPDATE and DELETE are refused by
triggers (PostgreSQL and SQLite, as for the events).

**Nothing read from the table is trusted before it is checked.** :meth:`CheckpointStore.read`
checks every row — a number >= 1, a v2 checkpoint, columns that say what its JSON says, a
signature valid under the store's sealing public key (:func:`sealing_key`:
``LEDGER_SEAL_PUBLIC_KEY``, else the key named at ``ledger init --seal-public-key`` and kept in
``ledger_seal_key``), a row after every valid one numbered before it — and returns the valid
ones apart from the others (:class:`Checkpoints`). Every reader uses only valid rows, and a
snapshot only once it matches the digest its checkpoint signs; ``seal --list`` names the invalid
rows. With no sealing public key configured, no stored checkpoint is used (:func:`nearest` and
:func:`latest` return ``None``), so a forged row can never change what a command says.

``seal --out cp.json`` also writes the snapshot beside the file (``cp.snapshot.json``,
:func:`snapshot_path`; encrypted like the stored one when a cipher key is set).

:func:`seal` is the incremental seal: it continues from the newest checkpoint valid under the
sealing key (its snapshot checked with its digest, its head at its position, the count and id
sum of the rows it covers) instead of re-reading the whole chain; the first seal is a full pass.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ledger.domain.findings import Finding
from ledger.games import GAMES
from ledger.proof.seal import (
    ChainPosition,
    Checkpoint,
    SealError,
    checkpoint_findings,
    key_id,
    load_public_key,
    parse_checkpoint,
    parse_public_key,
    public_pem,
    raw_public,
    sign,
)
from ledger.proof.seal_index import STATE_EVERY, IndexCollector, SealIndex, index_sql, write_index
from ledger.proof.seal_index import Sealed as Indexed
from ledger.storage.sql import (
    Connection,
    Dialect,
    append_only_triggers_sql,
    connect,
    read_rows,
    refuse_function_sql,
)
from ledger.storage.store import CIPHER_KEY_ENV, LedgerApp
from ledger.verify.engine import verify_store
from ledger.verify.snapshot import Snapshot, SnapshotError

CHECKPOINTS_TABLE = "ledger_checkpoints"
REFUSE_FUNCTION = "ledger_refuse_change"
"""The PostgreSQL trigger function of ``ledger init`` (``ledger.services.db_admin``), shared here."""
APPEND_ONLY_MESSAGE = "ledger checkpoints are append-only"
_COLUMNS = "number, position, links, events, head, digest, sealed_at, checkpoint"
SEAL_KEY_TABLE = "ledger_seal_key"
"""The one-row table holding the sealing public key named at ``ledger init --seal-public-key``."""
SEAL_PUBLIC_KEY_ENV = "LEDGER_SEAL_PUBLIC_KEY"
"""Path of the sealing public key every reader of a stored checkpoint checks it with (wins over
the key named at ``ledger init``)."""


class SealRefused(SealError):
    """The store or its newest stored checkpoint does not verify: nothing is sealed (exit 3)."""


def checkpoints_sql(dialect: Dialect) -> list[str]:
    """The statements that create the checkpoints table and make it append-only."""
    table = dialect.qualified(CHECKPOINTS_TABLE)
    blob = "BLOB" if dialect.is_sqlite else "BYTEA"
    create = (
        f"CREATE TABLE IF NOT EXISTS {table} (number BIGINT PRIMARY KEY, "
        "position BIGINT NOT NULL, links BIGINT NOT NULL, events BIGINT NOT NULL, "
        "head TEXT NOT NULL, digest TEXT NOT NULL, sealed_at TEXT NOT NULL, "
        f"checkpoint TEXT NOT NULL, snapshot {blob} NOT NULL)"
    )
    return [
        create,
        *([] if dialect.is_sqlite else [refuse_function_sql(dialect, REFUSE_FUNCTION)]),
        *append_only_triggers_sql(
            dialect, CHECKPOINTS_TABLE, refused=APPEND_ONLY_MESSAGE, refuse_function=REFUSE_FUNCTION
        ),
        # The seal index (ledger.proof.seal_index) is created with the checkpoints, so that
        # `ledger init` makes it and `init --roles` can grant the sealer its INSERT.
        *index_sql(dialect, REFUSE_FUNCTION),
    ]


@dataclass(frozen=True)
class StoredCheckpoint:
    """One valid row of the checkpoints table: its number and its (parsed, signed) checkpoint."""

    number: int
    checkpoint: Checkpoint

    @property
    def position(self) -> int:
        """The link row's notification id, from the signed checkpoint."""
        assert self.checkpoint.row is not None  # stored checkpoints are v2
        return self.checkpoint.row

    def to_json(self) -> dict[str, object]:
        """One entry of ``ledger seal --list --json``."""
        pos = self.checkpoint.position
        return {
            "number": self.number,
            "position": self.position,
            "links": pos.links,
            "events": pos.events,
            "head": pos.head,
            "snapshot": self.checkpoint.snapshot,
            "sealed_at": self.checkpoint.sealed_at,
            "key_id": self.checkpoint.key_id,
        }


@dataclass(frozen=True)
class InvalidCheckpoint:
    """A row of the checkpoints table that no command uses: why, and its number as stored."""

    number: object
    reason: str

    def to_json(self) -> dict[str, object]:
        """One entry of ``invalid`` in ``ledger seal --list --json``."""
        number = self.number if isinstance(self.number, int) else str(self.number)
        return {"number": number, "reason": self.reason}


@dataclass(frozen=True)
class SealingKey:
    """The public key stored checkpoints are checked with, and where it was configured."""

    key: Ed25519PublicKey
    source: str
    """``LEDGER_SEAL_PUBLIC_KEY=PATH``, ``ledger init --seal-public-key`` or ``--public-key``."""

    @property
    def kind(self) -> str:
        """``public_key`` (a file given to the command), ``env`` (``LEDGER_SEAL_PUBLIC_KEY``) or
        ``init`` (named at ``ledger init``): ``key_source`` in the JSON of ``verify``."""
        if self.source.startswith(SEAL_PUBLIC_KEY_ENV):
            return "env"
        return "init" if self.source.startswith("ledger init") else "public_key"

    @property
    def key_id(self) -> str:
        """The key's short name."""
        return key_id(self.key)


NO_SEALING_KEY = (
    f"no sealing public key is configured for this store ({SEAL_PUBLIC_KEY_ENV}=FILE "
    "or ledger init --seal-public-key FILE): stored checkpoints are not trusted "
    "unchecked"
)


def seal_key_sql(dialect: Dialect) -> list[str]:
    """The one-row table ``ledger init --seal-public-key`` fills, append-only like the rest."""
    table = dialect.qualified(SEAL_KEY_TABLE)
    create = (
        f"CREATE TABLE IF NOT EXISTS {table} (id INTEGER PRIMARY KEY CHECK (id = 1), "
        "public_key TEXT NOT NULL, key_id TEXT NOT NULL, named_at TEXT NOT NULL)"
    )
    return [
        create,
        *append_only_triggers_sql(
            dialect,
            SEAL_KEY_TABLE,
            refused="the sealing public key is fixed",
            refuse_function=REFUSE_FUNCTION,
            row_trigger="fixed",
        ),
    ]


def name_sealing_key(app: LedgerApp, key: Ed25519PublicKey) -> None:
    """``ledger init --seal-public-key``: record the store's sealing public key, once.

    :class:`SealError` if another key is already recorded (the table refuses a change)."""
    db = connect(app)
    try:
        with db.write() as cur:
            for statement in seal_key_sql(db.dialect):
                cur.execute(statement)
        current = _named_key(db)
        if current is not None:
            if raw_public(current) != raw_public(key):
                raise SealError(
                    f"the store's sealing public key is already {key_id(current)}; "
                    "it cannot be changed (a new store, or "
                    f"{SEAL_PUBLIC_KEY_ENV}, names another)"
                )
            return
        p = db.dialect.p
        with db.write() as cur:
            cur.execute(
                f"INSERT INTO {db.dialect.qualified(SEAL_KEY_TABLE)} (id, public_key, "
                f"key_id, named_at) VALUES (1, {p}, {p}, {p})",
                (public_pem(key).decode(), key_id(key), datetime.now(UTC).isoformat()),
            )
    finally:
        db.close()


def _named_key(db: Connection) -> Ed25519PublicKey | None:
    if not db.table_exists(SEAL_KEY_TABLE):
        return None
    try:
        rows = db.read(f"SELECT public_key FROM {db.dialect.qualified(SEAL_KEY_TABLE)} WHERE id = 1")
    except Exception as exc:  # e.g. a role not granted SELECT on it (re-run ledger init --roles)
        raise SealError(
            f"the store's sealing public key ({SEAL_KEY_TABLE}) cannot be read: {str(exc).splitlines()[0]}"
        ) from None
    if not rows:
        return None
    return parse_public_key(str(rows[0][0]).encode())


def sealing_key(app: LedgerApp, public_key: str | None = None) -> SealingKey | None:
    """The public key stored checkpoints are checked with: ``public_key`` (a file, e.g.
    ``--public-key``), else the file ``LEDGER_SEAL_PUBLIC_KEY`` names, else the key recorded by
    ``ledger init --seal-public-key``; ``None`` if none is configured.

    :class:`SealError` (a usage error) if the file cannot be read or is not a key."""
    if public_key:
        return SealingKey(load_public_key(public_key), f"--public-key {public_key}")
    path = os.environ.get(SEAL_PUBLIC_KEY_ENV)
    if path:
        return SealingKey(load_public_key(path), f"{SEAL_PUBLIC_KEY_ENV}={path}")
    db = connect(app)
    try:
        named = _named_key(db)
    finally:
        db.close()
    return None if named is None else SealingKey(named, "ledger init --seal-public-key")


@dataclass
class Checkpoints:
    """The checkpoints table as read and checked: the valid rows (by number) and the others."""

    valid: list[StoredCheckpoint]
    invalid: list[InvalidCheckpoint]
    key: SealingKey | None
    """What the signatures were checked with (``None``: each row's own key, which proves the row
    intact, not who sealed it: nothing may resume from such a row)."""

    @property
    def trusted(self) -> bool:
        """Whether the signatures were checked with a configured key."""
        return self.key is not None

    def latest(self) -> StoredCheckpoint | None:
        """The valid checkpoint at the newest row."""
        return max(self.valid, key=lambda s: s.position, default=None)

    def by_number(self, number: int) -> StoredCheckpoint | None:
        """Valid checkpoint ``number``."""
        return next((s for s in self.valid if s.number == number), None)


class CheckpointStore:
    """The checkpoints table of one ledger database (see the module docstring)."""

    def __init__(self, app: LedgerApp, *, create: bool = True) -> None:
        self.db: Connection = connect(app)
        d = self.db.dialect
        self.table = d.qualified(CHECKPOINTS_TABLE)
        self.p = d.p
        self.cipher = app.ledger_mapper.cipher
        self.exists = self.db.table_exists(CHECKPOINTS_TABLE)
        if create and not self.exists:
            self._create()
            self.exists = True

    def _create(self) -> None:
        self.db.create(checkpoints_sql(self.db.dialect))

    def close(self) -> None:
        """Close connections opened for the table."""
        self.db.close()

    def __enter__(self) -> CheckpointStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing ---------------------------------------------------------------------------

    def save(self, checkpoint: Checkpoint, snapshot: Snapshot) -> int:
        """Append a checkpoint with its snapshot; its number. Refuses one that is not newer
        than the newest valid checkpoint sealed with the same key (rows that are not valid
        under that key are skipped: junk can never block sealing)."""
        if checkpoint.snapshot != snapshot.digest or checkpoint.row != snapshot.position:
            raise SnapshotError("the snapshot is not the one the checkpoint signs")
        own = parse_public_key(checkpoint.public_key.encode())
        last = self.newest(SealingKey(own, "the checkpoint's key"))
        if last is not None and last.position >= snapshot.position:
            raise SealError(
                f"checkpoint {last.number} already stands at row {last.position}: "
                f"a checkpoint at row {snapshot.position} is not newer"
            )
        number = (last.number if last is not None else 0) + 1
        while self.db.read(f"SELECT 1 FROM {self.table} WHERE number = {self.p}", (number,)):
            number += 1  # a row that is not valid holds it
        pos = checkpoint.position
        p = self.p
        try:
            with self.db.write() as cur:
                cur.execute(
                    f"INSERT INTO {self.table} ({_COLUMNS}, snapshot) VALUES ({', '.join([p] * 9)})",
                    (
                        number,
                        snapshot.position,
                        pos.links,
                        pos.events,
                        pos.head,
                        snapshot.digest,
                        checkpoint.sealed_at,
                        checkpoint.dumps(),
                        self.seal_bytes(snapshot),
                    ),
                )
        except Exception as exc:
            raise SealError(
                f"checkpoint {number} could not be stored (another seal at "
                f"the same time?): {str(exc).splitlines()[0]}"
            ) from None
        return number

    def seal_bytes(self, snapshot: Snapshot) -> bytes:
        """A snapshot as stored: compressed, then encrypted under ``LEDGER_CIPHER_KEY`` if set."""
        data = zlib.compress(snapshot.dumps(), 6)
        return self.cipher.encrypt(data) if self.cipher else data

    # --- reading ---------------------------------------------------------------------------

    def read(self, key: SealingKey | None) -> Checkpoints:
        """Every row, checked: parsed, a v2 checkpoint, its columns as the signed JSON says,
        its number >= 1 and its signature valid under ``key`` (``None``: its own key), and
        numbered after every valid checkpoint at an earlier row. The others are invalid."""
        found = Checkpoints([], [], key)
        if not self.exists:
            return found
        rows = self.db.read(f"SELECT number, position, digest, checkpoint FROM {self.table}")
        newer: StoredCheckpoint | None = None
        for number, position, digest, text in sorted(rows, key=_row_order):
            why = _invalid(number, position, digest, text, key)
            if isinstance(why, str):
                found.invalid.append(InvalidCheckpoint(number, why))
                continue
            stored = StoredCheckpoint(number, why)
            if newer is not None and newer.position >= stored.position:
                found.invalid.append(
                    InvalidCheckpoint(
                        number,
                        (
                            f"it stands at row {stored.position}, not after checkpoint {newer.number} "
                            f"(row {newer.position}) although numbered after it: a copied row"
                        ),
                    )
                )
                continue
            found.valid.append(stored)
            newer = stored
        return found

    _PAGE = 64

    def valid_rows(
        self,
        key: SealingKey | None,
        where: str = "",
        params: tuple[object, ...] = (),
        *,
        order: str = "position DESC, number",
        skipped: list[InvalidCheckpoint] | None = None,
    ) -> Iterator[StoredCheckpoint]:
        """The rows ``where`` selects that are valid under ``key`` (as :meth:`read` checks a
        row, but without reading the others), in ``order``, a page at a time; the invalid ones
        met on the way go to ``skipped``. What replay, ``--since last`` and the incremental
        seal use: their cost does not grow with the number of checkpoints stored."""
        if not self.exists:
            return
        offset = 0
        while True:
            rows = self.db.read(
                f"SELECT number, position, digest, checkpoint FROM {self.table}"
                f"{where} ORDER BY {order} LIMIT {self._PAGE} OFFSET {offset}",
                params,
            )
            for number, position, digest, text in rows:
                why = _invalid(number, position, digest, text, key)
                if not isinstance(why, str):
                    yield StoredCheckpoint(number, why)
                elif skipped is not None:
                    skipped.append(InvalidCheckpoint(number, why))
            if len(rows) < self._PAGE:
                return
            offset += self._PAGE

    def newest(
        self, key: SealingKey | None, skipped: list[InvalidCheckpoint] | None = None
    ) -> StoredCheckpoint | None:
        """The valid checkpoint at the newest row."""
        return next(self.valid_rows(key, skipped=skipped), None)

    def checked(self, number: int, key: SealingKey | None) -> StoredCheckpoint | InvalidCheckpoint | None:
        """Row ``number``: valid, invalid (and why), or ``None`` if there is none."""
        skipped: list[InvalidCheckpoint] = []
        found = next(self.valid_rows(key, f" WHERE number = {self.p}", (number,), skipped=skipped), None)
        return found or (skipped[0] if skipped else None)

    def snapshot(self, stored: StoredCheckpoint) -> Snapshot:
        """Its snapshot, checked against the digest the checkpoint signs."""
        rows = self.db.read(f"SELECT snapshot FROM {self.table} WHERE number = {self.p}", (stored.number,))
        what = f"the stored snapshot of checkpoint {stored.number}"
        if not rows:
            raise SnapshotError(f"the store holds no snapshot of checkpoint {stored.number}")
        return checked_snapshot(stored.checkpoint, self.open_bytes(bytes(rows[0][0]), what), what)

    def open_bytes(self, data: bytes, what: str) -> bytes:
        """Stored snapshot bytes decrypted (if a cipher is set) and decompressed."""
        try:
            if self.cipher:
                data = self.cipher.decrypt(data)
            return zlib.decompress(data)
        except Exception as exc:  # zlib.error, or the cipher's several kinds
            raise SnapshotError(
                f"{what} cannot be decrypted or decompressed (damaged, or another {CIPHER_KEY_ENV}): {exc}"
            ) from None

    # the old readers, kept for callers that check signatures themselves -----------------------

    def listing(self) -> list[StoredCheckpoint]:
        """Every intact stored checkpoint (each checked with its own key), oldest first."""
        return self.read(None).valid

    def latest(self) -> StoredCheckpoint | None:
        """The intact stored checkpoint at the newest row (its own key: check it yourself)."""
        return self.newest(None)

    def by_number(self, number: int) -> StoredCheckpoint | None:
        """Intact checkpoint ``number`` (its own key: check it yourself)."""
        found = self.checked(number, None)
        return found if isinstance(found, StoredCheckpoint) else None

    def by_digest(self, digest: str) -> StoredCheckpoint | None:
        """The intact stored checkpoint whose snapshot has this digest (the caller has checked
        the checkpoint that signs it)."""
        return next(self.valid_rows(None, f" WHERE digest = {self.p}", (digest,)), None)


def _row_order(row: tuple[Any, ...]) -> tuple[int, int]:
    number = row[0]
    return (0, number) if type(number) is int else (1, 0)


def _invalid(
    number: object, position: object, digest: object, text: object, key: SealingKey | None
) -> Checkpoint | str:
    """The row's checkpoint if it is valid, else why not (one line)."""
    if type(number) is not int or number < 1:
        return f"its number {number!r} is not a checkpoint number (1, 2, ...)"
    try:
        checkpoint = parse_checkpoint(str(text))
    except SealError as exc:
        return f"its JSON is damaged: {exc}"
    if checkpoint.snapshot is None:
        return "it signs no snapshot (a v1 checkpoint cannot be stored)"
    if position != checkpoint.row or digest != checkpoint.snapshot:
        return (
            "its position or digest column differs from what its JSON says: the row was "
            "written outside ledger seal"
        )
    try:
        checkpoint.check_signature(None if key is None else key.key)
    except SealError as exc:
        return str(exc).replace("the file was changed", "the row was changed")
    return checkpoint


def checked_snapshot(checkpoint: Checkpoint, data: bytes, what: str) -> Snapshot:
    """Snapshot bytes, checked against the digest ``checkpoint`` signs; :class:`SnapshotError`
    (integrity broken) if they are not a snapshot, were edited or belong to another checkpoint."""
    if checkpoint.snapshot is None:
        raise SnapshotError("a v1 checkpoint signs no snapshot")
    try:
        snapshot = Snapshot.loads(data)
    except SnapshotError as exc:
        raise SnapshotError(f"{what} is not a snapshot (edited?): {exc}") from None
    if snapshot.digest != checkpoint.snapshot:
        raise SnapshotError(
            f"{what} has digest {snapshot.digest}, the checkpoint signs {checkpoint.snapshot}: "
            "the snapshot was edited, or belongs to another checkpoint or store"
        )
    return snapshot


# --- module-level helpers (one connection each) ---------------------------------------------


def save(app: LedgerApp, checkpoint: Checkpoint, snapshot: Snapshot) -> int:
    """Append a checkpoint and its snapshot (creating the table on first use); its number."""
    with CheckpointStore(app) as store:
        return store.save(checkpoint, snapshot)


def read_checkpoints(app: LedgerApp, key: SealingKey | None = None) -> Checkpoints:
    """The checkpoints table, every row checked with ``key`` (default: the store's configured
    sealing key, :func:`sealing_key`; none configured: each row's own key, and
    :attr:`Checkpoints.trusted` is false)."""
    key = key or sealing_key(app)
    with CheckpointStore(app, create=False) as store:
        return store.read(key)


def latest(app: LedgerApp, key: SealingKey | None = None) -> StoredCheckpoint | None:
    """The newest valid stored checkpoint under ``key`` (default: the configured key), or
    ``None`` (none, or no key configured: an unchecked checkpoint is not used)."""
    key = key or sealing_key(app)
    if key is None:
        return None
    with CheckpointStore(app, create=False) as store:
        return store.newest(key)


def by_number(app: LedgerApp, number: int, key: SealingKey | None = None) -> StoredCheckpoint | None:
    """Valid stored checkpoint ``number`` under ``key`` (default: the configured key)."""
    key = key or sealing_key(app)
    if key is None:
        return None
    with CheckpointStore(app, create=False) as store:
        found = store.checked(number, key)
    return found if isinstance(found, StoredCheckpoint) else None


def stored_rows(app: LedgerApp) -> int:
    """How many rows the checkpoints table holds, valid or not."""
    with CheckpointStore(app, create=False) as store:
        if not store.exists:
            return 0
        return int(store.db.read(f"SELECT COUNT(*) FROM {store.table}")[0][0])


def listing(app: LedgerApp, key: SealingKey | None = None) -> list[StoredCheckpoint]:
    """Every valid stored checkpoint, oldest first (``seal --list`` also shows the others:
    :func:`read_checkpoints`)."""
    return read_checkpoints(app, key).valid


def nearest(app: LedgerApp, before: int, key: SealingKey | None = None) -> tuple[Checkpoint, Snapshot] | None:
    """The newest valid checkpoint at a row before notification id ``before``, with its checked
    snapshot (replay and recall start there); ``None`` if there is none, or if no sealing key
    is configured (then nothing stored is trusted: the caller reads from the start). A signed
    checkpoint whose stored snapshot does not match its digest is passed over for an older
    one (``seal --list`` names it)."""
    key = key or sealing_key(app)
    if key is None:
        return None
    with CheckpointStore(app, create=False) as store:
        for stored in store.valid_rows(key, f" WHERE position < {store.p}", (before,)):
            try:
                return stored.checkpoint, store.snapshot(stored)
            except SnapshotError:
                continue
    return None


def resume_findings(app: LedgerApp, checkpoint: Checkpoint) -> list[Finding]:
    """What the store contradicts in a checkpoint a pass is about to resume from (``verify
    --since``, the incremental seal): its link must sit at its row with its digest (no walk over
    the earlier links), and the store must hold exactly the rows it covers up to there
    (:func:`planted_rows`). Empty when it may resume."""
    return checkpoint_findings(app, checkpoint, count_events=False) + planted_rows(app, checkpoint)


def row_totals(app: LedgerApp, upto: int) -> tuple[int, int] | None:
    """How many rows the log holds at or before notification id ``upto`` (every id, also
    <= 0), and the sum of their ids: two aggregates over the primary key, no row read.
    ``None`` if the sum overflows (ids no ledger ever gives)."""
    d = app.dialect
    table, position = app.events_table, app.position_column
    try:
        found = read_rows(
            app, f"SELECT COUNT(*), SUM({position}) FROM {table} WHERE {position} <= {d.p}", (upto,)
        )
    except Exception as exc:  # SQLite: "integer overflow"; PostgreSQL sums in numeric
        if "overflow" in str(exc).lower():
            return None
        raise
    count, total = found[0]
    total = int(total or 0)
    return (int(count), total) if abs(total) < 2**63 else None


def planted_rows(app: LedgerApp, checkpoint: Checkpoint) -> list[Finding]:
    """A ``chain_broken`` finding unless the store holds exactly the rows the checkpoint
    covers at or before its row.

    A resumed pass (``verify --since``, the incremental seal) reads only the rows after the
    checkpoint, so a row planted before it — at an id <= 0, or in a gap of the ids, which
    PostgreSQL's sequences leave after a rolled-back insert — or a row removed before it would
    go unseen. The count of the rows at or before the checkpoint's row must equal the events it
    covers, and (checkpoints sealed since ``id_sum``) the sum of their ids the sum it signs: so
    a row deleted and an edited copy planted at another id (the count unchanged) is seen too.
    Neither sees a row changed in place (same id), nor rows moved so that their ids still add
    up to the same sum: that is the full or segment verify's job (docs/INTEGRITY.md)."""
    if checkpoint.row is None:
        return []
    totals = row_totals(app, checkpoint.row)
    covered = checkpoint.position.events
    if totals is None:
        return [
            _planted(
                checkpoint,
                "the ids of the rows at or before it cannot be summed "
                "(ids out of any range the ledger gives): rows were planted there",
                {"id_sum": checkpoint.id_sum},
                {"id_sum": "overflow"},
            )
        ]
    held, total = totals
    if held != covered:
        how = "added" if held > covered else "removed"
        return [
            _planted(
                checkpoint,
                f"the store holds {held} rows at or before it, the "
                f"checkpoint covers {covered}: rows were {how} there outside the "
                "ledger",
                {"events": covered},
                {"events": held},
            )
        ]
    if checkpoint.id_sum is not None and total != checkpoint.id_sum:
        return [
            _planted(
                checkpoint,
                f"the ids of the {held} rows at or before it add up to "
                f"{total}, the checkpoint signs {checkpoint.id_sum}: a row was removed "
                "and another planted at a different id (the count is unchanged)",
                {"id_sum": checkpoint.id_sum},
                {"id_sum": total},
            )
        ]
    return []


def _planted(checkpoint: Checkpoint, why: str, expected: dict[str, Any], recorded: dict[str, Any]) -> Finding:
    return Finding(
        "chain_broken",
        None,
        None,
        rule="integrity (--since)",
        message=f"checkpoint at row {checkpoint.row}: {why}",
        expected=expected,
        recorded=recorded,
    )


# --- snapshot files -------------------------------------------------------------------------


def snapshot_path(checkpoint_path: str | Path) -> Path:
    """Where the snapshot of a checkpoint file lives: ``cp.json`` → ``cp.snapshot.json``."""
    path = Path(checkpoint_path)
    if path.suffix == ".json":
        return path.with_suffix(".snapshot.json")
    return path.with_name(path.name + ".snapshot.json")


def note_path(checkpoint_path: str | Path) -> Path:
    """Where ``seal --out cp.json`` writes the checkpoint note: ``cp.note``."""
    path = Path(checkpoint_path)
    return path.with_suffix(".note") if path.suffix == ".json" else path.with_name(path.name + ".note")


def snapshot_file_bytes(app: LedgerApp, snapshot: Snapshot) -> bytes:
    """What ``seal --out`` writes beside the checkpoint: the canonical bytes, or with
    ``LEDGER_CIPHER_KEY`` set, those bytes compressed and encrypted under it (the snapshot
    holds player ids, amounts and the cards of rounds in play)."""
    cipher = app.ledger_mapper.cipher
    if not cipher:
        return snapshot.dumps()
    return cipher.encrypt(zlib.compress(snapshot.dumps(), 6))


def write_snapshot_file(checkpoint_path: str | Path, data: Snapshot | bytes) -> Path:
    """Write the snapshot beside a checkpoint file (:func:`snapshot_file_bytes`, or a
    snapshot's canonical bytes); its path."""
    path = snapshot_path(checkpoint_path)
    path.write_bytes(data.dumps() if isinstance(data, Snapshot) else data)
    return path


def _file_snapshot(app: LedgerApp, checkpoint: Checkpoint, data: bytes, path: Path) -> Snapshot:
    """The snapshot in a file ``seal --out`` wrote: plain canonical bytes (no cipher key when
    sealed), or those compressed and encrypted under ``LEDGER_CIPHER_KEY``.

    Which one is never told from the first byte: a ciphertext starts with its random nonce,
    which is ``{`` (or blanks then ``{``) about one time in 250. With a cipher key set the bytes
    are decrypted first (AES-GCM authenticates them, so plain bytes never decrypt) and taken as
    plain only if they do not; without one they are plain, and bytes that cannot be a plain
    snapshot (not ASCII, as :meth:`Snapshot.dumps` always is) are said to be encrypted."""
    what = f"the snapshot file {path}"
    cipher = app.ledger_mapper.cipher
    if not cipher:
        if not _plain_snapshot_bytes(data):
            raise SnapshotError(f"{what} is encrypted: set {CIPHER_KEY_ENV} to read it")
        return checked_snapshot(checkpoint, data, what)
    try:
        plain = zlib.decompress(cipher.decrypt(data))
    except Exception as exc:  # the cipher raises several kinds on other keys or bytes
        if _plain_snapshot_bytes(data):  # sealed without a cipher key: the digest decides
            return checked_snapshot(checkpoint, data, what)
        raise SnapshotError(
            f"{what} cannot be decrypted under {CIPHER_KEY_ENV} (another key, or edited): {exc}"
        ) from None
    return checked_snapshot(checkpoint, plain, what)


def _plain_snapshot_bytes(data: bytes) -> bool:
    """Whether ``data`` can be a plain snapshot file: JSON text (an object) in ASCII. A
    ciphertext of the few hundred bytes a snapshot takes is never all ASCII."""
    return data.isascii() and data.lstrip().startswith(b"{")


def load_snapshot(
    app: LedgerApp, checkpoint: Checkpoint, checkpoint_path: str | None = None
) -> tuple[Snapshot, str] | None:
    """The snapshot a checkpoint signs, checked, and where it came from (``"file"`` beside
    ``checkpoint_path``, else ``"store"``); ``None`` if neither holds one.

    Raises :class:`SnapshotError` if the snapshot found does not match the signed digest.
    """
    if checkpoint_path is not None:
        path = snapshot_path(checkpoint_path)
        if path.exists():
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise SealError(f"cannot read {path}: {exc.strerror or exc}") from None
            return _file_snapshot(app, checkpoint, data, path), "file"
    if checkpoint.snapshot is None:
        return None
    with CheckpointStore(app, create=False) as store:
        found = store.by_digest(checkpoint.snapshot)
        if found is None:
            return None
        return store.snapshot(found), "store"


# --- the incremental seal -------------------------------------------------------------------


@dataclass(frozen=True)
class Sealed:
    """What :func:`seal` did."""

    checkpoint: Checkpoint
    snapshot: Snapshot
    number: int
    resumed_from: int | None
    """The stored checkpoint it continued from (``None``: a full pass)."""
    new: bool
    """False when nothing was stored since the newest checkpoint (returned, not stored again)."""
    events_read: int
    skipped: tuple[InvalidCheckpoint, ...] = ()
    """Rows of the checkpoints table that are not valid under the key (never used)."""
    indexed: int = 0
    """Rows of the seal index written beside it (``ledger.proof.seal_index``; 0: none could be)."""


def seal(
    app: LedgerApp,
    key: Ed25519PrivateKey,
    *,
    store: str = "",
    full: bool = False,
    state_every: int = STATE_EVERY,
) -> Sealed:
    """Verify what was stored since the newest valid stored checkpoint, then sign and store a
    new one.

    Only rows signed by ``key``'s public key count (any other row is skipped, so a junk row
    can never block sealing); if a sealing public key is configured for the store
    (:func:`sealing_key`) it must be ``key``'s. The newest valid checkpoint's stored snapshot
    must match its digest, and the store must still hold its head at its position and the
    rows it covers (:func:`resume_findings`); then only the rows after it are read. ``full``
    (or no valid checkpoint) reads the whole store. :class:`SealRefused` if the store or the
    checkpoint does not verify.

    Beside the checkpoint it signs and stores its seal index (``ledger.proof.seal_index``): the
    interval's opening times, and every ``state_every`` rounds of each game that follows
    rounds, that game's state.
    """
    public = key.public_key()
    configured = sealing_key(app)
    if configured is not None and raw_public(configured.key) != raw_public(public):
        raise SealError(
            f"the sealing key {key_id(public)} is not the store's sealing public "
            f"key {configured.key_id} ({configured.source}): readers would refuse "
            "its checkpoints"
        )
    with CheckpointStore(app) as table:
        passed_over: list[InvalidCheckpoint] = []
        last = None if full else table.newest(SealingKey(public, "the sealing key"), passed_over)
        start = None
        if last is not None:
            try:
                start = table.snapshot(last)
            except SnapshotError as exc:
                raise SealRefused(str(exc)) from None
            problems = resume_findings(app, last.checkpoint)
            if problems:
                raise SealRefused(
                    f"the store does not verify; refusing to seal it: stored "
                    f"checkpoint {last.number}: {problems[0].message}"
                )
            if lacks_counters(start):
                start = None  # sealed before the counters: count from the start of the log once
        collected = IndexCollector(start, every=state_every)
        report = verify_store(app, start=start, snapshot=True, on_judged=collected.on_judged)
        if not report.integrity_ok:
            first = next((f.message for f in report.findings if f.code == "chain_broken"), "integrity broken")
            raise SealRefused(f"the store does not verify; refusing to seal it: {first}")
        snapshot = report.snapshot
        skipped = tuple(passed_over)
        if (
            last is not None
            and start is not None
            and (
                (snapshot is None and report.events == 0)
                or (snapshot is not None and snapshot.position == start.position)
            )
        ):
            return Sealed(last.checkpoint, start, last.number, last.number, False, report.events, skipped)
        if snapshot is None:
            if start is None and report.events == 0:
                raise SealError("the store is empty: nothing to seal")
            raise SealError("the newest stored row is not a chain link: nothing to seal")
        totals = row_totals(app, snapshot.position)
        if totals is None or totals[0] != snapshot.events:
            raise SealRefused(
                "the store does not verify; refusing to seal it: the rows at or "
                f"before row {snapshot.position} are not the {snapshot.events} "
                "the pass read"
            )
        checkpoint = sign(
            ChainPosition(snapshot.links, snapshot.events, snapshot.head),
            key,
            store=store,
            snapshot=snapshot,
            id_sum=totals[1],
        )
        number = table.save(checkpoint, snapshot)
    indexed = _index(
        app, key, StoredCheckpoint(number, checkpoint), 0 if start is None else start.position, collected
    )
    return Sealed(
        checkpoint,
        snapshot,
        number,
        None if last is None or start is None else last.number,
        True,
        report.events,
        skipped,
        indexed,
    )


def lacks_counters(snapshot: Snapshot) -> bool:
    """Whether ``snapshot`` was sealed before the state counters existed: it holds the state of
    a game whose rounds move signed state (``Game.dependency``) and no ``moves`` (how many rounds
    moved each key, ``ledger.merkle.state``). Counting on from it would start at its row."""
    judge = snapshot.state.get("judge", {})
    if "moves" in judge:
        return False
    held = set(judge.get("sessions", {})) | set(judge.get("carrying", {}))
    return any(key in GAMES and GAMES[key].dependency is not None for key in held)


def without_counters(state: dict[str, Any]) -> dict[str, Any]:
    """A snapshot's state without the rounds counters (what a snapshot sealed before them held)."""
    judge = {k: v for k, v in state.get("judge", {}).items() if k != "moves"}
    return {**state, "judge": judge}


def _indexed(stored: StoredCheckpoint) -> Indexed:
    return Indexed(stored.number, stored.position, stored.checkpoint.snapshot or "")


def seal_index(app: LedgerApp, key: SealingKey) -> tuple[SealIndex, list[StoredCheckpoint]]:
    """The store's seal index read through ``key`` (``ledger.proof.seal_index``), and the stored
    checkpoints valid under it, oldest first (close the index after use)."""
    with CheckpointStore(app, create=False) as store:
        valid = store.read(key).valid
    return SealIndex(app, key.key, [_indexed(s) for s in valid]), valid


def _index(
    app: LedgerApp, key: Ed25519PrivateKey, stored: StoredCheckpoint, after: int, collected: IndexCollector
) -> int:
    """Write the seal index of a new checkpoint; 0 if it cannot be written (e.g. a sealing role
    not granted the table): readers then read from the checkpoint, as without an index."""
    try:
        return write_index(app, key, _indexed(stored), after, collected, REFUSE_FUNCTION)
    except Exception:  # the index only saves reading: never a reason for a seal to fail
        return 0
