"""What users see: JSON that a plain ``jsonschema`` validator checks against docs/schemas (every
``$ref`` resolved inside its own file), ``check-bundle --json``'s schema, and the verify
progress bar counting events, not bytes.

In process, through typer's test runner, on one SQLite store per module: the example roulette
feed, and the same rounds at table RL-02 with one bet underpaid (a finding to carry).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
from rich.console import Console
from typer.testing import CliRunner

import cli.render
from cli.main import app
from tests.cli.conftest import plain_validate

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"
runner = CliRunner()


def plain_schema(name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((SCHEMAS / f"{name}.json").read_text(encoding="utf-8"))
    return body


def ledger(*args: str) -> tuple[int, Any]:
    result = runner.invoke(app, list(args))
    try:
        return result.exit_code, json.loads(result.stdout)
    except ValueError:
        return result.exit_code, result.output


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The store, a sealed checkpoint, a key pair and a proof bundle of one round."""
    from tests.conftest import EXAMPLES

    folder = tmp_path_factory.mktemp("users-see")
    lines = (EXAMPLES / "rl.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    wrong = [line.replace('"RL-01"', '"RL-02"') for line in lines]
    at = next(
        i
        for i, line in enumerate(wrong)
        if '"round":"000005"' in line and '"bet":"b3"' in line and "bet_settled" in line
    )
    wrong[at] = wrong[at].replace('"won":"200"', '"won":"150"')
    feed = folder / "rl-02.jsonl"
    feed.write_text("".join(wrong), encoding="utf-8")
    db = f"sqlite:///{folder / 'ledger.db'}"
    assert runner.invoke(app, ["ingest", str(EXAMPLES / "rl.jsonl"), str(feed), "--db", db]).exit_code == 0
    key = folder / "seal.key"
    assert runner.invoke(app, ["keygen", "--out", str(key)]).exit_code == 0
    cp = folder / "cp.json"
    sealed = runner.invoke(app, ["seal", "--db", db, "--key", str(key), "--out", str(cp)])
    assert sealed.exit_code == 0, sealed.output
    bundle = folder / "r.json"
    exported = runner.invoke(
        app, ["export-round", "RL-02/000005", "--db", db, "--bundle", str(bundle), "--checkpoint", str(cp)]
    )
    assert exported.exit_code == 0, exported.output
    yield {
        "db": db,
        "key": str(key),
        "pub": f"{key}.pub",
        "cp": str(cp),
        "bundle": str(bundle),
        "folder": str(folder),
    }


def test_every_ref_of_every_schema_points_inside_its_own_file() -> None:
    def refs(node: object) -> Iterator[str]:
        if isinstance(node, dict):
            if "$ref" in node:
                yield node["$ref"]
            for value in node.values():
                yield from refs(value)
        elif isinstance(node, list):
            for value in node:
                yield from refs(value)

    for path in sorted(SCHEMAS.glob("*.json")):
        schema = plain_schema(path.stem)
        jsonschema.validators.validator_for(schema).check_schema(schema)
        for ref in refs(schema):
            assert ref.startswith("#"), (path.name, ref)
            pointer = ref.removeprefix("#").strip("/").split("/") if ref != "#" else []
            node: Any = schema
            for part in pointer:
                node = node[part]
            assert isinstance(node, dict), (path.name, ref)


def test_the_embedded_finding_is_finding_json() -> None:
    finding = {k: v for k, v in plain_schema("finding").items() if k not in ("$schema", "$id")}
    for name in ("verify", "replay", "recall"):
        assert plain_schema(name)["$defs"]["finding"] == finding, name


@pytest.mark.parametrize(
    ("args", "name", "code"),
    [
        (["verify", "--json"], "verify", 1),
        (["replay", "RL-02/000005", "--json"], "replay", 1),
        (["recall", "--table", "RL-02", "--last", "2", "--json"], "recall", 1),
    ],
)
def test_outputs_with_findings_pass_a_plain_validator(
    store: dict[str, str], args: list[str], name: str, code: int
) -> None:
    exit_code, body = ledger(*args, "--db", store["db"])
    assert exit_code == code, body
    assert "settlement_mismatch" in json.dumps(body)  # the finding is in it, and checked
    plain_validate(body, name)  # no resolver, no registry: the file alone
    broken = json.loads(json.dumps(body).replace('"settlement_mismatch"', "17", 1))
    with pytest.raises(jsonschema.ValidationError):
        plain_validate(broken, name)


def test_check_bundle_json_has_a_schema_ok_and_broken(store: dict[str, str], tmp_path: Path) -> None:
    code, body = ledger(
        "check-bundle", store["bundle"], "--checkpoint", store["cp"], "--public-key", store["pub"], "--json"
    )
    assert code == 0 and body["proof"] == "ok" and body["public_key_given"] is True
    plain_validate(body, "check-bundle")

    changed = tmp_path / "r.json"
    changed.write_text(
        Path(store["bundle"])
        .read_text(encoding="utf-8")
        .replace('\\"won\\":\\"150\\"', '\\"won\\":\\"200\\"', 1),
        encoding="utf-8",
    )
    code, body = ledger("check-bundle", str(changed), "--checkpoint", store["cp"], "--json")
    assert code == 3 and body["proof"] == "broken" and body["problems"], body
    plain_validate(body, "check-bundle")

    other = tmp_path / "other.key"
    assert runner.invoke(app, ["keygen", "--out", str(other)]).exit_code == 0
    code, body = ledger(
        "check-bundle", store["bundle"], "--checkpoint", store["cp"], "--public-key", f"{other}.pub", "--json"
    )
    assert code == 3 and set(body) == {"schema_version", "proof", "problems"}
    plain_validate(body, "check-bundle")


def test_the_verify_progress_bar_counts_events(
    store: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    screen = io.StringIO()
    monkeypatch.setattr(cli.render, "err", Console(file=screen, force_terminal=True, width=120))
    bar = cli.render.progress_bar(657, "verify", unit="events")
    assert bar is not None
    with bar:
        task = bar.add_task("verify", total=657)
        bar.advance(task, 657)
        bar.refresh()
    shown = screen.getvalue()
    assert "657/657" in shown and "events" in shown
    assert "bytes" not in shown and "kB" not in shown

    screen.truncate(0)
    bar = cli.render.progress_bar(22_600, "ingest f.jsonl")  # a file: its size in bytes
    assert bar is not None
    with bar:
        bar.advance(bar.add_task("ingest", total=22_600), 22_600)
        bar.refresh()
    assert "kB" in screen.getvalue()

    # verify itself asks for events
    asked: list[tuple[object, ...]] = []
    monkeypatch.setattr("cli.verify.progress_bar", lambda *a, **k: asked.append((*a, k)))
    assert runner.invoke(app, ["verify", "--db", store["db"]]).exit_code == 1
    assert asked and asked[0][-1] == {"unit": "events"}


@pytest.fixture(scope="module")
def sp9_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The SP9 example with round 2's bank layer recorded as taking 34.50, not 32.50."""
    from tests.conftest import EXAMPLES

    folder = tmp_path_factory.mktemp("bank")
    text = (EXAMPLES / "sp9.jsonl").read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if '"round":"000002"' in x and "bank_settled" in x)
    feed = folder / "sp9.jsonl"
    feed.write_text(
        text.replace(line, line.replace('"commission":"32.5"', '"commission":"34.5"')), encoding="utf-8"
    )
    db = f"sqlite:///{folder / 'l.db'}"
    assert runner.invoke(app, ["ingest", str(feed), "--db", db]).exit_code == 0
    return db


def test_bank_shows_derived_and_recorded_named_in_text(sp9_store: str) -> None:
    shown = runner.invoke(app, ["bank", "--db", sp9_store])
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert "  bank result      derived     1,300.00  recorded     1,300.00" in lines
    assert "  bank commission  derived        65.00  recorded        67.00" in lines
    [second] = [x for x in lines if x.strip().startswith("000002")]
    assert "commission 32.50 (recorded W 650.00, commission 34.50)" in second
    assert "capital 3,617.50" in second and "carry 4,235.00" in second
    [first] = [x for x in lines if x.strip().startswith("000001")]
    assert "recorded" not in first  # agrees: nothing to add


def test_bank_csv_and_json_carry_both_with_two_decimals(sp9_store: str) -> None:
    rows = runner.invoke(app, ["bank", "--db", sp9_store, "--csv"]).stdout.splitlines()
    head = rows[0].split(",")
    assert head[-3:] == ["commission", "result_recorded", "commission_recorded"]
    second = dict(zip(head, rows[2].split(","), strict=True))
    assert (second["commission"], second["commission_recorded"]) == ("32.50", "34.50")
    assert (second["capital"], second["result"], second["carry"]) == ("3617.50", "650.00", "4235.00")
    code, body = ledger("bank", "--db", sp9_store, "--json")
    assert code == 0
    plain_validate(body, "bank")
    [table] = body["tables"]
    assert (table["bank_commission"], table["bank_commission_recorded"]) == ("65.00", "67.00")
    assert (table["bank_result"], table["bank_result_recorded"]) == ("1300.00", "1300.00")
    assert table["rounds"][1]["commission_recorded"] == "34.50"
    assert table["rounds"][1]["layers"][0]["recorded_commission"] == "34.50"


def test_export_csv_times_in_macau_ids_protected_and_the_game_column(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The example roulette feed moved 20 hours on and written in UTC (22:01+00:00 on 20
    November: 06:01 Macau time, gaming day 21 November), with players TRUE, false and 1E5."""
    import csv as csv_module
    from datetime import UTC, datetime, timedelta

    from tests.conftest import EXAMPLES

    folder = tmp_path_factory.mktemp("export")
    players = {"P-9": "TRUE", "P-1": "1E5", "P-4": "false"}
    lines = []
    for text in (EXAMPLES / "rl.jsonl").read_text(encoding="utf-8").splitlines():
        line = json.loads(text)
        at = datetime.fromisoformat(line["at"]) + timedelta(hours=20)
        line["at"] = at.astimezone(UTC).isoformat()
        if "player" in line:
            line["player"] = players.get(line["player"], line["player"])
        lines.append(json.dumps(line, separators=(",", ":")))
    feed = folder / "rl-utc.jsonl"
    feed.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert all("+00:00" in x for x in lines) and '"2026-11-20T22:' in lines[0]
    db = f"sqlite:///{folder / 'l.db'}"
    assert runner.invoke(app, ["ingest", str(feed), "--db", db]).exit_code == 0
    out = folder / "out"
    done = runner.invoke(app, ["export", "--db", db, "--out", str(out), "--format", "csv"])
    assert done.exit_code == 0, done.output

    bets = list(csv_module.DictReader((out / "bets.csv").open(encoding="utf-8")))
    assert {b["player"] for b in bets} >= {'="TRUE"', '="1E5"', '="false"'}
    assert all(b["placed_at"].endswith("+08:00") for b in bets)
    assert all(b["placed_at"].startswith("2026-11-21T0") for b in bets)
    assert {b["gaming_day"] for b in bets} == {"2026-11-21"}  # the time and the day agree
    settled = list(csv_module.DictReader((out / "settlements.csv").open(encoding="utf-8")))
    assert settled and all(s["at"].endswith("+08:00") for s in settled)
    header = (out / "commission.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.split(",")[:3] == ["gaming_day", "game", "currency"]
    by_game = runner.invoke(app, ["commission", "--by", "game", "--csv", "--db", db]).stdout
    assert by_game.splitlines()[0].split(",")[:2] == ["gaming_day", "game"]


def test_init_keygen_export_round_simulate_and_update_print_json(
    tmp_path: Path, store: dict[str, str]
) -> None:
    db = f"sqlite:///{tmp_path / 'new.db'}"
    code, body = ledger("init", "--db", db, "--json")
    assert code == 0 and body["backend"] == "sqlite" and body["roles"] is None, body
    plain_validate(body, "init")
    code, body = ledger("init", "--db", db, "--print-sql", "--json")
    assert code == 0 and body["statements"] and all(s.endswith(";") for s in body["statements"])
    plain_validate(body, "init")

    key = tmp_path / "k"
    code, body = ledger("keygen", "--out", str(key), "--json")
    assert code == 0 and body["public_key"] == f"{key}.pub" and Path(body["public_key"]).exists()
    plain_validate(body, "keygen")
    code, body = ledger("keygen", "--out", str(key), "--json")  # exists: an error object
    assert code == 2 and "exists" in body["error"], body

    bundle = tmp_path / "b.json"
    code, body = ledger(
        "export-round",
        "RL-01/000002",
        "--db",
        store["db"],
        "--bundle",
        str(bundle),
        "--checkpoint",
        store["cp"],
        "--json",
    )
    assert code == 0 and body["events"] > 0 and bundle.exists(), body
    assert body["first_link"] <= body["last_link"]
    plain_validate(body, "export-round")

    feed = tmp_path / "f.jsonl"
    code, body = ledger(
        "simulate",
        "--game",
        "RL",
        "--rounds",
        "3",
        "--tables",
        "1",
        "--error-rate",
        "1",
        "--out",
        str(feed),
        "--json",
    )
    assert code == 0 and body["lines"] == len(feed.read_text(encoding="utf-8").splitlines())
    assert body["rounds"] == 3 and body["games"] == ["RL"] and body["injected"] >= 1
    plain_validate(body, "simulate")

    assert runner.invoke(app, ["ingest", str(feed), "--db", db]).exit_code == 0
    code, body = ledger("projections", "update", "--db", db, "--json")
    assert code == 0 and {v["view"] for v in body["views"]} >= {"commission", "bank"}
    assert all(v["position"] > 0 for v in body["views"])
    plain_validate(body, "projections-update")


def test_a_stud_row_marked_wrong_shows_the_jackpot_paid(tmp_path: Path) -> None:
    """A flush's fixed award is 250; the table paid 350 beside a bet settled as the rules say:
    the row marked ✗ shows 250 wanted and 350 paid, not two equal settlements."""
    import re

    feed = tmp_path / "s.jsonl"
    made = runner.invoke(
        app,
        [
            "simulate",
            "--game",
            "STUD",
            "--tables",
            "1",
            "--rounds",
            "3",
            "--seed",
            "3",
            "--force",
            "STUD-01/000002:1=flush",
            "--out",
            str(feed),
        ],
    )
    assert made.exit_code == 0, made.output
    lines = feed.read_text(encoding="utf-8").splitlines()
    [at] = [i for i, x in enumerate(lines) if '"jackpot_paid"' in x]
    assert '"amount":"250"' in lines[at]
    lines[at] = lines[at].replace('"amount":"250"', '"amount":"350"')
    feed.write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = f"sqlite:///{tmp_path / 'l.db'}"
    assert runner.invoke(app, ["ingest", str(feed), "--db", db]).exit_code == 0
    page = tmp_path / "r.html"
    done = runner.invoke(app, ["report", "STUD-01/000002", "--db", db, "--html", str(page)])
    assert done.exit_code == 1, done.output
    html = page.read_text(encoding="utf-8")
    bets = html[html.index('<table class="bets">') :]
    [row] = re.findall(r'<tr class="mismatch">.*?</tr>', bets[: bets.index("</table>")], re.S)
    derived, recorded = re.findall(r"<td>(<span class=\"settlement\">.*?)</td>", row, re.S)
    assert '<span class="fld want"><i>amount </i>250.00</span>' in derived
    assert '<span class="fld diff"><i>amount </i>350.00</span>' in recorded
    assert "jackpot_mismatch" in derived and "jackpot_mismatch" in recorded


def test_jackpot_and_commission_write_amounts_one_way(tmp_path: Path) -> None:
    from tests.conftest import EXAMPLES

    db = f"sqlite:///{tmp_path / 'l.db'}"
    feeds = [str(EXAMPLES / f"{g}.jsonl") for g in ("stud", "3cb", "sp9")]
    assert runner.invoke(app, ["ingest", *feeds, "--db", db]).exit_code == 0
    shown = runner.invoke(app, ["jackpot", "--db", db]).stdout.splitlines()
    assert "pool PJ-1 (HKD)  balance 50,008.00" in shown
    assert "  seed                         50,000.00" in shown
    assert "  awards paid from the pool    0.00" in shown
    code, body = ledger("jackpot", "--db", db, "--json")
    assert code == 0
    [pool] = body["pools"]
    assert (pool["seed"], pool["pool_awards"], pool["awards"]["flush"]["amount"]) == (
        "50000.00",
        "0.00",
        "0.00",
    )
    plain_validate(body, "jackpot")
    rows = runner.invoke(app, ["jackpot", "--db", db, "--csv"]).stdout.splitlines()
    assert rows[1].startswith("PJ-1,HKD,50000.00,50008.00,8.00,")

    code, body = ledger("commission", "--by", "game", "--db", db, "--json")
    assert code == 0
    assert {line["group"]: line["recorded"] for line in body["lines"]} == {
        "3CB": "37.50",
        "SP9": "65.00",
        "STUD": "0.00",
    }
    lines = runner.invoke(app, ["commission", "--by", "game", "--db", db]).stdout.splitlines()
    assert any(x.startswith("2026-11-20  SP9") and x.split()[4:6] == ["65.00", "65.00"] for x in lines)
