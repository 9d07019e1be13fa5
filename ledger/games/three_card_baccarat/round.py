"""3-Card Baccarat: what the rules say about one recorded round (RULES §3.3–§3.8).

The game's verify-wide state, each table's shoe across rounds, is ``session.ThreeCardSession``;
:func:`derive` derives one round on its own (only the round's own shoe events count), and
:func:`derive_dealt` one round whose deal the session has read against its table's shoe.

A round's derivation, each step with its article:

1. the shoe and the deal (``deal.py``): any problem is ``invalid_deal``, and the round is still
   settled from the cards as dealt (FEED §10);
2. each hand's level (3CB art. 5 and annex) and the banker's points;
3. each bet, on its **stake in play** (a carried bet's restated amount or its last
   ``bet_increased`` total, ``Round.stake``):

   - a main bet that ties, and odd/even on a three-figure banker, are due ``carry`` (3CB
     art. 7(2), art. 8(1)), so a table that paid or took such a bet gets a
     ``settlement_mismatch``; the carry-over itself (restated next round, never reduced) is
     checked by the generic tracker (``ledger.verify.carry``);
   - a tie bet on a place without a main bet is ``invalid_bet`` and due ``void``, stake
     returned (3CB art. 8(3), RULES §8.3 B5–B6);
   - a main or tie bet on a place that was dealt no cards is ``invalid_deal`` (every place in
     use is dealt, 3CB art. 4(1), B5) and is not judged;
   - a bet whose hand does not have three cards is not judged (its deal is ``invalid_deal``).

Round-level choices:

- **Voided round** (``round_voided``): every bet is due ``void``, stake returned (FEED §2),
  except a bet carried in from an earlier round, due ``carry`` again: a carried bet "is closed
  only by a win or a loss" (RULES §3.7) [I].
- **Cancelled cards** (``cards_cancelled``) under ``tcb.misdeal_bets = stand`` (B4, the
  default): bets stand and settle on the redeal. Under ``return``: every bet is due ``void``
  (carried bets ``carry``, as above) and the redeal settles nothing.
- **No cards** in a closed round: ``outcome_missing``, no bet judged.
- **Raises.** A ``bet_increased`` after betting closed is ``bet_after_close``; a raised stake
  above the spot's table maximum is ``invalid_bet`` (RULES §8 G3: carried bets must fit the
  limits once increased). A lowered stake is the carry tracker's ``invalid_bet``.
"""

from __future__ import annotations

from decimal import Decimal

from ledger.domain.findings import BETTING_CLOSED_RULE, Finding
from ledger.domain.money import text as amount_text
from ledger.domain.round import Round
from ledger.feed.envelope import BetIncreased, BetPlaced
from ledger.games.base import Derivation, Settlement, Step
from ledger.games.three_card_baccarat.deal import (
    BANKER,
    Deal,
    Place,
    read_deal,
)
from ledger.games.three_card_baccarat.feed import HandSpot, TieSpot
from ledger.games.three_card_baccarat.rules import (
    SEATED_SPOTS,
    HandValue,
    Spot,
    describe_spot,
    evaluate,
    settle,
)
from ledger.games.three_card_baccarat.tables import (
    CARRY_RULE,
    MISDEAL_BETS_RULE,
    PLACES_RULE,
    RANKING_RULE,
    TIE_BET_RULE,
)

VOID_ROUND_RULE = "FEED §2 (round_voided); RULES §3.7"
OUTCOME_RULE = "3CB art. 2(2); FEED §5 (card_dealt)"
LIMIT_RULE = "RULES §8 G3"
CLOSERS = frozenset({"betting_closed", "card_burned", "card_dealt"})


def derive(rnd: Round) -> Derivation:
    """What the rules say about ``rnd`` taken alone (see the module docstring)."""
    deal, _ = read_deal(rnd, None)  # a shoe of its own: only the round's shoe events count
    return derive_dealt(rnd, deal)


