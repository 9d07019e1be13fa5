"""How a Mah-Jong game ends, by the rules: the winner, the hand, its fán, and who is liable.

Pure functions over a replayed :class:`~ledger.games.mahjong.state.GameState`:

- :func:`derive_end` picks the win that stands (several wins on one discard: the nearest seat in turn
  order, art. 5(a)(6), 5(b)(5)), checks the hand (RULES §4.4) and the seat's standing (a withdrawn
  pung call, art. 9(a)(2); an uncorrected claim error, art. 10(a)(7)) — a failed check is a false
  win (RULES §4.9) — and scores the best arrangement (``fan.py``);
- :func:`liability` finds the player who pays for the others (art. 10, RULES §4.8, §8.4 M16),
  as a :class:`~ledger.games.base.Verdict` on that seat.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ledger.domain.rulebook import Rulebook
from ledger.games.base import Step, Verdict
from ledger.games.mahjong.fan import (
    CAP_RULE,
    CHICKEN_RULE,
    SIMPLIFIED_BASE_RULE,
    Found,
    Score,
    WinContext,
    best,
    score,
)
from ledger.games.mahjong.hands import (
    Arrangement,
    arrangements,
    is_complete,
    is_ready,
    is_thirteen_orphans,
)
from ledger.games.mahjong.state import DiscardFacts, GameState, WinClaim
from ledger.games.mahjong.tables import LAYOUTS
from ledger.games.mahjong.tiles import (
    DRAGONS,
    GREEN_DRAGON,
    HONOURS,
    KINDS,
    WIND_OF_SEAT,
    WINDS,
    code,
    distance,
    kinds_of,
)

Ending = Literal["win", "false_win", "drawn", "open"]


Liability = Verdict[str]
"""The seat that pays for the others (包輸), and the case of art. 10 that makes him."""


@dataclass
class GameEnd:
    """What the rules make of the end of a game: how it ended, the win that stands, its score,
    why a win is false, who is liable, and the steps that show it."""

    ending: Ending
    claim: WinClaim | None = None
    score: Score | None = None
    false_reasons: list[tuple[str, str]] = field(default_factory=list)
    liability: Liability | None = None
    steps: list[Step] = field(default_factory=list)

    @property
    def winner(self) -> str | None:
        """The seat that won (a valid win only)."""
        return self.claim.seat if self.ending == "win" and self.claim else None


def derive_end(state: GameState, rules: Rulebook) -> GameEnd:
    """How a replayed game ended, under its rulebook."""
    if not state.wins:
        if state.drawn_game is not None:
            return GameEnd(
                "drawn",
                steps=[
                    Step(
                        "the wall is exhausted and nobody won: a drawn game, no payment",
                        "RULES §4.3, §8.4 M11",
                    )
                ],
            )
        return GameEnd("open")
    claim = _standing_claim(state, state.wins)
    end = GameEnd("win", claim)
    for other in state.wins:
        if other is not claim:
            end.steps.append(
                Step(
                    f"{other.seat} also declared a win on {code(other.tile)} from {other.event.from_}; "
                    f"{claim.seat} sits nearer in turn order and wins",
                    "MJ art. 5(a)(6), 5(b)(5)",
                )
            )
    end.steps.append(Step.later("MJ art. 4", _claim_text, claim))
    scores = _scores(state, claim, rules)
    if claim.barred:
        end.false_reasons.append((f"{claim.barred}: he may not win this game", "MJ art. 9(a)(2); RULES §4.9"))
    if claim.claim_error:
        end.false_reasons.append(
            (f"{claim.seat} declared a win with an uncorrected claim error", "MJ art. 10(a)(7); RULES §4.9")
        )
    if not scores:
        end.false_reasons.append((_not_winning(state, claim), _hand_rule(state)))
    if end.false_reasons:
        end.ending = "false_win"
        for reason, rule in end.false_reasons:
            end.steps.append(Step(f"false win (詐糊): {reason}; the game is void", rule))
        return end
    end.score = best(scores)
    end.steps += _score_steps(state, end.score, len(scores))
    end.liability = liability(state, claim, end.score)
    if end.liability is not None:
        end.steps.append(
            Step(
                f"{end.liability.decision} is liable and pays for the others: {end.liability.reason}",
                end.liability.rule,
            )
        )
    return end


def _standing_claim(state: GameState, wins: list[WinClaim]) -> WinClaim:
    """Of several wins declared at once on one tile, the nearest seat after the discarder's."""
    first = wins[0]
    if len(wins) == 1 or first.event.from_ is None:
        return first
    frm = first.event.from_
    return min(wins, key=lambda w: distance(frm, w.seat, state.order))


