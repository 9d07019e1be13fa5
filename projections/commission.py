"""Commission reconciliation: what the tables took against what the rules say was due.

Every closed or voided round is judged exactly as ``ledger verify`` judges it — through its
game's session, with the bank, shoe, carried bets and jackpot pool of every earlier round
(``projections.judged``, ``ledger.verify.judge``) — and contributes *items*, each a commission
recorded by the table (the game's money hook ``charges``, ``ledger.games.<game>.money``) and
the commission due under the round's stored rulebook:

- one item per bet: recorded = the ``commission`` of its (first) ``bet_settled``; due = the
  commission of the settlement the judgement says it is due (3CB art. 10, SP9 art. 9,
  RULES §8 S9 …; 0 for games without commission, RL and FPC);
- one item per commission outside bets (``Derivation.commissions``): SP9 bank layers
  (SP9 art. 9, RULES §8 S8) and Mah-Jong table fees (MJ art. 8, RULES §4.10).

Recorded amounts are facts, so they are always counted. When the rules cannot say what was due
— the round has no outcome to judge a bet by — the item is **unjudged**: its recorded
commission is shown apart, never compared with a due of 0. The difference (recorded − due)
is taken over judged items only.

:class:`CommissionView` folds the items into rows per Macau hour, table, currency and player
(``c|2026-11-21T20|RL-01|HKD|P-88``) plus one row per hour and table counting rounds
(``r|2026-11-21T20|RL-01|HKD``); :func:`commission_report` groups them by gaming day (any cut-off
hour, ``projections.gaming_day``) and by table, game, or player. All sums are exact Decimals.

Its ``version`` includes which games have rules (today all six: every ``Game`` has them), so
a change of that set rebuilds the view at the next update.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any, ClassVar, Literal

from ledger.domain.money import plain
from ledger.domain.round import Round
from ledger.games import GAMES
from ledger.games.money import bet_player, money_of
from ledger.verify.judge import Judged
from projections.base import Row, Rows, View
from projections.gaming_day import gaming_day, hour_of
from projections.judged import judged

ZERO = Decimal(0)
Grouping = Literal["day", "table", "game", "player"]
GROUPINGS: tuple[Grouping, ...] = ("day", "table", "game", "player")

_VIEW_BASE_VERSION = 2


def rules_mask() -> int:
    """A bit per game in ``GAMES`` (every game has its per-round rules: ``Game.derive`` is
    required), so that registering a game changes the view's version."""
    return (1 << len(GAMES)) - 1


@dataclass(frozen=True)
class Item:
    """One commission: who paid it, what the table recorded, what was due (``None``: unknown)."""

    player: str
    recorded: Decimal
    due: Decimal | None
    rule: str


def commission_items(judgement: Judged) -> list[Item]:
    """Every commission item of one ended round, from its judgement (module docstring)."""
    rnd = judgement.round
    derivation = judgement.derivation
    money = money_of(GAMES[rnd.game])
    charges = money.charges(rnd)
    items: list[Item] = []
    for charge in charges:
        if charge.kind != "bet" or charge.bet is None:
            continue
        due_settlement = derivation.expected.get(charge.bet)
        if due_settlement is None:
            items.append(Item(charge.payer, charge.amount, None, "unjudged"))
        else:
            items.append(Item(charge.payer, charge.amount, due_settlement.commission, due_settlement.rule))
    for bet_id, bet in sorted(rnd.bets.items()):
        if bet_id in rnd.settlements:
            continue
        due_settlement = derivation.expected.get(bet_id)
        if due_settlement is not None and due_settlement.commission:
            items.append(Item(bet_player(bet), ZERO, due_settlement.commission, due_settlement.rule))
    outside = [c for c in charges if c.kind != "bet"]
    if derivation.commissions:
        for c in derivation.commissions:
            items.append(Item(money.payer(rnd, c.party), c.recorded or ZERO, c.due, c.rule))
        unmatched = sum((c.amount for c in outside), ZERO) - sum(
            (c.recorded or ZERO for c in derivation.commissions), ZERO
        )
        if unmatched:  # recorded by the table but not paired by the rules: keep it, unjudged
            items.append(Item(money.payer(rnd, "unmatched"), unmatched, None, "unjudged"))
    else:
        for charge in outside:
            items.append(Item(charge.payer, charge.amount, None, "unjudged"))
    return items


def money_text(amount: Decimal) -> str:
    """An exact amount as text with at least two decimals (never rounded): :func:`ledger.domain.money.plain`.

    >>> money_text(Decimal("65.0")), money_text(Decimal("0.125")), money_text(Decimal("-3"))
    ('65.00', '0.125', '-3.00')
    """
    return plain(amount)


def _add(row: Row, field_name: str, amount: Decimal) -> None:
    row[field_name] = str(Decimal(row.get(field_name, "0")) + amount)


