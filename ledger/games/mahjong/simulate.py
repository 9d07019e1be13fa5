"""Mah-Jong games for ``ledger simulate``: whole games by simple but legal players.

A table plays one variant (tables alternate MJ-C and MJ-S) at one stake row; MJ-S tables seat 2
to 4 players. Each game follows RULES §4.11: ``round_opened`` (players, capital, round wind,
game number), the dice and the break, the deal tile by tile (``tables.deal_order``), then play:

- a player on turn wins on his own draw when he can, declares a concealed or added kong when he
  holds one (an added kong may be robbed), and otherwise discards the tile that least helps his
  hand (isolated honours first, then tiles with the fewest neighbours);
- after a discard, a win is claimed by the nearest player who can (art. 5(a)(6)); otherwise a
  kong or pung by anyone holding the tiles (MJ-C; MJ-S only the kong), then a chow by the next
  player when it does not break a pair;
- the game ends on a win or when the wall runs out (a drawn game).

Now and then a player withdraws a pung call (he may not win), looks at another's tiles (no kong),
corrects a claim error in time, tops up his capital, or declares a false win. The payments and
the commission are what the rules derive (``round.outcome``), so a clean game verifies with no
finding. Injected errors (:data:`INJECTABLE`) spoil the money only, and each reports exactly the
findings verify must produce. The bank passes to the right when another player wins (M8, M9).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Final

from ledger.codec.parse import Rejection, parse_line
from ledger.domain.round import Round
from ledger.games.base import PaymentDue
from ledger.games.mahjong.feed import STAKE_ROWS
from ledger.games.mahjong.hands import is_complete
from ledger.games.mahjong.payments import win_payments
from ledger.games.mahjong.round import outcome
from ledger.games.mahjong.tables import COMMISSION, LAYOUTS, deal_order
from ledger.games.mahjong.tiles import (
    KINDS,
    SEATS,
    Variant,
    code,
    index,
    next_seat,
    tile_set,
)
from ledger.tools.builder import Injected, RoundBuilder

INJECTABLE: Final = ("mj_wrong_fan", "mj_liability_ignored", "mj_missing_commission")
"""The error kinds this simulator injects (keys of ``ledger.tools.simulate.ERROR_KINDS``)."""

IRREGULARITY_RATE: Final = 0.03
"""Per game, the chance of each irregularity (withdrawn pung, tiles seen, claim error, top-up)."""

FALSE_WIN_RATE: Final = 0.0005
"""Per discard that nobody claims, the chance that a player declares a false win on it."""


@dataclass
class _Player:
    """One seat's tiles in the simulator."""

    seat: str
    hand: list[int] = field(default_factory=lambda: [0] * KINDS)
    melds: list[tuple[str, int]] = field(default_factory=list)
    no_win: bool = False
    no_kong: bool = False

    @property
    def fixed(self) -> int:
        return len(self.melds)


class _Table:
    """The physical wall and the players during one simulated game."""

    def __init__(self, b: RoundBuilder, rng: random.Random, variant: Variant, seats: tuple[str, ...]) -> None:
        self.b, self.rng, self.variant, self.seats = b, rng, variant, seats
        self.layout = LAYOUTS[variant]
        self.wall = tile_set(variant)
        rng.shuffle(self.wall)
        self.head, self.tail = 0, len(self.wall)
        self.players = {s: _Player(s) for s in seats}
        self.careless = False
        """Players who break a triplet that another can win on (to produce liabilities)."""

    @property
    def left(self) -> int:
        return self.tail - self.head

    def draw(self, seat: str, frm: str = "wall") -> int:
        if frm == "wall":
            kind = self.wall[self.head]
            self.head += 1
        else:
            self.tail -= 1
            kind = self.wall[self.tail]
        self.players[seat].hand[kind] += 1
        self.b.add("tile_drawn", seat=seat, tile=code(kind), **{"from": frm})
        return kind

    def can_win(self, p: _Player, extra: int | None = None) -> bool:
        hand = list(p.hand)
        if extra is not None:
            hand[extra] += 1
        return not p.no_win and is_complete(hand, p.fixed, self.layout.sets, self.variant == "conventional")

    def choose_discard(self, p: _Player) -> int:
        def keep(k: int) -> float:
            value = 3.0 * (p.hand[k] - 1)
            if k < 27:
                n = k % 9
                for dist, w in ((1, 2.0), (2, 1.0)):
                    for j in (k - dist, k + dist):
                        if 0 <= j < 27 and j // 9 == k // 9 and p.hand[j]:
                            value += w
                value -= 0.5 if n in (0, 8) else 0.0
            else:
                value -= 1.0
            return value + self.rng.random() * 0.1

        return min((k for k in range(KINDS) if p.hand[k]), key=keep)