def _claim_text(claim: WinClaim) -> str:
    return f"{claim.seat}'s hand: {_hand_text(claim)}"


def _hand_text(claim: WinClaim) -> str:
    concealed = " ".join(code(k) for k in range(KINDS) for _ in range(claim.hand[k]))
    shown = [m.describe() + (" (concealed kong)" if m.concealed else "") for m in claim.melds]
    return (
        concealed
        + (f" | shown {', '.join(shown)}" if shown else "")
        + f"; wins on {code(claim.tile)} ({claim.source.replace('_', ' ')})"
    )


def _hand_rule(state: GameState) -> str:
    return (
        "MJ art. 4(a), 6(a)(3); RULES §4.4, §8.4 M19"
        if state.variant == "conventional"
        else "MJ art. 4(b); RULES §4.4"
    )


def _not_winning(state: GameState, claim: WinClaim) -> str:
    lay = LAYOUTS[state.variant]
    held = sum(claim.hand) + 3 * len(claim.melds)
    if held != lay.hand + 1:
        return f"the hand has {held} tiles, not {lay.hand + 1}"
    shape = "4 sets and a pair, or thirteen orphans" if lay.sets == 4 else "1 set and a pair"
    return f"the tiles do not form {shape}"


def _scores(state: GameState, claim: WinClaim, rules: Rulebook) -> list[Score]:
    lay = LAYOUTS[state.variant]
    if sum(claim.hand) + 3 * len(claim.melds) != lay.hand + 1:
        return []
    fixed = tuple(claim.melds)
    found = arrangements(claim.hand, fixed, lay.sets)
    if state.variant == "conventional" and is_thirteen_orphans(claim.hand, fixed):
        found.append(Arrangement((), None, thirteen_orphans=True))
    conventional = state.variant == "conventional"
    cap = rules.mj.c.max_fan if conventional else rules.mj.s.max_fan
    base = 0 if conventional else rules.mj.s.base_fan
    out = []
    for arrangement in found:
        ctx = WinContext(
            variant=state.variant,
            arrangement=arrangement,
            seat_wind=WIND_OF_SEAT[claim.seat],
            round_wind=WIND_OF_SEAT[state.opened.round_wind],
            source=claim.event.source,
            winning_tile=claim.tile,
            on_replacement=claim.on_replacement,
            kong_upon_kong=claim.kong_upon_kong,
            last_tile=claim.last_tile,
            heavenly=claim.heavenly,
            earthly=claim.earthly,
            kankan_selfdraw_only=rules.mj.kankan_selfdraw_only,
        )
        out.append(score(ctx, cap=cap, base=base))
    return out


def _score_steps(state: GameState, s: Score, ways: int) -> list[Step]:
    steps = [Step.later(_hand_rule(state), _decomposition_text, s, ways)]
    if state.variant == "simplified":
        steps.append(Step.later(SIMPLIFIED_BASE_RULE, _base_text, s.base))
    elif not s.found:
        steps.append(Step("minimum hand «Kai vu» (雞糊): 0 fán", CHICKEN_RULE))
    for f in s.found:
        steps.append(Step.later(f.element.rule, _element_text, f))
    steps.append(Step.later(CAP_RULE, _fan_text, s.fan, s.raw))
    return steps


def _base_text(base: int) -> str:
    return f"minimum hand: {base} fán"


def _element_text(f: Found) -> str:
    times = f" × {f.times}" if f.times > 1 else ""
    return f"{f.element.code} {f.element.name}{times}: +{f.fan} fán"


def _fan_text(fan: int, raw: int) -> str:
    capped = f" (capped from {raw})" if raw > fan else ""
    return f"{fan} fán{capped}"


def _decomposition_text(s: Score, ways: int) -> str:
    return f"decomposition: {s.arrangement.describe()}" + (
        f" (the best of {ways} arrangements)" if ways > 1 else ""
    )


def _found(s: Score, *codes: str) -> bool:
    return any(f.element.code in codes for f in s.found)


