"""C2SP signed notes, transparency-log checkpoints and witness cosignatures, as pure functions.

Formats (C2SP, the specifications Certificate Transparency's successors, Sigsum and Go's
checksum database share):

- ``signed-note``: a UTF-8 text ending in a newline, a blank line, then one line per signature,
  ``— NAME BASE64(KEY_ID ‖ SIGNATURE)`` (an em dash and a space first). An Ed25519 key's
  ``KEY_ID`` is the first four bytes of ``SHA-256(NAME ‖ 0x0A ‖ 0x01 ‖ PUBLIC_KEY)``; its
  verifier key is written ``NAME+HEX(KEY_ID)+BASE64(0x01 ‖ PUBLIC_KEY)``.
- ``tlog-checkpoint``: the note's text is the log's origin line, the tree size in decimal, the
  root hash in base64, then optional extension lines.
- ``tlog-cosignature`` (``cosignature/v1``): a witness signs ``"cosignature/v1\\ntime T\\n" ‖
  checkpoint text`` with Ed25519; its key ID uses the type byte ``0x04`` and the signature's bytes
  are ``KEY_ID ‖ T (8 bytes, big-endian) ‖ SIGNATURE``.

>>> from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
>>> key = Ed25519PrivateKey.generate()
>>> body = CheckpointBody("casino.example/ledger", 3, b"\\x00" * 32, ("chain abc",))
>>> note = sign_note(body.text(), "casino.example/ledger", key)
>>> open_note(note, [verifier_key("casino.example/ledger", key.public_key())]).text == body.text()
True
>>> CheckpointBody.parse(body.text()) == body
True
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

ALG_ED25519 = 0x01
ALG_COSIGNATURE_V1 = 0x04
SIGNATURE_PREFIX = "\u2014 "
MAX_NOTE_BYTES = 1 << 16
"""A note larger than this is refused unread (a checkpoint is a few hundred bytes)."""
MAX_SIGNATURES = 100


class NoteError(ValueError):
    """A note, key or checkpoint that is malformed or whose signature does not verify."""


@dataclass(frozen=True)
class Verifier:
    """A public key that may sign notes: its name, key ID, type byte and raw Ed25519 key."""

    name: str
    key_id: bytes
    algorithm: int
    public_key: Ed25519PublicKey

    def vkey(self) -> str:
        """The verifier key's text, ``NAME+HEX(ID)+BASE64(TYPE ‖ KEY)``."""
        return _vkey(self.name, self.algorithm, self.public_key)


@dataclass(frozen=True)
class NoteSignature:
    """One signature line of a note: the signer's name, key ID and the signature's bytes."""

    name: str
    key_id: bytes
    signature: bytes

    def line(self) -> str:
        """The line as written in the note (without its newline)."""
        return f"{SIGNATURE_PREFIX}{self.name} {base64.b64encode(self.key_id + self.signature).decode()}"


@dataclass(frozen=True)
class Note:
    """A signed note read back: its text and every signature line it carries."""

    text: str
    signatures: tuple[NoteSignature, ...]

    def render(self) -> str:
        """The note's bytes as text: the text, a blank line, the signature lines."""
        return self.text + "\n" + "".join(s.line() + "\n" for s in self.signatures)


def _raw(public_key: Ed25519PublicKey) -> bytes:
    return public_key.public_bytes(Encoding.Raw, PublicFormat.Raw)


def key_id(name: str, algorithm: int, public_key: Ed25519PublicKey) -> bytes:
    """The four-byte key ID of ``signed-note``: ``SHA-256(name ‖ 0x0A ‖ type ‖ key)[:4]``."""
    return hashlib.sha256(name.encode() + b"\n" + bytes([algorithm]) + _raw(public_key)).digest()[:4]


def _vkey(name: str, algorithm: int, public_key: Ed25519PublicKey) -> str:
    kid = key_id(name, algorithm, public_key)
    return f"{name}+{kid.hex()}+{base64.b64encode(bytes([algorithm]) + _raw(public_key)).decode()}"


def verifier_key(name: str, public_key: Ed25519PublicKey) -> str:
    """The verifier key of an Ed25519 note signer (a log's key)."""
    return _vkey(name, ALG_ED25519, public_key)


def cosigner_key(name: str, public_key: Ed25519PublicKey) -> str:
    """The verifier key of a witness (``cosignature/v1``, type byte 0x04)."""
    return _vkey(name, ALG_COSIGNATURE_V1, public_key)


