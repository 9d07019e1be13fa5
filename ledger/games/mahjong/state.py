"""The game state machine: replays a Mah-Jong game's tile log (MJ arts. 2–5, 9, RULES §4.3–4.5).

:class:`GameState` takes the recorded events in ``seq`` order and keeps every seat's concealed
tiles, melds, discards and the wall. Each event must be possible in the state it meets:

- the deal, tile by tile in the order of ``tables.deal_order`` (art. 3);
- then turns: the seat on turn holds 14 (MJ-S 5) and discards, declares a concealed or added
  kong, or wins on his own draw; after a discard the next seat draws from the wall, or someone
  claims the discard — a chow only by the next seat (art. 5(a)(3)), a pung or kong by anyone
  (art. 5(a)(4)–(5)), a win by anyone (art. 5(a)(6)); MJ-S allows only the win and the exposed
  kong (art. 5(b)(3)–(4), RULES §8.4 M13);
- a kong is followed by a replacement from the tail (art. 5(a)(5), 5(b)(4)); an added kong may
  first be robbed (art. 6(a)(2));
- a fifth copy of a tile, a tile not in the variant's set, a draw out of turn or from an empty
  wall, a discard of a tile not held: ``invalid_deal``; a claim the rules do not allow, or a
  kong by a seat that looked at another's tiles (art. 9(a)(3), (b)(2)): ``invalid_bet``.

The replay is lenient after a finding — the event is applied as recorded — so that one error
does not hide the rest of the game. What the rules make of the end (win, false win, draw) is in
``rules.py``; this module only records what happened and what each seat held.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

from ledger.domain.findings import Finding
from ledger.feed.envelope import FeedEvent
from ledger.feed.types import Wind
from ledger.games.mahjong.feed import (
    CapitalToppedUp,
    ClaimCorrected,
    ClaimError,
    GameDrawn,
    KongDeclared,
    MahjongDiceThrown,
    MahjongRoundOpened,
    MeldClaimed,
    PungCallWithdrawn,
    TileDiscarded,
    TileDrawn,
    TilesSeen,
    WallBroken,
    WinDeclared,
)
from ledger.games.mahjong.hands import Meld, is_chow
from ledger.games.mahjong.tables import LAYOUTS, Layout, deal_order
from ledger.games.mahjong.tiles import (
    CODES,
    COPIES,
    HONOURS,
    KINDS,
    SEATS,
    Variant,
    code,
    distance,
    index,
    kinds_of,
    next_seat,
    show,
)

Phase = Literal["deal", "turn", "discarded", "replacement", "robbable", "ended"]

DEAL_RULE = "MJ art. 3; RULES §4.3"
SET_RULE = "MJ art. 2; RULES §4.1"
TURN_RULE = "MJ art. 3, 5; RULES §4.2, §4.5"
KONG_RULE_C = "MJ art. 5(a)(5); RULES §4.5"
VIEWED_RULE = "MJ art. 9(a)(3), (b)(2); RULES §4.5"


@dataclass
class SeatState:
    """One seat's tiles and standing in the game."""

    seat: str
    hand: list[int] = field(default_factory=lambda: [0] * KINDS)
    melds: list[Meld] = field(default_factory=list)
    meld_from: list[str | None] = field(default_factory=list)
    last_drawn: int | None = None
    last_from: str | None = None
    kong_chain: int = 0
    discards: int = 0
    draws: int = 0
    turn_start: tuple[tuple[int, ...], int] | None = None
    """The 13-tile hand (and the count of fixed sets) after this seat's previous discard."""
    barred_win: str | None = None
    """Why this seat may no longer win (a withdrawn pung call, art. 9(a)(2))."""
    barred_kong: bool = False
    claim_error_open: bool = False
    claim_error_drew: bool = False
    fourth_set_from: str | None = None
    draws_since_fourth: int = 0

    @property
    def held(self) -> int:
        """Tiles held, a kong counting as 3."""
        return sum(self.hand) + 3 * len(self.melds)

    @property
    def exposed(self) -> list[Meld]:
        """Melds shown on the table (not concealed kongs)."""
        return [m for m in self.melds if not m.concealed]


