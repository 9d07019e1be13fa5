"""Surveillance against the best test, measured by simulation (fixed seeds; never timed).

``python -m bench.surveillance [--runs 400] [--seed 1] [--json FILE]``

Outcomes are drawn with numpy and folded into the same :class:`~ledger.stats.collect.Tally`
``ledger stats`` fills from a store; :func:`ledger.stats.survey.entries_for` and
:func:`~ledger.stats.survey.correct` then run the whole family of the piece of equipment
(discrete weighted Bonferroni at ``alpha`` 1 %; a shaker's two shaped tests designed together
under their exact joint bound), exactly as for a store. For each row of issue 32's table the
bench prints the share of runs in which the ledger flags the piece, beside the share for the
best single test at ``alpha`` 1 % (the test shaped for that fault, run alone):

- hot pocket: :func:`~ledger.stats.shaped.max_cell` on the pockets alone;
- sector of 5: :func:`~ledger.stats.shaped.sector_scan` (width 5) alone;
- one die's face: :func:`~ledger.stats.shaped.dice_max` alone; every die: the pooled
  :func:`~ledger.stats.shaped.max_cell` alone;
- missing card: :func:`~ledger.stats.shaped.composition` alone.

Then the sequential targets (the CUSUM's false alarms of 2,000 fair wheels over ten years of
nights at 500 spins, and its delay on a pocket 1.5× as likely, with intervals; the composition
CUSUM's Markov chain against simulation and its delay on a missing card or tile), the error-rate
test (a croupier at 3× the others' rate) and the family's false alarms on fair equipment.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.stats import beta

from ledger.games.roulette.tables import RED_NUMBERS, WHEEL_ORDER
from ledger.stats.collect import CARD_KINDS, RANK_MEAN, RANK_VARIANCE, Tally
from ledger.stats.shaped import (
    CARD_CUSUM,
    SHAKER_CUSUM,
    TILE_CUSUM,
    WHEEL_CUSUM,
    CompositionScheme,
    CusumScheme,
    composition,
    composition_arl,
    composition_llr,
    cusum_arl,
    dice_max,
    error_rate_test,
    max_cell,
    sector_scan,
    shaker_design,
)
from ledger.stats.survey import DEFAULT_ALPHA, correct, entries_for
from ledger.stats.tests import RunsCounter

Rng = np.random.Generator
ALPHA = DEFAULT_ALPHA
RED = np.array([n in RED_NUMBERS for n in range(37)])
MARGIN = 0.05
"""The target: ledger power within 5 points of the best test."""
YEARS_TARGET = 40.0
DELAY_TARGET = 16
CROUPIER_POWER_TARGET = 0.9
CROUPIER_FALSE_TARGET = 0.01


def interval(k: int, n: int) -> tuple[float, float]:
    """Clopper–Pearson 95 % interval of ``k`` in ``n``."""
    low = float(beta.ppf(0.025, k, n - k + 1)) if k else 0.0
    high = float(beta.ppf(0.975, k + 1, n - k)) if k < n else 1.0
    return low, high


def _flagged(tally: Tally, game: str, equipment: str) -> bool:
    entries = entries_for("T", game, {0: tally})  # type: ignore[dict-item]
    correct(entries, ALPHA)
    return any(e.flagged and e.equipment == equipment for e in entries)


def _runs(values: np.ndarray) -> RunsCounter:
    """A runs counter over a two-valued sequence."""
    counter = RunsCounter()
    if len(values):
        counter.first = int(values.sum())
        counter.second = int(len(values) - counter.first)
        counter.runs = int(1 + np.count_nonzero(values[1:] != values[:-1]))
        counter.head, counter.last = bool(values[0]), bool(values[-1])
    return counter


# --- wheels -----------------------------------------------------------------------------


def wheel_probs(weights: dict[int, float]) -> np.ndarray:
    """Pocket probabilities of a wheel whose pockets ``weights`` are that many times as likely."""
    w = np.array([weights.get(n, 1.0) for n in range(37)])
    return np.asarray(w / w.sum())


def wheel_tally(rng: Rng, spins: int, probs: np.ndarray) -> Tally:
    """A wheel's tally after ``spins`` spins."""
    numbers = rng.choice(37, size=spins, p=probs)
    tally = Tally()
    tally.counts["pockets"] = [int(c) for c in np.bincount(numbers, minlength=37)]
    nonzero = numbers[numbers != 0]
    tally.runs["colour_runs"] = _runs(RED[nonzero])
    tally.rounds = spins
    return tally


