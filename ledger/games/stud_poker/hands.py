"""The STUD hand evaluator: five cards to one integer whose order is STUD art. 8's, suits included.

A card is an index ``0..51``: ``4 × rank + suit`` with ranks ``2..A`` as ``0..12`` and suits
♦ ♣ ♥ ♠ as ``0..3`` (art. 4), so a higher index within one rank is a higher suit. A hand's
*strength* packs, from the most significant nibble: the category (``tables.Category``), five
rank slots and one suit slot. Every tie-break of art. 8 is a slot:

===================  ==========================================  ==============================
category             rank slots                                  suit slot
===================  ==========================================  ==============================
royal flush          —                                           the suit
straight flush       top card (5 for 5-4-3-2-A, art. 4(3))       the suit
four of a kind       rank of the four (the fifth card ignored)   —
full house           rank of the three                           —
flush                the five ranks, highest first               the suit
straight             top card (5 for 5-4-3-2-A)                  suit of the top card
three of a kind      rank of the three (the others ignored)      —
two pairs            higher pair, lower pair, odd card           best suit of the higher pair
one pair             the pair, then the odd cards highest first  best suit of the pair (P15)
high card            the five ranks, highest first               suit of the highest card
===================  ==========================================  ==============================

Hands with no suit slot (four/three of a kind, full house) never meet an equal hand from the
same deck: two such hands would need 3 + 3 cards of one rank. That is why two hands from one
deck never tie (RULES §9.6), which the tests prove over all 2,598,960 hands.

Rank patterns are looked up in a table built once (6,175 patterns), so evaluating a hand is a
sort, a lookup and a scan: the exhaustive test runs the very function verify uses.

>>> v = evaluate_text(["AS", "KS", "QS", "JS", "TS"])
>>> v.category.key, v.describe()
('royal_flush', 'royal flush («naipe real» / 黃袍麒麟) in ♠')
>>> evaluate_text(["5D", "4C", "3H", "2S", "AD"]).describe()
'straight («sequência» / 順) 5-high (5-4-3-2-A, the lowest), top card 5♦'
>>> decide(evaluate_text(["9S", "9D", "KC", "7H", "2D"]),
...        evaluate_text(["9H", "9C", "KD", "7S", "2C"])).text
'both one pair, same ranks; the pair decides by its best suit: ♠ beats ♥'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from ledger.domain.equipment import Card
from ledger.games.stud_poker.tables import RANK_LETTERS, SUIT_NAMES, SUIT_ORDER, Category

_CAT_SHIFT: Final = 24
_CATEGORIES: Final[tuple[Category, ...]] = tuple(sorted(Category))
"""Each category at the index of its value."""
_NO_SUIT: Final = -1


def card_index(card: Card | str) -> int:
    """The index ``4 × rank + suit`` of a card (``"AS"`` → 51, ``"2D"`` → 0)."""
    text = str(card)
    known = _CARD_INDEX.get(text)
    if known is not None:
        return known
    return RANK_LETTERS.index(text[0]) * 4 + SUIT_ORDER.index(text[1])


_CARD_INDEX: Final[dict[str, int]] = {
    r + u: i * 4 + j for i, r in enumerate(RANK_LETTERS) for j, u in enumerate(SUIT_ORDER)
}
"""The index of each of the 52 cards by its FEED notation (anything else takes the long way)."""


def card_text(index: int) -> str:
    """The FEED notation of a card index (51 → ``"AS"``)."""
    return RANK_LETTERS[index >> 2] + SUIT_ORDER[index & 3]


def _pack(cat: Category, ranks: Sequence[int], suit: int) -> int:
    value = int(cat)
    for i in range(5):
        value = (value << 4) | (ranks[i] if i < len(ranks) else 0)
    return (value << 4) | (suit if suit >= 0 else 0)


@dataclass(frozen=True)
class _Pattern:
    """What a multiset of five ranks (highest first) is, before suits are known."""

    category: Category
    slots: tuple[int, ...]
    suit_rank: int
    """The rank whose best suit breaks the tie (-1: the flush suit, -2: no suit slot)."""
    straight_top: int
    """The straight's top rank, or -1 when the ranks are not five in a row."""
    packed: int
    """``_pack(category, slots, _NO_SUIT)``: the strength but for its suit slot."""


def _straight_top(ranks: tuple[int, ...]) -> int:
    if len(set(ranks)) != 5:
        return -1
    if ranks[0] - ranks[4] == 4:
        return ranks[0]
    if ranks == (12, 3, 2, 1, 0):
        return 3  # 5-4-3-2-A: the ace counts low, the 5 is the top card (art. 4(3))
    return -1


def _pattern(ranks: tuple[int, ...]) -> _Pattern:
    cat, slots, suit_rank, top = _reading(ranks)
    return _Pattern(cat, slots, suit_rank, top, _pack(cat, slots, _NO_SUIT))


