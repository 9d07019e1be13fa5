"""Surveillance pages: the section of the day report and the page of ``ledger stats --html``.

Both are drawn from a :class:`~ledger.stats.survey.StatsReport` computed by the same
:func:`ledger.stats.survey.survey` as ``ledger stats``, so the pages and the command agree.

- the **day section** runs the survey over every night up to the day: its alarms are the
  sequential scheme's (a CUSUM per wheel, shaker, shoe and wall, with a stated false-alarm rate per night
  for the whole property), so a fair floor does not light up a few wheels every day; the tests
  over all data so far are listed beside it, and the error-rate tests of the day rank tables
  and croupiers (rounds before the day are read for their outcomes, not judged);
- the **stats page** draws each wheel's pockets on the wheel itself (single-zero order, each
  pocket coloured by observed / expected), each shaker's faces die by die against the fair
  line, and each sequential path against its threshold.
"""

from __future__ import annotations

import math
from datetime import date

from ledger.games import GAMES
from ledger.report.markup import Markup, el, join
from ledger.report.numbers import amount
from ledger.report.page import page
from ledger.report.svg import chart_svg
from ledger.stats.collect import cell_labels
from ledger.stats.survey import Entry, ErrorRate, Sequential, StatsQuery, StatsReport, survey
from ledger.storage.store import LedgerApp
from projections.gaming_day import check_cutoff, default_cutoff

_MARGIN = "margin: 0 8px 8px 0"
"""The space around each small chart of the surveillance section."""

MAX_PLOTS = 12
"""Plots drawn at most (the flagged tests with the smallest corrected p-values)."""
RANKED = 10
"""Rows of each error-rate ranking."""


def day_surveillance(app: LedgerApp, day: date, cutoff_hour: int | None = None) -> Markup:
    """The section for one gaming day: the survey of every night up to the day (a second
    streaming pass over the store)."""
    cutoff = default_cutoff() if cutoff_hour is None else check_cutoff(cutoff_hour)
    query = StatsQuery(end=day, cutoff_hour=cutoff, rates_from=day)
    return surveillance_section(survey(app, query), day)


def surveillance_section(report: StatsReport, day: date | None = None) -> Markup:
    """Sequential alarms with their paths, the tests over the period with plots, then tables
    and croupiers ranked by error rate with their tests."""
    q = report.query
    valid = sum(1 for e in report.entries if e.result.valid)
    flagged = report.flagged_equipment()
    prop = report.property_false_alarms()
    alarms = report.alarms
    seq = el(
        "p",
        f"Sequential surveillance (a CUSUM per wheel, shaker, shoe and wall, night by night"
        f"{f' up to {day}' if day else ''}): a fair wheel raises a false alarm once in "
        f"{prop['wheel']['in_control_years']} years of nights, so a property of 500 "
        f"wheels expects {prop['wheel']['per_30_nights_at_500']} a month. "
        "ledger stats --html draws every path, wheel and shaker.",
        class_="sub",
    )
    if alarms:
        seq_body = join(
            [
                el(
                    "table",
                    el(
                        "thead",
                        el(
                            "tr",
                            [
                                el("th", h)
                                for h in ("table", "equipment", "alarm on", "where", "CUSUM", "threshold")
                            ],
                        ),
                    ),
                    el(
                        "tbody",
                        [
                            el(
                                "tr",
                                el("td", s.table),
                                el("td", s.equipment),
                                el("td", s.cusum.alarm),
                                el("td", s.where(s.cusum.path[-1][2])),
                                el("td", f"{s.cusum.path[-1][1]:.1f}", class_="num bad"),
                                el("td", f"{s.scheme.threshold:g}", class_="num"),
                            )
                            for s in alarms
                        ],
                    ),
                ),
                el("div", [cusum_path(s) for s in alarms[:MAX_PLOTS]], class_="plots"),
            ]
        )
    else:
        seq_body = el("p", el("span", "no sequential alarm", class_="badge ok"))
    intro = el(
        "p",
        f"{len(report.entries)} tests over "
        f"{'every night up to ' + str(day) if day else 'the period'} "
        f"({valid} with enough outcomes), one family per piece of equipment "
        f"(discrete weighted Bonferroni), at most {q.alpha:g}. Each test asks once whether a piece is "
        "fair; looked at every night it is not property-wide control: the alarms "
        "above are. ledger stats --json gives every test.",
        class_="sub",
    )
    if flagged:
        rows = [
            el(
                "tr",
                el("td", t),
                el("td", eq),
                el("td", e.test),
                el("td", e.where()),
                el("td", _obs(e)),
                el("td", e.result.n, class_="num"),
                el("td", f"{e.result.p_value:.3g}", class_="num"),
                el("td", f"{e.p_adjusted:.3g}", class_="num bad"),
            )
            for t, eq, entries in flagged
            for e in entries
        ]
        head = el(
            "tr",
            [el("th", h) for h in ("table", "equipment", "test", "where", "observed vs expected")],
            [el("th", h, class_="num") for h in ("n", "p", "corrected p")],
        )
        equipment = join(
            [
                el("table", el("thead", head), el("tbody", rows)),
                _plots([e for _, _, es in flagged for e in es]),
            ]
        )
    else:
        equipment = el("p", el("span", "no equipment flagged", class_="badge ok"))
    return join(
        [
            el("h2", "Surveillance"),
            seq,
            seq_body,
            intro,
            equipment,
            el("h3", f"Error rates{f' on {day}' if day else ''}, by table"),
            _ranking(report.tables, "table"),
            el("h3", f"Error rates{f' on {day}' if day else ''}, by croupier"),
            _ranking(report.croupiers, "croupier"),
        ]
    )


