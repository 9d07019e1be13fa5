"""The checks verify runs on every round, whatever the game, and the settlement comparison.

Checks yield findings and keep going (beancount's habit): a round receives every finding that
applies to it. The game-specific part comes from ``game.derive(round)``
(``ledger.games.base.Derivation``); comparing what the rules say a bet is due with what the
table recorded is the same for every game and lives here.
"""

from __future__ import annotations

from collections.abc import Iterator

from ledger.feed.envelope import BetPlaced, BetSettled, FeedEvent
from ledger.findings import BETTING_CLOSED_RULE, Finding
from ledger.games.base import Derivation, Game, Settlement
from ledger.money import same_amount
from ledger.round import Round


def check_round(rnd: Round, game: Game, *, is_newest: bool = False,
                derivation: Derivation | None = None) -> list[Finding]:
    """Every finding for one recorded round: life cycle, limits, then the game's rules.

    ``derivation`` is the game's, when the caller derived it in context (a game session);
    otherwise ``game.derive`` is run here.
    """
    findings = list(check_life_cycle(rnd, game, is_newest=is_newest))
    findings += check_time_order(rnd)
    findings += check_limits(rnd)
    if derivation is None and game.derive is not None:
        derivation = game.derive(rnd)
    if derivation is not None:
        findings += derivation.findings
        findings += compare_settlements(rnd, derivation)
    return findings


def betting_closed_at(rnd: Round, game: Game) -> int | None:
    """The ``seq`` of the first event that closes betting (FEED §10), if any."""
    closers = game.closes_betting | {"betting_closed"}
    for fact in rnd.events:
        if fact.type in closers:
            return fact.seq
    return None


def check_life_cycle(rnd: Round, game: Game, *, is_newest: bool) -> Iterator[Finding]:
    """Late bets, duplicate ids, settlements of unknown bets, missing settlements, open rounds."""
    closed_at = betting_closed_at(rnd, game)
    for bet in rnd.of_type(BetPlaced):
        if closed_at is not None and bet.seq > closed_at and not game.allowed_after_close(bet):
            yield _finding("bet_after_close", rnd, bet.bet, BETTING_CLOSED_RULE,
                           f"bet {bet.bet} placed at seq {bet.seq}, after betting closed at "
                           f"seq {closed_at}", seq=bet.seq)
    for dup in rnd.duplicate_bets:
        yield _finding("duplicate_bet", rnd, dup.bet, "FEED §2 (bet ids are unique in a round)",
                       f"bet id {dup.bet} placed again at seq {dup.seq}", seq=dup.seq)
    for bet_id, settled in rnd.settlements.items():
        if bet_id not in rnd.bets:
            yield _finding("unknown_bet", rnd, bet_id, "FEED §2",
                           f"bet {bet_id} settled at seq {settled[0].seq} was never placed",
                           seq=settled[0].seq)
        elif len(settled) > 1:
            yield _finding("duplicate_settlement", rnd, bet_id, "FEED §2",
                           f"bet {bet_id} settled {len(settled)} times "
                           f"(seq {', '.join(str(s.seq) for s in settled)})", seq=settled[1].seq)
    if rnd.ended_by is None:
        yield Finding("round_incomplete", rnd.table, rnd.round, rule="FEED §10",
                      message="no round_closed or round_voided"
                      + (" (the newest round of its table: still in play)" if is_newest else ""),
                      severity="info" if is_newest else "error")
        return
    for bet_id in rnd.bets:
        if bet_id not in rnd.settlements:
            yield _finding("missing_settlement", rnd, bet_id, "FEED §2",
                           f"bet {bet_id} has no bet_settled in a "
                           f"{'voided' if rnd.is_voided else 'closed'} round")
    if rnd.opened.rules is not None and rnd.opened.rules.content_hash() != rnd.opened.rules_hash:
        yield Finding("rulebook_hash_mismatch", rnd.table, rnd.round, rule="FEED §2",
                      message="the stored rulebook does not hash to the stored rulebook hash",
                      expected={"rules_hash": rnd.opened.rules.content_hash()},
                      recorded={"rules_hash": rnd.opened.rules_hash})


