"""Stud Poker replay: fold one recorded round into what the rules say (RULES §6.4–§6.7).

:func:`analyse` reads a round's facts and returns a :class:`StudRound`: the
:class:`~ledger.games.base.Derivation` (steps, settlements due, findings) plus what the linked
jackpot needs — the round's settled jackpot bets and the hands the jackpot pays. The award
*amounts* depend on the pool, which spans tables and rounds: the game session
(``session.py``) settles them with ``pool.py``. :func:`derive` is the round taken alone, every
bet judged but the winning jackpot bets.

Choices, each with its rule:

- **Bets.** One hand per place (art. 6(1)). An ante is required (art. 6(2)); a jackpot bet needs
  an ante, the rulebook's ``jackpot.bet_amount`` (P10) and a configured pool, else it is
  ``invalid_bet`` and due ``void``; a jackpot bet after the first card is ``bet_after_close``
  (generic) and likewise refused, ``void``. A raise must be exactly 2 × ante (art. 6(5)):
  another amount is ``invalid_bet`` but settled as the table played it, so the wrong amount is
  one finding. A raise with no ante, by a folded hand, placed before the deal or a second raise
  is ``invalid_bet`` and ``void``.
- **Deal** (art. 7). Every hand with an ante and the dealer get exactly five cards; shoe
  (``method: hand``) one at a time, dealer last in each pass, the dealer's fifth card face up;
  shuffler (``machine``) five at a time in seat order, dealer last, one dealer card shown. A
  wrong count, order or face, or a duplicated card, is ``invalid_deal``; a duplicated card's
  round is still settled from the cards as dealt (FEED §10), a wrong count cannot be.
- **Irregularities** (art. 11). ``round_voided`` (a misdeal, two exposed cards, a failed
  shuffler): antes and raises ``void``, jackpot bets ``carry``. One ``card_exposed``: the round
  stands. Two or more in a closed round: ``invalid_deal`` (it should have been voided), bets not
  judged. Cards to a place with no ante: that hand is void, not an error (art. 11(3)).
- **Settlement** (art. 9). A hand that neither raised nor folded is treated as folded. A fold
  loses the ante and the jackpot bet (P9). Against a raise: the dealer's A-K-or-better decides
  (P1), then the hands are compared (art. 8, ties impossible), the raise prize is capped (P2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from ledger.domain.findings import Finding
from ledger.domain.money import text as amount_text
from ledger.domain.round import Round
from ledger.feed.cards import DeckShuffled
from ledger.feed.envelope import BetPlaced, FeedEvent, Irregularity, RoundVoided
from ledger.games.base import Derivation, Settlement, Step
from ledger.games.stud_poker.feed import (
    AnteSpot,
    HandFolded,
    JackpotPaid,
    JackpotSpot,
    RaiseSpot,
    StudCardDealt,
    StudCardExposed,
)
from ledger.games.stud_poker.hands import Decision, HandValue, decide, evaluate
from ledger.games.stud_poker.pool import Hit
from ledger.games.stud_poker.rules import (
    FOLD_RULE,
    cap_prizes,
    dealer_qualifies,
    raise_prize,
    settle_ante,
    settle_raise,
)
from ledger.games.stud_poker.tables import JACKPOT_HANDS, Category

DEAL_RULE = "STUD art. 7"
VOID_RULE = "STUD art. 11(1), (4); FEED §2 (round_voided)"
EXPOSED_RULE = "STUD art. 11(2)"
NO_BET_PLACE_RULE = "STUD art. 11(3)"
ANTE_RULE = "STUD art. 6(1)–(2)"
JACKPOT_BET_RULE = "STUD art. 6(3), art. 10(1); RULES §8.6 P10"
RAISE_RULE = "STUD art. 6(5)–(7)"
JACKPOT_FOLD_RULE = "STUD art. 10(1); RULES §8.6 P9"
JACKPOT_LOSE_RULE = "STUD art. 10(2)"
DUPLICATE_RULE = "STUD art. 1 (one deck); FEED §10"


@dataclass
class Place:
    """One player place's bets, decisions and cards."""

    seat: int
    ante: BetPlaced | None = None
    jackpot: BetPlaced | None = None
    raised: BetPlaced | None = None
    folded: bool = False
    cards: list[str] = field(default_factory=list)
    value: HandValue | None = None


