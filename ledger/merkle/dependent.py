"""A bundle's state part: what a round of 3CB, SP9 or STUD depends on, proven against notes.

A round of a game whose rules span rounds (its folder's ``dependency.py``) is judged from the
state earlier rounds left: its table's carried bets and shoe, its table's bank, its linked pool.
``export-round --merkle`` then adds a ``state`` section to the bundle:

- ``keys``: the state keys the round depends on, closed over the rounds below (a STUD round of
  another table that moves the same pool brings its own table's key);
- ``before``: the checkpoint note ``A``, the newest one whose tree ends before the round closed
  (``null``: none, the state then starts empty), the consistency proof from ``A``'s tree to the
  bundle's note ``B``, and the entries of ``keys`` in ``A``'s state tree with their proofs;
- ``after``: the same entries in ``B``'s state tree, with their proofs;
- ``rounds``: every other round that moved one of ``keys`` and closed between ``A`` and ``B``,
  each with its number of events and its last row's inclusion proof in ``B``'s tree (as
  indexes into ``hashes``, the proofs' distinct hashes once each); ``events``: their events,
  packed together as the bundle packs its round's (they compress better together).

:func:`check_state` replays those rounds and the bundle's own, in the order they closed, from
``A``'s entries, with the game's rules (``RoundJudge``, the one judging path of verify), and
requires that the result is ``B``'s entries: the same state, ``moves`` grown by exactly the
rounds replayed, ``last`` the newest of them. A round left out, added, reordered or changed, or
an entry that is not the signed one, breaks the proof. The round's findings are those a
``ledger verify`` pass gives it. What the proof rests on: the operator's signature on both
notes' state roots (witnesses cosign the notes, so the operator cannot show two states for one
tree), and ``ledger verify --since``/``--segment``, which check a signed state against the log.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ledger.domain.errors import BundleError
from ledger.domain.findings import Finding
from ledger.domain.round import Round
from ledger.feed.envelope import FeedEvent
from ledger.games import GAMES
from ledger.merkle.heads import Heads, StoredNote
from ledger.merkle.log import MerkleLog
from ledger.merkle.proofs import check_exportable
from ledger.merkle.rfc6962 import HASH_SIZE, verify_consistency
from ledger.merkle.sealing import SNAPSHOT_EXTENSION, open_checkpoint
from ledger.merkle.state import StateTree, check_entry, read_state_line, state_entries
from ledger.proof.checkpoints import CheckpointStore
from ledger.proof.note import CheckpointBody, NoteError
from ledger.storage.store import LedgerApp
from ledger.verify.judge import RoundJudge
from ledger.verify.snapshot import SnapshotError

MAX_ROUNDS = 10_000
"""A bundle replaying more rounds than this is refused unread."""

Packer = Callable[[list[tuple[str, bytes]]], str]


@dataclass
class Other:
    """A round the bundle's round depends on, closed between the two notes."""

    index: int
    oid: UUID
    table: str
    round: str
    stored: list[tuple[str, bytes]]
    keys: set[str]
    last_row: bytes
    """The bytes stored in its last row (compressed, in a store that compresses)."""


# -- export -------------------------------------------------------------------------------


def export_state(
    app: LedgerApp,
    rnd: Round,
    index: int,
    note: StoredNote,
    decode: Callable[[str, bytes], FeedEvent | None],
    pack: Packer,
) -> dict[str, Any] | None:
    """The ``state`` section of the bundle of ``rnd``, whose last row is leaf ``index`` of the
    tree ``note`` signs; ``None`` when its game has no ``Dependency``."""
    hook = GAMES[rnd.game].dependency
    if hook is None:
        return None
    compressed = check_exportable(app)
    with MerkleLog(app, create=False) as log, Heads(app, create=False) as heads:
        before = _note_before(heads, index)
        after_tree = _tree_of(app, note)
        before_tree = _tree_of(app, before) if before is not None else None
        start = before.size if before is not None else 0
        others = _closed_rounds(app, log, rnd, start, note.size, index, decode)
        keys = set(hook.depends_on(rnd))
        chosen = _closure(keys, others)
        consistency = log.consistency_proof(start, note.size) if before is not None and start else []
        replayed, table = _replayed(log, chosen, note.size, compressed)
    return {
        "game": rnd.game,
        "keys": sorted(keys),
        "before": None
        if before is None or before_tree is None
        else {
            "note": before.cosigned(),
            "consistency": _b64(consistency),
            "entries": _entries(before_tree[0], before_tree[1], keys, absent_ok=True),
        },
        "after": _entries(after_tree[0], after_tree[1], keys, absent_ok=False),
        "rounds": replayed,
        "events": pack([e for other in chosen for e in other.stored]),
        "hashes": _b64(table),
    }


