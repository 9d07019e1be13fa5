"""The shaped tests, the weighted correction, the CUSUM and the error-rate test: calibration at
a few points against exact binomial bounds (seeded simulation, not timed), exact laws against
enumeration, and each test finding the fault it is shaped for."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from scipy.stats import binom, hypergeom

from ledger.stats import shaped as sh
from ledger.stats.tests import holm, weighted_holm
from tests.conftest import tiered

RUNS = 1000


def _bounds(alpha: float, conservative: bool = False, runs: int = RUNS) -> tuple[int, int]:
    """Rejections of ``runs`` fair runs a test at level ``alpha`` may show (99.98 % each
    side); a conservative test may show fewer, down to none."""
    high = int(binom.ppf(0.9999, runs, alpha))
    low = 0 if conservative else int(binom.ppf(0.0001, runs, alpha * 0.75))
    return low, high


@pytest.mark.parametrize("alpha", [0.01, 0.05])
def test_max_cell_is_calibrated_on_fair_wheels(alpha: float) -> None:
    rng = np.random.default_rng(7)
    counts = rng.multinomial(400, [1 / 37] * 37, size=RUNS)
    rejected = sum(sh.max_cell(list(c), [1 / 37] * 37).p_value < alpha for c in counts)
    low, high = _bounds(alpha)
    assert low <= rejected <= high


def test_max_cell_p_value_is_the_exact_law_of_the_maximum_on_a_small_case() -> None:
    # 3 and 4 cells, 9 and 12 outcomes: enumerate every table; the p-value is never below
    # the exact tail of the maximum, and close to it in the tail
    for n, k in ((9, 3), (12, 4)):
        _check_max_law(n, k)


def _check_max_law(n: int, k: int) -> None:
    for top in range(n // k + 2, n + 1):
        exact = 0.0
        for cut in itertools.combinations(range(n + k - 1), k - 1):
            edges = (-1, *cut, n + k - 1)
            cells = [edges[i + 1] - edges[i] - 1 for i in range(k)]
            if max(cells) >= top:
                exact += math.exp(
                    math.lgamma(n + 1) - sum(math.lgamma(c + 1) for c in cells) - n * math.log(k)
                )
        rest = n - top
        observed = [top] + [rest // (k - 1) + (1 if i < rest % (k - 1) else 0) for i in range(k - 1)]
        assert max(observed) == top
        p = sh.max_cell(observed, [1 / k] * k).p_value
        assert exact <= p + 1e-12, (top, exact, p)
        if exact < 0.05:
            assert p <= exact * (1 + k * exact) + 1e-9, (top, exact, p)


@pytest.mark.parametrize("alpha", tiered([0.01, 0.05], 1))  # 0.05 in the slow tier
def test_sector_scan_and_dice_are_calibrated(alpha: float) -> None:
    rng = np.random.default_rng(11)
    wheels = rng.multinomial(600, [1 / 37] * 37, size=RUNS)
    sectors = sum(sh.sector_scan(list(c)).p_value < alpha for c in wheels)
    assert sectors <= _bounds(alpha, conservative=True)[1]
    dice = rng.multinomial(300, [1 / 6] * 6, size=(RUNS // 2, 3))
    one_die = sum(sh.dice_max([list(d) for d in throw]).p_value < alpha for throw in dice)
    low, high = _bounds(alpha, runs=RUNS // 2)
    assert low <= one_die <= high


def test_the_hot_pocket_the_sector_and_the_die_are_found_and_named() -> None:
    rng = np.random.default_rng(3)
    weights = np.ones(37)
    weights[17] = 2.0
    hot = sh.max_cell(list(rng.multinomial(4000, weights / weights.sum())), [1 / 37] * 37)
    assert hot.p_value < 1e-6 and hot.detail["cells"] == [17]
    low, high = hot.detail["effect_ci"]
    assert low < 2.0 < high
    weights = np.ones(37)
    weights[sh.WHEEL_ORDER.index(17) - 2 : sh.WHEEL_ORDER.index(17) + 3] = 1.5
    ordered = np.zeros(37)
    ordered[list(sh.WHEEL_ORDER)] = weights
    sector = sh.sector_scan(list(rng.multinomial(6000, ordered / ordered.sum())))
    assert sector.p_value < 1e-4 and 17 in sector.detail["cells"]
    loaded = [1, 1, 1, 1, 1, 2.5]
    die = sh.dice_max(
        [list(rng.multinomial(600, [1 / 6] * 6)), list(rng.multinomial(600, np.array(loaded) / sum(loaded)))]
    )
    assert die.p_value < 1e-6 and die.detail["die"] == 2 and die.detail["cells"] == [5]


def test_composition_law_is_the_exact_convolution_of_hypergeometrics() -> None:
    shoes = Counter({(1, 20): 3, (2, 60): 2})
    law = sh.null_count_law(shoes)
    direct = np.array([1.0])
    for (decks, seen), times in shoes.items():
        for _ in range(times):
            direct = np.convolve(direct, hypergeom.pmf(range(decks + 1), 52 * decks, decks, seen))
    assert law == pytest.approx(list(direct), abs=1e-15)
    assert sum(law) == pytest.approx(1.0)


@pytest.mark.parametrize("alpha", [0.01, 0.05])
def test_composition_is_calibrated_on_fair_single_decks(alpha: float) -> None:
    rng = np.random.default_rng(5)
    deck = np.arange(52)
    rejected = 0
    for _ in range(RUNS // 4):
        seen = np.zeros(52, dtype=int)
        for _ in range(30):
            seen += np.bincount(rng.permutation(deck)[:20], minlength=52)
        rejected += sh.composition(list(seen), {(1, 20): 30}).p_value < alpha
    assert rejected <= int(binom.ppf(0.9999, RUNS // 4, alpha))


def test_a_missing_card_in_one_deck_is_certain_within_20_rounds() -> None:
    rng = np.random.default_rng(9)
    deck = np.arange(1, 52)  # the ace of spades (0) is missing
    seen = np.zeros(52, dtype=int)
    for _ in range(20):
        seen += np.bincount(rng.permutation(deck)[:20], minlength=52)
    result = sh.composition(list(seen), {(1, 20): 20})
    assert result.p_value < 0.01 and result.detail["cells"] == [0]
    assert result.detail["direction"] == "missing"


def test_weighted_holm_with_equal_weights_is_holm_and_controls_any_dependence() -> None:
    p = [0.001, 0.2, 0.013, 0.04, 0.0005]
    assert weighted_holm(p, [1.0] * 5) == pytest.approx(holm(p))
    adjusted = weighted_holm([0.004, 0.03, 0.5], [0.49, 0.49, 0.02])
    assert adjusted == pytest.approx([0.004 / 0.49, 0.03 * 0.51 / 0.49, 0.5])
    with pytest.raises(ValueError, match="weight"):
        weighted_holm([0.1], [0.0])


def test_the_cusum_thresholds_give_the_stated_run_lengths() -> None:
    for scheme in (sh.WHEEL_CUSUM, sh.SHAKER_CUSUM):
        arl = sh.cusum_arl(scheme, scheme.threshold)
        assert arl >= scheme.in_control_nights >= 40 * sh.NIGHTS_PER_YEAR
        assert sh.cusum_arl(scheme, scheme.threshold, scheme.ratio) < 16


def test_the_cusum_raises_its_alarm_on_the_hot_pocket() -> None:
    rng = np.random.default_rng(2)
    weights = np.ones(37)
    weights[5] = 1.5
    fair, hot = sh.CellCusum(sh.WHEEL_CUSUM), sh.CellCusum(sh.WHEEL_CUSUM)
    for night in range(60):
        fair.night(str(night), list(rng.multinomial(500, [1 / 37] * 37)))
        hot.night(str(night), list(rng.multinomial(500, weights / weights.sum())))
    assert fair.alarm is None
    assert hot.alarm is not None and int(hot.alarm) < 40
    assert len(hot.path) == 60


@pytest.mark.parametrize("alpha", tiered([0.01, 0.05], 1))  # 0.05 in the slow tier
def test_the_error_rate_test_is_calibrated_and_finds_a_croupier_at_three_times(alpha: float) -> None:
    rng = np.random.default_rng(13)
    rejected = caught = 0
    for _ in range(RUNS // 4):
        rows = {f"c{i}": (1000, int(rng.binomial(1000, 0.02))) for i in range(5)}
        rejected += any(t.p_value < alpha for t in sh.error_rate_test(rows, alpha) if t.key == "c0")
        rows["hot"] = (2000, int(rng.binomial(2000, 0.06)))
        caught += next(t for t in sh.error_rate_test(rows, alpha) if t.key == "hot").flagged
    assert rejected <= int(binom.ppf(0.9999, RUNS // 4, alpha))
    assert caught >= 0.9 * RUNS // 4


def test_rank_ranges_overlap_when_rates_are_alike() -> None:
    tests = {t.key: t for t in sh.error_rate_test({"a": (500, 10), "b": (500, 12), "c": (500, 60)}, 0.01)}
    assert tests["c"].rank == 1 and tests["c"].rank_range == (1, 1) and tests["c"].flagged
    assert tests["b"].rank_range == (2, 3) and tests["a"].rank_range == (2, 3)


def test_more_to_decide_reaches_the_threshold_at_the_number_it_gives() -> None:
    result = sh.max_cell([30] + [24] * 36, [1 / 37] * 37)  # pocket 0 at 1.24x, 894 spins
    more = sh.more_to_decide(result, 0.0049, 1)
    assert more is not None and more > 0
    n = result.n + more
    p0 = 1 / 37
    z = (result.detail["effect"] - 1) * math.sqrt(n * p0 / (1 - p0))
    assert z == pytest.approx(float(sh._z_for(0.0049 / 37)), rel=0.01)