def sector_of(centre: int, width: int) -> list[int]:
    """``width`` pockets centred on ``centre`` in wheel order."""
    at = WHEEL_ORDER.index(centre)
    return [WHEEL_ORDER[(at + k) % 37] for k in range(-(width // 2), width // 2 + 1)]


# --- shakers ----------------------------------------------------------------------------


def dice_tally(rng: Rng, throws: int, per_die: list[np.ndarray]) -> Tally:
    """A three-dice shaker's tally after ``throws`` throws (FPC: runs of small/big)."""
    faces = np.stack([rng.choice(6, size=throws, p=p) + 1 for p in per_die], axis=1)
    tally = Tally()
    for d in range(faces.shape[1]):
        tally.counts[f"die{d + 1}"] = [int(c) for c in np.bincount(faces[:, d] - 1, minlength=6)]
    tally.runs["small_big_runs"] = _runs(faces.sum(axis=1) <= 10)
    tally.rounds = throws
    return tally


def face_probs(face: int = 0, weight: float = 1.0) -> np.ndarray:
    """One die whose ``face`` (0–5) is ``weight`` times as likely."""
    w = np.ones(6)
    w[face] = weight
    return np.asarray(w / w.sum())


# --- shoes ------------------------------------------------------------------------------


def shoe_tally(
    rng: Rng, rounds: int, decks: int, missing: int | None, hands: int, per_hand: int, marker: int = 35
) -> Tally:
    """A card table's tally: one deck shuffled every round (``decks`` 1), or a shoe of
    ``decks`` decks dealt until ``marker`` cards from its end, ``decks`` cards burned at each
    shuffle and one every round; ``hands`` hands of ``per_hand`` cards a round, dealt round
    the table (card ``j`` to hand ``j % hands``)."""
    base = np.repeat(np.arange(CARD_KINDS), decks)
    if missing is not None:
        base = np.delete(base, np.flatnonzero(base == missing)[0])
    per_round = hands * per_hand
    slots = np.arange(per_round)
    by_slot = np.zeros((per_round, CARD_KINDS), dtype=np.int64)
    cards = np.zeros(CARD_KINDS, dtype=np.int64)
    rank = (np.arange(CARD_KINDS) // 4 + 1 - RANK_MEAN).astype(float)
    tally = Tally()
    done = 0
    while done < rounds:
        shoe = rng.permutation(base)
        pos = decks if decks > 1 else 0
        while done < rounds:
            if decks == 1 and pos:
                break
            if decks > 1:
                if pos + 1 + per_round > len(shoe) - marker:
                    break
                pos += 1
            block = shoe[pos : pos + per_round]
            np.add.at(by_slot, (slots, block), 1)
            cards += np.bincount(block, minlength=CARD_KINDS)
            pos += per_round
            done += 1
        seen = shoe[:pos]
        tally.close_shoe(decks, [int(c) for c in np.bincount(seen, minlength=CARD_KINDS)])
        r = rank[seen]
        pairs = len(r) - 1
        if pairs > 0:
            tally.serial.pairs += pairs
            tally.serial.centred += float(np.dot(r[:-1], r[1:]))
            tally.serial.null_mean -= pairs * RANK_VARIANCE / (CARD_KINDS * decks - 1)
            tally.serial.var_sum += pairs * RANK_VARIANCE**2
    tally.counts["cards"] = [int(c) for c in cards]
    for j in range(per_round):
        tally.counts[f"cards:{j % hands + 1}#{j // hands + 1}"] = [int(c) for c in by_slot[j]]
    tally.rounds = rounds
    return tally


# --- the table of issue 32 ---------------------------------------------------------------

POCKET = 17
ACE_OF_SPADES = 0  # A = rank 0, S = suit 0


def rows() -> list[
    tuple[str, int, str, str, Callable[[Rng, int], Tally], Callable[[Tally], float], tuple[float, float]]
]:
    """(fault, amount, unit, game, draw(rng, amount), best test's p, issue's (ledger, best))."""
    hot15 = wheel_probs({POCKET: 1.5})
    hot12 = wheel_probs({POCKET: 1.2})
    sector = wheel_probs(dict.fromkeys(sector_of(POCKET, 5), 1.2))
    die15 = [face_probs(5, 1.5), face_probs(), face_probs()]
    all12 = [face_probs(5, 1.2)] * 3

    def pockets(t: Tally) -> float:
        return max_cell(t.counts["pockets"], [1 / 37] * 37).p_value

    def scan(t: Tally) -> float:
        return sector_scan(t.counts["pockets"], 5).p_value

    def one_die(t: Tally) -> float:
        return dice_max([t.counts[f"die{d}"] for d in (1, 2, 3)]).p_value

    def pooled(t: Tally) -> float:
        return max_cell(
            [sum(t.counts[f"die{d}"][f] for d in (1, 2, 3)) for f in range(6)], [1 / 6] * 6
        ).p_value

    def comp(t: Tally) -> float:
        return composition(t.seen, t.shoes).p_value

    return [
        (
            "one pocket x 1.5",
            2500,
            "spins",
            "RL",
            lambda r, n: wheel_tally(r, n, hot15),
            pockets,
            (0.23, 0.60),
        ),
        (
            "one pocket x 1.5",
            5000,
            "spins",
            "RL",
            lambda r, n: wheel_tally(r, n, hot15),
            pockets,
            (0.63, 0.95),
        ),
        (
            "one pocket x 1.5",
            7500,
            "spins",
            "RL",
            lambda r, n: wheel_tally(r, n, hot15),
            pockets,
            (0.89, 0.996),
        ),
        (
            "one pocket x 1.2",
            30000,
            "spins",
            "RL",
            lambda r, n: wheel_tally(r, n, hot12),
            pockets,
            (0.63, 0.97),
        ),
        (
            "one pocket x 1.2",
            50000,
            "spins",
            "RL",
            lambda r, n: wheel_tally(r, n, hot12),
            pockets,
            (0.94, 1.0),
        ),
        (
            "5 adjacent pockets x 1.2",
            5000,
            "spins",
            "RL",
            lambda r, n: wheel_tally(r, n, sector),
            scan,
            (0.38, 0.87),
        ),
        (
            "5 adjacent pockets x 1.2",
            10000,
            "spins",
            "RL",
            lambda r, n: wheel_tally(r, n, sector),
            scan,
            (0.86, 1.0),
        ),
        (
            "one die, one face x 1.5",
            500,
            "throws",
            "FPC",
            lambda r, n: dice_tally(r, n, die15),
            one_die,
            (0.50, 0.63),
        ),
        (
            "one die, one face x 1.5",
            1000,
            "throws",
            "FPC",
            lambda r, n: dice_tally(r, n, die15),
            one_die,
            (0.92, 0.97),
        ),
        (
            "all 3 dice, one face x 1.2",
            1000,
            "throws",
            "FPC",
            lambda r, n: dice_tally(r, n, all12),
            pooled,
            (0.24, 0.83),
        ),
        (
            "ace of spades missing, one deck",
            20,
            "rounds",
            "STUD",
            lambda r, n: shoe_tally(r, n, 1, ACE_OF_SPADES, 4, 5),
            comp,
            (0.005, 1.0),
        ),
        (
            "ace of spades missing, one deck",
            100,
            "rounds",
            "STUD",
            lambda r, n: shoe_tally(r, n, 1, ACE_OF_SPADES, 4, 5),
            comp,
            (0.055, 1.0),
        ),
        (
            "one ace missing, 8-deck shoe",
            1000,
            "rounds",
            "3CB",
            lambda r, n: shoe_tally(r, n, 8, ACE_OF_SPADES, 3, 3),
            comp,
            (0.0, 1.0),
        ),
        (
            "one ace missing, 8-deck shoe",
            3000,
            "rounds",
            "3CB",
            lambda r, n: shoe_tally(r, n, 8, ACE_OF_SPADES, 3, 3),
            comp,
            (0.0, 1.0),
        ),
    ]


EQUIPMENT = {"RL": "wheel", "FPC": "shaker", "STUD": "shoe", "3CB": "shoe"}


def power_table(runs: int, seed: int, only: str | None = None) -> list[dict[str, Any]]:
    """Each row (those whose fault holds ``only``, if given): the share of runs the ledger
    flags and the best test rejects. A row's draws depend on the seed and its place in the
    table alone, so a row measured alone gives the same figures as in the whole table."""
    out = []
    for i, (fault, amount, unit, game, draw, best, issue) in enumerate(rows()):
        if only is not None and only not in fault:
            continue
        rng = np.random.default_rng([seed, i])
        ledger = best_hits = only_ledger = only_best = 0
        n = runs if (amount <= 10000 and unit != "rounds") or amount <= 100 else max(runs // 4, 50)
        for _ in range(n):
            tally = draw(rng, amount)
            flagged = _flagged(tally, game, EQUIPMENT[game])
            rejects = best(tally) < ALPHA
            ledger += flagged
            best_hits += rejects
            only_ledger += flagged and not rejects
            only_best += rejects and not flagged
        gap = (only_ledger - only_best) / n
        # paired: the same draws for both; normal interval of the difference of two proportions
        spread = math.sqrt(max(0.0, (only_ledger + only_best) / n - gap**2) / n)
        out.append(
            {
                "fault": fault,
                "amount": amount,
                "unit": unit,
                "runs": n,
                "ledger": ledger / n,
                "ledger_ci": interval(ledger, n),
                "best": best_hits / n,
                "best_ci": interval(best_hits, n),
                "issue_ledger": issue[0],
                "issue_best": issue[1],
                "difference": gap,
                "difference_ci": (gap - 1.96 * spread, gap + 1.96 * spread),
                "met": ledger / n >= best_hits / n - MARGIN,
                "surely_met": gap - 1.96 * spread >= -MARGIN,
            }
        )
    return out


# --- fair equipment: the family's false alarms ----------------------------------------------


def calibration(runs: int, seed: int) -> list[dict[str, Any]]:
    """The share of fair pieces the family flags at alpha 1 %."""
    fair_wheel = wheel_probs({})
    fair_dice = [face_probs()] * 3
    cases: list[tuple[str, str, Callable[[Rng], Tally]]] = [
        ("wheel, 5,000 spins", "RL", lambda r: wheel_tally(r, 5000, fair_wheel)),
        ("shaker, 1,000 throws", "FPC", lambda r: dice_tally(r, 1000, fair_dice)),
        ("one deck, 100 rounds", "STUD", lambda r: shoe_tally(r, 100, 1, None, 4, 5)),
    ]
    out = []
    for i, (name, game, draw) in enumerate(cases):
        rng = np.random.default_rng([seed, 100 + i])
        hits = sum(_flagged(draw(rng), game, EQUIPMENT[game]) for _ in range(runs))
        out.append(
            {
                "equipment": name,
                "runs": runs,
                "flagged": hits,
                "share": hits / runs,
                "ci": interval(hits, runs),
            }
        )
    return out


# --- sequential ---------------------------------------------------------------------------


def cusum_false_alarms(scheme: CusumScheme, pieces: int, nights: int, seed: int) -> dict[str, Any]:
    """Fair pieces watched for ``nights`` at the nominal volume, restarted after each alarm:
    alarms per piece-night, as an average run length with its 95 % interval."""
    rng = np.random.default_rng([seed, 200, scheme.cells])
    n = scheme.nominal_per_night
    p0 = np.full(scheme.cells, scheme.p0)
    a = math.log(scheme.p1 / scheme.p0)
    b = math.log((1 - scheme.p1) / (1 - scheme.p0))
    sums = np.zeros((pieces, scheme.cells))
    alarms = 0
    for _ in range(nights):
        counts = rng.multinomial(n, p0, size=pieces)
        sums = np.maximum(0.0, sums + a * counts + b * (n - counts))
        hit = (sums >= scheme.threshold).any(axis=1)
        alarms += int(hit.sum())
        sums[hit] = 0.0
    exposure = pieces * nights
    low = 0.5 * _chi2_ppf(0.025, 2 * alarms) if alarms else 0.0
    high = 0.5 * _chi2_ppf(0.975, 2 * alarms + 2)
    return {
        "scheme": scheme.name,
        "pieces": pieces,
        "nights": nights,
        "alarms": alarms,
        "arl_nights": exposure / alarms if alarms else math.inf,
        "arl_ci": (exposure / high, exposure / low if low else math.inf),
        "arl_markov": cusum_arl(scheme, scheme.threshold),
        "arl_stated": scheme.in_control_nights,
    }


def _chi2_ppf(q: float, df: int) -> float:
    from scipy.stats import chi2

    return float(chi2.ppf(q, df))


def cusum_delay(
    scheme: CusumScheme, ratio: float, pieces: int, seed: int, max_nights: int = 400
) -> dict[str, Any]:
    """Nights until the first alarm on a piece whose cell 0 is ``ratio`` times as likely."""
    rng = np.random.default_rng([seed, 300, scheme.cells])
    n = scheme.nominal_per_night
    w = np.ones(scheme.cells)
    w[0] = ratio
    p = w / w.sum()
    a = math.log(scheme.p1 / scheme.p0)
    b = math.log((1 - scheme.p1) / (1 - scheme.p0))
    sums = np.zeros((pieces, scheme.cells))
    delay = np.full(pieces, max_nights + 1)
    for night in range(1, max_nights + 1):
        counts = rng.multinomial(n, p, size=pieces)
        sums = np.maximum(0.0, sums + a * counts + b * (n - counts))
        hit = (sums >= scheme.threshold).any(axis=1) & (delay > max_nights)
        delay[hit] = night
        if (delay <= max_nights).all():
            break
    ordered = np.sort(delay)
    # distribution-free 95 % interval of the median: order statistics from the binomial
    lo_k = int(max(0, math.floor(pieces / 2 - 1.96 * math.sqrt(pieces) / 2)))
    hi_k = int(min(pieces - 1, math.ceil(pieces / 2 + 1.96 * math.sqrt(pieces) / 2)))
    right_cell = float(np.mean(np.argmax(sums, axis=1) == 0))
    return {
        "scheme": scheme.name,
        "ratio": ratio,
        "pieces": pieces,
        "median_nights": float(np.median(delay)),
        "median_ci": (int(ordered[lo_k]), int(ordered[hi_k])),
        "mean_nights": float(delay.mean()),
        "within_30": float(np.mean(delay <= 30)),
        "cell_named": right_cell,
        "arl_markov": cusum_arl(scheme, scheme.threshold, ratio),
    }


def composition_check(
    seed: int, threshold: float = 8.0, decks: int = 500, rounds: int = 20_000
) -> dict[str, Any]:
    """The composition CUSUM's Markov chain against simulation, on fair single decks (22 cards
    seen a round) at a low ``threshold`` where false alarms are frequent enough to count (at
    the scheme's own threshold they come once in centuries): every kind's missing side (the
    extra side never alarms on a fair deck), restarted after each alarm."""
    rng = np.random.default_rng([seed, 500])
    scheme = CompositionScheme("cards", 52, threshold, (52, 1, 22), 500, 0.0)
    unseen, seen_step = composition_llr(52, 1, 22, 0)[0], composition_llr(52, 1, 22, 1)[0]
    sums = np.zeros((decks, 52))
    alarms = 0
    for _ in range(rounds):
        seen = rng.random((decks, 52)).argsort(axis=1) < 22
        sums = np.maximum(0.0, sums + np.where(seen, seen_step, unseen))
        hit = (sums >= threshold).any(axis=1)
        alarms += int(hit.sum())
        sums[hit] = 0.0
    exposure = decks * rounds
    low = 0.5 * _chi2_ppf(0.025, 2 * alarms) if alarms else 0.0
    high = 0.5 * _chi2_ppf(0.975, 2 * alarms + 2)
    return {
        "threshold": threshold,
        "decks": decks,
        "rounds": rounds,
        "alarms": alarms,
        "arl_rounds": exposure / alarms if alarms else math.inf,
        "arl_ci": (exposure / high, exposure / low if low else math.inf),
        "arl_markov": composition_arl(scheme),
    }


def composition_delay(
    scheme: CompositionScheme, nominal: tuple[int, int, int], per_night: int, pieces: int, seed: int
) -> dict[str, Any]:
    """Shoes (walls) until the alarm of a shoe with one copy of a kind missing, and nights at
    ``per_night``: the missing kind's CUSUM, its count drawn from the shoe without that copy."""
    from scipy.stats import hypergeom

    population, copies, seen = nominal
    rng = np.random.default_rng([seed, 600, population])
    law = hypergeom(population - 1, copies - 1, seen)
    steps = np.array([composition_llr(population, copies, seen, c)[0] for c in range(copies + 1)])
    sums = np.zeros(pieces)
    delay = np.zeros(pieces, dtype=np.int64)
    shoe = 0
    while (delay == 0).any() and shoe < 100_000:
        shoe += 1
        sums = np.maximum(0.0, sums + steps[law.rvs(size=pieces, random_state=rng)])
        delay[(sums >= scheme.threshold) & (delay == 0)] = shoe
    nights = np.ceil(delay / per_night)
    return {
        "scheme": scheme.name,
        "nominal": nominal,
        "per_night": per_night,
        "pieces": pieces,
        "median_shoes": float(np.median(delay)),
        "p95_shoes": float(np.percentile(delay, 95)),
        "median_nights": float(np.median(nights)),
        "max_nights": float(nights.max()),
        "in_control_nights": composition_arl(scheme, nominal) / per_night,
    }


# --- croupiers ------------------------------------------------------------------------------


def croupiers(
    runs: int, seed: int, others: int = 9, rounds: int = 2000, base: float = 0.03, ratio: float = 3.0
) -> dict[str, Any]:
    """One croupier at ``ratio`` times the others' error rate, ``rounds`` rounds dealt each."""
    rng = np.random.default_rng([seed, 400])
    caught = fair_flagged = any_fair = 0
    for _ in range(runs):
        rows = {f"D-{i:02d}": (rounds, int(rng.binomial(rounds, base))) for i in range(others)}
        rows["D-HOT"] = (rounds, int(rng.binomial(rounds, base * ratio)))
        tests = {t.key: t for t in error_rate_test(rows, ALPHA)}
        caught += tests["D-HOT"].flagged
        flagged = sum(t.flagged for k, t in tests.items() if k != "D-HOT")
        fair_flagged += flagged
        # with every croupier fair
        fair = {f"D-{i:02d}": (rounds, int(rng.binomial(rounds, base))) for i in range(others + 1)}
        any_fair += any(t.flagged for t in error_rate_test(fair, ALPHA))
    return {
        "croupiers": others + 1,
        "rounds_each": rounds,
        "base_rate": base,
        "ratio": ratio,
        "runs": runs,
        "power": caught / runs,
        "power_ci": interval(caught, runs),
        "fair_flagged_share": fair_flagged / (runs * others),
        "fair_flagged_ci": interval(fair_flagged, runs * others),
        "all_fair_any_flagged": any_fair / runs,
        "all_fair_ci": interval(any_fair, runs),
    }


# --- printing -------------------------------------------------------------------------------


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _span(x: float, ci: tuple[float, float], signed: bool = False) -> str:
    """``53.8 % (49.5-58.1)``: a share and its 95 % interval, in points."""
    sign = "+" if signed else ""
    return f"{100 * x:{sign}.1f} % ({100 * ci[0]:{sign}.1f} {100 * ci[1]:{sign}.1f})"


def _general_share(game: str) -> float:
    """The level the general tests of a fair piece of ``game`` take (what the shaped pair's
    budget leaves), read from the family as ``ledger stats`` runs it."""
    tally = dice_tally(np.random.default_rng(0), 500, [face_probs()] * 3)
    entries = entries_for("T", game, {0: tally})  # type: ignore[dict-item]
    correct(entries, ALPHA)
    pair = ("max_die_face", "max_face_pooled")
    return sum(e.level for e in entries if e.result.valid and e.test not in pair)


def main(argv: list[str] | None = None) -> int:
    """Run every measurement and print it (``--json FILE`` also writes it)."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.surveillance",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--runs", type=int, default=400, help="Runs per power row (400).")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--wheels", type=int, default=2000, help="Fair wheels watched for the CUSUM's false alarms (2,000)."
    )
    parser.add_argument("--years", type=float, default=10.0, help="Years of nights each (10).")
    parser.add_argument("--json", metavar="FILE", help="Also write the figures as JSON.")
    parser.add_argument("--only", metavar="TEXT", help="Only the power rows whose fault holds TEXT.")
    parser.add_argument(
        "--power-only", action="store_true", help="The power table and the shaker's design alone."
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    result: dict[str, Any] = {"seed": args.seed, "alpha": ALPHA}
    print(
        f"alpha {ALPHA:g}; ledger = the whole family of the piece (discrete weighted Bonferroni; a "
        "shaker's two shaped tests under their exact joint bound); best = the test shaped for the fault, "
        "alone; ledger - best: paired (the same draws), 95 % normal interval"
    )
    print(
        f"{'fault':<34} {'amount':>13} | {'issue: ledger / best':>20} | "
        f"{'now: ledger (95 %)':>25} {'best (95 %)':>25} {'ledger - best (95 %)':>26}  "
        "target (within 5 points)"
    )
    table = power_table(args.runs, args.seed, args.only)
    for row in table:
        verdict = "met" if row["met"] else "NOT MET"
        if row["met"] != row["surely_met"] or not row["met"]:
            verdict += " (within noise)" if row["met"] != row["surely_met"] else ""
        print(
            f"{row['fault']:<34} {row['amount']:>6,} {row['unit']:<6} | "
            f"{_pct(row['issue_ledger']):>9} / {_pct(row['issue_best']):>7} | "
            f"{_span(row['ledger'], row['ledger_ci']):>25} {_span(row['best'], row['best_ci']):>25} "
            f"{_span(row['difference'], row['difference_ci'], signed=True):>26}  "
            f"{verdict} ({row['runs']} runs)"
        )
    result["power"] = table
    print("\nshaker, exact design powers (the hot cell's binomial law; the pair's levels and exact bound):")
    result["shaker_design"] = []
    for throws in (500, 1000):
        design = shaker_design(throws, 3, 6, ALPHA - _general_share("FPC"), ALPHA, 1.5, 1.2)
        print(
            f"  {throws:,} throws: max_die_face at {design.die_level:.5f}, max_face_pooled at "
            f"{design.pooled_level:.5f}, joint bound {design.bound:.5f}; one die x1.5 "
            f"{_pct(design.one_die_power)} (best {_pct(design.one_die_best)}), all dice x1.2 "
            f"{_pct(design.all_dice_power)} (best {_pct(design.all_dice_best)})"
        )
        result["shaker_design"].append({"throws": throws, **dataclasses.asdict(design)})
    if args.power_only:
        _finish(result, args.json, started)
        return 0
    print("\nfair equipment, the family at alpha 1 % (the share flagged, 95 % interval):")
    cal = calibration(max(args.runs, 400), args.seed)
    for c in cal:
        print(
            f"  {c['equipment']:<24} {c['flagged']}/{c['runs']} = {_pct(c['share'])} "
            f"({_pct(c['ci'][0])} - {_pct(c['ci'][1])})"
        )
    result["calibration"] = cal
    nights = int(args.years * 365.25)
    print(
        f"\nsequential: CUSUM per pocket (x{WHEEL_CUSUM.ratio:g}, h {WHEEL_CUSUM.threshold:g}) "
        f"and per face of all dice (x{SHAKER_CUSUM.ratio:g}, h {SHAKER_CUSUM.threshold:g})"
    )
    seq: dict[str, Any] = {}
    for scheme, pieces in ((WHEEL_CUSUM, args.wheels), (SHAKER_CUSUM, args.wheels // 2)):
        fa = cusum_false_alarms(scheme, pieces, nights, args.seed)
        years = fa["arl_nights"] / 365.25
        low = fa["arl_ci"][0] / 365.25
        print(
            f"  fair {scheme.name}: {fa['alarms']} false alarms in {pieces:,} x {nights:,} "
            f"nights at {scheme.nominal_per_night} a night: run length {fa['arl_nights']:,.0f} "
            f"nights = {years:.1f} years (95 % {low:.1f} - {fa['arl_ci'][1] / 365.25:.1f}); "
            f"Markov chain {fa['arl_markov']:,.0f}; target >= {YEARS_TARGET:g} years: "
            f"{'met' if low >= YEARS_TARGET else 'NOT MET (lower bound)'}"
        )
        per_night = 500 / fa["arl_nights"]
        print(
            f"    a property of 500 fair pieces: {per_night:.4f} false alarms a night, "
            f"{30 * per_night:.2f} a month (target <= 1)"
        )
        seq[scheme.name] = fa
    delay = cusum_delay(WHEEL_CUSUM, 1.5, 2000, args.seed)
    print(
        f"  pocket x1.5 at 500 spins a night: median delay {delay['median_nights']:g} nights "
        f"(95 % {delay['median_ci'][0]} - {delay['median_ci'][1]}), mean "
        f"{delay['mean_nights']:.1f}; the alarm names the pocket in {_pct(delay['cell_named'])}; "
        f"target <= {DELAY_TARGET}: "
        f"{'met' if delay['median_ci'][1] <= DELAY_TARGET else 'NOT MET'}"
    )
    seq["delay"] = delay
    check = composition_check(args.seed)
    print(
        f"\ncomposition CUSUM (missing or extra card / tile, exact log-likelihood ratios, h "
        f"{CARD_CUSUM.threshold:g}): Markov chain checked at h {check['threshold']:g} on "
        f"{check['decks']} fair single decks x {check['rounds']:,} rounds: {check['alarms']} false "
        f"alarms, run length {check['arl_rounds']:,.0f} rounds (95 % {check['arl_ci'][0]:,.0f} - "
        f"{check['arl_ci'][1]:,.0f}); Markov chain {check['arl_markov']:,.0f}"
    )
    seq["composition_check"] = check
    cases: tuple[tuple[str, CompositionScheme, tuple[int, int, int], int], ...] = (
        ("one deck, 22 cards seen, 500 rounds a night", CARD_CUSUM, (52, 1, 22), 500),
        ("8-deck shoe, 381 cards seen, 13 shoes a night", CARD_CUSUM, (416, 8, 381), 13),
        ("wall of 136 tiles, 84 drawn, 40 walls a night", TILE_CUSUM, (136, 4, 84), 40),
    )
    seq["composition"] = []
    for label, comp, nominal, per_night in cases:
        d = composition_delay(comp, nominal, per_night, 2000, args.seed)
        years = d["in_control_nights"] / 365.25
        verdict = "met" if years >= YEARS_TARGET else "NOT MET"
        print(
            f"  {label}: a fair one's false alarm once in {d['in_control_nights']:,.0f} nights "
            f"({years:,.0f} years; target >= {YEARS_TARGET:g}: {verdict}); "
            f"500 fair ones: {30 * 500 / d['in_control_nights']:.3f} a month; one copy missing: "
            f"alarm after a median {d['median_shoes']:g} shoes or walls (95 % within {d['p95_shoes']:g}), "
            f"night {d['median_nights']:g} (at most {d['max_nights']:g})"
        )
        seq["composition"].append({"case": label, **d})
    result["sequential"] = seq
    result["croupiers"] = []
    for base in (0.03, 0.01):
        cr = croupiers(max(args.runs, 400), args.seed, base=base)
        print(
            f"\ncroupiers: {cr['croupiers']} croupiers, {cr['rounds_each']:,} rounds each, "
            f"base error rate {cr['base_rate']:g}, one at {cr['ratio']:g}x: flagged "
            f"{_pct(cr['power'])} ({_pct(cr['power_ci'][0])} - {_pct(cr['power_ci'][1])}), "
            f"target >= 90 %; fair croupiers flagged {_pct(cr['fair_flagged_share'])} "
            f"(95 % up to {_pct(cr['fair_flagged_ci'][1])}), target <= 1 %; with all fair, "
            f"any flagged in {_pct(cr['all_fair_any_flagged'])} of periods"
        )
        result["croupiers"].append(cr)
    _finish(result, args.json, started)
    return 0


def _finish(result: dict[str, Any], path: str | None, started: float) -> None:
    """Print the wall time and the process CPU time; write the JSON if asked."""
    print(f"\n{time.monotonic() - started:.0f} s wall, {time.process_time():.0f} s CPU")
    if path:
        with open(path, "w", encoding="utf-8") as out:
            json.dump(result, out, indent=1, default=str)
            out.write("\n")


if __name__ == "__main__":
    sys.exit(main())
