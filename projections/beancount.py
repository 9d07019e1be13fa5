"""A Beancount journal of the house's movements per gaming day, with balance assertions.

For each gaming day (Macau time, cut-off hour; ``projections.gaming_day``) and currency, one
transaction per kind of movement, all amounts taken from the projections:

- commission the tables recorded, per game (commission view, ``recorded``)::

    Assets:Cage                       +c
    Income:Commission:<GAME>          -c

- jackpot contributions per pool (house view; RULES §8.6 P4), set aside for the players::

    Expenses:Jackpot:Contributions    +x
    Liabilities:Jackpot:<POOL>        -x

- jackpot awards paid out of the pool (house view; FEED §7 ``jackpot_paid``)::

    Liabilities:Jackpot:<POOL>        +a
    Assets:Cage                       -a

- the casino layer's share of SP9 bank results (house view; SP9 art. 5(5))::

    Assets:Cage                       +r
    Income:Bank:SP9                   -r

After each day a ``balance`` assertion (dated the next day, as Beancount checks balances at the
start of a day) pins every income and liability account to the cumulative total of the
projection rows exported so far, so ``bean-check`` proves the journal adds up to the views.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from projections.base import Rows
from projections.commission import money_text
from projections.gaming_day import gaming_day

ZERO = Decimal(0)
CAGE = "Assets:Cage"
CONTRIBUTIONS = "Expenses:Jackpot:Contributions"


def account_part(name: str) -> str:
    """A table, game or pool code as a Beancount account component (``A-Z0-9-`` only, starting
    with a capital letter or a digit).

    >>> account_part("pj.linked_1"), account_part("3CB")
    ('PJ-LINKED-1', '3CB')
    """
    part = re.sub(r"[^A-Za-z0-9-]", "-", name).upper()
    return part if part[:1].isalnum() else f"X{part}"


@dataclass(frozen=True)
class Movement:
    """One booked movement: a day, a currency, the account credited and the one debited."""

    day: date
    currency: str
    narration: str
    debit: str
    credit: str
    amount: Decimal


def movements(commission: Rows, house: Rows, *, cutoff_hour: int,
              day_from: date | None = None, day_to: date | None = None) -> list[Movement]:
    """The house's movements per gaming day, summed from the view rows."""
    sums: dict[tuple[date, str, str, str, str], Decimal] = defaultdict(lambda: ZERO)

    def book(hour: str, currency: str, narration: str, debit: str, credit: str,
             amount: Decimal) -> None:
        day = gaming_day(hour, cutoff_hour)
        if (day_from is None or day >= day_from) and (day_to is None or day <= day_to):
            sums[(day, currency, narration, debit, credit)] += amount

    for _, row in commission.scan("c|"):
        game = account_part(row["game"])
        book(row["hour"], row["currency"], f"commission {row['game']}", CAGE,
             f"Income:Commission:{game}", Decimal(row["recorded"]))
    for _, row in house.scan("j|"):
        pool = f"Liabilities:Jackpot:{account_part(row['pool'])}"
        book(row["hour"], row["currency"], f"jackpot {row['pool']} contributions", CONTRIBUTIONS,
             pool, Decimal(row["contributions"]))
        book(row["hour"], row["currency"], f"jackpot {row['pool']} awards", pool, CAGE,
             Decimal(row["awards"]))
    for _, row in house.scan("b|"):
        book(row["hour"], row["currency"], "SP9 bank, casino layer", CAGE, "Income:Bank:SP9",
             Decimal(row["casino_result"]))
    return [Movement(day, cur, text, debit, credit, amount)
            for (day, cur, text, debit, credit), amount in sorted(sums.items()) if amount]


def journal(moves: Iterable[Movement], *, title: str = "Ledger: house movements") -> str:
    """The Beancount text: options, account openings, one transaction per movement, and the
    balance assertions after each day."""
    moves = list(moves)
    lines = [f'option "title" "{title}"', ""]
    if not moves:
        return "\n".join(lines) + "\n"
    first = min(m.day for m in moves)
    accounts = sorted({a for m in moves for a in (m.debit, m.credit)})
    lines += [f"{first.isoformat()} open {a}" for a in accounts] + [""]
    balances: dict[tuple[str, str], Decimal] = defaultdict(lambda: ZERO)
    by_day: dict[date, list[Movement]] = defaultdict(list)
    for m in moves:
        by_day[m.day].append(m)
    for day in sorted(by_day):
        for m in by_day[day]:
            lines += [f'{day.isoformat()} * "{m.narration}" #gaming-day',
                      f"  {m.debit:<40} {money_text(m.amount):>14} {m.currency}",
                      f"  {m.credit:<40} {money_text(-m.amount):>14} {m.currency}", ""]
            balances[(m.debit, m.currency)] += m.amount
            balances[(m.credit, m.currency)] -= m.amount
        after = (day + timedelta(days=1)).isoformat() if day < date.max else day.isoformat()
        for (account, currency), amount in sorted(balances.items()):
            if account.startswith(("Income:", "Liabilities:")):
                lines.append(f"{after} balance {account:<40} {money_text(amount):>14} {currency}")
        lines.append("")
    return "\n".join(lines)