@dataclass
class StudRound:
    """A STUD round analysed: the derivation and the jackpot's inputs for the pool."""

    derivation: Derivation
    stakes: list[tuple[str, Decimal]] = field(default_factory=list)
    """Jackpot bets settled in this round (won or lost): they contribute (P4)."""
    hits: list[Hit] = field(default_factory=list)
    """Settled jackpot bets whose hand the jackpot pays, in seating order (art. 10(4))."""
    derived: bool = True
    """Whether the jackpot hands could be derived (else awards are not checked)."""
    seats: dict[str, int] = field(default_factory=dict)
    """Jackpot bet id → seat, for the session's messages."""


def derive(rnd: Round) -> Derivation:
    """The round taken alone: everything but the pool-dependent jackpot award amounts."""
    return analyse(rnd).derivation


def analyse(rnd: Round) -> StudRound:
    """What the rules say about one recorded STUD round (see the module docstring)."""
    out = StudRound(Derivation())
    d = out.derivation
    places, refused = _places(rnd, d)
    for bet, issue in refused.items():
        d.expected[bet] = Settlement.void(rnd.bets[bet].amount, issue[0], f"refused: {issue[1]}")
    closed_at = _first_card_seq(rnd)
    for place in places.values():
        jp = place.jackpot
        if jp is not None and closed_at is not None and jp.seq > closed_at and (jp.bet not in rnd.carried):
            d.expected[jp.bet] = Settlement.void(
                jp.amount,
                "FEED §10 (betting closes); STUD art. 6(3)",
                "jackpot bet placed after the first card: refused",
            )
            place.jackpot = None
    if rnd.is_voided:
        _voided(rnd, places, out)
        return out
    deal_ok, dealer = _deal(rnd, places, d)
    exposed = list(rnd.of_type(StudCardExposed))
    if len(exposed) == 1:
        d.steps.append(
            Step(f"one card exposed ({exposed[0].card} to {exposed[0].to}): the round stands", EXPOSED_RULE)
        )
    elif len(exposed) > 1 and rnd.is_closed:
        d.findings.append(
            _finding(
                rnd,
                None,
                "STUD art. 11(1)",
                f"{len(exposed)} cards exposed by mistake: the round is void "
                "(antes and raises returned, jackpot bets carried), but it "
                "was closed",
                seq=exposed[1].seq,
            )
        )
        deal_ok = False
    if not deal_ok or dealer is None:
        out.derived = False
        d.steps.append(Step("the hands cannot be judged from this deal: bets not judged", DEAL_RULE))
        return out
    if rnd.is_closed or rnd.first("bet_settled") is not None:
        _settle(rnd, places, dealer, out)
    return out


