"""The Super Pan 9 bank's money in one round: capped settlement, layer split, commission.

Pure functions over the round's plays (RULES §1.5–§1.7, §8.1 S6–S9):

- :func:`settle_plays` settles the bets against the bank's capacity ``K`` (the banker's capital
  plus every co-banker's) keeping the running bank result ``W`` within ``−K ≤ W ≤ K``
  (SP9 art. 5(3)). ``sp9.cap_mode``:

  - ``sequential`` (default, S6 (a)): one pass in settlement order. A losing stake ``a`` is
    collected up to ``K − W``, the rest returned; a winning stake is returned and paid up to
    ``K + W``.
  - ``collect_then_pay`` (S6 (b)): the same caps, but every loser in order first, then every
    winner in order.
  - ``prorata`` (S6 (c)): when the uncapped result would pass ``+K`` the losers are collected
    pro rata (collections = winners' stakes + K); when it would pass ``−K`` the winners are paid
    pro rata (payments = losers' stakes + K). Shares are rounded down, the remainder goes to the
    first in settlement order (RULES §8 G1).

- :func:`split_result` divides ``W`` between the layers (banker, player co-bankers in joining
  order, the casino last): ``waterfall`` (S7) or ``prorata`` by capital (shares rounded down,
  the remainder to the first layers in order, each within its capital, G1).
- :func:`layer_commissions`: ``positive_net`` (S8 (a), default) 5% of each layer's positive
  share; ``none``; ``gross`` 5% of the bank's gross collections, split between the layers pro rata
  by capital [I]. The casino layer never pays (it would pay itself).

>>> lines = settle_plays([Play("b1", 2, Decimal(300), True), Play("b2", 3, Decimal(500), True)],
...                      Decimal(600))
>>> [(x.play.bet, x.paid, x.balance) for x in lines]
[('b1', Decimal('300'), Decimal('-300')), ('b2', Decimal('300'), Decimal('-600'))]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from ledger.domain.money import CENT, ZERO, RoundingMode, round_money
from ledger.games.super_pan9.tables import COMMISSION_RATE

CapMode = Literal["sequential", "collect_then_pay", "prorata"]
SplitMode = Literal["waterfall", "prorata"]
BankCommissionMode = Literal["positive_net", "none", "gross"]


@dataclass(frozen=True)
class Layer:
    """One bank layer: ``banker``, ``seat:N`` (a player co-banker) or ``casino``."""

    party: str
    capital: Decimal


@dataclass(frozen=True)
class Play:
    """A bet as the bank settles it: its seat, its stake and whether its seat beat the banker."""

    bet: str
    seat: int
    amount: Decimal
    wins: bool


@dataclass(frozen=True)
class Line:
    """One bet settled against the bank: what was collected or paid, what was handed back, and
    the bank's running result ``W`` after it."""

    play: Play
    collected: Decimal
    paid: Decimal
    returned: Decimal
    balance: Decimal

    @property
    def capped(self) -> bool:
        """Whether the capital cap cut this bet short."""
        return (self.collected if not self.play.wins else self.paid) < self.play.amount


def _line(play: Play, settled: Decimal, balance: Decimal) -> Line:
    if play.wins:
        return Line(play, ZERO, settled, play.amount, balance)
    return Line(play, settled, ZERO, play.amount - settled, balance)


def settle_plays(
    plays: Sequence[Play], capacity: Decimal, mode: CapMode = "sequential", increment: Decimal = CENT
) -> list[Line]:
    """Settle ``plays`` (in settlement order) against a bank of ``capacity`` (see module doc).

    Lines come back in the order the bank settled them.
    """
    if mode == "prorata":
        return _prorata(plays, capacity, increment)
    ordered = list(plays)
    if mode == "collect_then_pay":
        ordered = [p for p in plays if not p.wins] + [p for p in plays if p.wins]
    balance = ZERO
    lines = []
    for play in ordered:
        if play.wins:
            settled = max(ZERO, min(play.amount, capacity + balance))
            balance -= settled
        else:
            settled = max(ZERO, min(play.amount, capacity - balance))
            balance += settled
        lines.append(_line(play, settled, balance))
    return lines


