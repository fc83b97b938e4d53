"""Moments of rank-based metrics under the random model, each with the name of its method.

The random model: ranks are independent and r_i is uniform on {1, ..., N_i}, N_i being
task i's candidate count. Every function takes the vector of N_i, so a constant N is
the special case of a constant vector and never needs a formula of its own.

Methods, from exact to approximate:

- ``closed form``: a formula in the N_i (harmonic numbers, products of E[r^s]).
- ``exact sum``: a finite sum over 1..N_i per task, computed exactly.
- ``exact (order statistics)``: the distribution of the max/min/median of the ranks.
- ``delta method``: a second-order Taylor expansion of g(X) around E[X], where the
  moments of X are exact; its error is checked against simulation by the Monte Carlo
  rule.
- ``sampling``: the mean and variance over replicate rank vectors drawn from the
  random model, with the standard error of the mean stated in the method.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

CLOSED_FORM = "closed form"
EXACT_SUM = "exact sum"
ORDER_STATISTICS = "exact (order statistics)"
DELTA_METHOD = "delta method (2nd order)"


@dataclass(frozen=True)
class Moments:
    """Expectation and variance, the method that gave them and, for sampled values,
    their standard errors (zero for every exact or deterministic method)."""

    expectation: float
    variance: float
    method: str
    expectation_error: float = 0.0
    variance_error: float = 0.0


def harmonic_number(n: np.ndarray, order: float = 1) -> np.ndarray:
    """Generalised harmonic number H_n^(order) = sum_{k=1}^{n} k^-order, for arrays of n."""
    n = np.asarray(n, dtype=float)
    if order == 1:
        return special.digamma(n + 1.0) + np.euler_gamma
    # The Hurwitz zeta of the tail: sum_{k>=1} k^-s minus sum_{k>=n+1} k^-s.
    return special.zeta(order, 1.0) - special.zeta(order, n + 1.0)


def task_counts(num_candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct N_i and how many tasks have each: all moments depend on this only."""
    return np.unique(np.asarray(num_candidates, dtype=np.int64), return_counts=True)


def mean_of_transform(
    num_candidates: np.ndarray,
    task_first_second: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    method: str,
) -> Moments:
    """E and Var of (1/n) sum_i f(r_i) from the per-task E_i[f] and E_i[f^2]."""
    values, counts = task_counts(num_candidates)
    first, second = task_first_second(values)
    n = counts.sum()
    task_variance = np.maximum(second - first * first, 0.0)
    return Moments(float((counts * first).sum() / n), float((counts * task_variance).sum() / n**2), method)