def _replayed(
    log: MerkleLog, chosen: list[Other], size: int, compressed: bool
) -> tuple[list[dict[str, Any]], list[bytes]]:
    """The ``rounds`` items, their proofs as indexes into the table of distinct hashes."""
    table: dict[bytes, int] = {}
    items: list[dict[str, Any]] = []
    for other in chosen:
        proof = log.inclusion_proof(other.index, size)
        item: dict[str, Any] = {
            "table": other.table,
            "round": other.round,
            "index": other.index,
            "events": len(other.stored),
            "proof": [table.setdefault(h, len(table)) for h in proof],
        }
        if compressed:
            item["stored"] = base64.b64encode(other.last_row).decode()
        items.append(item)
    return items, list(table)


def _note_before(heads: Heads, index: int) -> StoredNote | None:
    """The newest note whose tree ends before leaf ``index`` (the round closed after it)."""
    for size in reversed(heads.listing()):
        if size <= index:
            return heads.note_at(size)
    return None


def _tree_of(app: LedgerApp, note: StoredNote) -> tuple[StateTree, dict[str, Any]]:
    """The state tree of a note's snapshot, read from the checkpoints table and checked
    against the root the note signs."""
    body = note.body
    signed = read_state_line(body.extensions)
    if signed is None:
        raise BundleError(
            f"the checkpoint note of {note.size} rows signs no state root (sealed before "
            "state roots): seal again, then export against the new note"
        )
    digest = next((e.split(" ")[2] for e in body.extensions if e.startswith(SNAPSHOT_EXTENSION + " ")), None)
    with CheckpointStore(app, create=False) as store:
        stored = store.by_digest(digest) if digest and store.exists else None
        if stored is None:
            raise BundleError(f"the store holds no snapshot of the note of {note.size} rows")
        try:
            snapshot = store.snapshot(stored)
        except SnapshotError as exc:
            raise BundleError(str(exc)) from None
    entries = state_entries(snapshot.state["judge"])
    tree = StateTree.of(entries)
    if (tree.root, len(tree.keys)) != signed:
        raise BundleError(f"the stored snapshot does not give the state root the note of {note.size} signs")
    return tree, entries


def _closed_rounds(
    app: LedgerApp,
    log: MerkleLog,
    rnd: Round,
    start: int,
    size: int,
    own: int,
    decode: Callable[[str, bytes], FeedEvent | None],
) -> list[Other]:
    """The rounds of the game of ``rnd`` whose closing row is a leaf in ``[start, size)``, but
    ``rnd``'s own, in the order they closed."""
    game = GAMES[rnd.game]
    hook = game.dependency
    assert hook is not None
    if start >= size:
        return []
    first, last = log.row_id(start), log.row_id(size - 1)
    topics = [f"{rnd.game}/round_closed", f"{rnd.game}/round_voided"]
    found: list[Other] = []
    for page in app.rows(after=first - 1, topics=topics):
        for nid, oid_hex, _, _, raw in page:
            if nid > last:
                break
            index = log.index_of(nid)
            if index is None or index == own:
                continue
            oid = UUID(oid_hex)
            stored = [(r.topic, r.content) for r in app.stored(oid)]
            facts = [decode(topic, content) for topic, content in stored]
            if any(f is None for f in facts):
                raise BundleError(f"round {oid} holds an event this ledger cannot read")
            other = Round.replay([f for f in facts if f is not None])
            keys = set(hook.depends_on(other))
            found.append(Other(index, oid, other.table, other.round, stored, keys, bytes(raw)))
        else:
            continue
        break
    return found


def _closure(keys: set[str], others: list[Other]) -> list[Other]:
    """The rounds that move any of ``keys``, ``keys`` grown by theirs until nothing changes."""
    while True:
        chosen = [o for o in others if o.keys & keys]
        grown = keys.union(*(o.keys for o in chosen)) if chosen else keys
        if grown == keys:
            return chosen
        keys |= grown


