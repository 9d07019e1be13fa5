"""Money: decimal amounts, the one rounding policy (RULES §8 G1) and a conserving split.

Every amount in the ledger is a :class:`~decimal.Decimal` in the round's currency; floats never
appear. All rounding goes through :func:`round_money`, and shares go through :func:`split`,
which conserves the total by construction (the commission and what remains always add back up).
How an amount is written for a person (:func:`text`, :func:`amount`) or a machine
(:func:`plain`) is here too, so every command and page writes money one way.

>>> round_money(Decimal("47.505"))
Decimal('47.51')
>>> round_money(Decimal("47.505"), mode="down")
Decimal('47.50')
>>> split(Decimal("950"), Decimal("0.05"))
(Decimal('47.50'), Decimal('902.50'))
"""

from __future__ import annotations

from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal, InvalidOperation
from functools import lru_cache
from typing import Literal, overload

RoundingMode = Literal["half_up", "down"]

ZERO = Decimal(0)
CENT = Decimal("0.01")

_MODES = {"half_up": ROUND_HALF_UP, "down": ROUND_DOWN}
_UNIT = Decimal(1)
"""The exponent :func:`round_money` quantizes a count of increments to (made once)."""


def round_money(amount: Decimal, *, mode: RoundingMode = "half_up", increment: Decimal = CENT) -> Decimal:
    """Round ``amount`` to a multiple of ``increment`` (RULES §8 G1: half-up to 0.01 by default).

    The result keeps the increment's exponent, so ``Decimal("5")`` rounds to ``Decimal("5.00")``;
    compare amounts by value, never by their string.
    """
    if increment <= 0:
        raise ValueError(f"rounding increment must be positive, not {increment}")
    units = (amount / increment).quantize(_UNIT, rounding=_MODES[mode])
    return (units * increment).quantize(increment)


def split(
    amount: Decimal,
    rate: Decimal,
    *,
    mode: RoundingMode = "half_up",
    increment: Decimal = CENT,
) -> tuple[Decimal, Decimal]:
    """Split ``amount`` into ``(share, remainder)`` where share = rate × amount, rounded.

    The two always add back to ``amount`` exactly (pokerkit's ``rake`` shape).
    """
    share = round_money(amount * rate, mode=mode, increment=increment)
    return share, amount - share


def share_down(amount: Decimal, parts: int, *, increment: Decimal = CENT) -> tuple[Decimal, Decimal]:
    """Divide ``amount`` into ``parts`` equal shares rounded down, and the remainder (G1 splits).

    >>> share_down(Decimal("100"), 3)
    (Decimal('33.33'), Decimal('0.01'))
    """
    if parts <= 0:
        raise ValueError("parts must be positive")
    share = round_money(amount / parts, mode="down", increment=increment)
    return share, amount - share * parts


def same_amount(a: Decimal, b: Decimal) -> bool:
    """Compare two amounts by value (``Decimal("5") == Decimal("5.00")``).

    Decimal equality is by value (as ``a.compare(b) == 0``, and false for a NaN as that is),
    without building the comparison's Decimal result."""
    return a == b


MINUS = "−"
"""A true minus sign: as wide as a digit, so columns of signed amounts line up (pages)."""


def amount(value: Decimal, places: int = 2) -> str:
    """``1,350.00``: thousands separators, ``places`` decimals, a minus sign for negatives.

    >>> amount(Decimal("1350")), amount(Decimal("-240.5")), amount(Decimal("1234567.891"))
    ('1,350.00', '−240.50', '1,234,567.89')
    """
    quantum = Decimal(1).scaleb(-places)
    shown = f"{abs(value).quantize(quantum, rounding=ROUND_HALF_UP):,.{places}f}"
    return f"{MINUS}{shown}" if value < 0 and shown.strip("0.,") else shown


@overload
def plain(value: Decimal | str) -> str: ...


@overload
def plain(value: None) -> None: ...


def plain(value: Decimal | str | None) -> str | None:
    """An amount for JSON or CSV: at least two decimals, no separators; ``None`` stays ``None``.
    A value with more decimals keeps them (nothing is rounded away in a machine's copy).

    >>> plain("37.5"), plain(Decimal("65.0")), plain("0"), plain("-11500"), plain("0.125"), plain(None)
    ('37.50', '65.00', '0.00', '-11500.00', '0.125', None)
    """
    if value is None:
        return None
    number = Decimal(value)
    if number == number.to_integral_value() or -number.as_tuple().exponent <= 2:  # type: ignore[operator]
        number = number.quantize(CENT)
    return f"{number:f}"


def text(value: Decimal | str | None) -> str:
    """An amount for a person: :func:`amount` of a decimal or its text, with more than two
    decimals only when the value has them (never rounded), an ASCII ``-`` sign (a terminal's
    text is copied and searched), ``-`` for nothing.

    >>> text("3617.5"), text("0.125"), text("-1000"), text(None)
    ('3,617.50', '0.125', '-1,000.00', '-')
    """
    if value is None:
        return "-"
    return _text_of(value if isinstance(value, str) else str(value))


@lru_cache(maxsize=4096)
def _text_of(written: str) -> str:
    """:func:`text` of an amount's own text (``str`` of a Decimal keeps its exponent, so
    ``1.5`` and ``1.500`` stay apart): a round's stakes and prizes repeat, and a derivation
    writes each several times (the cache keeps a verification's cost as without the text)."""
    number = Decimal(written)
    exponent = number.as_tuple().exponent
    places = max(2, -exponent) if isinstance(exponent, int) else 2
    return amount(number, places).replace(MINUS, "-")


def text_or_same(value: object) -> str:
    """:func:`text` of a value that reads as a decimal amount; anything else (a result such as
    ``win``, a condition such as ``>= 100``, ``None``) as its own text (``None``: ``-``).

    >>> text_or_same("11500"), text_or_same("win"), text_or_same(">= 100"), text_or_same(None)
    ('11,500.00', 'win', '>= 100', '-')
    """
    if value is None:
        return "-"
    if isinstance(value, (Decimal, str)) and not isinstance(value, bool):
        try:
            number = Decimal(value)
        except InvalidOperation:
            return str(value)
        if number.is_finite():
            return text(number)
    return str(value)


AMOUNT_FIELDS = frozenset(
    {"amount", "returned", "won", "commission", "result", "bank_result", "capacity", "shortfall", "capital"}
)
"""The names under which an event, a settlement or a finding's ``expected``/``recorded`` holds
money (``result`` is money in a ``bank_settled``, a word such as ``win`` in a bet settlement)."""


def field_text(name: str, value: object) -> str:
    """A named field for a person: an amount (:data:`AMOUNT_FIELDS`) as :func:`text`, anything
    else as its text; ``None`` as ``-``.

    >>> field_text("won", "2000"), field_text("result", "win"), field_text("seq", 34)
    ('2,000.00', 'win', '34')
    """
    if name in AMOUNT_FIELDS:
        return text_or_same(value)
    return "-" if value is None else str(value)