class CommissionView(View):
    """Commission recorded and due per Macau hour, table, currency and player."""

    name: ClassVar[str] = "commission"
    version: ClassVar[int] = _VIEW_BASE_VERSION * 1000 + rules_mask()

    def apply(self, rnd: Round, rows: Rows) -> None:
        """Add the round's items to its rows (see the module docstring)."""
        items = commission_items(judged(rnd, rows))
        hour = hour_of(rnd.opened_at)
        tkey = f"r|{hour}|{rnd.table}|{rnd.opened.currency}"
        trow = rows.get(tkey) or {
            "hour": hour,
            "table": rnd.table,
            "game": rnd.game,
            "currency": rnd.opened.currency,
            "rounds": 0,
            "voided": 0,
        }
        trow = dict(trow)
        trow["rounds"] += 1
        trow["voided"] += 1 if rnd.is_voided else 0
        rows.put(tkey, trow)
        seen: set[str] = set()
        for item in items:
            key = f"c|{hour}|{rnd.table}|{rnd.opened.currency}|{item.player}"
            row = dict(
                rows.get(key)
                or {
                    "hour": hour,
                    "table": rnd.table,
                    "game": rnd.game,
                    "currency": rnd.opened.currency,
                    "player": item.player,
                    "rounds": 0,
                    "items": 0,
                    "recorded": "0",
                    "due": "0",
                    "unjudged": "0",
                    "unjudged_items": 0,
                }
            )
            if key not in seen:
                row["rounds"] += 1
                seen.add(key)
            row["items"] += 1
            _add(row, "recorded", item.recorded)
            if item.due is None:
                row["unjudged_items"] += 1
                _add(row, "unjudged", item.recorded)
            else:
                _add(row, "due", item.due)
            rows.put(key, row)


@dataclass
class Line:
    """One line of the commission report: a gaming day, a group, a currency, and the sums."""

    day: date
    group: str
    currency: str
    rounds: int = 0
    items: int = 0
    recorded: Decimal = ZERO
    due: Decimal = ZERO
    unjudged: Decimal = ZERO
    unjudged_items: int = 0
    games: set[str] = field(default_factory=set)

    @property
    def judged(self) -> Decimal:
        """Recorded commission of the items whose due is known."""
        return self.recorded - self.unjudged

    @property
    def difference(self) -> Decimal:
        """Recorded − due over judged items: positive means the table took too much."""
        return self.judged - self.due

    def to_json(self) -> dict[str, Any]:
        """JSON form, amounts as strings with (at least) two decimals."""
        return {
            "gaming_day": self.day.isoformat(),
            "group": self.group,
            "currency": self.currency,
            "rounds": self.rounds,
            "items": self.items,
            "recorded": money_text(self.recorded),
            "due": money_text(self.due),
            "difference": money_text(self.difference),
            "unjudged_recorded": money_text(self.unjudged),
            "unjudged_items": self.unjudged_items,
        }


@dataclass
class CommissionReport:
    """The report's lines and the totals per currency."""

    by: Grouping
    cutoff_hour: int
    lines: list[Line]
    totals: list[Line]

    def to_json(self) -> dict[str, Any]:
        """One JSON object."""
        return {
            "by": self.by,
            "cutoff_hour": self.cutoff_hour,
            "lines": [line.to_json() for line in self.lines],
            "totals": [
                {k: v for k, v in t.to_json().items() if k not in ("gaming_day", "group")}
                for t in self.totals
            ],
        }


def _group(row: Row, by: Grouping) -> str:
    if by == "day":
        return "all"
    return str(row["table" if by == "table" else by])


def _in_range(day: date, day_from: date | None, day_to: date | None) -> bool:
    return (day_from is None or day >= day_from) and (day_to is None or day <= day_to)


def commission_report(
    rows: Rows,
    *,
    by: Grouping = "day",
    cutoff_hour: int = 6,
    day_from: date | None = None,
    day_to: date | None = None,
) -> CommissionReport:
    """Group the view's rows per gaming day and ``by``; totals per currency."""
    lines: dict[tuple[date, str, str], Line] = {}
    for _, row in rows.scan("c|"):
        day = gaming_day(row["hour"], cutoff_hour)
        if not _in_range(day, day_from, day_to):
            continue
        key = (day, _group(row, by), row["currency"])
        line = lines.get(key) or lines.setdefault(key, Line(day, key[1], row["currency"]))
        line.items += int(row["items"])
        line.recorded += Decimal(row["recorded"])
        line.due += Decimal(row["due"])
        line.unjudged += Decimal(row["unjudged"])
        line.unjudged_items += int(row["unjudged_items"])
        line.games.add(row["game"])
        if by == "player":
            line.rounds += int(row["rounds"])
    if by != "player":
        _count_rounds(rows, lines, by, cutoff_hour, day_from, day_to)
    ordered = [lines[k] for k in sorted(lines)]
    return CommissionReport(by, cutoff_hour, ordered, _totals(ordered))


def _count_rounds(
    rows: Rows,
    lines: dict[tuple[date, str, str], Line],
    by: Grouping,
    cutoff_hour: int,
    day_from: date | None,
    day_to: date | None,
) -> None:
    """Rounds per line from the per-table round counters (a round counts once, whatever the
    number of its players; a round with no commission item still counts)."""
    for _, row in rows.scan("r|"):
        day = gaming_day(row["hour"], cutoff_hour)
        if not _in_range(day, day_from, day_to):
            continue
        key = (day, _group(row, by), row["currency"])
        line = lines.get(key) or lines.setdefault(key, Line(day, key[1], row["currency"]))
        line.rounds += int(row["rounds"])
        line.games.add(row["game"])


def _totals(lines: Iterable[Line]) -> list[Line]:
    totals: dict[str, Line] = {}
    for line in lines:
        t = totals.setdefault(line.currency, Line(line.day, "total", line.currency))
        t.rounds += line.rounds
        t.items += line.items
        t.recorded += line.recorded
        t.due += line.due
        t.unjudged += line.unjudged
        t.unjudged_items += line.unjudged_items
    return [totals[c] for c in sorted(totals)]


def report_rows(report: CommissionReport) -> Iterator[dict[str, Any]]:
    """The report's lines as flat dicts (CSV rows)."""
    for line in report.lines:
        yield line.to_json()
