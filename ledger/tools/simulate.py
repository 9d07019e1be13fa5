"""``ledger simulate``: realistic, seeded feeds with injected dealer errors.

Each game's ``simulate.py`` plays one round into a :class:`RoundBuilder`; this module runs many
tables of many games side by side, interleaves their lines in time order as a live feed would,
and injects errors at a given rate. Every injected error is returned as an
:class:`~ledger.tools.builder.Injected` — the finding verify must report — so tests can check that
verify finds exactly those and nothing else. The same seed gives the same feed, byte for byte.

For surveillance (``ledger stats``) every ``round_opened`` names the table's ``croupier`` (a
rota of one-hour shifts, derived from the table and the time, so it draws nothing from the
random stream), and ``bias`` can give chosen tables unfair equipment (:class:`TableBias`): a
wheel pocket, a sector of the wheel or a die face made more or less likely, a card missing from
every shoe or an extra one in every multi-deck shoe; ``croupier_error_rates`` gives chosen
croupiers their own error rate.
"""

from __future__ import annotations

import heapq
import json
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from ledger.games.base import Game
from ledger.games.roulette.tables import WHEEL_ORDER
from ledger.tools.builder import COMMON_KINDS, ERROR_KINDS, Injected, RoundBuilder, TableBias
from ledger.tools.simulators import SIMULATORS

__all__ = [
    "COMMON_KINDS",
    "DEFAULT_START",
    "ERROR_KINDS",
    "Injected",
    "RoundBuilder",
    "Simulation",
    "TableBias",
    "croupier_on_duty",
    "parse_bias",
    "parse_croupier_rates",
    "simulate",
]

SHIFT = timedelta(hours=1)
"""A croupier's turn at a table before the rota moves on."""

MACAU = timezone(timedelta(hours=8))
DEFAULT_START = datetime(2026, 11, 20, 10, 0, tzinfo=MACAU)


@dataclass
class Simulation:
    """A simulated feed: its lines in time order and the errors injected into it."""

    lines: list[dict[str, Any]]
    injected: list[Injected]
    rounds: int

    def write(self, path: str) -> str:
        """Write the feed as JSON Lines and the injected errors next to it; returns the sidecar path."""
        with open(path, "w", encoding="utf-8") as out:
            for line in self.lines:
                out.write(json.dumps(line, separators=(",", ":")) + "\n")
        sidecar = path + ".errors.json"
        with open(sidecar, "w", encoding="utf-8") as out:
            json.dump([i.as_dict() for i in self.injected], out, indent=1)
            out.write("\n")
        return sidecar


def simulate(
    games: Sequence[Game],
    *,
    rounds: int,
    tables: int,
    seed: int,
    error_rate: float = 0.0,
    start: datetime = DEFAULT_START,
    round_interval: timedelta = timedelta(seconds=90),
    rounds_for: dict[str, int] | None = None,
    game_state: dict[str, dict[str, Any]] | None = None,
    bias: dict[str, TableBias] | None = None,
    croupier_error_rates: dict[str, float] | None = None,
) -> Simulation:
    """Play ``rounds`` rounds on each of ``tables`` tables of every game in ``games``.

    ``rounds_for`` overrides ``rounds`` per game key (a Mah-Jong game is a long "round"); its
    tables then play fewer, longer rounds over the same day. ``game_state`` seeds a game's shared
    state by key (``{"STUD": stud.simulate.force_plan([...])}`` forces jackpot hands for a demo).

    Each round gets an injected error with probability ``error_rate`` (one error per round at
    most, of a kind the game supports), so the sidecar lists exactly what verify must find.
    ``bias`` gives tables (by code) unfair equipment; a fair table's feed is the same with or
    without it. ``croupier_error_rates`` replaces ``error_rate`` for the rounds the named
    croupiers deal (the same random draws, so other rounds are unchanged).
    """
    rates = croupier_error_rates or {}
    if not all(0.0 <= r <= 1.0 for r in (error_rate, *rates.values())):
        raise ValueError("error_rate is a probability, from 0 to 1")
    rng = random.Random(seed)
    streams: list[list[dict[str, Any]]] = []
    injected: list[Injected] = []
    total = 0
    for game in games:
        simulator = SIMULATORS.get(game.key)
        if simulator is None:
            raise ValueError(f"{game.key} has no simulator yet")
        game_rounds = (rounds_for or {}).get(game.key, rounds)
        total += game_rounds * tables
        interval = round_interval * rounds / game_rounds  # a table's day lasts as long
        shared: dict[str, Any] = dict((game_state or {}).get(game.key, {}))
        for t in range(1, tables + 1):
            table = f"{game.key}-{t:02d}"
            table_rng = random.Random(rng.getrandbits(64))
            table_state: dict[str, Any] = {}
            stream: list[dict[str, Any]] = []
            for r in range(1, game_rounds + 1):
                croupier = croupier_on_duty(game.key, t, tables, interval * r)
                kind = None
                if simulator.injectable and table_rng.random() < rates.get(croupier, error_rate):
                    kind = table_rng.choice(simulator.injectable)
                builder = RoundBuilder(
                    table,
                    game.key,
                    f"{r:06d}",
                    start + interval * r,
                    table_state=table_state,
                    game_state=shared,
                    croupier=croupier,
                    bias=(bias or {}).get(table),
                )
                injected += simulator.simulate_round(builder, table_rng, kind)
                stream += builder.lines
            streams.append(stream)
    lines = list(_merge_by_time(streams))
    for game in games:
        finish_feed = SIMULATORS[game.key].finish_feed
        if finish_feed is not None:
            injected = finish_feed(lines, injected)
    return Simulation(lines, injected, total)


