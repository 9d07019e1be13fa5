"""The readable verify output colours a finding's first line by its severity: errors red,
warnings (``timestamp_disorder``) and infos yellow; the line is printed as text, never as markup."""

from __future__ import annotations

import pytest
from rich.console import Console

import cli.render as render
from ledger.domain.findings import Finding
from ledger.verify.engine import VerifyReport

RED, YELLOW = "\x1b[31m", "\x1b[33m"


def _first_line(severity: str, monkeypatch: pytest.MonkeyPatch, table: str = "RL-01") -> str:
    console = Console(force_terminal=True, color_system="standard", width=200, highlight=False)
    monkeypatch.setattr(render, "out", console)
    finding = Finding(
        "timestamp_disorder", table, "000001", "timed before the event before", severity=severity
    )  # type: ignore[arg-type]
    with console.capture() as captured:
        render.print_verify(VerifyReport(findings=[finding]))
    return captured.get().splitlines()[0]


@pytest.mark.parametrize(("severity", "colour"), [("error", RED), ("warning", YELLOW), ("info", YELLOW)])
def test_a_finding_is_coloured_by_its_severity(
    severity: str, colour: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    line = _first_line(severity, monkeypatch)
    assert line.startswith(colour) and "timestamp_disorder at RL-01/000001" in line


def test_a_table_name_is_not_read_as_markup(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "[bold]X/000001" in _first_line("warning", monkeypatch, table="[bold]X")
