"""The judging's speed paths give exactly what the plain, fact-by-fact code gives (issue 17).

- :meth:`Round.replay` indexes a round as recording its facts one by one does, and
  :meth:`Round.of_type` gives what an ``isinstance`` filter over the events gives;
- ``check_time_order`` (a test over all the times, then the event-by-event walk only when a
  time goes back) and ``check_life_cycle`` (set tests before the per-bet walks) give the same
  findings, in the same order, as the plain walks kept here as the reference, on rounds with
  times shuffled, settlements dropped, doubled or of unknown bets.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import ClassVar, Literal

from ledger.domain.findings import BETTING_CLOSED_RULE, Finding
from ledger.domain.round import Round
from ledger.feed.envelope import BetPlaced, BetSettled, FeedEvent, RoundOpened
from ledger.games import GAMES
from ledger.games.base import Game
from ledger.verify.checks import (
    MAX_DISORDER_FINDINGS,
    TIME_RULE,
    betting_closed_at,
    check_life_cycle,
    check_time_order,
)
from tests.ledger.example_rounds import example_rounds


def _recorded_one_by_one(facts: list[FeedEvent]) -> Round:
    first = facts[0]
    assert isinstance(first, RoundOpened)
    rnd = Round(first)
    for fact in facts[1:]:
        rnd.record(fact)
    return rnd


def _index(rnd: Round) -> tuple[object, ...]:
    return (
        rnd.version,
        rnd.events,
        rnd.bets,
        rnd.duplicate_bets,
        rnd.settlements,
        rnd.carried,
        rnd.increases,
        rnd.ended_by,
    )


def test_replay_indexes_as_recording_one_by_one_and_of_type_filters_by_class(examples: Path) -> None:
    for facts in example_rounds(examples):
        rnd = Round.replay(facts)
        assert _index(rnd) == _index(_recorded_one_by_one(facts))
        classes: list[type[FeedEvent]] = [type(f) for f in facts]
        classes += [FeedEvent, BetPlaced, BetSettled]
        for cls in dict.fromkeys(classes):
            assert list(rnd.of_type(cls)) == [f for f in facts if isinstance(f, cls)]


class _LateEvent(FeedEvent):
    """A class no round recorded before: of_type must still find it."""

    TYPE: ClassVar[str] = "late_event"
    type: Literal["late_event"]


def test_a_class_recorded_late_is_found_and_a_free_type_can_end_a_round(examples: Path) -> None:
    facts = example_rounds(examples)[0]
    opened = facts[0]
    rnd = Round.replay([opened])
    assert list(rnd.of_type(FeedEvent)) == [opened]
    late = _LateEvent(
        v=1, table=opened.table, game=opened.game, round=opened.round, seq=2, at=opened.at, type="late_event"
    )
    rnd.record(late)
    assert list(rnd.of_type(_LateEvent)) == [late]
    assert list(rnd.of_type(FeedEvent)) == [opened, late]
    assert rnd.ended_by is None
    # A plain FeedEvent's ``type`` is any string: it is looked at fact by fact.
    ending = FeedEvent(
        v=1,
        table=opened.table,
        game=opened.game,
        round=opened.round,
        seq=3,
        at=opened.at,
        type="round_voided",
    )
    rnd.record(ending)
    assert rnd.ended_by is ending and rnd.is_voided and rnd.version == 3


# -- the reference: the plain walks -----------------------------------------------------------


def _finding(code: str, rnd: Round, bet: str | None, rule: str, message: str, **kw: object) -> Finding:
    return Finding(code, rnd.table, rnd.round, message, rule=rule, bet=bet, **kw)  # type: ignore[arg-type]


def _plain_time_order(rnd: Round) -> Iterator[Finding]:
    opened, end = rnd.opened, rnd.ended_by
    reported = 0
    previous = None
    for fact in rnd.events:
        if reported >= MAX_DISORDER_FINDINGS:
            return
        if fact is end and fact.at < opened.at:
            reported += 1
            yield _disorder(
                rnd,
                fact,
                opened,
                f"the round was {fact.type.removeprefix('round_')} "
                f"at {fact.at.isoformat()}, before it was opened at "
                f"{opened.at.isoformat()}",
            )
        elif previous is not None and fact.at < previous.at:
            reported += 1
            yield _disorder(
                rnd,
                fact,
                previous,
                f"{fact.type} (seq {fact.seq}) is timed "
                f"{fact.at.isoformat()}, before {previous.type} (seq {previous.seq}) "
                f"at {previous.at.isoformat()}: the round goes back in time",
            )
        previous = fact


def _disorder(rnd: Round, fact: FeedEvent, before: FeedEvent, message: str) -> Finding:
    return _finding(
        "timestamp_disorder",
        rnd,
        getattr(fact, "bet", None),
        TIME_RULE,
        message,
        expected={"not_before": before.at.isoformat(), "after_seq": before.seq},
        recorded={"at": fact.at.isoformat()},
        severity="warning",
        seq=fact.seq,
    )


def _plain_life_cycle(rnd: Round, game: Game, *, is_newest: bool) -> Iterator[Finding]:
    closed_at = betting_closed_at(rnd, game)
    for bet in rnd.of_type(BetPlaced):
        if closed_at is not None and bet.seq > closed_at and not game.allowed_after_close(bet):
            yield _finding(
                "bet_after_close",
                rnd,
                bet.bet,
                BETTING_CLOSED_RULE,
                f"bet {bet.bet} placed at seq {bet.seq}, after betting closed at seq {closed_at}",
                seq=bet.seq,
            )
    for dup in rnd.duplicate_bets:
        yield _finding(
            "duplicate_bet",
            rnd,
            dup.bet,
            "FEED §2 (bet ids are unique in a round)",
            f"bet id {dup.bet} placed again at seq {dup.seq}",
            seq=dup.seq,
        )
    for bet_id, settled in rnd.settlements.items():
        if bet_id not in rnd.bets:
            yield _finding(
                "unknown_bet",
                rnd,
                bet_id,
                "FEED §2",
                f"bet {bet_id} settled at seq {settled[0].seq} was never placed",
                seq=settled[0].seq,
            )
        elif len(settled) > 1:
            yield _finding(
                "duplicate_settlement",
                rnd,
                bet_id,
                "FEED §2",
                f"bet {bet_id} settled {len(settled)} times (seq {', '.join(str(s.seq) for s in settled)})",
                seq=settled[1].seq,
            )
    if rnd.ended_by is None:
        yield Finding(
            "round_incomplete",
            rnd.table,
            rnd.round,
            rule="FEED §10",
            message="no round_closed or round_voided"
            + (" (the newest round of its table: still in play)" if is_newest else ""),
            severity="info" if is_newest else "error",
        )
        return
    for bet_id in rnd.bets:
        if bet_id not in rnd.settlements:
            yield _finding(
                "missing_settlement",
                rnd,
                bet_id,
                "FEED §2",
                f"bet {bet_id} has no bet_settled in a {'voided' if rnd.is_voided else 'closed'} round",
            )


# -- faulty rounds ------------------------------------------------------------------------------


def _retimed(facts: list[FeedEvent], rng: random.Random) -> list[FeedEvent]:
    """Some facts moved back (or forward) in time; sometimes many, sometimes the end only."""
    share = rng.choice([0.0, 0.05, 0.3, 1.0])
    out = []
    for i, fact in enumerate(facts):
        if rng.random() < share or (i == len(facts) - 1 and rng.random() < 0.3):
            shift = timedelta(seconds=rng.choice([-7200, -60, -1, 0, 1, 3600]))
            fact = fact.model_copy(update={"at": fact.at + shift})
        out.append(fact)
    return out


def _resettled(facts: list[FeedEvent], rng: random.Random) -> list[FeedEvent]:
    """Settlements dropped, doubled or renamed to an unknown bet; the end dropped or a bet
    placed late; seqs renumbered."""
    out: list[FeedEvent] = []
    for fact in facts:
        roll = rng.random()
        if isinstance(fact, BetSettled) and roll < 0.1:
            continue
        if isinstance(fact, BetSettled) and roll < 0.2:
            out.append(fact)
        elif isinstance(fact, BetSettled) and roll < 0.3:
            fact = fact.model_copy(update={"bet": "nobody"})
        elif fact.type in ("round_closed", "round_voided") and roll < 0.2:
            continue
        out.append(fact)
    if rng.random() < 0.3:
        placed = [f for f in out if isinstance(f, BetPlaced)]
        if placed:
            out.insert(len(out) - 1, rng.choice(placed))
    return [f.model_copy(update={"seq": n}) for n, f in enumerate(out, 1)]


def test_time_order_and_life_cycle_find_what_the_plain_walks_find(examples: Path) -> None:
    rng = random.Random(17)
    rounds = example_rounds(examples)
    disorders = faults = 0
    for _ in range(6):
        for facts in rounds:
            rnd = Round.replay(_resettled(_retimed(facts, rng), rng))
            game = GAMES[rnd.game]
            expected = list(_plain_time_order(rnd))
            assert list(check_time_order(rnd)) == expected
            disorders += len(expected)
            for newest in (False, True):
                want = list(_plain_life_cycle(rnd, game, is_newest=newest))
                got = [
                    f
                    for f in check_life_cycle(rnd, game, is_newest=newest)
                    if f.code != "rulebook_hash_mismatch"
                ]
                assert got == want
                faults += len(want)
    assert disorders > 50 and faults > 50  # the faulty paths were taken


def test_facts_appended_to_the_events_by_hand_are_still_found(examples: Path) -> None:
    facts = example_rounds(examples)[0]
    rnd = Round.replay(facts[:1])
    rnd.events.extend(facts[1:])
    assert list(rnd.of_type(FeedEvent)) == facts
    for fact in facts:
        assert fact in list(rnd.of_type(type(fact)))
