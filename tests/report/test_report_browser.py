"""The pages in a real browser: headless Chromium loads each one from a file, with no console
error, no page error and no request beyond the file itself; nothing is clipped (no text runs
out of its box, no chart label out of its drawing, no sideways scrolling); the day page reads
at a glance and the round page marks only what differs; both print sensibly. A screenshot of
every page is written for a person to look at, in the folder the run prints at its end
(``LEDGER_SCREENSHOTS``, default ``screenshots/`` at the top of the repository, ignored by git).

Needs Chromium at ``/usr/bin/chromium`` (``LEDGER_CHROMIUM`` to point elsewhere) and the
``playwright`` package. Without them the tests are skipped — except under ``CI=true``, where
a missing browser fails the run, as a missing PostgreSQL does (tests/conftest.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from ledger.domain.findings import Finding
from ledger.report.day import DaySummary, TableDay, summarize_day
from ledger.report.html_day import render_day
from ledger.report.html_round import render_round
from ledger.report.provenance import provenance
from ledger.services.replay import replay_round
from ledger.storage.store import LedgerApp, open_ledger
from tests.conftest import tiered

CHROMIUM = os.environ.get("LEDGER_CHROMIUM", "/usr/bin/chromium")
SHOTS = Path(os.environ.get("LEDGER_SCREENSHOTS", Path(__file__).resolve().parents[2] / "screenshots"))
"""The same folder as ``SCREENSHOTS`` in conftest.py, which prints it at the end of the run."""
DAY = date(2026, 11, 20)


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

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def faulty_day(tmp_path_factory: pytest.TempPathFactory, feeds: Any) -> Iterator[LedgerApp]:
    """Every example feed, plus RL-02: the roulette example with every prize of 200 paid as
    150 (three ``settlement_mismatch`` findings), the worked example of docs/INSPECTORS.md."""
    app = open_ledger(f"sqlite:///{tmp_path_factory.mktemp('browser') / 'day.db'}")
    feeds.ingest_examples(app)
    feeds.ingest(
        app,
        [
            line.replace('"won":"200"', '"won":"150"').replace("RL-01", "RL-02")
            for line in feeds.example("rl")
        ],
    )
    yield app
    app.close()


CLIPPED = """() => {
  const out = [];
  for (const el of document.body.querySelectorAll('*')) {
    if (el.closest('svg') || el.closest('.scroll') === el) continue;
    const style = getComputedStyle(el);
    if (style.display === 'inline' || style.display.startsWith('table-row')
        || el.clientWidth === 0) continue;  // a row spans its cells: cells are checked
    if (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1)
      out.push(el.tagName + '.' + el.className + ': ' + el.textContent.slice(0, 40));
  }
  for (const svg of document.querySelectorAll('svg')) {
    const box = svg.viewBox.baseVal;
    const seen = [];
    for (const t of svg.querySelectorAll('text')) {
      const b = t.getBBox();
      if (b.x < box.x - 0.5 || b.y < box.y - 0.5 || b.x + b.width > box.x + box.width + 0.5
          || b.y + b.height > box.y + box.height + 0.5)
        out.push('svg text out of its drawing: ' + t.textContent);
      for (const [o, other] of seen)
        if (b.width && o.width && b.x < o.x + o.width - 1 && o.x < b.x + b.width - 1
            && b.y < o.y + o.height - 1 && o.y < b.y + b.height - 1)
          out.push('svg texts overlap: ' + other + ' / ' + t.textContent);
      seen.push([b, t.textContent]);
    }
  }
  if (document.documentElement.scrollWidth > window.innerWidth)
    out.push('the page scrolls sideways: ' + document.documentElement.scrollWidth);
  return out;
}"""


def _open(browser: Any, page_html: str, name: str, *, pdf: bool = False) -> dict[str, Any]:
    """Load a page from a file, screenshot it (and print it to PDF); return what the browser
    said and saw."""
    path = SHOTS / f"{name}.html"
    path.write_text(page_html, encoding="utf-8")
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    seen: dict[str, Any] = {"console": [], "errors": [], "requests": [], "dialogs": []}
    page.on("console", lambda m: seen["console"].append((m.type, m.text)))
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))
    page.on("request", lambda r: seen["requests"].append(r.url))
    page.on("dialog", lambda d: (seen["dialogs"].append(d.message), d.dismiss()))
    page.goto(path.as_uri(), wait_until="load")
    shot = SHOTS / f"{name}.png"
    page.screenshot(path=str(shot), full_page=True)
    seen["png"] = shot.read_bytes()
    seen["scripts"] = page.evaluate("document.querySelectorAll('script').length")
    seen["h1"] = page.inner_text("h1")
    seen["clipped"] = page.evaluate(CLIPPED)
    seen["svg_boxes"] = page.evaluate(
        "[...document.querySelectorAll('svg.chart, svg.fpc-figure')]"
        ".map(s => s.getBoundingClientRect().width)"
    )
    seen["uri"] = path.as_uri()
    seen["page"] = page
    if pdf:
        out = SHOTS / f"{name}.pdf"
        page.pdf(path=str(out), format="A4", print_background=True)
        seen["pdf_pages"] = len(re.findall(rb"/Type\s*/Page\b", out.read_bytes()))
        page.emulate_media(media="print")
        seen["print_break"] = page.evaluate(
            "[...document.querySelectorAll('table.bets, table.money')]"
            ".map(t => getComputedStyle(t).breakInside)"
        )
        page.emulate_media(media="screen")
    return seen


def _assert_clean(seen: dict[str, Any]) -> None:
    seen["page"].close()
    assert seen["console"] == [] and seen["errors"] == [] and seen["dialogs"] == []
    assert seen["requests"] == [seen["uri"]]  # the file itself, nothing else
    assert seen["png"].startswith(b"\x89PNG\r\n\x1a\n") and len(seen["png"]) > 20_000
    assert seen["scripts"] == 0
    assert seen["clipped"] == []


# Each page costs Chromium a render, a screenshot and a print. By default Chromium loads three
# pages: a round page with a mismatch, printed (test_a_mismatch_marks_only_the_field_that_differs),
# the day page and a hostile feed's page; the pages of every game render in process in
# test_report_html_pages.py. All six games' pages, and the other pages below, in the slow tier.
@pytest.mark.parametrize(
    ("table", "round_", "title"),
    tiered(
        [
            ("RL-01", "000001", "Roulette — round RL-01/000001"),
            ("MJ-01", "g1", "Mah-Jong — round MJ-01/g1"),
            ("FPC-01", "000001", "Fish-Prawn-Crab — round FPC-01/000001"),
            ("3CB-01", "000002", "3-Card Baccarat — round 3CB-01/000002"),
            ("SP9-01", "000001", "Super Pan 9 — round SP9-01/000001"),
            ("STUD-01", "000001", None),
        ],
        0,
    ),
)
def test_round_pages_load_clean_in_chromium(
    browser: Any, examples_ledger: LedgerApp, table: str, round_: str, title: str | None
) -> None:
    replay = replay_round(examples_ledger, table, round_)
    assert replay is not None
    seen = _open(
        browser, render_round(replay, provenance(examples_ledger)), f"round-{table}-{round_}", pdf=True
    )
    _assert_clean(seen)
    assert seen["h1"].endswith(f"round {table}/{round_}")
    if title:
        assert seen["h1"] == title
    if table == "FPC-01":
        assert seen["svg_boxes"] == [40, 40, 40]
    assert all(b == "avoid" for b in seen["print_break"])  # a bets table is never split
    most = 3 if table == "MJ-01" else 2  # MJ has 70 events; measured: RL 1, MJ 3, others 2
    assert seen["pdf_pages"] <= most, seen["pdf_pages"]


def test_a_mismatch_marks_only_the_field_that_differs(browser: Any, faulty_day: LedgerApp) -> None:
    replay = replay_round(faulty_day, "RL-02", "000001")
    assert replay is not None
    seen = _open(browser, render_round(replay, provenance(faulty_day)), "round-RL-02-000001", pdf=True)
    page = seen["page"]
    marked = page.evaluate("[...document.querySelectorAll('table.bets .fld.diff')].map(e => e.textContent)")
    wanted = page.evaluate("[...document.querySelectorAll('table.bets .fld.want')].map(e => e.textContent)")
    colour = page.evaluate("getComputedStyle(document.querySelector('.fld.diff')).color")
    plain = page.evaluate(
        "getComputedStyle(document.querySelector('table.bets tr.mismatch .fld:not(.diff)')).color"
    )
    footer = page.inner_text("footer")
    _assert_clean(seen)
    assert marked == ["won 150.00"] and wanted == ["won 200.00"]
    assert colour != plain
    assert faulty_day.head() in footer and "ledger" in footer and "generated" in footer
    assert seen["pdf_pages"] <= 2


@pytest.mark.slow
def test_bank_layers_and_payments_are_derived_against_recorded(
    browser: Any, examples_ledger: LedgerApp
) -> None:
    for table, round_, heading in (
        ("SP9-01", "000001", "Bank layers: derived against recorded"),
        ("MJ-01", "g1", "Payments: derived against recorded"),
    ):
        replay = replay_round(examples_ledger, table, round_)
        assert replay is not None
        seen = _open(browser, render_round(replay), f"money-{table}-{round_}")
        page = seen["page"]
        headings = page.evaluate("[...document.querySelectorAll('h2')].map(h => h.textContent)")
        rows = page.evaluate("[...document.querySelectorAll('table.money tr.recorded-row')].length")
        marked = page.evaluate("document.querySelectorAll('table.money .diff').length")
        _assert_clean(seen)
        assert heading in headings and rows >= 1 and marked == 0


def _day_page(app: LedgerApp, with_info: bool = True) -> str:
    summary = summarize_day(app, DAY)
    if with_info:  # one information finding, to show its colour beside the errors
        row = next(t for t in summary.tables if t.table == "3CB-01")
        row.findings.append(
            Finding(
                "carry_outstanding",
                "3CB-01",
                "000005",
                "b9 carried, still in play",
                rule="3CB art. 7(2)",
                bet="b9",
                severity="info",
            )
        )
    return render_day(summary, provenance(app))


def test_the_day_page_reads_at_a_glance(browser: Any, faulty_day: LedgerApp) -> None:
    seen = _open(browser, _day_page(faulty_day), "day")
    page = seen["page"]
    heads = page.evaluate("[...document.querySelectorAll('table.figures th')].map(t => t.textContent)")
    numbers = page.evaluate("[...document.querySelectorAll('table.figures td.num')].map(t => t.textContent)")
    grid = page.evaluate(
        "[...document.querySelectorAll('svg.chart')].map(s => s.querySelectorAll('line.grid').length)"
    )
    ticks = page.evaluate("[...document.querySelectorAll('svg.chart text.tick')].map(t => t.textContent)")
    details = page.evaluate("[...document.querySelectorAll('details')].map(d => [d.className, d.open])")
    summaries = page.evaluate(
        "[...document.querySelectorAll('details.code > summary')].map(s => s.textContent)"
    )
    colours = page.evaluate(
        "['.count.error', '.count.info', 'tr.sev-error td', "
        "'tr.sev-info td'].map(q => { const s = getComputedStyle("
        "document.querySelector(q)); return s.backgroundColor + s.color "
        "+ s.boxShadow; })"
    )
    footer = page.inner_text("footer")
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    page.screenshot(path=str(SHOTS / "day-findings-unfolded.png"), full_page=True)
    unfolded = page.evaluate(CLIPPED)
    _assert_clean(seen)
    assert unfolded == []
    assert heads.index("hold %") == heads.index("hold") + 1
    amount = re.compile(r"^(−?\d{1,3}(,\d{3})*(\.\d\d)?( %)?|—|\d+( \+\d+ info)?)$")
    assert [n for n in numbers if not amount.match(n)] == []
    assert "9,870.00" in numbers and "2,090.00" in numbers  # turnover with separators
    assert all(n >= 3 for n in grid) and "−1,000" in ticks
    assert details and all(not is_open for _, is_open in details)  # folded
    assert summaries == ["1 carry_outstanding info", "3 settlement_mismatch error"]  # count first
    assert len(set(colours)) == 4  # errors and information never look alike
    assert faulty_day.head() in footer and "generated" in footer


@pytest.mark.slow
def test_a_day_of_many_tables_grows_downwards_never_sideways(browser: Any) -> None:
    tables = [
        TableDay(
            f"{game}-{n:02d}",
            game,
            "HKD",
            rounds=40,
            bets=400,
            turnover=Decimal(123_456 + 1000 * n),
            hold=Decimal(8_000 - 977 * n),
            commission=Decimal("512.50"),
        )
        for game in ("RL", "3CB", "STUD", "SP9")
        for n in range(1, 9)
    ]
    seen = _open(browser, render_day(DaySummary(DAY, tables)), "day-many-tables")
    page = seen["page"]
    rows = page.evaluate("document.querySelector('svg.chart').querySelectorAll('rect').length")
    _assert_clean(seen)  # nothing clipped, no overlapping label, no sideways scrolling
    assert rows == 2 * 32 + 2  # two bars per table, two legend swatches


@pytest.mark.slow
def test_a_day_with_no_finding_says_so(browser: Any, examples_ledger: LedgerApp) -> None:
    seen = _open(browser, _day_page(examples_ledger, with_info=False), "day-clean")
    text = seen["page"].inner_text("#findings")
    _assert_clean(seen)
    assert "None: every round of the day was derived as recorded." in text


@pytest.mark.slow_postgres  # the page is the same from either store; SQLite's case runs by default
def test_a_script_in_the_feed_never_runs(browser: Any, app: LedgerApp, feeds: Any) -> None:
    feeds.ingest(
        app,
        feeds.rl_round(
            "x1",
            extra=[{"type": "irregularity", "code": "x", "detail": "<script>alert('x')</script>"}],
            end={"type": "round_voided", "reason": "<img src=nowhere onerror=alert(2)>"},
        ),
    )
    replay = replay_round(app, "RL-09", "x1")
    assert replay is not None
    seen = _open(browser, render_round(replay), "xss")
    _assert_clean(seen)