def _ready(hand: tuple[int, ...] | list[int], fixed: int, state: GameState) -> bool:
    lay = LAYOUTS[state.variant]
    orphans = state.variant == "conventional"
    return is_ready(hand, fixed, lay.sets, orphans, kinds_of(state.variant))


def liability(state: GameState, claim: WinClaim, s: Score) -> Liability | None:
    """The liable seat under art. 10 (MJ-C (a)(1)–(6), MJ-S (b)(1)–(2)), after the exemptions."""
    if state.variant == "simplified":
        return _liability_simplified(state, claim)
    if _found(s, "D11", "D12"):
        return None  # (a)(9): pure terminals or all honours
    if claim.source == "self_drawn":
        if claim.fourth_set_from is not None and claim.draws_since_fourth == 1 and _found(s, "D6"):
            return Verdict(
                claim.fourth_set_from,
                "MJ art. 10(a)(2); RULES §4.8(2)",
                f"his discard gave {claim.seat} a 4th exposed set of one suit and "
                f"{claim.seat} self-drew his pure-one-suit win on the next draw",
            )
        return None
    d = claim.discard
    if claim.source != "discard" or d is None:
        return None
    if d.tile in HONOURS and d.visible_before == 0:
        return None  # (a)(10): a dragon or wind not yet visible (生張)
    exposed = [m for m in claim.melds if not m.concealed]
    by_suit = [sum(1 for m in exposed if m.first < 27 and m.first // 9 == suit) for suit in range(3)]
    if max(by_suit) >= 3 and _found(s, "D6"):
        return Verdict(
            d.seat,
            "MJ art. 10(a)(1); RULES §4.8(1)",
            f"{claim.seat} had {max(by_suit)} exposed sets of one suit and won a "
            "pure-one-suit hand on his discard",
        )
    dragons = sum(1 for m in exposed if m.first in DRAGONS)
    winds = sum(1 for m in exposed if m.first in WINDS)
    if (_found(s, "D9") and dragons >= 2) or (_found(s, "D10") and winds >= 3):
        return Verdict(
            d.seat,
            "MJ art. 10(a)(3); RULES §4.8(3), §8.4 M16",
            "his discard completed big three dragons / big four winds after the honour sets were exposed",
        )
    if d.held_back:
        return Verdict(
            d.seat,
            "MJ art. 10(a)(4); RULES §4.8(4)",
            f"he kept the last {code(d.held_back[0])} (絕張) and discarded {code(d.tile)}",
        )
    was_ready = _was_ready(state, d)
    if not was_ready and d.hand_at_discard[d.tile] >= 3:
        return Verdict(
            d.seat,
            "MJ art. 10(a)(5); RULES §4.8(5), §8.4 M16",
            f"not ready, he broke his triplet of {code(d.tile)}",
        )
    after = list(d.hand_at_discard)
    after[d.tile] -= 1
    if was_ready and not _ready(after, d.fixed, state):
        return Verdict(
            d.seat,
            "MJ art. 10(a)(6); RULES §4.8(6), §8.4 M16",
            f"ready to win, he broke his own hand by discarding {code(d.tile)}",
        )
    return None


def _was_ready(state: GameState, d: DiscardFacts) -> bool:
    """Ready before the discard: his hand at the start of the turn was waiting, or the hand he
    held when discarding was already a win he did not claim (RULES §8.4 M16)."""
    lay = LAYOUTS[state.variant]
    if is_complete(d.hand_at_discard, d.fixed, lay.sets, state.variant == "conventional"):
        return True
    return d.turn_start is not None and _ready(d.turn_start[0], d.turn_start[1], state)


def _liability_simplified(state: GameState, claim: WinClaim) -> Liability | None:
    d = claim.discard
    if claim.source != "discard" or d is None:
        return None
    if d.tile == GREEN_DRAGON and d.visible_before == 0:
        return None  # (b)(4): a green dragon not yet visible
    if GREEN_DRAGON in d.held_back:
        return Verdict(
            d.seat,
            "MJ art. 10(b)(1); RULES §4.8",
            f"he kept the last green dragon and discarded {code(d.tile)}",
        )
    if d.hand_at_discard[d.tile] >= 3 and _was_ready(state, d):
        return Verdict(
            d.seat,
            "MJ art. 10(b)(2); RULES §4.8",
            f"ready to win, he broke his concealed triplet of {code(d.tile)}",
        )
    return None
