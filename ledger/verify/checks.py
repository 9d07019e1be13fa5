"""The checks verify runs on every round, whatever the game, and every comparison of what the
rules derive with what the table recorded.

Checks yield findings and keep going (beancount's habit): a round receives every finding that
applies to it. The game-specific part comes from ``game.derive(round)`` or the game's session
(``ledger.games.base.Derivation``, pure); comparing what it says is due with what the table
recorded lives here for each bet's settlement (every game); what a game compares beyond bets
(an SP9 bank's layers, Mah-Jong payments and fees) is its own ``compare.py``, called through
``Game.compare``.
"""

from __future__ import annotations

from collections.abc import Iterator
from operator import attrgetter

from ledger.domain.findings import BETTING_CLOSED_RULE, Finding, round_finding
from ledger.domain.money import same_amount, text
from ledger.domain.round import Round
from ledger.feed.envelope import BetPlaced, BetSettled, FeedEvent
from ledger.games.base import Derivation, Game, Settlement


def check_round(
    rnd: Round, game: Game, *, is_newest: bool = False, derivation: Derivation | None = None
) -> list[Finding]:
    """Every finding for one recorded round: life cycle, limits, then the game's rules.

    ``derivation`` is the game's, when the caller derived it in context (a game session);
    otherwise ``game.derive`` is run here. The order is the one ``Derivation`` documents.
    """
    findings = list(check_life_cycle(rnd, game, is_newest=is_newest))
    findings += check_time_order(rnd)
    findings += check_limits(rnd)
    if derivation is None:
        derivation = game.derive(rnd)
    findings += derivation.findings
    if game.compare is not None:  # SP9's bank, Mah-Jong's payments: no call for the others
        findings += game.compare(rnd, derivation)
    findings += derivation.session_findings
    findings += compare_settlements(rnd, derivation)
    return findings


_CLOSERS: dict[frozenset[str], frozenset[str]] = {}
"""Per game's ``closes_betting``: the types that close its betting, with ``betting_closed``."""


def betting_closed_at(rnd: Round, game: Game) -> int | None:
    """The ``seq`` of the first event that closes betting (FEED §10), if any."""
    closers = _CLOSERS.get(game.closes_betting)
    if closers is None:
        closers = _CLOSERS[game.closes_betting] = game.closes_betting | {"betting_closed"}
    for fact in rnd.events:
        if fact.type in closers:
            return fact.seq
    return None


def check_life_cycle(rnd: Round, game: Game, *, is_newest: bool) -> Iterator[Finding]:
    """Late bets, duplicate ids, settlements of unknown bets, missing settlements, open rounds."""
    bets, settlements = rnd.bets, rnd.settlements
    # A round without bets has no bet_placed (the first one is always in ``bets``, or
    # duplicates a carried bet that is): no scan for the close of betting (Mah-Jong).
    closed_at = betting_closed_at(rnd, game) if bets else None
    if closed_at is not None:
        for bet in rnd.of_type(BetPlaced):
            if bet.seq > closed_at and not game.allowed_after_close(bet):
                yield round_finding(
                    "bet_after_close",
                    rnd,
                    bet.bet,
                    BETTING_CLOSED_RULE,
                    f"bet {bet.bet} placed at seq {bet.seq}, after betting closed at seq {closed_at}",
                    seq=bet.seq,
                )
    for dup in rnd.duplicate_bets:
        yield round_finding(
            "duplicate_bet",
            rnd,
            dup.bet,
            "FEED §2 (bet ids are unique in a round)",
            f"bet id {dup.bet} placed again at seq {dup.seq}",
            seq=dup.seq,
        )
    if not _settled_once(bets, settlements):
        yield from _settlement_faults(rnd)
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
    if not bets.keys() <= settlements.keys():
        for bet_id in bets:
            if bet_id not in settlements:
                yield round_finding(
                    "missing_settlement",
                    rnd,
                    bet_id,
                    "FEED §2",
                    f"bet {bet_id} has no bet_settled in a {'voided' if rnd.is_voided else 'closed'} round",
                )
    if rnd.opened.rules is not None and rnd.opened.rules.content_hash() != rnd.opened.rules_hash:
        yield Finding(
            "rulebook_hash_mismatch",
            rnd.table,
            rnd.round,
            rule="FEED §2",
            message="the stored rulebook does not hash to the stored rulebook hash",
            expected={"rules_hash": rnd.opened.rules.content_hash()},
            recorded={"rules_hash": rnd.opened.rules_hash},
        )


def _settled_once(bets: dict[str, BetPlaced], settlements: dict[str, list[BetSettled]]) -> bool:
    """Every settled bet id was placed, and settled only once: the common case, told by a set
    test and the longest list, without a step per bet."""
    return settlements.keys() <= bets.keys() and (not settlements or max(map(len, settlements.values())) == 1)


