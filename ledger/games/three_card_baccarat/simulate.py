"""3-Card Baccarat rounds for ``ledger simulate``: a real shoe, carried ties, injected errors.

Each simulated table keeps its state from round to round in ``RoundBuilder.table_state``:

- **the shoe** (RULES §3.3): a single-deck box or a shoe of 6 or 8 decks, chosen when the table
  opens. A new shoe is shuffled (``deck_shuffled`` with the cut and, for a shoe, the last-round
  card 30–40 cards from the end) and burns ``decks`` cards; every later round burns one. The
  round in which the last-round card comes out is the shoe's last (``shoe_closed``); a
  single-deck box deals one round. Cards are drawn from the shuffled shoe, so no card appears
  more than ``decks`` times;
- **the places in use** (2–7 of the 7), changing now and then;
- **the carried bets** (RULES §3.7): a main bet that tied, odd/even on three figures. They are
  restated with ``bet_carried`` (same id, same stake) at the start of the table's next round,
  sometimes raised with ``bet_increased``, and settled there on that round's cards.

A round (FEED §5): ``round_opened`` (HKD, table limits), the carried bets, new bets (main bets
on most places, tie bets on places with a main bet, odd/even, three figures, points — at least
one banker side bet), ``betting_closed``, shoe and burns, the deal in three passes clockwise
with the banker last, a correct ``bet_settled`` per bet (``rules.settle``), ``round_closed``.
Now and then the shoe is arranged so the banker draws three figures, so that carried odd/even
bets and three-figure prizes are seen in short runs.

An injected error (``ledger.tools.simulate.ERROR_KINDS``) yields exactly one finding. It never
targets a bet due ``carry``: spoiling it would also change what the next round must restate.

All randomness comes from the ``rng`` argument, so a seed replays the same feed.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Final

from ledger.domain.equipment import Card, Rank, Suit
from ledger.games.base import Settlement
from ledger.games.three_card_baccarat.deal import BANKER, Place, dealing_order
from ledger.games.three_card_baccarat.feed import (
    HandSpot,
    ParitySpot,
    PointsSpot,
    ThreeFiguresSpot,
    TieSpot,
)
from ledger.games.three_card_baccarat.rules import HandValue, Spot, evaluate, settle
from ledger.games.three_card_baccarat.tables import CARDS_PER_DECK, FIGURES, PRIZES, SpotKind
from ledger.tools.builder import Injected, RoundBuilder

INJECTABLE: Final[tuple[str, ...]] = (
    "wrong_payout",
    "late_bet",
    "missing_settlement",
    "wrong_commission",
)
"""The error kinds this simulator injects (all of ``ledger.tools.simulate.ERROR_KINDS``)."""

LIMITS: Final[dict[SpotKind, tuple[int, int]]] = {
    "hand": (50, 20000),
    "tie": (10, 1000),
    "odd": (50, 20000),
    "even": (50, 20000),
    "three_figures": (10, 500),
    "points": (10, 2000),
}
"""The simulated table's limits per spot kind, HKD (RULES §8 G3)."""

STAKES: Final[tuple[int, ...]] = (10, 20, 50, 100, 200, 300, 500, 1000, 2000, 5000)
DECKS: Final[tuple[int, ...]] = (1, 6, 8)
CHIP: Final = Decimal("10")
STACKED_BANKER_RATE: Final = 0.03
"""Share of rounds in which the shoe is arranged to give the banker three figures."""


@dataclass
class Bet:
    """A simulated bet: its id, spot, stake in play, and the round it was carried from."""

    id: str
    spot: Spot
    stake: Decimal
    player: str
    carried_from: str | None = None


@dataclass
class SimShoe:
    """The physical shoe: cards in drawing order, where the next card is, where the marker is."""

    decks: int
    cards: list[Card]
    marker_from_end: int | None
    drawn: int = 0
    rounds: int = 0

    def draw(self) -> Card:
        """The next card out of the shoe."""
        card = self.cards[self.drawn]
        self.drawn += 1
        return card

    @property
    def finished(self) -> bool:
        """No further round: a used single deck, or the last-round card has come out."""
        if self.decks == 1:
            return self.rounds >= 1
        assert self.marker_from_end is not None
        return self.drawn > len(self.cards) - self.marker_from_end


@dataclass
class TableState:
    """What a simulated table remembers between rounds."""

    decks: int
    places: list[int]
    shoe: SimShoe | None = None
    carried: list[Bet] = field(default_factory=list)