def _obs(e: Entry) -> str:
    d = e.result.detail
    if not d:
        return ""
    low, high = d["effect_ci"]
    return (
        f"{d['observed']} vs {float(d['expected']):.1f} ({float(d['effect']):.2f}x, "
        f"95 % CI {low:.2f}-{high:.2f})"
    )


def stats_page(report: StatsReport) -> str:
    """The page of ``ledger stats --html``: the section, then every wheel on its layout, every
    shaker's faces and every sequential path."""
    by_test = {(e.table, e.test): e for e in report.entries}
    wheels = [e for e in report.entries if e.test == "pockets"]
    dice = sorted({e.table for e in report.entries if e.test.startswith("die")})
    body = join(
        [
            el("h1", "ledger stats"),
            surveillance_section(report),
            el("h2", "Wheels: pockets on the wheel"),
            el("div", [wheel_chart(e, by_test.get((e.table, "sector"))) for e in wheels], class_="plots")
            if wheels
            else el("p", "No wheel.", class_="sub"),
            el("h2", "Shakers: faces die by die"),
            el(
                "div",
                [
                    observed_vs_expected(by_test[(t, d)])
                    for t in dice
                    for d in sorted(k for (tt, k) in by_test if tt == t and k.startswith("die"))
                ],
                class_="plots",
            )
            if dice
            else el("p", "No shaker.", class_="sub"),
            el("h2", "Sequential paths"),
            el("div", [cusum_path(s) for s in report.sequential], class_="plots")
            if report.sequential
            else el("p", "No wheel or shaker.", class_="sub"),
        ]
    )
    return page("ledger stats", body)


