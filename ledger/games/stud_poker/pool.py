"""The linked progressive jackpot pool: one round's arithmetic, pure (STUD art. 10, RULES §6.6).

The one place the pool is computed. Verify's STUD session and the ``jackpot`` projection both
call :func:`settle_pool` with the pool's balance before a round and get the same
:class:`PoolRound` back, so the two can never disagree.

Within one round, in this order (RULES §6.6, §8.6 P4–P12):

1. **Contributions** (P4): each *settled* jackpot bet credits ``contribution_rate × stake``,
   rounded by G1, before anything is paid, so the hits of the round see them.
2. **Straight flushes** (art. 10(6)–(7), P7): each gets ``max(F_SF, 10 % × J)`` rounded by G1,
   ``J`` the pool at the start of jackpot settlement (``sf_base = start``) or before each
   payment (``running``); paid from the pool up to its balance, any excess by the house (P5).
3. **Royal flushes** (art. 10(5), P6): ``k`` royals share ``max(F_RF, J_now)``, ``J_now`` the pool
   after the straight flushes; each share is rounded down (G1) and the remainder stays in the pool
   (P12); paid from the pool up to its balance, any excess by the house.
4. **Fixed sums** for flush, full house, four of a kind (art. 10(2)): house-funded, the pool
   unchanged, unless ``fixed_from_pool`` (P5).
5. **Reset** (art. 10(8), P11): if nothing is left (≤ 0) the pool restarts at the seed, the
   difference funded by the house.

Seating order (art. 10(4)) orders the payments within each step. The identity
``balance = seed + Σ contributions − Σ pool-funded awards + Σ resets`` holds after every round.

>>> from ledger.domain.rulebook import JackpotOptions, Rounding
>>> opts = JackpotOptions.model_validate({"pool": "PJ-1", "bet_amount": "10",
...     "contribution_rate": "0.2", "seed": "1000", "fixed": {"flush": "200",
...     "full_house": "400", "four_of_a_kind": "2000", "straight_flush": "500",
...     "royal_flush": "50000"}})
>>> r = settle_pool(None, opts, Rounding(), [("j1", Decimal("10"))],
...                 [Hit("j1", 1, Category.STRAIGHT_FLUSH)])
>>> r.start, r.after_contributions, r.awards[0].amount, r.end
(Decimal('1000'), Decimal('1002.00'), Decimal('500'), Decimal('502.00'))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from ledger.domain.money import ZERO, round_money, share_down
from ledger.domain.money import text as amount_text
from ledger.domain.rulebook import JackpotOptions, Rounding
from ledger.games.stud_poker.tables import FIXED_FUNDED_BY_HOUSE, SF_SHARE, Category

CONTRIBUTION_RULE = "STUD art. 10; RULES §6.6, §8.6 P4"
SF_RULE = "STUD art. 10(2), (6), (7); RULES §8.6 P5, P7, P12"
RF_RULE = "STUD art. 10(2), (5); RULES §8.6 P5, P6, P12"
FIXED_RULE = "STUD art. 10(2), (3); RULES §8.6 P5"
RESET_RULE = "STUD art. 10(8); RULES §8.6 P11"


@dataclass(frozen=True)
class Hit:
    """A jackpot bet whose hand is one the jackpot pays, in seating order (art. 10(4))."""

    bet: str
    seat: int
    category: Category


@dataclass(frozen=True)
class Award:
    """One jackpot award: what the bet is paid, and how much of it the pool funds."""

    bet: str
    seat: int
    category: Category
    amount: Decimal
    from_pool: Decimal
    from_house: Decimal
    rule: str
    reason: str


@dataclass(frozen=True)
class PoolRound:
    """A round's effect on one pool: balances before and after each step, and the awards."""

    pool: str
    seed: Decimal
    opened: bool
    """The pool was created at its seed by this round (its first round in the ledger)."""
    start: Decimal
    contributions: tuple[tuple[str, Decimal], ...]
    after_contributions: Decimal
    awards: tuple[Award, ...]
    reset: Decimal
    end: Decimal
    notes: tuple[str, ...] = field(default=())

    @property
    def contributed(self) -> Decimal:
        """The sum of this round's contributions."""
        return sum((a for _, a in self.contributions), ZERO)

    @property
    def paid_from_pool(self) -> Decimal:
        """The sum of the awards the pool funded."""
        return sum((a.from_pool for a in self.awards), ZERO)

    @property
    def paid_by_house(self) -> Decimal:
        """The sum of the awards (or parts) the house funded, resets not included."""
        return sum((a.from_house for a in self.awards), ZERO)


