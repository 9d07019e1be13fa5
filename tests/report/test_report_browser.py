"""The pages in a real browser: headless Chromium loads each one from a file, with no console
error, no page error and no request beyond the file itself, and a screenshot is taken.

Needs Chromium at ``/usr/bin/chromium`` (``LEDGER_CHROMIUM`` to point elsewhere) and the
``playwright`` package. Without them the tests are skipped — except under ``CI=true``, where
a missing browser fails the run, as a missing PostgreSQL does (tests/conftest.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from ledger.replay import replay_round
from ledger.report.day import summarize_day
from ledger.report.html_day import render_day
from ledger.report.html_round import render_round
from ledger.store import LedgerApp

CHROMIUM = os.environ.get("LEDGER_CHROMIUM", "/usr/bin/chromium")


def _browser_problem() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM}"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        return f"no playwright: {exc}"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the module."""
    problem = _browser_problem()
    if problem is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the browser tests are required under CI=true: {problem}")
        pytest.skip(problem)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


def _open(browser: Any, page_html: str, tmp_path: Path, name: str) -> dict[str, Any]:
    """Load a page from a file; return what the browser said and saw."""
    path = tmp_path / f"{name}.html"
    path.write_text(page_html, encoding="utf-8")
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    seen: dict[str, Any] = {"console": [], "errors": [], "requests": [], "dialogs": []}
    page.on("console", lambda m: seen["console"].append((m.type, m.text)))
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))
    page.on("request", lambda r: seen["requests"].append(r.url))
    page.on("dialog", lambda d: (seen["dialogs"].append(d.message), d.dismiss()))
    page.goto(path.as_uri(), wait_until="load")
    shot = tmp_path / f"{name}.png"
    page.screenshot(path=str(shot), full_page=True)
    seen["png"] = shot.read_bytes()
    seen["scripts"] = page.evaluate("document.querySelectorAll('script').length")
    seen["h1"] = page.inner_text("h1")
    seen["svg_boxes"] = page.evaluate(
        "[...document.querySelectorAll('svg.chart, svg.fpc-figure')]"
        ".map(s => s.getBoundingClientRect().width)")
    seen["uri"] = path.as_uri()
    page.close()
    return seen


def _assert_clean(seen: dict[str, Any]) -> None:
    assert seen["console"] == [] and seen["errors"] == [] and seen["dialogs"] == []
    assert seen["requests"] == [seen["uri"]]  # the file itself, nothing else
    assert seen["png"].startswith(b"\x89PNG\r\n\x1a\n") and len(seen["png"]) > 20_000
    assert seen["scripts"] == 0


@pytest.mark.parametrize(("table", "round_", "title"), [
    ("RL-01", "000001", "Roulette — round RL-01/000001"),
    ("FPC-01", "000001", "Fish-Prawn-Crab — round FPC-01/000001"),
    ("3CB-01", "000002", "3-Card Baccarat — round 3CB-01/000002"),
    ("SP9-01", "000001", "Super Pan 9 — round SP9-01/000001"),
    ("STUD-01", "000001", None),
    ("MJ-01", "g1", "Mah-Jong — round MJ-01/g1"),
])
def test_round_pages_load_clean_in_chromium(browser: Any, examples_ledger: LedgerApp,
                                            tmp_path: Path, table: str, round_: str,
                                            title: str | None) -> None:
    replay = replay_round(examples_ledger, table, round_)
    assert replay is not None
    seen = _open(browser, render_round(replay), tmp_path, f"{table}-{round_}")
    _assert_clean(seen)
    assert seen["h1"].endswith(f"round {table}/{round_}")
    if title:
        assert seen["h1"] == title
    if table == "FPC-01":
        assert seen["svg_boxes"] == [40, 40, 40]


def test_day_page_loads_clean_with_its_charts(browser: Any, examples_ledger: LedgerApp,
                                              tmp_path: Path) -> None:
    seen = _open(browser, render_day(summarize_day(examples_ledger, date(2026, 11, 20))),
                 tmp_path, "day")
    _assert_clean(seen)
    assert len(seen["svg_boxes"]) == 2 and all(w > 300 for w in seen["svg_boxes"])


def test_a_script_in_the_feed_never_runs(browser: Any, app: LedgerApp, feeds,
                                         tmp_path: Path) -> None:
    feeds.ingest(app, feeds.rl_round("x1", extra=[
        {"type": "irregularity", "code": "x", "detail": "<script>alert('x')</script>"}],
        end={"type": "round_voided", "reason": "<img src=nowhere onerror=alert(2)>"}))
    replay = replay_round(app, "RL-09", "x1")
    assert replay is not None
    seen = _open(browser, render_round(replay), tmp_path, "xss")
    _assert_clean(seen)