def wheel_chart(entry: Entry, sector: Entry | None = None, size: int = 260) -> Markup:
    """The single-zero wheel, each pocket a wedge in its physical place, filled by observed /
    expected (blue below, red above); the hottest sector outlined."""
    observed = entry.observed or [0] * 37
    expected = entry.expected() or [1.0] * 37
    c = size / 2
    outer, inner = c - 6, c * 0.45
    ring = set(sector.result.detail.get("cells", [])) if sector and sector.result.detail else set()
    parts: list[Markup] = [
        el("title", f"{entry.table} pockets on the wheel: observed / expected (n {entry.result.n})")
    ]
    wheel = GAMES[entry.game].equipment
    step = 2 * math.pi / len(wheel.wheel_order)
    for i, pocket in enumerate(wheel.wheel_order):
        a0, a1 = i * step - math.pi / 2 - step / 2, i * step - math.pi / 2 + step / 2
        ratio = observed[pocket] / expected[pocket] if expected[pocket] else 1.0
        pts = [
            (c + r * math.cos(a), c + r * math.sin(a))
            for r, a in ((outer, a0), (outer, a1), (inner, a1), (inner, a0))
        ]
        path = "M {:.1f} {:.1f} L {:.1f} {:.1f} L {:.1f} {:.1f} L {:.1f} {:.1f} Z".format(
            *[v for pt in pts for v in pt]
        )
        stroke = "stroke:#000;stroke-width:2" if pocket in ring else "stroke:#fff;stroke-width:0.5"
        parts.append(
            el(
                "path",
                el(
                    "title",
                    f"pocket {pocket}: {observed[pocket]} observed, "
                    f"{expected[pocket]:.1f} expected ({ratio:.2f}x)",
                ),
                d=path,
                fill=_heat(ratio),
                style=stroke,
            )
        )
        am = i * step - math.pi / 2
        colour = "#b00" if pocket in wheel.red else ("#080" if pocket == 0 else "#000")
        parts.append(
            el(
                "text",
                pocket,
                x=f"{c + (outer + inner) / 2 * math.cos(am):.1f}",
                y=f"{c + (outer + inner) / 2 * math.sin(am) + 3:.1f}",
                style=f"font-size:8px;text-anchor:middle;fill:{colour}",
            )
        )
    parts.append(
        el(
            "text",
            entry.table,
            x=f"{c:.1f}",
            y=f"{c - 4:.1f}",
            style="font-size:13px;text-anchor:middle",
            class_="chart-title",
        )
    )
    parts.append(
        el(
            "text",
            f"p {entry.p_adjusted or 1.0:.2g} (χ²)",
            x=f"{c:.1f}",
            y=f"{c + 12:.1f}",
            style="font-size:9px;text-anchor:middle",
        )
    )
    return chart_svg(parts, size, size, "chart wheel-chart", style=_MARGIN)


def _heat(ratio: float) -> str:
    """White at 1, redder above, bluer below (saturating at 2x and 0x)."""
    t = max(-1.0, min(1.0, ratio - 1.0))
    if t >= 0:
        return f"rgb(255,{int(255 * (1 - t))},{int(255 * (1 - t))})"
    return f"rgb({int(255 * (1 + t))},{int(255 * (1 + t))},255)"


def cusum_path(seq: Sequential, width: int = 320, height: int = 140) -> Markup:
    """The largest CUSUM of a piece, night by night, against its threshold."""
    path = seq.cusum.path
    h = seq.scheme.threshold
    top = max([h * 1.15, *(v for _, v, _ in path)])
    left, right, upper, bottom = 30, 8, 22, 18
    span = max(len(path) - 1, 1)

    def xy(i: int, v: float) -> str:
        x = left + (width - left - right) * i / span
        y = upper + (height - upper - bottom) * (1 - v / top)
        return f"{x:.1f},{y:.1f}"

    hy = upper + (height - upper - bottom) * (1 - h / top)
    title = f"{seq.table} {seq.equipment} CUSUM ({seq.scheme.name}, {seq.scheme.alternative}): " + (
        f"alarm on {seq.cusum.alarm}" if seq.cusum.alarm else "no alarm"
    )
    parts: list[Markup] = [
        el("title", title),
        el("text", title, x=4, y=14, class_="chart-title", style="font-size:10px"),
        el(
            "line",
            x1=left,
            x2=width - right,
            y1=f"{hy:.1f}",
            y2=f"{hy:.1f}",
            style="stroke:#c0392b;stroke-dasharray:4 3",
        ),
        el("text", f"h {h:g}", x=2, y=f"{hy + 3:.1f}", style="font-size:9px"),
        el(
            "polyline",
            points=" ".join(xy(i, v) for i, (_, v, _) in enumerate(path)),
            style="fill:none;stroke:#1f6f8b;stroke-width:1.5",
        ),
    ]
    if path:
        parts.append(
            el(
                "text",
                f"{path[0][0]} … {path[-1][0]} ({len(path)} nights)",
                x=left,
                y=height - 4,
                style="font-size:9px",
            )
        )
    return chart_svg(parts, width, height, style=_MARGIN)


