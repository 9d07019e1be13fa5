"""Tests shaped for the faults that matter, with exact tails (``scipy.stats``, imported lazily).

Each test is the most powerful simple test against one alternative; chi-square stays for the
general case (:func:`ledger.stats.tests.chi_square_gof`).

- :func:`max_cell` — **one hot cell** (a pocket, a face). Statistic: the smallest exact upper
  binomial tail ``q = min_i P(Bin(n, p_i) ≥ o_i)`` over the ``k`` cells. Multiplicity: the
  p-value is the union (Bonferroni) bound ``min(1, k·q)``. Multinomial counts are negatively
  dependent, so the exact tail of the maximum lies between ``1 − (1 − q)^k`` and ``k·q``
  (Mallows 1968, *Biometrika* 55:422): at the p-values that matter the two differ by less
  than ``k·q/2`` relative, so the test is exact to first order and never anti-conservative.
  Best against one cell more likely than the others, at an unknown cell.
- :func:`dice_max` — **one face of one die**: each die's hottest face, its exact tail with a
  tie in the die's count broken by the face's count on the other dice (:func:`die_face_tails`),
  Bonferroni over the faces; the smallest of the ``D`` dice's p-values (independent dice),
  ``p``, gives ``1 − (1 − p)^D`` (Šidák, exact for independent tests). With the pooled
  :func:`max_cell` of the same shaker its level is designed under an exact joint bound
  (:func:`shaker_design`).
- :func:`sector_scan` — **a sector of adjacent pockets** in the wheel's physical order
  (the layout a game's equipment declares, :data:`WHEEL_ORDER`): the count in each of
  the 37 circular windows of ``width`` pockets, exact upper binomial tail; the windows overlap
  (positively associated), so the multiplicity is Bonferroni, ``min(1, 37 · min q)`` (Kulldorff
  1997, *Commun. Statist.* 26:1481 for the scan statistic; Bonferroni is its conservative bound).
- :func:`composition` — **a missing or extra card**: a shuffled shoe of ``D`` decks dealt
  (seen) ``k`` cards out of ``52·D`` gives ``Hypergeom(52·D, D, k)`` cards of each kind. The
  count of a kind over many shoes is the sum of independent hypergeometrics, whose exact law is
  their convolution — the same for every kind, so computed once. Two-sided per kind (missing:
  too few; extra: too many), Bonferroni over 52 kinds × 2 sides. A missing card is seen even
  in one deck (a card never dealt in ``s`` shoes of ``k`` cards: ``((52 − k)/52)^s``).
- :func:`error_rate_test` — **a croupier or table making more errors** than the others: given
  ``E`` rounds with an error among ``R`` rounds, the rounds of one croupier (``r`` of them)
  hold ``Hypergeom(R, E, r)`` of them if every round is equally likely to carry one (exposure
  is the rounds dealt): exact upper tail, Holm across the croupiers.
- :class:`CellCusum` — **sequential surveillance across nights**: Page's CUSUM (Page 1954,
  *Biometrika* 41:100) of each cell's log-likelihood ratio, cell ``p0`` against ``p1``
  (the cell ``ratio`` times as likely), one night at a time; alarm when any cell's sum
  reaches ``h``. ``h`` is chosen for an in-control run length (:func:`cusum_arl`, Brook &
  Evans 1972, *Biometrika* 59:539, Markov chain on the discretised sum).
- :class:`CompositionCusum` — **a card or tile missing or extra, across shoes and nights**:
  Page's CUSUM per kind and side of the exact log-likelihood ratio of one copy missing (or one
  extra) against the full composition (:func:`composition_llr`), shoe by shoe or wall by wall;
  its run length by the same Markov chain on the exact steps (:func:`composition_arl`).
- :func:`attained_level` — the largest p-value a shaped test of counts can give below a level:
  the family's correction runs each test at such a level (``ledger.stats.survey.correct``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ledger.games import GAMES
from ledger.stats.tests import TestResult, holm

CI_LEVEL = 0.95
DESIGN_MARGIN = 0.03
"""A shaker's pair of shaped tests is designed to stay within this much power of the best test
against each design alternative where it can (:func:`shaker_design`): the targets' 5 points
less 2 for what the design power leaves out (it reads the hot cell alone; the best test also
gains from the other cells: about a point by simulation, ``python -m bench.surveillance``)."""
SECTOR_WIDTH = 5


def _declared_wheel() -> tuple[int, ...]:
    """The wheel layout a game's equipment declares (``Equipment.wheel_order``): the ledger
    knows one wheel, the single-zero one."""
    return next(g.equipment.wheel_order for g in GAMES.values() if g.equipment.wheel_order)


WHEEL_ORDER = _declared_wheel()
"""The pockets in the wheel's physical order."""
"""Pockets in the sector scan's window (a 3- or 7-pocket sector is still seen, less sharply)."""


def _binom_sfs(ks: Sequence[int], n: int, ps: Sequence[float]) -> list[float]:
    """``P(Bin(n, p_i) ≥ k_i)`` for each ``i`` (one vectorised call)."""
    import numpy as np
    from scipy.stats import binom

    return [float(x) for x in binom.sf(np.asarray(ks) - 1, n, np.asarray(ps))]


