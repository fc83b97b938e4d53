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

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from kgrank.errors import KgrankInputError

CLOSED_FORM = "closed form"
EXACT_SUM = "exact sum"
ORDER_STATISTICS = "exact (order statistics)"
DELTA_METHOD = "delta method (2nd order)"
SAMPLING = "sampling"


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

    Computed as log1p(mean_{k<=N} expm1(s ln k)), one running sum over k serving every N.
    The textbook form logsumexp_{k<=N}(s ln k) - ln N gets the small result of a small s
    (GMR's s = 1/n) as the difference of two numbers near ln N and keeps about six
    correct digits of the GMR variance at FB15k-237's size (relative error 9e-6 against
    50-digit arithmetic); every expm1(s ln k) has the sign of s, so this sum has no
    cancellation (:func:`log_expected_powers` does the same per task exponent).
    """
    support = np.arange(1, values.max() + 1, dtype=float)
    running = np.cumsum(np.expm1(exponent * np.log(support)))
    return np.log1p(running[values - 1] / values)


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


def rank_variance_moments(num_candidates: np.ndarray) -> Moments:
    """Exact E and Var of the population variance V = (1/n) sum r_i^2 - (mean r)^2.

    V is a polynomial of degree 4 in independent ranks, so its moments follow from the
    first four moments of each r_i; no library has them for non-identical variables, so
    they are written here. V is shift-invariant, so the ranks are centred at the mean of
    all E[r_i] first (y_i = r_i - c), which keeps the fourth powers near the answer's own
    scale. With A = (1/n) sum y_i^2, S = sum y_i and B = S^2 / n^2, V = A - B and
    Var V = Var A + Var B - 2 Cov(A, B); E[S^4] comes from the cumulants of S (sums of
    the tasks' cumulants) and E[y_i^2 S^2] from splitting S = y_i + (S - y_i).
    """
    values, counts = task_counts(num_candidates)
    n = counts.sum()
    size = values.astype(float)
    # Central moments of the discrete uniform on 1..N (symmetric: the third is zero).
    variance = (size**2 - 1.0) / 12.0
    fourth_central = (size**2 - 1.0) * (3.0 * size**2 - 7.0) / 240.0
    offset = (size + 1.0) / 2.0
    offset = offset - (counts * offset).sum() / n
    # Raw moments of y_i = r_i - c.
    m1 = offset
    m2 = variance + offset**2
    m3 = 3.0 * offset * variance + offset**3
    m4 = fourth_central + 6.0 * offset**2 * variance + offset**4

    total_mean = (counts * m1).sum()  # E[S]
    total_variance = (counts * variance).sum()  # Var[S]
    fourth_cumulant = (counts * (fourth_central - 3.0 * variance**2)).sum()
    second_of_sum = total_variance + total_mean**2
    # E[S^4] from the cumulants; the 4 k3 k1 term vanishes with every third central moment
    fourth_of_sum = (
        fourth_cumulant + 3.0 * total_variance**2 + 6.0 * total_variance * total_mean**2 + total_mean**4
    )
    # E[y_i^2 S^2] with T = S - y_i independent of y_i.
    rest_mean = total_mean - m1
    rest_second = (total_variance - variance) + rest_mean**2
    square_times_sum_square = m4 + 2.0 * m3 * rest_mean + m2 * rest_second

    mean_square = (counts * m2).sum() / n  # E[A]
    expectation = mean_square - second_of_sum / n**2
    var_a = (counts * (m4 - m2**2)).sum() / n**2
    var_b = (fourth_of_sum - second_of_sum**2) / n**4
    cov_ab = ((counts * square_times_sum_square).sum() / n**3) - mean_square * second_of_sum / n**2
    return Moments(float(expectation), float(max(var_a + var_b - 2.0 * cov_ab, 0.0)), CLOSED_FORM)


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
    from scipy import stats  # 1 s to import; most steps that use this module never get here

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


# A normal-consistent MAD divides by the normal distribution's third quartile, as
# scipy.stats.median_abs_deviation(scale="normal") and PyKEEN do (ndtri: bit for bit
# stats.norm.ppf). Dividing (kgrank.evaluation.metrics) and multiplying by the inverse (here) round
# differently; each keeps the form whose values the tests pin.
NORMAL_THIRD_QUARTILE = float(special.ndtri(0.75))
MAD_NORMAL_SCALE = 1.0 / NORMAL_THIRD_QUARTILE


def median_and_deviation(ranks: np.ndarray) -> np.ndarray:
    """Median and (unscaled) median absolute deviation of each row of integer-valued ranks.

    The same values as np.median and scipy.stats.median_abs_deviation, from one sorted
    copy of each row and one of its doubled deviations |2 r - (sum of the two middle
    values)|, as integers: numpy sorts those with its vectorised integer sort, faster
    than both the two float selections (np.partition) that np.median and the MAD make
    (3 to 5 times for rows of 30 to 3,000 ranks among 14,505 candidates) and a cumulative
    histogram per row (1.4 times for FB15k-237's 40,876 ranks, 3 to 6 times for WN18RR's
    3,134 and 6,268 among 40,943). Every value involved is an integer or a half, so the
    result is exact.
    """
    ranks = np.atleast_2d(ranks)
    length = ranks.shape[-1]
    # the j-th smallest value, for j = lower and upper middle position (equal for odd length)
    lower, upper = (length - 1) // 2, length // 2
    # 32 bits sort fastest; the doubled deviations must fit
    integers = ranks.astype(np.int32 if ranks.max() < 2**29 else np.int64)
    ordered = np.sort(integers, axis=-1)
    doubled = ordered[:, lower] + ordered[:, upper]  # the doubled median stays an integer
    deviations = np.abs(2 * integers - doubled[:, None])
    deviations.sort(axis=-1)
    return np.column_stack([doubled / 2.0, (deviations[:, lower] + deviations[:, upper]) / 4.0])


SAMPLING_REPLICATES = 2000


@dataclass(frozen=True)
class SamplingRequest:
    """Asks for the moments of ``then(statistic(ranks))`` by sampling.

    Requests for the same candidate counts are served together from one stream of
    replicate rank vectors, and requests naming the same ``statistic`` function (the
    median and MAD summary behind the median rank, its inverse and the MAD) compute it
    once per chunk.
    """

    statistic: Callable[[np.ndarray], np.ndarray]
    then: Callable[[np.ndarray], np.ndarray] | None = None


def sampled_moments_of_subsets(
    num_candidates: np.ndarray,
    requests: Mapping[Hashable, tuple[np.ndarray | slice | None, Mapping[str, SamplingRequest]]],
    *,
    replicates: int = SAMPLING_REPLICATES,
    seed: int = 0,
    chunk_elements: int = 4_000_000,
) -> dict[Hashable, dict[str, Moments]]:
    """Sampled moments for several subsets of one candidate-count vector, from one stream.

    ``requests`` maps a subset's name to (positions into ``num_candidates`` as an index
    array or a slice, or None for all of them; its requests by key). The head and tail
    sides of a rank table and the two together are such subsets: one draw of each
    replicate rank vector serves all three, since a replicate of one side is the same
    draw restricted to its positions.
    Drawn in chunks so that memory stays bounded whatever the number of tasks.
    """
    num_candidates = np.asarray(num_candidates, dtype=float)
    generator = np.random.default_rng(seed)
    chunk = max(1, chunk_elements // max(1, len(num_candidates)))
    values: dict[tuple[Hashable, str], list[np.ndarray]] = {
        (subset, key): [] for subset, (_, keyed) in requests.items() for key in keyed
    }
    for start in range(0, replicates, chunk):
        ranks = sample_ranks(generator, num_candidates, min(chunk, replicates - start))
        for subset, (positions, keyed) in requests.items():
            columns = ranks if positions is None else ranks[:, positions]
            computed: dict[Callable, np.ndarray] = {}
            for key, request in keyed.items():
                if request.statistic not in computed:
                    computed[request.statistic] = np.atleast_1d(request.statistic(columns))
                statistic = computed[request.statistic]
                values[subset, key].append(statistic if request.then is None else request.then(statistic))
    result: dict[Hashable, dict[str, Moments]] = {subset: {} for subset in requests}
    for (subset, key), parts in values.items():
        mean, variance = sample_mean_variance(np.concatenate(parts))
        result[subset][key] = Moments(
            mean.estimate,
            variance.estimate,
            f"{SAMPLING} (R={replicates}, s.e. of mean {mean.error:.2g})",
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


def compare_with_simulation(
    key: str, moments: Moments, sample: np.ndarray, *, tests: int, alpha: float
) -> dict[str, object]:
    """One row of a Monte Carlo check: the analytic moments of metric ``key`` against its
    values on R replicate rank vectors of the random model. A z statistic of the simulated
    mean; the ratio of simulated to analytic variance with its standard error (both errors
    of a sampled analytic value included); ``tests`` (two per metric) and ``alpha`` decide
    the degenerate case below. Verdicts come from :func:`apply_familywise` on the rows."""
    replicates = len(sample)
    mean, variance = sample_mean_variance(sample)
    if moments.variance > 0:
        z_mean = (mean.estimate - moments.expectation) / np.sqrt(
            moments.variance / replicates + moments.expectation_error**2
        )
        ratio = variance.estimate / moments.variance
        ratio_error = np.hypot(variance.error, moments.variance_error) / moments.variance
        if ratio_error > 0:
            z_variance = (ratio - 1.0) / ratio_error
        else:
            # No variation in R replicates: consistent while the analytic variance (about
            # the probability of leaving the mode, as for the minimum rank) is too small to
            # expect any, i.e. exp(-R * Var) is not below alpha per test.
            z_variance = 0.0 if replicates * moments.variance < -np.log(alpha / tests) else np.inf
    else:  # a constant (a count; a weighted mean of one-candidate tasks): reproduced exactly
        exact = variance.estimate == 0 and mean.estimate == moments.expectation
        z_mean, ratio, ratio_error, z_variance = (0.0 if exact else np.inf), np.nan, np.nan, 0.0
    return {
        "metric": key,
        "method": moments.method,
        "expectation": moments.expectation,
        "simulated_mean": mean.estimate,
        "z_mean": z_mean,
        "variance": moments.variance,
        "simulated_variance": variance.estimate,
        "variance_ratio": ratio,
        "variance_ratio_error": ratio_error,
        "z_variance": z_variance,
        "replicates": replicates,
    }


def apply_familywise(table: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Verdicts at family-wise level ``alpha`` over every test in ``table`` (two per row:
    mean and variance), Bonferroni-corrected; call it again on a concatenation of
    several checks (e.g. all sides of a dataset) to make them one family."""
    critical = -special.ndtri(alpha / (2 * len(table)) / 2)  # bit for bit stats.norm.isf
    return table.assign(
        ratio_ci_low=table["variance_ratio"] - critical * table["variance_ratio_error"],
        ratio_ci_high=table["variance_ratio"] + critical * table["variance_ratio_error"],
        passed=(table["z_mean"].abs() < critical) & (table["z_variance"].abs() < critical),
        familywise_alpha=alpha,
        critical_z=critical,
    )


