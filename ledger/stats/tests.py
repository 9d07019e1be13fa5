"""Statistical tests for surveillance.

The chi-square, runs and serial tests are pure Python; the tests shaped for one fault
(:mod:`ledger.stats.shaped`) read exact binomial and hypergeometric tails from ``scipy.stats``.

Every test returns a :class:`TestResult`: the statistic, its degrees of freedom, the p-value and
the number of outcomes ``n``, plus ``valid`` — whether ``n`` is large enough for the reference
distribution the p-value is read from. A test that is not valid is reported but never flagged
and takes no part in the correction.

- :func:`chi_square_gof` — Pearson's goodness of fit against given cell probabilities; the
  p-value is the upper tail of the chi-square distribution, computed with the regularised upper
  incomplete gamma function :func:`gamma_q` (series and continued fraction, as in Numerical
  Recipes §6.2). Valid when every expected count is at least :data:`MIN_EXPECTED`.
- :func:`runs_test` — Wald–Wolfowitz: the number of runs in a two-valued sequence (red/black,
  small/big) against its mean and variance given the two counts, normal approximation with a
  continuity correction, two-sided. Too few runs means streaks; too many means alternation.
  Valid when both counts are at least :data:`MIN_RUNS_EACH`.
- :class:`SerialPairs` — lag-1 serial correlation of successive values within a shoe. Cards of
  a shuffled shoe are a random permutation of a known population (mean ``mu``, variance
  ``var``, size ``N``), so successive values are slightly negatively correlated even when the
  shoe is fair: ``E[(X−mu)(Y−mu)] = −var/(N−1)``. The statistic is that sum over all pairs,
  centred on its null mean and scaled by ``var·√pairs``; two-sided normal p-value.
- :func:`holm` — Holm's step-down adjustment of a family of p-values. It controls the
  family-wise error rate (the chance that *any* test of a fair piece of equipment is flagged)
  under any dependence between the tests: a per-day test and the period test of the same wheel
  are strongly dependent, which rules out corrections that assume independence, and the
  question an inspector asks ("is this wheel fair?") is one of family-wise error, not of false
  discovery rate (Benjamini–Hochberg would allow a set share of flagged fair wheels).

>>> r = chi_square_gof([10, 10, 10, 10, 10, 10], [1 / 6] * 6)
>>> r.statistic, r.df, r.p_value
(0.0, 5, 1.0)
>>> round(chi2_sf(3.84145882, 1), 4)
0.05
>>> [round(p, 6) for p in holm([0.01, 0.04, 0.03])]
[0.03, 0.06, 0.06]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MIN_EXPECTED = 5.0
"""Smallest expected count per cell for the chi-square approximation to be trusted."""
MIN_RUNS_EACH = 10
"""Smallest count of each of the two values for the runs test's normal approximation."""
MIN_PAIRS = 30
"""Smallest number of successive pairs for the serial-correlation test."""

_EPS = 1e-15
_TINY = 1e-300
_MAX_ITER = 10_000


@dataclass(frozen=True)
class TestResult:
    """The outcome of one statistical test."""

    __test__ = False  # not a pytest test class

    method: str
    """``chi_square``, ``runs`` or ``serial_correlation``."""
    statistic: float
    df: int | None
    p_value: float
    n: int
    valid: bool
    note: str = ""
    detail: Mapping[str, Any] = field(default_factory=dict)
    """What an inspector acts on, for the shaped tests: ``cells`` (indices of the pocket, face,
    card or sector), ``observed``, ``expected``, ``effect`` (observed / expected) and
    ``effect_ci`` (its 95 % interval), ``direction``, ``z_needed`` (see
    :func:`ledger.stats.shaped.more_to_decide`)."""


def gamma_q(a: float, x: float) -> float:
    """The regularised upper incomplete gamma function ``Q(a, x) = Γ(a, x) / Γ(a)``.

    >>> round(gamma_q(1.0, 1.0), 12) == round(math.exp(-1.0), 12)
    True
    """
    if a <= 0:
        raise ValueError("gamma_q needs a > 0")
    if x <= 0:
        return 1.0
    if x < a + 1.0:
        return max(0.0, 1.0 - _gamma_p_series(a, x))
    return min(1.0, _gamma_q_fraction(a, x))


