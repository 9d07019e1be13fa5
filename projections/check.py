"""Rebuild equals incremental: each stored view compared with a fresh fold from position 0.

:func:`check_projections` reads each stored view and its position in one snapshot, folds the
store again in memory up to that same position — all views in one pass over the log
(``projections.base.fold_views``) — and reports every key whose rows differ as
``projection_mismatch``. It writes nothing: verify stays
read-only. A view never updated has nothing to compare; a view stored under another version is
reported as information (the next update rebuilds it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ledger.domain.findings import Finding
from ledger.storage.store import LedgerApp
from projections.base import MemoryRows, View, closed_rounds, fold_views
from projections.diff import Difference, compare, encode_row
from projections.registry import registered_views
from projections.sealed_rows import ViewKeyError, ViewTampered
from projections.updater import ViewStore

RULE = "rebuild equals incremental (projections)"
SHOWN_MAX = 20
"""Differing keys reported per view; the rest are counted in the last finding."""


def fold_upto(app: LedgerApp, view: View, position: int) -> MemoryRows:
    """Fold the closed rounds up to notification ``position`` into a fresh in-memory view."""
    rows = MemoryRows()
    for closing, rnd in closed_rounds(app):
        if closing > position:
            break
        view.apply(rnd, rows)
    return rows


def differences(app: LedgerApp, view: View, store: ViewStore) -> tuple[int | None, list[Difference]]:
    """The stored view's position and its differences from a rebuild at that position
    (``None`` position: nothing stored under this version)."""
    tracking, stored = store.snapshot(view.name)
    if tracking is None or tracking.version != view.version:
        return None, []
    return tracking.position, compare(view.name, stored, fold_upto(app, view, tracking.position))


def check_projections(app: LedgerApp, views: Sequence[View] | None = None) -> list[Finding]:
    """``projection_mismatch`` findings for every registered view (see the module docstring).

    Every view is snapshotted first, then all are rebuilt in **one** pass over the log
    (``projections.base.fold_views``), each up to its own stored position."""
    chosen = list(views) if views is not None else registered_views()
    findings: list[Finding] = []
    compared: list[tuple[View, int, MemoryRows]] = []
    with ViewStore(app, create=False) as store:
        for view in chosen:
            try:
                tracking, stored = store.snapshot(view.name)
            except (ViewTampered, ViewKeyError) as exc:
                findings.append(
                    Finding(
                        "projection_mismatch",
                        None,
                        None,
                        rule=RULE,
                        message=str(exc),
                        extra={"view": view.name},
                    )
                )
                continue
            if tracking is None:
                continue  # never updated: nothing to compare
            if tracking.version != view.version:
                findings.append(
                    Finding(
                        "projection_mismatch",
                        None,
                        None,
                        rule=RULE,
                        severity="info",
                        message=f"view {view.name} is stored under version {tracking.version}, the "
                        f"code's is {view.version}: the next update rebuilds it",
                        extra={"view": view.name},
                    )
                )
                continue
            compared.append((view, tracking.position, stored))
    rebuilt = fold_views(app, [v for v, _, _ in compared], [p for _, p, _ in compared])
    for (view, position, stored), fresh in zip(compared, rebuilt, strict=True):
        findings += _findings(view.name, position, compare(view.name, stored, fresh))
    return findings


def _findings(view: str, position: int | None, diffs: list[Difference]) -> list[Finding]:
    out = []
    for d in diffs[:SHOWN_MAX]:
        out.append(
            Finding(
                "projection_mismatch",
                None,
                None,
                rule=RULE,
                message=f"view {view} at position {position}: row {d.key} "
                + (
                    "is missing"
                    if d.stored is None
                    else "should not exist"
                    if d.rebuilt is None
                    else "differs from a rebuild from position 0"
                ),
                expected=_plain(d.rebuilt),
                recorded=_plain(d.stored),
                extra={"view": view, "key": d.key},
            )
        )
    if len(diffs) > SHOWN_MAX:
        out.append(
            Finding(
                "projection_mismatch",
                None,
                None,
                rule=RULE,
                message=f"view {view}: {len(diffs) - SHOWN_MAX} more rows differ",
                extra={"view": view},
            )
        )
    return out


def _plain(row: dict[str, object] | None) -> dict[str, object] | None:
    return None if row is None else json.loads(encode_row(row))
