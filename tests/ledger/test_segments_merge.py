"""Merging segment reports: single-pass order by key, counts added, gaps and overlaps refused,
and parts of another store, another head or unchained ends refused.

Pure tests on parts built by hand; the end-to-end equality with a full verify is in
``test_resumable_properties``.
"""

from __future__ import annotations

import json

import pytest

from ledger.domain.errors import UsageError
from ledger.domain.findings import Finding
from ledger.services.segments import (
    INTEGRITY_KEY,
    Part,
    finding_from_json,
    merge,
    parse_segment,
    part_from_json,
)
from ledger.verify.engine import VerifyReport


def _f(round_: str, code: str = "settlement_mismatch", **extra: object) -> Finding:
    return Finding(
        code,
        "RL-01",
        round_,
        f"{code} in {round_}",
        rule="RL art. 7",
        bet="b1",
        expected={"won": "35"},
        recorded={"won": "34"},
        seq=4,
        extra=dict(extra),
    )


def _part(
    start: int,
    end: int | None,
    start_pos: int,
    end_pos: int | None,
    keyed: list[tuple[tuple[int, int, int], Finding]],
    *,
    rounds: int = 1,
    events: int = 10,
    ok: bool = True,
    head: str | None = None,
) -> Part:
    report = VerifyReport(
        rounds_checked=rounds,
        rounds_with_findings=len(keyed),
        events=events,
        findings=[f for _, f in keyed],
        integrity_ok=ok,
        head=head,
    )
    return Part(
        start,
        end,
        start_pos,
        end_pos,
        report,
        [k for k, _ in keyed],
        "store",
        f"d{start}" if start else None,
        None if end is None else f"d{end}",
        {"row": 100, "head": "h"},
    )


def test_parse_segment() -> None:
    assert parse_segment("0..3") == (0, 3)
    assert parse_segment("2..head") == (2, None)
    for bad in ("3..3", "3..1", "x..2", "1-2", "-1..2", "1..", "..2"):
        with pytest.raises(UsageError):
            parse_segment(bad)


def test_merge_puts_findings_in_single_pass_order_and_adds_counts() -> None:
    # only the segment reaching the head has end-of-log findings (phases 2 and 3)
    late = _part(
        2,
        None,
        50,
        None,
        [
            ((1, 60, 1), _f("000006")),
            ((2, 55, 0), _f("000007")),
            ((3, 0, 0), _f("000009")),
            (INTEGRITY_KEY, _f("-", "chain_broken")),
        ],
        events=30,
        ok=False,
        head="h2",
    )
    early = _part(0, 2, 0, 50, [((1, 20, 1), _f("000002")), ((1, 45, 0), _f("000004"))], events=50)
    report = merge([late, early])
    assert [f.round for f in report.findings] == ["-", "000002", "000004", "000006", "000007", "000009"]
    assert (report.events, report.rounds_checked, report.rounds_with_findings) == (80, 2, 6)
    assert report.head == "h2" and not report.integrity_ok and report.exit_code == 3


@pytest.mark.parametrize(
    "bounds, message",
    [
        ([(0, 1, 0, 10), (2, None, 20, None)], "do not cover"),
        ([(0, 1, 0, 10), (1, 2, 10, 20)], "do not reach the head"),
        ([(1, None, 10, None)], "do not cover"),
        ([(0, None, 0, None), (0, None, 0, None)], "do not cover|two segments"),
    ],
)
def test_merge_refuses_gaps_overlaps_and_missing_ends(bounds: list, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        merge([_part(a, b, pa, pb, []) for a, b, pa, pb in bounds])


@pytest.mark.parametrize(
    "change, message",
    [
        ({"store": "another"}, "another store"),
        ({"seen": {"row": 99, "head": "h"}}, "another head"),
        ({"start_digest": "d9"}, "do not chain"),
        ({"store": None}, "names no store"),
    ],
)
def test_merge_refuses_parts_that_do_not_chain(change: dict, message: str) -> None:
    early, late = _part(0, 1, 0, 10, []), _part(1, None, 10, None, [])
    for name, value in change.items():
        setattr(late, name, value)
    with pytest.raises(UsageError, match=message):
        merge([early, late])


def test_a_part_round_trips_through_json() -> None:
    part = _part(0, 1, 0, 10, [((1, 4, 1), _f("000001", party="banker"))], head="h")
    obj = {**part.report.to_json(), "segment": part.segment_json(), "keys": [list(k) for k in part.keys]}
    again = part_from_json(json.loads(json.dumps(obj)), "r.json")
    assert again.keys == part.keys and again.segment_json() == part.segment_json()
    assert [f.to_json() for f in again.report.findings] == [f.to_json() for f in part.report.findings]
    assert finding_from_json(part.report.findings[0].to_json()) == part.report.findings[0]
    with pytest.raises(UsageError, match="not a ledger verify --segment"):
        part_from_json({**obj, "segment": None}, "r.json")
    with pytest.raises(UsageError, match="differ in number"):
        part_from_json({**obj, "keys": []}, "r.json")
