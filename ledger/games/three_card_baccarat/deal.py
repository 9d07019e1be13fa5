"""3-Card Baccarat: the shoe's life cycle and one round's deal, read from the recorded cards.

A shoe spans rounds (RULES §3.3), so :func:`read_deal` takes the table's :class:`Shoe` as it
stood after the table's previous round and returns it as it stands after this one; the game's
session (``session.ThreeCardSession``) keeps one per table. What is checked, each with its article
(every problem is an ``invalid_deal``):

- **Shoe.** ``deck_shuffled`` opens a shoe of ``decks`` decks. With more than one deck the
  last-round blank card must sit 30 to 40 cards from the end (3CB art. 2(1)); a single-deck box
  has no such card (art. 1). A round without ``deck_shuffled`` continues the table's shoe
  (FEED §2), which is wrong after ``shoe_closed``, after the round in which the last-round card
  came out, and for a single-deck box, which deals exactly one round (3CB art. 3).
- **Burns.** ``decks`` cards burned before the deal of a shoe's first round, one before the deal
  of every later round (3CB art. 2(2)-(3)); a burn after the deal began is out of place.
- **Cards.** No card seen more than ``decks`` times in one shoe (burned cards with a known face,
  dealt cards, cancelled cards: all left the shoe), and never more cards than the shoe holds.
- **Order.** Three passes clockwise over the places in use (the places that receive cards), the
  banker last in each pass; three cards per hand; players' first two cards face up and the third
  face down, the banker's three face up (3CB art. 2(2), RULES §3.4).
- **Misdeals.** ``deal_corrected`` gives a card to the hand it should have gone to: the deal is
  judged as corrected, so a correct correction leaves no problem. ``cards_cancelled`` cancels
  every card dealt so far in the round; the redeal that follows is the deal (RULES §3.8).

Limit: a round that continues a shoe the ledger never saw shuffled (the store starts in mid-shoe)
gets a step saying so, and its cards are not counted against a shoe.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ledger.domain.equipment import Card
from ledger.domain.round import Round
from ledger.feed.cards import CardBurned, DeckShuffled
from ledger.games.base import Step
from ledger.games.three_card_baccarat.feed import (
    CardsCancelled,
    DealCorrected,
    ShoeClosed,
    ThreeCardCardDealt,
)
from ledger.games.three_card_baccarat.tables import (
    BURN_RULE,
    CARDS_PER_DECK,
    CARDS_PER_HAND,
    CUT_RULE,
    DEAL_ORDER_RULE,
    DUPLICATE_RULE,
    EQUIPMENT_RULE,
    MARKER_FROM_END,
    MISDEAL_RULE,
    SHOE_END_RULE,
)

Place = int | Literal["banker"]
BANKER: Literal["banker"] = "banker"


@dataclass
class Shoe:
    """One table's shoe (or single-deck box) as far as the ledger has seen it."""

    decks: int
    opened_in: str
    marker_from_end: int | None = None
    seen: Counter[Card] = field(default_factory=Counter)
    drawn: int = 0
    rounds: int = 0
    """Rounds that drew cards from this shoe."""
    last_round: str | None = None
    """The round during which the last-round blank card came out (3CB art. 3(2))."""
    closed_in: str | None = None
    """The round whose ``shoe_closed`` ended this shoe."""

    @property
    def size(self) -> int:
        """Cards in the shoe."""
        return CARDS_PER_DECK * self.decks


def shoe_to_json(shoe: Shoe) -> dict[str, Any]:
    """A shoe as plain JSON (cards in FEED notation), for projection rows."""
    return {
        "decks": shoe.decks,
        "opened_in": shoe.opened_in,
        "marker_from_end": shoe.marker_from_end,
        "seen": dict(sorted((str(card), n) for card, n in shoe.seen.items())),
        "drawn": shoe.drawn,
        "rounds": shoe.rounds,
        "last_round": shoe.last_round,
        "closed_in": shoe.closed_in,
    }