def _places(rnd: Round, d: Derivation) -> tuple[dict[int, Place], dict[str, tuple[str, str]]]:
    """Index bets by place; report and refuse the bets the rules do not allow."""
    places: dict[int, Place] = {}
    refused: dict[str, tuple[str, str]] = {}

    def refuse(bet: BetPlaced, rule: str, why: str) -> None:
        d.findings.append(_finding_bet(rnd, bet, rule, why))
        refused[bet.bet] = (rule, why)

    first_card = _first_card_seq(rnd)
    bets = sorted(rnd.bets.values(), key=lambda b: b.seq)
    for bet in bets:
        spot = bet.spot
        if isinstance(spot, AnteSpot):
            place = _place(places, spot.seat)
            if place.ante is not None:
                refuse(bet, ANTE_RULE, f"a second ante at place {spot.seat}: one hand per player")
            else:
                place.ante = bet
    for bet in bets:
        spot = bet.spot
        if isinstance(spot, JackpotSpot):
            place = _place(places, spot.seat)
            jp = rnd.rules.jackpot
            if place.ante is None:
                refuse(bet, JACKPOT_BET_RULE, f"jackpot bet at place {spot.seat} without an ante")
            elif jp is None:
                refuse(
                    bet,
                    JACKPOT_BET_RULE,
                    "jackpot bet at a table whose rulebook has no jackpot (rulebook.jackpot)",
                )
            elif bet.amount.compare(jp.bet_amount) != 0:
                refuse(
                    bet,
                    JACKPOT_BET_RULE,
                    f"jackpot bet of {amount_text(bet.amount)}: the table's jackpot bet is "
                    f"{amount_text(jp.bet_amount)}",
                )
            elif place.jackpot is not None:
                refuse(bet, JACKPOT_BET_RULE, f"a second jackpot bet at place {spot.seat}")
            else:
                place.jackpot = bet
        elif isinstance(spot, RaiseSpot):
            place = _place(places, spot.seat)
            if place.ante is None:
                refuse(bet, RAISE_RULE, f"raise at place {spot.seat} without an ante")
            elif place.raised is not None:
                refuse(bet, RAISE_RULE, f"a second raise at place {spot.seat}")
            elif first_card is None or bet.seq < first_card:
                refuse(bet, RAISE_RULE, "a raise is placed after the deal, not before it")
            else:
                place.raised = bet
                due = place.ante.amount * 2
                if bet.amount.compare(due) != 0:
                    d.findings.append(
                        _finding_bet(
                            rnd,
                            bet,
                            RAISE_RULE,
                            f"raise of {amount_text(bet.amount)} on an ante of "
                            f"{amount_text(place.ante.amount)}: the raise is "
                            f"exactly 2 × ante = {amount_text(due)} (settled as played)",
                            expected={"amount": str(due)},
                            recorded={"amount": str(bet.amount)},
                        )
                    )
    for fold in rnd.of_type(HandFolded):
        folder = places.get(fold.seat)
        if folder is None or folder.ante is None:
            continue
        if folder.raised is not None and folder.raised.seq < fold.seq:
            d.steps.append(Step(f"place {fold.seat} folds after raising: the raise stands", RAISE_RULE))
            continue
        folder.folded = True
        if folder.raised is not None:
            refuse(folder.raised, RAISE_RULE, f"raise at place {fold.seat} after it folded")
            folder.raised = None
    return places, refused


def _place(places: dict[int, Place], seat: int) -> Place:
    """The place at ``seat``, added when it is new (built only then, not once per look-up)."""
    place = places.get(seat)
    if place is None:
        place = places[seat] = Place(seat)
    return place


def _first_card_seq(rnd: Round) -> int | None:
    first = rnd.first("card_dealt", "card_burned")
    return None if first is None else first.seq


def _voided(rnd: Round, places: dict[int, Place], out: StudRound) -> None:
    d = out.derivation
    ended: FeedEvent | None = rnd.ended_by
    reason = ended.reason if isinstance(ended, RoundVoided) else "no reason given"
    shuffler = any(isinstance(e, Irregularity) and "shuffler" in e.code for e in rnd.events)
    rule = "STUD art. 11(4)" if shuffler else "STUD art. 11(1)"
    d.steps.append(
        Step(
            f"round voided ({reason}): antes and raises returned, jackpot bets "
            "carried to the table's next round",
            rule,
        )
    )
    for place in places.values():
        for bet in (place.ante, place.raised):
            if bet is not None:
                d.expected[bet.bet] = Settlement.void(bet.amount, rule, "round voided: stake returned")
        if place.jackpot is not None:
            d.expected[place.jackpot.bet] = Settlement.carry(
                rule, "round voided: the jackpot bet carries to the table's next round"
            )


