"""``ledger report --day D --html FILE``: one gaming day, read at a glance.

Top to bottom: the day's totals per currency (turnover, hold with hold %, commission, hold Δ
rules, findings); one row per table and a total row per currency; a hold-and-commission chart per
currency (amounts in different currencies are never added); the findings grouped by table and
code, counts first and each finding folded away (``<details>``), errors in red and information
in blue; any extra sections (:func:`render_day`'s ``extra``); and a footer saying which state of
the store the page describes (:mod:`ledger.report.provenance`). Every amount has thousands
separators and two decimals (:mod:`ledger.report.numbers`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ledger.domain.findings import FINDING_CODES, Finding
from ledger.games import GAMES
from ledger.report.day import DaySummary, TableDay
from ledger.report.html_round import findings_table
from ledger.report.markup import Markup, el, join
from ledger.report.numbers import amount, count, percent
from ledger.report.page import page
from ledger.report.provenance import Provenance, footer
from ledger.report.svg import BarGroup, bar_chart, hbar_chart

UPRIGHT_CHART_TABLES = 10
"""Up to this many tables a currency's chart has upright bars; more, and it lies on its side,
one row per table, so that it grows downwards instead of out of the page."""
MAX_FINDINGS = 500
"""The page details at most this many findings per table and code; the counts are all there,
and ``ledger verify --json`` lists every one."""


def render_day(
    summary: DaySummary, provenance: Provenance | None = None, extra: Sequence[Markup] = ()
) -> str:
    """The whole page of one day. ``extra`` holds further sections (each an ``<h2>`` and its
    body), placed after the findings and before the footer."""
    day = summary.day.isoformat()
    return page(
        f"Gaming day {day}",
        join(
            [
                el(
                    "header",
                    el("h1", f"Gaming day {day}"),
                    el(
                        "p",
                        f"{count(len(summary.tables))} tables · rounds closed or voided that opened "
                        "on this gaming day · hold = the house's result before commission · "
                        "hold % = hold ÷ turnover",
                        class_="sub",
                    ),
                    verdict(summary),
                ),
                el("section", el("h2", "The day at a glance"), glance(summary), class_="glance-section"),
                el("section", el("h2", "Per table"), day_table(summary)),
                el("section", el("h2", "Hold and commission"), charts(summary)),
                el("section", el("h2", "Findings by table and code"), findings_block(summary), id="findings"),
                join(extra),
                footer(
                    provenance,
                    f"ledger report --day {day} · one round: ledger report TABLE/ROUND --html FILE",
                ),
            ]
        ),
    )


def _errors_and_info(summary: DaySummary) -> tuple[int, int]:
    errors = sum(len(t.errors) for t in summary.tables)
    return errors, sum(len(t.findings) for t in summary.tables) - errors


def verdict(summary: DaySummary) -> Markup:
    """A badge: no finding, or how many errors (and information findings)."""
    errors, info = _errors_and_info(summary)
    badges = [
        el("span", f"{count(errors)} finding{'s' if errors != 1 else ''}", class_="badge bad")
        if errors
        else el("span", "no finding", class_="badge ok")
    ]
    if info:
        badges.append(el("span", f"{count(info)} for information", class_="badge info"))
    return el("p", badges, class_="badges")


def glance(summary: DaySummary) -> Markup:
    """One card per currency: turnover, hold and hold %, commission, hold Δ rules, findings."""
    if not summary.tables:
        return el("p", "No round of this day is in the store.", class_="sub")
    cards = []
    for currency, t in sorted(summary.totals().items()):
        cards.append(
            el(
                "div",
                el("div", currency, class_="cur"),
                el(
                    "dl",
                    [
                        _fact("turnover", amount(t.turnover)),
                        _fact("hold", amount(t.hold), el("span", percent(t.hold, t.turnover), class_="pct")),
                        _fact("commission", amount(t.commission)),
                        _fact("hold Δ rules", amount(t.hold_delta), bad=bool(t.hold_delta)),
                        _fact("rounds", count(t.rounds)),
                        _fact("findings", count(len(t.errors)), bad=bool(t.errors)),
                    ],
                ),
                class_="glance",
            )
        )
    return el("div", cards, class_="glances")


def _fact(name: str, value: str, *more: Markup, bad: bool = False) -> Markup:
    return el("div", el("dt", name), el("dd", value, " ", *more, class_="bad" if bad else None))


COLUMNS = ("rounds", "voided", "bets", "turnover", "hold", "hold %", "commission", "hold Δ rules", "findings")


def day_table(summary: DaySummary) -> Markup:
    """One row per table, then one total row per currency."""
    if not summary.tables:
        return el("p", "No round of this day is in the store.", class_="sub")
    head = el(
        "tr",
        el("th", "table"),
        el("th", "game"),
        el("th", "cur."),
        [el("th", n, class_="num") for n in COLUMNS],
    )
    rows = [_row(t) for t in summary.tables]
    rows += [_row(t, total=True) for _, t in sorted(summary.totals().items())]
    return el("div", el("table", el("thead", head), el("tbody", rows), class_="figures"), class_="scroll")


def _row(t: TableDay, total: bool = False) -> Markup:
    errors, info = len(t.errors), len(t.findings) - len(t.errors)
    cells = [el("td", t.table), el("td", t.game), el("td", t.currency)]
    cells += [el("td", count(v), class_="num") for v in (t.rounds, t.voided, t.bets)]
    cells += [
        el("td", amount(t.turnover), class_="num"),
        el("td", amount(t.hold), class_="num"),
        el("td", percent(t.hold, t.turnover) if _takes_bets(t.game) else "—", class_="num pct"),
        el("td", amount(t.commission), class_="num"),
        el("td", amount(t.hold_delta), class_="num bad" if t.hold_delta else "num"),
    ]
    found = [el("span", count(errors), class_="bad" if errors else None)]
    if info:
        found.append(el("span", f" +{count(info)} info", class_="info-text"))
    cells.append(el("td", found, class_="num"))
    return el("tr", cells, class_="total" if total else None)


def charts(summary: DaySummary) -> Markup:
    """A hold-and-commission bar chart per currency."""
    if not summary.tables:
        return el("p", "Nothing to chart.", class_="sub")
    out = []
    for currency in sorted({t.currency for t in summary.tables}):
        groups = [BarGroup(t.table, (t.hold, t.commission)) for t in summary.tables if t.currency == currency]
        chart = bar_chart if len(groups) <= UPRIGHT_CHART_TABLES else hbar_chart
        out.append(
            el(
                "figure",
                chart(
                    f"Hold and commission per table ({currency})",
                    ("hold", "commission"),
                    groups,
                    unit=currency,
                ),
                class_="chart-box",
            )
        )
    return el("div", out, class_="charts")


def findings_block(summary: DaySummary) -> Markup:
    """The counts per table and code first, then each table's findings folded by code."""
    tables = [t for t in summary.tables if t.findings]
    if not tables:
        return el("p", "None: every round of the day was derived as recorded.", class_="sub")
    head = el(
        "tr",
        el("th", "table"),
        el("th", "code"),
        el("th", "severity"),
        el("th", "count", class_="num"),
        el("th", "meaning"),
    )
    rows = []
    for t in tables:
        for (code, severity), n in _counts(t.findings):
            rows.append(
                el(
                    "tr",
                    el("td", t.table),
                    el("td", el("code", code, class_="code")),
                    el("td", el("span", severity, class_=f"sev {severity}")),
                    el("td", count(n), class_="num"),
                    el("td", FINDING_CODES.get(code, ""), class_="meaning"),
                    class_=f"sev-{severity}",
                )
            )
    counts = el("table", el("thead", head), el("tbody", rows), class_="counts")
    folded = [_table_details(t) for t in tables]
    return join([counts, el("div", folded, class_="folded")])


