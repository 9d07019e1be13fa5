"""The HTML pages: every example round renders; feed text is escaped; unknown events are
plain rows; no page reaches outside itself."""

from __future__ import annotations

import html
from datetime import date
from html.parser import HTMLParser
from typing import ClassVar, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.domain.round import Round
from ledger.feed.envelope import FeedEvent, RoundOpened
from ledger.games.base import Derivation
from ledger.report.day import summarize_day
from ledger.report.html_day import render_day
from ledger.report.html_round import render_round
from ledger.report.markup import el
from ledger.services.replay import RoundReplay, replay_round
from ledger.storage.store import LedgerApp

ROUNDS = {
    "RL-01": "000001 000002 000003 000004 000005",
    "FPC-01": "000001 000005",
    "3CB-01": "000001 000002 000003 000004 000005",
    "SP9-01": "000001 000002",
    "STUD-01": "000001 000002 000003 000004",
    "MJ-01": "g1",
}
ALLOWED_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "h1",
    "h2",
    "p",
    "span",
    "div",
    "small",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "ol",
    "li",
    "code",
    "footer",
    "svg",
    "g",
    "rect",
    "line",
    "text",
    "ellipse",
    "circle",
    "path",
    "header",
    "section",
    "figure",
    "details",
    "summary",
    "dl",
    "dt",
    "dd",
    "b",
    "i",
}
XSS = "<script>alert('x')</script>"


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attrs: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attrs |= {name for name, _ in attrs}


def assert_self_contained(page: str) -> None:
    """Only the elements the report builds; no script, link, image, handler or URL."""
    parser = _Tags()
    parser.feed(page)
    assert parser.tags <= ALLOWED_TAGS, parser.tags - ALLOWED_TAGS
    assert not {a for a in parser.attrs if a in ("src", "href") or a.startswith("on")}
    style = page[page.index("<style>") : page.index("</style>")]
    assert "url(" not in style and "@import" not in style


@given(st.text())
def test_any_text_in_an_element_is_text(text: str) -> None:
    out = el("td", text, title=text)
    assert "<" not in out[4:-5] and html.unescape(out[out.index(">") + 1 : -5]) == text


def _page(app: LedgerApp, table: str, round_: str) -> str:
    replay = replay_round(app, table, round_)
    assert replay is not None
    return render_round(replay)


@pytest.mark.parametrize(("table", "round_"), [(t, r) for t, rs in ROUNDS.items() for r in rs.split()])
def test_every_example_round_renders_self_contained(
    examples_ledger: LedgerApp, table: str, round_: str
) -> None:
    page = _page(examples_ledger, table, round_)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert_self_contained(page)
    assert "derived and recorded agree" in page
    rnd = examples_ledger.load_round(table, round_)
    assert rnd is not None
    assert page.count('<td class="num">') >= len(rnd.events)  # one seq cell per event


def test_the_round_page_draws_the_outcome(examples_ledger: LedgerApp) -> None:
    rl = _page(examples_ledger, "RL-01", "000001")
    assert '<span class="wheel tone-black" title="10 black" aria-label="10 black">10</span>' in rl
    fpc = _page(examples_ledger, "FPC-01", "000001")
    assert fpc.count('class="fpc-figure"') == 3 and "<title>crab (green)</title>" in fpc
    tcb = _page(examples_ledger, "3CB-01", "000001")
    assert tcb.count('class="card ') == 13  # 4 hands × 3 cards + the burned card
    assert 'title="king of hearts 🂾"' in tcb
    mj = _page(examples_ledger, "MJ-01", "g1")
    assert 'title="5 of circles 🀝"' in mj


def test_feed_text_is_escaped_never_run(app: LedgerApp, feeds) -> None:
    feeds.ingest(
        app,
        feeds.rl_round(
            "x1",
            extra=[{"type": "irregularity", "code": "card-sharp", "detail": XSS}],
            end={"type": "round_voided", "reason": '<img src=x onerror="alert(1)">'},
        ),
    )
    page = _page(app, "RL-09", "x1")
    assert XSS not in page and "<img" not in page
    assert html.escape(XSS, quote=True) in page
    assert_self_contained(page)
    day = render_day(summarize_day(app, date(2026, 11, 20)))
    assert "<script" not in day


class MysteryEvent(FeedEvent):
    """An event type no report knows (a game's new event, say)."""

    TYPE: ClassVar[str] = "mystery_event"
    type: Literal["mystery_event"]
    card: str
    dice: str


def test_an_unknown_event_is_a_plain_row_and_never_breaks_the_page() -> None:
    at = "2026-11-20T10:00:00+08:00"
    opened = RoundOpened(
        v=1, table="X-1", game="RL", round="r1", seq=1, at=at, type="round_opened", currency="MOP"
    )
    rnd = Round.replay([opened])
    rnd.record(
        MysteryEvent(
            v=1,
            table="X-1",
            game="RL",
            round="r1",
            seq=2,
            at=at,
            type="mystery_event",
            card="not a card",
            dice="<b>6</b>",
        )
    )
    page = render_round(RoundReplay(rnd, Derivation(), []))
    assert "<td>mystery_event</td>" in page
    assert "<code>card=not a card dice=&lt;b&gt;6&lt;/b&gt;</code>" in page
    assert "No outcome recorded." in page


def test_the_day_page_has_a_row_per_table_and_a_chart_per_currency(examples_ledger: LedgerApp) -> None:
    page = render_day(summarize_day(examples_ledger, date(2026, 11, 20)))
    assert_self_contained(page)
    for table in ROUNDS:
        assert f"<td>{table}</td>" in page
    assert page.count("<svg") == 2  # HKD and MOP
    assert "<title>RL-01 hold: 330.00 HKD</title>" in page
    assert "<title>3CB-01 commission: 37.50 HKD</title>" in page
    assert '<td class="num">1,350.00</td>' in page  # 3CB turnover, thousands and decimals


def _cells(page: str, table_class: str, mark: str) -> list[str]:
    """The text of the cells marked ``mark`` in the page's tables of class ``table_class``."""
    found = []
    for table in page.split(f'<table class="{table_class}">')[1:]:
        body = table.split("</table>")[0]
        found += [cell.split("</td>")[0] for cell in body.split(f'<td class="num {mark}">')[1:]]
    return found


def test_a_wrong_bank_layer_marks_only_its_wrong_field(app: LedgerApp, feeds) -> None:
    feeds.ingest(
        app,
        [
            line.replace('"result":"650","commission":"32.5"', '"result":"600","commission":"32.5"')
            for line in feeds.example("sp9")
        ],
    )
    page = _page(app, "SP9-01", "000001")
    assert "Bank layers: derived against recorded" in page
    assert _cells(page, "money", "diff") == ["600.00"]  # the share, not the commission
    assert _cells(page, "money", "want") == ["650.00"]


def test_a_wrong_mahjong_payment_marks_only_its_wrong_field(app: LedgerApp, feeds) -> None:
    feeds.ingest(
        app,
        [
            line.replace('"from":"E","to":"N","amount":"50"', '"from":"E","to":"N","amount":"40"')
            for line in feeds.example("mj")
        ],
    )
    page = _page(app, "MJ-01", "g1")
    assert "Payments: derived against recorded" in page
    assert "Commission: derived against recorded" in page
    assert _cells(page, "money", "diff") == ["40.00"] and _cells(page, "money", "want") == ["50.00"]
    assert "No bets in this round." not in page  # Mah-Jong has no bets table
