"""Judging rounds in the order the ledger stored them, with the state that spans rounds.

Most games judge a round on its own (``game.derive``). Some rules reach across rounds: a 3CB tie
carried into the table's next round, an SP9 bank's capital and runs, a STUD jackpot pool linked
across tables. :class:`RoundJudge` keeps that state for one pass over the store: a
:class:`~ledger.verify.carry.CarryTracker` and one :class:`~ledger.games.base.GameSession` per
game that has one.

This is the **one judging path** of the ledger: verify, replay, the day report, the finance
projections and the exports all get their per-round judgement from here —
:meth:`RoundJudge.judge_round` for a pass over the store (:func:`judge_rounds`), and
:func:`judge_in_context` for a projection that folds rounds a batch at a time and keeps the
state of each game in one of its rows. Nothing else calls ``game.derive`` or
``check_round`` to decide what a round was due, so no figure can disagree with verify.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ledger.domain.findings import Finding
from ledger.domain.round import Round
from ledger.feed.envelope import FeedEvent
from ledger.games import GAMES
from ledger.games.base import Dependency, Derivation, Game, GameSession
from ledger.verify.carry import CarryTracker
from ledger.verify.checks import check_round


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
        self._carrying: dict[str, set[str]] = {}
        """The tables of each game that carries bets, as seen so far."""
        self._moves: dict[str, tuple[int, str]] = {}
        """Per key of a game's ``Dependency``: how many judged rounds moved it, and the last."""
        self._plans: dict[str, _Plan] = {}
        """Per game key, what :meth:`judge_round` asks of the game, looked up once."""

    def judge(self, facts: list[FeedEvent], *, is_newest: bool = False) -> Judged:
        """Replay one round from its facts and judge it against the rules and earlier rounds."""
        return self.judge_round(Round.replay(facts), is_newest=is_newest)

    def judge_round(self, rnd: Round, *, is_newest: bool = False) -> Judged:
        """Judge one replayed round against the rules and earlier rounds."""
        key = rnd.game
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = _plan(GAMES[key])
        game, has_session, carries_bets, dependency = plan
        derivation: Derivation
        if is_newest and rnd.ended_by is None:
            # In play when the log was read (an ingest may be dealing it right now): its deal
            # and settlement are not judged yet; only what is already final (late bets,
            # duplicate ids, limits) is, and the round itself is information.
            derivation = Derivation()
        elif has_session:
            derivation = self._session(key).derive(rnd)
        else:
            derivation = game.derive(rnd)
        findings = check_round(rnd, game, is_newest=is_newest, derivation=derivation)
        if carries_bets:
            self._carrying.setdefault(key, set()).add(rnd.table)
            findings += self._carries.follow(rnd)
        if dependency is not None:
            self._moved(dependency.depends_on(rnd), f"{rnd.table}/{rnd.round}")
        return Judged(rnd, derivation, findings)

    def _moved(self, keys: list[str], name: str) -> None:
        moves = self._moves
        for key in keys:
            moves[key] = (moves[key][0] + 1 if key in moves else 1, name)

    def finish(self) -> list[Finding]:
        """Findings only the end of the log reveals: carried bets still in play, and those of
        every game session."""
        return self._carries.outstanding() + [
            f for session in self._sessions.values() for f in session.finish()
        ]

    def _session(self, key: str) -> GameSession:
        session = self._sessions.get(key)
        if session is None:
            factory = GAMES[key].session
            assert factory is not None
            session = self._sessions[key] = factory()
        return session

    def to_json(self) -> dict[str, Any]:
        """Everything this judge carries from round to round, as plain JSON: each game
        session's state (owned and written by its game's folder), the carried bets, and (when a
        game has a ``Dependency``) how many rounds moved each of its keys and the last one."""
        data: dict[str, Any] = {
            "sessions": {key: session.to_json() for key, session in sorted(self._sessions.items())},
            "carries": self._carries.to_json(),
            "carrying": {key: sorted(tables) for key, tables in sorted(self._carrying.items())},
        }
        if self._moves:
            data["moves"] = {key: [n, last] for key, (n, last) in sorted(self._moves.items())}
        return data

    def load(self, data: dict[str, Any]) -> None:
        """Take up the state :meth:`to_json` wrote."""
        for key, session in data["sessions"].items():
            if key not in GAMES or GAMES[key].session is None:
                raise ValueError(f"no game {key!r} with a session")
            self._session(key).load(session)
        self._carries.load(data["carries"])
        for key, tables in data["carrying"].items():
            self._carrying.setdefault(str(key), set()).update(str(t) for t in tables)
        for key, (n, last) in data.get("moves", {}).items():
            self._moves[str(key)] = (int(n), str(last))

    def game_state(self, key: str) -> dict[str, Any] | None:
        """The state one game's rounds leave for its next round (``None``: the game's rounds
        are judged alone), as plain JSON: its session's, and what its tables carry."""
        game = GAMES[key]
        if not game.follows_rounds:
            return None
        tables = self._carrying.get(key, set())
        return {
            "session": self._session(key).to_json() if game.session is not None else None,
            "carries": self._carries.to_json(lambda t: t in tables),
        }

    def load_game_state(self, key: str, state: dict[str, Any]) -> None:
        """Resume one game from :meth:`game_state`."""
        if state.get("session") is not None:
            self._session(key).load(state["session"])
        carries = state.get("carries") or {}
        self._carries.load(carries)
        self._carrying.setdefault(key, set()).update(carries)


