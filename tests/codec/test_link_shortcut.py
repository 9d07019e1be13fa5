"""The chain check's link shortcut says "this link lists exactly these spans" only when the
model itself reads the link and lists exactly them.

``ledger.verify.integrity._lists_exactly`` accepts a link without decoding it when its entries
are the bytes the ledger writes for the events since the link before. Those events come from
stored rows, which a damaged store may fill with anything: ids that are no UUID hex, versions
that are no ``int`` or out of range, digests that are no lowercase hex. Whatever the spans and
whatever the link's bytes, the shortcut's yes must be the model's yes.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.codec.chain import Linked
from ledger.verify.integrity import _lists_exactly

HEAD = b'{"type":"linked","at":"2026-11-20T10:00:00+00:00","entries":['
GOOD_OID = "0123456789abcdef0123456789abcdef"
GOOD_DIGEST = "0123456789abcdef" * 4


def _written(spans: list[tuple[Any, Any, Any, Any]]) -> bytes:
    """The link as the ledger writes it for ``spans`` (whatever their values)."""
    entries = ",".join(
        f'{{"aggregate":"{oid[:8]}-{oid[8:12]}-{oid[12:16]}-{oid[16:20]}-{oid[20:]}",'
        f'"first":{first},"last":{last},"digest":"{digest}"}}'
        for oid, first, last, digest in spans
    )
    return HEAD + entries.encode("utf-8") + b"]}"


def _model_lists(content: bytes, spans: list[tuple[Any, Any, Any, Any]]) -> bool:
    try:
        link = Linked.model_validate_json(content)
    except ValueError:
        return False
    return [(e.aggregate.hex, e.first, e.last, e.digest) for e in link.entries] == spans


_hexish = st.text(alphabet='0123456789abcdefABCDEF-é,"{} ', min_size=0, max_size=70)
_oids = st.one_of(st.just(GOOD_OID), _hexish, _hexish.map(lambda t: (GOOD_OID + t)[:32]))
_digests = st.one_of(st.just(GOOD_DIGEST), _hexish, _hexish.map(lambda t: (GOOD_DIGEST + t)[:64]))
_versions = st.one_of(
    st.integers(min_value=-3, max_value=30),
    st.sampled_from([10**18 - 1, 10**18, 2**63, 1.0, 2.0, True, "1"]),
)
_spans = st.lists(st.tuples(_oids, _versions, _versions, _digests), max_size=4)


@settings(max_examples=4 * settings.default.max_examples, deadline=None)  # 400 in a full run, 20 by default
@given(_spans, st.booleans())
def test_the_shortcut_says_yes_only_when_the_model_lists_the_spans(
    spans: list[tuple[Any, Any, Any, Any]], hyphens_dropped: bool
) -> None:
    content = _written(spans)
    if hyphens_dropped:  # ids the model also reads, written otherwise
        content = HEAD + content[len(HEAD) :].replace(b"-", b"")
    if _lists_exactly(content, spans):
        assert _model_lists(content, spans)


def test_the_links_the_ledger_writes_are_taken_by_the_shortcut() -> None:
    spans = [(GOOD_OID, 1, 3, GOOD_DIGEST), ("f" * 32, 7, 7, "e" * 64), ("1" * 32, 1, 10**18 - 1, "0" * 64)]
    content = _written(spans)
    assert _model_lists(content, spans)
    assert _lists_exactly(content, spans)
    assert _lists_exactly(HEAD + b"]}", [])


def test_values_the_model_would_read_otherwise_are_left_to_the_model() -> None:
    for spans in (
        [(GOOD_OID.upper(), 1, 1, GOOD_DIGEST)],  # an id not as the ledger writes it
        [(GOOD_OID, 2.0, 2, GOOD_DIGEST)],  # a version that is no int
        [(GOOD_OID, 0, 1, GOOD_DIGEST)],
        [(GOOD_OID, 1, 10**18, GOOD_DIGEST)],  # 19 digits
        [(GOOD_OID, 1, 1, GOOD_DIGEST.upper())],
        [(GOOD_OID[:31] + "é", 1, 1, GOOD_DIGEST)],
    ):
        assert not _lists_exactly(_written(spans), spans)