def simulate_round(b: RoundBuilder, rng: random.Random, inject: str | None) -> list[Injected]:
    """Play one Mah-Jong game into ``b``; inject the error ``inject`` if given, and report it."""
    if inject is not None and inject not in INJECTABLE:
        raise ValueError(f"MJ cannot inject {inject!r}; it injects {', '.join(INJECTABLE)}")
    ts = _table_state(b, rng)
    variant: Variant = ts["variant"]
    seats = ts["seats"]
    single = Decimal(ts["stake"].split("/")[0])
    capital = {s: str(single * rng.choice((8, 12, 16, 24, 40, 80))) for s in seats}
    b.add(
        "round_opened",
        currency="MOP",
        variant=variant,
        stake=ts["stake"],
        players={s: ts["players"][s] for s in seats},
        capital=capital,
        round_wind=ts["round_wind"],
        game_no=ts["game_no"],
        rulebook={"mj": {"min_capital": str(single * 8)}},
    )
    table = _Table(b, rng, variant, seats)
    table.careless = inject == "mj_liability_ignored"
    _open(table)
    _play(table)
    injected, winner = _settle(b, inject)
    _advance(ts, winner)
    return injected


def _table_state(b: RoundBuilder, rng: random.Random) -> dict[str, Any]:
    ts = b.table_state
    if not ts:
        n = b.game_state.get("tables", 0)
        b.game_state["tables"] = n + 1
        variant: Variant = "conventional" if n % 2 == 0 else "simplified"
        count = 4 if variant == "conventional" else rng.choice((2, 3, 4, 4))
        seats = SEATS[:count]
        ts.update(
            variant=variant,
            seats=seats,
            stake=rng.choice(STAKE_ROWS[variant][:6]),
            players={s: f"P-{b.table[-2:]}{i}" for i, s in enumerate(seats, 1)},
            round_wind="E",
            game_no=1,
            passes=0,
        )
    return ts


def _open(t: _Table) -> None:
    dice = [t.rng.randint(1, 6) for _ in range(t.layout.dice)]
    t.b.add("dice_thrown", dice=dice)
    t.b.add("wall_broken", wall=SEATS[(sum(dice) - 1) % 4], stacks=sum(dice))
    if t.rng.random() < IRREGULARITY_RATE:
        seat = t.rng.choice(t.seats)
        t.b.add("capital_topped_up", seat=seat, amount="500")
    for seat in deal_order(t.variant, t.seats):
        t.draw(seat)


def _play(t: _Table) -> None:
    turn = t.seats[0]
    drew = True
    if t.rng.random() < IRREGULARITY_RATE:
        seat = t.rng.choice(t.seats)
        t.b.add("tiles_seen", seat=seat)
        t.players[seat].no_kong = True
    if t.variant == "conventional" and t.rng.random() < IRREGULARITY_RATE:
        seat = t.rng.choice(t.seats)
        t.b.add("pung_call_withdrawn", seat=seat)
        t.players[seat].no_win = True
    while True:
        p = t.players[turn]
        if drew and t.can_win(p):
            last = _last_drawn(t.b, turn)
            t.b.add("win_declared", seat=turn, tile=code(last), source="self_drawn")
            return
        if drew and _kongs(t, p):
            return  # robbed
        discard = _careless(t, p) if t.careless else None
        if discard is None:
            discard = t.choose_discard(p)
        p.hand[discard] -= 1
        t.b.add("tile_discarded", seat=turn, tile=code(discard))
        claim = _claims(t, turn, discard)
        if claim == "won":
            return
        if claim is not None:
            turn, drew = claim, False
            continue
        if t.left == 0:
            t.b.add("game_drawn")
            return
        turn = next_seat(turn, t.seats)
        t.draw(turn)
        drew = True


