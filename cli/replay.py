"""``ledger replay TABLE/ROUND``: one round event by event, derived against recorded."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli.context import DbOption, opened, round_target
from cli.contract import fail
from cli.render import err, out, print_json
from ledger.domain.errors import SealError
from ledger.domain.money import text_or_same
from ledger.services.replay import RoundReplay, replay_round


def replay(
    target: Annotated[str, typer.Argument(metavar="TABLE/ROUND", help="The round, e.g. RL-01/000417.")],
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
    """Show one round: its events, the derived outcome with the article behind each step, and
    each bet's derived settlement next to the recorded one.

    A stored checkpoint is used only when its signature is valid under the store's sealing
    public key (LEDGER_SEAL_PUBLIC_KEY or `ledger init --seal-public-key`); without one the
    round is judged from the start of the store (said once on stderr).

    Exit code 0: the round has no findings. 1: it has findings. 2: no such round, bad usage or
    an unreadable sealing public key.
    """
    table, round_ = round_target(target)
    with opened(db) as app:
        try:
            result = replay_round(app, table, round_, from_start=from_start)
        except SealError as exc:
            fail(str(exc))
    if result is None:
        fail(f"no round {table}/{round_} in the store")
    if result.note:
        err.print(f"note: {result.note}", markup=False)
    if as_json:
        print_json(result.to_json())
    else:
        _print(result)
    raise typer.Exit(code=1 if result.errors else 0)


def _print(r: RoundReplay) -> None:
    data: dict[str, Any] = r.to_json()
    out.print(
        f"[bold]{data['game']} round {data['table']}/{data['round']}[/bold] "
        f"({data['currency']}, rulebook {data['rules_hash'][:12]}…)"
    )
    if "judged_from" in data:
        at = data["judged_from"]
        out.print(
            f"judged from the checkpoint at row {at['position']} (chain link {at['links']}, "
            f"head {at['head'][:16]}…)",
            markup=False,
        )
    out.print("\n[bold]events[/bold]")
    for e in data["events"]:
        out.print(f"  {e['seq']:>4}  {e['at']}  {e['type']:<16} {e['summary']}", markup=False)
    out.print("\n[bold]derivation[/bold]")
    for s in data["derivation"]:
        out.print(f"  {s['text']}" + (f"  [{s['rule']}]" if s["rule"] else ""), markup=False)
    out.print("\n[bold]bets[/bold]  (derived | recorded)")
    for b in data["bets"]:
        mark = "ok " if b["agrees"] else "!! "
        out.print(
            f"  {mark}{b['bet']:<6} {b['spot']:<28} {text_or_same(b['amount']):>12}  "
            f"{_s(b['derived'])} | {_s(b['recorded'])}",
            markup=False,
        )
        if b["derived"]:
            out.print(f"        {b['derived']['reason']}  [{b['derived']['rule']}]", markup=False)
    out.print("\n[bold]findings[/bold]")
    if not data["findings"]:
        out.print("  none")
    for f in data["findings"]:
        out.print(
            f"  {f['code']}"
            + (f" bet {f['bet']}" if f["bet"] else "")
            + f": {f['message']}"
            + (f"  [{f['rule']}]" if f["rule"] else ""),
            markup=False,
        )


def _s(d: dict[str, Any] | None) -> str:
    """``win ret 1,000.00 won 1,000.00 comm 50.00``; ``-`` for nothing."""
    if not d:
        return "-"
    amounts = " ".join(f"{short} {text_or_same(d[name])}" for short, name in _SHORT)
    return f"{d['result']} {amounts}"


_SHORT = (("ret", "returned"), ("won", "won"), ("comm", "commission"))


ORDER = 30
COMMANDS = [replay]
