"""The recall: a table's last rounds, in the order the table played them.

Gaming standards ask that the last rounds of a table can be recalled with their bets, outcome,
settlement and anything irregular. The table aggregate (:mod:`ledger.domain.table`) knows the order of
its rounds (only its newest ``last`` starts are read, and its starts counted); each round is
replayed and judged exactly as ``ledger replay`` judges it
(:func:`ledger.services.replay.replay_round`). Rounds of games whose rules span rounds (3CB carry-over,
SP9 bank runs, the STUD pool) are judged in one pass for all of them together, instead of one
pass per round, starting at the nearest checkpoint before the first of them
(:func:`ledger.services.replay.judge_in_store`): the derivation and findings are the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ledger.domain.table import RoundStarted, table_id
from ledger.games import GAMES
from ledger.report.glyphs import outcome_lines
from ledger.services.replay import RoundReplay, event_data, judge_in_store, replay_round
from ledger.storage.sql import read_rows
from ledger.storage.store import LedgerApp
from ledger.verify.engine import Selection

DEFAULT_LAST = 10


@dataclass
class Recall:
    """The last rounds of one table, oldest first."""

    table: str
    rounds: list[RoundReplay]
    played: int
    """How many rounds the table has played in all."""

    @property
    def has_errors(self) -> bool:
        """Whether any recalled round has an error finding."""
        return any(r.errors for r in self.rounds)

    def to_json(self) -> dict[str, Any]:
        """``{"table", "played", "rounds": [replay JSON + opened_at, state, outcome]}``."""
        return {"table": self.table, "played": self.played, "rounds": [round_json(r) for r in self.rounds]}


def round_json(replay: RoundReplay) -> dict[str, Any]:
    """``RoundReplay.to_json()`` plus each event's ``data`` (its fields as stored), when the round
    opened, how it ended and its outcome glyphs."""
    rnd = replay.round
    body = replay.to_json()
    for event, fact in zip(body["events"], rnd.events, strict=True):
        event["data"] = event_data(fact)  # the structured event, beside its summary
    return {
        **body,
        "opened_at": rnd.opened_at.isoformat(),
        "state": state(replay),
        "outcome": [line.to_json() for line in outcome_lines(rnd)],
    }


def state(replay: RoundReplay) -> str:
    """``closed``, ``voided`` or ``open`` (no closing event stored yet)."""
    rnd = replay.round
    return "closed" if rnd.is_closed else "voided" if rnd.is_voided else "open"


def recall(
    app: LedgerApp, table: str, last: int = DEFAULT_LAST, *, from_start: bool = False
) -> Recall | None:
    """The last ``last`` rounds of ``table``, or ``None`` if the store has no round of it."""
    if last < 1:
        raise ValueError(f"--last must be at least 1, not {last}")
    newest = app.stored(table_id(table), desc=True, limit=last)
    if not newest:
        return None
    started = [fact for rec in reversed(newest) if isinstance(fact := rec.fact, RoundStarted)]
    wanted = [s.round for s in started]
    following = {s.round for s in started if GAMES[s.game].follows_rounds}
    judged = (
        {
            r.round.round: r
            for r in judge_in_store(
                app, Selection(table=table), [(table, r) for r in sorted(following)], from_start=from_start
            )
        }
        if following
        else {}
    )
    replays: list[RoundReplay] = []
    for round_ in wanted:
        replay = judged.get(round_) or (None if round_ in following else replay_round(app, table, round_))
        if replay is not None:
            replays.append(replay)
    return Recall(table, replays, played=_played(app, table))


def _played(app: LedgerApp, table: str) -> int:
    """How many rounds the table has started: its aggregate's stored events, counted."""
    d = app.dialect
    events = app.events_table
    oid: object = table_id(table).hex if d.is_sqlite else table_id(table)
    found = read_rows(app, f"SELECT COUNT(*) FROM {events} WHERE originator_id = {d.p}", (oid,))
    return int(found[0][0])