def _deal(rnd: Round, places: dict[int, Place], d: Derivation) -> tuple[bool, HandValue | None]:
    """Check the deal (art. 7) and evaluate every hand; return (deal usable, dealer's hand)."""
    dealt = list(rnd.of_type(StudCardDealt))
    if not dealt:
        if rnd.is_closed:
            d.findings.append(
                Finding(
                    "outcome_missing",
                    rnd.table,
                    rnd.round,
                    "the round was closed without any card dealt",
                    rule=DEAL_RULE,
                )
            )
        return False, None
    ok = True
    texts = [str(c.card) for c in dealt]
    repeated = len(set(texts)) != len(texts)
    if repeated:  # a card dealt twice: the first repeat of each is reported
        seen: set[str] = set()
        twice: set[str] = set()
        for c, text in zip(dealt, texts, strict=True):
            if text not in seen:
                seen.add(text)
            elif text not in twice:
                twice.add(text)
                d.findings.append(
                    _finding(rnd, None, DUPLICATE_RULE, f"card {c.card} dealt twice from one deck", seq=c.seq)
                )
    dealer_cards = [text for c, text in zip(dealt, texts, strict=True) if c.to == "dealer"]
    for c, text in zip(dealt, texts, strict=True):
        if c.to != "dealer":
            _place(places, int(c.to)).cards.append(text)
    seats = sorted(p.seat for p in places.values() if p.cards)
    if len(dealer_cards) != 5 or any(
        len(p.cards) != 5 for p in places.values() if p.ante is not None or p.cards
    ):
        counts = {f"place {p.seat}": len(p.cards) for p in places.values() if p.ante is not None or p.cards}
        counts["dealer"] = len(dealer_cards)
        wrong = {k: n for k, n in counts.items() if n != 5}
        listed = ", ".join(f"{k} {n}" for k, n in wrong.items())
        d.findings.append(
            _finding(rnd, None, DEAL_RULE, f"wrong number of cards (five to each hand): {listed}")
        )
        return False, None
    ok = _check_order(rnd, dealt, seats, d) and ok
    if repeated and (len(set(dealer_cards)) != 5 or any(len(set(places[seat].cards)) != 5 for seat in seats)):
        return False, None  # a hand holding one card twice has no value (the repeat is reported)
    for seat in seats:
        place = places[seat]
        place.value = evaluate(place.cards)
        void_hand = place.ante is None
        d.steps.append(
            Step.later(
                NO_BET_PLACE_RULE if void_hand else "STUD art. 8",
                _hand_text,
                f"place {seat}",
                place.value,
                " — no ante at this place: the hand is void" if void_hand else "",
            )
        )
    dealer = evaluate(dealer_cards)
    d.steps.append(Step.later("STUD art. 8", _hand_text, "dealer", dealer, ""))
    return ok, dealer


def _hand_text(who: str, value: HandValue, note: str) -> str:
    """A hand's step: who holds it, its cards, what it is."""
    return f"{who}: {' '.join(value.cards)} → {value.describe()}{note}"


def _check_order(rnd: Round, dealt: list[StudCardDealt], seats: list[int], d: Derivation) -> bool:
    """The derived dealing order and faces (art. 7); report the first deviation."""
    shuffle = next(rnd.of_type(DeckShuffled), None)
    method = shuffle.method if shuffle is not None else None
    order: list[int | str] = []
    if method == "hand":
        for _ in range(5):
            order += [*seats, "dealer"]
    elif method == "machine":
        for seat in seats:
            order += [seat] * 5
        order += ["dealer"] * 5
    how = {
        "hand": "shoe: one card at a time, dealer last in each pass",
        "machine": "shuffler: five cards at a time, dealer last",
    }.get(method or "", "no deck_shuffled: order not checked")
    for i, (card, want) in enumerate(zip(dealt, order, strict=False)):
        if card.to != want:
            d.findings.append(
                _finding(
                    rnd,
                    None,
                    DEAL_RULE,
                    f"card {i + 1} ({card.card}) went to {card.to}, the derived order gives {want} ({how})",
                    seq=card.seq,
                )
            )
            return True  # the hands are still complete: settle them as dealt
    exposed_dealer = any(e.to == "dealer" for e in rnd.of_type(StudCardExposed))
    dealer_cards = [c for c in dealt if c.to == "dealer"]
    up_players = [c for c in dealt if c.to != "dealer" and c.face_up]
    up_dealer = [c for c in dealer_cards if c.face_up]
    if up_players:
        c = up_players[0]
        d.findings.append(
            _finding(
                rnd,
                None,
                DEAL_RULE,
                f"player card {c.card} to place {c.to} dealt face up: players' cards are dealt face down",
                seq=c.seq,
            )
        )
    elif not exposed_dealer and method == "hand" and (not dealer_cards[4].face_up or len(up_dealer) != 1):
        d.findings.append(
            _finding(
                rnd,
                None,
                DEAL_RULE,
                "the dealer's fifth card is dealt face up and his other cards face down (shoe)",
            )
        )
    elif not exposed_dealer and method == "machine" and len(up_dealer) != 1:
        d.findings.append(
            _finding(
                rnd,
                None,
                DEAL_RULE,
                f"{len(up_dealer)} dealer cards shown: the shuffler deal shows exactly one",
            )
        )
    d.steps.append(Step.later(DEAL_RULE, _deal_text, len(seats), how))
    return True


def _deal_text(hands: int, how: str) -> str:
    return f"deal: {hands} hands and the dealer, {how}"


def _dealer_text(why: str) -> str:
    return f"dealer {why}"


