"""The stored frame of a fact, split: ``{"chain":"<digest>","fact":<content>}`` → digest, content.

``ledger.codec.chain`` defines the frame (:func:`~ledger.codec.chain.frame`,
:func:`~ledger.codec.chain.unframe`);
the integrity check splits one frame per stored row, so :func:`splitter` gives it a split made
for that: on a store without cipher or compressor a well-formed frame is cut in place, and the
digest stays the stored ASCII bytes (what the next digest hashes); anything else goes through
``unframe`` (or the mapper's ``open_state``), whose :class:`~ledger.domain.errors.FrameError` is the
one reported. ``fast=False`` is the reference: always the full path.
"""

from __future__ import annotations

from collections.abc import Callable

from ledger.codec.chain import FRAME_HEAD, FRAME_MID, FRAME_TAIL, FrameError, unframe

_DIGEST_START = len(FRAME_HEAD)
_DIGEST_END = _DIGEST_START + 64
_CONTENT_START = _DIGEST_END + len(FRAME_MID)

Split = Callable[[bytes], tuple[bytes, bytes]]
"""Stored bytes → (digest as ASCII bytes, content); raises :class:`FrameError`."""


def splitter(open_state: Callable[[bytes], tuple[str, bytes]] | None = None, *, fast: bool = True) -> Split:
    """How to split each stored row: ``open_state`` decrypts and decompresses first (a store
    with a cipher or compressor), ``None`` is a plain store."""
    opener = unframe if open_state is None else open_state

    def plain(state: bytes) -> tuple[bytes, bytes]:
        text, content = opener(state)
        return text.encode("ascii"), content

    if open_state is not None or not fast:
        return plain
    return split_plain


def split_plain(state: bytes) -> tuple[bytes, bytes]:
    """:func:`~ledger.codec.chain.unframe` of a plain store's row, the digest as its stored bytes."""
    if (
        state.startswith(FRAME_HEAD)
        and state.endswith(FRAME_TAIL)
        and state[_DIGEST_END:_CONTENT_START] == FRAME_MID
    ):
        digest = state[_DIGEST_START:_DIGEST_END]
        if not digest.isascii():  # what unframe refuses
            raise FrameError("the stored digest is not text")
        return digest, state[_CONTENT_START:-1]
    text, content = unframe(state)
    return text.encode("ascii"), content