def ratio_interval(observed: int, n: int, p0: float) -> tuple[float, float]:
    """Clopper–Pearson 95 % interval of the cell probability, as a multiple of ``p0`` (the
    beta quantiles read from ``scipy.special.betaincinv`` directly: the same numbers as
    ``scipy.stats.beta.ppf``, without its argument checking)."""
    from scipy.special import betaincinv

    tail = (1 - CI_LEVEL) / 2
    low = float(betaincinv(observed, n - observed + 1, tail)) if observed > 0 else 0.0
    high = float(betaincinv(observed + 1, n - observed, 1 - tail)) if observed < n else 1.0
    return low / p0, high / p0


def _detail(
    cells: list[int], observed: int, n: int, p0: float, direction: str, z_needed: float | None
) -> dict[str, Any]:
    low, high = ratio_interval(observed, n, p0) if n else (0.0, math.inf)
    return {
        "cells": cells,
        "observed": observed,
        "expected": n * p0,
        "effect": observed / (n * p0) if n else None,
        "effect_ci": [low, high],
        "direction": direction,
        "z_needed": z_needed,
    }


@lru_cache(maxsize=256)
def _z_for(tail: float) -> float:
    """The standard normal quantile with upper tail ``tail``."""
    from scipy.special import ndtri

    return float(-ndtri(tail))


def max_cell(observed: Sequence[int], probabilities: Sequence[float], name: str = "max_cell") -> TestResult:
    """The hottest cell, exact binomial tail, Šidák multiplicity (see the module docstring)."""
    n = sum(observed)
    cells = [(i, o, p) for i, (o, p) in enumerate(zip(observed, probabilities, strict=True)) if p > 0]
    if n == 0 or len(cells) < 2:
        return TestResult(name, 0.0, None, 1.0, n, False, "no outcome")
    sfs = _binom_sfs([o for _, o, _ in cells], n, [p for _, _, p in cells])
    tails = [(q, i, o, p) for q, (i, o, p) in zip(sfs, cells, strict=True)]
    q, cell, o, p = min(tails)
    p_value = min(1.0, len(cells) * q)
    detail = _detail([cell], o, n, p, "hot", _z_for(1.0 / len(cells)))
    detail["cells_tested"] = len(cells)
    if len({p for _, _, p in cells}) == 1:
        detail["levels"] = {"n": n, "p": p, "k": len(cells), "sidak": 1}
    return TestResult(name, q, None, p_value, n, True, "", detail)


def dice_max(per_die: Sequence[Sequence[int]]) -> TestResult:
    """One face of one die: each die's hottest face, Bonferroni over the faces, Šidák across
    the dice; a tie in a die's count is broken by the face's count on the other dice (see
    :func:`die_face_tails`)."""
    faces = max((len(c) for c in per_die), default=0)
    valid = [d for d, counts in enumerate(per_die) if sum(counts) and len(counts) >= 2]
    if not valid or faces < 2:
        return TestResult("max_die_face", 0.0, None, 1.0, 0, False, "no throw")
    tails = die_face_tails(per_die)
    d, f = min(((d, f) for d in valid for f in range(len(per_die[d]))), key=lambda c: (tails[c[0]][c[1]], c))
    counts = per_die[d]
    n, k = sum(counts), len(counts)
    q = tails[d][f]
    detail = _detail([f], counts[f], n, 1.0 / k, "hot", _z_for(1.0 / k))
    detail["die"] = d + 1
    detail["cells_tested"] = sum(len(c) for c in per_die)
    if len({sum(per_die[e]) for e in valid}) == 1 and len({len(per_die[e]) for e in valid}) == 1:
        detail["levels"] = {"n": n, "p": 1.0 / k, "k": k, "sidak": len(valid)}
    return TestResult("max_die_face", q, None, _sidak([min(1.0, k * q)] * len(valid)), n, True, "", detail)


def die_face_tails(per_die: Sequence[Sequence[int]]) -> list[list[float]]:
    """For each die ``d`` and face ``f``: ``P(X > x) + P(X = x)·P(Y ≥ y)``, the exact upper
    tail of the pair ``(x, y)`` in lexicographic order, where ``x`` is the face's count on die
    ``d`` (``X ~ Bin(n_d, 1/k)``) and ``y`` its count on the other dice (``Y ~ Bin(Σ n_e, 1/k)``,
    independent of ``X`` when the dice are fair). The die's own count decides; among equal
    counts the face the other dice also show more often is the more suspect (a loaded set
    rather than chance). The tail is at most the plain ``P(X ≥ x)`` and fills the gaps between
    its steps, so the test can be run at (nearly) any level."""
    import numpy as np
    from scipy.stats import binom

    totals = [sum(c) for c in per_die]
    faces = max(len(c) for c in per_die)
    pooled = [sum(c[f] for c in per_die if f < len(c)) for f in range(faces)]
    out = []
    for counts, n in zip(per_die, totals, strict=True):
        k = len(counts)
        if not n or k < 2:
            out.append([1.0] * k)
            continue
        x = np.asarray(counts)
        y = np.asarray(pooled[:k]) - x
        others = sum(totals) - n
        tail = binom.sf(x, n, 1.0 / k) + binom.pmf(x, n, 1.0 / k) * binom.sf(y - 1, others, 1.0 / k)
        out.append([min(1.0, float(t)) for t in tail])
    return out