def _counts(findings: list[Finding]) -> list[tuple[tuple[str, str], int]]:
    """``((code, severity), n)``, errors first, then by count and code."""
    tally = Counter((f.code, f.severity) for f in findings)
    return sorted(tally.items(), key=lambda kv: (kv[0][1] != "error", -kv[1], kv[0][0]))


def _table_details(t: TableDay) -> Markup:
    errors, info = len(t.errors), len(t.findings) - len(t.errors)
    summary = [el("b", t.table), f" — {count(errors)} error{'s' if errors != 1 else ''}"]
    if info:
        summary.append(f", {count(info)} for information")
    codes = []
    for (code, severity), n in _counts(t.findings):
        chosen = [f for f in t.findings if f.code == code and f.severity == severity]
        listed = [f.to_json() for f in chosen[:MAX_FINDINGS]]
        more = (
            el(
                "p",
                f"… and {count(n - MAX_FINDINGS)} more: ledger verify --table {t.table} --json lists all.",
                class_="sub",
            )
            if n > MAX_FINDINGS
            else None
        )
        codes.append(
            el(
                "details",
                el(
                    "summary",
                    el("span", count(n), class_=f"count {severity}"),
                    " ",
                    el("code", code),
                    " ",
                    el("span", severity, class_=f"sev {severity}"),
                ),
                findings_table(listed, with_round=True),
                more,
                class_="code",
            )
        )
    return el("details", el("summary", summary), codes, class_="table-findings")


def _takes_bets(game: str) -> bool:
    """Whether the game's hold is a share of what was staked (not between players)."""
    known = GAMES.get(game)
    return known is None or known.takes_bets
