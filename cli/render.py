"""Rendering results: readable text for people, one JSON object for machines."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich.console import Console

from cli.contract import print_json as print_json
from ledger.domain.findings import Finding
from ledger.domain.money import field_text

if TYPE_CHECKING:
    from rich.progress import Progress, ProgressColumn

    from ledger.verify.engine import VerifyReport

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False)


def progress_bar(total: int | None, what: str, unit: str = "bytes") -> Progress | None:
    """A progress bar on standard error, only when it is a terminal. ``unit``: what the bar
    counts — ``bytes`` (a file read: sizes in kB, MB) or a plain count of things, such as
    ``events`` (``657/657 events``)."""
    if not err.is_terminal:
        return None
    # Here, not at the top: only a command writing to a terminal draws a bar (~0.01 s).
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    count: ProgressColumn = TextColumn("")
    if total and unit == "bytes":
        count = DownloadColumn()
    elif total:
        count = MofNCompleteColumn()
    columns = [
        TextColumn(what),
        BarColumn(),
        count,
        TextColumn(unit if total and unit != "bytes" else ""),
        TimeRemainingColumn(),
    ]
    return Progress(*columns, console=err, transient=True)


@contextmanager
def working(what: str) -> Iterator[None]:
    """A spinner on standard error while a long command works, only when it is a terminal
    (a scheduled job's log never gets control characters)."""
    if not err.is_terminal:
        yield
        return
    with err.status(what):
        yield


def finding_lines(f: Finding) -> list[str]:
    """hledger-style lines for one finding."""
    where = f"{f.table}/{f.round}" if f.table else "the store"
    head = (
        f"{f.code} at {where}"
        + (f" bet {f.bet}" if f.bet else "")
        + (f" (seq {f.seq})" if f.seq is not None else "")
    )
    lines = [head, f"  {f.message}"]
    if f.expected is not None or f.recorded is not None:
        lines.append(f"  expected {_fields(f.expected)}; recorded {_fields(f.recorded)}")
    if f.rule:
        lines.append(f"  rule: {f.rule}")
    if f.table and f.round:
        lines.append(f"  to see the round: ledger replay {f.table}/{f.round}")
    return lines


def _fields(d: dict[str, Any] | None) -> str:
    """``result=win returned=1,000.00 won=2,000.00``: amounts as every text writes them."""
    if not d:
        return "-"
    return " ".join(f"{k}={field_text(k, v)}" for k, v in d.items())


SEVERITY_STYLE = {"error": "red", "warning": "yellow", "info": "yellow"}
"""The colour of a finding's first line by severity (an unknown severity shows as an error)."""


def print_verify(report: VerifyReport, *, findings: bool = True) -> None:
    """The readable form of a verify report (``findings=False``: the counts only)."""
    if not findings:
        for code, n in sorted(Counter(f.code for f in report.findings).items()):
            out.print(f"{n:>7}  {code}", markup=False)
    for f in report.findings if findings else []:
        lines = finding_lines(f)
        out.print(lines[0], style=SEVERITY_STYLE.get(f.severity, "red"), markup=False)
        for line in lines[1:]:
            out.print(line, markup=False)
        out.print()
    by_code = Counter(f.code for f in report.errors)
    summary = ", ".join(f"{n} {code}" for code, n in sorted(by_code.items())) or "no findings"
    out.print(
        f"{report.rounds_checked} rounds checked, {report.rounds_with_findings} with "
        f"findings ({summary}); {report.events} events; integrity "
        f"{'ok' if report.integrity_ok else 'BROKEN'}; {report.seconds:.2f}s",
        markup=False,
    )
    out.print(f"head {report.head or '(empty store)'}", markup=False)