def contribution(stake: Decimal, opts: JackpotOptions, rounding: Rounding) -> Decimal:
    """What one settled jackpot bet credits to the pool (P4, G1)."""
    return round_money(stake * opts.contribution_rate, mode=rounding.mode, increment=rounding.increment)


def settle_pool(
    balance: Decimal | None,
    opts: JackpotOptions,
    rounding: Rounding,
    stakes: Sequence[tuple[str, Decimal]],
    hits: Sequence[Hit],
) -> PoolRound:
    """One round's contributions and awards on a pool whose balance was ``balance`` (``None``:
    the pool does not exist yet and opens at its seed). ``stakes`` are the round's settled
    jackpot bets; ``hits`` those of them whose hand the jackpot pays, in seating order."""
    opened = balance is None
    start = opts.seed if balance is None else balance
    credits = tuple((bet, contribution(stake, opts, rounding)) for bet, stake in stakes)
    pool = start + sum((a for _, a in credits), ZERO)
    after_contributions = pool
    awards: list[Award] = []
    base = pool
    for hit in (h for h in hits if h.category == Category.STRAIGHT_FLUSH):
        j = base if opts.sf_base == "start" else pool
        tenth = round_money(j * Decimal(SF_SHARE), mode=rounding.mode, increment=rounding.increment)
        amount = max(opts.fixed.straight_flush, tenth)
        which = (
            f"10 % of the pool {amount_text(j)} = {amount_text(tenth)}"
            if tenth >= opts.fixed.straight_flush
            else f"the fixed {amount_text(opts.fixed.straight_flush)} "
            f"(10 % of {amount_text(j)} is {amount_text(tenth)})"
        )
        award, pool = _from_pool(hit, amount, pool, SF_RULE, f"straight flush: {which}")
        awards.append(award)
    royals = [h for h in hits if h.category == Category.ROYAL_FLUSH]
    if royals:
        total = max(opts.fixed.royal_flush, pool)
        share, _ = share_down(total, len(royals), increment=rounding.increment)
        what = (
            f"the whole pool {amount_text(total)}"
            if pool >= opts.fixed.royal_flush
            else f"the fixed {amount_text(opts.fixed.royal_flush)}"
        )
        shared = (
            f", shared by {len(royals)} royal flushes ({amount_text(share)} each, "
            "the remainder stays in the pool)"
            if len(royals) > 1
            else ""
        )
        for hit in royals:
            award, pool = _from_pool(hit, share, pool, RF_RULE, f"royal flush: {what}{shared}")
            awards.append(award)
    for hit in hits:
        if hit.category not in FIXED_FUNDED_BY_HOUSE:
            continue
        amount = getattr(opts.fixed, hit.category.key)
        name = hit.category.label.split(" (")[0]
        if opts.fixed_from_pool:
            award, pool = _from_pool(
                hit,
                amount,
                pool,
                FIXED_RULE,
                f"{name}: fixed {amount_text(amount)}, paid from the pool (fixed_from_pool)",
            )
        else:
            award = Award(
                hit.bet,
                hit.seat,
                hit.category,
                amount,
                ZERO,
                amount,
                FIXED_RULE,
                f"{name}: fixed {amount_text(amount)}, funded by the house",
            )
        awards.append(award)
    reset = ZERO
    if pool <= 0:
        reset = opts.seed - pool
        pool = opts.seed
    return PoolRound(
        opts.pool, opts.seed, opened, start, credits, after_contributions, tuple(awards), reset, pool
    )


def _from_pool(hit: Hit, amount: Decimal, pool: Decimal, rule: str, reason: str) -> tuple[Award, Decimal]:
    """Pay ``amount`` from the pool up to its balance; the excess is house-funded (P5)."""
    funded = min(amount, max(pool, ZERO))
    house = amount - funded
    if house > 0:
        reason += f"; the pool funds {amount_text(funded)}, the house {amount_text(house)}"
    return Award(hit.bet, hit.seat, hit.category, amount, funded, house, rule, reason), pool - funded