def _gamma_p_series(a: float, x: float) -> float:
    """``P(a, x)`` by its power series (converges fast for ``x < a + 1``)."""
    term = total = 1.0 / a
    ap = a
    for _ in range(_MAX_ITER):
        ap += 1.0
        term *= x / ap
        total += term
        if abs(term) < abs(total) * _EPS:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _gamma_q_fraction(a: float, x: float) -> float:
    """``Q(a, x)`` by its continued fraction, modified Lentz (for ``x ≥ a + 1``)."""
    b = x + 1.0 - a
    c = 1.0 / _TINY
    d = 1.0 / b
    h = d
    for i in range(1, _MAX_ITER):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = _TINY if abs(d) < _TINY else d
        c = b + an / c
        c = _TINY if abs(c) < _TINY else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def chi2_sf(x: float, df: int) -> float:
    """The upper tail ``P(χ²_df ≥ x)``."""
    if df <= 0:
        raise ValueError("a chi-square distribution needs df ≥ 1")
    return gamma_q(df / 2.0, x / 2.0)


def normal_two_sided(z: float) -> float:
    """``P(|Z| ≥ |z|)`` for a standard normal ``Z``."""
    return math.erfc(abs(z) / math.sqrt(2.0))


def chi_square_gof(observed: Sequence[int], probabilities: Sequence[float]) -> TestResult:
    """Pearson's chi-square goodness of fit of ``observed`` counts against cell
    ``probabilities`` (which must sum to 1); cells of probability 0 must be empty and count
    for no degree of freedom."""
    if len(observed) != len(probabilities):
        raise ValueError("one probability per cell")
    n = sum(observed)
    cells = [(o, p) for o, p in zip(observed, probabilities, strict=True) if p > 0]
    impossible = n - sum(o for o, _ in cells)
    df = len(cells) - 1
    if n == 0 or df < 1:
        return TestResult("chi_square", 0.0, max(df, 0), 1.0, n, False, "no outcome")
    if impossible:
        return TestResult(
            "chi_square", math.inf, df, 0.0, n, True, f"{impossible} outcome(s) in a cell of probability 0"
        )
    statistic = sum((o - n * p) ** 2 / (n * p) for o, p in cells)
    least = min(n * p for _, p in cells)
    valid = least >= MIN_EXPECTED
    return TestResult(
        "chi_square",
        statistic,
        df,
        chi2_sf(statistic, df),
        n,
        valid,
        "" if valid else f"expected count {least:.1f} < {MIN_EXPECTED:g} per cell",
    )


def runs_test(first: int, second: int, runs: int) -> TestResult:
    """Wald–Wolfowitz runs test: ``runs`` runs in a sequence of ``first`` + ``second`` values."""
    n = first + second
    if first == 0 or second == 0:
        return TestResult("runs", 0.0, None, 1.0, n, False, "only one value seen")
    mean = 2.0 * first * second / n + 1.0
    var = 2.0 * first * second * (2.0 * first * second - n) / (n * n * (n - 1.0))
    gap = max(0.0, abs(runs - mean) - 0.5)  # continuity correction: runs are whole numbers
    z = math.copysign(gap, runs - mean) / math.sqrt(var) if var > 0 else 0.0
    valid = min(first, second) >= MIN_RUNS_EACH
    return TestResult(
        "runs",
        z,
        None,
        normal_two_sided(z),
        n,
        valid,
        "" if valid else f"fewer than {MIN_RUNS_EACH} of one value",
    )


@dataclass
class RunsCounter:
    """Counts the two values and the runs of a two-valued sequence, one value at a time."""

    first: int = 0
    second: int = 0
    runs: int = 0
    head: bool | None = None
    """The sequence's first value (to join a later sequence with :meth:`merge`)."""
    last: bool | None = None

    def add(self, is_first: bool) -> None:
        """The next value of the sequence."""
        if is_first:
            self.first += 1
        else:
            self.second += 1
        if is_first != self.last:
            self.runs += 1
        if self.head is None:
            self.head = is_first
        self.last = is_first

    def merge(self, other: RunsCounter) -> None:
        """Append a later sequence (the next day) to this one, as its continuation."""
        if other.head is None:
            return
        self.first += other.first
        self.second += other.second
        self.runs += other.runs - (1 if other.head == self.last else 0)
        if self.head is None:
            self.head = other.head
        self.last = other.last

    def test(self) -> TestResult:
        """The runs test of the sequence so far."""
        return runs_test(self.first, self.second, self.runs)


