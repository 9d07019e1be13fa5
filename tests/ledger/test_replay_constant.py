"""``ledger replay`` and ``ledger recall`` judge a sealed round of a game whose rules span rounds
(3CB, SP9, STUD) from the nearest signed state point of its game (``ledger.proof.seal_index``), not in
a pass from the checkpoint: the same derivation and findings as a pass from the start of the
store, wherever the round sits between checkpoints; a forged state point is never used."""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import ledger.services.replay
from ledger.games import GAMES
from ledger.proof.checkpoints import seal
from ledger.proof.seal import generate_key, public_pem
from ledger.proof.seal_index import INDEX_TABLE
from ledger.report.recall import recall
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.services.replay import judge_in_store, replay_round
from ledger.storage.sql import connect
from ledger.storage.store import LedgerApp, open_ledger
from ledger.tools.simulate import simulate
from ledger.verify.engine import Selection
from tests.conftest import full_run
from tests.ledger.store_copy import copied

KEY = generate_key()


@pytest.fixture(autouse=True)
def _sealing_public_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "seal.key.pub"
    path.write_bytes(public_pem(KEY.public_key()))
    monkeypatch.setenv("LEDGER_SEAL_PUBLIC_KEY", str(path))


@cache
def _simulated() -> tuple[dict[str, Any], ...]:
    """The feed of :func:`_build`, made once (each store reads the same lines, which nothing
    changes)."""
    games = [GAMES["3CB"], GAMES["STUD"], GAMES["SP9"]]
    return tuple(simulate(games, rounds=30, tables=2, seed=7, error_rate=0.2).lines)


def _build(app: LedgerApp, tmp_path: Path) -> list[tuple[str, str]]:
    """Three checkpoints far apart, a state point every fourth round of each game between
    them; the rounds of the games that follow rounds, in the feed."""
    lines = list(_simulated())
    step = len(lines) // 3
    for n in range(3):
        part = lines[n * step : (n + 1) * step]
        path = tmp_path / f"part{n}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in part), encoding="utf-8")
        with open(path, encoding="utf-8") as stream:
            assert Ingestor(app, batch_events=80).ingest(numbered_lines(stream)).rejected == []
        seal(app, KEY, state_every=4)
    return sorted({(line["table"], line["round"]) for line in lines[: 3 * step]})


@pytest.fixture(scope="module")
def sealed(
    module_db_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LedgerApp, list[tuple[str, str]]]]:
    """One store built by :func:`_build` per backend, for the tests that only read it (sealed,
    as the others are, with :data:`KEY`'s public key configured)."""
    folder = tmp_path_factory.mktemp("sealed")
    (folder / "seal.key.pub").write_bytes(public_pem(KEY.public_key()))
    app = open_ledger(module_db_url)
    try:
        with pytest.MonkeyPatch.context() as m:
            m.setenv("LEDGER_SEAL_PUBLIC_KEY", str(folder / "seal.key.pub"))
            rounds = _build(app, folder)
        yield app, rounds
    finally:
        app.close()


def _body(replay: Any) -> dict[str, Any]:
    return {k: v for k, v in replay.to_json().items() if k != "judged_from"}


def _no_pass(*args: object, **kwargs: object) -> None:
    raise AssertionError("a pass over the log from a checkpoint")


def test_sealed_rounds_are_judged_from_a_state_point_as_from_the_start(
    sealed: tuple[LedgerApp, list[tuple[str, str]]],
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    """Every fifteenth round (every forty-fifth in the developer's tier: each costs a pass from
    its checkpoint to compare with): judged without a pass over the log (from a state point, or
    from the checkpoint's snapshot reading its game's rows only), the same as from the start of
    the store, and the same JSON (``judged_from`` included) as the pass from the nearest
    checkpoint."""
    app, rounds = sealed
    step, least = (15, 10) if full_run(request.config) else (45, 3)
    picked = rounds[2::step]
    whole = {  # one pass from the start, as verify judges them (only the rounds compared)
        (r.round.table, r.round.round): r for r in judge_in_store(app, Selection(), picked, from_start=True)
    }
    with monkeypatch.context() as m:
        m.setattr(ledger.services.replay, "_from_state_point", lambda *a, **k: None)
        from_checkpoint = {(t, r): replay_round(app, t, r) for t, r in picked}
    near = 0
    with monkeypatch.context() as m:
        m.setattr(ledger.services.replay, "verify_store", _no_pass)
        for (table, rnd), reference in from_checkpoint.items():
            assert reference is not None
            replay = replay_round(app, table, rnd)
            assert replay is not None
            assert replay.to_json() == reference.to_json(), (table, rnd)
            assert _body(replay) == _body(whole[table, rnd]), (table, rnd)
            near += 1
    assert near == len(picked) > least
    assert {table.split("-")[0] for table, _ in picked} == {"3CB", "STUD", "SP9"}


@pytest.mark.slow_postgres  # its SQLite case runs by default; the other tests here cover PostgreSQL
def test_recall_of_sealed_rounds_needs_no_pass(
    sealed: tuple[LedgerApp, list[tuple[str, str]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table's last ten rounds, all sealed: recalled without a pass, the same as from the
    start of the store."""
    app, _ = sealed
    for table in ("3CB-01", "SP9-02", "STUD-01"):
        whole = recall(app, table, 10, from_start=True)
        assert whole is not None
        with monkeypatch.context() as m:
            m.setattr(ledger.services.replay, "verify_store", _no_pass)
            near = recall(app, table, 10)
        assert near is not None
        assert [_body(r) for r in near.rounds] == [_body(r) for r in whole.rounds]


@pytest.mark.slow_postgres  # its SQLite case runs by default; the other tests here cover PostgreSQL
def test_a_forged_state_point_is_not_used(
    sealed: tuple[LedgerApp, list[tuple[str, str]]], module_db_url: str, tmp_path: Path
) -> None:
    """An insider copies a state point to a row nearer a round with another game's state: the
    signature does not hold for it there, so the round is judged as before (on a copy of the
    module's store)."""
    _, built = sealed
    with copied(module_db_url, tmp_path, built, lambda app: _build(app, tmp_path)) as (app, rounds):
        _forge_a_state_point(app, rounds)


def _forge_a_state_point(app: LedgerApp, rounds: list[tuple[str, str]]) -> None:
    table, rnd = next((t, r) for t, r in reversed(rounds) if t.startswith("3CB"))
    before = replay_round(app, table, rnd)
    span = app.span(ledger.services.replay.round_id(table, rnd))
    assert before is not None and span is not None
    db = connect(app)
    name = db.dialect.qualified(INDEX_TABLE)
    p = db.dialect.p
    try:
        rows = db.read(
            f"SELECT number, checkpoint, body, signature FROM {name} WHERE kind = 'state' AND game = 'SP9'"
        )
        number, digest, body, signature = rows[-1]
        taken = {int(r[0]) for r in db.read(f"SELECT position FROM {name} WHERE game = '3CB'")}
        free = [at for at in range(span[1] - 1, 0, -1) if at not in taken][:2]
        empty = zlib.compress(json.dumps({"session": {}, "carries": {}}).encode())
        with db.write() as cur:
            for at, forged_body in zip(free, (bytes(body), empty), strict=True):
                cur.execute(
                    f"INSERT INTO {name} (number, kind, game, position, checkpoint, body, signature) "
                    f"VALUES ({p}, 'state', '3CB', {p}, {p}, {p}, {p})",
                    (number, at, digest, forged_body, signature),
                )
    finally:
        db.close()
    after = replay_round(app, table, rnd)
    assert after is not None and after.to_json() == before.to_json()