def _reading(ranks: tuple[int, ...]) -> tuple[Category, tuple[int, ...], int, int]:
    counts: dict[int, int] = {}
    for r in ranks:
        counts[r] = counts.get(r, 0) + 1
    groups = sorted(counts.items(), key=lambda rc: (rc[1], rc[0]), reverse=True)
    shape = tuple(c for _, c in groups)
    top = _straight_top(ranks)
    if shape == (4, 1):
        return (Category.FOUR_OF_A_KIND, (groups[0][0],), -2, top)
    if shape == (3, 2):
        return (Category.FULL_HOUSE, (groups[0][0],), -2, top)
    if shape == (3, 1, 1):
        return (Category.THREE_OF_A_KIND, (groups[0][0],), -2, top)
    if shape == (2, 2, 1):
        high, low, odd = groups[0][0], groups[1][0], groups[2][0]
        return (Category.TWO_PAIRS, (high, low, odd), high, top)
    if shape == (2, 1, 1, 1):
        pair = groups[0][0]
        return (Category.ONE_PAIR, (pair, *[r for r, _ in groups[1:]]), pair, top)
    if top >= 0:
        return (Category.STRAIGHT, (top,), top, top)
    return (Category.HIGH_CARD, ranks, ranks[0], top)


_PATTERNS: dict[tuple[int, ...], _Pattern] = {}
"""The reading of each multiset of five ranks met so far (at most 6,175 of them), learnt on
first sight: a store's STUD hands meet a few hundred, and building all 6,175 up front cost
about 45 ms of CPU, some 5 % of verifying a 1,000-round store."""


def _learn(ranks: tuple[int, ...]) -> _Pattern:
    """The reading of five ranks (highest first), remembered."""
    pat = _PATTERNS[ranks] = _pattern(ranks)
    return pat


def strength(cards: Sequence[int]) -> int:
    """The strength of five distinct card indices: a higher integer is a better hand (art. 8).

    Raises ``ValueError`` for anything but five distinct cards.
    """
    desc = sorted(cards, reverse=True)
    if len(desc) != 5 or len(set(desc)) != 5 or desc[0] > 51 or desc[4] < 0:
        raise ValueError(f"a STUD hand is five distinct cards, not {list(cards)}")
    c0, c1, c2, c3, c4 = desc
    ranks = (c0 >> 2, c1 >> 2, c2 >> 2, c3 >> 2, c4 >> 2)
    pat = _PATTERNS.get(ranks) or _learn(ranks)
    s = c0 & 3
    if s == c1 & 3 == c2 & 3 == c3 & 3 == c4 & 3:
        top = pat.straight_top
        if top == 12:
            return _pack(Category.ROYAL_FLUSH, (), s)
        if top >= 0:
            return _pack(Category.STRAIGHT_FLUSH, (top,), s)
        return _pack(Category.FLUSH, (c0 >> 2, c1 >> 2, c2 >> 2, c3 >> 2, c4 >> 2), s)
    if pat.suit_rank == -2:
        return pat.packed
    for c in desc:  # highest index first: the first card of a rank holds its best suit
        if c >> 2 == pat.suit_rank:
            return pat.packed | (c & 3)
    raise AssertionError("unreachable: the tie-break rank is in the hand")


@dataclass(frozen=True)
class HandValue:
    """One evaluated hand: its cards, its strength and the slots that make it up."""

    cards: tuple[str, ...]
    strength: int

    @property
    def category(self) -> Category:
        """The hand's category (STUD art. 8)."""
        return _CATEGORIES[self.strength >> _CAT_SHIFT]

    @property
    def slots(self) -> tuple[int, ...]:
        """The five rank slots, most significant first (unused slots are 0)."""
        return tuple((self.strength >> (4 * (5 - i))) & 15 for i in range(5))

    @property
    def suit(self) -> str | None:
        """The suit slot as a letter, or ``None`` where the category has none."""
        if self.category in (Category.FOUR_OF_A_KIND, Category.FULL_HOUSE, Category.THREE_OF_A_KIND):
            return None
        return SUIT_ORDER[self.strength & 15]

    def describe(self) -> str:
        """The category with what ranks it: ``one pair of 9s, then K-7-2, pair's best suit ♠``."""
        return _describe(self.strength)


