"""Inline SVG: a grouped bar chart and the Fish-Prawn-Crab figures.

Pictures are drawn, not typed, so a page looks the same on any machine (no emoji font needed).
Amounts stay :class:`~decimal.Decimal`; they become floats only as pixel coordinates, and every
printed value is the decimal itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from ledger.report.markup import Markup, el

SERIES_COLOURS = ("#1f6f8b", "#c9822b", "#6a4c93", "#3a7d44")


@dataclass(frozen=True)
class BarGroup:
    """One group of bars: a label (a table code) and one value per series."""

    label: str
    values: Sequence[Decimal]


def bar_chart(title: str, series: Sequence[str], groups: Sequence[BarGroup], unit: str = "",
              height: int = 240) -> Markup:
    """A grouped bar chart with a zero line; negative values hang below it."""
    bar, gap, left, top, bottom = 22, 18, 70, 28, 46
    width = max(left + max(1, len(groups)) * (len(series) * bar + gap) + gap,
                len(title) * 7 + left, left + len(series) * 130)
    values = [v for g in groups for v in g.values] or [Decimal(0)]
    high, low = max(max(values), Decimal(0)), min(min(values), Decimal(0))
    span = (high - low) or Decimal(1)
    plot = height - top - bottom

    def y(v: Decimal) -> float:
        return top + float((high - v) / span) * plot

    parts: list[Markup] = [
        el("title", title),
        el("text", title, x=left, y=16, class_="chart-title"),
        el("line", x1=left - 4, x2=width - 4, y1=f"{y(Decimal(0)):.1f}", y2=f"{y(Decimal(0)):.1f}",
           class_="axis"),
        el("text", f"{high} {unit}".strip(), x=left - 8, y=top + 4, class_="tick"),
        el("text", f"{low} {unit}".strip(), x=left - 8, y=top + plot + 4, class_="tick"),
    ]
    for i, group in enumerate(groups):
        x0 = left + gap + i * (len(series) * bar + gap)
        for j, value in enumerate(group.values):
            y1, y2 = sorted((y(value), y(Decimal(0))))
            parts.append(el(
                "rect", el("title", f"{group.label} {series[j]}: {value} {unit}".strip()),
                x=x0 + j * bar, y=f"{y1:.1f}", width=bar - 3, height=f"{max(y2 - y1, 1):.1f}",
                fill=SERIES_COLOURS[j % len(SERIES_COLOURS)]))
        parts.append(el("text", group.label, x=x0 + len(series) * bar // 2, y=height - bottom + 16,
                        class_="label"))
    for j, name in enumerate(series):
        lx = left + j * 130
        parts.append(el("rect", x=lx, y=height - 18, width=12, height=12,
                        fill=SERIES_COLOURS[j % len(SERIES_COLOURS)]))
        parts.append(el("text", name, x=lx + 16, y=height - 8, class_="legend"))
    return el("svg", parts, xmlns="http://www.w3.org/2000/svg", width=width, height=height,
              viewBox=f"0 0 {width} {height}", role="img", class_="chart")


_FIGURES: dict[str, str] = {
    # Each figure as a few simple shapes in a 40 × 40 box, coloured by its face's colour.
    "fish": '<ellipse cx="18" cy="20" rx="12" ry="7"/><path d="M28 20 L38 12 L38 28 Z"/>'
            '<circle cx="12" cy="18" r="1.6" fill="#fff"/>',
    "prawn": '<path d="M8 26 C8 10 30 6 33 18 C34 24 28 28 24 26 C28 22 26 16 20 16 C14 16 14 26 '
             '8 26 Z"/><path d="M33 18 L39 10 M32 16 L38 6" stroke-width="1.5" fill="none"/>',
    "calabash": '<circle cx="20" cy="13" r="6"/><circle cx="20" cy="27" r="10"/>'
                '<rect x="19" y="3" width="2" height="5"/>',
    "coin": '<circle cx="20" cy="20" r="15"/><rect x="15" y="15" width="10" height="10" '
            'fill="#fff"/>',
    "crab": '<ellipse cx="20" cy="23" rx="11" ry="7"/><circle cx="8" cy="12" r="4"/>'
            '<circle cx="32" cy="12" r="4"/><path d="M10 16 L14 20 M30 16 L26 20 M9 27 L4 32 '
            'M31 27 L36 32" stroke-width="2" fill="none"/>',
    "rooster": '<ellipse cx="20" cy="25" rx="11" ry="9"/><circle cx="28" cy="12" r="5"/>'
               '<path d="M26 6 L28 3 L30 6 L32 3 L33 8 Z"/><path d="M33 12 L38 14 L33 15 Z"/>'
               '<path d="M9 22 L3 14 L8 24 Z"/>',
}
FPC_COLOURS = {"red": "#c0392b", "green": "#2e8b57", "blue": "#2c5aa0"}


def fpc_figure(figure: str, colour: str, size: int = 40) -> Markup:
    """A drawn Fish-Prawn-Crab figure (fish, prawn, calabash, coin, crab, rooster)."""
    shapes = _FIGURES.get(figure, "")
    fill = FPC_COLOURS.get(colour, "#333")
    body = Markup(f'<g fill="{fill}" stroke="{fill}">{shapes}</g>')
    return el("svg", el("title", f"{figure} ({colour})"), body, xmlns="http://www.w3.org/2000/svg",
              width=size, height=size, viewBox="0 0 40 40", role="img", class_="fpc-figure")
