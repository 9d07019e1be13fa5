"""Super Pan 9 rounds for ``ledger simulate``: a rotating, co-banked, sometimes exhausted bank.

Each simulated table keeps its bank in ``builder.table_state`` between rounds (RULES §1.2,
§1.6): the banker keeps the bank for up to two rounds (now and then a third, with every other
seat's ``bank_extended`` consent), posting the previous capital plus its net winnings after a
winning round; then the bank passes counter-clockwise, and sometimes the next seat refuses and
it goes on to a seat that bet in the previous round. Player seats and the casino co-bank now and
then, and small banks run out of capital mid-settlement. Dice (with rethrows and declared
adjustments), the deal from a shuffled deck (two decks alternating) and every settlement follow
the rules (``rules.py``, ``bank.py``).

Injected errors: the generic kinds of ``ledger.tools.simulate.ERROR_KINDS`` (:data:`INJECTABLE`), each
exactly one finding — a wrong payout or commission hits a bet or a bank layer (``bet: null``).
:data:`EXTRA_KINDS` are SP9's own (a misdeal, a bank held a third round without consent,
capital reduced after a win, a co-banker betting); they are not in ``ERROR_KINDS`` (the other
games' simulators inject every kind listed there), so ``ledger simulate`` does not draw them,
but :func:`simulate_round` injects them on request and reports their finding. A kind that the
table's state does not allow this round (no win to carry, no run to overstay) injects nothing.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

from ledger.domain.equipment import Card, Rank, Suit
from ledger.domain.money import ZERO
from ledger.games.super_pan9.bank import (
    Layer,
    Line,
    Play,
    commission_on,
    layer_commissions,
    settle_plays,
    split_result,
)
from ledger.games.super_pan9.rules import compare, dealing_order, first_seat, settlement_seats
from ledger.tools.builder import Injected, RoundBuilder

INJECTABLE: Final = ("wrong_payout", "late_bet", "missing_settlement", "wrong_commission")
"""The generic error kinds this simulator injects (keys of ``ledger.tools.simulate.ERROR_KINDS``)."""

EXTRA_KINDS: Final[dict[str, str]] = {
    "misdeal": "invalid_deal",
    "bank_overstay": "bank_rule_broken",
    "capital_reduced": "bank_rule_broken",
    "cobanker_bet": "invalid_bet",
}
"""SP9's own error kinds and the finding each must produce (not drawn by ``ledger simulate``)."""

CAPITALS: Final = (500, 1000, 1000, 2000, 3000, 5000)
"""A new banker's capital, in dollars; the small ones run out now and then."""
CHIPS: Final = (50, 100, 100, 200, 300, 500, 1000)
DECK: Final = tuple(Card(r, s) for s in Suit for r in Rank)


@dataclass
class _Bet:
    id: str
    seat: int
    bettor: int
    amount: Decimal


def _kind_ok(inject: str | None) -> None:
    if inject is not None and inject not in INJECTABLE and inject not in EXTRA_KINDS:
        raise ValueError(f"SP9 cannot inject {inject!r}; it injects {', '.join((*INJECTABLE, *EXTRA_KINDS))}")


def _next_seat(seat: int, places: int) -> int:
    return seat % places + 1


def _choose_bank(
    state: dict[str, Any], rng: random.Random, inject: str | None
) -> tuple[int, int, list[int], bool, bool]:
    """``(banker, run, refused seats, extended, overstay injected)`` for this round."""
    places: int = state["places"]
    banker: int | None = state.get("banker")
    run: int = state.get("run", 0)
    if banker is None:
        return rng.randint(1, places), 1, [], False, False
    if inject == "bank_overstay" and run == 2:
        return banker, 3, [], False, True
    if inject == "capital_reduced" and state.get("carry") is not None and run < 2:
        return banker, run + 1, [], False, False
    if run < 2 and rng.random() < 0.6:
        return banker, run + 1, [], False, False
    if run == 2 and rng.random() < 0.15:
        return banker, 3, [], True, False
    nxt = _next_seat(banker, places)
    bettors: list[int] = state.get("bettors", [])
    if rng.random() < 0.25:
        candidate, refused = nxt, [nxt]
        for _ in range(places):
            candidate = _next_seat(candidate, places)
            if candidate in bettors and candidate != banker:
                return candidate, 1, refused, False, False
            refused.append(candidate)
    return nxt, 1, [], False, False


