"""Super Pan 9: what the rules say about one recorded round (RULES §1.3–§1.8).

:func:`analyse` folds a :class:`~ledger.domain.round.Round` into a :class:`RoundAnalysis`: the
:class:`~ledger.games.base.Derivation` (steps, each bet's due settlement, the game's findings,
each bank layer's commission) plus the bank facts the cross-round rules need
(``session.py``). :func:`derive` is its derivation alone, for callers that take one round alone.

Choices, each with its rule:

- **The bank.** The seat of the last ``bank_taken`` holds the bank with its ``capital``; player
  co-bankers settle in the order of their ``bank_joined`` lines, the casino last (art. 5(5)).
  No ``bank_taken``, a second one, capital below ``sp9.min_bank`` (S11), capital posted or
  joined after the first throw (art. 5(3)), a co-banker who is the banker or joins twice:
  ``bank_rule_broken``.
- **Dice.** The last valid ``dice_thrown`` counts; an invalid one (cocked, out of the cup) is
  thrown again and the bets stand (art. 2(4)). A declared adjustment counts only if declared
  before the first throw (art. 2(3)); the last such declaration counts.
- **Deal.** The hands in play are the banker's seat and every seat dealt a card (FEED §6). Two
  consecutive cards per seat, counter-clockwise from the seat the dice choose; anything else —
  order, a duplicate card, a seat without exactly two cards, the banker not dealt, more hands
  than ``sp9.max_hands``, a bet on a seat that got no cards, more than one deck — is
  ``invalid_deal``. The round is still settled from the cards as dealt (FEED §10).
- **Bets.** A bet on the banker's seat is ``invalid_bet`` and void (S15). A bet placed by a
  co-banker or by the banker (``bet_placed.seat``) is ``invalid_bet`` (art. 5(5)) and is judged
  as placed, so a table that settled it by its own arithmetic gets that one finding.
- **Money.** Bets are settled in order against the bank's capacity (``bank.py``); each layer's
  share and commission are derived into ``Derivation.bank``. Verify compares them with the
  table's ``bank_settled`` lines (``compare.py``: ``settlement_mismatch``
  / ``commission_mismatch`` with ``bet: null`` and the ``party``; a missing layer line is
  ``missing_settlement``; a bank whose *recorded* bets won or lost more than its capacity, or a
  layer whose recorded share exceeds its capital, is ``bank_capital_exceeded``, art. 5(3)).
- **Voided round.** Every bet is void, stake returned (FEED §2); the bank moves no money.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ledger.domain.equipment import Card
from ledger.domain.findings import Finding
from ledger.domain.money import ZERO
from ledger.domain.money import text as amount_text
from ledger.domain.round import Round
from ledger.feed.envelope import BetPlaced, FeedEvent
from ledger.games.base import BankDue, Commission, Derivation, LayerDue, Settlement, Step
from ledger.games.super_pan9.bank import (
    Layer,
    Line,
    Play,
    commission_on,
    layer_commissions,
    settle_plays,
    split_result,
)
from ledger.games.super_pan9.feed import (
    BankExtended,
    BankJoined,
    BankRefused,
    BankSettled,
    BankTaken,
    DiceAdjustmentDeclared,
    SuperPan9BetPlaced,
    SuperPan9CardDealt,
    SuperPan9DiceThrown,
    party_seat,
)
from ledger.games.super_pan9.rules import (
    SeatVerdict,
    compare,
    dealing_order,
    describe,
    first_seat,
    settlement_seats,
)
from ledger.games.super_pan9.tables import (
    BANK_COMMISSION_RULE,
    BANKER_SEAT_BET_RULE,
    CAP_RULE,
    CAPITAL_BEFORE_DICE_RULE,
    COBANKER_BET_RULE,
    COMMISSION_RULE,
    DEAL_RULE,
    DECK_RULE,
    DICE_RULE,
    MIN_BANK_RULE,
    ORDER_RULE,
    PAYOUT_RULE,
    RETHROW_RULE,
    RUN_RULE,
    SPLIT_RULE,
)

VOID_ROUND_RULE = "FEED §2 (round_voided)"
BANK_RULE = "SP9 art. 5(1), 5(3); FEED §6 (bank_taken)"


@dataclass
class BankFacts:
    """What one round says about the bank, for the rules that span rounds (``session.py``)."""

    banker: int | None = None
    capital: Decimal = ZERO
    """The banker's own capital (``bank_taken``)."""
    layers: list[Layer] = field(default_factory=list)
    shares: list[Decimal] = field(default_factory=list)
    """Each layer's derived share of the bank's result (empty when not settled)."""
    commissions: list[Decimal] = field(default_factory=list)
    result: Decimal | None = None
    """The derived bank result ``W`` (``None`` when the round could not be settled)."""
    refused: list[int] = field(default_factory=list)
    extension: tuple[int, ...] | None = None
    """The consenting seats of the round's ``bank_extended``, if any."""
    others: list[int] = field(default_factory=list)
    """The other places seated this round: the dealt player seats and the co-banking seats."""
    bettors: list[int] = field(default_factory=list)
    """Seats that placed a bet (``bet_placed.seat``, else the seat bet on)."""
    deck: str | None = None

    @property
    def capacity(self) -> Decimal:
        """``K``: the banker's capital plus every co-banker's (art. 5(3), 5(5))."""
        return sum((x.capital for x in self.layers), ZERO)

    @property
    def banker_net(self) -> Decimal | None:
        """The banker layer's share less its commission: what it leaves on the table."""
        if not self.shares:
            return None
        return self.shares[0] - self.commissions[0]