def _settle(rnd: Round, places: dict[int, Place], dealer: HandValue, out: StudRound) -> None:
    d = out.derivation
    qualified, why_q = dealer_qualifies(dealer)
    d.steps.append(Step.later("STUD art. 9(1)–(3); RULES §8.6 P1", _dealer_text, why_q))
    seated = [places[s] for s in sorted(places) if places[s].ante is not None]
    playing = [p for p in seated if p.raised is not None and not p.folded]
    outcomes: dict[int, bool] = {}
    """Whether the player wins, for each place that plays (raised, not folded)."""
    for p in playing:
        assert p.value is not None
        dec = decide(p.value, dealer)
        outcomes[p.seat] = dec.first_wins
        d.steps.append(Step.later(dec.rule, _against_text, p.seat, dec))
    prizes = cap_prizes(
        [(_cat(p), raise_prize(_cat(p), _amount(p.raised), rnd.rules)) for p in playing], rnd.rules
    )
    capped = {p.seat: prize for p, prize in zip(playing, prizes, strict=True)}
    for p in seated:
        ante = p.ante
        assert ante is not None
        if p.seat in outcomes:  # plays (one place per seat)
            assert p.raised is not None
            wins = outcomes[p.seat]
            hand = p.value.describe() if p.value else "?"
            _due(d, ante.bet, settle_ante(ante.amount, qualified=qualified, player_wins=wins, why=hand))
            full = raise_prize(_cat(p), p.raised.amount, rnd.rules)
            _due(
                d,
                p.raised.bet,
                settle_raise(
                    p.raised.amount,
                    capped[p.seat],
                    full,
                    _cat(p),
                    qualified=qualified,
                    player_wins=wins,
                    why=hand,
                ),
            )
        else:
            why = "folded" if p.folded else "neither raised nor folded: treated as a fold"
            _due(d, ante.bet, Settlement.lose(FOLD_RULE, f"place {p.seat} {why}: the ante is collected"))
        jp = p.jackpot
        if jp is None:
            continue
        out.seats[jp.bet] = p.seat
        out.stakes.append((jp.bet, jp.amount))
        if p.seat not in outcomes:
            _due(
                d,
                jp.bet,
                Settlement.lose(JACKPOT_FOLD_RULE, f"place {p.seat} folded: the jackpot bet is forfeited"),
            )
        elif _cat(p) in JACKPOT_HANDS:
            out.hits.append(Hit(jp.bet, p.seat, _cat(p)))
            d.steps.append(
                Step(
                    f"place {p.seat} jackpot bet {jp.bet}: "
                    f"{_cat(p).label.split(' (')[0]} wins a jackpot award",
                    "STUD art. 10(2)",
                )
            )
        else:
            _due(
                d,
                jp.bet,
                Settlement.lose(JACKPOT_LOSE_RULE, f"{_cat(p).label.split(' (')[0]} is not a jackpot hand"),
            )


def _against_text(seat: int, dec: Decision) -> str:
    return f"place {seat} against the dealer: {'player' if dec.first_wins else 'dealer'} higher — {dec.text}"


def _due(d: Derivation, bet: str, due: Settlement) -> None:
    d.expected[bet] = due
    d.steps.append(Step.later(due.rule, _due_text, bet, due))


def _due_text(bet: str, due: Settlement) -> str:
    return (
        f"{bet}: {due.reason} → {due.result}, returned {amount_text(due.returned)}, "
        f"won {amount_text(due.won)}"
    )


def _cat(p: Place) -> Category:
    assert p.value is not None
    return p.value.category


def _amount(bet: BetPlaced | None) -> Decimal:
    assert bet is not None
    return bet.amount


def recorded_awards(rnd: Round) -> list[JackpotPaid]:
    """The round's ``jackpot_paid`` lines, in order."""
    return list(rnd.of_type(JackpotPaid))


def _finding(rnd: Round, bet: str | None, rule: str, message: str, **kw: object) -> Finding:
    return Finding("invalid_deal", rnd.table, rnd.round, message, rule=rule, bet=bet, **kw)  # type: ignore[arg-type]


def _finding_bet(rnd: Round, bet: BetPlaced, rule: str, message: str, **kw: object) -> Finding:
    return Finding("invalid_bet", rnd.table, rnd.round, message, rule=rule, bet=bet.bet, seq=bet.seq, **kw)  # type: ignore[arg-type]