def shoe_from_json(data: dict[str, Any]) -> Shoe:
    """Inverse of :func:`shoe_to_json`."""
    return Shoe(
        decks=int(data["decks"]),
        opened_in=data["opened_in"],
        marker_from_end=data["marker_from_end"],
        seen=Counter({Card.parse(c): int(n) for c, n in data["seen"].items()}),
        drawn=int(data["drawn"]),
        rounds=int(data["rounds"]),
        last_round=data["last_round"],
        closed_in=data["closed_in"],
    )


@dataclass
class Dealt:
    """One card of the deal in force, with the place it belongs to after any correction."""

    seq: int
    card: Card
    to: Place
    face_up: bool


@dataclass(frozen=True)
class DealProblem:
    """Something wrong with the shoe or the deal: an ``invalid_deal`` finding."""

    rule: str
    message: str
    seq: int | None = None


@dataclass
class Deal:
    """What a round's card events say: the deal in force, the problems and the steps."""

    cards: list[Dealt] = field(default_factory=list)
    problems: list[DealProblem] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    cancellations: int = 0
    opened_shoe: bool = False
    burned: int = 0

    @property
    def hands(self) -> dict[Place, list[Card]]:
        """The cards of each place and of the banker, in the order dealt."""
        out: dict[Place, list[Card]] = {}
        for dealt in self.cards:
            out.setdefault(dealt.to, []).append(dealt.card)
        return out

    @property
    def seats(self) -> list[int]:
        """The player places in use: those the deal gives cards to, in dealing order."""
        return sorted({d.to for d in self.cards if isinstance(d.to, int)})


