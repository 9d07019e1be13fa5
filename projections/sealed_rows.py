"""How view rows are stored: in clear, or encrypted under ``LEDGER_CIPHER_KEY``; and the
position each view's rows were written at, so an edited tracking record is caught.

**Encryption.** With a cipher key (the store's events are then encrypted too), nothing derived
is stored in clear either:

- a row's text is stored as ``enc:`` + base64 of AES-GCM over ``[key, text]`` (the key inside
  the ciphertext, so a row moved under another key is refused);
- a row's key is stored as its leading letters (``c``, ``r``, ``table``… the kind of row, which
  prefix scans need) then ``|`` and an HMAC-SHA-256 of the whole key under a key derived from
  the cipher key. Player ids, tables and hours never appear in clear.

**The written position.** With every batch, the updater writes a row :data:`META_KEY` holding
the position and version the view's rows were written at, in the same transaction as the
tracking record. A tracking record that disagrees with it (a position set back by hand, which
would fold rounds a second time) makes every read of the view fail with
:class:`ViewTampered`. A view with a tracking record and no such row (written by an older
release) is treated as stale: it is rebuilt from position 0, which can never count twice.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from typing import Any

from ledger.domain.errors import StoreError

ENCRYPTED = "enc:"
_KIND = re.compile(r"[A-Za-z~]*")
"""The leading letters of a row key (``c``, ``r``, ``table``…): the kind of row, kept in clear
so prefix scans still narrow in SQL."""
META_KEY = "~written"
"""The key of the row holding the position and version a view's rows were written at."""
STALE = -1
"""The version reported for a view that must be rebuilt from position 0."""


class ViewTampered(StoreError):
    """A view's tracking record does not match the position its rows were written at."""


class ViewKeyError(StoreError):
    """View rows that cannot be read with the cipher key given (or without one)."""


class RowCodec:
    """Stored key and text of view rows, in clear or encrypted (see the module docstring)."""

    def __init__(self, cipher: Any | None, cipher_key: str | None) -> None:
        self.cipher = cipher if cipher_key else None
        self._mac = (
            hashlib.sha256(b"ledger view keys\x00" + cipher_key.encode()).digest()
            if self.cipher is not None and cipher_key
            else b""
        )

    @property
    def encrypted(self) -> bool:
        """Whether rows are written encrypted."""
        return self.cipher is not None

    def stored_key(self, key: str) -> str:
        """The key as stored."""
        if self.cipher is None:
            return key
        kind = _KIND.match(key).group()  # type: ignore[union-attr]
        return kind + "|" + hmac.new(self._mac, key.encode(), hashlib.sha256).hexdigest()

    def sql_prefix(self, prefix: str) -> str:
        """A prefix of stored keys that every stored key of a row under ``prefix`` starts with."""
        if self.cipher is None:
            return prefix
        return _KIND.match(prefix).group()  # type: ignore[union-attr]

    def seal(self, key: str, text: str) -> str:
        """The stored text of a row."""
        if self.cipher is None:
            return text
        payload = json.dumps([key, text], separators=(",", ":"), ensure_ascii=False).encode()
        return ENCRYPTED + base64.b64encode(self.cipher.encrypt(payload)).decode("ascii")

    def open(self, view: str, stored_key: str, stored: str) -> tuple[str, str]:
        """``(key, text)`` of a stored row (its key as the view knows it)."""
        if not stored.startswith(ENCRYPTED):
            if self.cipher is not None:
                raise ViewKeyError(
                    f"view {view}: a row is stored in clear although "
                    "LEDGER_CIPHER_KEY is set: the view tables were edited"
                )
            return stored_key, stored
        if self.cipher is None:
            raise ViewKeyError(
                f"view {view}: its rows are encrypted: set LEDGER_CIPHER_KEY "
                "(the key the store was written with) to read them"
            )
        try:
            key, text = json.loads(self.cipher.decrypt(base64.b64decode(stored[4:])))
        except Exception:  # the cipher raises several kinds on a wrong key or changed bytes
            raise ViewKeyError(
                f"view {view}: its rows cannot be decrypted: LEDGER_CIPHER_KEY "
                "is not the key they were written with, or they were changed"
            ) from None
        if self.stored_key(str(key)) != stored_key:
            raise ViewKeyError(
                f"view {view}: a row is stored under another row's key: the view tables were edited"
            )
        return str(key), str(text)

    def meta(self, position: int, version: int) -> tuple[str, str]:
        """The stored key and text of a view's written-position row."""
        text = json.dumps({"position": position, "version": version})
        return self.stored_key(META_KEY), self.seal(META_KEY, text)

    def checked(self, view: str, position: int, version: int, meta: str | None) -> int:
        """The version to believe for a tracking record, given its written-position row:
        the stored version, or :data:`STALE` (rebuild from 0). Raises :class:`ViewTampered` if
        the two disagree, :class:`ViewKeyError` if the row cannot be read with this key."""
        if meta is None:
            return STALE
        if self.cipher is not None and not meta.startswith(ENCRYPTED):
            return STALE  # written in clear before the key was set: rebuilt encrypted
        _, text = self.open(view, self.stored_key(META_KEY), meta)
        try:
            written = json.loads(text)
            at, under = int(written["position"]), int(written["version"])
        except (ValueError, KeyError, TypeError):
            raise ViewTampered(
                f"view {view}: its written-position row is unreadable: the view tables were edited"
            ) from None
        if (at, under) != (position, version):
            raise ViewTampered(
                f"view {view}: its tracking record says position {position}, but its rows were "
                f"written at position {at}: the view tables were edited (a position set back "
                "would count rounds twice). Refusing to read it; delete its tracking record "
                "to have it rebuilt from the log on the next update"
            )
        return version