def check_name(name: str) -> str:
    """A key or log name must be non-empty, printable, without spaces or ``+``."""
    if not name or any(c.isspace() or c == "+" or not c.isprintable() for c in name):
        raise NoteError(f"not a valid key name: {name!r} (no spaces, no '+', not empty)")
    return name


def parse_verifier(vkey: str) -> Verifier:
    """Read a verifier key ``NAME+HEX(ID)+BASE64(TYPE ‖ KEY)``; :class:`NoteError` if malformed."""
    parts = vkey.strip().split("+", 2)  # the key's base64 may itself hold a '+'
    if len(parts) != 3:
        raise NoteError("a verifier key is NAME+KEYID+KEY (three parts joined by '+')")
    name, hex_id, b64 = parts
    check_name(name)
    try:
        kid = bytes.fromhex(hex_id)
        raw = base64.b64decode(b64, validate=True)
    except (ValueError, binascii.Error):
        raise NoteError("a verifier key's ID is not hex or its key is not base64") from None
    if len(kid) != 4 or len(raw) != 33 or raw[0] not in (ALG_ED25519, ALG_COSIGNATURE_V1):
        raise NoteError(
            "a verifier key must be a 4-byte ID and an Ed25519 key of type 0x01 "
            "(a log) or 0x04 (a witness's cosignature/v1)"
        )
    public = Ed25519PublicKey.from_public_bytes(raw[1:])
    if key_id(name, raw[0], public) != kid:
        raise NoteError(f"the verifier key of {name!r} has a key ID that does not match its key")
    return Verifier(name, kid, raw[0], public)


def sign_note(text: str, name: str, key: Ed25519PrivateKey) -> str:
    """A signed note of ``text`` (which must end in a newline) by the Ed25519 signer ``name``."""
    _check_text(text)
    kid = key_id(check_name(name), ALG_ED25519, key.public_key())
    return Note(text, (NoteSignature(name, kid, key.sign(text.encode())),)).render()


def parse_note(note: str | bytes) -> Note:
    """Split a signed note into its text and signature lines; :class:`NoteError` if malformed."""
    if isinstance(note, bytes):
        if len(note) > MAX_NOTE_BYTES:
            raise NoteError(f"a note is at most {MAX_NOTE_BYTES} bytes")
        try:
            note = note.decode("utf-8")
        except UnicodeDecodeError:
            raise NoteError("a note is UTF-8 text") from None
    if len(note) > MAX_NOTE_BYTES:
        raise NoteError(f"a note is at most {MAX_NOTE_BYTES} bytes")
    cut = note.rfind("\n\n")
    if cut < 0 or not note.endswith("\n"):
        raise NoteError("a signed note is its text, a blank line, then signature lines")
    text, lines = note[: cut + 1], note[cut + 2 :].splitlines()
    _check_text(text)
    if not lines or len(lines) > MAX_SIGNATURES:
        raise NoteError(f"a signed note carries 1 to {MAX_SIGNATURES} signature lines")
    return Note(text, tuple(parse_signature_line(line) for line in lines))


def parse_signature_line(line: str) -> NoteSignature:
    """One ``— NAME BASE64`` line; :class:`NoteError` if malformed."""
    if not line.startswith(SIGNATURE_PREFIX):
        raise NoteError("a signature line starts with an em dash and a space")
    parts = line[len(SIGNATURE_PREFIX) :].split(" ")
    if len(parts) != 2:
        raise NoteError("a signature line is '— NAME SIGNATURE'")
    try:
        raw = base64.b64decode(parts[1], validate=True)
    except (ValueError, binascii.Error):
        raise NoteError("a signature is not base64") from None
    if len(raw) < 5:
        raise NoteError("a signature is shorter than its key ID")
    return NoteSignature(check_name(parts[0]), raw[:4], raw[4:])


def _check_text(text: str) -> None:
    if not text.endswith("\n") or "\n\n" in text or text.startswith("\n"):
        raise NoteError("a note's text ends in one newline and has no blank line")
    if any(not (c.isprintable() or c == "\n") for c in text):
        raise NoteError("a note's text has a control character")


def open_note(note: str | bytes, verifiers: Sequence[str | Verifier]) -> Note:
    """Parse a note and require a valid Ed25519 signature by at least one of ``verifiers``.

    Signatures by unknown keys are kept (a checkpoint may carry cosignatures); a signature by a
    known key that does not verify is an error.
    """
    parsed = parse_note(note)
    keys = [v if isinstance(v, Verifier) else parse_verifier(v) for v in verifiers]
    known = {(k.name, k.key_id): k for k in keys if k.algorithm == ALG_ED25519}
    good = 0
    for sig in parsed.signatures:
        k = known.get((sig.name, sig.key_id))
        if k is None:
            continue
        try:
            k.public_key.verify(sig.signature, parsed.text.encode())
        except InvalidSignature:
            raise NoteError(f"the signature of {sig.name} does not verify") from None
        good += 1
    if not good:
        names = ", ".join(sorted({k.name for k in keys})) or "no key"
        raise NoteError(f"the note carries no signature by {names}")
    return parsed