def _careless(t: _Table, p: _Player) -> int | None:
    """A triplet tile that lets another player win, discarded anyway (art. 10(a)(5)–(6))."""
    for k in range(KINDS):
        if p.hand[k] >= 3 and _nearest_winner(t, p.seat, k) is not None:
            return k
    return None


def _last_drawn(b: RoundBuilder, seat: str) -> int:
    line = next(x for x in reversed(b.lines) if x["type"] == "tile_drawn" and x["seat"] == seat)
    return index(line["tile"])


def _kongs(t: _Table, p: _Player) -> bool:
    """Declare kongs while the player holds one; ``True`` if one was robbed (game over)."""
    while t.left > 0 and not p.no_kong:
        four = next((k for k in range(KINDS) if p.hand[k] == 4), None)
        added = next((k for kind, k in p.melds if kind == "pung" and p.hand[k] == 1), None)
        if four is not None:
            p.hand[four] -= 4
            p.melds.append(("kong", four))
            t.b.add("kong_declared", seat=p.seat, kind="concealed", tile=code(four))
        elif added is not None:
            p.hand[added] -= 1
            p.melds[p.melds.index(("pung", added))] = ("kong", added)
            t.b.add("kong_declared", seat=p.seat, kind="added", tile=code(added))
            robber = _nearest_winner(t, p.seat, added)
            if robber is not None:
                t.b.add(
                    "win_declared", seat=robber, tile=code(added), source="robbed_kong", **{"from": p.seat}
                )
                return True
        else:
            return False
        kind = t.draw(p.seat, "tail")
        if t.can_win(p):
            t.b.add("win_declared", seat=p.seat, tile=code(kind), source="self_drawn")
            return True
    return False


def _nearest_winner(t: _Table, frm: str, tile: int) -> str | None:
    seat = next_seat(frm, t.seats)
    while seat != frm:
        if t.can_win(t.players[seat], tile):
            return seat
        seat = next_seat(seat, t.seats)
    return None


def _claims(t: _Table, frm: str, tile: int) -> str | None:
    """Resolve claims on a discard: the claimer's seat, ``"won"``, or ``None`` (no claim)."""
    winner = _nearest_winner(t, frm, tile)
    if winner is not None:
        t.b.add("win_declared", seat=winner, tile=code(tile), source="discard", **{"from": frm})
        return "won"
    if t.rng.random() < FALSE_WIN_RATE:
        liar = t.rng.choice([s for s in t.seats if s != frm])
        t.b.add("win_declared", seat=liar, tile=code(tile), source="discard", **{"from": frm})
        return "won"
    for seat in _after(t, frm):
        p = t.players[seat]
        if p.hand[tile] == 3 and not p.no_kong and t.left > 0:
            return _meld(t, p, frm, "kong", [tile] * 3, tile)
        if t.variant == "conventional" and p.hand[tile] >= 2 and t.rng.random() < 0.9:
            return _meld(t, p, frm, "pung", [tile] * 2, tile)
    if t.variant == "conventional" and tile < 27:
        p = t.players[next_seat(frm, t.seats)]
        for pair in _chow_pairs(tile):
            if all(p.hand[k] == 1 for k in pair) and t.rng.random() < 0.7:
                return _meld(t, p, frm, "chow", list(pair), tile)
    return None


def _after(t: _Table, frm: str) -> list[str]:
    i = t.seats.index(frm)
    return [*t.seats[i + 1 :], *t.seats[:i]]


def _chow_pairs(tile: int) -> list[tuple[int, int]]:
    n, base = tile % 9, tile - tile % 9
    out = []
    for lo in (n - 2, n - 1, n):
        if lo >= 0 and lo + 2 <= 8:
            out.append(tuple(base + j for j in (lo, lo + 1, lo + 2) if base + j != tile))
    return [(a, b) for a, b in out]


