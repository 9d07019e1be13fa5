"""A minimal HTML builder that escapes by default.

Every string handed to :func:`el` is escaped unless it is already :class:`Markup` — markup this
module built. Feed text (player ids, irregularity details, round-void reasons) therefore can only
reach a page as text: a ``<script>`` in a detail is shown, never run.

>>> str(el("td", "<script>x</script>", class_="why"))
'<td class="why">&lt;script&gt;x&lt;/script&gt;</td>'
>>> str(el("p", el("b", "1 < 2"), " & more"))
'<p><b>1 &lt; 2</b> &amp; more</p>'
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import TypeAlias

VOID_TAGS = frozenset({"br", "hr", "img", "meta", "col"})


class Markup(str):
    """Trusted HTML: built by this module, never taken from input."""

    __slots__ = ()


Child: TypeAlias = str | int | Iterable["Child"] | None
"""What an element may contain: text (escaped), markup, numbers, nothing, or a sequence."""


def esc(value: object) -> Markup:
    """``value`` as HTML text (markup passes through unchanged)."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(str(value), quote=True))


def join(children: Iterable[Child]) -> Markup:
    """Children concatenated, text escaped."""
    parts: list[str] = []
    for child in children:
        if child is None:
            continue
        if isinstance(child, str | int):
            parts.append(esc(child))
        else:
            parts.append(join(child))
    return Markup("".join(parts))


def el(tag: str, *children: Child, **attrs: str | int | None) -> Markup:
    """One element. ``class_`` becomes ``class``; ``data_x`` becomes ``data-x``; ``None``
    attributes are left out. Attribute values are escaped like text."""
    rendered = "".join(
        f' {name.rstrip("_").replace("_", "-")}="{esc(value)}"'
        for name, value in attrs.items()
        if value is not None
    )
    if tag in VOID_TAGS:
        return Markup(f"<{tag}{rendered}>")
    return Markup(f"<{tag}{rendered}>{join(children)}</{tag}>")