def simulate_round(b: RoundBuilder, rng: random.Random, inject: str | None) -> list[Injected]:
    """Play one 3CB round into ``b``; return the injected error, if ``inject`` names one."""
    state = _table(b, rng)
    b.add("round_opened", currency="HKD", rulebook={"limits": _limits_json()})
    bets = _restate_carried(b, rng, state)
    state.places = _places(rng, state)
    bets += _place_bets(b, rng, state, bets)
    b.add("betting_closed")
    shoe = _shoe_for_round(b, rng, state)
    if rng.random() < STACKED_BANKER_RATE:
        _stack_three_figures(shoe, len(state.places), rng)
    hands = _deal(b, shoe, state.places)
    values = {place: evaluate(cards) for place, cards in hands.items()}
    injected: list[Injected] = []
    if inject == "late_bet":
        bets.append(_late_bet(b, rng))
        injected.append(b.injected(inject, bets[-1].id))
    dues = {bet.id: _due(bet, values) for bet in bets}
    injected += _settle_all(b, rng, inject, bets, dues)
    if shoe.finished:
        b.add(
            "shoe_closed",
            reason="single deck: one round per deck" if shoe.decks == 1 else "last-round card out",
        )
        state.shoe = None
    b.add("round_closed")
    state.carried = [_carried(bet, b.round) for bet in bets if dues[bet.id].result == "carry"]
    return injected


def _table(b: RoundBuilder, rng: random.Random) -> TableState:
    state = b.table_state.get("3cb")
    if not isinstance(state, TableState):
        state = TableState(decks=rng.choice(DECKS), places=sorted(rng.sample(range(1, 8), 4)))
        b.table_state["3cb"] = state
    return state


def _limits_json() -> dict[str, dict[str, str]]:
    return {kind: {"min": str(lo), "max": str(hi)} for kind, (lo, hi) in LIMITS.items()}


def _stake(rng: random.Random, kind: SpotKind) -> Decimal:
    lo, hi = LIMITS[kind]
    return Decimal(rng.choice([s for s in STAKES if lo <= s <= hi]))


def _player(rng: random.Random) -> str:
    return f"P-{rng.randint(1, 99)}"


def _restate_carried(b: RoundBuilder, rng: random.Random, state: TableState) -> list[Bet]:
    """``bet_carried`` for each bet the table's previous round carried; some are raised."""
    bets: list[Bet] = []
    for bet in state.carried:
        b.add(
            "bet_carried",
            bet=bet.id,
            from_round=bet.carried_from,
            spot=bet.spot.model_dump(mode="json"),
            amount=str(bet.stake),
        )
        bets.append(bet)
    for bet in bets:
        hi = Decimal(LIMITS[bet.spot.kind][1])
        if rng.random() < 0.2 and bet.stake + CHIP * 5 <= hi:
            bet.stake += CHIP * 5
            b.add("bet_increased", bet=bet.id, amount=str(bet.stake))
    return bets


def _places(rng: random.Random, state: TableState) -> list[int]:
    """The places in use: mostly the same players; every place with a carried bet stays."""
    places = set(state.places)
    if rng.random() < 0.15:
        places = set(rng.sample(range(1, 8), rng.randint(2, 6)))
    places |= {bet.spot.seat for bet in state.carried if isinstance(bet.spot, HandSpot)}
    return sorted(places)


def _place_bets(b: RoundBuilder, rng: random.Random, state: TableState, carried: list[Bet]) -> list[Bet]:
    bets: list[Bet] = []
    mains = {bet.spot.seat for bet in carried if isinstance(bet.spot, HandSpot)}
    for seat in state.places:
        if rng.random() < 0.8:
            bets.append(_bet(b, rng, HandSpot(kind="hand", seat=seat), seat))
            mains.add(seat)
    for seat in sorted(mains):
        if rng.random() < 0.25:
            bets.append(_bet(b, rng, TieSpot(kind="tie", seat=seat), seat))
    for _ in range(rng.randint(0, 2)):
        kind = rng.choice(("odd", "even"))
        bets.append(_bet(b, rng, ParitySpot(kind=kind), None))
    if rng.random() < 0.3:
        bets.append(_bet(b, rng, ThreeFiguresSpot(kind="three_figures"), None))
    for _ in range(rng.randint(1, 2)):
        bets.append(_bet(b, rng, PointsSpot(kind="points", points=rng.randint(0, 9)), None))
    return bets


def _bet(b: RoundBuilder, rng: random.Random, spot: Spot, seat: int | None) -> Bet:
    bet = Bet(f"{b.round}-{b.next_bet()}", spot, _stake(rng, spot.kind), _player(rng))
    fields: dict[str, Any] = {
        "bet": bet.id,
        "player": bet.player,
        "spot": spot.model_dump(mode="json"),
        "amount": str(bet.stake),
    }
    if seat is not None:
        fields["seat"] = seat
    b.add("bet_placed", **fields)
    return bet