@dataclass(frozen=True)
class ShakerDesign:
    """The levels of a shaker's two shaped tests, chosen together (:func:`shaker_design`).

    ``max_die_face`` rejects when a die's count of a face is at least ``die_count``, or equal
    to ``die_count − 1`` with the face seen at least ``tie_pooled`` times on all dice;
    ``max_face_pooled`` when a face's count on all dice is at least ``pooled_count``. ``bound``
    is the exact Hunter–Worsley bound of the chance that a fair shaker makes either reject."""

    die_level: float
    pooled_level: float
    bound: float
    die_count: int
    tie_pooled: int
    pooled_count: int
    one_die_power: float
    """Design power against one die's face × ``die_ratio``: of the pair; then of
    ``max_die_face`` alone at ``alpha``; then the same against every die's face ×
    ``pooled_ratio``."""
    one_die_best: float
    all_dice_power: float
    all_dice_best: float


def shaker_design(
    throws: int,
    dice: int,
    faces: int,
    budget: float,
    alpha: float,
    die_ratio: float,
    pooled_ratio: float,
    margin: float = DESIGN_MARGIN,
) -> ShakerDesign:
    """The rejection regions of a shaker's ``max_die_face`` and ``max_face_pooled`` whose joint
    false-alarm probability is at most ``budget``, by an exact bound. Against the two design
    alternatives — one die's face ``die_ratio`` times as likely, one face ``pooled_ratio``
    times as likely on every die — the power of the pair (either test rejects; the hot cell's
    exact law) is kept within ``margin`` of the best test (the shaped test alone at ``alpha``)
    for both where some region can, else for the alternative the best test is surer to find;
    among those regions, the largest sum of the two powers. A function of the amount of play
    alone (cached).

    **The bound.** With ``E_df`` the event that die ``d``'s face ``f`` is in the die test's
    region and ``F_f`` that face ``f``'s pooled count is in the pooled test's, the pair
    rejects on ``∪ E_df ∪ ∪ F_f``; by Hunter's bound on the forest of edges ``E_df — F_f``
    (Hunter 1976, *J. Appl. Prob.* 13:597; Worsley 1982, *Biometrika* 69:297)

        P(reject) ≤ Σ P(E_df) + Σ P(F_f) − Σ P(E_df ∩ F_f),

    each term exact: ``X`` (the die's count) and ``Y`` (the other dice's) are independent
    binomials and ``F_f`` is ``X + Y ≥ c``. A die's count and the pooled count of the same
    face are positively dependent, so the subtracted overlaps are what the union bound of
    the two tests' levels over-spends."""
    return _shaker_design(throws, dice, faces, budget, alpha, die_ratio, pooled_ratio, margin)