class DiscardFacts(NamedTuple):
    """What liability needs to know about a discard when it was made (RULES §4.8).

    A named tuple, not a frozen dataclass: one is built per discard, the hottest step of the
    replay, and a frozen dataclass pays a guarded attribute write per field."""

    seat: str
    tile: int
    seq: int
    hand_at_discard: tuple[int, ...]
    fixed: int
    turn_start: tuple[tuple[int, ...], int] | None
    visible_before: int
    """Copies of the tile visible (discards, exposed melds) before this discard (M22)."""
    held_back: tuple[int, ...]
    """Honours the discarder kept whose other three copies were all visible (絕張)."""
    first_of_banker: bool
    """The banker's first discard, before any claim or kong (earthly hand, art. 5(a)(2))."""


@dataclass(frozen=True)
class WinClaim:
    """A ``win_declared`` and the hand it was declared with."""

    event: WinDeclared
    seat: str
    source: str
    tile: int
    hand: tuple[int, ...]
    """The concealed tiles with the winning tile."""
    melds: tuple[Meld, ...]
    meld_from: tuple[str | None, ...]
    discard: DiscardFacts | None
    on_replacement: bool
    kong_upon_kong: bool
    last_tile: bool
    heavenly: bool
    earthly: bool
    barred: str | None
    claim_error: bool
    fourth_set_from: str | None
    draws_since_fourth: int


_Seating = tuple[frozenset[int], tuple[str, ...], Mapping[str, str]]
_SEATINGS: dict[tuple[str, tuple[str, ...]], _Seating] = {}
"""Per variant and seating: the kinds in play, who takes each dealt tile, and the seat after
each seat present. Games of one table share them; worked out once per process (a few variants
and seatings), not once per game."""


def _seating(variant: Variant, order: Sequence[str]) -> _Seating:
    key = (variant, tuple(order))
    known = _SEATINGS.get(key)
    if known is None:
        known = _SEATINGS[key] = (
            frozenset(kinds_of(variant)),
            tuple(deal_order(variant, order)),
            MappingProxyType({s: next_seat(s, order) for s in order}),
        )
    return known


