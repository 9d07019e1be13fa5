"""Stored checkpoints and their snapshots: where ``verify --since``, ``--segment`` and ``seal`` resume.

``ledger seal`` signs a v2 checkpoint (``ledger.seal``): the chain head at a link row *and* the
digest of the verifier's :class:`~ledger.verify.snapshot.Snapshot` right after that row. Both are
kept, append-only, in one table beside the store's events:

``ledger_checkpoints (number, position, links, events, head, digest, sealed_at, checkpoint,
snapshot)`` — ``number`` counts checkpoints from 1, ``position`` is the link row's notification
id, ``checkpoint`` the signed JSON text, ``snapshot`` the snapshot's canonical bytes compressed
with zlib. The other columns repeat what the signed JSON says, for listing and lookup; every
reader trusts only the JSON (its signature) and the snapshot's digest, so an edited row is
detected (:class:`~ledger.verify.snapshot.SnapshotError`). UPDATE and DELETE are refused by
triggers (PostgreSQL and SQLite, as for the events); with ``ledger init --roles`` the auditor role
(which seals) may INSERT and SELECT, the ingest role only SELECT.

``seal --out cp.json`` also writes the snapshot beside the file (``cp.snapshot.json``,
:func:`snapshot_path`), so a checkpoint can be taken away with its snapshot.

:func:`seal` is the incremental seal: it continues from the newest stored checkpoint (its
signature checked with the sealing key, its snapshot with its digest, its head at its position in
the store) instead of re-reading the whole chain; the first seal is a full pass.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ledger.findings import Finding
from ledger.seal import (
    ChainPosition,
    Checkpoint,
    SealError,
    checkpoint_findings,
    parse_checkpoint,
    sign,
)
from ledger.sql import Connection, Dialect, connect
from ledger.sql import literal as _literal
from ledger.sql import quote as _quote
from ledger.store import LedgerApp
from ledger.verify.engine import verify_store
from ledger.verify.snapshot import Snapshot, SnapshotError

CHECKPOINTS_TABLE = "ledger_checkpoints"
REFUSE_FUNCTION = "ledger_refuse_change"
"""The PostgreSQL trigger function of ``ledger init`` (``ledger.db_admin``), shared here."""
APPEND_ONLY_MESSAGE = "ledger checkpoints are append-only"
_COLUMNS = "number, position, links, events, head, digest, sealed_at, checkpoint"


class SealRefused(SealError):
    """The store or its newest stored checkpoint does not verify: nothing is sealed (exit 3)."""


def checkpoints_sql(dialect: Dialect) -> list[str]:
    """The statements that create the checkpoints table and make it append-only."""
    table = dialect.qualified(CHECKPOINTS_TABLE)
    blob = "BLOB" if dialect.is_sqlite else "BYTEA"
    create = (f"CREATE TABLE IF NOT EXISTS {table} (number BIGINT PRIMARY KEY, "
              "position BIGINT NOT NULL, links BIGINT NOT NULL, events BIGINT NOT NULL, "
              "head TEXT NOT NULL, digest TEXT NOT NULL, sealed_at TEXT NOT NULL, "
              f"checkpoint TEXT NOT NULL, snapshot {blob} NOT NULL)")
    if dialect.is_sqlite:
        return [create] + [
            f"CREATE TRIGGER IF NOT EXISTS ledger_checkpoints_no_{op.lower()} BEFORE {op} ON "
            f"{table} BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY_MESSAGE}: {op} refused'); END"
            for op in ("UPDATE", "DELETE")]
    schema = _quote(dialect.schema)
    function = f"{schema}.{_quote(REFUSE_FUNCTION)}"
    body = (f"CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $body$ BEGIN "
            "RAISE EXCEPTION USING MESSAGE = 'append-only: ' || TG_OP || ' refused on ' || "
            "TG_TABLE_NAME, ERRCODE = 'insufficient_privilege'; END $body$")
    triggers = []
    for name, when in (("ledger_checkpoints_append_only", "BEFORE UPDATE OR DELETE ON {t} "
                        "FOR EACH ROW"),
                       ("ledger_checkpoints_no_truncate", "BEFORE TRUNCATE ON {t} "
                        "FOR EACH STATEMENT")):
        triggers.append(
            f"DO $do$ BEGIN IF NOT EXISTS (SELECT FROM pg_trigger WHERE tgname = "
            f"{_literal(name)} AND tgrelid = {_literal(table)}::regclass) THEN "
            f"CREATE TRIGGER {name} {when.format(t=table)} EXECUTE FUNCTION {function}(); "
            "END IF; END $do$")
    return [
        create,
        "DO $do$ BEGIN IF NOT EXISTS (SELECT FROM pg_proc p JOIN pg_namespace n ON "
        f"n.oid = p.pronamespace WHERE p.proname = {_literal(REFUSE_FUNCTION)} AND n.nspname = "
        f"{_literal(dialect.schema)}) THEN EXECUTE $fn${body}$fn$; END IF; END $do$",
        *triggers,
    ]


@dataclass(frozen=True)
class StoredCheckpoint:
    """One row of the checkpoints table: its number and its (parsed, signed) checkpoint."""

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
        return {"number": self.number, "position": self.position, "links": pos.links,
                "events": pos.events, "head": pos.head, "snapshot": self.checkpoint.snapshot,
                "sealed_at": self.checkpoint.sealed_at, "key_id": self.checkpoint.key_id}


class CheckpointStore:
    """The checkpoints table of one ledger database (see the module docstring)."""

    def __init__(self, app: LedgerApp, *, create: bool = True) -> None:
        self.db: Connection = connect(app)
        d = self.db.dialect
        self.table = d.qualified(CHECKPOINTS_TABLE)
        self.p = d.p
        self.exists = self.db.table_exists(CHECKPOINTS_TABLE)
        if create and not self.exists:
            self._create()
            self.exists = True

    def _create(self) -> None:
        for attempt in range(3):
            try:
                with self.db.write() as cur:
                    for statement in checkpoints_sql(self.db.dialect):
                        cur.execute(statement)
                return
            except Exception:  # two processes creating at once (EVENTSOURCING.md hazard 4)
                if attempt == 2:
                    raise

    def close(self) -> None:
        """Close connections opened for the table."""
        self.db.close()

    def __enter__(self) -> CheckpointStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing ---------------------------------------------------------------------------

    def save(self, checkpoint: Checkpoint, snapshot: Snapshot) -> int:
        """Append a checkpoint with its snapshot; its number. Refuses one that is not newer."""
        if checkpoint.snapshot != snapshot.digest or checkpoint.row != snapshot.position:
            raise SnapshotError("the snapshot is not the one the checkpoint signs")
        p = self.p
        with self.db.write() as cur:
            cur.execute(f"SELECT number, position FROM {self.table} ORDER BY number DESC LIMIT 1")
            last = cur.fetchone()
            number = 1 if last is None else int(last[0]) + 1
            if last is not None and int(last[1]) >= snapshot.position:
                raise SealError(f"checkpoint {last[0]} already stands at row {last[1]}: a "
                                f"checkpoint at row {snapshot.position} is not newer")
            pos = checkpoint.position
            try:
                cur.execute(f"INSERT INTO {self.table} ({_COLUMNS}, snapshot) VALUES "
                            f"({', '.join([p] * 9)})",
                            (number, snapshot.position, pos.links, pos.events, pos.head,
                             snapshot.digest, checkpoint.sealed_at, checkpoint.dumps(),
                             zlib.compress(snapshot.dumps(), 6)))
            except Exception as exc:
                raise SealError(f"checkpoint {number} could not be stored (another seal at "
                                f"the same time?): {str(exc).splitlines()[0]}") from None
        return number

    # --- reading ---------------------------------------------------------------------------

    def _rows(self, where: str = "", params: tuple[object, ...] = (), *, order: str = "ASC",
              limit: int | None = None) -> list[StoredCheckpoint]:
        if not self.exists:
            return []
        sql = (f"SELECT number, checkpoint FROM {self.table}{where} ORDER BY number {order}"
               + (f" LIMIT {int(limit)}" if limit is not None else ""))
        found = []
        for number, text in self.db.read(sql, params):
            try:
                checkpoint = parse_checkpoint(str(text))
            except SealError as exc:
                raise SnapshotError(f"stored checkpoint {number} is damaged: {exc}") from None
            if checkpoint.snapshot is None:
                raise SnapshotError(f"stored checkpoint {number} has no snapshot digest")
            found.append(StoredCheckpoint(int(number), checkpoint))
        return found

    def listing(self) -> list[StoredCheckpoint]:
        """Every stored checkpoint, oldest first."""
        return self._rows()

    def latest(self) -> StoredCheckpoint | None:
        """The newest stored checkpoint."""
        found = self._rows(order="DESC", limit=1)
        return found[0] if found else None

    def by_number(self, number: int) -> StoredCheckpoint | None:
        """Checkpoint ``number`` (1 = the first sealed)."""
        found = self._rows(f" WHERE number = {self.p}", (number,))
        return found[0] if found else None

    def by_digest(self, digest: str) -> StoredCheckpoint | None:
        """The stored checkpoint whose snapshot has this digest."""
        found = self._rows(f" WHERE digest = {self.p}", (digest,), limit=1)
        return found[0] if found else None

    def nearest(self, before: int) -> StoredCheckpoint | None:
        """The newest checkpoint standing at a row before notification id ``before``."""
        found = self._rows(f" WHERE position < {self.p}", (before,), order="DESC", limit=1)
        if found and found[0].position >= before:  # the column says one thing, the JSON another
            raise SnapshotError(f"stored checkpoint {found[0].number}'s position column was "
                                "changed")
        return found[0] if found else None

    def snapshot(self, stored: StoredCheckpoint) -> Snapshot:
        """Its snapshot, checked against the digest the checkpoint signs."""
        rows = self.db.read(f"SELECT snapshot FROM {self.table} WHERE number = {self.p}",
                            (stored.number,))
        if not rows:
            raise SnapshotError(f"the store holds no snapshot of checkpoint {stored.number}")
        try:
            data = zlib.decompress(bytes(rows[0][0]))
        except zlib.error as exc:
            raise SnapshotError(f"the stored snapshot of checkpoint {stored.number} is "
                                f"damaged: {exc}") from None
        return checked_snapshot(stored.checkpoint, data,
                                f"the stored snapshot of checkpoint {stored.number}")


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
            "the snapshot was edited, or belongs to another checkpoint or store")
    return snapshot


# --- module-level helpers (one connection each) ---------------------------------------------


def save(app: LedgerApp, checkpoint: Checkpoint, snapshot: Snapshot) -> int:
    """Append a checkpoint and its snapshot (creating the table on first use); its number."""
    with CheckpointStore(app) as store:
        return store.save(checkpoint, snapshot)


def latest(app: LedgerApp) -> StoredCheckpoint | None:
    """The newest stored checkpoint, or ``None``."""
    with CheckpointStore(app, create=False) as store:
        return store.latest()


def by_number(app: LedgerApp, number: int) -> StoredCheckpoint | None:
    """Stored checkpoint ``number``, or ``None``."""
    with CheckpointStore(app, create=False) as store:
        return store.by_number(number)


def listing(app: LedgerApp) -> list[StoredCheckpoint]:
    """Every stored checkpoint, oldest first."""
    with CheckpointStore(app, create=False) as store:
        return store.listing()


def nearest(app: LedgerApp, before: int) -> tuple[Checkpoint, Snapshot] | None:
    """The newest checkpoint at a row before notification id ``before``, with its checked
    snapshot (replay and recall start there); ``None`` if there is none."""
    with CheckpointStore(app, create=False) as store:
        found = store.nearest(before)
        if found is None:
            return None
        return found.checkpoint, store.snapshot(found)


def resume_findings(app: LedgerApp, checkpoint: Checkpoint) -> list[Finding]:
    """What the store contradicts in a checkpoint a pass is about to resume from (``verify
    --since``, the incremental seal): its link must sit at its row with its digest (no walk over
    the earlier links), and the store must hold exactly the rows it covers up to there
    (:func:`planted_rows`). Empty when it may resume."""
    return checkpoint_findings(app, checkpoint, count_events=False) + planted_rows(app, checkpoint)


def planted_rows(app: LedgerApp, checkpoint: Checkpoint) -> list[Finding]:
    """A ``chain_broken`` finding unless the store holds exactly the rows the checkpoint
    covers at or before its row.

    A resumed pass (``verify --since``, the incremental seal) reads only the rows after the
    checkpoint, so a row planted before it — at an id <= 0, or in a gap of the ids, which
    PostgreSQL's sequences leave after a rolled-back insert — or a row removed before it would
    go unseen. Counting the rows at or before the checkpoint's row (one count over the primary
    key, no row decoded) and comparing with the events the checkpoint covers sees both. A row
    changed in place before the checkpoint is left to the full or segment verify
    (docs/INTEGRITY.md)."""
    if checkpoint.row is None:
        return []
    held = app.count_rows(upto=checkpoint.row)
    covered = checkpoint.position.events
    if held == covered:
        return []
    how = "added" if held > covered else "removed"
    return [Finding("chain_broken", None, None, rule="integrity (--since)",
                    message=f"the store holds {held} rows at or before the checkpoint's row "
                            f"{checkpoint.row}, the checkpoint covers {covered}: rows were "
                            f"{how} there outside the ledger",
                    expected={"events": covered}, recorded={"events": held})]


# --- snapshot files -------------------------------------------------------------------------


def snapshot_path(checkpoint_path: str | Path) -> Path:
    """Where the snapshot of a checkpoint file lives: ``cp.json`` → ``cp.snapshot.json``."""
    path = Path(checkpoint_path)
    if path.suffix == ".json":
        return path.with_suffix(".snapshot.json")
    return path.with_name(path.name + ".snapshot.json")


def write_snapshot_file(checkpoint_path: str | Path, snapshot: Snapshot) -> Path:
    """Write the snapshot beside a checkpoint file (canonical bytes); its path."""
    path = snapshot_path(checkpoint_path)
    path.write_bytes(snapshot.dumps())
    return path


def load_snapshot(app: LedgerApp, checkpoint: Checkpoint,
                  checkpoint_path: str | None = None) -> tuple[Snapshot, str] | None:
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
            return checked_snapshot(checkpoint, data, f"the snapshot file {path}"), "file"
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


def seal(app: LedgerApp, key: Ed25519PrivateKey, *, store: str = "",
         full: bool = False) -> Sealed:
    """Verify what was stored since the newest stored checkpoint, then sign and store a new one.

    The newest checkpoint must be signed by ``key``'s public key, its stored snapshot must match
    its digest, and the store must still hold its head at its position; then only the rows after
    it are read. ``full`` (or no stored checkpoint) reads the whole store. :class:`SealRefused`
    if the store or the checkpoint does not verify.
    """
    with CheckpointStore(app) as table:
        last = None if full else table.latest()
        start = None
        if last is not None:
            try:
                last.checkpoint.check_signature(key.public_key())
            except SealError as exc:
                raise SealRefused(f"stored checkpoint {last.number}: {exc} (after a key "
                                  "change, seal with --full)") from None
            try:
                start = table.snapshot(last)
            except SnapshotError as exc:
                raise SealRefused(str(exc)) from None
            problems = resume_findings(app, last.checkpoint)
            if problems:
                raise SealRefused(f"the store does not verify; refusing to seal it: stored "
                                  f"checkpoint {last.number}: {problems[0].message}")
        report = verify_store(app, start=start, snapshot=True)
        if not report.integrity_ok:
            first = next((f.message for f in report.findings if f.code == "chain_broken"),
                         "integrity broken")
            raise SealRefused(f"the store does not verify; refusing to seal it: {first}")
        snapshot = report.snapshot
        if last is not None and start is not None and (
                (snapshot is None and report.events == 0)
                or (snapshot is not None and snapshot.position == start.position)):
            return Sealed(last.checkpoint, start, last.number, last.number, False,
                          report.events)
        if snapshot is None:
            if start is None and report.events == 0:
                raise SealError("the store is empty: nothing to seal")
            raise SealError("the newest stored row is not a chain link: nothing to seal")
        checkpoint = sign(ChainPosition(snapshot.links, snapshot.events, snapshot.head), key,
                          store=store, snapshot=snapshot)
        number = table.save(checkpoint, snapshot)
    return Sealed(checkpoint, snapshot, number, None if last is None else last.number, True,
                  report.events)