@lru_cache(maxsize=256)
def _shaker_design(
    n: int,
    dice: int,
    k: int,
    budget: float,
    alpha: float,
    die_ratio: float,
    pooled_ratio: float,
    margin: float,
) -> ShakerDesign:
    import numpy as np
    from scipy.stats import binom

    p0 = 1.0 / k
    ny, nt = (dice - 1) * n, dice * n
    cells = dice * k

    def law(m: int, p: float) -> tuple[Any, Any]:
        """pmf over 0..m and sf with ``sf[c] = P(≥ c)`` for c in 0..m+1 (clipped beyond)."""
        xs = np.arange(m + 1)
        return binom.pmf(xs, m, p), np.append(binom.sf(xs - 1, m, p), 0.0)

    def at(sf: Any, c: Any) -> Any:
        return sf[np.clip(c, 0, len(sf) - 1)]

    hot1 = die_ratio * p0 / (1 - p0 + die_ratio * p0)
    hot2 = pooled_ratio * p0 / (1 - p0 + pooled_ratio * p0)
    px0, sx0 = law(n, p0)
    _, sy0 = law(ny, p0)
    _, st0 = law(nt, p0)
    px1, sx1 = law(n, hot1)
    px2, _ = law(n, hot2)
    _, sy2 = law(ny, hot2)
    _, st2 = law(nt, hot2)

    def die_alone(level: float) -> int:
        c = 0
        while c <= n and _sidak([min(1.0, k * float(sx0[c]))] * dice) > level:
            c += 1
        return c

    c_best = die_alone(alpha)
    c2_best = int(np.argmax(k * st0 <= alpha))
    best1 = float(at(sx1, c_best))
    best2 = float(at(st2, c2_best))
    # the candidate regions: the die's count c1 (and the tie at c1 - 1 broken by the other
    # dice's count y), the pooled count c2 (nt + 1: the pooled test never rejects)
    c_low = int(np.argmax(cells * sx0 <= budget))  # sx0[n + 1] = 0: always found
    c2_low = int(np.argmax(k * st0 <= budget))
    c2s = np.append(np.arange(c2_low, nt + 1)[k * st0[c2_low : nt + 1] >= budget / 100], nt + 1)
    ys = np.append(np.arange(ny + 1)[(sy0[: ny + 1] > 1e-6) & (sy0[: ny + 1] < 1 - 1e-6)], ny + 1)
    first = 0 if best1 >= best2 else 1
    found: list[tuple[int, float, float, float, int, int, int, float]] = []
    for c1 in range(max(c_low, 1), n + 2):
        if cells * float(at(sx0, c1)) < budget / 100:
            break
        xs = np.arange(c1, n + 1)
        xs = xs[px0[c1:] > 1e-20]
        tie = float(px0[c1 - 1])
        # P(E ∩ F) without the tie, for each c2: Σ_{x ≥ c1} P(X = x) P(Y ≥ c2 − x)
        overlap = (px0[xs, None] * at(sy0, c2s[None, :] - xs[:, None])).sum(axis=0)
        tie_y = np.maximum(ys[:, None], (c2s - c1 + 1)[None, :])
        bound = (
            cells * (float(at(sx0, c1)) + tie * at(sy0, ys))[:, None]
            + k * at(st0, c2s)[None, :]
            - cells * (overlap[None, :] + tie * at(sy0, tie_y))
        )
        powers = []
        for px, sy in ((px1, sy0), (px2, sy2)):
            below = np.arange(0, c1 - 1)
            below = below[px[below] > 1e-20]
            # the hot cell escapes both: x < c1 − 1 and y < c2 − x, or x = c1 − 1 and y below
            # both the tie's and the pooled threshold
            miss = (px[below, None] * (1 - at(sy, c2s[None, :] - below[:, None]))).sum(axis=0)
            limit = np.minimum(ys[:, None], (c2s - c1 + 1)[None, :])
            powers.append(1 - miss[None, :] - float(px[c1 - 1]) * (1 - at(sy, limit)))
        fits = bound <= budget * (1 - 1e-12)
        summed = powers[0] + powers[1]
        meets = (powers[0] >= best1 - margin, powers[1] >= best2 - margin)
        for tier, mask in enumerate((fits & meets[0] & meets[1], fits & meets[first], fits)):
            if mask.any():
                i, j = np.unravel_index(int(np.argmax(np.where(mask, summed, -1.0))), mask.shape)
                pair = (float(powers[0][i, j]), float(powers[1][i, j]))
                where = (c1, int(ys[i]), int(c2s[j]), float(bound[i, j]))
                found.append((-tier, float(summed[i, j]), *pair, *where))
    if not found:
        return ShakerDesign(0.0, 0.0, 0.0, n + 1, nt + 1, nt + 1, 0.0, best1, 0.0, best2)
    _, _, power1, power2, c1, y, c2, bound_at = max(found)
    die_level = _sidak([min(1.0, k * (float(at(sx0, c1)) + float(px0[c1 - 1]) * float(at(sy0, y))))] * dice)
    pooled_level = min(1.0, k * float(at(st0, c2))) if c2 <= nt else 0.0
    return ShakerDesign(die_level, pooled_level, bound_at, c1, c1 - 1 + y, c2, power1, best1, power2, best2)


def sector_scan(counts_by_pocket: Sequence[int], width: int = SECTOR_WIDTH) -> TestResult:
    """The hottest sector of ``width`` adjacent pockets on the single-zero wheel."""
    order = list(WHEEL_ORDER)
    pockets = len(order)
    n = sum(counts_by_pocket)
    if n == 0:
        return TestResult("sector", 0.0, None, 1.0, 0, False, "no spin")
    p = width / pockets
    counts = [
        sum(counts_by_pocket[order[(start + k) % pockets]] for k in range(width)) for start in range(pockets)
    ]
    tails = _binom_sfs(counts, n, [p] * pockets)
    start = min(range(pockets), key=lambda i: (tails[i], i))
    q, count = tails[start], counts[start]
    window = [order[(start + k) % pockets] for k in range(width)]
    detail = _detail(window, count, n, p, "hot", _z_for(1.0 / pockets))
    detail["cells_tested"] = pockets
    detail["levels"] = {"n": n, "p": p, "k": pockets, "sidak": 1}
    return TestResult("sector", q, None, min(1.0, pockets * q), n, True, "", detail)


@lru_cache(maxsize=256)
def _hypergeom_pmf(population: int, copies: int, seen: int) -> tuple[float, ...]:
    from scipy.stats import hypergeom

    top = min(copies, seen)
    return tuple(float(x) for x in hypergeom.pmf(range(top + 1), population, copies, seen))


def pool_key(key: tuple[int, ...]) -> tuple[int, int, int]:
    """``(population, copies of each kind, seen)`` of a shoe or wall: a shoe may be given as
    ``(decks, seen)`` (52 kinds, ``decks`` copies of each)."""
    if len(key) == 2:
        decks, seen = key
        return 52 * decks, decks, seen
    population, copies, seen = key
    return population, copies, seen


def null_count_law(shoes: Mapping[tuple[int, ...], int]) -> list[float]:
    """The exact law of one kind's count over ``shoes`` (``(decks, seen)`` or ``(population,
    copies, seen)`` → how many): the convolution of their hypergeometric laws (powers by
    repeated squaring)."""
    import numpy as np

    law = np.array([1.0])
    for key, times in sorted(shoes.items()):
        base = np.array(_hypergeom_pmf(*pool_key(key)))
        power = times
        while power:
            if power & 1:
                law = np.convolve(law, base)
            power >>= 1
            if power:
                base = np.convolve(base, base)
    return [float(x) for x in law]