TIME_RULE = "FEED §1 (at: the time the table recorded the event)"
MAX_DISORDER_FINDINGS = 5
"""Time-disorder warnings reported per round (a clock that jumped back once shifts many)."""


def check_time_order(rnd: Round) -> Iterator[Finding]:
    """``timestamp_disorder`` (warning): an event of the round recorded at an earlier time than
    the event before it, or a round closed or voided before it was opened."""
    opened, end = rnd.opened, rnd.ended_by
    reported = 0
    previous = None
    for fact in rnd.events:
        if reported >= MAX_DISORDER_FINDINGS:
            return
        if fact is end and fact.at < opened.at:
            reported += 1
            yield _disorder(rnd, fact, opened, f"the round was {fact.type.removeprefix('round_')} "
                            f"at {fact.at.isoformat()}, before it was opened at "
                            f"{opened.at.isoformat()}")
        elif previous is not None and fact.at < previous.at:
            reported += 1
            yield _disorder(rnd, fact, previous, f"{fact.type} (seq {fact.seq}) is timed "
                            f"{fact.at.isoformat()}, before {previous.type} (seq {previous.seq}) "
                            f"at {previous.at.isoformat()}: the round goes back in time")
        previous = fact


def _disorder(rnd: Round, fact: FeedEvent, before: FeedEvent, message: str) -> Finding:
    return _finding("timestamp_disorder", rnd, getattr(fact, "bet", None), TIME_RULE, message,
                    expected={"not_before": before.at.isoformat(), "after_seq": before.seq},
                    recorded={"at": fact.at.isoformat()}, severity="warning", seq=fact.seq)


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
            yield _finding("invalid_bet", rnd, bet.bet, "RULES §8 G3",
                           f"stake {bet.amount} is below the table minimum {limit.min} "
                           f"for {kind}", seq=bet.seq)
        if limit.max is not None and bet.amount > limit.max:
            yield _finding("invalid_bet", rnd, bet.bet, "RULES §8 G3",
                           f"stake {bet.amount} is above the table maximum {limit.max} "
                           f"for {kind}", seq=bet.seq)


def compare_settlements(rnd: Round, derivation: Derivation) -> Iterator[Finding]:
    """``settlement_mismatch`` / ``commission_mismatch`` for each judged bet the table settled."""
    for bet_id, due in derivation.expected.items():
        settled = rnd.settlements.get(bet_id)
        if not settled:
            continue  # reported as missing_settlement by the life-cycle check
        yield from compare_settlement(rnd, bet_id, due, settled[0])


def compare_settlement(
    rnd: Round, bet_id: str, due: Settlement, recorded: BetSettled
) -> Iterator[Finding]:
    """Compare one bet's due settlement with the recorded one."""
    rec = {"result": recorded.result, "returned": str(recorded.returned),
           "won": str(recorded.won), "commission": str(recorded.commission)}
    money_differs = not (same_amount(due.returned, recorded.returned)
                         and same_amount(due.won, recorded.won))
    if due.result != recorded.result or money_differs:
        yield _finding("settlement_mismatch", rnd, bet_id, due.rule, due.reason,
                       expected=due.as_dict(), recorded=rec, seq=recorded.seq)
    if not same_amount(due.commission, recorded.commission):
        yield _finding("commission_mismatch", rnd, bet_id, due.rule,
                       f"commission due is {due.commission}, the table took "
                       f"{recorded.commission} ({due.reason})",
                       expected=due.as_dict(), recorded=rec, seq=recorded.seq)


def _finding(code: str, rnd: Round, bet: str | None, rule: str, message: str,
             **kw: object) -> Finding:
    return Finding(code, rnd.table, rnd.round, message, rule=rule, bet=bet, **kw)  # type: ignore[arg-type]