def derive_dealt(rnd: Round, deal: Deal) -> Derivation:
    """The steps, the due settlements and the findings of a round whose deal has been read."""
    out = Derivation(steps=list(deal.steps))
    out.findings += [
        Finding("invalid_deal", rnd.table, rnd.round, p.message, rule=p.rule, seq=p.seq)
        for p in deal.problems
    ]
    _carried_steps(rnd, out)
    _raises(rnd, out)
    if rnd.is_voided:
        _return_all(rnd, out, VOID_ROUND_RULE, "the round was voided")
        return out
    if deal.cancellations and rnd.rules.tcb.misdeal_bets == "return":
        _return_all(
            rnd,
            out,
            MISDEAL_BETS_RULE,
            "the round's cards were cancelled and the bets are returned (tcb.misdeal_bets = return)",
        )
        return out
    if not deal.cards:
        if rnd.is_closed:
            out.findings.append(
                Finding(
                    "outcome_missing",
                    rnd.table,
                    rnd.round,
                    "the round was closed without a deal",
                    rule=OUTCOME_RULE,
                )
            )
        return out
    values = _hands(rnd, deal, out)
    _undealt_places(rnd, deal, out)
    for bet in rnd.bets.values():
        _settle_bet(rnd, bet, values, out)
    return out


def _hands(rnd: Round, deal: Deal, out: Derivation) -> dict[Place, HandValue]:
    """Value every hand of three cards, banker first; add a step per hand."""
    option = rnd.rules.tcb.three_figures
    values: dict[Place, HandValue] = {}
    hands = deal.hands
    places: list[Place] = [BANKER, *deal.seats]
    for place in places:
        cards = hands.get(place, [])
        name = "banker" if place == BANKER else f"seat {place}"
        if len(cards) != 3:
            out.steps.append(Step(f"{name}: {len(cards)} card(s), not valued", RANKING_RULE))
            continue
        value = values[place] = evaluate(cards, option)
        out.steps.append(Step.later(RANKING_RULE, _hand_text, name, value, place == BANKER))
    return values


def _hand_text(name: str, value: HandValue, banker: bool) -> str:
    extra = ""
    if banker:
        extra = (
            "; odd/even carried, three figures pays"
            if value.three_figures
            else f"; {value.points} points, {'odd' if value.points % 2 else 'even'}"
        )
    return f"{name}: {value.describe()}{extra}"


def _undealt_places(rnd: Round, deal: Deal, out: Derivation) -> None:
    """A place with a main or tie bet must be dealt (3CB art. 4(1), RULES §8.3 B5)."""
    dealt = set(deal.seats)
    flagged: set[int] = set()
    for bet in rnd.bets.values():
        spot = bet.spot
        if isinstance(spot, SEATED_SPOTS) and spot.seat not in dealt and spot.seat not in flagged:
            flagged.add(spot.seat)
            out.findings.append(
                Finding(
                    "invalid_deal",
                    rnd.table,
                    rnd.round,
                    rule=PLACES_RULE,
                    message=f"seat {spot.seat} carries bet {bet.bet} but was dealt no cards: "
                    "every place in use is dealt",
                    extra={"seat": spot.seat},
                )
            )


def _settle_bet(rnd: Round, bet: BetPlaced, values: dict[Place, HandValue], out: Derivation) -> None:
    spot: Spot = bet.spot  # type: ignore[assignment]
    stake = rnd.stake(bet.bet)
    if isinstance(spot, TieSpot) and not _has_main_bet(rnd, spot.seat):
        message = f"tie bet {bet.bet} on seat {spot.seat}, which carries no main bet against the banker"
        out.findings.append(
            Finding("invalid_bet", rnd.table, rnd.round, message, rule=TIE_BET_RULE, bet=bet.bet, seq=bet.seq)
        )
        _expect(out, bet, Settlement.void(stake, TIE_BET_RULE, f"{message}: refused, stake returned"), stake)
        return
    banker = values.get(BANKER)
    place = values.get(spot.seat) if isinstance(spot, SEATED_SPOTS) else None
    if banker is None or (isinstance(spot, SEATED_SPOTS) and place is None):
        out.steps.append(Step.later(OUTCOME_RULE, _not_judged, bet, stake))
        return
    _expect(out, bet, settle(spot, stake, banker, place, rnd.rules), stake)


