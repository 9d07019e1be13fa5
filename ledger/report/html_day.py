"""``ledger report --day D --html FILE``: one gaming day, a row per table, with a chart.

The table gives each table's rounds, turnover, hold (the house's result), commission, the
difference between recorded and derived hold, and the findings; one total row per currency.
The chart (inline SVG) shows hold and commission per table, one chart per currency, since
amounts in different currencies are never added. The day's findings follow, one per row.
"""

from __future__ import annotations

from ledger.report.day import DaySummary, TableDay
from ledger.report.html_round import findings_table
from ledger.report.markup import Markup, el, join
from ledger.report.page import page
from ledger.report.svg import BarGroup, bar_chart

MAX_FINDINGS = 500
"""The page lists at most this many findings; ``ledger verify`` lists them all."""


def render_day(summary: DaySummary, surveillance: Markup | None = None) -> str:
    """The whole page of one day; ``surveillance`` is the equipment section
    (:mod:`ledger.report.surveillance`), placed after the findings."""
    errors = [f for t in summary.tables for f in t.errors]
    badge = (el("span", f"{len(errors)} finding{'s' if len(errors) != 1 else ''}",
                class_="badge bad") if errors
             else el("span", "no finding", class_="badge ok"))
    listed = [f.to_json() for f in errors[:MAX_FINDINGS]]
    more = (el("p", f"… and {len(errors) - MAX_FINDINGS} more: ledger verify --json lists all.",
               class_="sub") if len(errors) > MAX_FINDINGS else None)
    return page(f"Gaming day {summary.day.isoformat()}", join([
        el("h1", f"Gaming day {summary.day.isoformat()}"),
        el("p", f"{len(summary.tables)} tables · rounds closed or voided that opened on this day "
                "(table time) · hold = the house's result before commission", class_="sub"),
        el("p", badge),
        el("h2", "Per table"), day_table(summary),
        el("h2", "Hold and commission"), charts(summary),
        el("h2", "Findings"), findings_table(listed, with_round=True), more,
        surveillance,
        el("footer", f"ledger report --day {summary.day.isoformat()} — one round: "
                     "ledger report TABLE/ROUND --html FILE"),
    ]))


def day_table(summary: DaySummary) -> Markup:
    """One row per table, then one total row per currency."""
    if not summary.tables:
        return el("p", "No round of this day is in the store.", class_="sub")
    nums = ("rounds", "voided", "bets", "turnover", "hold", "commission", "hold Δ rules",
            "findings")
    head = el("tr", el("th", "table"), el("th", "game"), el("th", "currency"),
              [el("th", n, class_="num") for n in nums])
    rows = [_row(t) for t in summary.tables]
    rows += [_row(t, total=True) for _, t in sorted(summary.totals().items())]
    return el("table", el("thead", head), el("tbody", rows))


def _row(t: TableDay, total: bool = False) -> Markup:
    errors = len(t.errors)
    cells = [el("td", t.table), el("td", t.game), el("td", t.currency)]
    cells += [el("td", v, class_="num") for v in (t.rounds, t.voided, t.bets, str(t.turnover),
                                                 str(t.hold), str(t.commission))]
    cells.append(el("td", str(t.hold_delta), class_="num bad" if t.hold_delta else "num"))
    cells.append(el("td", errors, class_="num bad" if errors else "num"))
    return el("tr", cells, class_="total" if total else None)


def charts(summary: DaySummary) -> Markup:
    """A hold-and-commission bar chart per currency."""
    if not summary.tables:
        return el("p", "Nothing to chart.", class_="sub")
    out = []
    for currency in sorted({t.currency for t in summary.tables}):
        groups = [BarGroup(t.table, (t.hold, t.commission))
                  for t in summary.tables if t.currency == currency]
        out.append(el("div", bar_chart(f"Hold and commission per table ({currency})",
                                       ("hold", "commission"), groups, unit=currency)))
    return join(out)