def composition(
    counts: Sequence[int], shoes: Mapping[tuple[int, ...], int], labels: Sequence[str] | None = None
) -> TestResult:
    """A missing or extra card (or tile): the count of each kind against its exact law
    (``labels``: what each kind is, when not a card)."""
    n = sum(counts)
    if n == 0 or not shoes:
        return TestResult("composition", 0.0, None, 1.0, n, False, "no card seen")
    law = null_count_law(shoes)
    lower = _cumulative(law)
    upper = _cumulative(law[::-1])[::-1]
    best: tuple[float, int, str] | None = None
    for kind, count in enumerate(counts):
        if count >= len(law):
            tail, side = 0.0, "extra"
        else:
            low, high = lower[count], upper[count]
            tail, side = (low, "missing") if low < high else (high, "extra")
        if best is None or tail < best[0]:
            best = (tail, kind, side)
    assert best is not None
    tail, kind, side = best
    tests = 2 * len(counts)
    expected = sum(k * p for k, p in enumerate(law))
    detail: dict[str, Any] = {
        "cells": [kind],
        "observed": counts[kind],
        "expected": expected,
        "effect": counts[kind] / expected if expected else None,
        "effect_ci": list(_count_interval(law, counts[kind], expected)),
        "direction": side,
        "z_needed": None,
        "cells_tested": tests,
        "shoes": sum(shoes.values()),
    }
    if labels is not None:
        detail["label"] = labels[kind]
    return TestResult("composition", tail, None, min(1.0, tests * tail), n, True, "", detail)


def _cumulative(law: Sequence[float]) -> list[float]:
    out, total = [], 0.0
    for p in law:
        total += p
        out.append(min(1.0, total))
    return out


def _count_interval(law: Sequence[float], count: int, expected: float) -> tuple[float, float]:
    """A 95 % interval of observed / expected from the spread of the fair law around its mean
    (the count's own noise), as a ratio."""
    if not expected:
        return (0.0, math.inf)
    sd = math.sqrt(sum((k - expected) ** 2 * p for k, p in enumerate(law)))
    half = 1.96 * sd
    return max(0.0, (count - half) / expected), (count + half) / expected


