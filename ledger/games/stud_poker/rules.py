"""Stud Poker rules (DRE 61/2004, RULES §6.5) as pure functions over evaluated hands and stakes.

- :func:`dealer_qualifies` — A-K or better (art. 9(1)–(3), P1);
- :func:`raise_prize` — the raise prize by the player's category (art. 9(5)), the royal-flush
  multiple from the rulebook (P3);
- :func:`cap_prizes` — the house maximum per game, per hand or per round (P2);
- :func:`settle_ante` / :func:`settle_raise` — the settlement each is due.

No commission is ever taken (RULES §6). Every prize is a whole multiple of the stake, so the only
rounding is none; the cap only lowers a prize.

>>> from ledger.games.stud_poker.hands import evaluate_text
>>> dealer_qualifies(evaluate_text(["AS", "KD", "7C", "4H", "2S"]))
(True, 'high card A-K-7-4-2 holds an ace and a king: qualifies')
>>> raise_prize(Category.FLUSH, Decimal("200"), DEFAULT_RULEBOOK)
Decimal('1000')
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from ledger.domain.money import ZERO
from ledger.domain.money import text as amount_text
from ledger.domain.rulebook import DEFAULT_RULEBOOK, Rulebook
from ledger.games.base import Settlement
from ledger.games.stud_poker.hands import HandValue
from ledger.games.stud_poker.tables import RAISE_PAYS, RANK_LETTERS, Category

QUALIFY_RULE = "STUD art. 9(1)–(3); RULES §8.6 P1"
NOT_QUALIFIED_RULE = "STUD art. 9(2)"
DEALER_WINS_RULE = "STUD art. 9(4)"
PLAYER_WINS_RULE = "STUD art. 9(5)"
CAP_RULE = "STUD art. 9(5); RULES §8.6 P2"
FOLD_RULE = "STUD art. 6(5)–(7)"

__all__ = [
    "DEFAULT_RULEBOOK",
    "cap_prizes",
    "dealer_qualifies",
    "raise_prize",
    "settle_ante",
    "settle_raise",
]


def dealer_qualifies(dealer: HandValue) -> tuple[bool, str]:
    """Whether the croupier's hand qualifies: any pair or better, or a high-card hand holding
    an ace and a king (STUD art. 9(1)–(3), P1); with the reason in words."""
    cat = dealer.category
    if cat >= Category.ONE_PAIR:
        return True, f"{cat.label.split(' (')[0]}: qualifies (pair or better)"
    ranks = [RANK_LETTERS[r] for r in dealer.slots]
    shown = "-".join(ranks)
    if ranks[0] == "A" and ranks[1] == "K":
        return True, f"high card {shown} holds an ace and a king: qualifies"
    return False, f"high card {shown} lacks an ace and a king: does not qualify"


def raise_prize(category: Category, stake: Decimal, rules: Rulebook) -> Decimal:
    """The full raise prize for a winning hand of ``category``, before any cap (art. 9(5))."""
    to_win = rules.stud.rf_multiple if category == Category.ROYAL_FLUSH else (RAISE_PAYS[category].to_win)
    return stake * to_win


def cap_prizes(prizes: Sequence[tuple[Category, Decimal]], rules: Rulebook) -> list[Decimal]:
    """Apply the house maximum per game to raise prizes listed in seating order (P2).

    Only four of a kind, straight flush and royal flush are capped (art. 9(5)). ``per_hand``
    caps each prize at ``stud.max_payout``; ``per_round`` pays them in art. 10(4) order until
    the maximum is used up.
    """
    cap = rules.stud.max_payout
    out: list[Decimal] = []
    left = cap
    for category, prize in prizes:
        if cap is None or left is None or not RAISE_PAYS[category].capped:
            out.append(prize)
        elif rules.stud.cap_mode == "per_hand":
            out.append(min(prize, cap))
        else:
            paid = min(prize, left)
            left -= paid
            out.append(paid)
    return out


def settle_ante(stake: Decimal, *, qualified: bool, player_wins: bool, why: str) -> Settlement:
    """The ante of a hand that raised: paid 1 to 1 unless a qualifying dealer beats it
    (art. 9(2), (4), (5))."""
    if not qualified:
        return Settlement(
            "win",
            stake,
            stake,
            ZERO,
            NOT_QUALIFIED_RULE,
            f"dealer does not qualify: ante paid 1 to 1 ({why})",
        )
    if player_wins:
        return Settlement(
            "win", stake, stake, ZERO, PLAYER_WINS_RULE, f"player's hand higher: ante paid 1 to 1 ({why})"
        )
    return Settlement.lose(DEALER_WINS_RULE, f"dealer's hand higher: ante collected ({why})")


def settle_raise(
    stake: Decimal,
    prize: Decimal,
    full: Decimal,
    category: Category,
    *,
    qualified: bool,
    player_wins: bool,
    why: str,
) -> Settlement:
    """The raise: returned when the dealer does not qualify (art. 9(2)); paid by the player's
    category when the player's hand is higher (art. 9(5)), after the cap; else collected."""
    if not qualified:
        return Settlement(
            "push", stake, ZERO, ZERO, NOT_QUALIFIED_RULE, "dealer does not qualify: the raise is returned"
        )
    if not player_wins:
        return Settlement.lose(DEALER_WINS_RULE, f"dealer's hand higher: raise collected ({why})")
    pay = RAISE_PAYS[category]
    to_win = (full / stake) if stake else Decimal(pay.to_win)
    reason = f"{category.label.split(' (')[0]} pays {to_win.normalize():f} to 1"
    if prize != full:
        reason += f", {amount_text(full)} capped at {amount_text(prize)} by the house maximum per game"
        return Settlement("win", stake, prize, ZERO, CAP_RULE, reason)
    return Settlement("win", stake, prize, ZERO, pay.rule, reason)
