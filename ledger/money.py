"""Money: decimal amounts, the one rounding policy (RULES §8 G1) and a conserving split.

Every amount in the ledger is a :class:`~decimal.Decimal` in the round's currency; floats never
appear. All rounding goes through :func:`round_money`, and shares go through :func:`split`,
which conserves the total by construction (the commission and what remains always add back up).

>>> round_money(Decimal("47.505"))
Decimal('47.51')
>>> round_money(Decimal("47.505"), mode="down")
Decimal('47.50')
>>> split(Decimal("950"), Decimal("0.05"))
(Decimal('47.50'), Decimal('902.50'))
"""

from __future__ import annotations

from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal
from typing import Literal

RoundingMode = Literal["half_up", "down"]

ZERO = Decimal(0)
CENT = Decimal("0.01")

_MODES = {"half_up": ROUND_HALF_UP, "down": ROUND_DOWN}


def round_money(amount: Decimal, *, mode: RoundingMode = "half_up", increment: Decimal = CENT) -> Decimal:
    """Round ``amount`` to a multiple of ``increment`` (RULES §8 G1: half-up to 0.01 by default).

    The result keeps the increment's exponent, so ``Decimal("5")`` rounds to ``Decimal("5.00")``;
    compare amounts by value, never by their string.
    """
    if increment <= 0:
        raise ValueError(f"rounding increment must be positive, not {increment}")
    units = (amount / increment).quantize(Decimal(1), rounding=_MODES[mode])
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