class _Reader:
    """Walks one round's events against the table's shoe."""

    def __init__(self, rnd: Round, shoe: Shoe | None) -> None:
        self.rnd = rnd
        self.shoe = shoe
        self.deal = Deal()
        self.drew = False
        self.dealing = False
        self.burns_checked = False

    def problem(self, rule: str, message: str, seq: int | None = None) -> None:
        self.deal.problems.append(DealProblem(rule, message, seq))

    def read(self) -> tuple[Deal, Shoe | None]:
        handlers = _HANDLERS
        for fact in self.rnd.events:  # one look-up by class per fact, not an isinstance chain
            handler = handlers[fact.__class__]
            if handler is not None:
                handler(self, fact)
        self.end_of_round()
        check_order(self.deal)
        return self.deal, self.shoe

    def shoe_closed(self, fact: ShoeClosed) -> None:
        if self.shoe is not None:
            self.shoe.closed_in = self.rnd.round
        self.deal.steps.append(Step(f"shoe closed ({fact.reason})", SHOE_END_RULE))

    def shuffled(self, fact: DeckShuffled) -> None:
        if self.dealing:
            self.problem(SHOE_END_RULE, f"the shoe was changed at seq {fact.seq}, during the deal", fact.seq)
        self.shoe = Shoe(decks=fact.decks, opened_in=self.rnd.round, marker_from_end=fact.marker_from_end)
        self.deal.opened_shoe = True
        self.drew = self.burns_checked = False
        marker = fact.marker_from_end
        lo, hi = MARKER_FROM_END
        if fact.decks > 1 and marker is None:
            self.problem(
                CUT_RULE,
                f"a shoe of {fact.decks} decks needs a last-round blank card (marker_from_end)",
                fact.seq,
            )
        elif fact.decks > 1 and marker is not None and not lo <= marker <= hi:
            self.problem(
                CUT_RULE,
                f"the last-round blank card is {marker} cards from the end; "
                f"it must be among the last {lo} to {hi}",
                fact.seq,
            )
        elif fact.decks == 1 and marker is not None:
            self.problem(
                EQUIPMENT_RULE,
                "a single-deck box holds one blank card only: it has no last-round card",
                fact.seq,
            )
        box = "single-deck box" if fact.decks == 1 else f"shoe of {fact.decks} decks"
        marked = f", last-round card {marker} from the end" if marker is not None else ""
        self.deal.steps.append(
            Step(f"new {box} ({fact.method} shuffle{marked}): {fact.decks} card(s) to burn", BURN_RULE)
        )

    def draw(self, seq: int, card: Card | None) -> None:
        """One card leaves the shoe."""
        if not self.drew:
            self.drew = True
            self.continues(seq)
        shoe = self.shoe
        if shoe is None:
            return
        shoe.drawn += 1
        if shoe.drawn == shoe.size + 1:
            self.problem(EQUIPMENT_RULE, f"card {shoe.drawn} drawn from a shoe of {shoe.size} cards", seq)
        if card is None:
            return
        seen = shoe.seen
        seen[card] = times = seen.get(card, 0) + 1  # a get, not Counter's __missing__ per new card
        if times > shoe.decks:
            self.problem(
                DUPLICATE_RULE,
                f"{card} seen {times} times in a shoe of {shoe.decks} deck(s) (since round {shoe.opened_in})",
                seq,
            )

    def continues(self, seq: int) -> None:
        """The round's first card: may it come from the shoe in play?"""
        shoe = self.shoe
        if shoe is None:
            self.deal.steps.append(
                Step(
                    "the round continues a shoe shuffled before the "
                    "ledger's first record of this table: cards are not "
                    "counted against a shoe",
                    SHOE_END_RULE,
                )
            )
            return
        if not self.deal.opened_shoe:
            if shoe.closed_in is not None:
                self.problem(
                    SHOE_END_RULE,
                    f"cards drawn from the shoe closed in round {shoe.closed_in}, with no new deck_shuffled",
                    seq,
                )
            elif shoe.decks == 1 and shoe.rounds >= 1:
                self.problem(
                    SHOE_END_RULE,
                    "a single-deck box deals exactly one round: round "
                    f"{shoe.opened_in} used this deck, no reshuffle "
                    "followed",
                    seq,
                )
            elif shoe.last_round is not None:
                self.problem(
                    SHOE_END_RULE,
                    "the last-round card came out in round "
                    f"{shoe.last_round}: that was the shoe's last "
                    "round, a reshuffle was due",
                    seq,
                )
        shoe.rounds += 1

    def burned(self, fact: CardBurned) -> None:
        self.draw(fact.seq, fact.card)
        if self.dealing:
            self.problem(BURN_RULE, f"a card burned at seq {fact.seq}, after the deal began", fact.seq)
        else:
            self.deal.burned += 1

    def dealt(self, fact: ThreeCardCardDealt) -> None:
        self.draw(fact.seq, fact.card)
        if not self.burns_checked:
            self.burns_checked = True
            self.check_burns(fact.seq)
        self.dealing = True
        self.deal.cards.append(Dealt(fact.seq, fact.card, fact.to, fact.face_up))

    def check_burns(self, seq: int) -> None:
        due = self.shoe.decks if self.deal.opened_shoe and self.shoe else 1
        first = "the first round of a shoe" if self.deal.opened_shoe else "a later round"
        burned = self.deal.burned
        if burned != due:
            self.problem(BURN_RULE, f"{burned} card(s) burned before the deal; {first} burns {due}", seq)
        else:
            self.deal.steps.append(Step.later(BURN_RULE, _burned_text, burned, first))

    def corrected(self, fact: DealCorrected) -> None:
        dealt = next((d for d in reversed(self.deal.cards) if d.card == fact.card), None)
        if dealt is None:
            self.problem(
                MISDEAL_RULE,
                f"deal_corrected gives {fact.card} to {_place(fact.to)}, but that card is not in the deal",
                fact.seq,
            )
            return
        self.deal.steps.append(
            Step(
                f"misdeal corrected: {fact.card} moved from {_place(dealt.to)} to {_place(fact.to)}",
                MISDEAL_RULE,
            )
        )
        dealt.to = fact.to

    def cancelled(self, fact: CardsCancelled) -> None:
        self.deal.steps.append(
            Step(
                f"misdeal: the {len(self.deal.cards)} card(s) dealt are cancelled, a new deal follows",
                MISDEAL_RULE,
            )
        )
        self.deal.cards.clear()
        self.deal.cancellations += 1
        self.dealing = False

    def end_of_round(self) -> None:
        shoe = self.shoe
        if shoe is None or shoe.marker_from_end is None or shoe.decks == 1:
            return
        if shoe.last_round is None and shoe.drawn > shoe.size - shoe.marker_from_end:
            shoe.last_round = self.rnd.round
            self.deal.steps.append(
                Step("the last-round card came out: this is the shoe's last round", SHOE_END_RULE)
            )


