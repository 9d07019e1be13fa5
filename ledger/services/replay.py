"""Replaying one round for an inspector: events, derivation steps, derived vs recorded bets.

A round of a game whose rules span rounds (3CB carried bets and shoe, an SP9 bank, a STUD
jackpot pool) is judged exactly as verify judges it, in a pass over the log that starts at the
nearest stored checkpoint before the round (its snapshot holds every game's state there,
``ledger.proof.checkpoints``) and stops where the round closed: its cost is that of the rows since the
checkpoint, not of the whole store. ``from_start`` reads from the beginning instead.

A stored checkpoint is used only if its signature is valid under the store's sealing public key
(``ledger.proof.checkpoints.sealing_key``) and its snapshot matches the digest it signs; with no key
configured none is trusted, the pass starts at the beginning of the store, and
:attr:`RoundReplay.note` says so.

Nearer still: ``ledger seal`` also stores, every few rounds of each such game, that game's
state (:mod:`ledger.proof.seal_index`, signed with the sealing key). A closed round is judged from the
newest valid state point of its game after that checkpoint and before the round closed (else
from the checkpoint's snapshot), reading only its game's rows from there to where it closed: the
derivation and findings are those of the pass from the checkpoint (the round's game's state is
all its judgement reads), and ``judged_from`` still names that checkpoint. A round still in
play is judged in the pass described above, to the end of the log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ledger.domain.findings import Finding
from ledger.domain.money import AMOUNT_FIELDS, field_text, plain
from ledger.domain.round import Round, round_id
from ledger.domain.table import table_id
from ledger.feed.envelope import BetPlaced, FeedEvent
from ledger.games import GAMES
from ledger.games.base import Derivation
from ledger.proof.checkpoints import NO_SEALING_KEY, SealingKey, nearest, seal_index, sealing_key, stored_rows
from ledger.storage.store import LedgerApp
from ledger.storage.stream import TERMINAL_SUFFIXES, RoundStream
from ledger.verify.checks import check_round
from ledger.verify.engine import Selection, verify_store
from ledger.verify.judge import Judged, RoundJudge
from ledger.verify.snapshot import Snapshot

_ENVELOPE = {"v", "table", "game", "round", "seq", "at", "type", "rules", "rules_hash"}


@dataclass
class RoundReplay:
    """One round with what the rules derive from it."""

    round: Round
    derivation: Derivation
    findings: list[Finding]
    judged_from: dict[str, Any] | None = None
    """Where the pass that judged the round began: the checkpoint's ``position``, ``links``
    and ``head`` (``None``: the round was judged alone, or from the start of the store; the
    JSON then has no ``judged_from`` key)."""
    note: str | None = None
    """Why the pass started at the beginning although checkpoints are stored (no sealing public
    key configured), for the command to say once; not in the JSON."""

    @property
    def errors(self) -> list[Finding]:
        """Findings that are errors."""
        return [f for f in self.findings if f.severity == "error"]

    def to_json(self) -> dict[str, Any]:
        """Everything ``ledger replay`` shows, as one object."""
        rnd = self.round
        return {
            "table": rnd.table,
            "round": rnd.round,
            "game": rnd.game,
            "currency": rnd.opened.currency,
            "rules_hash": rnd.opened.rules_hash or "",
            "events": [
                {"seq": e.seq, "at": e.at.isoformat(), "type": e.type, "summary": summarize(e)}
                for e in rnd.events
            ],
            "derivation": [{"text": s.text, "rule": s.rule} for s in self.derivation.steps],
            "bets": [self._bet(b) for b in rnd.bets.values()],
            "findings": [f.to_json() for f in self.findings],
            **({"judged_from": self.judged_from} if self.judged_from is not None else {}),
        }

    def _bet(self, bet: BetPlaced) -> dict[str, Any]:
        due = self.derivation.expected.get(bet.bet)
        settled = self.round.settlements.get(bet.bet)
        recorded = None
        if settled:
            s = settled[0]
            recorded = {
                "result": s.result,
                "returned": plain(s.returned),
                "won": plain(s.won),
                "commission": plain(s.commission),
            }
        derived = None if due is None else {**_plain(due.as_dict()), "rule": due.rule, "reason": due.reason}
        agrees = not any(f.bet == bet.bet and f.severity == "error" for f in self.findings)
        return {
            "bet": bet.bet,
            "spot": summarize_spot(bet),
            "amount": plain(bet.amount),
            "player": bet.player,
            "derived": derived,
            "recorded": recorded,
            "agrees": agrees,
        }


def _plain(settlement: dict[str, str]) -> dict[str, str | None]:
    """A settlement's amounts as JSON writes every amount (two decimals); ``result`` as it is."""
    return {k: v if k == "result" else plain(v) for k, v in settlement.items()}


