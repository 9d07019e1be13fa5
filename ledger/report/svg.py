"""Inline SVG: a grouped bar chart and the Fish-Prawn-Crab figures.

Pictures are drawn, not typed, so a page looks the same on any machine (no emoji font needed).
Amounts stay :class:`~decimal.Decimal`; they become floats only as pixel coordinates, and every
printed value is the decimal itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from ledger.report.markup import Child, Markup, el
from ledger.report.numbers import amount

SERIES_COLOURS = ("#1f6f8b", "#c9822b", "#6a4c93", "#3a7d44")


@dataclass(frozen=True)
class BarGroup:
    """One group of bars: a label (a table code) and one value per series."""

    label: str
    values: Sequence[Decimal]


CHAR = 7.2
"""The width of one character of the chart's 11px text, generously: labels are laid out from
it, so they never run out of the drawing."""


def chart_svg(
    parts: Child, width: int, height: int, css_class: str = "chart", **attrs: str | int | None
) -> Markup:
    """The ``<svg>`` element every chart of the pages is drawn in: ``width`` × ``height`` pixels,
    its own view box, ``role="img"``; ``attrs`` (e.g. ``style``) come last."""
    return el(
        "svg",
        parts,
        xmlns="http://www.w3.org/2000/svg",
        width=width,
        height=height,
        viewBox=f"0 0 {width} {height}",
        role="img",
        class_=css_class,
        **attrs,
    )


def nice_ticks(low: Decimal, high: Decimal, count: int = 5) -> list[Decimal]:
    """Round tick values from at most ``low`` to at least ``high``, 0 always among them.

    >>> [str(t) for t in nice_ticks(Decimal(-240), Decimal(330))]
    ['-400', '-200', '0', '200', '400']
    >>> [str(t) for t in nice_ticks(Decimal(0), Decimal("37.5"))]
    ['0', '10', '20', '30', '40']
    >>> [str(t) for t in nice_ticks(Decimal(0), Decimal(0))]
    ['0', '1']
    """
    low, high = min(low, Decimal(0)), max(high, Decimal(0))
    span = (high - low) or Decimal(count)
    raw = span / count
    magnitude = Decimal(1).scaleb(raw.adjusted())
    step = next(
        m * magnitude
        for m in (Decimal(1), Decimal(2), Decimal("2.5"), Decimal(5), Decimal(10))
        if m * magnitude >= raw
    )
    first = (low / step).to_integral_value(rounding="ROUND_FLOOR") * step
    ticks = [first]
    while ticks[-1] < high or len(ticks) < 2:
        ticks.append(ticks[-1] + step)
    return [Decimal(int(t)) if t == t.to_integral_value() else t.normalize() for t in ticks]


def bar_chart(
    title: str, series: Sequence[str], groups: Sequence[BarGroup], unit: str = "", height: int = 260
) -> Markup:
    """A grouped bar chart with gridlines at round values, a zero line, tick labels with
    thousands separators sized to fit, and group labels that never overlap; negative values
    hang below the zero line."""
    values = [v for g in groups for v in g.values] or [Decimal(0)]
    ticks = nice_ticks(min(values), max(values))
    labels = [amount(t, 0) if t == t.to_integral_value() else amount(t) for t in ticks]
    bar, gap, top, bottom = 22, 18, 46, 58
    left = int(max(len(x) for x in [*labels, unit]) * CHAR) + 18
    slots = [max(len(series) * bar, int(len(g.label) * CHAR) + 6) for g in groups]
    legend = sum(int(len(name) * CHAR) + 40 for name in series)
    width = max(left + sum(slots) + gap * (len(slots) + 1) + 8, int(len(title) * 8) + 16, left + legend)
    low, high = ticks[0], ticks[-1]
    plot = height - top - bottom

    def y(v: Decimal) -> float:
        return top + float((high - v) / (high - low)) * plot

    parts: list[Markup] = [
        el("title", title),
        el("text", title, x=8, y=16, class_="chart-title"),
        el("text", unit, x=left - 8, y=top - 14, class_="tick"),
    ]
    for tick, text in zip(ticks, labels, strict=True):
        ty = f"{y(tick):.1f}"
        parts.append(el("line", x1=left, x2=width - 8, y1=ty, y2=ty, class_="axis" if tick == 0 else "grid"))
        parts.append(el("text", text, x=left - 8, y=f"{y(tick) + 4:.1f}", class_="tick"))
    x0 = left + gap
    for group, slot in zip(groups, slots, strict=True):
        bars_x = x0 + (slot - len(series) * bar) // 2
        for j, value in enumerate(group.values):
            y1, y2 = sorted((y(value), y(Decimal(0))))
            parts.append(
                el(
                    "rect",
                    el("title", f"{group.label} {series[j]}: {amount(value)} {unit}".strip()),
                    x=bars_x + j * bar,
                    y=f"{y1:.1f}",
                    width=bar - 3,
                    height=f"{max(y2 - y1, 1):.1f}",
                    fill=SERIES_COLOURS[j % len(SERIES_COLOURS)],
                )
            )
        parts.append(el("text", group.label, x=x0 + slot // 2, y=height - bottom + 18, class_="label"))
        x0 += slot + gap
    return _chart(parts, series, left, width, height)


def hbar_chart(
    title: str, series: Sequence[str], groups: Sequence[BarGroup], unit: str = "", width: int = 560
) -> Markup:
    """The same chart on its side, for many groups: one row per group (its label on the left),
    the values along a gridded axis at the top; it grows downwards, never sideways."""
    values = [v for g in groups for v in g.values] or [Decimal(0)]
    ticks = nice_ticks(min(values), max(values), count=4)
    labels = [amount(t, 0) if t == t.to_integral_value() else amount(t) for t in ticks]
    bar, gap, top, bottom = 9, 8, 58, 30
    left = int(max([len(g.label) for g in groups] + [4]) * CHAR) + 16
    right = int(len(labels[-1]) * CHAR / 2) + 12
    row = len(series) * bar + gap
    height = top + row * len(groups) + bottom
    width = max(width, left + right + 60 * len(ticks), int(len(title) * 8) + 16)
    low, high = ticks[0], ticks[-1]
    span = width - left - right

    def x(v: Decimal) -> float:
        return left + float((v - low) / (high - low)) * span

    parts: list[Markup] = [el("title", title), el("text", title, x=8, y=16, class_="chart-title")]
    for tick, text in zip(ticks, labels, strict=True):
        tx = f"{x(tick):.1f}"
        parts.append(
            el("line", x1=tx, x2=tx, y1=top - 4, y2=height - bottom, class_="axis" if tick == 0 else "grid")
        )
        parts.append(el("text", text, x=tx, y=top - 12, class_="label"))
    for i, group in enumerate(groups):
        y0 = top + i * row + gap // 2
        for j, value in enumerate(group.values):
            x1, x2 = sorted((x(value), x(Decimal(0))))
            parts.append(
                el(
                    "rect",
                    el("title", f"{group.label} {series[j]}: {amount(value)} {unit}".strip()),
                    x=f"{x1:.1f}",
                    y=y0 + j * bar,
                    width=f"{max(x2 - x1, 1):.1f}",
                    height=bar - 1,
                    fill=SERIES_COLOURS[j % len(SERIES_COLOURS)],
                )
            )
        parts.append(el("text", group.label, x=left - 8, y=y0 + len(series) * bar // 2 + 4, class_="tick"))
    return _chart(parts, series, left, width, height)


def _chart(parts: list[Markup], series: Sequence[str], left: int, width: int, height: int) -> Markup:
    """The chart's SVG element: ``parts`` and, along the bottom from ``left``, the legend of
    ``series`` in their colours."""
    lx = left
    for j, name in enumerate(series):
        parts.append(
            el("rect", x=lx, y=height - 20, width=12, height=12, fill=SERIES_COLOURS[j % len(SERIES_COLOURS)])
        )
        parts.append(el("text", name, x=lx + 16, y=height - 10, class_="legend"))
        lx += int(len(name) * CHAR) + 40
    return chart_svg(parts, width, height)


_FIGURES: dict[str, str] = {
    # Each figure as a few simple shapes in a 40 × 40 box, coloured by its face's colour.
    "fish": '<ellipse cx="18" cy="20" rx="12" ry="7"/><path d="M28 20 L38 12 L38 28 Z"/>'
    '<circle cx="12" cy="18" r="1.6" fill="#fff"/>',
    "prawn": '<path d="M8 26 C8 10 30 6 33 18 C34 24 28 28 24 26 C28 22 26 16 20 16 C14 16 14 26 '
    '8 26 Z"/><path d="M33 18 L39 10 M32 16 L38 6" stroke-width="1.5" fill="none"/>',
    "calabash": '<circle cx="20" cy="13" r="6"/><circle cx="20" cy="27" r="10"/>'
    '<rect x="19" y="3" width="2" height="5"/>',
    "coin": '<circle cx="20" cy="20" r="15"/><rect x="15" y="15" width="10" height="10" fill="#fff"/>',
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
    return el(
        "svg",
        el("title", f"{figure} ({colour})"),
        body,
        xmlns="http://www.w3.org/2000/svg",
        width=size,
        height=size,
        viewBox="0 0 40 40",
        role="img",
        class_="fpc-figure",
    )