@lru_cache(maxsize=1024)
def _describe(strength: int) -> str:
    """:meth:`HandValue.describe` of a strength (the words depend on nothing else), remembered:
    a round's judgement words each hand twice."""
    value = HandValue((), strength)
    cat, s, suit = value.category, value.slots, SUIT_NAMES.get(value.suit or "", "")
    r = [RANK_LETTERS[x] for x in s]
    if cat == Category.ROYAL_FLUSH:
        return f"{cat.label} in {suit}"
    if cat in (Category.STRAIGHT_FLUSH, Category.STRAIGHT):
        wheel = " (5-4-3-2-A, the lowest)" if s[0] == 3 else ""
        tail = f"in {suit}" if cat == Category.STRAIGHT_FLUSH else f"top card {r[0]}{suit}"
        return f"{cat.label} {r[0]}-high{wheel}, {tail}"
    if cat in (Category.FOUR_OF_A_KIND, Category.FULL_HOUSE, Category.THREE_OF_A_KIND):
        return f"{cat.label} of {r[0]}s"
    if cat == Category.FLUSH:
        return f"{cat.label} {'-'.join(r)} in {suit}"
    if cat == Category.TWO_PAIRS:
        return f"{cat.label} {r[0]}s and {r[1]}s, odd card {r[2]}, higher pair's best suit {suit}"
    if cat == Category.ONE_PAIR:
        return f"{cat.label} of {r[0]}s, then {'-'.join(r[1:4])}, pair's best suit {suit}"
    return f"{cat.label} {'-'.join(r)}, highest card {r[0]}{suit}"


def evaluate(cards: Iterable[Card | str]) -> HandValue:
    """Evaluate five cards (``ValueError`` if they are not five distinct cards)."""
    texts = tuple(str(c) for c in cards)
    return HandValue(texts, strength([card_index(t) for t in texts]))


def evaluate_text(cards: Iterable[str]) -> HandValue:
    """:func:`evaluate` for FEED card strings."""
    return evaluate(cards)


_SLOT_NAMES: Final[dict[Category, tuple[str, ...]]] = {
    Category.STRAIGHT_FLUSH: ("top card",),
    Category.FOUR_OF_A_KIND: ("rank of the four",),
    Category.FULL_HOUSE: ("rank of the three",),
    Category.FLUSH: ("highest card", "second card", "third card", "fourth card", "fifth card"),
    Category.STRAIGHT: ("top card",),
    Category.THREE_OF_A_KIND: ("rank of the three",),
    Category.TWO_PAIRS: ("higher pair", "lower pair", "odd card"),
    Category.ONE_PAIR: ("pair", "highest odd card", "second odd card", "third odd card"),
    Category.HIGH_CARD: ("highest card", "second card", "third card", "fourth card", "fifth card"),
}

_SUIT_SLOT: Final[dict[Category, str]] = {
    Category.ROYAL_FLUSH: "the higher suit",
    Category.STRAIGHT_FLUSH: "the higher suit",
    Category.FLUSH: "the higher suit",
    Category.STRAIGHT: "the suit of the top card",
    Category.TWO_PAIRS: "the higher pair decides by its best suit",
    Category.ONE_PAIR: "the pair decides by its best suit",
    Category.HIGH_CARD: "the suit of the highest card",
}


@dataclass(frozen=True)
class Decision:
    """Which of two hands is higher, and the art. 8 comparison that decided it."""

    first_wins: bool
    text: str
    rule: str


def decide(first: HandValue, second: HandValue) -> Decision:
    """Compare two hands and say why one is higher (STUD art. 8).

    Equal strengths cannot come from one deck (RULES §9.6); they are reported as a tie, which
    callers treat as an invalid deal.
    """
    a, b = first.strength, second.strength
    rule = "STUD art. 8"
    if a == b:
        return Decision(False, "equal hands: impossible with one deck", rule)
    ca, cb = first.category, second.category
    if ca != cb:
        hi, lo = (ca, cb) if a > b else (cb, ca)
        return Decision(a > b, f"{_short(hi)} beats {_short(lo)} (category)", rule)
    names = _SLOT_NAMES.get(ca, ())
    for i, name in enumerate(names):
        x, y = first.slots[i], second.slots[i]
        if x != y:
            hi_r, lo_r = RANK_LETTERS[max(x, y)], RANK_LETTERS[min(x, y)]
            return Decision(x > y, f"both {_short(ca)}; {name}: {hi_r} beats {lo_r}", rule)
    sa, sb = a & 15, b & 15
    hi_s, lo_s = SUIT_NAMES[SUIT_ORDER[max(sa, sb)]], SUIT_NAMES[SUIT_ORDER[min(sa, sb)]]
    text = f"both {_short(ca)}, same ranks; {_SUIT_SLOT[ca]}: {hi_s} beats {lo_s}"
    return Decision(sa > sb, text, "STUD art. 4(1), art. 8")


def _short(cat: Category) -> str:
    return cat.label.split(" (")[0]


def all_hands_strengths() -> Iterable[tuple[tuple[int, ...], int]]:
    """Every five-card hand of one deck with its strength, in combination order."""
    from itertools import combinations

    for hand in combinations(range(52), 5):
        yield hand, strength(hand)