@dataclass
class _Bank:
    """Who holds the bank this round, on what capital, and what the round injects into it."""

    banker: int
    run: int
    capital: Decimal
    extended: bool
    overstay: bool
    reduced: bool


@dataclass
class _Table:
    """The parties of one round: the bank's layers, the co-bankers and the player seats."""

    layers: list[Layer]
    cobankers: list[int]
    players: list[int]


@dataclass
class _Deal:
    """The dice and the deal: the deck used, the first seat, the seats dealt and their hands."""

    deck: str
    first: int
    seats: list[int]
    hands: dict[int, list[Card]]


def simulate_round(b: RoundBuilder, rng: random.Random, inject: str | None) -> list[Injected]:
    """Play one SP9 round into ``b``; inject ``inject`` if given, and report its finding."""
    _kind_ok(inject)
    state = b.table_state
    state.setdefault("places", rng.randint(7, 10))
    b.add("round_opened", currency="HKD")
    bank = _take_bank(b, state, rng, inject)
    table = _join_table(b, rng, inject, state["places"], bank)
    bets, victim = _place_bets(b, rng, inject, table)
    dice, k = _throw_dice(b, rng)
    if inject == "late_bet":
        victim = _late_bet(b, rng, table.players)
        bets.append(victim)
    deal = _deal(b, rng, inject, state, bank.banker, table.players, sum(dice) + k)
    settled, lines = _settle_bets(b, bets, deal, bank.banker, table)
    shares, commissions, layer_lines = _settle_layers(b, table.layers, lines)
    b.add("round_closed")
    injected = _inject(
        b, rng, inject, settled, layer_lines, table.layers, lines, victim, bank.overstay, bank.reduced
    )
    net = shares[0] - commissions[0]
    state.update(
        banker=bank.banker,
        run=bank.run,
        capital=str(bank.capital),
        deck=deal.deck,
        carry=bank.capital + net if net > 0 else None,
        bettors=sorted({bet.bettor for bet in bets}),
    )
    return injected


def _take_bank(b: RoundBuilder, state: dict[str, Any], rng: random.Random, inject: str | None) -> _Bank:
    """Choose the banker, record refusals and the capital posted (reduced if injected)."""
    banker, run, refused, extended, overstay = _choose_bank(state, rng, inject)
    for seat in refused:
        b.add("bank_refused", seat=seat)
    continues = state.get("banker") == banker
    carry: Decimal | None = state.get("carry") if continues else None
    if carry is not None:
        capital = carry + (Decimal(rng.choice((0, 0, 500))))
    elif continues:
        capital = Decimal(state["capital"])
    else:
        capital = Decimal(rng.choice(CAPITALS))
    reduced = inject == "capital_reduced" and carry is not None
    if reduced:
        capital = (carry or ZERO) - Decimal(100)
    b.add("bank_taken", seat=banker, capital=str(capital))
    return _Bank(banker, run, capital, extended, overstay, reduced)


def _join_table(b: RoundBuilder, rng: random.Random, inject: str | None, places: int, bank: _Bank) -> _Table:
    """Seat the co-bankers, the casino's layer and the players; record the joins and consents."""
    free = [s for s in range(1, places + 1) if s != bank.banker]
    rng.shuffle(free)
    cobankers: list[int] = []
    if rng.random() < 0.3 or inject == "cobanker_bet":
        cobankers = free[: rng.randint(1, 2)]
    players = sorted(free[len(cobankers) : len(cobankers) + rng.randint(3, 6)])
    layers = [Layer("banker", bank.capital)]
    for seat in cobankers:
        layer = Layer(f"seat:{seat}", Decimal(rng.choice((200, 500, 1000))))
        layers.append(layer)
        b.add("bank_joined", party=layer.party, capital=str(layer.capital))
    if rng.random() < 0.25:
        casino = Layer("casino", Decimal(rng.choice((1000, 2000, 5000))))
        layers.append(casino)
        b.add("bank_joined", party="casino", capital=str(casino.capital))
    if bank.extended:
        b.add("bank_extended", consents=sorted(players + cobankers))
    return _Table(layers, cobankers, players)


