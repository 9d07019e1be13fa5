"""Witness keys and the logs a witness follows.

A witness key is an Ed25519 key pair in the files ``ledger keygen`` writes (``W.key``, PEM,
mode 0600, and ``W.key.pub``, PEM); ``ledger witness keygen`` also writes ``W.key.vkey``, the
C2SP verifier key ``NAME+KEYID+BASE64(0x04 ‖ KEY)`` of its ``cosignature/v1`` signatures. A
witness's name is chosen at keygen (``--name``) and is part of its key ID; without one it is
derived from the public key (``ledger-witness-`` and 16 hex digits), so that the public key file
alone identifies the witness. :func:`load_witness_key` reads either file.

A log is named by its origin and trusted through its operator's public key (PEM or base64, as
``ledger keygen`` writes it, the signer's name being the origin; or a verifier key file).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ledger.proof.note import (
    ALG_COSIGNATURE_V1,
    ALG_ED25519,
    NoteError,
    Verifier,
    check_name,
    cosigner_key,
    parse_verifier,
    verifier_key,
)
from ledger.proof.seal import (
    SealError,
    parse_private_key,
    parse_public_key,
    private_pem,
    public_pem,
    raw_public,
)

NAME_FILE_SUFFIX = ".vkey"


class WitnessKeyError(ValueError):
    """A witness or log key file that cannot be read or used."""


def default_name(public_key: Ed25519PublicKey) -> str:
    """The witness name derived from its public key, for a key made without ``--name``."""
    return "ledger-witness-" + hashlib.sha256(raw_public(public_key)).hexdigest()[:16]


@dataclass(frozen=True)
class WitnessKey:
    """A witness's signing key and the name its cosignatures carry."""

    name: str
    private_key: Ed25519PrivateKey

    def vkey(self) -> str:
        """The C2SP verifier key auditors pass to ``--witness-key``."""
        return cosigner_key(self.name, self.private_key.public_key())


def _read(path: str | Path, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise WitnessKeyError(f"cannot read the {what} {path}: {exc.strerror or exc}") from None


def write_key_files(out: str | Path, name: str | None, *, force: bool = False) -> WitnessKey:
    """Make a witness key: ``OUT`` (private, 0600), ``OUT.pub`` (public PEM), ``OUT.vkey``."""
    paths = [Path(out), Path(f"{out}.pub"), Path(f"{out}{NAME_FILE_SUFFIX}")]
    for path in paths:
        if path.exists() and not force:
            raise WitnessKeyError(f"{path} exists (use --force to overwrite)")
    key = Ed25519PrivateKey.generate()
    try:
        witness = WitnessKey(check_name(name) if name is not None else default_name(key.public_key()), key)
    except NoteError as exc:
        raise WitnessKeyError(str(exc)) from None
    fd = os.open(paths[0], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as stream:
        stream.write(private_pem(key))
    paths[1].write_bytes(public_pem(key.public_key()))
    paths[2].write_text(witness.vkey() + "\n", encoding="utf-8")
    return witness


def load_signing_key(path: str | Path, name: str | None = None) -> WitnessKey:
    """The witness's private key; its name is ``name``, else the one in ``PATH.vkey`` if that file
    exists, else the one derived from the key."""
    try:
        key = parse_private_key(_read(path, "witness key"))
    except SealError as exc:
        raise WitnessKeyError(f"{path}: {exc}") from None
    if name is None:
        vkey_path = Path(f"{path}{NAME_FILE_SUFFIX}")
        if vkey_path.exists():
            verifier = _parse_vkey(_read(vkey_path, "witness verifier key"), vkey_path)
            if verifier.public_key.public_bytes_raw() != raw_public(key.public_key()):
                raise WitnessKeyError(f"{vkey_path} is the verifier key of another key than {path}")
            name = verifier.name
        else:
            name = default_name(key.public_key())
    try:
        return WitnessKey(check_name(name), key)
    except NoteError as exc:
        raise WitnessKeyError(str(exc)) from None


def _parse_vkey(data: bytes, path: str | Path) -> Verifier:
    try:
        return parse_verifier(data.decode("utf-8"))
    except (NoteError, UnicodeDecodeError) as exc:
        raise WitnessKeyError(f"{path}: {exc}") from None


_VKEY = re.compile(rb"\A[^+\s]+\+[0-9a-fA-F]{8}\+\S+\Z")


def _is_vkey(data: bytes) -> bool:
    """A verifier key (``NAME+8 HEX+BASE64``), not a PEM or base64 key (whose base64 may hold
    '+' too)."""
    return _VKEY.match(data.strip()) is not None


def load_witness_key(path: str | Path) -> Verifier:
    """A witness's public key for checking cosignatures: a verifier key file (``W.key.vkey``) or
    a public key file (``W.key.pub``, whose name is then the derived default)."""
    data = _read(path, "witness key")
    if _is_vkey(data):
        verifier = _parse_vkey(data, path)
        if verifier.algorithm != ALG_COSIGNATURE_V1:
            raise WitnessKeyError(
                f"{path} is a log's key (type 0x01), not a witness's cosignature/v1 key (type 0x04)"
            )
        return verifier
    try:
        public = parse_public_key(data)
    except SealError as exc:
        raise WitnessKeyError(f"{path}: {exc}") from None
    return parse_verifier(cosigner_key(default_name(public), public))


def load_log_key(origin: str, path: str | Path) -> Verifier:
    """The operator's key of the log ``origin``: a public key file (signer name = the origin) or a
    verifier key file of type 0x01."""
    data = _read(path, "operator key")
    if _is_vkey(data):
        verifier = _parse_vkey(data, path)
        if verifier.algorithm != ALG_ED25519:
            raise WitnessKeyError(f"{path} is not a log's Ed25519 note key (type 0x01)")
        return verifier
    try:
        public: Ed25519PublicKey = parse_public_key(data)
        return parse_verifier(verifier_key(check_name(origin), public))
    except (SealError, NoteError) as exc:
        raise WitnessKeyError(f"{path}: {exc}") from None


def parse_log_option(value: str) -> tuple[str, Verifier]:
    """``ORIGIN=OPERATOR.pub`` → the origin and its operator's key."""
    origin, sep, path = value.partition("=")
    if not sep or not origin or not path:
        raise WitnessKeyError(f"--log {value!r}: expected ORIGIN=OPERATOR.pub")
    return origin, load_log_key(origin, path)
