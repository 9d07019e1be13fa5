"""The surveillance statistics against an independent implementation (scipy) and, where counts
are small, against exact distributions computed by enumeration."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

import pytest

from ledger.stats import tests as st
from tests.conftest import tiered

scipy_stats = pytest.importorskip("scipy.stats")
scipy_special = pytest.importorskip("scipy.special")


@pytest.mark.parametrize("a", [0.5, 1.0, 2.5, 18.0, 25.5, 200.0])
@pytest.mark.parametrize("x", [0.01, 0.7, 3.0, 17.9, 36.0, 80.0, 400.0])
def test_gamma_q_matches_scipy(a, x):
    assert st.gamma_q(a, x) == pytest.approx(float(scipy_special.gammaincc(a, x)), rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("df", [1, 2, 5, 12, 36, 51, 33])
def test_chi2_sf_matches_scipy(df):
    for x in (0.0, 0.5, df / 2, df, df + 3 * math.sqrt(2 * df), 4 * df + 30):
        assert st.chi2_sf(x, df) == pytest.approx(float(scipy_stats.chi2.sf(x, df)), rel=1e-9, abs=1e-300)


def test_chi_square_gof_matches_scipy_chisquare():
    rng = random.Random(3)
    for cells in (6, 37, 52):
        probs = [1 / cells] * cells
        counts = Counter(rng.randrange(cells) for _ in range(cells * 20))
        observed = [counts[i] for i in range(cells)]
        ours = st.chi_square_gof(observed, probs)
        theirs = scipy_stats.chisquare(observed)
        assert ours.statistic == pytest.approx(float(theirs.statistic), rel=1e-12)
        assert ours.p_value == pytest.approx(float(theirs.pvalue), rel=1e-9)
        assert ours.df == cells - 1 and ours.n == cells * 20 and ours.valid


def test_chi_square_gof_with_unequal_probabilities_matches_scipy():
    probs = [0.5, 0.25, 0.125, 0.125]
    observed = [60, 20, 12, 8]
    ours = st.chi_square_gof(observed, probs)
    theirs = scipy_stats.chisquare(observed, [100 * p for p in probs])
    assert ours.p_value == pytest.approx(float(theirs.pvalue), rel=1e-9)


def test_chi_square_is_not_valid_when_expected_counts_are_small():
    result = st.chi_square_gof([1, 2, 0, 1, 0, 2], [1 / 6] * 6)
    assert not result.valid and "expected count" in result.note


def test_an_outcome_in_an_impossible_cell_is_certain_evidence():
    result = st.chi_square_gof([5, 5, 1], [0.5, 0.5, 0.0])
    assert result.p_value == 0.0 and result.valid


def _exact_multinomial_p(observed, probs):
    """Exact p-value of the chi-square statistic: the probability, under the null, of every
    table at least as extreme (summed over all tables of the same n; the tables enumerated by
    their k - 1 cut points among n + k - 1 places, as whole arrays)."""
    import numpy as np

    n, k = sum(observed), len(observed)
    mine = sum((o - n * p) ** 2 / (n * p) for o, p in zip(observed, probs, strict=True))
    cuts = np.fromiter(
        itertools.chain.from_iterable(itertools.combinations(range(n + k - 1), k - 1)), dtype=np.int64
    ).reshape(-1, k - 1)
    edges = np.hstack([np.full((len(cuts), 1), -1), cuts, np.full((len(cuts), 1), n + k - 1)])
    counts = np.diff(edges, axis=1) - 1
    expected = n * np.asarray(probs, dtype=float)
    stat = (((counts - expected) ** 2) / expected).sum(axis=1)
    log_p = math.lgamma(n + 1) + (counts * np.log(probs) - scipy_special.gammaln(counts + 1)).sum(axis=1)
    return float(np.exp(log_p[stat >= mine - 1e-9]).sum())


# The six-cell table (324,632 tables to enumerate, 0.1 s of CPU as arrays) in the slow tier.
@pytest.mark.parametrize(
    "observed", tiered([[26, 12, 22], [30, 20, 10], [32, 18, 10], [28, 28, 4], [6, 7, 9, 2, 3, 3]], 4)
)
def test_chi_square_p_value_is_close_to_the_exact_multinomial_test(observed):
    probs = [1 / len(observed)] * len(observed)
    exact = _exact_multinomial_p(observed, probs)
    ours = st.chi_square_gof(observed, probs)
    assert ours.valid
    assert ours.p_value == pytest.approx(exact, abs=0.01, rel=0.15)


def _exact_runs_distribution(first, second):
    """Number of runs of every arrangement of ``first`` Trues and ``second`` Falses, counted
    exactly by extending arrangements one value at a time: ``ways[(trues, falses, last)]``
    counts the arrangements of that many values ending with ``last``, by their runs."""
    ways: dict[tuple[int, int, bool], Counter[int]] = {}
    if first:
        ways[(1, 0, True)] = Counter({1: 1})
    if second:
        ways[(0, 1, False)] = Counter({1: 1})
    for _ in range(first + second - 1):
        grown: dict[tuple[int, int, bool], Counter[int]] = {}
        for (trues, falses, last), runs in ways.items():
            for value in (True, False):
                key = (trues + value, falses + (not value), value)
                if key[0] > first or key[1] > second:
                    continue
                into = grown.setdefault(key, Counter())
                for r, count in runs.items():
                    into[r + (value != last)] += count
        ways = grown
    out: Counter[int] = Counter()
    for key in ((first, second, True), (first, second, False)):
        out.update(ways.get(key, Counter()))
    return out


@pytest.mark.parametrize(("first", "second"), [(5, 7), (8, 8), (10, 6)])
def test_runs_mean_and_variance_are_those_of_the_exact_distribution(first, second):
    dist = _exact_runs_distribution(first, second)
    total = sum(dist.values())
    mean = sum(r * c for r, c in dist.items()) / total
    var = sum((r - mean) ** 2 * c for r, c in dist.items()) / total
    # with the continuity correction, R = mean + 0.5 + sd gives z = 1 exactly when our mean
    # and variance are the exact ones (R need not be a whole number for this check)
    assert st.runs_test(first, second, mean + 0.5 + math.sqrt(var)).statistic == pytest.approx(1.0)


def test_runs_p_value_is_close_to_the_exact_two_sided_p():
    first = second = 10
    dist = _exact_runs_distribution(first, second)
    total = sum(dist.values())
    mean = 2 * first * second / 20 + 1
    for runs in (5, 7, 15):
        exact = sum(c for r, c in dist.items() if abs(r - mean) >= abs(runs - mean)) / total
        assert st.runs_test(first, second, runs).p_value == pytest.approx(exact, abs=0.03)


def test_runs_counter_counts_runs_and_merges_days():
    seq = [True, True, False, True, False, False, False, True]
    whole = st.RunsCounter()
    for v in seq:
        whole.add(v)
    assert (whole.first, whole.second, whole.runs) == (4, 4, 5)
    day1, day2 = st.RunsCounter(), st.RunsCounter()
    for v in seq[:3]:
        day1.add(v)
    for v in seq[3:]:
        day2.add(v)
    day1.merge(day2)
    assert (day1.first, day1.second, day1.runs) == (4, 4, 5)


def test_serial_null_mean_is_the_exact_mean_of_a_shuffled_population():
    population = [1, 2, 3, 5, 8]
    mu = sum(population) / len(population)
    var = sum((x - mu) ** 2 for x in population) / len(population)
    sums = []
    for perm in itertools.permutations(population):
        pairs = st.SerialPairs()
        pairs.new_shoe(len(population), mu, var)
        for x in perm:
            pairs.add(x)
        sums.append(pairs.centred)
        null_mean = pairs.null_mean
    assert sum(sums) / len(sums) == pytest.approx(null_mean, rel=1e-12)


def test_serial_correlation_is_not_flagged_for_shuffled_shoes_and_is_for_sorted_ones():
    rng = random.Random(11)
    deck = [r for r in range(1, 14) for _ in range(4)]
    fair, sorted_ = st.SerialPairs(), st.SerialPairs()
    for _ in range(200):
        cards = deck[:]
        rng.shuffle(cards)
        fair.new_shoe(52, 7.0, 14.0)
        for c in cards[:20]:
            fair.add(c)
        sorted_.new_shoe(52, 7.0, 14.0)
        for c in sorted(cards[:20]):
            sorted_.add(c)
    assert fair.test().p_value > 0.001
    assert sorted_.test().p_value < 1e-6


def test_holm_matches_a_direct_step_down():
    p = [0.001, 0.2, 0.013, 0.04, 0.0005]
    adjusted = st.holm(p)
    # by hand: sorted 0.0005*5, 0.001*4, 0.013*3, 0.04*2, 0.2*1 (running max)
    assert adjusted == pytest.approx([0.004, 0.2, 0.039, 0.08, 0.0025])
    assert st.holm([]) == []
    assert st.holm([0.9, 0.8]) == pytest.approx([1.0, 1.0])