@dataclass
class RoundAnalysis:
    """A round's derivation and its bank facts."""

    derivation: Derivation
    bank: BankFacts


def derive(rnd: Round) -> Derivation:
    """The steps, each bet's due settlement and the round's own findings (no earlier rounds)."""
    return analyse(rnd).derivation


def analyse(rnd: Round) -> RoundAnalysis:
    """Derive one round: bank, dice, deal, hands, capped settlement, layers (module doc)."""
    return _Analyser(rnd).run()


class _Analyser:
    """One pass over one round; appends steps and findings as it goes."""

    def __init__(self, rnd: Round) -> None:
        self.rnd = rnd
        self.opts = rnd.rules.sp9
        self.out = Derivation()
        self.bank = BankFacts()
        self.first_throw = next((e.seq for e in rnd.of_type(SuperPan9DiceThrown)), None)
        self.shuffles: list[FeedEvent] = []
        """The round's ``deck_shuffled`` events (read once by :meth:`run`, again by the deal check)."""

    def find(
        self,
        code: str,
        rule: str,
        message: str,
        *,
        bet: str | None = None,
        seq: int | None = None,
        **kw: object,
    ) -> None:
        self.out.findings.append(
            Finding(code, self.rnd.table, self.rnd.round, message, rule=rule, bet=bet, seq=seq, **kw)  # type: ignore[arg-type]
        )

    def step(self, text: str, rule: str | None = None) -> None:
        self.out.steps.append(Step(text, rule))

    def step_later(self, rule: str | None, make: Callable[..., str], *args: Any) -> None:
        """A step written when ``ledger replay`` or a page reads it (:meth:`Step.later`)."""
        self.out.steps.append(Step.later(rule, make, *args))

    # -- the run ---------------------------------------------------------------------------

    def run(self) -> RoundAnalysis:
        rnd = self.rnd
        self._bank()
        self._bettors()
        deck = self.shuffles = [e for e in rnd.events if e.type == "deck_shuffled"]
        self.bank.deck = getattr(deck[-1], "deck", None) if deck else None
        if rnd.is_voided:
            self.step(
                "round voided: every bet void, stake returned; the bank moves no money", VOID_ROUND_RULE
            )
            for bet in rnd.bets.values():
                self.out.expected[bet.bet] = Settlement.void(
                    bet.amount, VOID_ROUND_RULE, "the round was voided: stake returned"
                )
            return RoundAnalysis(self.out, self.bank)
        if self.bank.banker is None:
            return RoundAnalysis(self.out, self.bank)
        hands = self._deal()
        if hands is None:
            return RoundAnalysis(self.out, self.bank)
        first, dealt = hands
        self._settle(first, dealt)
        return RoundAnalysis(self.out, self.bank)

    # -- the bank --------------------------------------------------------------------------

    def _after_throw(self, seq: int) -> bool:
        return self.first_throw is not None and seq > self.first_throw

    def _bank(self) -> None:
        rnd = self.rnd
        taken = list(rnd.of_type(BankTaken))
        self.bank.refused = [e.seat for e in rnd.of_type(BankRefused)]
        for refusal in rnd.of_type(BankRefused):
            self.step(f"seat {refusal.seat} refuses the bank: it passes counter-clockwise", "SP9 art. 5(2)")
        extended = list(rnd.of_type(BankExtended))
        if extended:
            self.bank.extension = extended[-1].consents
        if not taken:
            if rnd.is_closed:
                self.find(
                    "bank_rule_broken",
                    BANK_RULE,
                    "no bank_taken: no seat holds the bank, the round cannot be settled",
                )
            return
        if len(taken) > 1:
            self.find(
                "bank_rule_broken",
                BANK_RULE,
                f"the bank is taken {len(taken)} times in one round (seq "
                f"{', '.join(str(t.seq) for t in taken)}); the last counts",
                seq=taken[1].seq,
            )
        held = taken[-1]
        self.bank.banker, self.bank.capital = held.seat, held.capital
        if held.seat in self.bank.refused:
            self.find(
                "bank_rule_broken",
                "SP9 art. 5(2)",
                f"seat {held.seat} refused the bank and then took it",
                seq=held.seq,
            )
        if held.capital < self.opts.min_bank:
            self.find(
                "bank_rule_broken",
                MIN_BANK_RULE,
                f"the bank's capital {amount_text(held.capital)} is below the table's minimum bank "
                f"{amount_text(self.opts.min_bank)}",
                seq=held.seq,
            )
        if self._after_throw(held.seq):
            self.find(
                "bank_rule_broken",
                CAPITAL_BEFORE_DICE_RULE,
                f"the bank's capital was posted at seq {held.seq}, after the dice were "
                f"thrown at seq {self.first_throw}",
                seq=held.seq,
            )
        self.step_later("SP9 art. 5(1), 5(3)", _holds_text, held.seat, held.capital)
        players: list[Layer] = []
        casino: Layer | None = None
        seen: set[str] = set()
        for joined in rnd.of_type(BankJoined):
            problem = None
            if joined.party in seen:
                problem = f"{joined.party} joins the bank a second time; the first counts"
            elif party_seat(joined.party) == held.seat:
                problem = f"{joined.party} is the banker's own seat: it cannot co-bank itself"
            elif self._after_throw(joined.seq):
                problem = (
                    f"{joined.party} joins the bank at seq {joined.seq}, after the dice "
                    f"were thrown at seq {self.first_throw}"
                )
            if problem is not None:
                self.find("bank_rule_broken", "SP9 art. 5(3), 5(5)", problem, seq=joined.seq)
                if joined.party in seen or party_seat(joined.party) == held.seat:
                    continue
            seen.add(joined.party)
            layer = Layer(joined.party, joined.capital)
            if joined.party == "casino":
                casino = layer
            else:
                players.append(layer)
            self.step_later(SPLIT_RULE, _cobanks_text, joined.party, joined.capital)
        self.bank.layers = [Layer("banker", held.capital), *players, *([casino] if casino else [])]
        if len(self.bank.layers) > 1:
            self.step_later("SP9 art. 5(3), 5(5)", _capacity_text, tuple(self.bank.layers))

    def _bettors(self) -> None:
        seats: set[int] = set()
        for bet in self.rnd.bets.values():
            own = bet.seat if isinstance(bet.seat, int) else None
            seats.add(own if own is not None else _target(bet))
        self.bank.bettors = sorted(seats)

    # -- dice and deal ---------------------------------------------------------------------

    def _total(self) -> tuple[int, int] | None:
        """``(T, k)`` of the throw that counts, or ``None`` when no valid throw was recorded."""
        rnd = self.rnd
        throws = list(rnd.of_type(SuperPan9DiceThrown))
        for throw in throws:
            if not throw.valid:
                self.step(
                    f"dice {'-'.join(map(str, throw.dice))} at seq {throw.seq} not valid "
                    "(cocked or out of the cup): the banker throws again, bets stand",
                    RETHROW_RULE,
                )
        counted = throws[-1] if throws and throws[-1].valid else None
        k = 0
        for adj in rnd.of_type(DiceAdjustmentDeclared):
            if self.first_throw is not None and adj.seq > self.first_throw:
                self.step(
                    f"adjustment {adj.points:+d} declared at seq {adj.seq}, after the throw: not counted",
                    "SP9 art. 2(3)",
                )
            else:
                k = adj.points
        if counted is None:
            if rnd.is_closed:
                self.out.findings.append(
                    Finding(
                        "outcome_missing",
                        rnd.table,
                        rnd.round,
                        "the round was closed without a valid dice_thrown: the dealing order and "
                        "the settlement order cannot be derived",
                        rule=DICE_RULE,
                    )
                )
            return None
        total = sum(counted.dice) + k
        self.step_later(DICE_RULE, _dice_text, counted.dice, k, total)
        return total, k

    def _deal(self) -> tuple[int, dict[int, list[Card]]] | None:
        rnd = self.rnd
        banker = self.bank.banker
        assert banker is not None
        cards = list(rnd.of_type(SuperPan9CardDealt))
        dealt: dict[int, list[Card]] = {}
        for c in cards:
            dealt.setdefault(c.to, []).append(c.card)
        seats = sorted(set(dealt) | {banker})
        self.bank.others = sorted(
            (set(dealt) - {banker}) | {s for x in self.bank.layers if (s := party_seat(x.party)) is not None}
        )
        counted = self._total()
        if counted is None:
            return None
        first = first_seat(counted[0], banker=banker, seats=seats)
        self.step_later(DICE_RULE, _first_text, len(seats), banker, counted[0], first)
        if not cards:
            if rnd.is_closed:
                self.out.findings.append(
                    Finding(
                        "outcome_missing",
                        rnd.table,
                        rnd.round,
                        "the round was closed without any card_dealt: no hand can be judged",
                        rule=DEAL_RULE,
                    )
                )
            return None
        self._check_deal(cards, dealt, seats, first)
        return first, dealt

    def _check_deal(
        self, cards: list[SuperPan9CardDealt], dealt: dict[int, list[Card]], seats: list[int], first: int
    ) -> None:
        banker = self.bank.banker
        assert banker is not None
        problems: list[tuple[str, str]] = []  # (rule, what is wrong)
        decks = self.shuffles
        if any(getattr(d, "decks", 1) != 1 for d in decks):
            problems.append(
                (
                    DECK_RULE,
                    "SP9 deals from one 52-card deck per round (art. 1(1)), "
                    f"the round shuffled {max(getattr(d, 'decks', 1) for d in decks)}",
                )
            )
        if len(seats) > self.opts.max_hands:
            problems.append(
                (
                    DECK_RULE,
                    f"{len(seats)} hands in play, the table allows {self.opts.max_hands} (RULES §8.1 S14)",
                )
            )
        faces = [c.card for c in cards]
        dupes = (
            [str(c) for c, n in Counter(faces).items() if n > 1] if len(set(faces)) != len(faces) else []
        )  # a set's size tells whether any card came twice; the counts only when one did
        if dupes:
            problems.append(
                (
                    DECK_RULE,
                    f"card{'s' if len(dupes) > 1 else ''} {', '.join(dupes)} dealt twice from one deck",
                )
            )
        if banker not in dealt:
            problems.append((DECK_RULE, f"the banker's seat {banker} was dealt no cards"))
        wrong = {s: len(h) for s, h in dealt.items() if len(h) != 2}
        if wrong:
            problems.append(
                (
                    DECK_RULE,
                    "a hand has two cards; "
                    + ", ".join(f"seat {s} got {n}" for s, n in sorted(wrong.items())),
                )
            )
        empty = sorted({_target(b) for b in self.rnd.bets.values()} - set(dealt) - {banker})
        if empty:
            problems.append(
                (
                    DECK_RULE,
                    "bets stand on seat"
                    + ("s " if len(empty) > 1 else " ")
                    + ", ".join(map(str, empty))
                    + " but no cards were dealt there",
                )
            )
        expected = dealing_order(first, banker=banker, seats=seats)
        actual = [c.to for c in cards]
        if not problems and actual != expected:
            at = next(
                (i for i, (a, e) in enumerate(zip(actual, expected, strict=False)) if a != e),
                min(len(actual), len(expected)),
            )
            problems.append(
                (
                    DEAL_RULE,
                    f"the dealing order should be {_seq(expected)} (two consecutive "
                    f"cards per seat counter-clockwise from seat {first}), the table "
                    f"dealt {_seq(actual)}; card {at + 1} differs",
                )
            )
        for rule, problem in problems:
            self.find("invalid_deal", rule, problem)
        if not problems:
            self.step_later(DEAL_RULE, _dealt_text, actual)

    # -- hands and money -------------------------------------------------------------------

    def _settle(self, first: int, dealt: dict[int, list[Card]]) -> None:
        rnd, bank = self.rnd, self.bank
        banker = bank.banker
        assert banker is not None
        hand_ok = {s: h for s, h in dealt.items() if len(h) == 2}
        banker_hand = hand_ok.get(banker)
        if banker_hand is None:
            return
        self.step_later("SP9 art. 6", _banker_text, banker, banker_hand)
        cobankers = {s for x in bank.layers if (s := party_seat(x.party)) is not None}
        plays: list[Play] = []
        order = settlement_seats(first, banker=banker, seats=set(dealt) | {banker})
        verdicts: dict[int, SeatVerdict] = {}
        steps = self.out.steps
        tiebreak = self.opts.tiebreak
        for seat in order:
            hand = hand_ok.get(seat)
            if hand is None:
                continue
            verdict = compare(hand, banker_hand, tiebreak)
            verdicts[seat] = verdict
            steps.append(Step.later(verdict.rule, _seat_text, seat, hand, verdict))
        standing: dict[int, list[BetPlaced]] = {}  # the bets on each seat, in the order of rnd.bets
        for bet in rnd.bets.values():
            target = _target(bet)
            on_seat = standing.get(target)
            if on_seat is None:
                standing[target] = [bet]
            else:
                on_seat.append(bet)
            own = bet.seat if isinstance(bet.seat, int) else None
            if target == banker:
                self.find(
                    "invalid_bet",
                    BANKER_SEAT_BET_RULE,
                    f"bet {bet.bet} stands on the banker's seat {banker}: only co-banking "
                    "sides with the bank; the bet is void",
                    bet=bet.bet,
                    seq=bet.seq,
                )
                self.out.expected[bet.bet] = Settlement.void(
                    bet.amount, BANKER_SEAT_BET_RULE, "a bet on the banker's seat is void"
                )
                continue
            if own is not None and (own in cobankers or own == banker):
                who = "the banker" if own == banker else f"co-banker seat:{own}"
                self.find(
                    "invalid_bet",
                    COBANKER_BET_RULE,
                    f"bet {bet.bet} is placed by {who}, who may not bet on a player seat this round",
                    bet=bet.bet,
                    seq=bet.seq,
                )
        for seat in order:
            if seat not in verdicts:
                continue
            for bet in standing.get(seat, ()):
                plays.append(Play(bet.bet, seat, rnd.stake(bet.bet), verdicts[seat].decision))
        capacity = bank.capacity
        lines = settle_plays(plays, capacity, self.opts.cap_mode, rnd.rules.rounding.increment)
        self.step_later(ORDER_RULE, _order_text, order, capacity, self.opts.cap_mode)
        for line in lines:
            self._bet(line, verdicts[line.play.seat].rule)
        result = sum((x.collected - x.paid for x in lines), ZERO)
        collections = sum((x.collected for x in lines), ZERO)
        self._layers(result, collections)

    def _bet(self, line: Line, hand_rule: str) -> None:
        play = line.play
        rounding = self.rnd.rules.rounding
        rule = CAP_RULE if line.capped else (PAYOUT_RULE if play.wins else hand_rule)
        if play.wins:
            commission = commission_on(line.paid, mode=rounding.mode, increment=rounding.increment)
            due = Settlement.later(
                "win",
                play.amount,
                line.paid,
                commission,
                f"{rule}; {COMMISSION_RULE}",
                _win_reason,
                line,
                commission,
            )
        else:
            due = Settlement.later("lose", line.returned, ZERO, ZERO, rule, _lose_reason, line)
        out = self.out
        out.expected[play.bet] = due
        out.steps.append(Step.later(due.rule, _bet_text, line, due.result))

    def _layers(self, result: Decimal, collections: Decimal) -> None:
        bank, opts = self.bank, self.opts
        rounding = self.rnd.rules.rounding
        shares = split_result(result, bank.layers, opts.bank_split, rounding.increment)
        commissions = layer_commissions(
            shares,
            bank.layers,
            collections,
            opts.bank_commission,
            rounding=rounding.mode,
            increment=rounding.increment,
        )
        bank.result, bank.shares, bank.commissions = result, shares, commissions
        self.step_later(SPLIT_RULE, _result_text, result, opts.bank_split)
        recorded: dict[str, BankSettled] = {}
        for line in self.rnd.of_type(BankSettled):
            recorded.setdefault(line.party, line)
        for layer, share, commission in zip(bank.layers, shares, commissions, strict=True):
            self.step_later(BANK_COMMISSION_RULE, _layer_text, layer, share, commission)
            rec = recorded.get(layer.party)
            self.out.commissions.append(
                Commission(layer.party, commission, rec.commission if rec else None, BANK_COMMISSION_RULE)
            )
        self.out.bank = BankDue(
            result,
            bank.capacity,
            tuple(
                LayerDue(layer.party, layer.capital, share, commission)
                for layer, share, commission in zip(bank.layers, shares, commissions, strict=True)
            ),
        )


