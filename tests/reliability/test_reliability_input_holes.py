"""Input holes: lines a careless or hostile feed sends, and stored times that must never crash.

- a repeated JSON key, at the top or in a nested object, is ``duplicate_key`` (never last-wins);
- a time outside the accepted window is ``bad_timestamp`` at ingest;
- a time at the edge of the calendar that a store already holds (an older release stored it, or
  someone planted it by SQL) crashes no later command: projections, commission, report, export;
- a rulebook limit with ``min > max`` is ``bad_rulebook``;
- a deeply nested bundle file is refused with a message, exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledger.codec.chain import frame, unframe
from ledger.codec.parse import Rejection, parse_line
from ledger.services.ingest import Ingestor, numbered_lines
from ledger.storage.store import open_ledger


@pytest.fixture
def cli(cli_in_process):
    """``ledger`` in this process (tests/reliability/conftest.py): these tests check what the
    commands print and exit with, not the process."""
    return cli_in_process


OPEN = {
    "v": 1,
    "table": "RL-09",
    "game": "RL",
    "round": "r1",
    "seq": 1,
    "at": "2026-11-20T10:01:00+08:00",
    "type": "round_opened",
    "currency": "HKD",
}
BET = (
    '{"v":1,"table":"RL-09","game":"RL","round":"r1","seq":2,"at":"2026-11-20T10:02:00+08:00",'
    '"type":"bet_placed","bet":"b1","player":"P-2","spot":{"kind":"odd"},"amount":"1",'
    '"amount":"5000"}'
)


def _ingest(db_url: str, lines: list[str]) -> list[Rejection]:
    app = open_ledger(db_url)
    try:
        return Ingestor(app).ingest(numbered_lines(lines)).rejected
    finally:
        app.close()


def test_a_repeated_key_at_the_top_is_rejected_and_nothing_of_it_is_stored(db_url: str) -> None:
    rejected = _ingest(db_url, [json.dumps(OPEN), BET])
    assert [(r.line, r.code, r.field) for r in rejected] == [(2, "duplicate_key", "amount")]
    app = open_ledger(db_url)
    try:
        rnd = app.load_round("RL-09", "r1")
        assert rnd is not None and rnd.version == 1  # only the opening was stored
    finally:
        app.close()


@pytest.mark.parametrize(
    "line",
    [
        '{"v":1,"table":"RL-09","game":"RL","round":"r1","seq":2,"at":"2026-11-20T10:02:00+08:00",'
        '"type":"bet_placed","bet":"b1","player":"P-2","spot":{"kind":"odd","kind":"even"},'
        '"amount":"1"}',
        '{"v":1,"table":"RL-09","game":"RL","round":"r1","seq":1,"at":"2026-11-20T10:01:00+08:00",'
        '"type":"round_opened","currency":"HKD","rulebook":{"limits":{"odd":{"min":"1","max":"9",'
        '"max":"900000"}}}}',
    ],
)
def test_a_repeated_key_in_a_nested_object_is_rejected(line: str) -> None:
    found = parse_line(line, 7)
    assert isinstance(found, Rejection)
    assert (found.code, found.line) == ("duplicate_key", 7)
    assert found.field in ("kind", "max") and found.field in found.message


def test_a_repeated_round_opened_key_is_rejected_on_the_fast_path_too(db_url: str) -> None:
    lines = [json.dumps({**OPEN, "round": f"r{i}"}, separators=(",", ":")) for i in range(3)]
    lines.append(
        lines[0].replace('"currency":"HKD"', '"currency":"HKD","currency":"MOP"').replace('"r0"', '"r9"')
    )
    rejected = _ingest(db_url, lines)
    assert [(r.line, r.code, r.field) for r in rejected] == [(4, "duplicate_key", "currency")]


@pytest.mark.parametrize(
    "at",
    [
        "0001-01-01T00:00:00+08:00",
        "9999-12-31T23:59:59-08:00",
        "1999-12-31T23:59:59+00:00",
        "2100-01-01T00:00:00Z",
    ],
)
def test_a_time_outside_the_window_is_bad_timestamp_on_both_paths(db_url: str, at: str) -> None:
    compact = json.dumps({**OPEN, "at": at}, separators=(",", ":"))
    spaced = json.dumps({**OPEN, "round": "r2", "at": at})
    rejected = _ingest(db_url, [compact, compact.replace('"r1"', '"r3"'), spaced])
    assert [(r.code, r.field) for r in rejected] == [("bad_timestamp", "at")] * 3
    assert "outside the accepted window" in rejected[0].message


def test_the_window_is_configurable(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEDGER_EARLIEST_AT", "2026-11-21T00:00:00+08:00")
    rejected = _ingest(db_url, [json.dumps(OPEN)])
    assert [r.code for r in rejected] == ["bad_timestamp"]
    monkeypatch.setenv("LEDGER_EARLIEST_AT", "2026-11-20T00:00:00+08:00")
    assert _ingest(db_url, [json.dumps(OPEN)]) == []


def test_min_above_max_in_a_rulebook_is_bad_rulebook() -> None:
    line = json.dumps({**OPEN, "rulebook": {"limits": {"odd": {"min": "500", "max": "10"}}}})
    found = parse_line(line, 1)
    assert isinstance(found, Rejection)
    assert (found.code, found.field) == ("bad_rulebook", "rulebook.limits.odd")


def _edge_feed(examples: Path, at: str) -> list[str]:
    """The RL example with its first round opened at ``at``."""
    lines = (examples / "rl.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["at"] = at
    return [json.dumps(first), *lines[1:]]


def _no_command_crashes(cli, db_url: str, tmp_path: Path) -> None:
    runs = [
        ["projections", "update", "--db", db_url],
        ["commission", "--db", db_url, "--json"],
        ["commission", "--db", db_url, "--by", "player"],
        ["report", "--day", "0001-01-01", "--html", str(tmp_path / "a.html"), "--db", db_url],
        ["report", "--day", "9999-12-31", "--json", "--db", db_url],
        ["export", "--out", str(tmp_path / "out"), "--db", db_url],
        ["jackpot", "--db", db_url],
        ["bank", "--db", db_url],
    ]
    for args in runs:
        done = cli(args)
        assert "Traceback" not in done.stderr, (args, done.stderr[-2000:])
        assert done.returncode in (0, 1, 2, 3), (args, done.returncode, done.stderr[-500:])
        if args[0] == "export":  # a usage error would leave the export itself untried
            assert done.returncode in (0, 1), (args, done.returncode, done.stderr[-500:])
            assert any((tmp_path / "out").iterdir()), "the export wrote nothing"


@pytest.mark.parametrize("at", ["0001-01-01T00:00:00+08:00", "9999-12-31T23:59:59-08:00"])
@pytest.mark.slow_postgres
def test_an_edge_time_an_old_store_holds_crashes_no_later_command(
    db_url: str, examples: Path, tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch, at: str
) -> None:
    monkeypatch.setenv("LEDGER_EARLIEST_AT", "0001-01-01T00:00:00+14:00")  # an older release
    monkeypatch.setenv("LEDGER_LATEST_AT", "9999-12-31T23:59:59.999999-14:00")
    assert _ingest(db_url, _edge_feed(examples, at)) == []
    monkeypatch.delenv("LEDGER_EARLIEST_AT")
    monkeypatch.delenv("LEDGER_LATEST_AT")
    _no_command_crashes(cli, db_url, tmp_path)


def test_an_edge_time_planted_by_sql_crashes_no_later_command(
    db_url: str, raw, examples: Path, tmp_path: Path, cli
) -> None:
    assert _ingest(db_url, (examples / "rl.jsonl").read_text(encoding="utf-8").splitlines()) == []
    for nid, state in raw.rows():
        if b'"type":"round_opened"' in state:
            content = unframe(state)[1]
            planted = content.replace(
                b'"at":"2026-11-20T10:01:00+08:00"', b'"at":"9999-12-31T23:59:59-08:00"'
            )
            assert planted != content
            raw.set_state(nid, frame("0" * 64, planted))
            break
    _no_command_crashes(cli, db_url, tmp_path)
    done = cli(["verify", "--db", db_url, "--json"])
    assert done.returncode == 3 and "Traceback" not in done.stderr


def test_a_deeply_nested_bundle_or_checkpoint_is_refused_with_exit_2(
    tmp_path: Path, examples: Path, cli
) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    assert _ingest(db, (examples / "rl.jsonl").read_text(encoding="utf-8").splitlines()) == []
    key = tmp_path / "seal.pem"
    assert cli(["keygen", "--out", str(key)]).returncode == 0
    good = tmp_path / "cp.json"
    assert cli(["seal", "--db", db, "--key", str(key), "--out", str(good)]).returncode == 0
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    deep_object = tmp_path / "deep-object.json"
    deep_object.write_text('{"format":' + '{"a":' * 100_000 + "1" + "}" * 100_001, encoding="utf-8")
    for bundle, checkpoint in ((deep, good), (deep_object, good), (deep, deep)):
        done = cli(["check-bundle", str(bundle), "--checkpoint", str(checkpoint)])
        assert done.returncode == 2, (done.returncode, done.stderr[-800:])
        assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr
        assert done.stderr.strip() or done.stdout.strip()
