"""The witness's state directory: per log, the latest checkpoint it cosigned.

``DIR/witness.json`` marks an initialised state (made once, by ``serve --init`` or ``cosign
--init``); a missing or empty directory is refused otherwise, so that a state lost by mistake is
never silently replaced by a fresh one that would cosign any history (docs/WITNESS.md). Each log
has ``DIR/logs/HEX.checkpoint`` (``HEX`` = SHA-256 of the origin), the signed note exactly as the
witness cosigned it. A file is replaced atomically: written to a temporary file, flushed to disk,
renamed over the old one, and the directory flushed, so a crash leaves the old or the new state,
never a half one. ``DIR/lock`` is held (``flock``) while a witness process uses the directory;
``witness.json`` names the witness key the state was made for, and another key is refused.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import IO

MARKER = "witness.json"
FORMAT = "ledger-witness-state-v1"


class StateError(Exception):
    """A state directory that is missing, not initialised, unreadable or in use."""


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data``: temporary file, fsync, rename, fsync of the directory."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


class WitnessState:
    """An opened state directory (locked against a second witness process until closed)."""

    def __init__(self, root: str | Path, *, init: bool = False, witness: str = "") -> None:
        self.root = Path(root)
        marker = self.root / MARKER
        if init:
            self._initialise(witness)
        elif not marker.is_file():
            raise StateError(
                f"{self.root} is not a witness state directory (no {MARKER}); pass --init to "
                "start a new, empty state. A new state cosigns the next checkpoint of each log "
                "without knowing what was cosigned before: see docs/WITNESS.md"
            )
        self._check_owner(marker, witness)
        self.logs = self.root / "logs"
        self._lock: IO[bytes] | None = self._take_lock()

    def _check_owner(self, marker: Path, witness: str) -> None:
        """A state belongs to the witness key it was made for: another key is refused."""
        try:
            owner = json.loads(marker.read_text(encoding="utf-8")).get("witness", "")
        except (OSError, ValueError, AttributeError) as exc:
            raise StateError(f"{marker} is not readable: {exc}") from None
        if witness and owner and owner != witness:
            raise StateError(f"{self.root} is the state of witness {owner}, not of {witness}")

    def _initialise(self, witness: str) -> None:
        if (self.root / MARKER).exists() or (self.root.exists() and any(self.root.iterdir())):
            raise StateError(
                f"{self.root} is not empty: --init makes a new state only in a new or empty directory"
            )
        try:
            (self.root / "logs").mkdir(parents=True, exist_ok=True)
            write_atomically(
                self.root / MARKER, json.dumps({"format": FORMAT, "witness": witness}).encode() + b"\n"
            )
        except OSError as exc:
            raise StateError(f"cannot create the state {self.root}: {exc.strerror or exc}") from None

    def _take_lock(self) -> IO[bytes]:
        try:
            stream = open(self.root / "lock", "ab")  # noqa: SIM115 - held until close()
        except OSError as exc:
            raise StateError(f"cannot open {self.root / 'lock'}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(stream.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            stream.close()
            raise StateError(f"{self.root} is in use by another witness process") from None
        return stream

    def close(self) -> None:
        """Release the directory's lock."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def _path(self, origin: str) -> Path:
        return self.logs / (hashlib.sha256(origin.encode()).hexdigest() + ".checkpoint")

    def latest(self, origin: str) -> bytes | None:
        """The signed note of the latest checkpoint cosigned for ``origin``, if any."""
        try:
            return self._path(origin).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StateError(f"cannot read the state of {origin}: {exc.strerror or exc}") from None

    def store(self, origin: str, note: bytes) -> None:
        """Make ``note`` the latest cosigned checkpoint of ``origin`` (atomically)."""
        write_atomically(self._path(origin), note)