def finite_sum_moments(transform: Callable[[np.ndarray], np.ndarray]) -> Callable:
    """Per-task E_i[f], E_i[f^2] by summing f over 1..N_i (cumulative sums up to max N)."""

    def first_second(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        support = np.arange(1, values.max() + 1, dtype=float)
        transformed = transform(support)
        first = np.cumsum(transformed)[values - 1] / values
        second = np.cumsum(transformed * transformed)[values - 1] / values
        return first, second

    return first_second


def log_expected_power(values: np.ndarray, exponent: float) -> np.ndarray:
    """log E[r^s] for r uniform on 1..N, for each N in ``values`` (Eq. 24 of the paper).

    log E[r^s] = -log N + logsumexp_{k<=N}(s log k); the running logsumexp over k gives
    every N at once, which scipy's logsumexp (one reduction per call) cannot.
    """
    support = np.arange(1, values.max() + 1, dtype=float)
    running = np.logaddexp.accumulate(exponent * np.log(support))
    return running[values - 1] - np.log(values)


def product_of_powers(num_candidates: np.ndarray, exponent_per_task: float) -> Moments:
    """E and Var of prod_i r_i^s with s = ``exponent_per_task`` (GMR: s = 1/n, IGMR: -1/n).

    Independence makes the expectation a product of per-task expectations,
    E = prod_i E[r_i^s], and E[X^2] = prod_i E[r_i^(2s)]; both in log space.
    """
    values, counts = task_counts(num_candidates)
    log_first = float((counts * log_expected_power(values, exponent_per_task)).sum())
    log_second = float((counts * log_expected_power(values, 2 * exponent_per_task)).sum())
    expectation = np.exp(log_first)
    # Var = E[X^2] - E[X]^2 = E[X]^2 (exp(log_second - 2 log_first) - 1), stable when tiny.
    variance = expectation**2 * np.expm1(log_second - 2 * log_first)
    return Moments(float(expectation), float(max(variance, 0.0)), CLOSED_FORM)


# The delta method's variance keeps only g'(mu)^2 var; for g = 1/x the neglected terms
# are about 8 cv^2 relative (cv: coefficient of variation of X), several percent at
# cv = 0.1 (IMR of 35 ranks among 1,000 candidates: 8.6 % too low). At cv <= 0.025 they
# stay near 0.5 %; beyond it the statistic is sampled. The Monte Carlo rule checks both.
DELTA_MAX_CV = 0.025


def delta_method(
    inner: Moments,
    function: Callable,
    first: Callable,
    second: Callable,
    *,
    num_candidates: np.ndarray,
    statistic: Callable[[np.ndarray], np.ndarray],
) -> Moments | SamplingRequest:
    """Moments of g(X) from exact moments of X: E ~ g(mu) + g''(mu) var / 2, Var ~ g'(mu)^2 var.

    Where X varies too much for the expansion (cv > DELTA_MAX_CV, e.g. the harmonic mean
    rank of few ranks among many candidates), ``statistic`` is sampled instead.
    """
    mu, var = inner.expectation, inner.variance
    if mu == 0 or np.sqrt(var) / abs(mu) > DELTA_MAX_CV:
        return SamplingRequest(statistic)
    return Moments(
        float(function(mu) + 0.5 * second(mu) * var),
        float(first(mu) ** 2 * var),
        f"{DELTA_METHOD} on {inner.method}",
    )


def maximum_moments(num_candidates: np.ndarray) -> Moments:
    """Exact E and Var of max_i r_i: P(max <= m) = prod_i min(m, N_i) / N_i.

    Only tasks with N_i > m contribute a factor m / N_i, so with suffix sums over the
    sorted distinct N the log-CDF of every m costs O(1): C(m) log m - L(m), where
    C(m) and L(m) sum the counts and count * log N over N > m.
    """
    values, counts = task_counts(num_candidates)
    support = np.arange(1, values.max() + 1)
    suffix_counts = np.concatenate([np.cumsum(counts[::-1])[::-1], [0]])
    suffix_logs = np.concatenate([np.cumsum((counts * np.log(values))[::-1])[::-1], [0.0]])
    first_larger = np.searchsorted(values, support, side="right")
    log_cdf = suffix_counts[first_larger] * np.log(support) - suffix_logs[first_larger]
    survival = -np.expm1(np.concatenate([[-np.inf], log_cdf[:-1]]))  # P(max >= m)
    expectation = survival.sum()
    second = ((2 * support - 1) * survival).sum()
    return Moments(float(expectation), float(max(second - expectation**2, 0.0)), ORDER_STATISTICS)


def minimum_moments(num_candidates: np.ndarray) -> Moments:
    """Exact E and Var of min_i r_i: P(min >= m) = prod_i max(N_i - m + 1, 0) / N_i."""
    values, counts = task_counts(num_candidates)
    support = np.arange(1, values.min() + 1, dtype=float)  # min <= smallest N
    remaining = (values[None, :] - support[:, None] + 1) / values[None, :]
    survival = np.exp((counts[None, :] * np.log(remaining)).sum(axis=1))
    expectation = survival.sum()
    second = ((2 * support - 1) * survival).sum()
    return Moments(float(expectation), float(max(second - expectation**2, 0.0)), ORDER_STATISTICS)


def median_moments_iid(num_candidates: int, n: int, transform: Callable = lambda x: x) -> Moments:
    """Exact E and Var of the sample median of n i.i.d. ranks uniform on 1..N, n odd.

    The median is the order statistic X_(k), k = (n+1)/2, with
    P(X_(k) <= m) = P(Binomial(n, m/N) >= k).
    """
    if n % 2 == 0:
        raise ValueError("the exact median needs an odd number of ranks")
    support = np.arange(1, num_candidates + 1, dtype=float)
    cdf = stats.binom.sf((n + 1) // 2 - 1, n, support / num_candidates)
    probability = np.diff(np.concatenate([[0.0], cdf]))
    values = transform(support)
    expectation = float((probability * values).sum())
    return Moments(
        expectation, float(max((probability * values**2).sum() - expectation**2, 0.0)), ORDER_STATISTICS
    )


def sample_ranks(generator: np.random.Generator, num_candidates: np.ndarray, replicates: int) -> np.ndarray:
    """``replicates`` rank vectors of the random model, shape (replicates, n), as floats."""
    return np.floor(generator.random((replicates, len(num_candidates))) * num_candidates) + 1.0


SAMPLING_REPLICATES = 2000


@dataclass(frozen=True)
class SamplingRequest:
    """Asks for the moments of ``statistic`` by sampling; requests for the same candidate
    counts are served together from one stream of replicate rank vectors."""

    statistic: Callable[[np.ndarray], np.ndarray]


def sampled_moments_many(
    num_candidates: np.ndarray,
    statistics: Mapping[str, Callable[[np.ndarray], np.ndarray]],
    *,
    replicates: int = SAMPLING_REPLICATES,
    seed: int = 0,
    chunk_elements: int = 4_000_000,
) -> dict[str, Moments]:
    """Mean and variance of each statistic (applied to each row) over simulated rank vectors.

    One stream of replicates, drawn in chunks so that memory stays bounded whatever the
    number of tasks, serves every statistic.
    """
    num_candidates = np.asarray(num_candidates, dtype=float)
    generator = np.random.default_rng(seed)
    chunk = max(1, chunk_elements // max(1, len(num_candidates)))
    values: dict[str, list[np.ndarray]] = {key: [] for key in statistics}
    for start in range(0, replicates, chunk):
        ranks = sample_ranks(generator, num_candidates, min(chunk, replicates - start))
        for key, statistic in statistics.items():
            values[key].append(np.atleast_1d(statistic(ranks)))
    result = {}
    for key, parts in values.items():
        mean, variance = sample_mean_variance(np.concatenate(parts))
        result[key] = Moments(
            mean.estimate,
            variance.estimate,
            f"sampling (R={replicates}, s.e. of mean {mean.error:.2g})",
            expectation_error=mean.error,
            variance_error=variance.error,
        )
    return result


@dataclass(frozen=True)
class Estimate:
    estimate: float
    error: float


def sample_mean_variance(sample: np.ndarray) -> tuple[Estimate, Estimate]:
    """Sample mean and variance with their standard errors; the variance's from the fourth
    central moment, because many metrics are far from normal."""
    replicates = len(sample)
    centred = sample - sample.mean()
    second = np.mean(centred**2)
    fourth = np.mean(centred**4)
    variance = float(sample.var(ddof=1))
    return (
        Estimate(float(sample.mean()), float(np.sqrt(variance / replicates))),
        Estimate(variance, float(np.sqrt(max(fourth - second**2, 0.0) / replicates))),
    )
