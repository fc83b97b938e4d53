"""Confidence intervals of a model's metric: the sampling uncertainty of the value that
a finite test set gives, over its test tasks.

This is not the random model's variance (:mod:`kgrank.evaluation.moments`), which the z-score
divides by; it is how far the metric of the same model would move on another test set
drawn like this one. The candidate counts are held at the test set's own, so the
interval of a derived variant (adjusted index, z-score) is the affine image of the
base metric's interval.

One method per kind of statistic, named by the metric itself (``Metric.interval_method``,
one of :data:`METHODS` or ``none: <why>``) and in the output's ``ci_method``:

- Hits@k is a binomial proportion: Wilson's score interval (scipy.stats.binomtest).
- Any other power mean M_p(f) is a monotone function of the arithmetic mean of f^p (of
  log f for p = 0): the normal (central-limit) interval of that mean, mapped through the
  function, from 30 tasks on.
- The median: the distribution-free interval from order statistics
  (scipy.stats.quantile_test).
- Variance and standard deviation: the normal interval of the log of the sample variance
  (standard error sqrt((kurtosis - 1) / n)), from 30 tasks on.
- The MAD, and everything else below 30 tasks: a bootstrap (scipy.stats.bootstrap), BCa
  below 30 tasks and percentile above, where BCa's jackknife would cost a metric per
  task. Its cost grows with tasks x resamples (5 s for 1,000 resamples of 40,876 ranks),
  so the resamples are capped at 10 million resampled ranks (244 for FB15k-237's test
  set), never below 200; the count used is in ``ci_method``. (Holding the median fixed
  and taking the order-statistics interval of |r - median| covered 83 % instead of 95 %
  on a skewed rank law; the bootstrap does not need that approximation.)
- Count, maximum and minimum have none (a count is fixed; the bootstrap of an extreme
  order statistic does not cover).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import stats as scipy_stats

from kgrank.defaults import DEFAULT_CONFIDENCE
from kgrank.evaluation.stats import bootstrap_batch, bootstrap_interval, seed_sequence

if TYPE_CHECKING:
    from kgrank.evaluation.metrics import Metric

# The methods a metric names (Metric.interval_method) besides "none: <why>" (module docstring).
METHODS = ("normal", "wilson", "order statistics", "log variance", "bootstrap")
DEFAULT_RESAMPLES = 1000
# The central-limit interval is used from this many tasks on; below, the bootstrap.
MIN_NORMAL_TASKS = 30
# The bootstrap's cost bound (module docstring).
MAX_RESAMPLED_RANKS = 10_000_000
MIN_RESAMPLES = 200


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    method: str


def _none(reason: str) -> Interval:
    return Interval(float("nan"), float("nan"), f"none ({reason})")


def _resampled_interval(
    metric: Metric, ranks: np.ndarray, confidence: float, resamples: int, seed: int | Sequence[int | str]
) -> Interval:
    def statistic(sample: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.asarray(metric.value(np.moveaxis(sample, axis, -1)))

    # BCa corrects the percentile interval's bias and skew at small sizes; its jackknife
    # costs a metric evaluation per task, so large samples take the percentile interval.
    method = "BCa" if len(ranks) < MIN_NORMAL_TASKS else "percentile"
    low, high = bootstrap_interval(
        (ranks,),
        statistic,
        method=method,
        confidence=confidence,
        resamples=resamples,
        seed=seed_sequence(seed, metric.key),
        batch=bootstrap_batch(len(ranks)),
    )
    return Interval(low, high, f"{method} bootstrap (R={resamples})")


def task_values(metric: Metric, ranks: np.ndarray) -> np.ndarray:
    """The per-task values whose arithmetic mean is a strictly monotone function of
    ``metric`` (:func:`from_task_mean`): f(r)^p, or log f(r) for p = 0."""
    return _powered(metric, metric.transform.function(np.asarray(ranks, dtype=float)))


def _powered(metric: Metric, transformed: np.ndarray) -> np.ndarray:
    """:func:`task_values` of ranks whose f(r) is already ``transformed``."""
    if metric.power == 0:
        return np.log(transformed)
    if metric.power == 1:
        return np.asarray(transformed, dtype=float)
    return transformed**metric.power


def from_task_mean(metric: Metric, mean: np.ndarray | float) -> np.ndarray | float:
    """The metric from the mean of its per-task values: g(mean^(1/p)), g(exp(mean)) for
    p = 0 (element-wise)."""
    mean = np.asarray(mean, dtype=float)
    if metric.power == 0:
        aggregated = np.exp(mean)
    elif metric.power == 1:
        aggregated = mean
    else:
        aggregated = mean ** (1.0 / metric.power)
    with np.errstate(divide="ignore"):
        return 1.0 / aggregated if metric.post == "reciprocal" else aggregated


def _normal_power_mean(metric: Metric, transformed: np.ndarray, confidence: float) -> Interval:
    inner = _powered(metric, transformed)
    mean = inner.mean()
    half_width = scipy_stats.norm.ppf(0.5 + confidence / 2) * inner.std(ddof=1) / np.sqrt(len(inner))
    # the mean of f^p cannot leave the range of its values
    ends = np.clip([mean - half_width, mean + half_width], inner.min(), inner.max())
    low, high = sorted(float(end) for end in from_task_mean(metric, ends))
    return Interval(low, high, "normal (central limit)")


def _normal_variance(metric: Metric, transformed: np.ndarray, confidence: float) -> Interval:
    # The (biased, ddof=0) sample variance as the registry reports it. The interval is
    # taken on log(variance), whose law is less skewed than the variance's (and whose
    # ends stay positive): its standard error is sqrt((kurtosis - 1) / n).
    deviations = transformed - transformed.mean()
    variance = np.mean(deviations**2)
    kurtosis = np.mean(deviations**4) / variance**2
    half_width = scipy_stats.norm.ppf(0.5 + confidence / 2) * np.sqrt(
        max(kurtosis - 1.0, 0.0) / len(deviations)
    )
    ends = variance * np.exp([-half_width, half_width])
    if metric.statistic == "std":
        ends = np.sqrt(ends)
    return Interval(float(ends[0]), float(ends[1]), "normal on log variance (central limit)")


def metric_interval(
    metric: Metric,
    ranks: np.ndarray,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int | Sequence[int | str] = 0,
) -> Interval:
    """The ``confidence`` interval of ``metric`` on ``ranks`` (one per test task) for the
    value of the same model on another test set of as many tasks (module docstring)."""
    ranks = np.asarray(ranks, dtype=float)
    method = metric.interval_method
    if method.startswith("none: "):
        return _none(method.removeprefix("none: "))
    if method not in METHODS:
        raise ValueError(f"metric {metric.key}: interval method {method!r} is not one of {METHODS}")
    if len(ranks) < 2:
        return _none("fewer than two tasks")
    transformed = metric.transform.function(ranks)
    if method == "wilson":
        # no hit (or only hits) in the sample still leaves a proportion to bound
        successes = int(transformed.sum())
        interval = scipy_stats.binomtest(successes, len(ranks)).proportion_ci(
            confidence_level=confidence, method="wilson"
        )
        return Interval(float(interval.low), float(interval.high), "Wilson score (binomial)")
    if np.ptp(transformed) == 0:
        value = float(metric.value(ranks))
        return Interval(value, value, "none needed (every task alike)")
    if method == "normal" and len(ranks) >= MIN_NORMAL_TASKS:
        return _normal_power_mean(metric, transformed, confidence)
    if method == "log variance" and len(ranks) >= MIN_NORMAL_TASKS:
        return _normal_variance(metric, transformed, confidence)
    if method == "order statistics":
        bounds = scipy_stats.quantile_test(
            transformed, q=float(np.median(transformed)), p=0.5
        ).confidence_interval(confidence_level=confidence)
        ends = np.array([bounds.low, bounds.high], dtype=float)
        if np.isfinite(ends).all():
            if metric.post == "reciprocal":
                ends = 1.0 / ends
            low, high = sorted(float(end) for end in ends)
            return Interval(low, high, "order statistics (binomial)")
    capped = min(resamples, max(MIN_RESAMPLES, MAX_RESAMPLED_RANKS // len(ranks)))
    return _resampled_interval(metric, ranks, confidence, capped, seed)