def _entries(tree: StateTree, entries: dict[str, Any], keys: set[str], *, absent_ok: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in sorted(keys):
        if key not in entries:
            if absent_ok:
                continue
            raise BundleError(f"the signed state has no entry {key}: run `ledger verify`")
        index, proof = tree.proof(key)
        out[key] = {"value": entries[key], "index": index, "size": len(tree.keys), "proof": _b64(proof)}
    return out


def _b64(hashes: list[bytes]) -> str:
    """Hashes as one base64 text (32 bytes each)."""
    return base64.b64encode(b"".join(hashes)).decode()


# -- check --------------------------------------------------------------------------------


@dataclass
class StateCheck:
    """What checking a bundle's state part found: problems with the proof, and the round's
    findings as judged from the proven state."""

    problems: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    replayed: int = 0
    keys: list[str] = field(default_factory=list)


def hashes(text: Any, limit: int = 64) -> list[bytes] | None:
    """The hashes of one base64 text (``None`` if malformed or more than ``limit``)."""
    if not isinstance(text, str) or len(text) > (limit * HASH_SIZE * 4) // 3 + 4:
        return None
    try:
        raw = base64.b64decode(text, validate=True)
    except (ValueError, binascii.Error):
        return None
    if len(raw) % HASH_SIZE:
        return None
    return [raw[i : i + HASH_SIZE] for i in range(0, len(raw), HASH_SIZE)]


def check_state(
    section: dict[str, Any],
    target: Round,
    target_index: int,
    note_b: CheckpointBody,
    key: Ed25519PublicKey,
    unpack: Callable[[Any], list[tuple[str, bytes]]],
    read_round: Callable[[dict[str, Any], list[tuple[str, bytes]], int, list[bytes]], Round],
) -> StateCheck:
    """Check a bundle's ``state`` section (see the module docstring). ``note_b`` is the body of
    the bundle's note (already opened with ``key``); ``unpack`` reads the packed events of its
    rounds (``ValueError`` if it cannot); ``read_round`` reads one round from its stored events
    (topic and content of each), given its last row's leaf index and inclusion proof in ``B``,
    or raises ``ValueError`` saying what is wrong (its events, its chain, its proof, not
    closed)."""
    out = StateCheck()
    hook = GAMES[target.game].dependency
    if hook is None or section.get("game") != target.game:
        out.problems.append("the bundle's state part is not of its round's game")
        return out
    keys = set(section["keys"])
    out.keys = sorted(keys)
    signed_b = read_state_line(note_b.extensions)
    if signed_b is None:
        out.problems.append("the bundle's note signs no state root: export against a newer note")
        return out
    start, before = _check_before(section["before"], note_b, key, keys, out)
    if out.problems:
        return out
    after = _proven(section["after"], signed_b, keys, "the bundle's note", out)
    if out.problems:
        return out
    order = _read_rounds(section, start, note_b.size, unpack, read_round, out)
    if order is None:
        return out
    order.append((target_index, None))
    if not start <= target_index or len({i for i, _ in order}) != len(order):
        out.problems.append("the bundle's rounds do not close between its two notes, once each")
        return out
    _replay(sorted(order, key=lambda o: o[0]), target, hook, keys, before, after, out)
    return out


def _read_rounds(
    section: dict[str, Any],
    start: int,
    size: int,
    unpack: Callable[[Any], list[tuple[str, bytes]]],
    read_round: Callable[[dict[str, Any], list[tuple[str, bytes]], int, list[bytes]], Round],
    out: StateCheck,
) -> list[tuple[int, Round | None]] | None:
    """The state part's other rounds, each read and proven a leaf of ``[start, size)`` (``None``
    and a problem if one is not)."""
    rounds = section["rounds"]
    table = hashes(section["hashes"], limit=64 * MAX_ROUNDS)
    if not isinstance(rounds, list) or len(rounds) > MAX_ROUNDS or table is None:
        out.problems.append("the bundle's state part lists its rounds wrongly")
        return None
    stored = unpack(section["events"]) if rounds else []
    if sum(_count(item) for item in rounds) != len(stored):
        out.problems.append("the bundle's state part holds other events than its rounds")
        return None
    order: list[tuple[int, Round | None]] = []
    for item in rounds:
        name = f"{item['table']}/{item['round']}"
        index, proof, count = item["index"], _proof(item["proof"], table), _count(item)
        if type(index) is not int or not start <= index < size or proof is None:
            out.problems.append(f"round {name}: its place in the log is not proven")
            return None
        try:
            order.append((index, read_round(item, stored[:count], index, proof)))
        except ValueError as exc:
            out.problems.append(f"round {name}: {exc}")
            return None
        stored = stored[count:]
    return order


def _count(item: dict[str, Any]) -> int:
    count = item["events"]
    if type(count) is not int or count < 1:
        raise ValueError("a round's event count is not a positive number")
    return count


def _proof(indexes: Any, table: list[bytes]) -> list[bytes] | None:
    """A proof given as indexes into the bundle's table of hashes (``None`` if malformed)."""
    if not isinstance(indexes, list) or len(indexes) > 64:
        return None
    if not all(type(i) is int and 0 <= i < len(table) for i in indexes):
        return None
    return [table[i] for i in indexes]


def _check_before(
    before: Any, note_b: CheckpointBody, key: Ed25519PublicKey, keys: set[str], out: StateCheck
) -> tuple[int, dict[str, Any]]:
    """The first leaf after note ``A`` and ``A``'s proven entries (none when there is no A)."""
    if before is None:
        return 0, {}
    try:
        _, body_a = open_checkpoint(str(before["note"]), key, note_b.origin)
    except NoteError as exc:
        out.problems.append(f"the bundle's earlier note does not open with the checkpoint's key: {exc}")
        return 0, {}
    signed_a = read_state_line(body_a.extensions)
    proof = hashes(before["consistency"])
    if signed_a is None or proof is None or body_a.size > note_b.size:
        out.problems.append("the bundle's earlier note signs no state root, or is not earlier")
        return 0, {}
    if body_a.size and not verify_consistency(body_a.size, note_b.size, body_a.root, note_b.root, proof):
        out.problems.append(
            f"the bundle's earlier note (tree of {body_a.size} rows) is not of the same log as its "
            f"checkpoint note ({note_b.size} rows): the consistency proof fails"
        )
        return 0, {}
    return body_a.size, _proven(before["entries"], signed_a, keys, "the earlier note", out)


def _proven(
    entries: Any, signed: tuple[bytes, int], keys: set[str], where: str, out: StateCheck
) -> dict[str, Any]:
    """The entries of ``keys`` a section carries, each checked against the signed state root."""
    root, size = signed
    if not isinstance(entries, dict) or not set(entries) <= keys:
        out.problems.append(f"the state entries of {where} are not of the round's keys")
        return {}
    proven: dict[str, Any] = {}
    for name, entry in sorted(entries.items()):
        proof = hashes(entry["proof"])
        index = entry["index"]
        if (
            proof is None
            or type(index) is not int
            or entry["size"] != size
            or not check_entry(name, entry["value"], index, proof, root, size)
        ):
            out.problems.append(
                f"the state entry {name} is not the one {where} signs (changed, or its proof is wrong)"
            )
            return {}
        proven[name] = entry["value"]
    return proven


def _outstanding(judge: RoundJudge, target: Round) -> list[Finding]:
    """The ``carry_outstanding`` notices of ``target``'s carried bets no later round restated
    by the bundle's note (the table's newest round when sealed), as ``verify --round`` gives
    them for the table's newest round."""
    return [
        f
        for f in judge.finish()
        if f.code == "carry_outstanding" and (f.table, f.round) == (target.table, target.round)
    ]


def _replay(
    order: list[tuple[int, Round | None]],
    target: Round,
    hook: Any,
    keys: set[str],
    before: dict[str, Any],
    after: dict[str, Any],
    out: StateCheck,
) -> None:
    """Judge the rounds in closing order from ``before``; the result must be ``after``."""
    judge = RoundJudge()
    judge.load_game_state(
        target.game, hook.join({k: v["state"] for k, v in before.items() if v["state"] is not None})
    )
    moves = {k: int(v["moves"]) for k, v in before.items()}
    last: dict[str, str | None] = {k: v["last"] for k, v in before.items()}
    for _, rnd in order:
        current = target if rnd is None else rnd
        moved = set(hook.depends_on(current))
        if not moved & keys or not moved <= keys:
            out.problems.append(
                f"round {current.table}/{current.round} does not move only the bundle's state keys"
            )
            return
        judged = judge.judge_round(current)
        if rnd is None:
            out.findings = judged.findings
        for k in moved:
            moves[k] = moves.get(k, 0) + 1
            last[k] = f"{current.table}/{current.round}"
    out.replayed = len(order)
    state = judge.game_state(target.game)
    derived = hook.split(state) if state is not None else {}
    for name in sorted(keys):
        signed = after.get(name)
        if signed is None:
            out.problems.append(f"the bundle's note signs no entry {name}")
            return
        if signed["moves"] != moves.get(name, 0) or signed["last"] != last.get(name):
            out.problems.append(
                f"the state entry {name} counts {signed['moves']} rounds up to {signed['last']}; "
                f"the bundle's rounds make it {moves.get(name, 0)} up to {last.get(name)}: "
                "a round is missing, added or out of order"
            )
            return
        if derived.get(name) != signed["state"]:
            out.problems.append(
                f"the state entry {name} the rounds derive is not the one the bundle's note signs"
            )
            return
    out.findings += _outstanding(judge, target)
