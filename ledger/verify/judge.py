"""Judging rounds in the order the ledger stored them, with the state that spans rounds.

Most games judge a round on its own (``game.derive``). Some rules reach across rounds: a 3CB tie
carried into the table's next round, an SP9 bank's capital and runs, a STUD jackpot pool linked
across tables. :class:`RoundJudge` keeps that state for one pass over the store: a
:class:`~ledger.verify.carry.CarryTracker` and one :class:`~ledger.games.base.GameSession` per
game that has one. Verify and replay both go through it, so they always agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from ledger.feed.envelope import FeedEvent
from ledger.games import GAMES
from ledger.games.base import Derivation, GameSession
from ledger.round import Round
from ledger.verify.carry import CarryTracker
from ledger.verify.checks import check_round
from ledger.verify.findings import Finding


@dataclass
class Judged:
    """One round with its derivation and every finding about it."""

    round: Round
    derivation: Derivation
    findings: list[Finding]


class RoundJudge:
    """Judges rounds handed to it in store order (by their closing event)."""

    def __init__(self) -> None:
        self._sessions: dict[str, GameSession] = {}
        self._carries = CarryTracker()

    def judge(self, facts: list[FeedEvent], *, is_newest: bool = False) -> Judged:
        """Replay one round from its facts and judge it against the rules and earlier rounds."""
        rnd = Round.replay(facts)
        game = GAMES[rnd.game]
        derivation: Derivation | None = None
        if is_newest and rnd.ended_by is None:
            # In play when the log was read (an ingest may be dealing it right now): its deal
            # and settlement are not judged yet; only what is already final (late bets,
            # duplicate ids, limits) is, and the round itself is information.
            derivation = Derivation()
        elif game.session is not None:
            session = self._sessions.get(game.key)
            if session is None:
                session = self._sessions[game.key] = game.session()
            derivation = session.derive(rnd)
        elif game.derive is not None:
            derivation = game.derive(rnd)
        findings = check_round(rnd, game, is_newest=is_newest, derivation=derivation)
        if game.carries_bets:
            findings += self._carries.follow(rnd)
        return Judged(rnd, derivation or Derivation(), findings)

    def finish(self) -> list[Finding]:
        """Findings only the end of the log reveals: carried bets still in play, and those of
        every game session."""
        return self._carries.outstanding() + [
            f for session in self._sessions.values() for f in session.finish()]
