"""Surveillance targets measured by simulation: false alarms, power, spins needed (not timed).

``python -m bench.surveillance [--tables 200] [--runs 200] [--seed 1] [--out FILE] [--e2e DIR]``

Outcomes are drawn directly (no feed, no store) and fed to the same code ``ledger stats`` runs:
:func:`ledger.stats.collect.spin` / :func:`~ledger.stats.collect.dice` /
:class:`~ledger.stats.collect.TableWatch` fill per-day tallies, and
:func:`ledger.stats.survey.entries_for` + :func:`~ledger.stats.survey.correct` run the tests
and Holm's correction per piece of equipment, exactly as for a store.

- **false alarms**: fair tables (roulette, Fish-Prawn-Crab, a single-deck card table), each
  observed over several gaming days; the share of tables with any flagged test;
- **power**: a single-zero wheel whose pocket 17 is 1.5× as likely, 20,000 spins over 20 days
  of 1,000; the share of runs in which the wheel is flagged;
- **spins needed** at 90 % power for a pocket 1.2×, 1.5× and 2× as likely (one period, no
  per-day tests), found by bisection on the number of spins;
- ``--e2e DIR``: once through the product: ``ledger simulate --bias RL-01:17=1.5`` →
  ``ledger ingest`` → ``ledger stats --json``, with the peak memory of ``ledger stats``.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from ledger.round import Round
from ledger.stats.collect import RANKS, SUITS, TableWatch, Tally, dice, spin
from ledger.stats.survey import DEFAULT_ALPHA, correct, entries_for

DAY0 = date(2026, 11, 1)
POWER_TARGET = 0.9


def _flagged(table: str, game: str, by_day: dict[date, Tally], alpha: float) -> bool:
    entries = entries_for(table, game, by_day)
    correct(entries, alpha)
    return any(e.flagged for e in entries)


def wheel_days(rng: random.Random, days: int, per_day: int, weight: float = 1.0,
               pocket: int = 17) -> dict[date, Tally]:
    """Tallies of a wheel whose ``pocket`` is ``weight`` times as likely as each other one."""
    cum = []
    total = 0.0
    for n in range(37):
        total += weight if n == pocket else 1.0
        cum.append(total)
    out = {}
    for d in range(days):
        tally = Tally()
        for number in rng.choices(range(37), cum_weights=cum, k=per_day):
            spin(tally, number)
        tally.rounds = per_day
        out[DAY0 + timedelta(days=d)] = tally
    return out


def shaker_days(rng: random.Random, days: int, per_day: int) -> dict[date, Tally]:
    """Tallies of a fair three-dice shaker."""
    out = {}
    for d in range(days):
        tally = Tally()
        for _ in range(per_day):
            dice(tally, [rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 6)], runs=True)
        tally.rounds = per_day
        out[DAY0 + timedelta(days=d)] = tally
    return out


DECK = [r + s for r in RANKS for s in SUITS]
HANDS = ("1", "2", "3", "dealer")


def shoe_days(rng: random.Random, days: int, per_day: int) -> dict[date, Tally]:
    """Tallies of a fair single-deck card table (a fresh shuffle per round, five cards to each
    of three seats and the dealer), read by the same :class:`TableWatch` as the store."""
    watch = TableWatch("CARD", "STUD")
    out = {}
    for d in range(days):
        tally = Tally()
        for _ in range(per_day):
            cards = DECK[:]
            rng.shuffle(cards)
            events: list[Any] = [SimpleNamespace(type="deck_shuffled", decks=1)]
            events += [SimpleNamespace(type="card_dealt", card=card, to=HANDS[i % 4])
                       for i, card in enumerate(cards[:20])]
            rnd = SimpleNamespace(events=events, opened=SimpleNamespace(), game="STUD")
            watch.observe(cast(Round, rnd), tally)
        out[DAY0 + timedelta(days=d)] = tally
    return out


def false_alarms(tables: int, seed: int, alpha: float) -> dict[str, Any]:
    """Share of fair tables flagged, per kind of equipment."""
    rng = random.Random(seed)
    kinds: dict[str, tuple[str, Callable[[], dict[date, Tally]], str]] = {
        "wheel": ("RL", lambda: wheel_days(rng, 20, 1000), "20 days x 1,000 spins"),
        "shaker": ("FPC", lambda: shaker_days(rng, 20, 500), "20 days x 500 throws"),
        "shoe": ("STUD", lambda: shoe_days(rng, 10, 100),
                 "10 days x 100 single-deck rounds of 20 cards"),
    }
    out: dict[str, Any] = {}
    for kind, (game, make, what) in kinds.items():
        flagged = sum(_flagged(f"{game}-{t}", game, make(), alpha) for t in range(tables))
        out[kind] = {"tables": tables, "flagged": flagged, "share": flagged / tables,
                     "each_table": what}
    return out


def power(runs: int, seed: int, alpha: float, weight: float = 1.5, days: int = 20,
          per_day: int = 1000) -> dict[str, Any]:
    """Share of runs in which a wheel with one pocket ``weight``× as likely is flagged."""
    rng = random.Random(seed)
    hits = sum(_flagged("RL-B", "RL", wheel_days(rng, days, per_day, weight), alpha)
               for _ in range(runs))
    return {"weight": weight, "spins": days * per_day, "days": days, "runs": runs,
            "flagged": hits, "share": hits / runs}


def spins_needed(weight: float, runs: int, seed: int, alpha: float) -> dict[str, Any]:
    """Smallest number of spins (to 2 %) flagged in at least 90 % of runs, one period."""

    def share(n: int) -> float:
        rng = random.Random(seed)
        hits = sum(_flagged("RL-B", "RL", wheel_days(rng, 1, n, weight), alpha)
                   for _ in range(runs))
        return hits / runs

    low, high = 100, 200
    while share(high) < POWER_TARGET:
        low, high = high, high * 2
    while high - low > max(50, low // 50):
        mid = (low + high) // 2
        if share(mid) >= POWER_TARGET:
            high = mid
        else:
            low = mid
    return {"weight": weight, "spins": high, "power": share(high), "runs": runs}


def end_to_end(workdir: Path, rounds: int, seed: int) -> dict[str, Any]:
    """``ledger simulate --bias`` → ``ledger ingest`` → ``ledger stats --json``, once."""
    workdir.mkdir(parents=True, exist_ok=True)
    feed, db = workdir / "biased.jsonl", workdir / "biased.db"
    db.unlink(missing_ok=True)
    url = f"sqlite:///{db}"
    ledger = [sys.executable, "-m", "cli.main"]
    simulate = [*ledger, "simulate", "--out", str(feed), "--game", "RL", "--tables", "2",
                "--rounds", str(rounds), "--seed", str(seed), "--bias", "RL-01:17=1.5"]
    subprocess.run(simulate, check=True, capture_output=True)
    subprocess.run([*ledger, "ingest", str(feed), "--db", url], check=True, capture_output=True)
    stats = [*ledger, "stats", "--db", url, "--json"]
    done = subprocess.run(stats, capture_output=True, text=True)
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    body = json.loads(done.stdout)
    period = {e["table"]: e for e in body["tests"] if e["test"] == "pockets" and e["day"] is None}
    return {
        "commands": [" ".join(simulate[2:]), f"ingest {feed} --db {url}", " ".join(stats[2:])],
        "events": sum(1 for _ in feed.open(encoding="utf-8")), "exit_code": done.returncode,
        "flagged": body["flagged"],
        "pockets": {t: {"n": e["n"], "p_value": e["p_value"], "p_adjusted": e["p_adjusted"],
                        "flagged": e["flagged"], "pocket_17": e["observed"][17]}
                    for t, e in sorted(period.items())},
        "peak_rss_mib_of_any_child": round(peak_kib / 1024, 1),
    }


def main(argv: list[str] | None = None) -> int:
    """Run the studies and print (and optionally write) their JSON."""
    parser = argparse.ArgumentParser(prog="python -m bench.surveillance", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=200, help="fair tables per equipment kind")
    parser.add_argument("--runs", type=int, default=200, help="runs per power estimate")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--alpha", type=float, default=DEFAULT_ALPHA)
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    parser.add_argument("--e2e", type=Path, metavar="DIR", help="also run the product once in DIR")
    parser.add_argument("--e2e-rounds", type=int, default=10_000, help="rounds per table")
    args = parser.parse_args(argv)
    result: dict[str, Any] = {
        "alpha": args.alpha, "correction": "holm per piece of equipment", "seed": args.seed,
        "false_alarms": false_alarms(args.tables, args.seed, args.alpha),
        "power_1_5x_20000_spins": power(args.runs, args.seed + 1, args.alpha),
        "spins_for_90pct_power": [spins_needed(w, args.runs, args.seed + 2, args.alpha)
                                  for w in (1.2, 1.5, 2.0)],
    }
    if args.e2e is not None:
        result["end_to_end"] = end_to_end(args.e2e, args.e2e_rounds, args.seed)
    text = json.dumps(result, indent=1)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
