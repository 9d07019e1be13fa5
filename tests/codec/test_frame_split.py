"""The chain check's split of a stored frame (``ledger.codec.frame``) equals ``unframe``.

Over well-formed frames and damaged ones (bytes cut, changed or added anywhere, a digest that is
not ASCII), the fast split gives the same digest and content, or the same ``FrameError``, as
the reference split (``fast=False``: ``ledger.codec.chain.unframe``); and the chain check's
in-place read of a plain store's row (``ChainVerifier.check_raw``, which hashes the content
where it stands and compares the stored digest bytes) gives the same content and findings as
the check through the reference split.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.codec.chain import FrameError, frame, genesis, next_digest, unframe
from ledger.codec.frame import splitter
from ledger.verify.integrity import ChainVerifier


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
    return _damaged(draw, state)


def _damaged(draw: st.DrawFn, state: bytes) -> bytes:
    change = draw(st.sampled_from(["keep", "cut", "flip", "add"]))
    if change == "keep" or not state:
        return state
    at = draw(st.integers(0, len(state) - 1))
    if change == "cut":
        return state[:at] + state[at + 1 :]
    if change == "flip":
        return state[:at] + bytes([state[at] ^ draw(st.integers(1, 255))]) + state[at + 1 :]
    return state[:at] + draw(st.binary(min_size=1, max_size=3)) + state[at:]


@settings(max_examples=3 * settings.default.max_examples, deadline=None)  # 300 in a full run
@given(_states())
def test_the_fast_split_equals_unframe(state: bytes) -> None:
    assert _outcome(splitter(fast=True), state) == _outcome(splitter(fast=False), state)


def test_a_store_with_a_cipher_always_opens_through_the_mapper() -> None:
    opened: list[bytes] = []

    def open_state(state: bytes) -> tuple[str, bytes]:
        opened.append(state)
        return "a" * 64, b"{}"

    assert splitter(open_state, fast=True)(b"x") == (b"a" * 64, b"{}") and opened == [b"x"]


class _PlainMapper:
    """A store's mapper with no cipher and no compressor."""

    cipher = None
    compressor = None

    def open_state(self, state: bytes) -> tuple[str, bytes]:
        return unframe(state)


_OID = "0123456789abcdef0123456789abcdef"


@st.composite
def _chained(draw: st.DrawFn) -> list[tuple[int, str, bytes]]:
    """Three rows of one aggregate, chained as the ledger writes them; one of them damaged
    (or none), or a version left out or repeated."""
    from uuid import UUID

    digest = genesis(UUID(_OID))
    rows = []
    for version in (1, 2, 3):
        content = draw(_CONTENT)
        digest = next_digest(digest, content)
        rows.append((version, "RL/bet_placed", frame(digest, content)))
    which = draw(st.integers(0, 2))
    version, topic, state = rows[which]
    rows[which] = (version, topic, _damaged(draw, state))
    order = draw(st.sampled_from([(0, 1, 2), (0, 2), (0, 1, 1, 2), (1, 2), (0, 2, 1)]))
    return [rows[i] for i in order]


@settings(max_examples=3 * settings.default.max_examples, deadline=None)  # 300 in a full run
@given(_chained())
def test_the_chain_checks_in_place_read_equals_the_reference_split(
    rows: list[tuple[int, str, bytes]],
) -> None:
    fast = ChainVerifier(_PlainMapper(), fast=True)  # type: ignore[arg-type]
    plain = ChainVerifier(_PlainMapper(), fast=False)  # type: ignore[arg-type]
    for version, topic, state in rows:
        assert fast.check_raw(_OID, version, topic, state) == plain.check_raw(_OID, version, topic, state)
    assert [f.message for f in fast.findings] == [f.message for f in plain.findings]
    assert fast.events == plain.events
