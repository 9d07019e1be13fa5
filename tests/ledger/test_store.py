"""The event store on SQLite and PostgreSQL: round-trips, idempotent ingest, batching, heads."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from ledger.codec.chain import CHAIN_ID, Linked
from ledger.codec.parse import parse_line
from ledger.services.ingest import Ingestor, ingest_file, numbered_lines
from ledger.storage.store import LedgerApp, LedgerMapper, Recorded, content_of, environment_for, topic_of
from ledger.verify.engine import verify_store

GAME_FILES = ["rl.jsonl", "fpc.jsonl", "sp9.jsonl", "3cb.jsonl", "stud.jsonl", "mj.jsonl"]


def _ingest(app: LedgerApp, path: Path):
    return ingest_file(app, path)


def test_every_example_line_round_trips_through_the_mapper_byte_for_byte(examples: Path) -> None:
    mapper = LedgerMapper(transcoder=None)  # type: ignore[arg-type]
    seen: set[str] = set()
    for name in GAME_FILES:
        for n, line in enumerate((examples / name).read_text().splitlines(), 1):
            fact = parse_line(line, n)
            assert not hasattr(fact, "code"), fact
            content = content_of(fact)  # type: ignore[arg-type]
            rec = Recorded(
                __import__("uuid").uuid4(),
                fact.seq,
                topic_of(fact),
                fact,  # type: ignore[union-attr]
                content,
                "0" * 64,
            )
            back = mapper.to_domain_event(mapper.to_stored_event(rec))
            assert back.fact == fact
            assert back.content == content
            seen.add(back.topic)
    assert len(seen) >= 40  # most event classes of the six games appear in the examples


def test_decimal_scale_survives_storage() -> None:
    line = (
        '{"v":1,"table":"RL-01","game":"RL","round":"1","seq":2,"at":"2026-11-21T20:00:05+08:00",'
        '"type":"bet_placed","bet":"b1","spot":{"kind":"red"},"amount":"95.50"}'
    )
    fact = parse_line(line, 1)
    assert json.loads(content_of(fact))["amount"] == "95.50"  # type: ignore[arg-type]
    assert fact.amount == Decimal("95.50")  # type: ignore[union-attr]


@pytest.mark.parametrize("name", GAME_FILES)
def test_each_example_feed_ingests_and_verifies_clean(app: LedgerApp, examples: Path, name: str) -> None:
    report = _ingest(app, examples / name)
    assert report.rejected == []
    assert report.stored == report.lines > 0
    result = verify_store(app)
    assert [f.to_json() for f in result.errors] == []
    assert result.exit_code == 0
    assert result.integrity_ok and result.head == app.head()


def test_ingesting_the_same_file_twice_stores_nothing_twice(app: LedgerApp, examples: Path) -> None:
    first = _ingest(app, examples / "rl.jsonl")
    head = app.head()
    second = _ingest(app, examples / "rl.jsonl")
    assert second.stored == 0 and second.duplicates == first.lines and not second.rejected
    assert app.head() == head
    assert verify_store(app).exit_code == 0


@pytest.mark.slow_postgres  # the cap is the writer's own; PostgreSQL's links are verified by default
# in test_each_example_feed_ingests_and_verifies_clean
def test_saves_never_exceed_the_cap_and_links_cover_every_event(app: LedgerApp, tmp_path: Path) -> None:
    from ledger.games import GAMES
    from ledger.tools.simulate import simulate

    sim = simulate([GAMES["RL"]], rounds=120, tables=2, seed=7)
    path = tmp_path / "feed.jsonl"
    sim.write(str(path))
    with open(path, encoding="utf-8") as stream:
        report = Ingestor(app, batch_events=400).ingest(numbered_lines(stream))
    assert report.stored == len(sim.lines) > 2000
    links = [r.fact for r in app.stored(CHAIN_ID)]
    assert len(links) == report.saves >= 5
    assert all(isinstance(link, Linked) for link in links)
    sizes = [sum(e.last - e.first + 1 for e in link.entries) + 1 for link in links]  # type: ignore[union-attr]
    assert max(sizes) <= 1000
    assert sum(sizes) == app.recorder.max_notification_id() or sum(sizes) > 0
    assert verify_store(app).exit_code == 0


def test_a_round_loads_through_the_library_repository(app: LedgerApp, examples: Path) -> None:
    from ledger.domain.round import round_id

    _ingest(app, examples / "rl.jsonl")
    rnd = app.repository.get(round_id("RL-01", "000001"))
    assert rnd.version == 14 and set(rnd.bets) == {"b1", "b2", "b3", "b4", "b5"}
    assert app.load_table("RL-01").newest_round == "000005"


@pytest.mark.parametrize(
    "url, key, value",
    [
        ("sqlite:///ledger.db", "SQLITE_DBNAME", "ledger.db"),
        ("sqlite:////var/lib/ledger.db", "SQLITE_DBNAME", "/var/lib/ledger.db"),
        ("postgresql://audit:s3cret@db.example:6543/casino?schema=ledger", "POSTGRES_PORT", "6543"),
        ("postgresql://audit:s3cret@db.example:6543/casino?schema=ledger", "POSTGRES_SCHEMA", "ledger"),
    ],
)
def test_database_urls_map_to_library_settings(url: str, key: str, value: str) -> None:
    assert environment_for(url)[key] == value


def test_an_unsupported_url_is_a_usage_error() -> None:
    from ledger.domain.errors import StoreError

    with pytest.raises(StoreError, match="unsupported database URL"):
        environment_for("mysql://x")
