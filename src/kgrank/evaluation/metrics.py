"""The metric registry: every rank-based metric as g(M_p(f(r_1), ..., f(r_n))).

f is a rank transformation (r, 1/r, 1[r <= k], r^-a, ln 2 / ln(1 + r)), M_p the power
(Hölder) mean (p = 1 arithmetic, 0 geometric, -1 harmonic, 2 quadratic, +-inf max and
min) and g a post-transformation (identity or reciprocal). Dispersion statistics
(standard deviation, variance, MAD), the median and the count are registered alongside.

Each metric carries its optimum, direction and range, and a function giving its
expectation and variance under the random model with the name of the method
(see ``kgrank.evaluation.moments``). Derived variants are affine maps of the base value:

    expectation-normalised  M / E[M]                       (AMR, ...)
    adjusted index          (M - E[M]) / (optimum - E[M])  (AMRI, AMRR, AH@k, AGMRI, ...)
    z-score                 ±(M - E[M]) / sqrt(Var[M])     (ZMR, ZMRR, ZH@k, ZGMR, ...)

The z-score's sign follows PyKEEN: flipped for metrics where lower is better, so a
larger z is always better. Keys follow PyKEEN where PyKEEN has the metric.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from fractions import Fraction
from functools import cache
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from kgrank.data.rank_table import RANK_COLUMNS, SIDES_AND_BOTH, select_side
from kgrank.defaults import DEFAULT_HITS
from kgrank.errors import KgrankInputError
from kgrank.evaluation import moments as mom
from kgrank.evaluation.moments import Moments

if TYPE_CHECKING:
    from kgrank.evaluation.intervals import Interval

LESS_TOP_HEAVY_POWERS = (Fraction(1, 4), Fraction(1, 3), Fraction(1, 2), Fraction(2, 3), Fraction(3, 4))


class Variant(StrEnum):
    """The derived variants of a metric; the value is the name tables and figures print."""

    NORMALISED = "expectation-normalised"
    INDEX = "adjusted index"
    Z_SCORE = "z-score"

    @property
    def label(self) -> str:
        """The printed name (axis labels, table headers)."""
        return str(self)

    @property
    def column(self) -> str:
        """The name as a table column (``adjusted_index``, ``z_score`` ...)."""
        return self.value.replace("-", "_").replace(" ", "_")


@dataclass(frozen=True)
class DerivedValue:
    """One derived variant of a metric value, with its moments under the random model."""

    key: str
    value: float
    expectation: float
    variance: float


@dataclass(frozen=True, kw_only=True)
class Transform:
    """A rank transformation f with its text and its per-task moments under uniform ranks."""

    text: str
    function: Callable[[np.ndarray], np.ndarray]
    task_moments: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
    method: str


def _identity_moments(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = np.asarray(n, dtype=float)
    return (n + 1.0) / 2.0, (n + 1.0) * (2.0 * n + 1.0) / 6.0


def _reciprocal_moments(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = np.asarray(n, dtype=float)
    return mom.harmonic_number(n, 1) / n, mom.harmonic_number(n, 2) / n


IDENTITY = Transform(
    text="r", function=lambda ranks: ranks, task_moments=_identity_moments, method=mom.CLOSED_FORM
)
RECIPROCAL = Transform(
    text="1/r", function=lambda ranks: 1.0 / ranks, task_moments=_reciprocal_moments, method=mom.CLOSED_FORM
)


def indicator(k: int) -> Transform:
    def task_moments(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        probability = np.minimum(k, np.asarray(n, dtype=float)) / n
        return probability, probability  # an indicator equals its square

    return Transform(
        text=f"1[r <= {k}]",
        function=lambda ranks: (ranks <= k).astype(float),
        task_moments=task_moments,
        method=mom.CLOSED_FORM,
    )


def inverse_power(a: Fraction) -> Transform:
    function = lambda ranks: np.power(ranks, -float(a))  # noqa: E731
    return Transform(
        text=f"r^-{a}", function=function, task_moments=mom.finite_sum_moments(function), method=mom.EXACT_SUM
    )


def _log_discount(ranks: np.ndarray) -> np.ndarray:
    return np.log(2.0) / np.log1p(ranks)


LOG_DISCOUNT = Transform(
    text="ln 2 / ln(1 + r)",
    function=_log_discount,
    task_moments=mom.finite_sum_moments(_log_discount),
    method=mom.EXACT_SUM,
)


def power_mean(values: np.ndarray, p: float) -> np.ndarray:
    """Hölder mean along the last axis."""
    if p == 0:
        return np.exp(np.mean(np.log(values), axis=-1))
    if p == np.inf:
        return np.max(values, axis=-1)
    if p == -np.inf:
        return np.min(values, axis=-1)
    if p == 1:
        return np.mean(values, axis=-1)
    return np.mean(values**p, axis=-1) ** (1.0 / p)


def sorted_median(values: np.ndarray) -> np.ndarray:
    """np.median along the last axis, the same values (NaN for a row that holds one), from
    numpy's vectorised sort: 1.6 to 5 times faster than np.median's selection on rank
    vectors and replicate arrays of 31 to 40,876 ranks a row, where the median and the
    MAD were most of the Monte Carlo check's and the MAD bootstrap's cost."""
    values = np.asarray(values)
    if values.shape[-1] == 0:
        return np.median(values, axis=-1)  # NaN, with numpy's warning
    ordered = np.sort(values, axis=-1)
    middle = ordered.shape[-1] // 2
    if ordered.shape[-1] % 2:
        median = ordered[..., middle]
    else:
        median = (ordered[..., middle - 1] + ordered[..., middle]) / 2
    return np.where(np.isnan(ordered[..., -1]), np.nan, median)


def _mad(values: np.ndarray) -> np.ndarray:
    """scipy.stats.median_abs_deviation(values, axis=-1, scale="normal"), the same values,
    from :func:`sorted_median`. Scaled to estimate a normal standard deviation (x 1.4826),
    as PyKEEN reports it."""
    deviations = np.abs(values - sorted_median(values)[..., None])
    return sorted_median(deviations) / mom.NORMAL_THIRD_QUARTILE


@dataclass(frozen=True, kw_only=True)
class Metric:
    """One registered metric. ``statistic`` is "power mean" (with ``power``), "median",
    "std", "var", "mad" or "count"; ``post`` is "identity" or "reciprocal"."""

    key: str
    label: str
    transform: Transform
    statistic: str
    increasing: bool
    optimum: float | None
    value_range: tuple[float, float]
    moments_function: Callable[[np.ndarray], Moments | mom.SamplingRequest] | None
    power: float | None = None
    post: str = "identity"
    synonyms: tuple[str, ...] = ()
    parameters: dict[str, float] = field(default_factory=dict)
    # how kgrank.evaluation.intervals bounds the value over test sets like this one: one of
    # kgrank.evaluation.intervals.METHODS (normal, wilson, order statistics, log variance,
    # bootstrap), or "none: <why>"
    interval_method: str = "normal"
    # a metric whose value and moments need one weight per rank (kgrank.evaluation.weighted)
    weighted = False

    @property
    def has_derived(self) -> bool:
        """Adjusted and z-scored variants exist for quality metrics, not for dispersion or count."""
        return self.optimum is not None

    def value(self, ranks: np.ndarray) -> np.ndarray | float:
        """The metric of a rank vector, or of each row of a (replicates, n) array."""
        transformed = self.transform.function(np.asarray(ranks, dtype=float))
        if self.statistic == "power mean":
            aggregated = power_mean(transformed, self.power)
        elif self.statistic == "median":
            aggregated = sorted_median(transformed)
        elif self.statistic == "std":
            aggregated = np.std(transformed, axis=-1)
        elif self.statistic == "var":
            aggregated = np.var(transformed, axis=-1)
        elif self.statistic == "mad":
            aggregated = _mad(transformed)
        elif self.statistic == "count":
            aggregated = np.full(transformed.shape[:-1], float(transformed.shape[-1]))
        else:  # pragma: no cover - the registry defines only the statistics above
            raise ValueError(self.statistic)
        result = 1.0 / aggregated if self.post == "reciprocal" else aggregated
        return float(result) if np.ndim(result) == 0 else result

    def moments(self, num_candidates: np.ndarray) -> Moments:
        return moments_of([self], num_candidates)[self.key]

    def moments_method(self, num_candidates: np.ndarray) -> str:
        """The method :meth:`moments` would name, without its sample size: ``sampling``
        where it samples, which is decided here without drawing a replicate."""
        outcome = None if self.moments_function is None else self.moments_function(num_candidates)
        return mom.SAMPLING if outcome is None or isinstance(outcome, mom.SamplingRequest) else outcome.method

    @property
    def mean_text(self) -> str:
        if self.statistic != "power mean":
            return self.statistic
        return {np.inf: "max", -np.inf: "min"}.get(self.power, f"M_{self.power:g}")

    def variant_key(self, variant: Variant) -> str:
        """The key of a derived variant. PyKEEN's naming: for lower-is-better metrics
        `adjusted_<key>` is already the expectation-normalised variant (AMR), so their
        index takes an `_index` suffix."""
        if variant is Variant.NORMALISED:
            return f"expectation_normalized_{self.key}" if self.increasing else f"adjusted_{self.key}"
        if variant is Variant.INDEX:
            return f"adjusted_{self.key}" if self.increasing else f"adjusted_{self.key}_index"
        return f"z_{self.key}"


def moments_of(metrics: Sequence[Metric], num_candidates: np.ndarray) -> dict[str, Moments]:
    """Moments of several metrics for the same candidate counts; every metric that needs
    sampling is served by one shared stream of replicates."""
    return moments_of_subsets(metrics, num_candidates, {"all": None})["all"]


def moments_of_subsets(
    metrics: Sequence[Metric],
    num_candidates: np.ndarray,
    subsets: Mapping[Hashable, np.ndarray | slice | None],
) -> dict[Hashable, dict[str, Moments]]:
    """Moments of several metrics for several subsets of the tasks (positions into
    ``num_candidates``, None for all), e.g. the head side, the tail side and both. The
    metrics of every subset that need sampling share one stream of replicates."""
    num_candidates = np.asarray(num_candidates)
    results: dict[Hashable, dict[str, Moments]] = {}
    requests = {}
    for subset, positions in subsets.items():
        counts = num_candidates if positions is None else num_candidates[positions]
        results[subset] = {}
        keyed = {}
        for metric in metrics:
            # No moments function: the metric's own value is sampled under the random model.
            outcome = (
                mom.SamplingRequest(metric.value)
                if metric.moments_function is None
                else metric.moments_function(counts)
            )
            if isinstance(outcome, mom.SamplingRequest):
                keyed[metric.key] = outcome
            else:
                results[subset][metric.key] = outcome
        if keyed:
            requests[subset] = (positions, keyed)
    if requests:
        for subset, sampled in mom.sampled_moments_of_subsets(num_candidates, requests).items():
            results[subset].update(sampled)
    return results


# --- moments of the composite metrics --------------------------------------------------


def macro_mean_moments(metric: Metric, num_candidates: np.ndarray, query_index: np.ndarray) -> Moments:
    """E and Var under the random model of a macro average: the mean over queries of
    each query's mean of f(r) over its answers (one task per answer, ``query_index``
    naming its query). The micro average of :meth:`Metric.moments` weights queries by
    their number of answers; this one weights them equally. Ranks are independent and
    uniform on 1..N_i as everywhere, so the variance is the sum of the per-task
    variances, each divided by its query's squared answer count and by Q^2.
    """
    if metric.statistic != "power mean" or metric.power != 1.0 or metric.post != "identity":
        raise KgrankInputError(
            f"metric {metric.key}: a macro average is defined here for arithmetic means of a "
            "rank transform only (MR, MRR, Hits@k, mean r^-a, ...); choose one of those"
        )
    num_candidates = np.asarray(num_candidates, dtype=np.int64)
    if num_candidates.size == 0 or len(query_index) != num_candidates.size:
        raise KgrankInputError(
            f"metric {metric.key}: macro average of {num_candidates.size} tasks with "
            f"{len(query_index)} query ids; give one query id per task"
        )
    values, task_value = np.unique(num_candidates, return_inverse=True)
    first, second = metric.transform.task_moments(values)
    task_mean = first[task_value]
    task_variance = np.maximum(second - first * first, 0.0)[task_value]
    _, query, answers = np.unique(np.asarray(query_index), return_inverse=True, return_counts=True)
    query_mean = np.bincount(query, task_mean) / answers
    query_variance = np.bincount(query, task_variance) / answers.astype(float) ** 2
    num_queries = len(answers)
    return Moments(
        float(query_mean.mean()), float(query_variance.sum() / num_queries**2), metric.transform.method
    )


def _mean_moments(transform: Transform) -> Callable[[np.ndarray], Moments]:
    return lambda n: mom.mean_of_transform(n, transform.task_moments, transform.method)


def _reciprocal_of_mean(transform: Transform) -> Callable[[np.ndarray], Moments]:
    """1 / mean(f): IMR (f = r) and HMR (f = 1/r) have no closed form; delta method."""

    def moments(n: np.ndarray) -> Moments:
        inner = mom.mean_of_transform(n, transform.task_moments, transform.method)
        return mom.delta_method(
            inner,
            lambda x: 1 / x,
            lambda x: -1 / x**2,
            lambda x: 2 / x**3,
            num_candidates=n,
            statistic=lambda ranks: 1.0 / np.mean(transform.function(ranks), axis=-1),
        )

    return moments


def _geometric(sign: float) -> Callable[[np.ndarray], Moments]:
    return lambda n: mom.product_of_powers(n, sign / len(n))


def _power_mean_moments(p: float) -> Callable[[np.ndarray], Moments]:
    if p == np.inf:
        return mom.maximum_moments
    if p == -np.inf:
        return mom.minimum_moments
    if p == 0:
        return _geometric(1.0)
    powered = inverse_power(Fraction(-p).limit_denominator()) if p != 1 else IDENTITY

    def moments(n: np.ndarray) -> Moments:
        inner = mom.mean_of_transform(n, powered.task_moments, powered.method)
        if p == 1:
            return inner
        q = 1.0 / p
        return mom.delta_method(
            inner,
            lambda x: x**q,
            lambda x: q * x ** (q - 1),
            lambda x: q * (q - 1) * x ** (q - 2),
            num_candidates=n,
            statistic=lambda ranks: power_mean(ranks, p),
        )

    return moments


def _sampled_mad(summary: np.ndarray) -> np.ndarray:
    return summary[:, 1] * mom.MAD_NORMAL_SCALE


def _median_moments(post: str) -> Callable[[np.ndarray], Moments | mom.SamplingRequest]:
    transform = (lambda x: 1.0 / x) if post == "reciprocal" else (lambda x: x)

    def moments(n: np.ndarray) -> Moments | mom.SamplingRequest:
        if np.all(n == n[0]) and len(n) % 2 == 1:
            return mom.median_moments_iid(int(n[0]), len(n), transform)
        # The median rank, its inverse and the MAD share one median per replicate.
        return mom.SamplingRequest(mom.median_and_deviation, lambda summary: transform(summary[:, 0]))

    return moments


def _mad_moments(n: np.ndarray) -> mom.SamplingRequest:
    return mom.SamplingRequest(mom.median_and_deviation, _sampled_mad)


def _standard_deviation_moments(n: np.ndarray) -> Moments | mom.SamplingRequest:
    """sqrt of the rank variance, whose moments are exact: delta method, or sampling when
    the variance itself varies too much (few ranks)."""
    return mom.delta_method(
        mom.rank_variance_moments(n),
        np.sqrt,
        lambda x: 0.5 / np.sqrt(x),
        lambda x: -0.25 * x**-1.5,
        num_candidates=n,
        statistic=lambda ranks: np.std(ranks, axis=-1),
    )


def _count_moments(n: np.ndarray) -> Moments:
    return Moments(float(len(n)), 0.0, "exact (constant)")


# --- the registry ------------------------------------------------------------------------


def _rank_metric(
    key: str,
    label: str,
    moments_function: Callable | None,
    *,
    increasing: bool,
    transform: Transform = IDENTITY,
    statistic: str = "power mean",
    power: float | None = 1.0,
    **extra: object,
) -> Metric:
    """A quality metric with optimum 1 (rank 1 everywhere): in [0, 1] where higher is
    better, in [1, inf) where lower is."""
    return Metric(
        key=key,
        label=label,
        transform=transform,
        statistic=statistic,
        power=power,
        increasing=increasing,
        optimum=1.0,
        value_range=(0.0, 1.0) if increasing else (1.0, np.inf),
        moments_function=moments_function,
        **extra,
    )


def _mean_score(key: str, label: str, transform: Transform, **extra: object) -> Metric:
    """The arithmetic mean of a transform valued in [0, 1], 1 at rank 1: higher is better."""
    return _rank_metric(key, label, _mean_moments(transform), increasing=True, transform=transform, **extra)


def _cut_off(k: int, key: str) -> int:
    if isinstance(k, bool) or int(k) != k or k <= 0:
        raise KgrankInputError(f"metric {key}_{k}: k must be a positive integer, got {k!r}")
    return int(k)


def hits_at(k: int) -> Metric:
    k = _cut_off(k, "hits_at")
    return _mean_score(
        f"hits_at_{k}",
        f"Hits@{k}",
        indicator(k),
        synonyms=(f"h@{k}", f"hits@{k}"),
        parameters={"k": k},
        interval_method="wilson",
    )


# The measures of ir-measures (trec_eval) with a cut-off, for one relevant answer per task as
# the filtered setting has: RR@k is 1/r within the top k and 0 below; P@k is Hits@k / k;
# nDCG@k is the log discount 1/log2(1 + r) within the top k (the ideal DCG is 1). Their
# moments under uniform ranks are exact sums over the ranks.


def _truncated(name: str, k: int, function: Callable[[np.ndarray], np.ndarray]) -> Transform:
    cut = lambda ranks: np.where(ranks <= k, function(ranks), 0.0)  # noqa: E731
    return Transform(
        text=f"{name} 1[r <= {k}]",
        function=cut,
        task_moments=mom.finite_sum_moments(cut),
        method=mom.EXACT_SUM,
    )


def reciprocal_rank_at(k: int) -> Metric:
    k = _cut_off(k, "reciprocal_rank_at")
    return _mean_score(
        f"reciprocal_rank_at_{k}",
        f"MRR@{k}",
        _truncated("1/r", k, lambda ranks: 1.0 / ranks),
        synonyms=(f"mrr@{k}", f"rr@{k}"),
        parameters={"k": k},
    )


def precision_at(k: int) -> Metric:
    """P@k: 1/k at every rank within the top k, so its optimum (every answer first) is 1/k."""
    k = _cut_off(k, "precision_at")
    metric = _mean_score(
        f"precision_at_{k}",
        f"P@{k}",
        _truncated(f"1/{k}", k, lambda ranks: np.full(np.shape(ranks), 1.0 / k)),
        synonyms=(f"p@{k}",),
        parameters={"k": k},
    )
    return replace(metric, optimum=1.0 / k, value_range=(0.0, 1.0 / k))


def ndcg_at(k: int) -> Metric:
    k = _cut_off(k, "ndcg_at")
    return _mean_score(
        f"ndcg_at_{k}",
        f"nDCG@{k}",
        _truncated("ln 2 / ln(1 + r)", k, _log_discount),
        synonyms=(f"ndcg@{k}",),
        parameters={"k": k},
    )


# Metrics with a cut-off, any k: the names each takes (normalised) and how it is built
CUT_OFF_FAMILIES = (
    (("hitsat", "hits@", "h@", "hat"), lambda k: hits_at(k)),
    (("mrr@", "rr@"), lambda k: reciprocal_rank_at(k)),
    (("p@",), lambda k: precision_at(k)),
    (("ndcg@",), lambda k: ndcg_at(k)),
)


def power_mean_rank(p: float) -> Metric:
    names = {2.0: "quadratic_mean_rank", np.inf: "maximum_rank", -np.inf: "minimum_rank"}
    key = f"power_mean_rank_{'minus_' if p < 0 else ''}{abs(p):g}"
    return _rank_metric(
        key,
        f"M_{p:g}(r)",
        _power_mean_moments(p),
        increasing=False,
        power=float(p),
        synonyms=(names[p],) if p in names else (),
        parameters={"p": p},
        # the bootstrap of an extreme order statistic does not cover
        interval_method="normal" if np.isfinite(p) else "none: an extreme order statistic",
    )


def mean_inverse_rank_power(a: Fraction) -> Metric:
    return _mean_score(
        f"mean_inverse_rank_power_{a.numerator}_{a.denominator}",
        f"mean r^-{a}",
        inverse_power(a),
        parameters={"a": float(a)},
    )


def _base_metrics() -> list[Metric]:
    lower, higher = {"increasing": False}, {"increasing": True}
    reciprocal = {"increasing": True, "post": "reciprocal"}
    median = {"statistic": "median", "power": None, "interval_method": "order statistics"}
    return [
        _rank_metric("arithmetic_mean_rank", "MR", _mean_moments(IDENTITY), **lower,
                     synonyms=("mean_rank", "mr")),
        _rank_metric(
            "inverse_arithmetic_mean_rank", "IMR", _reciprocal_of_mean(IDENTITY), **reciprocal,
            synonyms=("iamr", "imr"),
        ),
        _rank_metric(
            "harmonic_mean_rank", "HMR", _reciprocal_of_mean(RECIPROCAL), increasing=False, post="reciprocal",
            transform=RECIPROCAL, synonyms=("hmr",),
        ),
        _rank_metric(
            "inverse_harmonic_mean_rank", "MRR", _mean_moments(RECIPROCAL), **higher, transform=RECIPROCAL,
            synonyms=("mean_reciprocal_rank", "mrr", "rr", "reciprocal_rank"),
        ),
        _rank_metric("geometric_mean_rank", "GMR", _geometric(1.0), **lower, power=0.0, synonyms=("gmr",)),
        _rank_metric("inverse_geometric_mean_rank", "IGMR", _geometric(-1.0), **reciprocal, power=0.0,
                     synonyms=("igmr",)),
        _rank_metric("median_rank", "MedR", _median_moments("identity"), **lower, **median,
                     synonyms=("median_rank",)),
        _rank_metric("inverse_median_rank", "IMedR", _median_moments("reciprocal"), **reciprocal, **median),
    ]  # fmt: skip


def _dispersion(
    key: str,
    label: str,
    statistic: str,
    synonyms: tuple[str, ...],
    moments_function: Callable,
    interval_method: str = "log variance",
    increasing: bool = False,
) -> Metric:
    """A dispersion statistic of the ranks, or their count: no optimum, so no derived variants."""
    return Metric(
        key=key,
        label=label,
        transform=IDENTITY,
        statistic=statistic,
        increasing=increasing,
        optimum=None,
        value_range=(0.0, np.inf),
        moments_function=moments_function,
        synonyms=synonyms,
        interval_method=interval_method,
    )


def _dispersion_metrics() -> list[Metric]:
    return [
        _dispersion("standard_deviation", "std", "std", ("rank_std", "std"), _standard_deviation_moments),
        _dispersion("variance", "var", "var", ("rank_var", "var"), mom.rank_variance_moments),
        _dispersion(
            "median_absolute_deviation", "MAD", "mad", ("rank_mad", "mad"), _mad_moments, "bootstrap"
        ),
        _dispersion(
            "count", "count", "count", ("rank_count",), _count_moments, "none: a count", increasing=True
        ),
    ]


# --- weighted metrics (kgrank.evaluation.weighted: the weights, the schemes, the Monte Carlo check) ---


def log_weighted_mean(ranks: np.ndarray, fractions: np.ndarray) -> np.ndarray | float:
    """sum_i a_i ln r_i along the last axis, for normalised weights a (no checks: the
    Monte Carlo loop calls it on millions of sampled ranks)."""
    result = np.log(ranks) @ fractions
    return float(result) if np.ndim(result) == 0 else result


def _needs_weights(key: str):
    def refuse(num_candidates: np.ndarray) -> Moments:
        raise KgrankInputError(f"metric {key}: needs one weight per rank; pass weights=")

    return refuse


@dataclass(frozen=True, kw_only=True)
class WeightedMetric(Metric):
    """A registry-shaped metric whose value and moments need weights. ``sign`` is +1 for
    WGMR and -1 for its inverse (the exponent of the weighted product of ranks)."""

    sign: float
    weighted = True

    def value(
        self, ranks: np.ndarray, weights: np.ndarray | Sequence[float] | None = None
    ) -> np.ndarray | float:
        if weights is None:
            raise KgrankInputError(f"metric {self.key}: needs one weight per rank; pass weights=")
        ranks = np.asarray(ranks, dtype=float)
        if ranks.ndim == 0:
            raise KgrankInputError(f"ranks: got the single number {float(ranks)}; give a vector of ranks")
        fractions = check_weights(weights, ranks.shape[-1])
        bad = ~np.isfinite(ranks) | (ranks < 1)
        if bad.any():
            raise KgrankInputError(
                f"ranks: {ranks[bad].flat[0]} is not a rank of at least 1; recompute the ranks"
            )
        return np.exp(self.sign * log_weighted_mean(ranks, fractions / fractions.sum()))

    def moments(
        self, num_candidates: np.ndarray, weights: np.ndarray | Sequence[float] | None = None
    ) -> Moments:
        if weights is None:
            _needs_weights(self.key)(num_candidates)
        num_candidates = np.asarray(num_candidates)
        fractions = check_weights(weights, len(num_candidates))
        return mom.product_of_task_powers(num_candidates, self.sign * fractions / fractions.sum())


WEIGHTED_GEOMETRIC_MEAN_RANK, INVERSE_WEIGHTED_GEOMETRIC_MEAN_RANK = (
    WeightedMetric(
        key=key, label=label, transform=IDENTITY, statistic="power mean", power=0.0,
        increasing=sign < 0, optimum=1.0, value_range=(0.0, 1.0) if sign < 0 else (1.0, np.inf),
        moments_function=_needs_weights(key), synonyms=(label.lower(),), sign=sign,
        interval_method="none: a weighted metric",
        **({"post": "reciprocal"} if sign < 0 else {}),
    )
    for key, label, sign in (
        ("weighted_geometric_mean_rank", "WGMR", 1.0),
        ("inverse_weighted_geometric_mean_rank", "IWGMR", -1.0),
    )
)  # fmt: skip
WEIGHTED_METRICS = (WEIGHTED_GEOMETRIC_MEAN_RANK, INVERSE_WEIGHTED_GEOMETRIC_MEAN_RANK)


def default_metrics(hits: Iterable[int] = DEFAULT_HITS) -> list[Metric]:
    """Every registered metric, in a stable order."""
    return [
        *_base_metrics(),
        *(power_mean_rank(p) for p in (2.0, np.inf, -np.inf)),
        *(hits_at(k) for k in hits),
        *(mean_inverse_rank_power(a) for a in LESS_TOP_HEAVY_POWERS),
        _mean_score("mean_log_discount", "mean ln2/ln(1+r)", LOG_DISCOUNT, synonyms=("ndcg",)),
        *_dispersion_metrics(),
    ]


@cache
def _registry() -> tuple[Metric, ...]:
    """Every metric a name can find: :func:`default_metrics` and the weighted ones (which
    need weights, so the default table leaves them out), built once (metrics are frozen,
    so sharing is safe)."""
    return (*default_metrics(), *WEIGHTED_METRICS)


@dataclass(frozen=True)
class MetricKey:
    """A registered metric or one of its derived variants, as a user names it: what
    :func:`lookup` returns."""

    metric: Metric
    variant: Variant | None = None

    @property
    def key(self) -> str:
        """The canonical key (PyKEEN's where PyKEEN has the metric)."""
        return self.metric.key if self.variant is None else self.metric.variant_key(self.variant)

    @property
    def label(self) -> str:
        return self.metric.label if self.variant is None else f"{self.metric.label} ({self.variant.label})"

    @property
    def short_name(self) -> str:
        """The printed abbreviation, as the papers write it: the metric's label (MRR,
        Hits@10, WGMR); the adjusted index A<name> for a higher-is-better metric and
        A<name>I otherwise (AMRR, AH@10, AMRI, AWGMRI); the z-score z-<name> (z-MRR,
        z-H@10); the expectation-normalised A<name> of a lower-is-better metric (AMR,
        Berrendorf et al.'s) and <name>/E otherwise. Hits@k abbreviates to H@k inside a
        variant; a label that is not one word (``mean r^-1/2``) is spelled out instead."""
        label = self.metric.label
        if self.variant is None:
            return label
        name = label.replace("Hits@", "H@")
        if not name.replace("@", "").isalnum():
            spelled = {Variant.INDEX: f"adjusted {label}", Variant.Z_SCORE: f"z-{label}"}
            return spelled.get(self.variant, f"{label} / E[{label}]")
        if self.variant is Variant.Z_SCORE:
            return f"z-{name}"
        if self.variant is Variant.INDEX:
            return f"A{name}" if self.metric.increasing else f"A{name}I"
        return f"{name}/E" if self.metric.increasing else f"A{name}"


def _short_names(metric: Metric) -> tuple[str, ...]:
    extra = (f"h_at_{int(metric.parameters['k'])}",) if "k" in metric.parameters else ()
    return (metric.key, *(synonym.lower() for synonym in metric.synonyms), *extra)


# PyKEEN's synonyms that abbreviate the base metric in a way kgrank's short names do not
# (its "amr" inside "aamr" is the arithmetic mean rank, while "amr" alone is the adjusted one).
PYKEEN_ABBREVIATIONS = {
    "arithmetic_mean_rank": {"aamr": Variant.NORMALISED, "aamri": Variant.INDEX, "zamr": Variant.Z_SCORE},
    "geometric_mean_rank": {"gmri": Variant.INDEX},
    "inverse_harmonic_mean_rank": {"aihmr": Variant.INDEX, "zihmr": Variant.Z_SCORE},
}


def variant_aliases(metric: Metric) -> dict[str, Variant]:
    """Every name of each derived variant of ``metric``: its key, and the short names
    built from each of the metric's names the way PyKEEN and the papers abbreviate them
    (amri, amr, amrr, ah@10, agmri, z_mrr, zmrr, ...): the adjusted index is `a<name>`
    for a higher-is-better metric and `a<name>i` otherwise, where `a<name>` is already
    the expectation-normalised variant (AMR); the z-score is `z<name>` or `z_<name>`."""
    aliases = {metric.variant_key(variant): variant for variant in Variant}
    aliases.update(PYKEEN_ABBREVIATIONS.get(metric.key, {}))
    for name in _short_names(metric):
        aliases[f"z_{name}"] = aliases[f"z{name}"] = Variant.Z_SCORE
        aliases[f"expectation_normalized_{name}"] = Variant.NORMALISED
        if metric.increasing:
            aliases[f"a{name}"] = aliases[f"adjusted_{name}"] = Variant.INDEX
        else:
            aliases[f"a{name}i"] = aliases[f"adjusted_{name}_index"] = Variant.INDEX
            aliases[f"a{name}"] = aliases[f"adjusted_{name}"] = Variant.NORMALISED
    return aliases


def _normalised(name: str) -> str:
    # as PyKEEN's class resolver compares names: case, underscores, dashes and spaces aside
    return "".join(character for character in name.lower() if character not in "_- ")


def _names_of(metrics: Iterable[Metric]) -> dict[str, MetricKey]:
    """Every name of each metric and of its derived variants, normalised; the first metric
    that claims a name keeps it."""
    names: dict[str, MetricKey] = {}
    for metric in metrics:
        for short in _short_names(metric):
            names.setdefault(_normalised(short), MetricKey(metric))
        if metric.has_derived:
            for alias, variant in variant_aliases(metric).items():
                names.setdefault(_normalised(alias), MetricKey(metric, variant))
    return names


@cache
def _registered_names() -> dict[str, MetricKey]:
    return _names_of(_registry())


def lookup(name: str) -> MetricKey:
    """The one resolver: a metric or a derived variant by any of its names (case,
    underscores and dashes aside, as PyKEEN's resolver compares them): the keys of the
    tidy tables (``adjusted_inverse_harmonic_mean_rank``, ``z_hits_at_10``), their
    PyKEEN spellings, and the short names (``mrr``, ``amrr``, ``amri``, ``z_mrr``,
    ``ah@10``, ``zh@10``, ``hits@10``, ``wgmr``, ``awgmri``); Hits@k for any k.
    ``lookup(name).metric`` is the registered metric, ``.variant`` the derived variant
    (None for the metric itself).

    >>> lookup("amrr").key
    'adjusted_inverse_harmonic_mean_rank'
    >>> lookup("AMRI").key
    'adjusted_arithmetic_mean_rank_index'
    >>> lookup("z_hits@10").key, lookup("z_hits@10").short_name
    ('z_hits_at_10', 'z-H@10')
    """
    if not isinstance(name, str):
        raise KgrankInputError(f"metric {name!r}: give a metric's name as text, e.g. mrr, amrr, hits@10")
    return _lookup(name)


@cache
def _lookup(name: str) -> MetricKey:
    # cached per name: the analyses resolve a name per value
    lowered = _normalised(name)
    names = _registered_names()
    if lowered in names:
        return names[lowered]
    for prefixes, family in CUT_OFF_FAMILIES:
        for prefix in prefixes:
            # any k, derived or not
            head, _, k = lowered.rpartition(prefix)
            if k.isdigit() and int(k) > 0 and head in {"", "a", "z", "adjusted", "expectationnormalized"}:
                found = _names_of([family(int(k))])
                if lowered in found:
                    return found[lowered]
    known = [key for metric in _registry() if metric.has_derived for key in variant_aliases(metric)]
    close = difflib.get_close_matches(name.lower(), known, n=3)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise KgrankInputError(
        f"unknown metric {name!r}; {hint}use a key such as mrr, amrr, z_mrr, hits_at_10, "
        "adjusted_arithmetic_mean_rank_index (kgrank.evaluation.metrics.default_metrics lists every metric)"
    )


# --- evaluation --------------------------------------------------------------------------


def check_ranks(metric_key: str, ranks: np.ndarray, num_candidates: np.ndarray) -> None:
    """Ranks must be finite, non-empty and inside [1, N_i]; say which value is not."""
    if len(ranks) == 0:
        raise KgrankInputError(f"metric {metric_key}: empty rank set; nothing to evaluate")
    bad = ~np.isfinite(ranks) | (ranks < 1) | (ranks > num_candidates)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise KgrankInputError(
            f"metric {metric_key}: rank {float(ranks[index])} at position {index} is outside "
            f"[1, {num_candidates[index]}] (its candidate count); recompute the ranks"
        )


def check_weights(
    weights: np.ndarray | Sequence[float], num_tasks: int, *, name: str = "weights"
) -> np.ndarray:
    """The weights as floats, one per task: finite, nonnegative and not all zero."""
    values = np.asarray(weights, dtype=float)
    if values.ndim != 1 or len(values) != num_tasks:
        raise KgrankInputError(
            f"{name}: {values.size} weights of shape {values.shape} for {num_tasks} ranks; "
            "give one weight per rank"
        )
    bad = ~np.isfinite(values) | (values < 0)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise KgrankInputError(
            f"{name}: weight {values[index]} at position {index} is not a finite nonnegative number; fix it"
        )
    if num_tasks == 0 or not values.any():
        raise KgrankInputError(
            f"{name}: every weight is zero (or none given); give at least one positive weight"
        )
    return values


@dataclass(frozen=True)
class DerivedArrays:
    """A derived variant of metric values (any shape), with its E and Var under the random
    model; ``variance`` is NaN where the base variance was not given."""

    value: np.ndarray
    expectation: np.ndarray
    variance: np.ndarray


def derive(
    metric: Metric,
    value: np.ndarray | float,
    expectation: np.ndarray | float,
    variance: np.ndarray | float | None = None,
) -> dict[Variant, DerivedArrays]:
    """The three derived variants of metric values, element-wise over arrays of values and
    their random-model moments. Each variant is an affine map of the base value whose
    coefficients depend on E (and Var): expectation-normalised M / E; adjusted index
    (M - E) / (optimum - E); z-score ±(M - E) / sqrt(Var).

    ``variance=None`` says that the random model's variance is unknown (a macro average
    whose per-query variance is not given): the z-score is then NaN and so are the
    variants' variances, rather than computed from a placeholder. Where every task has a
    single candidate a random model is optimal: the adjusted index and z-score are NaN
    (0/0) rather than a number."""
    value = np.asarray(value, dtype=float)
    expectation = np.asarray(expectation, dtype=float)
    known = variance is not None
    variance = np.asarray(variance if known else np.nan, dtype=float)
    span = metric.optimum - expectation
    std = np.sqrt(variance)
    sign = 1.0 if metric.increasing else -1.0
    has_span = span != 0
    has_std = std > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        # without a variance the adjusted index is still defined by its span alone
        index_defined = has_span & has_std if known else has_span
        return {
            Variant.NORMALISED: _defined(
                expectation != 0, value / expectation, 1.0, variance / expectation**2
            ),
            Variant.INDEX: _defined(index_defined, (value - expectation) / span, 0.0, variance / span**2),
            Variant.Z_SCORE: _defined(has_span & has_std, sign * (value - expectation) / std, 0.0, 1.0),
        }


def _defined(
    defined: np.ndarray, value: np.ndarray, expectation: np.ndarray | float, variance: np.ndarray | float
) -> DerivedArrays:
    """A derived variant's value, E and Var where it is ``defined``, NaN elsewhere."""
    return DerivedArrays(*(np.where(defined, part, np.nan) for part in (value, expectation, variance)))


def derived_values(metric: Metric, value: float, moments: Moments) -> dict[Variant, DerivedValue]:
    """The three derived variants of one value, each with its own E and Var under the
    random model (:func:`derive` on scalars)."""
    return {
        variant: DerivedValue(
            key=metric.variant_key(variant),
            value=float(arrays.value),
            expectation=float(arrays.expectation),
            variance=float(arrays.variance),
        )
        for variant, arrays in derive(metric, value, moments.expectation, moments.variance).items()
    }


def rows_for(metric: Metric, value: float, moments: Moments) -> list[dict]:
    """The base value with its moments and method, then its derived variants (same method)."""
    rows = [DerivedValue(metric.key, value, moments.expectation, moments.variance)]
    if metric.has_derived:
        rows += derived_values(metric, value, moments).values()
    return [
        {
            "metric": row.key,
            "value": row.value,
            "expectation": row.expectation,
            "variance": row.variance,
            "method": moments.method,
        }
        for row in rows
    ]


def metric_rows(ranks: np.ndarray, num_candidates: np.ndarray, metric: Metric) -> list[dict]:
    """Every row of one metric for one rank vector (checked first): :func:`evaluate_ranks`
    of that metric alone."""
    check_ranks(metric.key, np.asarray(ranks, dtype=float), np.asarray(num_candidates))
    return evaluate_ranks(ranks, num_candidates, [metric])


def side_subsets(sides: np.ndarray) -> dict[str, np.ndarray | slice | None]:
    """The rows of head, tail and both (None: all rows) of a table's ``side`` column, each
    side as a slice when its rows are contiguous (a rank table lists all head rows, then
    all tail rows), so that its sampled replicates are a view of the shared draw."""
    sides = np.asarray(sides)
    subsets: dict[str, np.ndarray | slice | None] = {}
    for side in SIDES_AND_BOTH:
        if not (len(sides) if side == "both" else np.any(sides == side)):
            raise KgrankInputError(f"side {side}: empty rank set; nothing to evaluate")
        if side == "both":
            subsets[side] = None
            continue
        rows = np.flatnonzero(sides == side)
        contiguous = rows[-1] - rows[0] + 1 == len(rows)
        subsets[side] = slice(int(rows[0]), int(rows[-1]) + 1) if contiguous else rows
    return subsets


TIDY_COLUMNS = ["side", "rank_type", "metric", "value", "expectation", "variance", "method"]
# The sampling interval of each value over the test tasks (kgrank.evaluation.intervals); not to be
# confused with `variance`, the random model's.
INTERVAL_COLUMNS = ["ci_low", "ci_high", "ci_method"]


def _unweighted(metrics: Sequence[Metric], weights: np.ndarray | None) -> list[Metric]:
    """The metrics that take no weights, refused where weights are given."""
    unweighted = [metric for metric in metrics if not metric.weighted]
    if weights is not None and unweighted:
        raise KgrankInputError(
            f"metric {unweighted[0].key}: takes no weights; weigh only wgmr and iwgmr, or drop the weights"
        )
    return unweighted


def evaluate_ranks(
    ranks: np.ndarray,
    num_candidates: np.ndarray,
    metrics: Sequence[Metric],
    *,
    weights: np.ndarray | None = None,
    moments: Mapping[str, Moments] | None = None,
    confidence: float | None = None,
    seed: int = 0,
    stream: Sequence[str] = ("both", "realistic"),
) -> list[dict]:
    """The one evaluator of a rank vector: for each metric, its value with the random
    model's moments and method, then its derived variants (:func:`rows_for`), and with
    ``confidence`` each row's sampling interval over the test tasks (``ci_low``,
    ``ci_high``, ``ci_method``; :mod:`kgrank.evaluation.intervals`).

    ``weights`` (one per rank) go to the metrics that take them (``Metric.weighted``:
    WGMR, IWGMR), which need them; a metric that takes none refuses them rather than
    ignore them. ``moments`` gives precomputed moments by key (a rank table's side shares
    them across its rank types). A resampled interval is seeded by ``seed``, the
    ``stream`` names (side and rank type) and the metric's key, so that
    ``kgrank metrics``, ``kgrank evaluate`` and :func:`kgrank.evaluate` give one
    (side, rank type) the same interval."""
    ranks = np.asarray(ranks, dtype=float)
    num_candidates = np.asarray(num_candidates)
    if num_candidates.shape != ranks.shape:
        raise KgrankInputError(
            f"num_candidates: {num_candidates.size} counts for {ranks.size} ranks; give one per rank"
        )
    name = f"({', '.join(stream)})" if stream else "ranks"
    check_ranks(name, ranks, num_candidates)
    unweighted = _unweighted(metrics, weights)
    if moments is None:
        moments = moments_of(unweighted, num_candidates) if unweighted else {}
    rows: list[dict] = []
    for metric in metrics:
        if metric.weighted:
            value = metric.value(ranks, weights)
            metric_moments = moments.get(metric.key) or metric.moments(num_candidates, weights)
        else:
            value, metric_moments = metric.value(ranks), moments[metric.key]
        metric_rows_ = rows_for(metric, value, metric_moments)
        if confidence is not None:
            intervals = _interval_columns(metric, ranks, metric_moments, confidence, [seed, *stream])
            metric_rows_ = [{**row, **columns} for row, columns in zip(metric_rows_, intervals, strict=True)]
        rows += metric_rows_
    return rows


def _interval_columns(
    metric: Metric, values: np.ndarray, moments: Moments, confidence: float, seed: Sequence[int | str]
) -> list[dict]:
    """The interval columns of :func:`rows_for`'s rows, in the same order."""
    from kgrank.evaluation.intervals import metric_interval

    interval = metric_interval(metric, values, confidence=confidence, seed=seed)
    intervals = [interval]
    if metric.has_derived:
        intervals += list(derived_interval(metric, interval, moments.expectation, moments.variance).values())
    return [
        {"ci_low": each.low, "ci_high": each.high, "ci_method": f"{confidence:.0%} {each.method}"}
        for each in intervals
    ]


def derived_interval(
    metric: Metric, interval: Interval, expectation: float, variance: float
) -> dict[Variant, Interval]:
    """The interval of each derived variant: the affine image of the base interval under
    the variant's map at the test set's candidate counts (ends sorted: the z-score of a
    lower-is-better metric flips them)."""
    from kgrank.evaluation.intervals import Interval

    ends = derive(metric, np.array([interval.low, interval.high]), expectation, variance)
    return {
        variant: Interval(*sorted(float(end) for end in arrays.value), interval.method)
        if np.isfinite(arrays.value).all()
        else Interval(float("nan"), float("nan"), interval.method)
        for variant, arrays in ends.items()
    }


def evaluate_rank_table(
    ranks: pd.DataFrame,
    metrics: Sequence[Metric] | None = None,
    *,
    weights: np.ndarray | None = None,
    confidence: float | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """Every metric for side in {head, tail, both} and every rank type, as a tidy table
    (:func:`evaluate_ranks` per side and rank type, seeded by both names).

    The moments depend on the candidate counts (and weights) only, so they are computed
    once per side and reused for all four rank types; the sampled ones of all three
    sides come from one stream of replicates. ``weights`` (one per row) are for the
    weighted metrics only, so every metric asked for must take them; a side uses its own
    rows' weights, renormalised.
    """
    metrics = list(metrics) if metrics is not None else default_metrics()
    num_candidates = ranks["num_candidates"].to_numpy()
    if len(num_candidates) and num_candidates.min() < 1:
        # checked before the moments, which would divide by it
        raise KgrankInputError(
            f"rank table: num_candidates {num_candidates.min()} is not at least 1; recompute the ranks"
        )
    subsets = side_subsets(ranks["side"].to_numpy())
    unweighted = _unweighted(metrics, weights)
    cached = moments_of_subsets(unweighted, num_candidates, subsets)
    if weights is not None:
        weights = np.asarray(weights, dtype=float)
        if weights.shape != num_candidates.shape:
            raise KgrankInputError(
                f"weights: {weights.size} weights for {num_candidates.size} rows; give one weight per row"
            )
    rows: list[dict] = []
    for side in SIDES_AND_BOTH:
        positions = subsets[side]
        side_candidates = num_candidates if positions is None else num_candidates[positions]
        side_weights = weights if weights is None or positions is None else weights[positions]
        side_moments = dict(cached[side])
        if side_weights is not None:
            side_weights = check_weights(side_weights, len(side_candidates), name=f"weights of side {side}")
        for metric in metrics:
            if metric.weighted:
                side_moments[metric.key] = metric.moments(side_candidates, side_weights)
        subset = select_side(ranks, side)
        for rank_type in RANK_COLUMNS:
            rows += [
                {"side": side, "rank_type": rank_type, **row}
                for row in evaluate_ranks(
                    subset[rank_type].to_numpy(dtype=float),
                    side_candidates,
                    metrics,
                    weights=side_weights,
                    moments=side_moments,
                    confidence=confidence,
                    seed=seed,
                    stream=(side, rank_type),
                )
            ]
    return pd.DataFrame(rows, columns=TIDY_COLUMNS + (INTERVAL_COLUMNS if confidence is not None else []))


def mean_metric(metric: str | Metric, purpose: str = "sampled estimators") -> Metric:
    """A registered metric that is the arithmetic mean of a rank transformation (MRR, Hits@k,
    MR ...): the only kind whose value is a mean of per-task values, which the sampled
    estimators and the tie-neutral values (``purpose``) take task by task."""
    if isinstance(metric, str):
        metric = lookup(metric).metric
    if metric.statistic != "power mean" or metric.power != 1 or metric.post != "identity":
        raise KgrankInputError(
            f"metric {metric.key} is not an arithmetic mean of a rank transformation; {purpose} take "
            "such metrics only (inverse_harmonic_mean_rank, hits_at_k, arithmetic_mean_rank)"
        )
    return metric


# --- which metrics a paired comparison takes (kgrank.evaluation.comparison) --------------
# Here rather than in the comparison module, which imports scipy.stats: the workflow checks
# comparison.metrics at every parse.


def _refusal(metric: Metric) -> str | None:
    """Why ``metric`` has no paired test on per-task values, or None where it has one."""
    if metric.weighted:
        return "a weighted metric needs one weight per task, which compare does not take"
    if metric.statistic == "median":
        return "a median is not a mean of per-task values"
    if metric.statistic in {"std", "var", "mad"}:
        return "a dispersion statistic is not a mean of per-task values"
    if metric.statistic == "count":
        return "a count is the number of tasks, the same for every system"
    if metric.statistic != "power mean" or metric.power is None:  # pragma: no cover - registry has no other
        return f"a {metric.statistic} is not a mean of per-task values"
    if not np.isfinite(metric.power):
        return "the maximum or minimum rank is an extreme order statistic, not a mean of per-task values"
    return None


def comparable_metrics(names: Iterable[str] | str) -> list[Metric]:
    """The base metrics that ``names`` ask to compare (any name
    :func:`kgrank.evaluation.metrics.lookup` takes), each once in the order first named: a
    derived key names its base metric. A metric that is not a power mean with finite p
    is refused with one line saying why."""
    names = [names] if isinstance(names, str) else list(names)
    if not names:
        raise KgrankInputError("compare: no metric given; name one, e.g. mrr or hits@10")
    chosen: dict[str, Metric] = {}
    for name in names:
        metric = lookup(name).metric
        reason = _refusal(metric)
        if reason is not None:
            raise KgrankInputError(
                f"metric {name!r}: {reason}, so no paired test tests it; compare a power mean with finite "
                "p instead (mrr, mr, hits@k, gmr, hmr, mean r^-a, or their adjusted and z-score keys)"
            )
        chosen.setdefault(metric.key, metric)
    return list(chosen.values())