def _prorata(plays: Sequence[Play], capacity: Decimal, increment: Decimal) -> list[Line]:
    losing = sum((p.amount for p in plays if not p.wins), ZERO)
    winning = sum((p.amount for p in plays if p.wins), ZERO)
    scaled: dict[int, Decimal] = {}
    if losing - winning > capacity:
        scaled = _shares(
            [(i, p.amount) for i, p in enumerate(plays) if not p.wins], winning + capacity, increment
        )
    elif winning - losing > capacity:
        scaled = _shares([(i, p.amount) for i, p in enumerate(plays) if p.wins], losing + capacity, increment)
    balance = ZERO
    lines = []
    for i, play in enumerate(plays):
        settled = scaled.get(i, play.amount)
        balance += -settled if play.wins else settled
        lines.append(_line(play, settled, balance))
    return lines


def _shares(parts: list[tuple[int, Decimal]], total: Decimal, increment: Decimal) -> dict[int, Decimal]:
    """``total`` shared pro rata to the amounts, each rounded down and never above its amount;
    the remainder goes increment by increment to the first in order (RULES §8 G1)."""
    whole = sum((a for _, a in parts), ZERO)
    out = {i: round_money(a * total / whole, mode="down", increment=increment) for i, a in parts}
    rest = total - sum(out.values(), ZERO)
    while rest >= increment:
        moved = False
        for i, a in parts:
            if rest >= increment and out[i] + increment <= a:
                out[i] += increment
                rest -= increment
                moved = True
        if not moved:
            break
    return out


def split_result(
    result: Decimal, layers: Sequence[Layer], mode: SplitMode = "waterfall", increment: Decimal = CENT
) -> list[Decimal]:
    """Each layer's share of the bank's result ``W`` (SP9 art. 5(5), RULES §8.1 S7)."""
    if not layers:
        return []
    sign = Decimal(1) if result >= 0 else Decimal(-1)
    left = abs(result)
    if mode == "waterfall":
        shares = []
        for layer in layers:
            take = min(left, layer.capital)
            shares.append(sign * take + 0)  # + 0: a zero share is 0, never -0
            left -= take
        shares[0] += sign * left  # only when W exceeds K: the excess stays with the banker
        return shares
    capacity = sum((x.capital for x in layers), ZERO)
    if capacity == 0:
        return [result] + [ZERO] * (len(layers) - 1)
    parts = [round_money(left * x.capital / capacity, mode="down", increment=increment) for x in layers]
    rest = left - sum(parts, ZERO)
    for i, layer in enumerate(layers):  # the remainder to the first in order, within capital
        extra = min(rest, layer.capital - parts[i])
        parts[i] += extra
        rest -= extra
    return [sign * p + 0 for p in parts]


def commission_on(amount: Decimal, *, mode: RoundingMode = "half_up", increment: Decimal = CENT) -> Decimal:
    """5% of ``amount``, rounded by the round's policy (SP9 art. 9, RULES §8 G1)."""
    return round_money(amount * COMMISSION_RATE, mode=mode, increment=increment)


def layer_commissions(
    shares: Sequence[Decimal],
    layers: Sequence[Layer],
    collections: Decimal,
    mode: BankCommissionMode = "positive_net",
    *,
    rounding: RoundingMode = "half_up",
    increment: Decimal = CENT,
) -> list[Decimal]:
    """The commission each bank layer pays (SP9 art. 9, RULES §8.1 S8); the casino pays none."""
    if mode == "none":
        return [ZERO for _ in layers]
    if mode == "gross":
        paying = [x for x in layers if x.party != "casino"]
        capital = sum((x.capital for x in paying), ZERO)
        out = []
        for layer in layers:
            if layer.party == "casino" or capital == 0:
                out.append(ZERO)
                continue
            part = collections * layer.capital / capital
            out.append(commission_on(part, mode=rounding, increment=increment))
        return out
    return [
        commission_on(share, mode=rounding, increment=increment)
        if share > 0 and layer.party != "casino"
        else ZERO
        for share, layer in zip(shares, layers, strict=True)
    ]
