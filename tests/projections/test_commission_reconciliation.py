"""Commission recorded against due, per gaming day: exact Decimal sums, unjudged kept apart."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

from ledger.services.ingest import Ingestor, ingest_file, numbered_lines
from ledger.storage.store import LedgerApp
from ledger.verify.judge import RoundJudge
from projections.base import MemoryRows, closed_rounds, fold_store
from projections.commission import CommissionView, commission_items, commission_report

GAME_FILES = ["rl.jsonl", "fpc.jsonl", "sp9.jsonl", "3cb.jsonl", "stud.jsonl", "mj.jsonl"]


def _line(table: str, rnd: str, seq: int, at: str, type_: str, **fields: object) -> str:
    return json.dumps(
        {"v": 1, "table": table, "game": "RL", "round": rnd, "seq": seq, "at": at, "type": type_, **fields}
    )


def rl_round(
    rnd: str, at: str, *, commission: str = "0", currency: str = "HKD", table: str = "RL-01"
) -> list[str]:
    """A roulette round: 100 straight-up on 17 by P-1 (wins 3500), 500 on red by P-2 (loses);
    the spin is 17. ``commission`` is what the table (wrongly, if not 0) took on the win."""
    return [
        _line(table, rnd, 1, at, "round_opened", currency=currency),
        _line(
            table,
            rnd,
            2,
            at,
            "bet_placed",
            bet="b1",
            player="P-1",
            spot={"kind": "straight", "numbers": [17]},
            amount="100",
        ),
        _line(table, rnd, 3, at, "bet_placed", bet="b2", player="P-2", spot={"kind": "red"}, amount="500"),
        _line(table, rnd, 4, at, "spin_result", number=17),
        _line(
            table,
            rnd,
            5,
            at,
            "bet_settled",
            bet="b1",
            result="win",
            returned="100",
            won="3500",
            commission=commission,
        ),
        _line(
            table, rnd, 6, at, "bet_settled", bet="b2", result="lose", returned="0", won="0", commission="0"
        ),
        _line(table, rnd, 7, at, "round_closed"),
    ]


def _ingest_lines(app: LedgerApp, lines: list[str]) -> None:
    report = Ingestor(app).ingest(numbered_lines(line + "\n" for line in lines))
    assert not report.rejected, report.rejected


def _ingest_files(app: LedgerApp, examples: Path, names: list[str] = GAME_FILES) -> None:
    for name in names:
        ingest_file(app, examples / name)


def _recorded_in_file(path: Path) -> Decimal:
    """Commission the feed says the table took, summed straight from the JSON lines."""
    total = Decimal(0)
    for text in path.read_text(encoding="utf-8").splitlines():
        line = json.loads(text)
        if line["type"] in ("bet_settled", "bank_settled"):
            total += Decimal(line["commission"])
        elif line["type"] == "commission_charged":
            total += Decimal(line["amount"])
    return total


def test_a_commission_taken_on_a_roulette_win_shows_as_the_difference(app: LedgerApp) -> None:
    _ingest_lines(
        app,
        rl_round("r1", "2026-11-21T20:00:00+08:00", commission="175")
        + rl_round("r2", "2026-11-21T21:00:00+08:00"),
    )
    report = commission_report(fold_store(app, CommissionView()), by="player")
    lines = {(ln.group, ln.day.isoformat()): ln for ln in report.lines}
    p1 = lines[("P-1", "2026-11-21")]
    assert (p1.rounds, p1.items, p1.recorded, p1.due, p1.difference) == (
        2,
        2,
        Decimal("175"),
        Decimal("0"),
        Decimal("175"),
    )  # RL art. 7: no commission
    assert lines[("P-2", "2026-11-21")].difference == 0
    [total] = report.totals
    assert (total.currency, total.rounds, total.recorded, total.difference) == (
        "HKD",
        4,
        Decimal("175"),
        Decimal("175"),
    )  # by player a round counts per player


def test_gaming_day_follows_macau_time_and_the_cutoff_hour(app: LedgerApp) -> None:
    _ingest_lines(
        app,
        rl_round("a", "2026-11-21T05:59:59+08:00", commission="1")
        + rl_round("b", "2026-11-21T06:00:00+08:00", commission="2")
        + rl_round("c", "2026-11-20T22:30:00Z", commission="4"),
    )  # 06:30 Macau
    rows = fold_store(app, CommissionView())
    by_day = {ln.day.isoformat(): ln.recorded for ln in commission_report(rows).lines}
    assert by_day == {"2026-11-20": Decimal("1"), "2026-11-21": Decimal("6")}
    midnight = {ln.day.isoformat(): ln.recorded for ln in commission_report(rows, cutoff_hour=0).lines}
    assert midnight == {"2026-11-21": Decimal("7")}
    only = commission_report(rows, day_from=_d("2026-11-21"), day_to=_d("2026-11-21"))
    assert [ln.recorded for ln in only.lines] == [Decimal("6")]


def test_currencies_are_never_added_together(app: LedgerApp) -> None:
    _ingest_lines(
        app,
        rl_round("h", "2026-11-21T20:00:00+08:00", commission="0.05")
        + rl_round("m", "2026-11-21T20:00:00+08:00", commission="0.10", currency="MOP", table="RL-02"),
    )
    report = commission_report(fold_store(app, CommissionView()), by="table")
    assert [(t.currency, t.recorded) for t in report.totals] == [
        ("HKD", Decimal("0.05")),
        ("MOP", Decimal("0.10")),
    ]


def test_exact_decimal_sums_over_many_rounds(app: LedgerApp) -> None:
    lines: list[str] = []
    for i in range(30):
        lines += rl_round(
            f"x{i:02d}",
            f"2026-11-21T{10 + i // 10:02d}:{i:02d}:00+08:00",
            commission="0.01" if i % 3 else "0.1",
        )
    _ingest_lines(app, lines)
    [total] = commission_report(fold_store(app, CommissionView())).totals
    assert total.recorded == Decimal("0.01") * 20 + Decimal("0.1") * 10 == Decimal("1.20")
    assert str(total.recorded) == "1.20"


def test_every_example_feed_reconciles_to_the_commission_in_the_file(app: LedgerApp, examples: Path) -> None:
    """Recorded totals equal the file's own sums; every game's rules judge every item of its
    clean example feed, and none differs."""
    _ingest_files(app, examples)
    rows = fold_store(app, CommissionView())
    report = commission_report(rows, by="game")
    for name, key in (
        ("rl.jsonl", "RL"),
        ("fpc.jsonl", "FPC"),
        ("3cb.jsonl", "3CB"),
        ("sp9.jsonl", "SP9"),
        ("mj.jsonl", "MJ"),
        ("stud.jsonl", "STUD"),
    ):
        [line] = [ln for ln in report.lines if ln.group == key]
        recorded = _recorded_in_file(examples / name)
        assert line.recorded == recorded, key
        assert line.difference == 0, key
        assert line.unjudged == 0, key
    three = next(ln for ln in report.lines if ln.group == "3CB")
    assert (three.due, three.unjudged) == (Decimal("37.50"), 0)  # 3CB art. 10: 5 % of prizes


def test_a_round_the_rules_cannot_settle_is_unjudged_not_zero_due(app: LedgerApp) -> None:
    """No spin recorded: the rules settle no bet, so the 175 the table took is unjudged (kept
    apart), not compared with a due of 0."""
    kept = [
        json.loads(ln)
        for ln in rl_round("r1", "2026-11-21T20:00:00+08:00", commission="175")
        if '"spin_result"' not in ln
    ]
    _ingest_lines(app, [json.dumps({**line, "seq": n}) for n, line in enumerate(kept, 1)])
    [line] = commission_report(fold_store(app, CommissionView()), by="game").lines
    assert (line.recorded, line.due, line.unjudged, line.unjudged_items, line.difference) == (
        Decimal("175"),
        0,
        Decimal("175"),
        2,
        0,
    )
    [(_, rnd)] = closed_rounds(app)
    items = commission_items(RoundJudge().judge_round(rnd))
    assert [(i.player, i.recorded, i.due, i.rule) for i in items] == [
        ("P-1", Decimal("175"), None, "unjudged"),
        ("P-2", Decimal("0"), None, "unjudged"),
    ]


def test_rounds_count_once_per_table_whatever_the_players(app: LedgerApp) -> None:
    _ingest_lines(app, rl_round("r1", "2026-11-21T20:00:00+08:00"))
    rows: MemoryRows = fold_store(app, CommissionView())
    [line] = commission_report(rows, by="table").lines
    assert (line.group, line.rounds, line.items) == ("RL-01", 1, 2)


def _d(text: str):
    from datetime import date

    return date.fromisoformat(text)