def _settlement_faults(rnd: Round) -> Iterator[Finding]:
    """``unknown_bet`` and ``duplicate_settlement``, in the order the bets were first settled."""
    for bet_id, settled in rnd.settlements.items():
        if bet_id not in rnd.bets:
            yield round_finding(
                "unknown_bet",
                rnd,
                bet_id,
                "FEED §2",
                f"bet {bet_id} settled at seq {settled[0].seq} was never placed",
                seq=settled[0].seq,
            )
        elif len(settled) > 1:
            yield round_finding(
                "duplicate_settlement",
                rnd,
                bet_id,
                "FEED §2",
                f"bet {bet_id} settled {len(settled)} times (seq {', '.join(str(s.seq) for s in settled)})",
                seq=settled[1].seq,
            )


TIME_RULE = "FEED §1 (at: the time the table recorded the event)"
_AT = attrgetter("at")
MAX_DISORDER_FINDINGS = 5
"""Time-disorder warnings reported per round (a clock that jumped back once shifts many)."""


def check_time_order(rnd: Round) -> Iterator[Finding]:
    """``timestamp_disorder`` (warning): an event of the round recorded at an earlier time than
    the event before it, or a round closed or voided before it was opened."""
    ats = list(map(_AT, rnd.events))
    if sorted(ats) == ats:
        # Times that never go back (the common case, tested in C): a list sorted already
        # sorts to itself (a stable sort of a non-decreasing list compares each neighbour
        # once) and to nothing else, so no event is before the one before it, and the end is
        # not before the opening (the first event).
        return iter(())
    return _time_disorder(rnd)


def _time_disorder(rnd: Round) -> Iterator[Finding]:
    """The findings of :func:`check_time_order`, event by event."""
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
    return round_finding(
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


def check_limits(rnd: Round) -> Iterator[Finding]:
    """Stakes outside the rulebook's ``limits.<spot kind>`` (RULES §8 G3)."""
    limits = rnd.rules.limits
    if not limits:
        return
    for bet in rnd.bets.values():
        kind = getattr(bet.spot, "kind", None)
        limit = limits.get(kind) if isinstance(kind, str) else None
        if limit is None:
            continue
        if limit.min is not None and bet.amount < limit.min:
            yield round_finding(
                "invalid_bet",
                rnd,
                bet.bet,
                "RULES §8 G3",
                f"stake {text(bet.amount)} is below the table minimum {text(limit.min)} for {kind}",
                seq=bet.seq,
            )
        if limit.max is not None and bet.amount > limit.max:
            yield round_finding(
                "invalid_bet",
                rnd,
                bet.bet,
                "RULES §8 G3",
                f"stake {text(bet.amount)} is above the table maximum {text(limit.max)} for {kind}",
                seq=bet.seq,
            )


def compare_settlements(rnd: Round, derivation: Derivation) -> Iterator[Finding]:
    """``settlement_mismatch`` / ``commission_mismatch`` for each judged bet the table settled."""
    settlements = rnd.settlements
    for bet_id, due in derivation.expected.items():
        settled = settlements.get(bet_id)
        if not settled:
            continue  # reported as missing_settlement by the life-cycle check
        recorded = settled[0]
        # The common case, tested here without a generator per bet: the settlement agrees.
        # ``==`` on decimals compares by value, as ``same_amount`` does.
        if (
            due.result == recorded.result
            and due.returned == recorded.returned
            and due.won == recorded.won
            and due.commission == recorded.commission
        ):
            continue
        yield from compare_settlement(rnd, bet_id, due, recorded)


def compare_settlement(rnd: Round, bet_id: str, due: Settlement, recorded: BetSettled) -> Iterator[Finding]:
    """Compare one bet's due settlement with the recorded one."""
    settles_differently = due.result != recorded.result or not (
        same_amount(due.returned, recorded.returned) and same_amount(due.won, recorded.won)
    )
    commission_differs = not same_amount(due.commission, recorded.commission)
    if not settles_differently and not commission_differs:
        return  # the common case: nothing to write down
    rec = {
        "result": recorded.result,
        "returned": str(recorded.returned),
        "won": str(recorded.won),
        "commission": str(recorded.commission),
    }
    if settles_differently:
        yield round_finding(
            "settlement_mismatch",
            rnd,
            bet_id,
            due.rule,
            due.reason,
            expected=due.as_dict(),
            recorded=rec,
            seq=recorded.seq,
        )
    if commission_differs:
        yield round_finding(
            "commission_mismatch",
            rnd,
            bet_id,
            due.rule,
            f"commission due is {text(due.commission)}, the table took {text(recorded.commission)} "
            f"({due.reason})",
            expected=due.as_dict(),
            recorded=rec,
            seq=recorded.seq,
        )
