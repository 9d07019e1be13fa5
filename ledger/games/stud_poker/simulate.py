"""Stud Poker rounds for ``ledger simulate``: linked tables, realistic players, a shared pool.

One round (FEED §7, RULES §6.4): ``round_opened`` with the linked pool ``PJ-1`` in its rulebook;
the jackpot bets a void round carried (``jackpot_carried``); 2–7 places each placing an ante and,
often, the jackpot bet; ``betting_closed``; ``deck_shuffled`` by hand (shoe) or machine
(shuffler); the deal in the derived order, the dealer's fifth card face up; each player raises
(exactly 2 × ante) with a pair or better, with A-K half the time, a few gamblers always — and
folds otherwise; one correct ``bet_settled`` per bet, a ``jackpot_paid`` per jackpot hand;
``round_closed``. A few rounds are voided (two exposed cards, art. 11(1); a failed shuffler,
art. 11(4)): antes returned, jackpot bets ``carry`` and are restated next round. Now and then
one card is exposed and the round stands (art. 11(2)).

The pool is shared by every table in store order, so a round cannot know its awards: it writes
``jackpot_paid`` and the bet's ``won`` as ``"0"``, and :func:`finish_feed` fills them in, over the
merged feed, with the very pool arithmetic verify uses (``pool.py``).

Forcing a hand (for demos and tests): ``b.game_state[FORCE_KEY][(table, round)]`` lists
``(seat, Category)`` pairs; those places are dealt that category.

Injected errors (:data:`INJECTABLE`), each exactly the finding(s) listed:
``wrong_payout`` (an ante or raise paid wrongly), ``late_bet`` (a jackpot bet after the first
card, refused and returned), ``missing_settlement``, ``wrong_commission``, ``wrong_raise``
(a raise of 3 × ante, ``invalid_bet``), ``wrong_jackpot_bet`` (a jackpot bet of the wrong
amount, refused, ``invalid_bet``) and ``wrong_jackpot`` (a flush is forced and its
``jackpot_paid`` is spoiled by :func:`finish_feed`, ``jackpot_mismatch``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from decimal import Decimal
from typing import Any, Final

from ledger.codec.parse import parse_object
from ledger.domain.round import Round
from ledger.domain.rulebook import complete_rulebook
from ledger.feed.envelope import FeedEvent
from ledger.games.stud_poker.hands import HandValue, card_text, decide, evaluate
from ledger.games.stud_poker.round import analyse
from ledger.games.stud_poker.rules import (
    cap_prizes,
    dealer_qualifies,
    raise_prize,
    settle_ante,
    settle_raise,
)
from ledger.games.stud_poker.session import StudSession
from ledger.games.stud_poker.tables import JACKPOT_HANDS, RANK_LETTERS, Category
from ledger.tools.builder import ERROR_KINDS, Injected, RoundBuilder

POOL: Final = "PJ-1"
JACKPOT: Final[dict[str, Any]] = {
    "pool": POOL,
    "bet_amount": "10",
    "contribution_rate": "0.25",
    "seed": "20000",
    "fixed": {
        "flush": "250",
        "full_house": "500",
        "four_of_a_kind": "2500",
        "straight_flush": "2000",
        "royal_flush": "20000",
    },
}
RULEBOOK: Final[dict[str, Any]] = {"jackpot": JACKPOT, "stud": {"max_payout": "50000", "rf_multiple": 100}}
"""The simulated tables' rulebook: every table links to pool ``PJ-1`` (RULES §6.6, Appendix A)."""

ANTES: Final = (50, 100, 100, 200, 200, 500, 1000)
JACKPOT_TAKE_RATE: Final = 0.6
VOID_RATE: Final = 0.03
ONE_EXPOSED_RATE: Final = 0.02
GAMBLER_RATE: Final = 0.05
FORCE_KEY: Final = "stud.force"
SPOIL: Final = Decimal("100")

