"""What ``ledger seal`` writes beside each checkpoint so that a day or a round is found by position.

A checkpoint's snapshot holds the whole state of a verify pass at one row; between two
checkpoints a command that needs one day or one round would otherwise read every row since the
older one. While it verifies the rows since the previous checkpoint, :func:`ledger.proof.checkpoints.seal`
also collects (:class:`IndexCollector`):

- one **interval** row: the earliest and latest ``round_opened`` time of the rounds that closed
  (or were voided) between the previous checkpoint (``after``) and this one, so that
  ``ledger report --day`` reads only the intervals whose rounds may belong to the day;
- **state points**: every :data:`STATE_EVERY` rounds of a game whose rules span rounds (3CB
  carried bets and shoe, SP9 banks, STUD pools), that game's state right after the round
  (:meth:`~ledger.verify.judge.RoundJudge.game_state`), at the round's closing row, so that
  ``ledger replay`` and ``ledger recall`` judge a round from a state a few rounds before it.

Both go to one append-only table (``ledger_seal_index``), each row signed with the sealing key
over its content and the digest of the checkpoint it belongs to. **Nothing read from it is used
unchecked**: :class:`SealIndex` returns only rows whose signature is valid under the store's
sealing public key and whose checkpoint is a valid stored checkpoint; every other row is
ignored (the caller then reads from a checkpoint, or the whole store, as before). State bodies
are compressed, and encrypted under ``LEDGER_CIPHER_KEY`` when set, as the snapshots are.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ledger.domain.round import round_id
from ledger.games import GAMES
from ledger.storage.sql import Connection, Dialect, append_only_triggers_sql, connect
from ledger.verify.judge import Judged, RoundJudge

if TYPE_CHECKING:
    from ledger.storage.store import LedgerApp
    from ledger.verify.snapshot import Snapshot

INDEX_TABLE = "ledger_seal_index"
INDEX_FORMAT = "ledger-seal-index-v1"
STATE_EVERY = 16
"""Rounds of one game between two of its state points."""
_INTERVAL, _STATE = "interval", "state"


def index_sql(dialect: Dialect, refuse_function: str) -> list[str]:
    """The statements that create the index table and make it append-only (the PostgreSQL
    trigger function ``refuse_function`` is the checkpoints table's, created before)."""
    table = dialect.qualified(INDEX_TABLE)
    blob = "BLOB" if dialect.is_sqlite else "BYTEA"
    create = (
        f"CREATE TABLE IF NOT EXISTS {table} (number BIGINT NOT NULL, kind TEXT NOT NULL, "
        "game TEXT NOT NULL, position BIGINT NOT NULL, checkpoint TEXT NOT NULL, "
        f"body {blob} NOT NULL, signature TEXT NOT NULL, PRIMARY KEY (kind, game, position, number))"
    )
    return [
        create,
        *append_only_triggers_sql(
            dialect, INDEX_TABLE, refused="the seal index is append-only", refuse_function=refuse_function
        ),
    ]


def signed_bytes(number: int, kind: str, game: str, position: int, checkpoint: str, body: Any) -> bytes:
    """What a row's signature signs: its fields and plain body, canonical JSON."""
    return json.dumps(
        {
            "format": INDEX_FORMAT,
            "number": number,
            "kind": kind,
            "game": game,
            "position": position,
            "checkpoint": checkpoint,
            "body": body,
        },
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=True,
    ).encode()


@dataclass
class IndexCollector:
    """Fed every round a seal's verify pass judges (``on_judged``), in the pass's order: the
    interval's opening times and each following game's state every :data:`STATE_EVERY` rounds.

    The state is kept by a judge of its own that judges the rounds of games that follow rounds
    again, from the state of the snapshot the pass started at (``start``)."""

    start: Snapshot | None = None
    every: int = STATE_EVERY
    first: datetime | None = None
    last: datetime | None = None
    points: list[tuple[str, str, str, dict[str, Any]]] = field(default_factory=list)
    """(game, table, round, the game's state right after that round)."""

    def __post_init__(self) -> None:
        self._judge = RoundJudge()
        if self.start is not None:
            self._judge.load(self.start.state["judge"])
        self._counts: dict[str, int] = {}

    def on_judged(self, judged: Judged) -> None:
        """One judged round; rounds still in play at the end of the pass are not counted."""
        rnd = judged.round
        if rnd.ended_by is None:
            return
        opened = rnd.opened_at
        if self.first is None or opened < self.first:
            self.first = opened
        if self.last is None or opened > self.last:
            self.last = opened
        game = GAMES[rnd.game]
        if not game.follows_rounds:
            return
        self._judge.judge_round(rnd)
        count = self._counts[game.key] = self._counts.get(game.key, 0) + 1
        if count % self.every == 0:
            state = self._judge.game_state(game.key)
            assert state is not None  # the game follows rounds
            self.points.append((game.key, rnd.table, rnd.round, state))


@dataclass(frozen=True)
class Sealed:
    """A stored checkpoint as the index names it: its number, row and snapshot digest."""

    number: int
    position: int
    digest: str


def write_index(
    app: LedgerApp,
    key: Ed25519PrivateKey,
    checkpoint: Sealed,
    after: int,
    collected: IndexCollector,
    refuse_function: str,
) -> int:
    """Sign and store the interval and state points of checkpoint ``checkpoint`` (rows after
    notification id ``after`` up to its row); how many rows were written."""
    digest = checkpoint.digest
    rows: list[tuple[str, str, int, Any]] = [
        (
            _INTERVAL,
            "",
            checkpoint.position,
            {
                "after": after,
                "first": None if collected.first is None else collected.first.isoformat(),
                "last": None if collected.last is None else collected.last.isoformat(),
            },
        )
    ]
    for game, table, rnd, state in collected.points:
        span = app.span(round_id(table, rnd))
        if span is not None and after < span[1] <= checkpoint.position:
            rows.append((_STATE, game, span[1], state))
    db = connect(app)
    cipher = app.ledger_mapper.cipher
    try:
        if not db.table_exists(INDEX_TABLE):  # a store made before the index (`ledger init` makes it):
            db.create(index_sql(db.dialect, refuse_function))  # CREATE … IF NOT EXISTS needs CREATE
        p = db.dialect.p
        values = []
        for kind, game, position, body in rows:
            plain = signed_bytes(checkpoint.number, kind, game, position, digest, body)
            packed = zlib.compress(json.dumps(body, sort_keys=True, separators=(",", ":")).encode(), 6)
            values.append(
                (
                    checkpoint.number,
                    kind,
                    game,
                    position,
                    digest,
                    cipher.encrypt(packed) if cipher else packed,
                    key.sign(plain).hex(),
                )
            )
        with db.write() as cur:
            cur.executemany(
                f"INSERT INTO {db.dialect.qualified(INDEX_TABLE)} (number, kind, game, position, "
                f"checkpoint, body, signature) VALUES ({', '.join([p] * 7)})",
                values,
            )
    finally:
        db.close()
    return len(values)


@dataclass(frozen=True)
class Interval:
    """The rows after ``after`` up to checkpoint ``checkpoint``: when the rounds that closed
    there opened (``first``/``last``; ``None``: no round closed there)."""

    checkpoint: Sealed
    after: int
    first: datetime | None
    last: datetime | None


@dataclass(frozen=True)
class StatePoint:
    """A following game's state right after the round that closed at row ``position``."""

    game: str
    position: int
    state: dict[str, Any]


class SealIndex:
    """The seal index of one store, read through the store's sealing public key ``key``: only
    rows signed by it, belonging to one of the ``valid`` stored checkpoints (those valid under
    that key, :func:`ledger.proof.checkpoints.seal_index` gives them), are returned."""

    def __init__(self, app: LedgerApp, key: Ed25519PublicKey, valid: list[Sealed]) -> None:
        self.key = key
        self.cipher = app.ledger_mapper.cipher
        self.checkpoints = {s.digest: s for s in valid}
        self.db: Connection = connect(app)
        self.exists = self.db.table_exists(INDEX_TABLE)
        self.table = self.db.dialect.qualified(INDEX_TABLE)

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    def __enter__(self) -> SealIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _checked(self, row: tuple[Any, ...]) -> tuple[Sealed, Any] | None:
        """The row's checkpoint and plain body if the row is valid, else ``None``."""
        number, kind, game, position, digest, body, signature = row
        stored = self.checkpoints.get(str(digest))
        if stored is None or stored.number != number or int(position) > stored.position:
            return None
        try:
            data = bytes(body)
            if self.cipher:
                data = self.cipher.decrypt(data)
            plain = json.loads(zlib.decompress(data))
            self.key.verify(
                bytes.fromhex(str(signature)), signed_bytes(number, kind, game, int(position), digest, plain)
            )
        except (InvalidSignature, ValueError, zlib.error, TypeError):
            return None
        except Exception:  # the cipher's several kinds of refusal (another key, edited bytes)
            return None
        return stored, plain

    _COLUMNS = "number, kind, game, position, checkpoint, body, signature"

    def _read(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """Rows of the index; none if it cannot be read (e.g. a role not granted it): the
        caller then reads the store as without an index."""
        try:
            return self.db.read(sql, params)
        except Exception:  # the drivers' several kinds (permission denied, damaged table)
            return []

    def intervals(self) -> list[Interval]:
        """Every valid interval row, by checkpoint position."""
        if not self.exists:
            return []
        p = self.db.dialect.p
        found: list[Interval] = []
        for row in self._read(f"SELECT {self._COLUMNS} FROM {self.table} WHERE kind = {p}", (_INTERVAL,)):
            checked = self._checked(row)
            if checked is None or checked[0].position != int(row[3]):
                continue
            stored, body = checked
            try:
                found.append(Interval(stored, int(body["after"]), _time(body["first"]), _time(body["last"])))
            except (KeyError, TypeError, ValueError):
                continue
        return sorted(found, key=lambda i: i.checkpoint.position)

    def state_before(self, game: str, before: int, floor: int) -> StatePoint | None:
        """The newest valid state point of ``game`` at a row in [``floor``, ``before``)."""
        if not self.exists:
            return None
        p = self.db.dialect.p
        rows = self._read(
            f"SELECT {self._COLUMNS} FROM {self.table} WHERE kind = {p} AND game = {p} AND "
            f"position < {p} AND position >= {p} ORDER BY position DESC, number LIMIT 8",
            (_STATE, game, before, floor),
        )
        for row in rows:
            checked = self._checked(row)
            if checked is not None and isinstance(checked[1], dict):
                return StatePoint(game, int(row[3]), checked[1])
        return None


def _time(text: object) -> datetime | None:
    return None if text is None else datetime.fromisoformat(str(text))