class GameState:
    """Replays one game's tile log; collects ``invalid_deal`` / ``invalid_bet`` findings."""

    def __init__(self, opened: MahjongRoundOpened, *, allow_discard_kong: bool = True) -> None:
        self.opened = opened
        self.variant = opened.variant
        self.layout: Layout = LAYOUTS[opened.variant]
        self.order = opened.seats
        self.allow_discard_kong = allow_discard_kong
        self.seats = {s: SeatState(s) for s in self.order}
        self.kinds, self.deal, self._next = _seating(opened.variant, self.order)
        self._deal_size = len(self.deal)
        self._wall_size = self.layout.tiles
        self._full_hand = self.layout.hand + 1
        """Tiles the seat on turn holds before discarding, a kong counting as 3."""
        self.dealt = 0
        self.drawn = 0
        self.seen = [0] * KINDS
        self.visible = [0] * KINDS
        self.honours_at_three = 0
        """How many honour kinds have exactly three copies visible (:meth:`_show` keeps it):
        while none has, no discarder can have held a last honour back."""
        self.phase: Phase = "deal"
        self.turn = self.order[0]
        self.last_discard: DiscardFacts | None = None
        self.pending_kong: tuple[str, int] | None = None
        self.any_claim = False
        self.wins: list[WinClaim] = []
        self.drawn_game: GameDrawn | None = None
        self.capital = dict(opened.capital)
        self.dice: tuple[int, ...] | None = None
        self.findings: list[Finding] = []
        self.log: list[str | LogMove] = []
        """What happened after the deal, a line per event (``round.py`` writes it as steps):
        a draw or a discard as its parts (:data:`LogMove`, written only when a step is read),
        anything else as its text."""
        self.hands_dealt: list[tuple[str, tuple[int, ...]]] = []
        """Each seat's tiles (a count per kind) when the deal ended, in turn order."""

    # -- helpers -------------------------------------------------------------------------------

    def _bad(self, code_: str, e: FeedEvent, rule: str, message: str) -> None:
        self.findings.append(
            Finding(
                code_,
                self.opened.table,
                self.opened.round,
                f"seq {e.seq} {e.type}: {message}",
                rule=rule,
                seq=e.seq,
                extra={"seat": getattr(e, "seat", None)} if getattr(e, "seat", None) else {},
            )
        )

    def _show(self, kind: int, n: int) -> None:
        """``n`` more copies of ``kind`` become visible (a discard, an exposed meld, an added kong)."""
        before = self.visible[kind]
        after = self.visible[kind] = before + n
        if kind in HONOURS and before != after:
            self.honours_at_three += (after == 3) - (before == 3)

    def _take(self, st: SeatState, kind: int, n: int, e: FeedEvent, what: str) -> None:
        if st.hand[kind] < n:
            self._bad(
                "invalid_deal", e, TURN_RULE, f"{st.seat} {what} {n} × {code(kind)} but holds {st.hand[kind]}"
            )
        st.hand[kind] = max(0, st.hand[kind] - n)

    @property
    def wall_left(self) -> int:
        """Tiles still drawable (no dead wall, RULES §8.4 M11)."""
        return self.layout.tiles - self.drawn

    # -- the event loop ------------------------------------------------------------------------

    def apply(self, e: FeedEvent) -> None:
        """Apply one recorded event."""
        if self.phase == "ended" and isinstance(e, _NOT_AFTER_END):
            self._bad("invalid_deal", e, TURN_RULE, "play continued after the game ended")
            return
        handler = _HANDLERS[e.__class__]
        if handler is not None:
            handler(self, e)

    def _dice(self, e: FeedEvent) -> None:
        assert isinstance(e, MahjongDiceThrown)
        self.dice = e.dice
        if len(e.dice) != self.layout.dice:
            self._bad(
                "invalid_deal",
                e,
                self.layout.rule,
                f"{self.variant} Mah-Jong throws {self.layout.dice} dice, not {len(e.dice)}",
            )

    def _wall_broken(self, e: FeedEvent) -> None:
        assert isinstance(e, WallBroken)
        if self.dice is None:
            return
        total = sum(self.dice)
        wall = SEATS[(total - 1) % 4]
        if (e.wall, e.stacks) != (wall, total):
            self._bad(
                "invalid_deal",
                e,
                "MJ art. 3; RULES §4.3, §8.4 M10",
                f"dice total {total} breaks the wall before {wall} after {total} stacks, "
                f"not before {e.wall} after {e.stacks}",
            )

    def _drawn(self, e: TileDrawn) -> None:  # the hottest handlers take their class from _HANDLERS
        kind = _KIND[e.tile.code]
        seat = e.seat
        st = self.seats.get(seat)
        if st is None:
            self._bad("invalid_deal", e, TURN_RULE, f"no player sits at {seat}")
            return
        seen = self.seen[kind] + 1
        if seen > COPIES or kind not in self.kinds or self.drawn >= self._wall_size:
            self._count_tile(e, kind)  # with its findings
        else:  # _count_tile when it finds nothing
            self.seen[kind] = seen
            self.drawn += 1
        st.hand[kind] += 1
        st.draws += 1
        from_ = e.from_
        if self.phase != "deal":
            self._play_draw(e, st, kind, seat, from_)
        elif from_ == "wall" and seat == self.deal[self.dealt] and self.dealt + 1 < self._deal_size:
            self.dealt += 1  # _deal_tile when it finds nothing and the deal goes on
        else:
            self._deal_tile(e, st, kind)
        st.last_drawn, st.last_from = kind, from_

    def _count_tile(self, e: TileDrawn, kind: int) -> None:
        if kind not in self.kinds:
            self._bad("invalid_deal", e, SET_RULE, f"{code(kind)} is not a tile of the {self.variant} set")
        self.seen[kind] += 1
        if self.seen[kind] > COPIES:
            self._bad(
                "invalid_deal",
                e,
                SET_RULE,
                f"a {_nth(self.seen[kind])} {code(kind)}: the set has {COPIES} of each tile",
            )
        self.drawn += 1
        if self.drawn > self.layout.tiles:
            self._bad(
                "invalid_deal",
                e,
                "MJ art. 2; RULES §4.3, §8.4 M11",
                f"tile {self.drawn} drawn from a wall of {self.layout.tiles}",
            )

    def _deal_tile(self, e: TileDrawn, st: SeatState, kind: int) -> None:
        want = self.deal[self.dealt]
        if e.from_ != "wall" or e.seat != want:
            self._bad(
                "invalid_deal",
                e,
                DEAL_RULE,
                f"dealt tile {self.dealt + 1} of {len(self.deal)} goes to {want} from the "
                f"wall, not to {e.seat} from the {e.from_}",
            )
        self.dealt += 1
        if self.dealt == len(self.deal):
            self._deal_done()

    def _deal_done(self) -> None:
        self.phase, self.turn = "turn", self.order[0]
        for s in self.order:
            st = self.seats[s]
            self.hands_dealt.append((s, tuple(st.hand)))
            if s != self.order[0]:
                st.turn_start = (tuple(st.hand), 0)

    def _end_deal_early(self, e: FeedEvent) -> None:
        self._bad(
            "invalid_deal",
            e,
            DEAL_RULE,
            f"the deal is incomplete: {self.dealt} of {len(self.deal)} tiles dealt",
        )
        self._deal_done()

    def _play_draw(self, e: TileDrawn, st: SeatState, kind: int, seat: Wind, from_: str) -> None:
        if from_ == "wall":
            last = self.last_discard
            want = None if last is None else self._next[last.seat]
            if self.phase != "discarded" or seat != want:
                self._bad(
                    "invalid_deal",
                    e,
                    TURN_RULE,
                    f"{seat} draws from the wall out of turn ({self._expecting()})",
                )
            st.kong_chain = 0
            if st.claim_error_open:
                st.claim_error_drew = True
            if st.fourth_set_from is not None:
                st.draws_since_fourth += 1
        else:
            if self.phase not in ("replacement", "robbable") or seat != self.turn:
                self._bad(
                    "invalid_deal",
                    e,
                    KONG_RULE_C,
                    f"{seat} draws a replacement from the tail with no kong to replace ({self._expecting()})",
                )
            if st.fourth_set_from is not None:
                st.draws_since_fourth += 1
        self.pending_kong = None
        self.phase, self.turn = "turn", seat
        self.log.append((seat, "+", kind, "(tail)" if from_ == "tail" else ""))

    def _expecting(self) -> str:
        if self.phase == "discarded" and self.last_discard is not None:
            return (
                f"after {self.last_discard.seat}'s discard the next draw is "
                f"{next_seat(self.last_discard.seat, self.order)}'s"
            )
        if self.phase in ("replacement", "robbable"):
            return f"{self.turn} must draw a kong replacement from the tail"
        return f"{self.turn} is on turn and must discard"

    def _acting_seat(self, e: FeedEvent, seat: Wind) -> SeatState | None:
        """The seat acting in ``e`` (a play ends the deal), or ``None`` after reporting that no
        player sits there."""
        if self.phase == "deal":
            self._end_deal_early(e)
        st = self.seats.get(seat)
        if st is None:
            self._bad("invalid_deal", e, TURN_RULE, f"no player sits at {seat}")
        return st

    def _discarded(self, e: TileDiscarded) -> None:
        # The most frequent event after a draw: _acting_seat, SeatState.held, _take and _show
        # are written out here for their common case (same checks, same findings).
        # The fact's fields are read once each (a model's attribute is slower than a local).
        if self.phase == "deal":
            self._end_deal_early(e)
        seat = e.seat
        st = self.seats.get(seat)
        if st is None:
            self._bad("invalid_deal", e, TURN_RULE, f"no player sits at {seat}")
            return
        kind = _KIND[e.tile.code]
        hand = st.hand
        melds = len(st.melds)
        if self.phase != "turn" or seat != self.turn:
            self._bad("invalid_deal", e, TURN_RULE, f"{seat} discards out of turn ({self._expecting()})")
        elif sum(hand) + 3 * melds != self._full_hand:
            self._bad(
                "invalid_deal",
                e,
                TURN_RULE,
                f"{seat} holds {st.held} tiles, not {self.layout.hand + 1}, when discarding",
            )
        hand_at = tuple(hand)
        if hand[kind] < 1:
            self._take(st, kind, 1, e, "discards")
        else:
            hand[kind] -= 1
        visible = self.visible
        # Held back (絕張): honours held once whose other three copies are all visible; worked
        # out here, per discard, rather than in a function of their own (one call less each).
        held_back = (
            tuple([k for k in _HONOURS_ORDER if visible[k] == 3 and hand[k] == 1])
            if self.honours_at_three
            else ()
        )
        first_of_banker = seat == self.order[0] and st.discards == 0 and not self.any_claim
        before = visible[kind]
        self.last_discard = DiscardFacts(
            seat, kind, e.seq, hand_at, melds, st.turn_start, before, held_back, first_of_banker
        )
        visible[kind] = before + 1  # _show(kind, 1)
        if kind in HONOURS:
            self.honours_at_three += (before == 2) - (before == 3)
        st.discards += 1
        st.turn_start = (tuple(hand), melds)
        self.phase, self.turn = "discarded", seat
        self.log.append((seat, "-", kind, ""))

    def _claimed(self, e: FeedEvent) -> None:
        assert isinstance(e, MeldClaimed)
        st = self.seats.get(e.seat)
        d = self.last_discard
        if st is None or self.phase != "discarded" or d is None or e.from_ != d.seat or e.seat == d.seat:
            self._bad(
                "invalid_deal",
                e,
                TURN_RULE,
                f"{e.seat} claims a discard of {e.from_} that is not the discard on the table",
            )
            if st is None or d is None:
                return
        kinds = [_KIND[t.code] for t in e.tiles]
        rule = self._claim_rule(e, d.seat, d.tile, kinds)
        if rule is not None:
            self._bad("invalid_bet", e, rule[0], rule[1])
        if d.tile in kinds:
            kinds.remove(d.tile)
        for k in set(kinds):
            self._take(st, k, kinds.count(k), e, f"exposes for a {e.kind}")
            self._show(k, kinds.count(k))
        first = min([d.tile, *kinds])
        meld = Meld(e.kind, first, False)
        st.melds.append(meld)
        st.meld_from.append(e.from_)
        self.any_claim = True
        st.last_drawn = st.last_from = None
        self._note_fourth_set(st, e.from_)
        if e.kind == "kong":
            st.kong_chain = 1
            self.phase, self.turn = "replacement", e.seat
            self.pending_kong = (e.seat, d.tile)
        else:
            self.phase, self.turn = "turn", e.seat
        self.log.append(f"{e.seat} {e.kind} {meld.describe()} from {e.from_}")

    def _claim_rule(self, e: MeldClaimed, frm: str, tile: int, kinds: list[int]) -> tuple[str, str] | None:
        """Why the rules do not allow this claim, if they do not (article, message)."""
        simplified = self.variant == "simplified"
        if simplified and e.kind != "kong":
            return ("MJ art. 5(b)(3); RULES §4.5", f"simplified Mah-Jong has no {e.kind} from a discard")
        if simplified and not self.allow_discard_kong:
            return (
                "MJ art. 5(b)(3); RULES §8.4 M13",
                "this table allows no exposed kong from a discard (mj.s.allow_discard_kong)",
            )
        if tile not in kinds:
            return (TURN_RULE, f"the {e.kind} {show(kinds)} does not use the discard {code(tile)}")
        if e.kind == "chow":
            if e.seat != next_seat(frm, self.order):
                return (
                    "MJ art. 5(a)(3); RULES §4.5",
                    f"a chow may be claimed only by the next player after {frm}, not by {e.seat}",
                )
            if not is_chow(kinds):
                return ("MJ art. 5(a)(3); RULES §4.1", f"{show(kinds)} is not a chow")
        elif len(kinds) != (4 if e.kind == "kong" else 3) or len(set(kinds)) != 1:
            return ("MJ art. 5(a)(4)–(5); RULES §4.1", f"{show(kinds)} is not a {e.kind}")
        if e.kind == "kong" and self.seats[e.seat].barred_kong:
            return (VIEWED_RULE, f"{e.seat} looked at another's tiles and may make no kong")
        return None

    def _note_fourth_set(self, st: SeatState, frm: str) -> None:
        """(a)(2): the claim gave ``st`` a 4th exposed set, all four of one suit."""
        if len(st.melds) < 4:  # fewer than four sets: no fourth exposed one
            return
        exposed = st.exposed
        suits = {m.first // 9 if m.first < 27 else None for m in exposed}
        if len(exposed) == 4 and len(suits) == 1 and None not in suits:
            st.fourth_set_from, st.draws_since_fourth = frm, 0

    def _kong(self, e: FeedEvent) -> None:
        assert isinstance(e, KongDeclared)
        st = self.seats.get(e.seat)
        if st is None:
            self._bad("invalid_deal", e, TURN_RULE, f"no player sits at {e.seat}")
            return
        kind = index(e.tile.code)
        if self.phase != "turn" or e.seat != self.turn:
            self._bad(
                "invalid_deal", e, TURN_RULE, f"{e.seat} declares a kong out of turn ({self._expecting()})"
            )
        if st.barred_kong:
            self._bad(
                "invalid_bet", e, VIEWED_RULE, f"{e.seat} looked at another's tiles and may make no kong"
            )
        chained = st.last_from == "tail"
        if e.kind == "concealed":
            self._take(st, kind, 4, e, "declares a concealed kong with")
            st.melds.append(Meld("kong", kind, True))
            st.meld_from.append(None)
            self.phase = "replacement"
        else:
            at = next(
                (
                    i
                    for i, m in enumerate(st.melds)
                    if m.kind == "pung" and m.first == kind and not m.concealed
                ),
                None,
            )
            if at is None:
                self._bad(
                    "invalid_deal", e, KONG_RULE_C, f"{e.seat} adds {code(kind)} to a pung he has not exposed"
                )
                st.melds.append(Meld("kong", kind, False))
                st.meld_from.append(None)
            else:
                st.melds[at] = Meld("kong", kind, False)
            self._take(st, kind, 1, e, "adds to a kong")
            self._show(kind, 1)
            self.phase = "robbable"
        st.kong_chain = st.kong_chain + 1 if chained else 1
        self.pending_kong = (e.seat, kind)
        self.turn = e.seat
        self.log.append(f"{e.seat} {e.kind} kong {code(kind)}")

    def _win(self, e: FeedEvent) -> None:
        assert isinstance(e, WinDeclared)
        st = self._acting_seat(e, e.seat)
        if st is None:
            return
        if self.phase == "ended" and not self._competing(e):
            self._bad("invalid_deal", e, TURN_RULE, "a win declared after the game ended")
            return
        kind = index(e.tile.code)
        hand = list(st.hand)
        discard: DiscardFacts | None = None
        if e.source == "self_drawn":
            ok = self.phase == "turn" and e.seat == self.turn and st.last_drawn == kind
            if not ok:
                self._bad(
                    "invalid_deal",
                    e,
                    TURN_RULE,
                    f"{e.seat} declares a self-drawn win on {code(kind)}, which is not the tile he just drew",
                )
        elif e.source == "discard":
            d = self.last_discard
            ok = (
                self.phase in ("discarded", "ended")
                and d is not None
                and e.from_ == d.seat
                and d.tile == kind
                and e.seat != d.seat
            )
            if not ok:
                self._bad(
                    "invalid_deal",
                    e,
                    TURN_RULE,
                    f"{e.seat} wins on a discard "
                    f"{code(kind)} from {e.from_} that is not the discard on the table",
                )
            discard = d
            hand[kind] += 1
        else:
            ok = (
                self.pending_kong is not None
                and self.pending_kong == (e.from_, kind)
                and (
                    self.phase in ("robbable", "ended")
                    or (self.variant == "simplified" and self.phase == "replacement")
                )
            )
            if not ok:
                self._bad(
                    "invalid_deal",
                    e,
                    "MJ art. 6(a)(2); RULES §4.5",
                    f"{e.seat} robs a kong of {code(kind)} from {e.from_} that was not just declared",
                )
            hand[kind] += 1
        self.wins.append(self._claim(e, st, kind, hand, discard))
        self.phase = "ended"
        self.log.append(
            f"{e.seat} declares a win on {code(kind)} ({e.source.replace('_', ' ')}"
            + (f" from {e.from_})" if e.from_ else ")")
        )

    def _competing(self, e: WinDeclared) -> bool:
        """Another win on the same discard or kong, declared at once (art. 5(a)(6))."""
        if not self.wins:
            return False
        first = self.wins[-1].event
        return (
            first.seq == e.seq - 1
            and first.source == e.source != "self_drawn"
            and first.from_ == e.from_
            and first.tile == e.tile
        )

    def _claim(
        self, e: WinDeclared, st: SeatState, kind: int, hand: list[int], discard: DiscardFacts | None
    ) -> WinClaim:
        self_drawn = e.source == "self_drawn"
        banker = self.order[0]
        heavenly = (
            self_drawn
            and e.seat == banker
            and st.discards == 0
            and st.draws == self.layout.hand + 1
            and not st.melds
        )
        earthly = (
            e.source == "discard" and discard is not None and discard.first_of_banker and e.seat != banker
        )
        return WinClaim(
            event=e,
            seat=e.seat,
            source=e.source,
            tile=kind,
            hand=tuple(hand),
            melds=tuple(st.melds),
            meld_from=tuple(st.meld_from),
            discard=discard,
            on_replacement=self_drawn and st.last_from == "tail",
            kong_upon_kong=self_drawn and st.last_from == "tail" and st.kong_chain >= 2,
            last_tile=self_drawn and self.wall_left == 0,
            heavenly=heavenly,
            earthly=earthly,
            barred=st.barred_win,
            claim_error=st.claim_error_open,
            fourth_set_from=st.fourth_set_from,
            draws_since_fourth=st.draws_since_fourth,
        )

    def _game_drawn(self, e: FeedEvent) -> None:
        assert isinstance(e, GameDrawn)
        if self.wall_left > 0:
            self._bad(
                "invalid_deal",
                e,
                "RULES §4.3, §8.4 M11",
                f"game drawn with {self.wall_left} tiles still in the wall",
            )
        elif self.phase != "discarded":
            self._bad(
                "invalid_deal", e, TURN_RULE, f"game drawn before the turn was over ({self._expecting()})"
            )
        self.drawn_game = e
        self.phase = "ended"
        self.log.append("game drawn: the wall is exhausted")

    def _pung_withdrawn(self, e: FeedEvent) -> None:
        assert isinstance(e, PungCallWithdrawn)
        st = self.seats.get(e.seat)
        if st is not None and self.variant == "conventional":
            st.barred_win = f"{e.seat} called «p'ông» at seq {e.seq} and did not make it"
        self.log.append(f"{e.seat} withdraws a pung call")

    def _tiles_seen(self, e: FeedEvent) -> None:
        assert isinstance(e, TilesSeen)
        st = self.seats.get(e.seat)
        if st is not None:
            st.barred_kong = True
        self.log.append(f"{e.seat} saw another's tiles: no kong for him this game")

    def _claim_error(self, e: FeedEvent) -> None:
        assert isinstance(e, ClaimError)
        st = self.seats.get(e.seat)
        if st is not None:
            st.claim_error_open, st.claim_error_drew = True, False
        self.log.append(f"{e.seat} claim error")

    def _claim_corrected(self, e: FeedEvent) -> None:
        assert isinstance(e, ClaimCorrected)
        st = self.seats.get(e.seat)
        if st is None:
            return
        if st.claim_error_open and not st.claim_error_drew:
            st.claim_error_open = False
            self.log.append(f"{e.seat} corrects his claim")
        else:
            self.log.append(f"{e.seat} corrects his claim too late (after his next draw)")

    def _topped_up(self, e: FeedEvent) -> None:
        assert isinstance(e, CapitalToppedUp)
        if e.seat in self.capital and self.phase != "ended":
            self.capital[e.seat] += e.amount

    def finish(self) -> None:
        """Close the replay: a deal still in progress is reported."""
        if self.phase == "deal" and self.dealt:
            self.findings.append(
                Finding(
                    "invalid_deal",
                    self.opened.table,
                    self.opened.round,
                    f"the deal stopped after {self.dealt} of {len(self.deal)} tiles",
                    rule=DEAL_RULE,
                )
            )


LogMove = tuple[str, str, int, str]
"""A draw or a discard in :attr:`GameState.log`: seat, ``+`` or ``-``, tile kind and a suffix
(``(tail)`` for a kong replacement); :func:`log_line` writes it as ``E+5B``, ``E-RD``."""


def log_line(entry: str | LogMove) -> str:
    """One line of the tile log as text: ``E+5B``, ``S+7C(tail)``, ``W-RD`` or a line as written."""
    if isinstance(entry, str):
        return entry
    seat, sign, kind, suffix = entry
    return f"{seat}{sign}{CODES[kind]}{suffix}"


def dealt_text(seat: str, hand: tuple[int, ...]) -> str:
    """The line of a seat's dealt tiles: ``E dealt 1B 1B 2C …``."""
    return f"{seat} dealt {show(_tiles(hand))}"


def _tiles(hand: Sequence[int]) -> list[int]:
    out: list[int] = []
    for k, n in enumerate(hand):
        if n:
            out += [k] * n
    return out


_KIND: dict[str, int] = {c: index(c) for c in CODES}
"""The kind index of each tile code, looked up once per drawn or discarded tile."""

_HONOURS_ORDER: tuple[int, ...] = tuple(HONOURS)
"""The honours in the order ``HONOURS`` iterates, so ``held_back`` keeps its order."""


def _nth(n: int) -> str:
    return {5: "fifth", 6: "sixth", 7: "seventh"}.get(n, f"{n}th")


_NOT_AFTER_END = (TileDrawn, TileDiscarded, MeldClaimed, KongDeclared, GameDrawn)
"""What no one may do once the game has ended."""

_Handler = Callable[[GameState, Any], None] | None


class _ByClass(dict[type, _Handler]):
    """The handler of each event class: a class not listed takes its nearest listed base's
    (a compact fact's class is a subclass of its model, ``ledger.codec.compact``), found once."""

    def __missing__(self, cls: type) -> _Handler:
        handler = next((self[base] for base in cls.__mro__[1:] if base in self), None)
        self[cls] = handler
        return handler


_HANDLERS: _ByClass = _ByClass(
    {
        MahjongDiceThrown: GameState._dice,
        WallBroken: GameState._wall_broken,
        TileDrawn: GameState._drawn,
        TileDiscarded: GameState._discarded,
        MeldClaimed: GameState._claimed,
        KongDeclared: GameState._kong,
        WinDeclared: GameState._win,
        GameDrawn: GameState._game_drawn,
        PungCallWithdrawn: GameState._pung_withdrawn,
        TilesSeen: GameState._tiles_seen,
        ClaimError: GameState._claim_error,
        ClaimCorrected: GameState._claim_corrected,
        CapitalToppedUp: GameState._topped_up,
    }
)


def replay(
    opened: MahjongRoundOpened, events: list[FeedEvent], *, allow_discard_kong: bool = True
) -> GameState:
    """Replay a game's events (``round_opened`` first) into its final state."""
    state = GameState(opened, allow_discard_kong=allow_discard_kong)
    handlers = _HANDLERS
    for e in events:  # GameState.apply, inlined: one call per event, not two
        if state.phase == "ended" and isinstance(e, _NOT_AFTER_END):
            state._bad("invalid_deal", e, TURN_RULE, "play continued after the game ended")
            continue
        handler = handlers[e.__class__]
        if handler is not None:
            handler(state, e)
    state.finish()
    return state


__all__ = [
    "DiscardFacts",
    "GameState",
    "LogMove",
    "SeatState",
    "WinClaim",
    "dealt_text",
    "distance",
    "log_line",
    "replay",
]