STUD_ERRORS: Final[dict[str, str]] = {
    **{k: ERROR_KINDS[k] for k in ("wrong_payout", "late_bet", "missing_settlement", "wrong_commission")},
    "wrong_raise": "invalid_bet",
    "wrong_jackpot_bet": "invalid_bet",
    "wrong_jackpot": "jackpot_mismatch",
}
"""The error kinds this simulator injects and the finding each must produce."""

INJECTABLE: Final = tuple(STUD_ERRORS)

_RULES = complete_rulebook(RULEBOOK)


class _Seat:
    def __init__(self, seat: int, ante: Decimal) -> None:
        self.seat = seat
        self.ante = ante
        self.ante_id = f"a{seat}"
        self.jackpot_id: str | None = None
        self.jackpot_carried = False
        self.cards: list[int] = []
        self.value: HandValue | None = None
        self.raise_amount: Decimal | None = None


def force_plan(specs: list[str]) -> dict[str, Any]:
    """The STUD ``game_state`` that forces hands: each spec is ``TABLE/ROUND:SEAT=HAND``, e.g.
    ``STUD-01/000010:3=royal_flush`` (HAND one of the categories of STUD art. 8, lower case)."""
    plan: dict[tuple[str, str], list[tuple[int, Category]]] = {}
    for spec in specs:
        where, _, hand = spec.partition("=")
        target, _, seat = where.rpartition(":")
        table, _, round_ = target.partition("/")
        try:
            category = Category[hand.strip().upper()]
            number = int(seat)
        except (KeyError, ValueError):
            raise ValueError(
                f"--force {spec!r}: expected TABLE/ROUND:SEAT=HAND, e.g. "
                f"STUD-01/000010:3=royal_flush; hands: "
                f"{', '.join(c.name.lower() for c in Category)}"
            ) from None
        if not table or not round_ or not 1 <= number <= 7:
            raise ValueError(f"--force {spec!r}: expected TABLE/ROUND:SEAT=HAND with seat 1-7")
        plan.setdefault((table, round_), []).append((number, category))
    return {FORCE_KEY: plan}


def simulate_round(b: RoundBuilder, rng: random.Random, inject: str | None) -> list[Injected]:
    """Play one STUD round into ``b``; inject ``inject`` if given and return what verify must
    find (the jackpot amounts are filled in later by :func:`finish_feed`)."""
    if inject is not None and inject not in STUD_ERRORS:
        raise ValueError(f"STUD cannot inject {inject!r}; it injects {', '.join(INJECTABLE)}")
    forced = dict(b.game_state.get(FORCE_KEY, {}).get((b.table, b.round), []))
    carried: list[tuple[str, str, int]] = b.table_state.pop("carried", [])
    b.add("round_opened", currency="HKD", rulebook=RULEBOOK)
    count = rng.randint(2, 7)
    numbers = set(rng.sample(range(1, 8), count)) | {s for _, _, s in carried} | set(forced)
    seats = [_Seat(n, Decimal(rng.choice(ANTES))) for n in sorted(numbers)]
    by_seat = {s.seat: s for s in seats}
    injected: list[Injected] = []
    for bet, from_round, seat in carried:
        b.add("jackpot_carried", bet=bet, from_round=from_round, seat=seat, amount="10")
        by_seat[seat].jackpot_id, by_seat[seat].jackpot_carried = bet, True
    for s in seats:
        b.add(
            "bet_placed",
            bet=s.ante_id,
            spot={"kind": "ante", "seat": s.seat},
            amount=str(s.ante),
            player=f"P-{rng.randint(1, 99)}",
        )
    if inject == "wrong_jackpot":
        forced.setdefault(seats[0].seat, Category.FLUSH)
    # The late jackpot bet goes to the first seat with none carried: a seat whose carried bet
    # already holds its id would make the late bet a duplicate too (FEED §2), not only late.
    late_seat = next((s for s in seats if s.jackpot_id is None), None) if inject == "late_bet" else None
    for i, s in enumerate(seats):
        if s.jackpot_id is not None:
            continue
        wants = rng.random() < JACKPOT_TAKE_RATE or s.seat in forced
        if s is late_seat:
            wants = False
        if inject in ("wrong_jackpot", "wrong_jackpot_bet") and i == 0:
            wants = True
        if wants:
            s.jackpot_id = f"j{s.seat}"
            amount = "20" if inject == "wrong_jackpot_bet" and i == 0 else "10"
            b.add("bet_placed", bet=s.jackpot_id, spot={"kind": "jackpot", "seat": s.seat}, amount=amount)
            if amount != "10":
                injected.append(Injected("invalid_bet", b.table, b.round, s.jackpot_id))
    b.add("betting_closed")
    method = rng.choice(("hand", "machine"))
    b.add("deck_shuffled", decks=1, method=method)
    dealer = _deal_cards(rng, seats, forced, b.bias.missing if b.bias is not None else ())
    void_reason = None
    if inject is None and rng.random() < VOID_RATE:
        void_reason = (
            "shuffler failed during the deal"
            if method == "machine"
            else ("two cards exposed during the deal")
        )
    _deal_lines(b, rng, seats, dealer, method, void_reason)
    if void_reason is not None:
        return _void(b, seats, void_reason)
    late = late_seat
    if late is not None:
        late.jackpot_id = f"j{late.seat}"
        b.add("bet_placed", bet=late.jackpot_id, spot={"kind": "jackpot", "seat": late.seat}, amount="10")
        injected.append(Injected("bet_after_close", b.table, b.round, late.jackpot_id))
    _decide(b, rng, seats, dealer, inject, injected)
    injected += _settle(b, rng, seats, dealer, inject, late)
    b.add("round_closed")
    return injected


