"""The surveillance section of the day report: flagged equipment and the error-rate ranking.

Computed by the same :func:`ledger.stats.survey.survey` as ``ledger stats --from D --to D``, so
the page and the command always agree. Each flagged goodness-of-fit test gets a small plot of
the observed count per pocket, face, card or tile against the count a fair piece of equipment
would give (a line across the bars).
"""

from __future__ import annotations

from datetime import date

from ledger.report.markup import Markup, el, join
from ledger.stats.collect import cell_labels
from ledger.stats.survey import Entry, ErrorRate, StatsQuery, StatsReport, survey
from ledger.store import LedgerApp
from projections.gaming_day import check_cutoff, default_cutoff

MAX_PLOTS = 12
"""Plots drawn at most (the flagged tests with the smallest corrected p-values)."""
RANKED = 10
"""Rows of each error-rate ranking."""


def day_surveillance(app: LedgerApp, day: date, cutoff_hour: int | None = None) -> Markup:
    """The section for one gaming day (a second streaming pass over the store)."""
    cutoff = default_cutoff() if cutoff_hour is None else check_cutoff(cutoff_hour)
    return surveillance_section(survey(app, StatsQuery(start=day, end=day, cutoff_hour=cutoff)))


def surveillance_section(report: StatsReport) -> Markup:
    """Flagged equipment with plots, then tables and croupiers ranked by findings per 1,000."""
    q = report.query
    valid = sum(1 for e in report.entries if e.result.valid)
    flagged = report.flagged_equipment()
    intro = el("p", f"{len(report.entries)} tests of wheels, shakers, shoes and walls "
                    f"({valid} with enough outcomes), Holm-corrected per piece of equipment; "
                    f"flagged below {q.alpha:g}. ledger stats --json gives every test.",
               class_="sub")
    if flagged:
        rows = [el("tr", el("td", t), el("td", eq), el("td", e.test), el("td", e.result.method),
                            el("td", e.result.n, class_="num"),
                            el("td", f"{e.result.p_value:.3g}", class_="num"),
                            el("td", f"{e.p_adjusted:.3g}", class_="num bad"))
                for t, eq, entries in flagged for e in entries]
        head = el("tr", [el("th", h) for h in ("table", "equipment", "test", "method")],
                  [el("th", h, class_="num") for h in ("n", "p", "corrected p")])
        equipment = join([el("table", el("thead", head), el("tbody", rows)),
                          _plots([e for _, _, es in flagged for e in es])])
    else:
        equipment = el("p", el("span", "no equipment flagged", class_="badge ok"))
    return join([
        el("h2", "Surveillance"), intro, equipment,
        el("h3", "Findings per 1,000 rounds, by table"), _ranking(report.tables, "table"),
        el("h3", "Findings per 1,000 rounds, by croupier"), _ranking(report.croupiers, "croupier"),
    ])


def _ranking(rates: list[ErrorRate], noun: str) -> Markup:
    if not rates:
        return el("p", "No round.", class_="sub")
    head = el("tr", el("th", noun), el("th", "rounds", class_="num"),
              el("th", "findings", class_="num"), el("th", "per 1,000", class_="num"),
              el("th", "by code"), el("th", "money involved"))
    rows = []
    for r in rates[:RANKED]:
        codes = ", ".join(f"{c} {n}" for c, n in sorted(r.by_code.items()))
        money = "; ".join(f"{cur} " + ", ".join(f"{k.replace('_', ' ')} {v}"
                                                for k, v in m.items() if v)
                          for cur, m in sorted(r.money.items()))
        rows.append(el("tr", el("td", r.key), el("td", r.rounds, class_="num"),
                       el("td", r.findings, class_="num bad" if r.findings else "num"),
                       el("td", f"{r.per_1000:.1f}", class_="num"), el("td", codes),
                       el("td", money)))
    return el("table", el("thead", head), el("tbody", rows))


def _plots(entries: list[Entry]) -> Markup:
    drawn = sorted((e for e in entries if e.observed is not None),
                   key=lambda e: e.p_adjusted if e.p_adjusted is not None else 1.0)[:MAX_PLOTS]
    return el("div", [observed_vs_expected(e) for e in drawn], class_="plots")


def observed_vs_expected(entry: Entry, height: int = 120) -> Markup:
    """A small bar plot: observed count per cell, the fair expectation as a line."""
    observed = entry.observed or []
    expected = entry.expected() or []
    labels = cell_labels(entry.test)
    bar = 8 if len(observed) <= 40 else 5
    left, top, bottom = 8, 22, 16
    bar = max(bar, 150 // max(len(observed), 1))
    width = max(left * 2 + bar * len(observed), 10 * len(entry.table + entry.test) + 20)
    high = max([*observed, *expected, 1])
    plot = height - top - bottom

    def y(v: float) -> float:
        return top + (1 - v / high) * plot

    title = (f"{entry.table} {entry.test} {entry.day or 'period'}: observed vs expected "
             f"(n {entry.result.n}, corrected p {entry.p_adjusted:.3g})")
    parts: list[Markup] = [el("title", title), el("text", f"{entry.table} {entry.test}", x=left,
                                                  y=14, class_="chart-title")]
    for i, count in enumerate(observed):
        parts.append(el("rect", el("title", f"{labels[i]}: {count} observed, "
                                            f"{expected[i]:.1f} expected"),
                        x=left + i * bar, y=f"{y(count):.1f}", width=bar - 1,
                        height=f"{max(height - bottom - y(count), 0.5):.1f}", fill="#1f6f8b"))
        parts.append(el("line", x1=left + i * bar, x2=left + (i + 1) * bar - 1,
                        y1=f"{y(expected[i]):.1f}", y2=f"{y(expected[i]):.1f}",
                        style="stroke:#c0392b;stroke-width:2"))
    parts.append(el("text", f"{labels[0]}…{labels[len(observed) - 1]}", x=left,
                    y=height - 3, class_="tick", style="text-anchor: start"))
    return el("svg", parts, xmlns="http://www.w3.org/2000/svg", width=width, height=height,
              viewBox=f"0 0 {width} {height}", role="img", class_="chart",
              style="margin: 0 8px 8px 0")
