"""How the pages write numbers: amounts with thousands separators and two decimals, counts with
separators, percentages with two decimals. Amounts stay :class:`~decimal.Decimal` to the end.

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

from decimal import ROUND_HALF_UP, Decimal

MINUS = "−"
"""A true minus sign: as wide as a digit, so columns of signed amounts line up."""


def amount(value: Decimal, places: int = 2) -> str:
    """``1,350.00``: thousands separators, ``places`` decimals, a minus sign for negatives."""
    quantum = Decimal(1).scaleb(-places)
    text = f"{abs(value).quantize(quantum, rounding=ROUND_HALF_UP):,.{places}f}"
    return f"{MINUS}{text}" if value < 0 and text.strip("0.,") else text


def plain(value: Decimal | str | None) -> str | None:
    """An amount for JSON or CSV: at least two decimals, no separators; ``None`` stays ``None``."""
    if value is None:
        return None
    number = Decimal(value)
    if number == number.to_integral_value() or -number.as_tuple().exponent <= 2:  # type: ignore[operator]
        number = number.quantize(Decimal("0.01"))
    return f"{number:f}"


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


def text(value: Decimal | str | None) -> str:
    """An amount for a person: :func:`amount` of a decimal or its text, with more than two
    decimals only when the value has them (never rounded), an ASCII ``-`` sign (a terminal's
    text is copied and searched), ``-`` for nothing.

    >>> text("0.125"), text("-1000")
    ('0.125', '-1,000.00')
    """
    if value is None:
        return "-"
    number = Decimal(value)
    exponent = number.as_tuple().exponent
    places = max(2, -exponent) if isinstance(exponent, int) else 2
    return amount(number, places).replace(MINUS, "-")


def count(value: int) -> str:
    """``4,650``."""
    return f"{value:,}"


def percent(part: Decimal, whole: Decimal) -> str:
    """``part`` as a percentage of ``whole`` with two decimals, or ``—`` when ``whole`` is 0."""
    if not whole:
        return "—"
    return f"{amount(part * 100 / whole)} %"