def _deal_cards(
    rng: random.Random, seats: list[_Seat], forced: dict[int, Category], missing: Sequence[str] = ()
) -> list[int]:
    deck = [c for c in range(52) if card_text(c) not in missing]
    rng.shuffle(deck)
    for s in seats:
        if s.seat in forced:
            s.cards = _forced_hand(rng, deck, forced[s.seat])
            for c in s.cards:
                deck.remove(c)
    for s in seats:
        if not s.cards:
            s.cards = [deck.pop() for _ in range(5)]
        s.value = evaluate([card_text(c) for c in s.cards])
    return [deck.pop() for _ in range(5)]


def _forced_hand(rng: random.Random, deck: list[int], category: Category) -> list[int]:
    """Five cards still in ``deck`` making ``category``: a random hand of that shape."""
    for _ in range(5000):
        suit, r, q = rng.randrange(4), rng.randrange(13), rng.randrange(13)
        if category == Category.ROYAL_FLUSH:
            hand = [x * 4 + suit for x in range(8, 13)]
        elif category == Category.STRAIGHT_FLUSH:
            top = rng.randrange(3, 12)  # 5-high (5-4-3-2-A) to K-high
            hand = [(12 if x < 0 else x) * 4 + suit for x in range(top - 4, top + 1)]
        elif category == Category.FOUR_OF_A_KIND:
            hand = [r * 4 + s for s in range(4)] + [rng.choice(deck)]
        elif category == Category.FULL_HOUSE:
            hand = [r * 4 + s for s in rng.sample(range(4), 3)] + [q * 4 + s for s in rng.sample(range(4), 2)]
        elif category == Category.FLUSH:
            hand = [x * 4 + suit for x in rng.sample(range(13), 5)]
        else:
            hand = rng.sample(deck, 5)
        if (
            len(set(hand)) == 5
            and all(c in deck for c in hand)
            and evaluate([card_text(c) for c in hand]).category == category
        ):
            return hand
    raise ValueError(f"cannot deal a {category.key} from this deck")