def best_rank_moments(
    transform: Callable[[np.ndarray], np.ndarray], num_other: np.ndarray, num_relevant: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per task, E[f(K)] and E[f(K)^2] of the best rank K of ``num_relevant`` (R) relevant
    items among ``num_other`` (M) other items in uniformly random order (see
    :func:`best_rank_moments_of`)."""
    return best_rank_moments_of([transform], num_other, num_relevant)[0]


def best_rank_moments_of(
    transforms: Sequence[Callable[[np.ndarray], np.ndarray]], num_other: np.ndarray, num_relevant: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`best_rank_moments` of each of ``transforms``, the distribution of K computed
    once for all of them (it is most of the cost: an IR item table asks for twelve metrics).

    K is the position of the first relevant item: P(K >= k) = prod_{j<k-1} (M - j) / (M + R - j)
    for k = 1..M+1, and P(K = k) = P(K >= k) R / (M + R - k + 1). In log space the
    survival is a ratio of falling factorials, i.e. of gamma functions:
    log P(K >= k) = lnG(M+1) - lnG(M-k+2) - lnG(M+R+1) + lnG(M+R-k+2). scipy has no
    distribution for this (it is a negative hypergeometric in the number of failures
    before the first success, absent from scipy.stats), so it is summed here. Tasks are
    grouped by distinct (M, R) pairs and summed over a padded support in chunks, so that
    ~20k queries among ~15k candidates take seconds. With R = 1, K is uniform on 1..M+1.
    """
    num_other = np.asarray(num_other, dtype=np.int64)
    num_relevant = np.asarray(num_relevant, dtype=np.int64)
    if num_other.shape != num_relevant.shape:
        raise ValueError("num_other and num_relevant must have the same shape")
    if num_other.size and (num_other.min() < 0 or num_relevant.min() < 1):
        raise ValueError("need num_other >= 0 and num_relevant >= 1 for every task")
    pairs, inverse = np.unique(
        np.stack([num_other.ravel(), num_relevant.ravel()], axis=1), axis=0, return_inverse=True
    )
    firsts = [np.empty(len(pairs)) for _ in transforms]
    seconds = [np.empty(len(pairs)) for _ in transforms]
    if len(pairs):
        support_size = int(pairs[:, 0].max()) + 1
        support = np.arange(1, support_size + 1, dtype=float)
        values_of = [transform(support).astype(float) for transform in transforms]
        chunk = max(1, 4_000_000 // support_size)
        for start in range(0, len(pairs), chunk):
            other = pairs[start : start + chunk, 0].astype(float)[:, None]
            relevant = pairs[start : start + chunk, 1].astype(float)[:, None]
            inside = support[None, :] <= other + 1.0
            # clipped to 1 outside the support, where the probability is set to zero below
            after_other = np.where(inside, other - support + 2.0, 1.0)
            remaining = np.where(inside, other + relevant - support + 1.0, 1.0)
            log_survival = (
                special.gammaln(other + 1.0)
                - special.gammaln(after_other)
                - special.gammaln(other + relevant + 1.0)
                + special.gammaln(remaining + 1.0)
            )
            log_probability = log_survival + np.log(relevant) - np.log(remaining)
            probability = np.where(inside, np.exp(log_probability), 0.0)
            for first, second, values in zip(firsts, seconds, values_of, strict=True):
                first[start : start + chunk] = probability @ values
                second[start : start + chunk] = probability @ (values * values)
    inverse = inverse.reshape(num_other.shape)
    return [(first[inverse], second[inverse]) for first, second in zip(firsts, seconds, strict=True)]


def log_expected_powers(
    num_candidates: np.ndarray | Sequence[int],
    exponents: np.ndarray | Sequence[float],
    *,
    chunk_elements: int = 4_000_000,
) -> np.ndarray:
    """log E[r_i^(s_i)] for r_i uniform on 1..N_i, element-wise over tasks (exact sums), in
    :func:`log_expected_power`'s cancellation-free form. For a weighted mean's small
    exponents (s ~ 1/n) the logsumexp form kept only ~6 correct digits of the variance at
    FB15k-237's size (relative error 6.5e-7 against 50-digit arithmetic; this form:
    1.4e-11; tests/test_weighted.py checks it on a smaller case); |s| <= 2 keeps it far
    from overflow (E[r^2] <= N^2). Each distinct (N, s) pair is one row; the pairs are
    sorted by N and summed in chunks of at most ``chunk_elements`` terms. With one exponent
    for all tasks :func:`log_expected_power` is cheaper (a running sum serves every N).
    """
    sizes = np.asarray(num_candidates, dtype=np.int64).reshape(-1)
    powers = np.asarray(exponents, dtype=float).reshape(-1)
    if sizes.shape != powers.shape:
        raise KgrankInputError(
            f"exponents: {powers.size} exponents for {sizes.size} candidate counts; give one per task"
        )
    if sizes.size == 0:
        return np.empty(0)
    if sizes.min() < 1:
        raise KgrankInputError(
            f"num_candidates: {sizes.min()} is not at least 1; recompute the candidate counts"
        )
    if np.abs(powers).max() > 2:
        raise KgrankInputError(f"exponents: {np.abs(powers).max()} exceeds 2 in size; normalise the weights")
    pairs, inverse = np.unique(np.column_stack([sizes, powers]), axis=0, return_inverse=True)
    pair_sizes, pair_powers = pairs[:, 0].astype(np.int64), pairs[:, 1]
    result = np.empty(len(pairs))
    start = 0
    while start < len(pairs):
        # sizes ascend, so a chunk's widest row is its last: take rows while rows * width fits
        widths = pair_sizes[start:] * np.arange(1, len(pairs) - start + 1)
        stop = start + max(1, int(np.searchsorted(widths, chunk_elements, side="right")))
        support = np.arange(1, pair_sizes[stop - 1] + 1)
        inside = support[None, :] <= pair_sizes[start:stop, None]
        terms = np.where(inside, np.expm1(pair_powers[start:stop, None] * np.log(support)[None, :]), 0.0)
        result[start:stop] = np.log1p(terms.sum(axis=1) / pair_sizes[start:stop])
        start = stop
    return result[inverse.reshape(-1)]


def product_of_task_powers(
    num_candidates: np.ndarray | Sequence[int], exponents: np.ndarray | Sequence[float]
) -> Moments:
    """Exact E and Var of X = prod_i r_i^(s_i), r_i independent and uniform on 1..N_i.

    E[X] = prod_i E[r_i^(s_i)] and E[X^2] = prod_i E[r_i^(2 s_i)]; the variance is
    E[X]^2 expm1(sum_i [log E[r_i^(2 s_i)] - 2 log E[r_i^(s_i)]]), each bracket a small
    nonnegative number (Jensen) summed before the one cancellation-free expm1.
    """
    exponents = np.asarray(exponents, dtype=float)
    first = log_expected_powers(num_candidates, exponents)
    second = log_expected_powers(num_candidates, 2.0 * exponents)
    expectation = float(np.exp(first.sum()))
    variance = expectation**2 * float(np.expm1(np.sum(second - 2.0 * first)))
    return Moments(expectation, max(variance, 0.0), CLOSED_FORM)