@dataclass(frozen=True)
class CheckpointBody:
    """The text of a ``tlog-checkpoint``: origin, tree size, root hash and extension lines."""

    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def text(self) -> str:
        """The note text: one line each, each ending in a newline."""
        lines = [self.origin, str(self.size), base64.b64encode(self.root).decode(), *self.extensions]
        return "".join(line + "\n" for line in lines)

    @classmethod
    def parse(cls, text: str) -> CheckpointBody:
        """Read a checkpoint's text; :class:`NoteError` if it is not one."""
        _check_text(text)
        lines = text.splitlines()
        if len(lines) < 3:
            raise NoteError("a checkpoint is an origin, a tree size and a root hash")
        origin, size, root = lines[:3]
        if not origin or origin != origin.strip():
            raise NoteError("a checkpoint's origin line is empty or padded")
        if (
            not size.isascii()
            or not size.isdigit()
            or (size != "0" and size.startswith("0"))
            or len(size) > 20
        ):
            raise NoteError("a checkpoint's tree size is a decimal number without leading zeros")
        try:
            raw = base64.b64decode(root, validate=True)
        except (ValueError, binascii.Error):
            raise NoteError("a checkpoint's root hash is not base64") from None
        if len(raw) != 32:
            raise NoteError("a checkpoint's root hash is 32 bytes")
        if any(not line for line in lines[3:]):
            raise NoteError("a checkpoint's extension line is empty")
        return cls(origin, int(size), raw, tuple(lines[3:]))


def cosigned_message(text: str, timestamp: int) -> bytes:
    """What a witness signs for ``cosignature/v1``."""
    return f"cosignature/v1\ntime {timestamp}\n".encode() + text.encode()


def cosign(text: str, name: str, key: Ed25519PrivateKey, timestamp: int) -> NoteSignature:
    """A witness's ``cosignature/v1`` of a checkpoint text at ``timestamp`` (Unix seconds)."""
    kid = key_id(check_name(name), ALG_COSIGNATURE_V1, key.public_key())
    sig = key.sign(cosigned_message(text, timestamp))
    return NoteSignature(name, kid, struct.pack(">Q", timestamp) + sig)


def cosignature_time(sig: NoteSignature, witness: Verifier, text: str) -> int | None:
    """The timestamp of a valid ``cosignature/v1`` by ``witness`` on ``text``, else ``None``."""
    if (
        witness.algorithm != ALG_COSIGNATURE_V1
        or (sig.name, sig.key_id) != (witness.name, witness.key_id)
        or len(sig.signature) != 72
    ):
        return None
    (timestamp,) = struct.unpack(">Q", sig.signature[:8])
    try:
        witness.public_key.verify(sig.signature[8:], cosigned_message(text, timestamp))
    except InvalidSignature:
        return None
    return int(timestamp)


def cosigners(note: Note, witnesses: Sequence[str | Verifier]) -> list[str]:
    """The names of the given witnesses with a valid cosignature on the note (each once)."""
    keys = [w if isinstance(w, Verifier) else parse_verifier(w) for w in witnesses]
    found: set[str] = set()
    for w in keys:
        if any(cosignature_time(s, w, note.text) is not None for s in note.signatures):
            found.add(w.vkey())
    return sorted(k.name for k in keys if k.vkey() in found)


def require_quorum(note: Note, witnesses: Sequence[str | Verifier], quorum: int) -> list[str]:
    """The cosigners among ``witnesses``, or :class:`NoteError` naming what is missing when fewer
    than ``quorum`` distinct witness keys cosigned the note."""
    keys = [w if isinstance(w, Verifier) else parse_verifier(w) for w in witnesses]
    if quorum < 1 or quorum > len({k.vkey() for k in keys}):
        raise NoteError(
            f"a quorum of {quorum} needs at least that many distinct witness keys "
            f"(given {len({k.vkey() for k in keys})})"
        )
    names = cosigners(note, keys)
    if len(names) < quorum:
        missing = sorted({k.name for k in keys} - set(names))
        raise NoteError(
            f"{len(names)} of {quorum} required cosignatures are valid; none valid from {', '.join(missing)}"
        )
    return names
