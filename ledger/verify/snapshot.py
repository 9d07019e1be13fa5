"""The verifier's state at a chain link, as one canonical, hashable value.

A :class:`Snapshot` holds everything ``ledger verify`` needs to continue from a point of the log
without reading what came before it:

- ``chain``: the integrity chain's position (events counted, the newest link's digest) and the
  last version and digest of every aggregate that can still grow (tables, rounds in play, the
  chain itself);
- ``rounds``: the stored content of every round still in play, as it was read;
- ``tables``: each table's newest started round;
- ``judge``: the state each game carries from round to round (3CB carried bets and shoe, SP9
  bank runs and capital, STUD jackpot pools and meters, Mah-Jong sessions), each owned and
  serialised by its game's folder.

It is taken right after a chain link row (``position`` is that row's notification id), where
every event stored is covered by a link. :meth:`Snapshot.dumps` is canonical (sorted keys, no
spaces), so two verifiers that reach the same point of the same log produce the same bytes and
the same :attr:`Snapshot.digest`: a checkpoint signs that digest (``ledger seal``), and a segment
verify ends by comparing the state it derived with the next snapshot.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from ledger.domain.errors import SealError

SNAPSHOT_FORMAT = "ledger-snapshot-v1"


class SnapshotError(SealError):
    """Bytes that are not a snapshot, or a snapshot that does not fit where it is used."""


@dataclass(frozen=True)
class Snapshot:
    """The verifier's state right after the chain link row at notification id ``position``."""

    position: int
    """Notification id of the chain link row the state stands after."""
    links: int
    """That link's version (how many saves the store had)."""
    events: int
    """Stored events (feed, table and link events) read up to and including that row."""
    head: str
    """That link's digest."""
    state: dict[str, Any]
    """``chain``, ``rounds``, ``tables``, ``judge`` (see the module docstring)."""

    def to_json(self) -> dict[str, Any]:
        """The snapshot as one JSON object."""
        return {
            "format": SNAPSHOT_FORMAT,
            "position": self.position,
            "links": self.links,
            "events": self.events,
            "head": self.head,
            "state": self.state,
        }

    def dumps(self) -> bytes:
        """Canonical bytes: sorted keys, no spaces, ASCII."""
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()

    @property
    def digest(self) -> str:
        """SHA-256 of :meth:`dumps`, in hex: what a checkpoint signs."""
        return hashlib.sha256(self.dumps()).hexdigest()

    @classmethod
    def loads(cls, data: bytes | str) -> Snapshot:
        """Read :meth:`dumps` output; :class:`SnapshotError` if it is not a snapshot."""
        try:
            obj = json.loads(data)
            if not isinstance(obj, dict) or obj.get("format") != SNAPSHOT_FORMAT:
                raise ValueError(f"not a {SNAPSHOT_FORMAT} object")
            position, links, events, head, state = (
                obj["position"],
                obj["links"],
                obj["events"],
                obj["head"],
                obj["state"],
            )
            if (
                type(position) is not int
                or type(links) is not int
                or type(events) is not int
                or links < 1
                or events < 1
                or not isinstance(head, str)
                or len(head) != 64
                or not isinstance(state, dict)
            ):
                raise ValueError("position, links, events, head or state out of range")
            for part in ("chain", "rounds", "tables", "judge"):
                if not isinstance(state.get(part), dict):
                    raise ValueError(f"state has no {part!r} object")
        except (ValueError, KeyError, TypeError) as exc:
            raise SnapshotError(f"not a snapshot: {exc}") from None
        except RecursionError:
            raise SnapshotError("not a snapshot: its JSON is nested too deeply") from None
        return cls(position, links, events, head, state)