def event_data(event: Any) -> dict[str, Any]:
    """The event's own fields as stored (money as strings), without the envelope keys the
    event object already gives (``seq``, ``at``, ``type``, ``table``, ``round``, ``game``)."""
    data: dict[str, Any] = event.model_dump(mode="json", exclude_none=True)
    for key in ("v", "seq", "at", "type", "table", "round", "game"):
        data.pop(key, None)
    return data


def replay_round(app: LedgerApp, table: str, round: str, *, from_start: bool = False) -> RoundReplay | None:
    """Load and judge one round, or ``None`` if the store does not have it."""
    rnd = app.load_round(table, round)
    if rnd is None:
        return None
    game = GAMES[rnd.game]
    if game.follows_rounds:
        return _replay_in_context(app, table, round, from_start=from_start)
    newest = _newest_round(app, table) == round
    derivation = game.derive(rnd)
    return RoundReplay(rnd, derivation, check_round(rnd, game, is_newest=newest))


def _replay_in_context(app: LedgerApp, table: str, round: str, *, from_start: bool) -> RoundReplay | None:
    """A round of a game whose rules span rounds (carried bets, bank, jackpot pool): judged in a
    pass over the store, exactly as verify judges it."""
    found = judge_in_store(app, Selection(table=table, round=round), [(table, round)], from_start=from_start)
    return found[0] if found else None


def judge_in_store(
    app: LedgerApp, selection: Selection, rounds: list[tuple[str, str]], *, from_start: bool = False
) -> list[RoundReplay]:
    """Judge the selected ``rounds`` (table, round) in one verify pass, as verify judges them:
    from the nearest checkpoint before the first of them opened (unless ``from_start``) to
    where the last of them closed (to the end of the log if one is still in play)."""
    spans = [span for t, r in rounds if (span := app.span(round_id(t, r))) is not None]
    if not spans:
        return []
    start: Snapshot | None = None
    note: str | None = None
    key: SealingKey | None = None
    if not from_start:
        key = sealing_key(app)
        if key is not None:
            found = nearest(app, min(first for first, _, _ in spans), key)
            start = found[1] if found is not None else None
        elif stored_rows(app):
            note = f"{NO_SEALING_KEY}: judged from the start of the store"
    in_play = any(not topic.endswith(TERMINAL_SUFFIXES) for _, _, topic in spans)
    where = None if start is None else {"position": start.position, "links": start.links, "head": start.head}
    wanted = set(rounds)
    if key is not None and not in_play:
        near = _from_state_point(app, key, wanted, spans, start)
        if near is not None:
            return [RoundReplay(j.round, j.derivation, j.findings, where, note) for j in near]
    seen: list[Judged] = []
    verify_store(
        app,
        selection,
        on_judged=seen.append,
        start=start,
        stop=None if in_play else max(last for _, last, _ in spans),
    )
    return [
        RoundReplay(j.round, j.derivation, j.findings, where, note)
        for j in seen
        if (j.round.table, j.round.round) in wanted
    ]


def game_topics(key: str) -> tuple[str, ...]:
    """The stored topics of one game's feed events (its opening included), sorted: the other
    games' rows need not be read, nor their models built."""
    return tuple(sorted({f"{key}/round_opened", *(f"{key}/{cls.TYPE}" for cls in GAMES[key].events)}))


