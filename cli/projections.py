"""``ledger projections status|update|rebuild``: the finance views and where they stand."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.context import DbOption, opened
from cli.contract import fail
from cli.render import err, out, print_json, working
from ledger.live.views import follow_views
from projections.base import View
from projections.registry import registered_views
from projections.updater import catch_up, rebuild_all, status

projections = typer.Typer(
    name="projections",
    no_args_is_help=True,
    help="The finance views (commission, house, jackpot, bank): status, update and rebuild.",
)

ViewsArg = Annotated[
    list[str] | None, typer.Argument(metavar="[VIEW]...", help="View names; every registered view if none.")
]


def _chosen(names: list[str] | None) -> list[View]:
    views = registered_views()
    if not names:
        return views
    known = {v.name: v for v in views}
    unknown = [n for n in names if n not in known]
    if unknown:
        fail(f"no view {', '.join(unknown)}; views: {', '.join(known)}")
    return [known[n] for n in names]


@projections.command("status")
def status_command(
    names: ViewsArg = None,
    db: DbOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Each view's position in the log, its version, and how far behind it is (changes nothing).

    Exit code 0 always (2 on usage error).
    """
    views = _chosen(names)
    with opened(db) as app:
        rows = status(app, views)
    if as_json:
        print_json({"views": [r.to_json() for r in rows]})
        return
    out.print(
        f"{'view':<12} {'state':<8} {'version':>8} {'position':>10} {'head':>10} "
        f"{'events behind':>14} {'rounds behind':>14}",
        markup=False,
    )
    for r in rows:
        stored = "" if r.stored_version in (None, r.version) else f" (stored {r.stored_version})"
        out.print(
            f"{r.view:<12} {r.state:<8} {r.version:>8} {r.position:>10} {r.head:>10} "
            f"{r.events_behind:>14} {r.rounds_behind:>14}{stored}",
            markup=False,
        )


@projections.command("update")
def update_command(
    names: ViewsArg = None,
    db: DbOption = None,
    batch: Annotated[int, typer.Option(min=1, help="Rounds per transaction.")] = 500,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow",
            rich_help_panel="Live",
            help="Keep updating (every --every) until SIGTERM or SIGINT, printing each view "
            "that moved; an unreachable database is waited out.",
        ),
    ] = False,
    every: Annotated[
        str,
        typer.Option(
            metavar="DURATION", rich_help_panel="Live", help="--follow: how often to update (e.g. 1s, 500ms)."
        ),
    ] = "1s",
) -> None:
    """Fold every round closed since the last update into the views (exactly once: rows and
    position commit together). Run it on a timer or after each ingest, or with --follow.
    """
    views = _chosen(names)
    if follow:
        # Here, not at the top: the live modules load the NATS client and prometheus (~0.2 s),
        # which no other projections command needs.
        from ledger.live.follower import store_errors
        from ledger.live.run import parse_duration

        try:
            seconds = parse_duration(every)
        except ValueError as exc:
            fail(str(exc))
        with opened(db) as app:
            follow_views(
                app,
                views,
                every=seconds,
                batch_rounds=batch,
                on_moved=lambda name, pos: out.print(f"{name}: position {pos}", markup=False),
                on_error=lambda exc: err.print(
                    f"ledger projections: cannot update: {str(exc).splitlines()[0]}; "
                    "waiting for the database",
                    markup=False,
                ),
                errors=store_errors(),
            )
        return
    with opened(db) as app, working("updating the views"):
        positions = catch_up(app, views, batch_rounds=batch)
    if as_json:
        print_json({"views": [{"view": name, "position": position} for name, position in positions.items()]})
        return
    for name, position in positions.items():
        out.print(f"{name}: position {position}", markup=False)


@projections.command("rebuild")
def rebuild_command(
    names: ViewsArg = None,
    db: DbOption = None,
    replace: Annotated[
        bool, typer.Option("--replace", help="Replace a live view that differs with the rebuilt one.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Rebuild each view from position 0 into a scratch view and compare it with the live one
    at the same position.

    Exit code 0: rebuild equals incremental. 1: some rows differ (replaced with --replace).
    2: usage error.
    """
    views = _chosen(names)
    with opened(db) as app, working("rebuilding the views"):
        results = rebuild_all(app, views, replace=replace)
    if as_json:
        print_json(
            {
                "views": [
                    {"view": r.view, "position": r.position, "differing_keys": r.keys, "replaced": r.replaced}
                    for r in results
                ]
            }
        )
    else:
        for r in results:
            verdict = (
                "rebuild equals incremental"
                if not r.keys
                else (f"{len(r.keys)} rows differ" + (" (replaced)" if r.replaced else ""))
            )
            out.print(f"{r.view}: position {r.position}: {verdict}", markup=False)
            for key in r.keys[:20]:
                out.print(f"  {key}", markup=False)
    raise typer.Exit(code=1 if any(r.keys for r in results) else 0)


ORDER = 60
COMMANDS = [projections]
