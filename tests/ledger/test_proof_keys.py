"""The sealing and witness keys are read by one loader (``ledger.proof.seal.parse_key``) for
private and public keys alike: PEM or base64 of the 32 raw bytes, and the same refusals."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ledger.proof.seal import (
    PRIVATE_KEY,
    PUBLIC_KEY,
    SealError,
    parse_key,
    parse_private_key,
    parse_public_key,
    private_pem,
    public_pem,
    raw_public,
)

KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
RSA = rsa.generate_private_key(public_exponent=65537, key_size=1024)


def _raw_private(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )


def test_both_kinds_read_pem_and_raw_base64_with_blanks_around() -> None:
    public = KEY.public_key()
    for text in (private_pem(KEY), b"\n " + base64.b64encode(_raw_private(KEY)) + b"\n"):
        key = parse_private_key(text)
        assert isinstance(key, Ed25519PrivateKey) and _raw_private(key) == _raw_private(KEY)
        assert _raw_private(parse_key(text, PRIVATE_KEY)) == _raw_private(KEY)
    for text in (public_pem(public), base64.b64encode(raw_public(public)) + b"\n"):
        key_pub = parse_public_key(text)
        assert isinstance(key_pub, Ed25519PublicKey) and raw_public(key_pub) == raw_public(public)
        assert raw_public(parse_key(text, PUBLIC_KEY)) == raw_public(public)


@pytest.mark.parametrize(
    ("kind", "text", "message"),
    [
        (PRIVATE_KEY, b"garbage", "^not an Ed25519 private key: "),
        (PUBLIC_KEY, b"garbage", "^not an Ed25519 public key: "),
        (PRIVATE_KEY, base64.b64encode(b"x" * 31), "^not an Ed25519 private key: .*32 bytes"),
        (PUBLIC_KEY, base64.b64encode(b"x" * 31), "^not an Ed25519 public key: .*32 bytes"),
        (PRIVATE_KEY, public_pem(KEY.public_key()), "^not an Ed25519 private key: "),
        (PUBLIC_KEY, private_pem(KEY), "^not an Ed25519 public key: "),
        (
            PRIVATE_KEY,
            RSA.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            ),
            "^the key is RSAPrivateKey, not Ed25519$",
        ),
        (
            PUBLIC_KEY,
            RSA.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            ),
            "^the key is RSAPublicKey, not Ed25519$",
        ),
    ],
)
def test_what_is_not_a_key_of_the_kind_asked_is_refused_with_one_line(kind, text, message) -> None:
    with pytest.raises(SealError, match=message):
        parse_key(text, kind)
    wrapper = parse_private_key if kind is PRIVATE_KEY else parse_public_key
    with pytest.raises(SealError, match=message):
        wrapper(text)
