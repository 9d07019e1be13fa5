"""The chain check's split of a stored frame (``ledger.codec.frame``) equals ``unframe``.

Over well-formed frames and damaged ones (bytes cut, changed or added anywhere, a digest that is
not ASCII), the fast split gives the same digest and content, or the same ``FrameError``, as
the reference split (``fast=False``: ``ledger.codec.chain.unframe``).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.codec.chain import FrameError, frame
from ledger.codec.frame import splitter


def _outcome(split: Any, state: bytes) -> Any:
    try:
        return split(state)
    except FrameError as exc:
        return ("FrameError", str(exc))


_DIGESTS = st.one_of(
    st.text("0123456789abcdef", min_size=64, max_size=64),
    st.binary(min_size=64, max_size=64).map(lambda b: b.decode("latin-1")),
)
_CONTENT = st.one_of(st.just(b'{"v":1}'), st.binary(max_size=40))


@st.composite
def _states(draw: st.DrawFn) -> bytes:
    digest = draw(_DIGESTS)
    state = frame("0" * 64, draw(_CONTENT)).replace(b"0" * 64, digest.encode("latin-1"), 1)
    change = draw(st.sampled_from(["keep", "cut", "flip", "add"]))
    if change == "keep" or not state:
        return state
    at = draw(st.integers(0, len(state) - 1))
    if change == "cut":
        return state[:at] + state[at + 1 :]
    if change == "flip":
        return state[:at] + bytes([state[at] ^ draw(st.integers(1, 255))]) + state[at + 1 :]
    return state[:at] + draw(st.binary(min_size=1, max_size=3)) + state[at:]


@settings(max_examples=300, deadline=None)
@given(_states())
def test_the_fast_split_equals_unframe(state: bytes) -> None:
    assert _outcome(splitter(fast=True), state) == _outcome(splitter(fast=False), state)


def test_a_store_with_a_cipher_always_opens_through_the_mapper() -> None:
    opened: list[bytes] = []

    def open_state(state: bytes) -> tuple[str, bytes]:
        opened.append(state)
        return "a" * 64, b"{}"

    assert splitter(open_state, fast=True)(b"x") == (b"a" * 64, b"{}") and opened == [b"x"]
