"""A Beancount journal of the house's books per gaming day, with balance assertions that pin
it to the views.

For each gaming day (Macau time, cut-off hour; ``projections.gaming_day``), currency and table
or pool, one transaction per kind of movement, every amount summed from the ``house`` view
(``projections.house``: the games' money hooks over rounds judged as verify judges them):

- commission recorded, per kind, to ``Income:Commission:Bets|BankLayers|Fees:<TABLE>``
  (bet settlements; every SP9 bank layer's ``bank_settled.commission``; every Mah-Jong
  ``commission_charged``), against ``Assets:Cage``;
- hold (the house's own result before commission, signed) to ``Income:Hold:<TABLE>``;
- per jackpot pool, to ``Liabilities:Jackpot:<POOL>`` (what the pool owes the players):
  the seed the house put in when the pool opened (``Expenses:Jackpot:Seed``), contributions
  (``Expenses:Jackpot:Contributions``, RULES §8.6 P4), resets of an emptied pool
  (``Expenses:Jackpot:Resets``), and awards paid out of the pool (against ``Assets:Cage``);
  awards or parts of awards the house funded (fixed sums, excess over the pool) are an expense,
  ``Expenses:Jackpot:HouseFunded`` against ``Assets:Cage``, and leave the liability alone.

After each gaming day a ``balance`` assertion (dated the next day, as Beancount checks balances
at the start of a day) pins every commission and hold account and every pool liability to the
cumulative total of the view rows exported so far; the pool liability equals
``−(seed + contributions − pool awards + resets)``, the balance ``ledger jackpot`` shows.
When the export starts at a later gaming day, each pool's balance before it is brought in from
``Equity:Opening-Balances``. So ``bean-check`` proves the journal adds up to the views.
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
OPENING = "Equity:Opening-Balances"
COMMISSION_ACCOUNTS = {
    "bet": "Income:Commission:Bets",
    "bank": "Income:Commission:BankLayers",
    "fee": "Income:Commission:Fees",
}
"""The commission account of each ``Charge.kind``, followed by ``:<TABLE>``."""
HOLD = "Income:Hold"
POOL = "Liabilities:Jackpot"
ASSERTED = ("Income:", "Liabilities:")


def account_part(name: str) -> str:
    """A table, game or pool code as a Beancount account component (``A-Z0-9-`` only, starting
    with a capital letter or a digit).

    >>> account_part("pj.linked_1"), account_part("3CB")
    ('PJ-LINKED-1', '3CB')
    """
    part = re.sub(r"[^A-Za-z0-9-]", "-", name).upper()
    return part if part[:1].isalnum() else f"X{part}"


def pool_account(pool: str) -> str:
    """The liability account of a jackpot pool."""
    return f"{POOL}:{account_part(pool)}"


@dataclass(frozen=True)
class Movement:
    """One booked movement: a day, a currency, the account debited and the one credited."""

    day: date
    currency: str
    narration: str
    debit: str
    credit: str
    amount: Decimal


def movements(
    house: Rows, *, cutoff_hour: int, day_from: date | None = None, day_to: date | None = None
) -> list[Movement]:
    """The house's movements per gaming day, summed from the ``house`` view's rows."""
    sums: dict[tuple[date, str, str, str, str], Decimal] = defaultdict(lambda: ZERO)
    opening: dict[tuple[str, str], Decimal] = defaultdict(lambda: ZERO)

    def book(hour: str, currency: str, narration: str, debit: str, credit: str, amount: Decimal) -> None:
        day = gaming_day(hour, cutoff_hour)
        if day_to is not None and day > day_to:
            return
        if day_from is not None and day < day_from:
            for account, sign in ((debit, 1), (credit, -1)):
                if account.startswith(POOL):
                    opening[(account, currency)] += sign * amount
            return
        sums[(day, currency, narration, debit, credit)] += amount

    for _, row in house.scan("t|"):
        table, cur, hour = account_part(row["table"]), row["currency"], row["hour"]
        for kind, account in COMMISSION_ACCOUNTS.items():
            book(
                hour,
                cur,
                f"commission {row['table']} ({kind})",
                CAGE,
                f"{account}:{table}",
                Decimal(row.get(f"commission_{kind}", "0")),
            )
        book(hour, cur, f"hold {row['table']}", CAGE, f"{HOLD}:{table}", Decimal(row["hold"]))
    for _, row in house.scan("j|"):
        pool, cur, hour, name = pool_account(row["pool"]), row["currency"], row["hour"], row["pool"]
        book(hour, cur, f"jackpot {name} seed", "Expenses:Jackpot:Seed", pool, Decimal(row["seed"]))
        book(
            hour,
            cur,
            f"jackpot {name} contributions",
            "Expenses:Jackpot:Contributions",
            pool,
            Decimal(row["contributions"]),
        )
        book(hour, cur, f"jackpot {name} awards paid by the pool", pool, CAGE, Decimal(row["from_pool"]))
        book(
            hour,
            cur,
            f"jackpot {name} awards funded by the house",
            "Expenses:Jackpot:HouseFunded",
            CAGE,
            Decimal(row["from_house"]),
        )
        book(
            hour,
            cur,
            f"jackpot {name} reset to its seed",
            "Expenses:Jackpot:Resets",
            pool,
            Decimal(row["resets"]),
        )
    out = [
        Movement(day, cur, text, debit, credit, amount)
        for (day, cur, text, debit, credit), amount in sorted(sums.items())
        if amount
    ]
    if day_from is not None:
        out = [
            Movement(day_from, cur, f"{account} brought forward", OPENING, account, -amount)
            for (account, cur), amount in sorted(opening.items())
            if amount
        ] + out
    return out


def _quoted(text: str) -> str:
    """Text safe inside a Beancount string (a table or pool code comes from a feed)."""
    return re.sub(r'[\\"\x00-\x1f]', "?", text)


def journal(moves: Iterable[Movement], *, title: str = "Ledger: house movements") -> str:
    """The Beancount text: options, account openings, one transaction per movement, and the
    balance assertions after each day."""
    moves = list(moves)
    lines = [f'option "title" "{title}"', 'option "operating_currency" "HKD"', ""]
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
            lines += [
                f'{day.isoformat()} * "{_quoted(m.narration)}" #gaming-day',
                f"  {m.debit:<44} {money_text(m.amount):>14} {m.currency}",
                f"  {m.credit:<44} {money_text(-m.amount):>14} {m.currency}",
                "",
            ]
            balances[(m.debit, m.currency)] += m.amount
            balances[(m.credit, m.currency)] -= m.amount
        after = (day + timedelta(days=1)).isoformat() if day < date.max else day.isoformat()
        for (account, currency), amount in sorted(balances.items()):
            if account.startswith(ASSERTED):
                lines.append(f"{after} balance {account:<44} {money_text(amount):>14} {currency}")
        lines.append("")
    return "\n".join(lines)