def _holds_text(seat: int, capital: Decimal) -> str:
    return f"seat {seat} holds the bank with {amount_text(capital)}"


def _cobanks_text(party: str, capital: Decimal) -> str:
    return f"{party} co-banks with {amount_text(capital)}" + (" (settled last)" if party == "casino" else "")


def _capacity_text(layers: tuple[Layer, ...]) -> str:
    capacity = sum((x.capital for x in layers), ZERO)  # BankFacts.capacity of these layers
    return (
        f"bank capacity K = {amount_text(capacity)} ("
        + " + ".join(f"{x.party} {amount_text(x.capital)}" for x in layers)
        + ")"
    )


def _banker_text(banker: int, hand: list[Card]) -> str:
    return f"banker (seat {banker}): {describe(hand)}"


def _seat_text(seat: int, hand: list[Card], verdict: SeatVerdict) -> str:
    return f"seat {seat}: {describe(hand)}: {'wins' if verdict.decision else 'loses'} ({verdict.reason})"


def _order_text(order: list[int], capacity: Decimal, cap_mode: str) -> str:
    return (
        f"settlement order: seats {', '.join(map(str, order))} counter-clockwise "
        f"from the first-dealt player seat, bets in placement order; the bank's "
        f"result W starts at 0 and stays within ±{amount_text(capacity)} "
        f"(cap mode {cap_mode})"
    )