def more_to_decide(result: TestResult, alpha_share: float, unit_count: int) -> int | None:
    """About how many more outcomes (spins, throws) a hot-cell or sector test needs before it
    decides at its share of alpha, if the cell keeps its observed rate: the ``n`` at which the
    expected z of the observed effect ``r`` reaches the threshold, ``n = (z/(r−1))² (1−p)/p``.
    ``None`` when the observed effect is not above 1 (nothing to decide towards)."""
    d = result.detail
    effect, expected = d.get("effect"), d.get("expected")
    cells = d.get("cells_tested")
    if (
        not isinstance(effect, float)
        or effect <= 1.0
        or not expected
        or not result.n
        or not isinstance(cells, int)
    ):
        return None
    p0 = float(expected) / result.n
    z = _z_for(alpha_share / cells)
    needed = (z / (effect - 1.0)) ** 2 * (1 - p0) / p0
    return max(0, math.ceil(needed - result.n) // unit_count)


def attained_level(levels: Mapping[str, Any], t: float) -> float:
    """The largest p-value at most ``t`` a shaped test can give (0 if none): its p-value is
    ``1 − (1 − min(1, k·P(Bin(n, p) ≥ c)))^sidak`` at the count ``c`` of its hottest cell
    (``sidak`` 1: the union bound alone), a step function of ``c``. The chance that the test
    gives a p-value at most ``t`` is at most this level, which can be well below ``t`` (a test
    of counts is discrete): what is left of ``alpha`` can go to another test of the family
    (Tarone 1990, *Biometrics* 46:515; Westfall & Wolfinger 1997, *Am. Statist.* 51:3)."""
    n, p, k, sidak = int(levels["n"]), float(levels["p"]), int(levels["k"]), int(levels["sidak"])
    return _attained(n, p, k, sidak, t)


@lru_cache(maxsize=4096)
def _attained(n: int, p: float, k: int, sidak: int, t: float) -> float:
    """:func:`attained_level` (levels depend on the amount of play alone: cached)."""
    from scipy.stats import binom

    if t <= 0 or n == 0:
        return 0.0
    per_test = -math.expm1(math.log1p(-min(t, 1.0)) / sidak) if t < 1 else 1.0

    def value(c: int) -> float:
        return _sidak([min(1.0, k * float(binom.sf(c - 1, n, p)))] * sidak)

    c = int(binom.isf(per_test / k, n, p)) + 1
    while c > 0 and value(c - 1) <= t:
        c -= 1
    while c <= n and value(c) > t:
        c += 1
    return value(c) if c <= n else 0.0


def design_power(levels: Mapping[str, Any], ratio: float, level: float) -> float:
    """The power of a shaped test run at ``level`` against its design alternative: one cell
    (a pocket, a window of pockets, a face) ``ratio`` times as likely as when fair, the chance
    that its count reaches the test's critical count (the other cells' chance of getting there
    first is neglected)."""
    n, p, k, sidak = int(levels["n"]), float(levels["p"]), int(levels["k"]), int(levels["sidak"])
    return _design_power(n, p, k, sidak, ratio, level)


@lru_cache(maxsize=4096)
def _design_power(n: int, p: float, k: int, sidak: int, ratio: float, level: float) -> float:
    from scipy.stats import binom

    if level <= 0 or n == 0:
        return 0.0
    per_test = -math.expm1(math.log1p(-min(level, 1.0)) / sidak) if level < 1 else 1.0
    c = int(binom.isf(per_test / k, n, p)) + 1
    while c > 0 and k * float(binom.sf(c - 2, n, p)) <= per_test * (1 + 1e-9):
        c -= 1
    while c <= n and k * float(binom.sf(c - 1, n, p)) > per_test * (1 + 1e-9):
        c += 1
    hot = ratio * p / (1 - p + ratio * p)
    return float(binom.sf(c - 1, n, hot))


def best_pair(
    first: Mapping[str, Any],
    first_ratio: float,
    second: Mapping[str, Any],
    second_ratio: float,
    budget: float,
) -> tuple[float, float]:
    """The levels of two shaped tests of one family, within ``budget``, that give the largest
    sum of their powers against their design alternatives (:func:`design_power`): each level
    one the test can attain (:func:`attained_level`), the second test taking what the first
    leaves. A function of the amounts of play alone (Spjøtvoll 1972, *Ann. Math. Statist.*
    43:398: weights that maximise the average power)."""
    key = tuple(int(first[x]) if x != "p" else float(first[x]) for x in ("n", "p", "k", "sidak"))
    other = tuple(int(second[x]) if x != "p" else float(second[x]) for x in ("n", "p", "k", "sidak"))
    return _best_pair(key, first_ratio, other, second_ratio, budget)


@lru_cache(maxsize=1024)
def _best_pair(
    first: tuple[int, float, int, int],
    first_ratio: float,
    second: tuple[int, float, int, int],
    second_ratio: float,
    budget: float,
) -> tuple[float, float]:
    a_spec = dict(zip(("n", "p", "k", "sidak"), first, strict=True))
    b_spec = dict(zip(("n", "p", "k", "sidak"), second, strict=True))
    best: tuple[float, float, float] | None = None
    level = attained_level(a_spec, budget)
    candidates = [0.0]
    while level >= budget / 50:
        candidates.append(level)
        level = attained_level(a_spec, level * (1 - 1e-9))
    for a in candidates:
        b = attained_level(b_spec, budget - a) if budget - a > 0 else 0.0
        total = design_power(a_spec, first_ratio, a) + design_power(b_spec, second_ratio, b)
        if best is None or total > best[0] + 1e-12:
            best = (total, a, b)
    assert best is not None
    return best[1], best[2]


def _sidak(p_values: Sequence[float]) -> float:
    """``1 − Π(1 − p_i)``, accurately for small ``p_i``."""
    if any(p >= 1.0 for p in p_values):
        return 1.0
    return min(1.0, -math.expm1(sum(math.log1p(-p) for p in p_values)))


@dataclass(frozen=True)
class RateTest:
    """The error-rate test of one croupier or table, against the others of its group."""

    key: str
    rounds: int
    error_rounds: int
    rate: float
    rate_ci: tuple[float, float]
    expected: float
    p_value: float
    p_adjusted: float = 1.0
    rank: int = 0
    rank_range: tuple[int, int] = (0, 0)
    flagged: bool = False


def error_rate_test(rows: Mapping[str, tuple[int, int]], alpha: float) -> list[RateTest]:
    """``rows``: key → (rounds dealt, rounds with an error). Exact hypergeometric upper tails,
    Holm across the rows; ranked by rate, with the range of ranks the 95 % intervals allow (a
    row is surely above another only when their intervals do not overlap)."""
    from scipy.stats import hypergeom

    total = sum(r for r, _ in rows.values())
    errors = sum(e for _, e in rows.values())
    raw = {
        key: float(hypergeom.sf(bad - 1, total, errors, rounds)) if rounds and errors else 1.0
        for key, (rounds, bad) in rows.items()
    }
    adjusted = dict(zip(raw, holm(list(raw.values())), strict=True))
    intervals = {key: _proportion_interval(bad, rounds) for key, (rounds, bad) in rows.items()}
    rate = {key: bad / rounds if rounds else 0.0 for key, (rounds, bad) in rows.items()}
    ranked = sorted(rows, key=lambda k: (-rate[k], k))
    out = []
    for rank, key in enumerate(ranked, start=1):
        rounds, bad = rows[key]
        low, high = intervals[key]
        best = 1 + sum(1 for o in ranked if intervals[o][0] > high)
        worst = len(ranked) - sum(1 for o in ranked if intervals[o][1] < low)
        out.append(
            RateTest(
                key,
                rounds,
                bad,
                rate[key],
                (low, high),
                rounds * errors / total if total else 0.0,
                raw[key],
                adjusted[key],
                rank,
                (best, worst),
                adjusted[key] < alpha,
            )
        )
    return out


def _proportion_interval(k: int, n: int) -> tuple[float, float]:
    """Clopper–Pearson 95 % interval of a proportion."""
    if n == 0:
        return (0.0, 1.0)
    from scipy.stats import beta

    tail = (1 - CI_LEVEL) / 2
    low = float(beta.ppf(tail, k, n - k + 1)) if k > 0 else 0.0
    high = float(beta.ppf(1 - tail, k + 1, n - k)) if k < n else 1.0
    return low, high


@dataclass(frozen=True)
class CusumScheme:
    """A CUSUM scheme: the cells watched, the alternative, the threshold and what it promises."""

    name: str
    cells: int
    ratio: float
    """The alternative: one cell this many times as likely as the others."""
    threshold: float
    nominal_per_night: int
    """The nightly volume (spins, faces) at which the run length below is stated."""
    in_control_nights: float
    """Average nights to a false alarm of a fair piece at the nominal volume (:func:`cusum_arl`)."""

    @property
    def alternative(self) -> str:
        """The alternative in words."""
        return f"{self.ratio:g}x"

    @property
    def p0(self) -> float:
        """A cell's probability when fair."""
        return 1.0 / self.cells

    @property
    def p1(self) -> float:
        """The hot cell's probability under the alternative."""
        return self.ratio / (self.cells - 1 + self.ratio)

    def increment(self, count: int, n: int) -> float:
        """One night's log-likelihood ratio for a cell seen ``count`` times in ``n``."""
        p0, p1 = self.p0, self.p1
        return count * math.log(p1 / p0) + (n - count) * math.log((1 - p1) / (1 - p0))


NIGHTS_PER_YEAR = 365.25
WHEEL_CUSUM = CusumScheme("pockets", 37, 1.5, 12.0, 500, 22_600.0)
"""A pocket 1.5× as likely; at 500 spins a night a fair wheel's false alarm comes once in
22,600 nights on average (62 years; :func:`cusum_arl`, checked by ``tests/stats`` and by
simulation in ``bench.surveillance``); a pocket 1.5× as likely is caught in 9.4 nights on
average. The run length scales with the spins: at 1,000 spins a night, half as many nights."""
SHAKER_CUSUM = CusumScheme("faces", 6, 1.2, 10.0, 1500, 21_300.0)
"""Pooled faces of every die (1,500 faces: 500 throws of three dice a night); a face 1.2× as
likely on every die is caught in 3.4 nights on average; a fair shaker's false alarm comes once
in 21,300 nights (58 years)."""


@dataclass
class CellCusum:
    """Page's CUSUM per cell, night by night; the path of the largest sum is kept."""

    scheme: CusumScheme
    sums: list[float] = field(default_factory=list)
    path: list[tuple[str, float, int]] = field(default_factory=list)
    """``(night, largest sum, its cell)`` per night."""
    alarm: str | None = None
    """The first night the largest sum reached the threshold."""

    def night(self, label: str, counts: Sequence[int]) -> None:
        """Fold one night's counts per cell."""
        if not self.sums:
            self.sums = [0.0] * len(counts)
        n = sum(counts)
        for i, c in enumerate(counts):
            self.sums[i] = max(0.0, self.sums[i] + self.scheme.increment(c, n))
        top = max(range(len(self.sums)), key=lambda i: self.sums[i])
        self.path.append((label, self.sums[top], top))
        if self.alarm is None and self.sums[top] >= self.scheme.threshold:
            self.alarm = label


def cusum_arl(scheme: CusumScheme, threshold: float, ratio: float = 1.0, states: int = 300) -> float:
    """Average nights to an alarm of ``scheme`` at ``threshold``, any of its cells, when each
    cell is ``ratio`` times as likely as fair (1: in control), at the nominal nightly volume.
    One cell's run length by the Brook–Evans Markov chain; in control, the cells' alarms are
    rare and nearly independent, so the first of ``cells`` comes ``cells`` times sooner."""
    import numpy as np
    from scipy.stats import binom

    n = scheme.nominal_per_night
    p = ratio / (scheme.cells - 1 + ratio) if ratio != 1.0 else scheme.p0
    xs = np.arange(n + 1)
    probs = binom.pmf(xs, n, p)
    keep = probs > 1e-14
    xs, probs = xs[keep], probs[keep]
    steps = np.array([scheme.increment(int(x), n) for x in xs])
    width = threshold / states
    centres = (np.arange(states) + 0.5) * width
    centres[0] = 0.0
    q = np.zeros((states, states))
    for i, s in enumerate(centres):
        after = s + steps
        inside = after < threshold
        bins = np.clip(np.floor(np.maximum(after, 0.0) / width).astype(int), 0, states - 1)
        np.add.at(q[i], bins[inside], probs[inside])
    run = np.linalg.solve(np.eye(states) - q, np.ones(states))
    single = float(run[0])
    return single / scheme.cells if ratio == 1.0 else single


LLR_CAP = 50.0
"""An impossible count (a card of a kind seen more often than the shoe holds) is proof: its
log-likelihood ratio, infinite, is held at this (far above any threshold)."""


def composition_llr(population: int, copies: int, seen: int, count: int) -> tuple[float, float]:
    """One shoe's (or wall's) log-likelihood ratios for one kind seen ``count`` times in
    ``seen``, of one copy missing and of one copy extra against the full composition, exact
    (ratios of hypergeometric probabilities): missing ``log((K − c)/K) + log(N/(N − n))``,
    extra ``log((K + 1)/(K + 1 − c)) + log((N + 1 − n)/(N + 1))``."""
    n, k, c = population, copies, count
    if seen > n or c > k:
        return (-LLR_CAP, LLR_CAP)
    missing = -LLR_CAP if c >= k or seen >= n else math.log((k - c) / k) + math.log(n / (n - seen))
    extra = math.log((k + 1) / (k + 1 - c)) + math.log((n + 1 - seen) / (n + 1))
    return (max(-LLR_CAP, missing), min(LLR_CAP, extra))


@dataclass(frozen=True)
class CompositionScheme:
    """Page's CUSUM per kind and side (one copy missing, one extra), shoe by shoe (or wall by
    wall), with the threshold and what it promises at a nominal volume."""

    name: str
    """``cards`` or ``tiles``."""
    kinds: int
    threshold: float
    nominal: tuple[int, int, int]
    """``(population, copies, seen)`` of the nominal shoe or wall."""
    nominal_per_night: int
    """Shoes or walls a night at which the run length below is stated."""
    in_control_nights: float
    """Average nights to a false alarm of a fair shoe or wall at the nominal volume
    (:func:`composition_arl`)."""
    ratio: float = 1.0
    alternative: str = "missing or extra"


CARD_CUSUM = CompositionScheme("cards", 52, 20.0, (52, 1, 22), 500, 62_700.0)
"""One deck shuffled every round with 22 cards seen, 500 rounds a night (the worst case): a
fair deck's false alarm once in 62,700 nights (172 years); an 8-deck shoe dealt to 35 cards
from its end, 13 shoes a night: once in about 2 million nights (:func:`composition_arl`)."""
TILE_CUSUM = CompositionScheme("tiles", 34, 20.0, (136, 4, 84), 40, 5_030_000.0)
"""A 136-tile wall with 84 tiles drawn, 40 walls a night: a fair wall's false alarm once in
about 5 million nights."""


@dataclass
class CompositionCusum:
    """Page's CUSUM of each kind's missing and extra log-likelihood ratio, shoe by shoe; the
    path of the largest sum is kept night by night."""

    scheme: CompositionScheme
    labels: tuple[str, ...] = ()
    """What each kind is (``AS``, ``1B``)."""
    sums: list[float] = field(default_factory=list)
    path: list[tuple[str, float, int]] = field(default_factory=list)
    """``(night, largest sum, its cell)``: cell ``2·kind`` missing, ``2·kind + 1`` extra."""
    alarm: str | None = None

    def where(self, cell: int) -> str:
        """The kind and side of a cell: ``AS missing``."""
        kind = self.labels[cell // 2] if cell // 2 < len(self.labels) else str(cell // 2)
        return f"{kind} {'extra' if cell % 2 else 'missing'}"

    def shoe(self, night: str, population: int, copies: int, counts: Sequence[int]) -> None:
        """Fold one shoe's (or wall's) counts of each kind seen."""
        if not self.sums:
            self.sums = [0.0] * (2 * len(counts))
        seen = sum(counts)
        for kind, count in enumerate(counts):
            missing, extra = composition_llr(population, copies, seen, count)
            self.sums[2 * kind] = max(0.0, self.sums[2 * kind] + missing)
            self.sums[2 * kind + 1] = max(0.0, self.sums[2 * kind + 1] + extra)
        top = max(range(len(self.sums)), key=lambda i: self.sums[i])
        if self.path and self.path[-1][0] == night:
            self.path.pop()
        self.path.append((night, self.sums[top], top))
        if self.alarm is None and self.sums[top] >= self.scheme.threshold:
            self.alarm = night

    def night(self, night: str) -> None:
        """A night with no shoe closed: the path goes on at the same height."""
        if self.path and self.path[-1][0] != night:
            _, value, cell = self.path[-1]
            self.path.append((night, value, cell))


def composition_arl(
    scheme: CompositionScheme, nominal: tuple[int, int, int] | None = None, states: int = 400
) -> float:
    """Average shoes to a false alarm of a fair shoe, any kind and side, at ``nominal``
    (the scheme's by default): one kind's missing-side run length by the Brook–Evans Markov
    chain on the exact steps (the extra side's finite steps are small and negative on
    average: its in-control alarms are negligible), divided by the kinds (rare, nearly
    independent alarms)."""
    import numpy as np
    from scipy.stats import hypergeom

    population, copies, seen = nominal or scheme.nominal
    h = scheme.threshold
    counts = np.arange(copies + 1)
    probs = hypergeom.pmf(counts, population, copies, seen)
    steps = [composition_llr(population, copies, seen, int(c))[0] for c in counts]
    width = h / states
    centres = (np.arange(states) + 0.5) * width
    centres[0] = 0.0
    q = np.zeros((states, states))
    for i, s in enumerate(centres):
        for step, p in zip(steps, probs, strict=True):
            after = s + step
            if after < h:
                q[i, 0 if after <= 0 else min(states - 1, int(after / width))] += p
    run = np.linalg.solve(np.eye(states) - q, np.ones(states))
    return float(run[0]) / scheme.kinds