def _newest_round(app: LedgerApp, table: str) -> str | None:
    """The table's newest started round: its last stored event only (not the whole table)."""
    last = app.stored(table_id(table), desc=True, limit=1)
    return None if not last else str(last[0].fact.round)  # type: ignore[attr-defined]


def _from_state_point(
    app: LedgerApp,
    key: SealingKey,
    wanted: set[tuple[str, str]],
    spans: list[tuple[int, int, str]],
    start: Snapshot | None,
) -> list[Judged] | None:
    """The closed ``wanted`` rounds (all of one game), judged from the newest valid state point
    of their game after the checkpoint ``start`` and before the first of them closed — else
    from ``start`` itself (its snapshot holds every game's state), else from the start of the
    store — reading only that game's rows; ``None`` if the rounds are of several games."""
    games = {topic.partition("/")[0] for _, _, topic in spans}
    if len(games) != 1:
        return None
    before, stop = min(last for _, last, _ in spans), max(last for _, last, _ in spans)
    game = GAMES[games.pop()].key
    floor = 0 if start is None else start.position
    index, _ = seal_index(app, key)
    with index:
        point = index.state_before(game, before, floor)
    judge = RoundJudge()
    if point is not None:
        judge.load_game_state(game, point.state)
        floor = point.position
    elif start is not None:
        judge.load(start.state["judge"])
    found: list[Judged] = []
    for rnd in _game_rounds(app, game, floor, stop):
        judged = judge.judge_round(rnd)
        if (rnd.table, rnd.round) in wanted:
            found.append(judged)
    return found if len(found) == len(wanted) else None


def _game_rounds(app: LedgerApp, game: str, after: int, stop: int) -> list[Round]:
    """The rounds of ``game`` that closed after row ``after`` up to row ``stop``, in store
    order (a round that opened before ``after`` is loaded whole); only that game's rows are
    read."""
    stream = RoundStream(app.ledger_mapper, probe=False)
    rounds: list[Round] = []
    for rows in app.rows(after=after, topics=game_topics(game)):
        for closed in stream.closed(row for row in rows if row[0] <= stop):
            last = closed.facts[-1]
            if last.game != game:
                continue
            if closed.complete:
                rounds.append(Round.replay(closed.facts))
            else:
                loaded = app.load_round(last.table, last.round)
                if loaded is not None:
                    rounds.append(loaded)
        if rows[-1][0] >= stop:
            break
    return rounds


def summarize(e: FeedEvent) -> str:
    """One line with the fields of an event that are not envelope, its amounts as every text
    writes them (``amount=1,000.00``, ``capital={E:40,000.00 S:20,000.00}``)."""
    data = e.model_dump(mode="json", exclude=_ENVELOPE, exclude_none=True)
    return " ".join(f"{k}={_field(k, v)}" for k, v in data.items())


def _field(name: str, value: Any) -> str:
    """One field of :func:`summarize`: an amount (or a seat-to-amount map such as Mah-Jong's
    ``capital``) formatted, anything else compact."""
    if name in AMOUNT_FIELDS and isinstance(value, dict):
        return "{" + " ".join(f"{k}:{field_text(name, v)}" for k, v in value.items()) + "}"
    if name in AMOUNT_FIELDS and isinstance(value, str):
        return field_text(name, value)
    return _compact(value)


def summarize_spot(bet: BetPlaced) -> str:
    """A bet's spot in a few characters: ``straight 17``, ``column 3``, ``red``."""
    data = bet.spot.model_dump(mode="json")
    kind = data.pop("kind", "")
    return " ".join([str(kind), *(_compact(v) for v in data.values())])


def _compact(v: Any) -> str:
    if isinstance(v, list):
        return ",".join(_compact(x) for x in v)
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}:{_compact(x)}" for k, x in v.items()) + "}"
    return str(v)