def _win_reason(line: Line, commission: Decimal) -> str:
    play = line.play
    return (
        f"seat {play.seat} beats the banker: stake {amount_text(play.amount)} returned, paid "
        f"{amount_text(line.paid)}"
        + (
            f" of {amount_text(play.amount)} (the bank's capital is exhausted)"
            if line.capped
            else " (1 to 1)"
        )
        + f", commission 5% = {amount_text(commission)}"
    )


def _lose_reason(line: Line) -> str:
    return f"seat {line.play.seat} loses to the banker: {amount_text(line.collected)} collected" + (
        f", {amount_text(line.returned)} returned (the bank's win is capped at its capital)"
        if line.capped
        else ""
    )


def _bet_text(line: Line, result: str) -> str:
    play = line.play
    return (
        f"{play.bet} on seat {play.seat} ({amount_text(play.amount)}): {result}, "
        + (f"paid {amount_text(line.paid)}" if play.wins else f"collected {amount_text(line.collected)}")
        + (f", returned {amount_text(line.returned)}" if not play.wins and line.returned else "")
        + f"; W = {amount_text(line.balance)}"
    )


def _result_text(result: Decimal, split: str) -> str:
    return f"bank result W = {amount_text(result)}, split {split} between the layers"


def _layer_text(layer: Layer, share: Decimal, commission: Decimal) -> str:
    return (
        f"{layer.party} (capital {amount_text(layer.capital)}): share {amount_text(share)}, "
        f"commission {amount_text(commission)}"
    )


def _target(bet: BetPlaced) -> int:
    """The seat a bet stands on (art. 2(6): the seat physically used)."""
    if not isinstance(bet, SuperPan9BetPlaced):
        raise TypeError(f"bet {bet.bet} is not an SP9 bet: {type(bet).__name__}")
    return bet.spot.seat


def _seq(seats: list[int]) -> str:
    return "-".join(map(str, seats))


def _dice_text(dice: Sequence[int], k: int, total: int) -> str:
    return f"dice {'-'.join(map(str, dice))}" + (f" with adjustment {k:+d}" if k else "") + f": T = {total}"


def _dealt_text(actual: list[int]) -> str:
    return f"dealt {_seq(actual)}: two consecutive cards per seat, counter-clockwise"


def _first_text(seats: int, banker: int, total: int, first: int) -> str:
    return (
        f"{seats} hands in play; counting counter-clockwise from the banker "
        f"(seat {banker}) as 1, position (({total} - 1) mod {seats}) + 1 is "
        f"seat {first}: it is dealt first"
    )


__all__ = ["RUN_RULE", "BankFacts", "RoundAnalysis", "analyse", "derive"]