_Plan = tuple[Game, bool, bool, Dependency | None]
"""A game, whether it has a session, whether it carries bets, and its ``Dependency`` when its
rounds follow one another (else ``None``)."""


def _plan(game: Game) -> _Plan:
    dependency = game.dependency if game.follows_rounds else None
    return (game, game.session is not None, game.carries_bets, dependency)


def judge_rounds(
    rounds: Iterable[tuple[int, Round]],
    *,
    wanted: Callable[[Round], bool] | None = None,
    judge: RoundJudge | None = None,
) -> Iterator[tuple[int, Judged]]:
    """The per-round judgement of a pass over the store: ``rounds`` are ``(closing position,
    round)`` in store order (``projections.base.closed_rounds``); yields those ``wanted``
    accepts (all by default), each judged in context. Rounds not wanted are still judged when
    their game follows rounds (a bank, a shoe, a pool, carried bets), so the wanted ones stand
    where a full verify pass would put them; others are skipped. ``judge`` lets the caller read
    :meth:`RoundJudge.finish` afterwards."""
    judge = judge if judge is not None else RoundJudge()
    for position, rnd in rounds:
        mine = wanted is None or wanted(rnd)
        if not mine and not GAMES[rnd.game].follows_rounds:
            continue
        judged = judge.judge_round(rnd)
        if mine:
            yield position, judged


_last: list[tuple[Round, Any, Judged, Any]] = []
_live: dict[str, tuple[Any, RoundJudge]] = {}
"""Per game, the state :func:`judge_in_context` last returned and the judge standing there:
a view that hands that very state back (the same object, unchanged) resumes without reloading."""


def judge_in_context(rnd: Round, state: dict[str, Any] | None) -> tuple[Judged, Any]:
    """Judge one closed round given the state its game's earlier rounds left (``state``, from
    a previous call; ``None`` before the game's first round). Returns the judgement — the same
    :class:`Judged` a verify pass gives this round — and the game's state after it (``None``
    for games judged alone).

    Projections fold rounds in store order a batch at a time and keep ``state`` in a row of
    their own, so an updater that resumes mid-log judges exactly as a single verify pass does.
    Several views folding the same round from the same state share one judgement.
    """
    if _last and _last[0][0] is rnd and _last[0][1] == state:
        return _last[0][2], _last[0][3]
    live = _live.get(rnd.game)
    if live is not None and state is not None and live[0] is state:
        judge = live[1]
    else:
        judge = RoundJudge()
        if state is not None:
            judge.load_game_state(rnd.game, state)
    judged = judge.judge_round(rnd)
    after = judge.game_state(rnd.game)
    _last[:] = [(rnd, state, judged, after)]
    if after is not None:
        _live[rnd.game] = (after, judge)
    return judged, after