def _deal_lines(
    b: RoundBuilder,
    rng: random.Random,
    seats: list[_Seat],
    dealer: list[int],
    method: str,
    void_reason: str | None,
) -> None:
    order: list[tuple[int | str, int, bool]] = []
    if method == "hand":
        for i in range(5):
            order += [(s.seat, s.cards[i], False) for s in seats]
            order.append(("dealer", dealer[i], i == 4))
    else:
        for s in seats:
            order += [(s.seat, c, False) for c in s.cards]
        order += [("dealer", c, i == 4) for i, c in enumerate(dealer)]
    exposed = (
        2
        if void_reason and method == "hand"
        else (1 if not void_reason and rng.random() < ONE_EXPOSED_RATE else 0)
    )
    stop = len(order) // 2 if void_reason else len(order)
    for n, (to, card, up) in enumerate(order[:stop]):
        b.add("card_dealt", to=to, card=card_text(card), face_up=up)
        if exposed and to != "dealer" and n >= 3:
            b.add("card_exposed", to=to, card=card_text(card))
            exposed -= 1
    if void_reason and method == "machine":
        b.add("irregularity", code="shuffler_failure", detail=void_reason)


def _void(b: RoundBuilder, seats: list[_Seat], reason: str) -> list[Injected]:
    carried = []
    for s in seats:
        b.add("bet_settled", bet=s.ante_id, result="void", returned=str(s.ante), won="0", commission="0")
        if s.jackpot_id is not None:
            b.add("bet_settled", bet=s.jackpot_id, result="carry", returned="0", won="0", commission="0")
            carried.append((s.jackpot_id, b.round, s.seat))
    b.add("round_voided", reason=reason)
    b.table_state["carried"] = carried
    return []


def _decide(
    b: RoundBuilder,
    rng: random.Random,
    seats: list[_Seat],
    dealer: list[int],
    inject: str | None,
    injected: list[Injected],
) -> None:
    for i, s in enumerate(seats):
        assert s.value is not None
        ranks = {RANK_LETTERS[c >> 2] for c in s.cards}
        strong = s.value.category >= Category.ONE_PAIR
        ace_king = {"A", "K"} <= ranks and rng.random() < 0.5
        if (
            strong
            or ace_king
            or rng.random() < GAMBLER_RATE
            or (inject in ("wrong_raise", "wrong_payout") and i == 0)
        ):
            times = 3 if inject == "wrong_raise" and i == 0 else 2
            s.raise_amount = s.ante * times
            b.add(
                "bet_placed",
                bet=f"r{s.seat}",
                spot={"kind": "raise", "seat": s.seat},
                amount=str(s.raise_amount),
            )
            if times != 2:
                injected.append(Injected("invalid_bet", b.table, b.round, f"r{s.seat}"))
        else:
            b.add("hand_folded", seat=s.seat)


def _settle(
    b: RoundBuilder,
    rng: random.Random,
    seats: list[_Seat],
    dealer: list[int],
    inject: str | None,
    late: _Seat | None,
) -> list[Injected]:
    dealer_value = evaluate([card_text(c) for c in dealer])
    qualified, _ = dealer_qualifies(dealer_value)
    playing = [s for s in seats if s.raise_amount is not None]
    prizes = cap_prizes(
        [(_cat(s), raise_prize(_cat(s), _amt(s.raise_amount), _RULES)) for s in playing], _RULES
    )
    capped = {s.seat: p for s, p in zip(playing, prizes, strict=True)}
    lines: list[dict[str, Any]] = []
    jackpot_lines: list[dict[str, Any]] = []
    for s in seats:
        assert s.value is not None
        if s.raise_amount is not None:
            wins = decide(s.value, dealer_value).first_wins
            ante = settle_ante(s.ante, qualified=qualified, player_wins=wins, why="")
            full = raise_prize(_cat(s), s.raise_amount, _RULES)
            rse = settle_raise(
                s.raise_amount, capped[s.seat], full, _cat(s), qualified=qualified, player_wins=wins, why=""
            )
            lines.append({"bet": s.ante_id, **ante.as_dict()})
            lines.append({"bet": f"r{s.seat}", **rse.as_dict()})
        else:
            lines.append({"bet": s.ante_id, "result": "lose", "returned": "0", "won": "0", "commission": "0"})
        if s.jackpot_id is None:
            continue
        if s is late:
            lines.append(
                {"bet": s.jackpot_id, "result": "void", "returned": "10", "won": "0", "commission": "0"}
            )
        elif inject == "wrong_jackpot_bet" and s is seats[0] and not s.jackpot_carried:
            lines.append(
                {"bet": s.jackpot_id, "result": "void", "returned": "20", "won": "0", "commission": "0"}
            )
        elif s.raise_amount is not None and _cat(s) in JACKPOT_HANDS:
            jackpot_lines.append({"bet": s.jackpot_id, "hand": _cat(s).key, "amount": "0"})
            lines.append(
                {"bet": s.jackpot_id, "result": "win", "returned": "0", "won": "0", "commission": "0"}
            )
        else:
            lines.append(
                {"bet": s.jackpot_id, "result": "lose", "returned": "0", "won": "0", "commission": "0"}
            )
    injected = _spoil(b, rng, lines, inject)
    for j in jackpot_lines:
        b.add("jackpot_paid", **j)
        if inject == "wrong_jackpot" and j["bet"] == seats[0].jackpot_id:
            injected.append(Injected("jackpot_mismatch", b.table, b.round, j["bet"]))
    for line in lines:
        if line is not None:
            b.add("bet_settled", **line)
    return injected