def _shoe_for_round(b: RoundBuilder, rng: random.Random, state: TableState) -> SimShoe:
    """The shoe in play, shuffling a new one when due; adds the burns (3CB art. 2(1)-(3))."""
    shoe = state.shoe
    burns = 1
    if shoe is None or shoe.finished:
        cards = [Card(rank, suit) for _ in range(state.decks) for suit in Suit for rank in Rank]
        if b.bias is not None:
            for gone in b.bias.missing:  # one copy of each missing card leaves the shoe
                cards.remove(Card.parse(gone))
            if state.decks > 1:  # one more copy of each extra card
                cards += [Card.parse(more) for more in b.bias.extra]
        rng.shuffle(cards)
        marker = rng.randint(30, 40) if state.decks > 1 else None
        shoe = state.shoe = SimShoe(state.decks, cards, marker)
        fields: dict[str, Any] = {
            "decks": state.decks,
            "method": "machine" if state.decks > 1 else "hand",
            "cut": rng.randint(10, CARDS_PER_DECK * state.decks - 10),
            "cut_by": _player(rng) if rng.random() < 0.7 else "banker",
        }
        if marker is not None:
            fields["marker_from_end"] = marker
        b.add("deck_shuffled", **fields)
        burns = state.decks
    for _ in range(burns):
        b.add("card_burned", card=str(shoe.draw()))
    shoe.rounds += 1
    return shoe


def _stack_three_figures(shoe: SimShoe, seats: int, rng: random.Random) -> None:
    """Arrange the undrawn cards so the banker's three cards are figures."""
    rest = range(shoe.drawn, len(shoe.cards))
    banker_slots = [shoe.drawn + seats + k * (seats + 1) for k in range(3)]
    figures = [i for i in rest if shoe.cards[i].rank in FIGURES and i not in banker_slots]
    for slot, source in zip(banker_slots, rng.sample(figures, 3), strict=True):
        if shoe.cards[slot].rank not in FIGURES:
            shoe.cards[slot], shoe.cards[source] = shoe.cards[source], shoe.cards[slot]


def _deal(b: RoundBuilder, shoe: SimShoe, places: list[int]) -> dict[Place, list[Card]]:
    hands: dict[Place, list[Card]] = {}
    for to in dealing_order(places):
        card = shoe.draw()
        hand = hands.setdefault(to, [])
        hand.append(card)
        b.add("card_dealt", to=to, card=str(card), face_up=to == BANKER or len(hand) < 3)
    return hands


def _late_bet(b: RoundBuilder, rng: random.Random) -> Bet:
    """A points bet placed after the deal (never carried, so it touches no later round)."""
    return _bet(b, rng, PointsSpot(kind="points", points=rng.randint(0, 9)), None)


def _due(bet: Bet, values: dict[Place, HandValue]) -> Settlement:
    place = values.get(bet.spot.seat) if isinstance(bet.spot, HandSpot | TieSpot) else None
    return settle(bet.spot, bet.stake, values[BANKER], place)


def _carried(bet: Bet, round_id: str) -> Bet:
    return Bet(bet.id, bet.spot, bet.stake, bet.player, carried_from=round_id)


def _settle_all(
    b: RoundBuilder, rng: random.Random, inject: str | None, bets: list[Bet], dues: dict[str, Settlement]
) -> list[Injected]:
    """A ``bet_settled`` per bet, spoiling one bet not due ``carry`` when ``inject`` says so."""
    spoiler = _SPOILERS.get(inject or "")
    targets = [bet.id for bet in bets if dues[bet.id].result != "carry"]
    target = rng.choice(targets) if spoiler is not None and targets else None
    for bet in bets:
        fields: dict[str, Any] | None = {"bet": bet.id, **dues[bet.id].as_dict()}
        if spoiler is not None and fields is not None and bet.id == target:
            fields = spoiler(fields, bet)
        if fields is not None:
            b.add("bet_settled", **fields)
    if inject is None or target is None:
        return []
    return [b.injected(inject, target)]


def _wrong_payout(fields: dict[str, Any], bet: Bet) -> dict[str, Any]:
    """A winner paid a chip short (a chip over on a small prize), a loser paid as a winner."""
    if fields["result"] == "win":
        won = Decimal(fields["won"])
        return {**fields, "won": str(won - CHIP if won > CHIP else won + CHIP)}
    return {
        **fields,
        "result": "win",
        "returned": str(bet.stake),
        "won": str(PRIZES[bet.spot.kind].prize(bet.stake)),
    }


def _missing(fields: dict[str, Any], bet: Bet) -> None:
    """The ``bet_settled`` is left out."""
    return None


def _wrong_commission(fields: dict[str, Any], bet: Bet) -> dict[str, Any]:
    """Twice the 5% on a winning main or odd/even bet; 5 taken where none is due."""
    due = Decimal(fields["commission"])
    return {**fields, "commission": str(due * 2 if due > 0 else Decimal("5"))}


Spoiler = Callable[[dict[str, Any], Bet], dict[str, Any] | None]

_SPOILERS: Final[dict[str, Spoiler]] = {
    "wrong_payout": _wrong_payout,
    "missing_settlement": _missing,
    "wrong_commission": _wrong_commission,
}