def _place_bets(
    b: RoundBuilder, rng: random.Random, inject: str | None, table: _Table
) -> tuple[list[_Bet], _Bet | None]:
    """The players' bets (and a co-banker's, if injected), recorded before the dice."""
    players = table.players
    bets: list[_Bet] = []
    for seat in players:
        for _ in range(rng.randint(1, 3)):
            bettor = seat if rng.random() < 0.75 else rng.choice(players)
            bets.append(_Bet(b.next_bet(), seat, bettor, Decimal(rng.choice(CHIPS))))
    victim: _Bet | None = None
    if inject == "cobanker_bet":
        victim = _Bet(b.next_bet(), rng.choice(players), table.cobankers[0], Decimal(rng.choice(CHIPS)))
        bets.insert(rng.randrange(len(bets) + 1), victim)
    for bet in bets:
        b.add(
            "bet_placed",
            bet=bet.id,
            seat=bet.bettor,
            spot={"kind": "hand", "seat": bet.seat},
            amount=str(bet.amount),
        )
    return bets, victim


def _throw_dice(b: RoundBuilder, rng: random.Random) -> tuple[list[int], int]:
    """A declared adjustment now and then, a rethrow now and then, then the valid throw."""
    k = rng.choice((-3, -2, -1, 1, 2, 5)) if rng.random() < 0.3 else 0
    if k:
        b.add("dice_adjustment_declared", points=k)
    if rng.random() < 0.08:
        b.add("dice_thrown", dice=[rng.randint(1, 6) for _ in range(4)], valid=False)
    dice = (
        [b.bias.die(rng, i) for i in range(1, 5)]
        if b.bias is not None
        else [rng.randint(1, 6) for _ in range(4)]
    )
    b.add("dice_thrown", dice=dice, valid=True)
    return dice, k


def _late_bet(b: RoundBuilder, rng: random.Random, players: list[int]) -> _Bet:
    """A bet placed after the valid throw (the injected ``late_bet``)."""
    late = _Bet(b.next_bet(), rng.choice(players), rng.choice(players), Decimal(rng.choice(CHIPS)))
    b.add(
        "bet_placed",
        bet=late.id,
        seat=late.bettor,
        spot={"kind": "hand", "seat": late.seat},
        amount=str(late.amount),
    )
    return late


def _deal(
    b: RoundBuilder,
    rng: random.Random,
    inject: str | None,
    state: dict[str, Any],
    banker: int,
    players: list[int],
    points: int,
) -> _Deal:
    """Shuffle the other deck and deal two cards a seat from the seat the dice point at."""
    deck = "B" if state.get("deck") == "A" else "A"
    b.add("deck_shuffled", decks=1, method="machine", deck=deck)
    seats = [banker, *players]
    first = first_seat(points, banker=banker, seats=seats)
    order = dealing_order(first, banker=banker, seats=seats)
    cards = [c for c in DECK if b.bias is None or str(c) not in b.bias.missing]
    rng.shuffle(cards)
    hands: dict[int, list[Card]] = {}
    dealt_to = list(order)
    if inject == "misdeal":  # one seat's pair dealt out of turn: same hands, wrong order
        pairs = [order[i : i + 2] for i in range(0, len(order), 2)]
        i = rng.randrange(len(pairs) - 1)
        pairs[i], pairs[i + 1] = pairs[i + 1], pairs[i]
        dealt_to = [s for p in pairs for s in p]
    for seat, card in zip(dealt_to, cards, strict=False):
        hands.setdefault(seat, []).append(card)
        b.add("card_dealt", to=seat, card=str(card), face_up=False)
    return _Deal(deck, first, seats, hands)


