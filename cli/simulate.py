"""``ledger simulate``: write a realistic, seeded feed with injected dealer errors."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Annotated, Any

import typer

from cli.contract import fail
from cli.render import err, print_json
from ledger.games import GAMES
from ledger.games.stud_poker.simulate import force_plan
from ledger.live.publish import publish_lines
from ledger.live.sources import NatsAddress, SourceError
from ledger.tools.simulate import parse_bias, parse_croupier_rates
from ledger.tools.simulate import simulate as run_simulation
from ledger.tools.simulators import SIMULATORS


def simulated_games(names: list[str]) -> list[str]:
    """Game keys from ``--game`` values (repeatable or comma-separated); all that can be simulated
    when none is given."""
    keys = [k.strip().upper() for n in names for k in n.split(",") if k.strip()]
    if not keys:
        return [k for k in GAMES if k in SIMULATORS]
    for key in keys:
        if key not in GAMES:
            raise typer.BadParameter(f"unknown game {key}; one of {' '.join(GAMES)}")
        if key not in SIMULATORS:
            raise typer.BadParameter(f"{key} cannot be simulated yet")
    return keys


def simulate(
    out: Annotated[
        str | None,
        typer.Option(
            "--out",
            help="Where to write the feed (JSON Lines); - writes it to standard output "
            "(for ingest --follow -).",
        ),
    ] = None,
    game: Annotated[
        list[str],
        typer.Option("--game", help="Game key(s), e.g. RL or RL,FPC; default: every game with a simulator."),
    ] = [],  # noqa: B006
    rounds: Annotated[int, typer.Option(min=1, help="Rounds per table.")] = 100,
    tables: Annotated[int, typer.Option(min=1, max=99, help="Tables per game.")] = 2,
    seed: Annotated[int, typer.Option(help="Random seed: the same seed gives the same feed.")] = 1,
    error_rate: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Share of rounds given one injected error.")
    ] = 0.0,
    force: Annotated[
        list[str],
        typer.Option(
            "--force",
            help="Force a STUD hand for a demo: TABLE/ROUND:SEAT=HAND, e.g. "
            "STUD-01/000010:3=royal_flush (repeatable).",
        ),
    ] = [],  # noqa: B006
    bias: Annotated[
        list[str],
        typer.Option(
            "--bias",
            help="Unfair equipment for surveillance demos: TABLE:SPEC[,SPEC], SPEC one of "
            "N=W (pocket or face N W times as likely, e.g. RL-01:17=1.5), sectorN.K=W "
            "(K pockets centred on N in wheel order, e.g. RL-01:sector17.5=1.2), "
            "dK.F=W (die K only, e.g. FPC-01:d2.6=2), missing=CARD (e.g. "
            "STUD-01:missing=AS) or extra=CARD (3CB shoes, e.g. 3CB-01:extra=AS); "
            "repeatable.",
        ),
    ] = [],  # noqa: B006
    croupier_error_rate: Annotated[
        list[str],
        typer.Option(
            "--croupier-error-rate",
            help="A croupier's own share of rounds given an error, "
            "CROUPIER=RATE, e.g. D-RL-03=0.09 (repeatable; others keep "
            "--error-rate).",
        ),
    ] = [],  # noqa: B006
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    publish: Annotated[
        str | None,
        typer.Option(
            "--publish",
            metavar="nats://HOST:PORT/STREAM",
            rich_help_panel="Live",
            help="Publish the feed to a NATS JetStream stream instead, one subject per table "
            "(STREAM.<table>); the stream is created when it does not exist.",
        ),
    ] = None,
    rate: Annotated[
        float | None,
        typer.Option(
            min=0.1,
            metavar="EVENTS_PER_S",
            rich_help_panel="Live",
            help="Play the feed in real time at this many lines per second (with --publish or "
            "--out -); default: as fast as possible.",
        ),
    ] = None,
) -> None:
    """Write a seeded feed of every game (or --game); injected errors are listed in OUT.errors.json.

    With --out - the lines go to standard output, with --publish to a NATS stream (the injected
    errors are then counted on standard error only).
    """
    if (out is None) == (publish is None):
        raise typer.BadParameter("give one of --out FILE|- and --publish nats://HOST:PORT/STREAM")
    if publish is not None:
        try:
            NatsAddress.parse(publish)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
    if rate is not None and out not in (None, "-"):
        raise typer.BadParameter("--rate plays the feed in real time: use it with --out - or --publish")
    keys = simulated_games(game)
    try:
        state = {"STUD": force_plan(force)} if force else None
        biased = parse_bias(bias)
        croupier_rates = parse_croupier_rates(croupier_error_rate)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    names = {f"{k}-{t:02d}" for k in keys for t in range(1, tables + 1)}
    unknown = sorted(set(biased) - names)
    if unknown:
        raise typer.BadParameter(f"--bias names no simulated table: {', '.join(unknown)}")
    pool = {f"D-{k}-{c:02d}" for k in keys for c in range(1, tables + 3)}
    strangers = sorted(set(croupier_rates) - pool)
    if strangers:
        raise typer.BadParameter(
            f"--croupier-error-rate names no simulated croupier: "
            f"{', '.join(strangers)} (D-GAME-NN, NN up to tables + 2)"
        )
    sim = run_simulation(
        [GAMES[k] for k in keys],
        rounds=rounds,
        tables=tables,
        seed=seed,
        error_rate=error_rate,
        game_state=state,
        bias=biased,
        croupier_error_rates=croupier_rates,
    )
    if publish is not None or out == "-":
        _play(sim.lines, publish, rate)
        err.print(
            f"played {len(sim.lines)} lines ({sim.rounds} rounds of {', '.join(keys)}) to "
            f"{publish or 'standard output'}; {len(sim.injected)} injected errors"
        )
        return
    assert out is not None
    sidecar = sim.write(out)
    if as_json:
        print_json(
            {
                "out": out,
                "errors_file": str(sidecar),
                "lines": len(sim.lines),
                "rounds": sim.rounds,
                "games": keys,
                "injected": len(sim.injected),
            }
        )
        return
    err.print(
        f"wrote {len(sim.lines)} lines ({sim.rounds} rounds of {', '.join(keys)}) to {out}; "
        f"{len(sim.injected)} injected errors listed in {sidecar}"
    )


def _play(lines: list[dict[str, Any]], publish: str | None, rate: float | None) -> None:
    encoded = (json.dumps(line, separators=(",", ":")).encode() for line in lines)
    if publish is not None:
        try:
            asyncio.run(publish_lines(publish, encoded, rate=rate))
        except SourceError as exc:
            fail(str(exc))
        return
    started = time.monotonic()
    stream = sys.stdout.buffer
    try:
        for n, line in enumerate(encoded, 1):
            stream.write(line + b"\n")
            if rate is not None:
                stream.flush()
                wait = started + n / rate - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
        stream.flush()
    except BrokenPipeError:  # the reader went away (e.g. the follower was stopped)
        sys.stderr.close()
        raise typer.Exit(code=0) from None


ORDER = 80
COMMANDS = [simulate]
