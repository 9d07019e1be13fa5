"""``ledger verify``: replay rounds, report findings, check integrity (FEED §10)."""

from __future__ import annotations

from typing import Annotated

import typer
from eventsourcing.persistence import InterfaceError, OperationalError

from cli.context import DbOption, open_app
from cli.render import err, print_json, print_verify, progress_bar
from ledger.feed.types import GAME_KEYS
from ledger.store import LedgerApp
from ledger.verify.engine import Selection, VerifyReport, verify_store


def verify(
    db: DbOption = None,
    table: Annotated[str | None, typer.Option(help="Only rounds of this table.")] = None,
    game: Annotated[str | None, typer.Option(help="Only rounds of this game: "
                                             + " ".join(GAME_KEYS) + ".")] = None,
    round: Annotated[str | None, typer.Option("--round", help="Only rounds with this id.")] = None,
    expect_head: Annotated[str | None, typer.Option(
        help="Fail (exit 3) unless the store still contains this head digest, printed by an "
             "earlier verify: catches truncation of the newest events.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Re-derive every selected round under its stored rulebook and check the integrity chain.

    Exit code 0: nothing found. 1: findings. 2: usage error. 3: integrity broken (wins over 1).
    """
    if game is not None and game not in GAME_KEYS:
        err.print(f"error: --game must be one of {' '.join(GAME_KEYS)}")
        raise typer.Exit(code=2)
    app = open_app(db)
    try:
        report = _run(app, Selection(table=table, game=game, round=round), expect_head)
    finally:
        app.close()
    if as_json:
        print_json(report.to_json())
    else:
        print_verify(report)
    raise typer.Exit(code=report.exit_code)


def _run(app: LedgerApp, selection: Selection, expect_head: str | None) -> VerifyReport:
    try:
        total = app.recorder.max_notification_id() or 0
    except Exception:  # a damaged file: let verify report it
        total = 0
    bar = progress_bar(total, "verify")
    try:
        if bar is None:
            return verify_store(app, selection, expect_head=expect_head)
        with bar:
            task = bar.add_task("verify", total=total)
            return verify_store(app, selection, expect_head=expect_head,
                                on_progress=lambda n: bar.advance(task, n))
    except (OperationalError, InterfaceError) as exc:  # the server went away: not tampering
        err.print(f"error: the store cannot be reached: {exc}")
        raise typer.Exit(code=2) from None
    except Exception as exc:  # e.g. "database disk image is malformed" on a damaged file
        from ledger.verify.findings import Finding

        report = VerifyReport(integrity_ok=False)
        report.findings.append(Finding("chain_broken", None, None, rule="integrity",
                                       message=f"the store cannot be read: {exc}"))
        return report

ORDER = 20
COMMANDS = [verify]