def _settle_bets(
    b: RoundBuilder, bets: list[_Bet], deal: _Deal, banker: int, table: _Table
) -> tuple[list[dict[str, Any]], list[Line]]:
    """Settle every bet in settlement order against the bank; the lines recorded and settled."""
    hands = deal.hands
    wins = {s: compare(hands[s], hands[banker]).decision for s in table.players}
    plays = [
        Play(bet.id, seat, bet.amount, wins[seat])
        for seat in settlement_seats(deal.first, banker=banker, seats=deal.seats)
        for bet in bets
        if bet.seat == seat
    ]
    lines = settle_plays(plays, sum((x.capital for x in table.layers), ZERO))
    settled: list[dict[str, Any]] = []
    for line in lines:
        play = line.play
        if play.wins:
            fields = {
                "result": "win",
                "returned": str(play.amount),
                "won": str(line.paid),
                "commission": str(commission_on(line.paid)),
            }
        else:
            fields = {"result": "lose", "returned": str(line.returned), "won": "0", "commission": "0"}
        settled.append(b.add("bet_settled", bet=play.bet, **fields))
    return settled, lines


def _settle_layers(
    b: RoundBuilder, layers: list[Layer], lines: list[Line]
) -> tuple[list[Decimal], list[Decimal], list[dict[str, Any]]]:
    """Split the bank's result over its layers: shares, commissions and the lines recorded."""
    result = sum((x.collected - x.paid for x in lines), ZERO)
    collections = sum((x.collected for x in lines), ZERO)
    shares = split_result(result, layers)
    commissions = layer_commissions(shares, layers, collections)
    layer_lines = [
        b.add("bank_settled", party=x.party, result=str(s), commission=str(c))
        for x, s, c in zip(layers, shares, commissions, strict=True)
    ]
    return shares, commissions, layer_lines


def _inject(
    b: RoundBuilder,
    rng: random.Random,
    inject: str | None,
    settled: list[dict[str, Any]],
    layer_lines: list[dict[str, Any]],
    layers: list[Layer],
    lines: list[Any],
    victim: _Bet | None,
    overstay: bool,
    reduced: bool,
) -> list[Injected]:
    if inject is None:
        return []
    if inject in EXTRA_KINDS:
        happened = {
            "misdeal": True,
            "bank_overstay": overstay,
            "capital_reduced": reduced,
            "cobanker_bet": victim is not None,
        }[inject]
        bet = victim.id if inject == "cobanker_bet" and victim is not None else None
        return [Injected(EXTRA_KINDS[inject], b.table, b.round, bet)] if happened else []
    if inject == "late_bet":
        return [b.injected(inject, victim.id if victim else None)]
    if inject == "missing_settlement":
        line = rng.choice(settled)
        b.lines.remove(line)
        for n, ln in enumerate(b.lines, start=1):
            ln["seq"] = n
        return [b.injected(inject, line["bet"])]
    if inject == "wrong_commission":
        if rng.random() < 0.5:
            layer = rng.choice(layer_lines)
            layer["commission"] = str(Decimal(layer["commission"]) + 1)
            return [b.injected(inject, None)]
        line = rng.choice(settled)
        line["commission"] = str(Decimal(line["commission"]) + 1)
        return [b.injected(inject, line["bet"])]
    # wrong_payout: a bet paid one dollar short (the bank never passes its cap that way), or
    # else a bank layer's share moved one dollar towards zero (never past its capital).
    result = sum((x.collected - x.paid for x in lines), ZERO)
    room = result + 1 <= sum((x.capital for x in layers), ZERO)
    shortable = [
        (ln, x) for ln, x in zip(settled, lines, strict=True) if ln["result"] == "win" and x.paid > 0 and room
    ]
    if shortable and rng.random() < 0.6:
        line, _ = rng.choice(shortable)
        line["won"] = str(Decimal(line["won"]) - 1)
        return [b.injected(inject, line["bet"])]
    i = rng.randrange(len(layer_lines))
    share = Decimal(layer_lines[i]["result"])
    layer_lines[i]["result"] = str(share - 1 if share > 0 else share + 1)
    return [b.injected(inject, None)]