_Handler = Callable[[_Reader, Any], None] | None

_READS: tuple[tuple[type, _Handler], ...] = (
    (DeckShuffled, _Reader.shuffled),
    (ShoeClosed, _Reader.shoe_closed),
    (CardBurned, _Reader.burned),
    (ThreeCardCardDealt, _Reader.dealt),
    (DealCorrected, _Reader.corrected),
    (CardsCancelled, _Reader.cancelled),
)
"""What :meth:`_Reader.read` does with a fact of each class, the first that matches."""


class _ByClass(dict[type, _Handler]):
    """The handler of each fact class (``None``: not a card or shoe fact): the first entry of
    :data:`_READS` the class is a subclass of, as the ``isinstance`` chain it replaces would
    pick (a compact fact's class is a subclass of its model), found once per class."""

    def __missing__(self, cls: type) -> _Handler:
        handler = next((read for base, read in _READS if issubclass(cls, base)), None)
        self[cls] = handler
        return handler


_HANDLERS = _ByClass()


def read_deal(rnd: Round, shoe: Shoe | None) -> tuple[Deal, Shoe | None]:
    """Read ``rnd``'s shoe and card events given the table's ``shoe`` after its previous round;
    returns the deal and the shoe as it stands after ``rnd`` (see the module docstring)."""
    return _Reader(rnd, shoe).read()


def dealing_order(seats: list[int]) -> list[Place]:
    """Three passes over ``seats`` clockwise, the banker last in each (3CB art. 2(2)).

    >>> dealing_order([1, 3])
    [1, 3, 'banker', 1, 3, 'banker', 1, 3, 'banker']
    """
    one_pass: list[Place] = [*seats, BANKER]
    return one_pass * CARDS_PER_HAND


def check_order(deal: Deal) -> None:
    """Add the problems of the deal in force: card counts, order and faces (3CB art. 2(2))."""
    if not deal.cards:
        return
    hands = deal.hands
    counts_ok = True
    if BANKER not in hands:
        deal.problems.append(DealProblem(DEAL_ORDER_RULE, "the banker was dealt no card"))
        counts_ok = False
    for place, cards in hands.items():
        if len(cards) != CARDS_PER_HAND:
            counts_ok = False
            deal.problems.append(
                DealProblem(
                    DEAL_ORDER_RULE, f"wrong number of cards: {_place(place)} got {len(cards)}, not 3"
                )
            )
    if counts_ok:
        expected = dealing_order(deal.seats)
        for n, (dealt, due) in enumerate(zip(deal.cards, expected, strict=True), start=1):
            if dealt.to != due:
                deal.problems.append(
                    DealProblem(
                        DEAL_ORDER_RULE,
                        f"out of order: card {n} of the deal ({dealt.card}, seq "
                        f"{dealt.seq}) went to {_place(dealt.to)}; the order gives {_place(due)}",
                        dealt.seq,
                    )
                )
                break
    _check_faces(deal)


def _check_faces(deal: Deal) -> None:
    passes: dict[Place, int] = {}
    for dealt in deal.cards:
        passes[dealt.to] = n = passes.get(dealt.to, 0) + 1
        if n > CARDS_PER_HAND:
            continue
        face_up = dealt.to == BANKER or n < CARDS_PER_HAND
        if dealt.face_up != face_up:
            side = "up" if face_up else "down"
            deal.problems.append(
                DealProblem(
                    DEAL_ORDER_RULE,
                    f"{_place(dealt.to)}'s card {n} ({dealt.card}, seq "
                    f"{dealt.seq}) must be dealt face {side}",
                    dealt.seq,
                )
            )


def _burned_text(burned: int, first: str) -> str:
    return f"{burned} card(s) burned ({first})"


def _place(place: Place) -> str:
    return "the banker" if place == BANKER else f"seat {place}"