def _ranking(rates: list[ErrorRate], noun: str) -> Markup:
    if not rates:
        return el("p", "No round.", class_="sub")
    head = el(
        "tr",
        el("th", noun),
        el("th", "rounds", class_="num"),
        el("th", "rounds with an error", class_="num"),
        el("th", "rate (95 % CI)"),
        el("th", "rank (range)"),
        el("th", "p adjusted", class_="num"),
        el("th", "findings", class_="num"),
        el("th", "per 1,000", class_="num"),
        el("th", "by code"),
        el("th", "money involved"),
    )
    rows = []
    for r in rates[:RANKED]:
        codes = ", ".join(f"{c} {n}" for c, n in sorted(r.by_code.items()))
        money = "; ".join(
            f"{cur} " + ", ".join(f"{k.replace('_', ' ')} {amount(v)}" for k, v in m.items() if v)
            for cur, m in sorted(r.money.items())
        )
        t = r.test
        rate = f"{t.rate:.2%} ({t.rate_ci[0]:.2%}-{t.rate_ci[1]:.2%})" if t else ""
        rank = f"{t.rank} ({t.rank_range[0]}-{t.rank_range[1]})" if t else ""
        rows.append(
            el(
                "tr",
                el("td", r.key),
                el("td", r.rounds, class_="num"),
                el("td", r.error_rounds, class_="num"),
                el("td", rate),
                el("td", rank),
                el("td", f"{t.p_adjusted:.2g}" if t else "", class_="num bad" if t and t.flagged else "num"),
                el("td", r.findings, class_="num bad" if r.findings else "num"),
                el("td", f"{r.per_1000:.1f}", class_="num"),
                el("td", codes),
                el("td", money),
            )
        )
    return el("div", el("table", el("thead", head), el("tbody", rows)), class_="scroll")


def _plots(entries: list[Entry]) -> Markup:
    drawn = sorted(
        (e for e in entries if e.observed is not None),
        key=lambda e: e.p_adjusted if e.p_adjusted is not None else 1.0,
    )[:MAX_PLOTS]
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

    title = (
        f"{entry.table} {entry.test} {entry.day or 'period'}: observed vs expected "
        f"(n {entry.result.n}, corrected p {entry.p_adjusted:.3g})"
    )
    parts: list[Markup] = [
        el("title", title),
        el("text", f"{entry.table} {entry.test}", x=left, y=14, class_="chart-title"),
    ]
    for i, count in enumerate(observed):
        parts.append(
            el(
                "rect",
                el("title", f"{labels[i]}: {count} observed, {expected[i]:.1f} expected"),
                x=left + i * bar,
                y=f"{y(count):.1f}",
                width=bar - 1,
                height=f"{max(height - bottom - y(count), 0.5):.1f}",
                fill="#1f6f8b",
            )
        )
        parts.append(
            el(
                "line",
                x1=left + i * bar,
                x2=left + (i + 1) * bar - 1,
                y1=f"{y(expected[i]):.1f}",
                y2=f"{y(expected[i]):.1f}",
                style="stroke:#c0392b;stroke-width:2",
            )
        )
    parts.append(
        el(
            "text",
            f"{labels[0]}…{labels[len(observed) - 1]}",
            x=left,
            y=height - 3,
            class_="tick",
            style="text-anchor: start",
        )
    )
    return chart_svg(parts, width, height, style=_MARGIN)