def _meld(t: _Table, p: _Player, frm: str, kind: str, own: list[int], tile: int) -> str:
    for k in own:
        p.hand[k] -= 1
    first = min([tile, *own])
    p.melds.append((kind, first))
    tiles = sorted([tile, *own])
    t.b.add("meld_claimed", seat=p.seat, kind=kind, tiles=[code(k) for k in tiles], **{"from": frm})
    if kind != "kong" and t.rng.random() < IRREGULARITY_RATE:
        t.b.add("claim_error", seat=p.seat)
        t.b.add("claim_corrected", seat=p.seat)
    if kind == "kong":
        t.draw(p.seat, "tail")
        if t.can_win(p):
            t.b.add("win_declared", seat=p.seat, tile=code(_last_drawn(t.b, p.seat)), source="self_drawn")
            return "won"
        if _kongs(t, p):
            return "won"
    return p.seat


# -- money ---------------------------------------------------------------------------------------


def _settle(b: RoundBuilder, inject: str | None) -> tuple[list[Injected], str | None]:
    """Pay what the rules derive; spoil it as ``inject`` says and report what verify must find."""

    events = []
    for n, line in enumerate(b.lines, 1):
        event = parse_line(json.dumps(line), n)
        if isinstance(event, Rejection):
            raise AssertionError(f"the simulator wrote a bad line: {event}")
        events.append(event)
    game = outcome(Round.replay(events))
    due = game.due
    paid = due
    injected: list[Injected] = []
    end = game.end
    claim, score = end.claim, end.score
    if (
        inject in ("mj_wrong_fan", "mj_liability_ignored")
        and end.ending == "win"
        and claim is not None
        and score is not None
    ):
        paid = _spoiled(game, inject, claim.seat, score.fan)
        injected = [Injected(c, b.table, b.round, None) for c in _differences(due, paid)]
    for p in paid:
        b.add("payment_made", to=p.to, amount=str(p.amount), reason=p.reason, **{"from": p.frm})
        if p.shortfall:
            b.add("payment_shortfall", to=p.to, amount=str(p.shortfall), **{"from": p.frm})
    winner = end.winner
    if winner is not None:
        opened = game.state.opened
        if inject == "mj_missing_commission":
            injected = [b.injected(inject, None)]
        else:
            b.add("commission_charged", seat=winner, amount=str(COMMISSION[opened.variant][opened.stake]))
    b.add("round_closed")
    return injected, winner


def _spoiled(game: Any, inject: str, winner: str, fan: int) -> list[PaymentDue]:
    state, end = game.state, game.end
    claim = end.claim
    liable = end.liability.decision if end.liability else None
    if inject == "mj_liability_ignored":
        if liable is None:
            return list(game.due)
        liable = None
    else:
        fan = fan + 1 if fan == 0 else fan - 1
    single = state.opened.stake_amounts[0]
    start = claim.event.from_ if claim.source != "self_drawn" else state.order[0]
    return win_payments(
        state.order,
        winner,
        single,
        fan,
        liable=liable,
        cap=state.capital[winner],
        start=start,
        payer_capital=state.capital,
    )


def _differences(due: list[PaymentDue], paid: list[PaymentDue]) -> list[str]:
    """The finding codes verify reports when ``paid`` is recorded instead of ``due``."""
    want = {(p.frm, p.to): p for p in due}
    got = {(p.frm, p.to): p for p in paid}
    codes = []
    for key in sorted(want.keys() | got.keys()):
        a, b = want.get(key), got.get(key)
        if b is None:
            codes.append("missing_settlement")
        elif a is None:
            codes += ["payment_mismatch"] * (2 if b.shortfall else 1)
        else:
            if a.amount != b.amount or a.reason != b.reason:
                codes.append("payment_mismatch")
            if a.shortfall != b.shortfall:
                codes.append("payment_mismatch")
    return codes


def _advance(ts: dict[str, Any], winner: str | None) -> None:
    """The bank passes to the right when another player wins (art. 3, M8–M9)."""
    won_by_other = winner is not None and winner != "E"
    ts["game_no"] += 1
    if not won_by_other:
        return
    seats = ts["seats"]
    players = [ts["players"][s] for s in seats]
    players = players[1:] + players[:1]
    ts["players"] = dict(zip(seats, players, strict=True))
    ts["passes"] += 1
    if ts["passes"] % len(seats) == 0:
        ts["round_wind"] = SEATS[(SEATS.index(ts["round_wind"]) + 1) % 4]


__all__ = ["INJECTABLE", "simulate_round"]