@dataclass
class SerialPairs:
    """Lag-1 serial correlation of successive values within shoes (see the module docstring).

    Values of each shoe are fed in the order they left it; :meth:`new_shoe` starts a shoe with
    a population of ``size`` values of mean ``mu`` and variance ``var``.
    """

    pairs: int = 0
    centred: float = 0.0
    """``Σ (x−mu)(y−mu)`` over successive pairs."""
    null_mean: float = 0.0
    """``Σ −var/(N−1)`` over the same pairs: the expectation of :attr:`centred` if fair."""
    var_sum: float = 0.0
    """``Σ var²`` over the pairs: the variance of :attr:`centred` if fair."""
    _last: float | None = None
    _mu: float = 0.0
    _var: float = 0.0
    _size: int = 0

    def new_shoe(self, size: int, mu: float, var: float) -> None:
        """A freshly shuffled shoe of ``size`` values."""
        self._last, self._size, self._mu, self._var = None, size, mu, var

    def end_shoe(self) -> None:
        """No shoe in play until the next :meth:`new_shoe`."""
        self._last, self._size = None, 0

    def add(self, value: float) -> None:
        """The next value out of the current shoe (ignored when no shoe is in play)."""
        if self._size < 2:
            return
        x = value - self._mu
        if self._last is not None:
            self.pair(self._last, x, self._size, self._var)
        self._last = x

    def gap(self) -> None:
        """A value of the shoe that was not recorded: the next value starts no pair."""
        self._last = None

    def pair(self, a: float, b: float, size: int, var: float) -> None:
        """One successive pair of centred values from a shoe of ``size`` values of variance
        ``var`` (for callers that keep the shoe's state themselves)."""
        self.pairs += 1
        self.centred += a * b
        self.null_mean -= var / (size - 1)
        self.var_sum += var * var

    def merge(self, other: SerialPairs) -> None:
        """Add another period's pairs."""
        self.pairs += other.pairs
        self.centred += other.centred
        self.null_mean += other.null_mean
        self.var_sum += other.var_sum

    def test(self) -> TestResult:
        """Two-sided z test of the serial correlation against a fair shuffle."""
        if self.pairs == 0 or self.var_sum <= 0:
            return TestResult("serial_correlation", 0.0, None, 1.0, self.pairs, False, "no successive cards")
        z = (self.centred - self.null_mean) / math.sqrt(self.var_sum)
        valid = self.pairs >= MIN_PAIRS
        return TestResult(
            "serial_correlation",
            z,
            None,
            normal_two_sided(z),
            self.pairs,
            valid,
            "" if valid else f"fewer than {MIN_PAIRS} successive pairs",
        )


def weighted_holm(p_values: Sequence[float], weights: Sequence[float]) -> list[float]:
    """Holm's step-down with weights (Holm 1979, §5): ``alpha`` is shared among the tests in
    proportion to ``weights``; the family-wise error stays at most ``alpha`` under any
    dependence. Test ``i`` is rejected at step ``j`` when ``p_i ≤ alpha · w_i / W_j``, ``W_j``
    the weight of the tests not yet rejected; the adjusted p-value is the running maximum of
    ``p_i · W_j / w_i``. Equal weights give :func:`holm`.

    >>> [round(p, 6) for p in weighted_holm([0.004, 0.02], [0.8, 0.2])]
    [0.005, 0.02]
    """
    if len(p_values) != len(weights) or any(w <= 0 for w in weights):
        raise ValueError("one positive weight per p-value")
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i] / weights[i])
    remaining = float(sum(weights))
    adjusted = [1.0] * m
    running = 0.0
    for i in order:
        running = max(running, min(1.0, p_values[i] * remaining / weights[i]))
        adjusted[i] = running
        remaining -= weights[i]
    return adjusted


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given (each at most 1, and monotone in
    the order of the raw p-values)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