def _merge_by_time(streams: list[list[dict[str, Any]]]) -> Iterator[dict[str, Any]]:
    """Interleave per-table streams by timestamp, as a property-wide live feed arrives."""
    keyed = [[(line["at"], i, n, line) for n, line in enumerate(s)] for i, s in enumerate(streams)]
    for _, _, _, line in heapq.merge(*keyed):
        yield line


def croupier_on_duty(game: str, table: int, tables: int, elapsed: timedelta) -> str:
    """The croupier running table number ``table`` after ``elapsed`` of play: a rota of one-hour
    shifts over ``tables + 2`` croupiers per game, so no two tables share one at a time."""
    pool = tables + 2
    return f"D-{game}-{(table - 1 + int(elapsed / SHIFT)) % pool + 1:02d}"


def parse_bias(specs: Sequence[str]) -> dict[str, TableBias]:
    """``TABLE:SPEC[,SPEC…]`` values of ``--bias``, by table. A SPEC is ``N=W`` (pocket or face
    ``N`` is ``W`` times as likely), ``sectorN.K=W`` (the ``K`` pockets centred on pocket ``N`` in
    the wheel's order), ``dK.F=W`` (face ``F`` of die ``K`` only), ``missing=CARD`` (one copy of
    the card is not in the shoe) or ``extra=CARD`` (one more copy in each shoe of several
    decks); a :class:`ValueError` says what is wrong."""
    out: dict[str, TableBias] = {}
    for spec in specs:
        table, sep, rest = spec.partition(":")
        if not sep or not table or not rest:
            raise ValueError(f"--bias {spec!r}: expected TABLE:SPEC, e.g. RL-01:17=1.5")
        bias = out.setdefault(table, TableBias())
        for part in rest.split(","):
            _bias_part(bias, spec, part.strip())
    return out


def _bias_part(bias: TableBias, spec: str, part: str) -> None:
    key, sep, value = part.partition("=")
    if not sep:
        raise ValueError(f"--bias {spec!r}: {part!r} is not KEY=VALUE")
    if key in ("missing", "extra"):
        if len(value) != 2 or value[0] not in "A23456789TJQK" or value[1] not in "SHCD":
            raise ValueError(f"--bias {spec!r}: {value!r} is not a card like AS")
        if key == "extra" and not spec.startswith("3CB-"):
            raise ValueError(
                f"--bias {spec!r}: an extra card is for a multi-deck shoe (a 3CB "
                "table); in one deck a second copy is a duplicate verify reports"
            )
        (bias.missing if key == "missing" else bias.extra).append(value)
        return
    try:
        weight = float(value)
    except ValueError:
        raise ValueError(f"--bias {spec!r}: weight {value!r} is not a number") from None
    if not 0 < weight < 1000:
        raise ValueError(f"--bias {spec!r}: weight {value!r} must be above 0 (and below 1000)")
    die, dot, face = key.partition(".")
    try:
        if (
            dot
            and die.startswith("sector")
            and die[6:].isdigit()
            and 0 <= int(die[6:]) <= 36
            and face.isdigit()
            and 1 <= int(face) <= 36
            and int(face) % 2 == 1
        ):
            for pocket in sector(int(die[6:]), int(face)):
                bias.weights[pocket] = weight
        elif (
            dot
            and die.startswith("d")
            and die[1:].isdigit()
            and 1 <= int(die[1:]) <= 4
            and 1 <= int(face) <= 6
        ):
            bias.die_weights[(int(die[1:]), int(face))] = weight
        elif not dot and 0 <= int(key) <= 36:
            bias.weights[int(key)] = weight
        else:
            raise ValueError
    except ValueError:
        raise ValueError(
            f"--bias {spec!r}: {key!r} is not a pocket 0-36, a face 1-6, "
            "dK.F (die K, face F) or sectorN.K (K pockets, an odd number, centred "
            "on pocket N)"
        ) from None


def sector(centre: int, width: int) -> list[int]:
    """The ``width`` pockets centred on ``centre`` in the single-zero wheel's order."""
    at = WHEEL_ORDER.index(centre)
    return [WHEEL_ORDER[(at + k) % len(WHEEL_ORDER)] for k in range(-(width // 2), width // 2 + 1)]


def parse_croupier_rates(specs: Sequence[str]) -> dict[str, float]:
    """``CROUPIER=RATE`` values of ``--croupier-error-rate``; a :class:`ValueError` says what is
    wrong."""
    out: dict[str, float] = {}
    for spec in specs:
        croupier, sep, value = spec.partition("=")
        try:
            rate = float(value)
        except ValueError:
            rate = -1.0
        if not sep or not croupier or not 0.0 <= rate <= 1.0:
            raise ValueError(
                f"--croupier-error-rate {spec!r}: expected CROUPIER=RATE with a "
                "rate from 0 to 1, e.g. D-RL-03=0.09"
            )
        out[croupier] = rate
    return out
