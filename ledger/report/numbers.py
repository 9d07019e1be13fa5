"""How the pages write numbers: amounts with thousands separators and two decimals, counts with
separators, percentages with two decimals. Amounts stay :class:`~decimal.Decimal` to the end.
The amount formatters are :mod:`ledger.domain.money`'s (one way to write money, everywhere); this
module adds counts, percentages and :func:`plain_amounts` for JSON documents.

>>> amount(Decimal("1350")), amount(Decimal("-240.5")), amount(Decimal("1234567.891"))
('1,350.00', '−240.50', '1,234,567.89')
>>> count(4650), percent(Decimal("330"), Decimal("2090")), percent(Decimal(1), Decimal(0))
('4,650', '15.79 %', '—')

In JSON and CSV an amount is the same decimal with two decimals and no separator; a value with
more decimals keeps them (nothing is rounded away in a machine's copy):

>>> plain("37.5"), plain(Decimal("65.0")), plain("0"), plain("-11500"), plain("0.125"), plain(None)
('37.50', '65.00', '0.00', '-11500.00', '0.125', None)
>>> text("3617.5"), text(None)
('3,617.50', '-')
"""

from __future__ import annotations

from decimal import Decimal

from ledger.domain.money import MINUS, amount, plain, text

__all__ = ["MINUS", "amount", "count", "percent", "plain", "plain_amounts", "text"]


def plain_amounts(node: object, keys: frozenset[str], key: str = "") -> object:
    """A JSON-like value with the text under each of ``keys`` (at any depth) made
    :func:`plain`; everything else as it was.

    >>> plain_amounts({"seed": "20000", "n": 2, "rows": [{"seed": "1.5"}]}, frozenset({"seed"}))
    {'seed': '20000.00', 'n': 2, 'rows': [{'seed': '1.50'}]}
    """
    if isinstance(node, dict):
        return {k: plain_amounts(v, keys, k) for k, v in node.items()}
    if isinstance(node, list):
        return [plain_amounts(v, keys, key) for v in node]
    if key in keys and isinstance(node, str):
        return plain(node)
    return node


def count(value: int) -> str:
    """``4,650``."""
    return f"{value:,}"


def percent(part: Decimal, whole: Decimal) -> str:
    """``part`` as a percentage of ``whole`` with two decimals, or ``—`` when ``whole`` is 0."""
    if not whole:
        return "—"
    return f"{amount(part * 100 / whole)} %"
