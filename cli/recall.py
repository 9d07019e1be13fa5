"""``ledger recall --table T --last N``: a table's last rounds, in order, for an inspector."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

import typer

from cli.context import DbOption, opened
from cli.contract import fail
from cli.render import err, out, print_json
from ledger.domain.errors import SealError
from ledger.domain.money import text_or_same
from ledger.report.recall import DEFAULT_LAST, Recall, recall


def recall_command(
    table: Annotated[str, typer.Option("--table", help="The table code, e.g. RL-01.")],
    last: Annotated[int, typer.Option(min=1, max=10000, help="How many rounds.")] = DEFAULT_LAST,
    db: DbOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    from_start: Annotated[
        bool,
        typer.Option(
            "--from-start",
            help="Judge from the beginning of the store, not from the nearest "
            "stored checkpoint before the round (games whose rules span rounds: 3CB, SP9, STUD).",
        ),
    ] = False,
) -> None:
    """Recall the last rounds of a table in the order it played them: each round's outcome,
    bets, settlement (recorded, with the derived one beside it) and findings.

    Exit code 0: no finding in these rounds. 1: findings. 2: no such table or bad usage.
    """
    with opened(db) as app:
        try:
            result = recall(app, table, last, from_start=from_start)
        except SealError as exc:
            fail(str(exc))
    if result is None:
        fail(f"no round of table {table} in the store")
    for note in sorted({r.note for r in result.rounds if r.note}):
        err.print(f"note: {note}", markup=False)
    if as_json:
        print_json(result.to_json())
    else:
        _print(result)
    raise typer.Exit(code=1 if result.has_errors else 0)


recall_command.__name__ = "recall"


def _print(r: Recall) -> None:
    data = r.to_json()
    out.print(f"[bold]{r.table}[/bold]: the last {len(data['rounds'])} of {r.played} rounds, oldest first")
    for rnd in data["rounds"]:
        errors = [f for f in rnd["findings"] if f["severity"] == "error"]
        verdict = f"{len(errors)} finding(s)" if errors else "no finding"
        out.print(
            f"\n[bold]{rnd['round']}[/bold]  {rnd['game']}  {rnd['opened_at']}  "
            f"{rnd['state']}  {rnd['currency']}  — {verdict}"
        )
        for line in rnd["outcome"]:
            out.print(
                f"  {line['label']}: {line['text']}" + (f" ({line['note']})" if line["note"] else ""),
                markup=False,
            )
        for b in rnd["bets"]:
            mark = "ok" if b["agrees"] else "!!"
            who = f" {b['player']}" if b["player"] else ""
            differs = "" if b["agrees"] else f"; the rules give {_s(b['derived'])}"
            stake = text_or_same(b["amount"])
            out.print(
                f"  {mark} {b['bet']}{who} {b['spot']} {stake}: {_s(b['recorded'])}{differs}",
                markup=False,
            )
        for f in rnd["findings"]:
            out.print(
                f"  {f['severity']}: {f['code']}"
                + (f" bet {f['bet']}" if f["bet"] else "")
                + f": {f['message']}"
                + (f" [{f['rule']}]" if f["rule"] else ""),
                markup=False,
            )


def _s(d: dict[str, Any] | None) -> str:
    """``lose``, ``win returned 100.00 won 100.00 commission 5.00``; ``no settlement`` for nothing."""
    if not d:
        return "no settlement"
    amounts = [f"{k} {text_or_same(d[k])}" for k in ("returned", "won", "commission") if Decimal(d[k])]
    return " ".join([d["result"], *amounts])


ORDER = 35
COMMANDS = [recall_command]