def _spoil(
    b: RoundBuilder, rng: random.Random, lines: list[dict[str, Any]], inject: str | None
) -> list[Injected]:
    """Spoil one ante or raise settlement for ``wrong_payout``, ``missing_settlement``,
    ``wrong_commission``."""
    if inject not in ("wrong_payout", "missing_settlement", "wrong_commission"):
        return []
    targets = [i for i, ln in enumerate(lines) if ln["bet"][0] in "ar"]
    i = rng.choice(targets)
    line = lines[i]
    if inject == "wrong_payout":
        if line["result"] == "win":
            line["won"] = str(Decimal(line["won"]) + 10)
        elif line["result"] == "push":
            line["returned"] = str(Decimal(line["returned"]) - 10)
        else:
            line.update(result="win", returned="50", won="50")
        code = "settlement_mismatch"
    elif inject == "wrong_commission":
        line["commission"] = "5"
        code = "commission_mismatch"
    else:
        del lines[i]
        code = "missing_settlement"
    return [Injected(code, b.table, b.round, line["bet"])]


def _cat(s: _Seat) -> Category:
    assert s.value is not None
    return s.value.category


def _amt(x: Decimal | None) -> Decimal:
    assert x is not None
    return x


def finish_feed(lines: list[dict[str, Any]], injected: list[Injected]) -> list[Injected]:
    """Fill in every ``jackpot_paid`` amount and winning jackpot bet's ``won`` from the pool,
    walking the merged feed in the order the ledger will store it (FEED §7); spoil the awards
    of ``wrong_jackpot`` rounds. Lines are edited in place."""

    spoiled = {(i.table, i.round, i.bet) for i in injected if i.code == "jackpot_mismatch"}
    session = StudSession()
    open_rounds: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for line in lines:
        if line.get("game") != "STUD":
            continue
        key = (line["table"], line["round"])
        open_rounds.setdefault(key, []).append(line)
        if line["type"] not in ("round_closed", "round_voided"):
            continue
        round_lines = open_rounds.pop(key)
        facts: list[FeedEvent] = []
        for no, obj in enumerate(round_lines, start=1):
            fact = parse_object(obj, no)
            if not isinstance(fact, FeedEvent):
                raise ValueError(f"simulated STUD line does not parse: {fact}")
            facts.append(fact)
        rnd = Round.replay(facts)
        pooled = session.settle(rnd, analyse(rnd))
        awards = {a.bet: a for a in pooled.awards} if pooled else {}
        for obj in round_lines:
            award = awards.get(str(obj.get("bet")))
            if award is None:
                continue
            if obj["type"] == "jackpot_paid":
                amount = award.amount + (SPOIL if (key[0], key[1], award.bet) in spoiled else 0)
                obj["amount"] = str(amount)
            elif obj["type"] == "bet_settled":
                obj["won"] = str(award.amount)
    return injected
