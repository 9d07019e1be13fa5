"""The signed state, provable part by part: a Merkle tree over the state's per-key entries.

``ledger seal`` signs the verifier's snapshot (``ledger.verify.snapshot``) as one digest; a proof
bundle cannot carry a whole snapshot. So the checkpoint note also signs, on an extension line,

    ledger/state BASE64(ROOT) N

the root of an RFC 6962 tree (``ledger.merkle.rfc6962``) of ``N`` leaves, one per key of the state
that rounds carry to later rounds, sorted by key. The keys and the split of each game's state
into them are the game's (its ``dependency.py``, :class:`~ledger.games.base.Dependency`): a
3CB table (its shoe, its carried bets), an SP9 table (its bank), a STUD linked pool and a STUD
table's carried jackpot bets. A leaf is the canonical JSON (sorted keys, no spaces, ASCII) of

    [KEY, {"state": VALUE, "moves": M, "last": "TABLE/ROUND"}]

where ``M`` counts the rounds that moved the key since the log began and ``last`` names the
newest of them (``RoundJudge`` counts them). The count is what makes a bundle complete: the
rounds a bundle replays between two notes must be exactly ``M(after) - M(before)`` rounds, the
last of them ``last``, or a round was left out.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ledger.games import GAMES
from ledger.merkle.rfc6962 import HASH_SIZE, leaf_hash, reference_inclusion, reference_root, verify_inclusion
from ledger.verify.judge import RoundJudge

STATE_EXTENSION = "ledger/state"


def canonical(obj: Any) -> bytes:
    """Sorted keys, no spaces, ASCII: the bytes a leaf hashes."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def entry_leaf(key: str, value: Any) -> bytes:
    """The leaf hash of one entry."""
    return leaf_hash(canonical([key, value]))


def state_entries(judge_state: dict[str, Any]) -> dict[str, Any]:
    """Every entry of the state a snapshot's ``judge`` part holds, sorted by key."""
    judge = RoundJudge()
    judge.load(judge_state)
    entries: dict[str, Any] = {}
    present = set(judge_state.get("sessions", {})) | set(judge_state.get("carrying", {}))
    for key in sorted(present):  # only the games the state holds: no other game is imported
        game = GAMES[key]
        hook = game.dependency
        state = judge.game_state(key) if hook is not None else None
        if hook is None or state is None:
            continue
        for part, value in hook.split(state).items():
            entries[part] = {"state": value, "moves": 0, "last": None}
    for part, (moves, last) in judge_state.get("moves", {}).items():
        entries.setdefault(part, {"state": None})
        entries[part].update(moves=moves, last=last)
    return dict(sorted(entries.items()))


@dataclass(frozen=True)
class StateTree:
    """The tree of a state's entries: its root, and the proof of any entry."""

    keys: tuple[str, ...]
    leaves: tuple[bytes, ...]

    @classmethod
    def of(cls, entries: dict[str, Any]) -> StateTree:
        """The tree of ``entries`` (taken in key order)."""
        keys = tuple(sorted(entries))
        return cls(keys, tuple(entry_leaf(k, entries[k]) for k in keys))

    @property
    def root(self) -> bytes:
        """The tree's root (the empty tree's when there is no entry)."""
        return reference_root(self.leaves)

    def proof(self, key: str) -> tuple[int, list[bytes]]:
        """The index and inclusion proof of ``key``'s entry; ``KeyError`` if absent."""
        index = self.keys.index(key) if key in self.keys else -1
        if index < 0:
            raise KeyError(key)
        return index, reference_inclusion(index, self.leaves)

    def line(self) -> str:
        """The note's extension line."""
        return f"{STATE_EXTENSION} {base64.b64encode(self.root).decode()} {len(self.keys)}"


def state_line(judge_state: dict[str, Any]) -> str:
    """The extension line of a snapshot's ``judge`` state."""
    return StateTree.of(state_entries(judge_state)).line()


def read_state_line(extensions: Sequence[str]) -> tuple[bytes, int] | None:
    """The state root and entry count a note signs, ``None`` without a (well-formed) line."""
    for line in extensions:
        parts = line.split(" ")
        if parts[0] != STATE_EXTENSION or len(parts) != 3 or not parts[2].isdigit():
            continue
        try:
            root = base64.b64decode(parts[1], validate=True)
        except (ValueError, binascii.Error):
            return None
        return (root, int(parts[2])) if len(root) == HASH_SIZE else None
    return None


def check_entry(key: str, value: Any, index: int, proof: Sequence[bytes], root: bytes, size: int) -> bool:
    """Whether ``[key, value]`` is leaf ``index`` of the state tree of ``size`` entries and
    ``root``."""
    return 0 <= index < size and verify_inclusion(entry_leaf(key, value), index, size, proof, root)


__all__ = [
    "STATE_EXTENSION",
    "StateTree",
    "check_entry",
    "entry_leaf",
    "read_state_line",
    "state_entries",
    "state_line",
]