def _label(bet: BetPlaced, stake: Decimal) -> str:
    """A bet in a step: its id, its spot in words and its stake in play."""
    return f"{bet.bet} {describe_spot(bet.spot)} ({amount_text(stake)})"  # type: ignore[arg-type]


def _not_judged(bet: BetPlaced, stake: Decimal) -> str:
    return f"{_label(bet, stake)}: not judged, its hands were not dealt three cards"


def _expect(out: Derivation, bet: BetPlaced, due: Settlement, stake: Decimal) -> None:
    out.expected[bet.bet] = due
    out.steps.append(Step.later(due.rule, _expect_text, bet, due, stake))


def _expect_text(bet: BetPlaced, due: Settlement, stake: Decimal) -> str:
    money = (
        f"returned {amount_text(due.returned)}, won {amount_text(due.won)}, "
        f"commission {amount_text(due.commission)}"
        if due.result not in ("lose", "carry")
        else "all 0.00"
    )
    return f"{_label(bet, stake)}: {due.reason} → {due.result}, {money}"


def _has_main_bet(rnd: Round, seat: int) -> bool:
    """Any main bet on ``seat``, anyone's, new or carried (3CB art. 8(3), RULES §8.3 B6)."""
    return any(isinstance(b.spot, HandSpot) and b.spot.seat == seat for b in rnd.bets.values())


def _return_all(rnd: Round, out: Derivation, rule: str, why: str) -> None:
    for bet in rnd.bets.values():
        if bet.bet in rnd.carried:
            due = Settlement.carry(
                CARRY_RULE, f"{why}; a carried bet is closed only by a win or a loss: carried again"
            )
        else:
            due = Settlement.void(rnd.stake(bet.bet), rule, f"{why}: stake returned")
        _expect(out, bet, due, rnd.stake(bet.bet))


def _carried_steps(rnd: Round, out: Derivation) -> None:
    for bet_id, carried in rnd.carried.items():
        stake = rnd.stake(bet_id)
        raised = f", raised to {amount_text(stake)}" if stake != carried.amount else ""
        out.steps.append(
            Step(
                f"{bet_id} {describe_spot(carried.spot)} carried from round "  # type: ignore[attr-defined]
                f"{carried.from_round}: stake {amount_text(carried.amount)}{raised}",
                CARRY_RULE,
            )
        )


def _raises(rnd: Round, out: Derivation) -> None:
    """Raises after betting closed, and raised stakes above the table maximum."""
    closed_at = next((e.seq for e in rnd.events if e.type in CLOSERS), None)
    for raised in rnd.of_type(BetIncreased):
        if closed_at is not None and raised.seq > closed_at:
            out.findings.append(
                Finding(
                    "bet_after_close",
                    rnd.table,
                    rnd.round,
                    rule=BETTING_CLOSED_RULE,
                    bet=raised.bet,
                    seq=raised.seq,
                    message=f"bet {raised.bet} raised at seq {raised.seq}, after betting closed "
                    f"at seq {closed_at}",
                )
            )
    for bet_id in rnd.increases:
        bet = rnd.bets.get(bet_id)
        if bet is None:
            continue
        limit = rnd.rules.limits.get(getattr(bet.spot, "kind", ""))
        stake = rnd.stake(bet_id)
        if limit is not None and limit.max is not None and stake > limit.max:
            out.findings.append(
                Finding(
                    "invalid_bet",
                    rnd.table,
                    rnd.round,
                    rule=LIMIT_RULE,
                    bet=bet_id,
                    message=f"carried bet {bet_id} raised to {amount_text(stake)}, above the table maximum "
                    f"{amount_text(limit.max)}",
                )
            )
