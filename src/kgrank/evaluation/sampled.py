"""Sampled-negative evaluation and estimators of the full-ranking metrics (Krichene & Rendle 2020).

OGB (ogbl-wikikg2, ogbl-biokg), DGL-KE and many papers rank each true answer against k
random negatives instead of every candidate. This module simulates that protocol exactly
from a full (filtered) rank table and estimates the full-ranking metric from the sampled
ranks.

The law of a sampled rank. Task i has N_i candidates (the true one included), g_i =
r_i - 1 of them scoring above the true one (r_i its optimistic rank) and t_i = p_i - r_i
tied with it (p_i its pessimistic rank). Drawing k_i = min(k, N_i - 1) of its N_i - 1
negatives uniformly without replacement, the number drawn above is hypergeometric
(population N_i - 1, successes g_i, draws k_i) and, given that, the number drawn tied is
hypergeometric among the rest (population N_i - 1 - g_i, successes t_i, draws k_i minus
those above). So

    sampled optimistic  S_i = 1 + #drawn above          (S_i - 1 ~ Hyp(N_i - 1, r_i - 1, k_i))
    sampled pessimistic      = 1 + #drawn above or tied  (        ~ Hyp(N_i - 1, p_i - 1, k_i))
    sampled realistic        = their mean,

which is what :func:`kgrank.engine.ranks.sampled_ranks` computes from the scores (a candidate
tied with the true one counts above it for the pessimistic rank only). Each sampled
rank type has a hypergeometric marginal given its full rank of the same type, so every
estimator below applies to the optimistic and to the pessimistic rank; the realistic
rank is a mean of two dependent hypergeometric ranks and only the naive and rescaled
estimators (linear in the rank) are offered for it. A task with N_i - 1 <= k keeps every
candidate (k_i = N_i - 1) and its sampled rank is its full rank.

Estimators of a full-ranking metric M = mean_i f(r_i) (MRR: f = 1/r, Hits@m: f = 1[r <= m],
any arithmetic mean of a rank transformation), each a mean over tasks of f~_i(S_i):

- ``naive``: f~ = f, the sampled metric itself (what sampled protocols report).
- ``rescaled``: f~(s) = f(1 + (s - 1)(N_i - 1)/k_i). E[S_i - 1 | r_i] = k_i (r_i - 1)/(N_i - 1),
  so this rescaled rank is the unbiased (moment) estimator of r_i.
- ``posterior-rank``: f~(s) = f((N_i + 1) s / (k_i + 2)), the posterior mean E[r_i | S_i = s]
  under a uniform prior on r_i: with j = r - 1 uniform on 0..N_i - 1 and x = s - 1,
  sum_j j C(j, x) C(N_i - 1 - j, k_i - x) / sum_j C(j, x) C(N_i - 1 - j, k_i - x)
  = (x + 1)(N_i + 1)/(k_i + 2) - 1 (the hypergeometric's "rule of succession", from
  sum_j C(j, a) C(M - j, b) = C(M + 1, a + b + 1)); the tests check it by enumeration.
- ``corrected``: Krichene & Rendle's corrected metric. With A_i[r, s] = P(S_i = s | r_i = r)
  (an N_i x (k_i + 1) matrix of hypergeometric probabilities) and a prior p over r = 1..N_i,
  f~_i minimises  sum_r p(r) [ (E[f~(S) | r] - f(r))^2 + gamma Var[f~(S) | r] ], i.e. solves
  [(1 - gamma) A' D A + gamma diag(A' p)] f~ = A' D f,  D = diag(p).
  gamma = 0 is their minimal-bias (least squares) estimator, 0 < gamma < 1 their
  bias-variance trade-off, and gamma = 1 gives f~(s) = E_p[f(r) | S = s], the posterior mean
  of f. The prior is uniform.

The correction vector depends on (f, N_i, k_i, gamma) only: tasks are grouped by (N_i, k_i)
and each vector is computed once (cached).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import linalg, special

from kgrank.defaults import SAMPLED_ESTIMATORS
from kgrank.errors import KgrankInputError
from kgrank.evaluation.metrics import Metric, Variant, derive, lookup, mean_metric
from kgrank.evaluation.stats import seed_stream

SAMPLED_RANK_TYPES = ("optimistic", "realistic", "pessimistic")
# The corrected estimator needs a hypergeometric law of the sampled rank given the full
# rank of the same type: true of the optimistic and the pessimistic rank, not of their mean.
CORRECTABLE_RANK_TYPES = ("optimistic", "pessimistic")
# Rows of the probability matrix are kept only where the Hoeffding bound for sampling
# without replacement, P(|X - E X| >= t) <= 2 exp(-2 t^2 / k), leaves less than this mass
# outside (per full rank): far below float64 rounding of anything computed from them.
TAIL_MASS = 1e-20
# The minimal-bias system (gamma = 0) is numerically rank deficient for larger k (its
# columns are polynomials of degree <= k in r): directions of its Gram matrix below this
# share of the largest eigenvalue are dropped (the minimum-norm least-squares solution).
GRAM_CUTOFF = 1e-13


# --- inputs ---------------------------------------------------------------------------------


class _RankTypes:
    """The realistic rank, and each rank type by name, of the optimistic and pessimistic ones."""

    @property
    def realistic(self) -> np.ndarray:
        return (self.optimistic + self.pessimistic) / 2.0

    def ranks(self, rank_type: str) -> np.ndarray:
        _check_rank_type(rank_type, SAMPLED_RANK_TYPES)
        return self.realistic if rank_type == "realistic" else getattr(self, rank_type)


@dataclass(frozen=True)
class FullRanks(_RankTypes):
    """Full filtered ranks of n tasks: optimistic, pessimistic (integers in [1, N_i]) and N_i."""

    optimistic: np.ndarray
    pessimistic: np.ndarray
    num_candidates: np.ndarray

    @classmethod
    def from_table(cls, table: pd.DataFrame) -> FullRanks:
        """The optimistic, pessimistic and num_candidates columns of a rank table."""
        missing = [name for name in ("optimistic", "pessimistic", "num_candidates") if name not in table]
        if missing:
            raise KgrankInputError(
                f"rank table lacks column(s) {', '.join(missing)}; sampled ranks need the full optimistic "
                "and pessimistic ranks and num_candidates (rerun `kgrank ranks`)"
            )
        return cls.of(table["optimistic"], table["pessimistic"], table["num_candidates"])

    @classmethod
    def of(cls, optimistic: object, pessimistic: object | None, num_candidates: object) -> FullRanks:
        """Checked integer arrays; ``pessimistic=None`` means no ties (pessimistic = optimistic)."""
        num_candidates = _integers("num_candidates", num_candidates)
        optimistic = _integers("optimistic rank", optimistic)
        pessimistic = optimistic if pessimistic is None else _integers("pessimistic rank", pessimistic)
        if not (len(optimistic) == len(pessimistic) == len(num_candidates)) or optimistic.ndim != 1:
            raise KgrankInputError(
                f"ranks and candidate counts differ in shape ({optimistic.shape}, {pessimistic.shape}, "
                f"{num_candidates.shape}); pass one value per task"
            )
        if len(optimistic) == 0:
            raise KgrankInputError("no tasks: empty rank set; nothing to sample")
        _check_inside("optimistic rank", optimistic, 1, num_candidates)
        _check_inside("pessimistic rank", pessimistic, optimistic, num_candidates)
        return cls(optimistic, pessimistic, num_candidates)


def _integers(name: str, values: object) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    bad = ~np.isfinite(array) | (array != np.round(array))
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise KgrankInputError(
            f"{name} {array.flat[index]} at position {index} is not an integer; fix the input"
        )
    return array.astype(np.int64)


def _check_inside(name: str, values: np.ndarray, low: np.ndarray | int, high: np.ndarray) -> None:
    low = np.broadcast_to(low, values.shape)
    bad = (values < low) | (values > high)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise KgrankInputError(
            f"{name} {values[index]} of task {index} is outside [{low[index]}, {high[index]}] "
            "(its lower bound and candidate count); recompute the ranks"
        )


def _check_rank_type(rank_type: str, allowed: tuple[str, ...]) -> None:
    if rank_type not in allowed:
        raise KgrankInputError(
            f"rank type {rank_type!r} is not one of {', '.join(allowed)}; pick one of them"
        )


def _check_num_samples(num_samples: object, num_candidates: np.ndarray) -> int:
    if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)) or num_samples <= 0:
        raise KgrankInputError(f"num_samples {num_samples!r} must be a positive integer; pass 1 or more")
    largest = int(num_candidates.max())
    if num_samples >= largest - 1:
        raise KgrankInputError(
            f"num_samples {num_samples}: the largest task has {largest} candidates, so every task would keep "
            f"all its negatives (the full ranking); pass num_samples below {largest - 1}"
        )
    return int(num_samples)


# --- sampled ranks ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SampledRanks(_RankTypes):
    """Sampled ranks of n tasks in R replicate draws: (R, n) arrays, and per task the sampled
    candidate count k_i + 1 and the full count N_i."""

    optimistic: np.ndarray
    pessimistic: np.ndarray
    num_candidates: np.ndarray
    full_num_candidates: np.ndarray
    num_samples: int

    @property
    def draws(self) -> np.ndarray:
        """k_i = min(k, N_i - 1), the negatives each task draws."""
        return self.num_candidates - 1


def draw_above_and_tied(
    generator: np.random.Generator,
    optimistic: np.ndarray,
    pessimistic: np.ndarray,
    num_candidates: np.ndarray,
    draws: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """One draw per task of how many of its ``draws`` sampled negatives score above the true
    answer and how many tie with it, given its full optimistic and pessimistic ranks among
    ``num_candidates`` (the module docstring's two hypergeometric laws, in this order)."""
    negatives = num_candidates - 1
    above_full = optimistic - 1
    tied_full = pessimistic - optimistic
    above = generator.hypergeometric(above_full, negatives - above_full, draws)
    tied = generator.hypergeometric(tied_full, negatives - above_full - tied_full, draws - above)
    return above, tied


def sample_ranks_from_full(
    full: FullRanks | pd.DataFrame, num_samples: int, seed: int, replicates: int = 1
) -> SampledRanks:
    """Ranks against ``num_samples`` uniformly drawn negatives per task, drawn exactly from the
    full ranks (see the module docstring), without scoring again.

    Replicate j draws every task from ``kgrank.evaluation.stats.seed_stream(seed, num_samples, j)``, so a
    replicate does not depend on how many others are drawn. A task with at most
    ``num_samples`` negatives keeps them all.
    """
    if isinstance(full, pd.DataFrame):
        full = FullRanks.from_table(full)
    num_samples = _check_num_samples(num_samples, full.num_candidates)
    if isinstance(replicates, bool) or not isinstance(replicates, (int, np.integer)) or replicates <= 0:
        raise KgrankInputError(f"replicates {replicates!r} must be a positive integer; pass 1 or more")
    draws = np.minimum(num_samples, full.num_candidates - 1)
    optimistic = np.empty((replicates, len(draws)), dtype=np.int64)
    pessimistic = np.empty_like(optimistic)
    for replicate in range(replicates):
        generator = seed_stream(seed, num_samples, replicate)
        above, tied = draw_above_and_tied(
            generator, full.optimistic, full.pessimistic, full.num_candidates, draws
        )
        optimistic[replicate] = 1 + above
        pessimistic[replicate] = 1 + above + tied
    return SampledRanks(optimistic, pessimistic, draws + 1, full.num_candidates, num_samples)


# --- hypergeometric probabilities ---------------------------------------------------------------


@functools.lru_cache(maxsize=4)
def _log_factorials(size: int) -> np.ndarray:
    return special.gammaln(np.arange(size + 1, dtype=float) + 1.0)


def _log_binomial(log_factorial: np.ndarray, n: np.ndarray, r: np.ndarray) -> np.ndarray:
    inside = (r >= 0) & (r <= n)
    r_safe, rest = np.where(inside, r, 0), np.where(inside, n - r, 0)
    with np.errstate(invalid="ignore"):
        return np.where(inside, log_factorial[n] - log_factorial[r_safe] - log_factorial[rest], -np.inf)


def hypergeometric_pmf(drawn_above: np.ndarray, negatives: int, above: np.ndarray, draws: int) -> np.ndarray:
    """P(X = drawn_above) for X ~ Hyp(population ``negatives``, successes ``above``, ``draws``),
    broadcast over ``drawn_above`` and ``above``.

    Equal to scipy.stats.hypergeom.pmf(drawn_above, negatives, above, draws) (the tests
    compare them), which is written by hand here from a table of log-factorials because
    scipy's takes minutes for one 15k x 100 matrix and this takes a tenth of a second.
    """
    log_factorial = _log_factorials(int(negatives))
    drawn_above, above = np.asarray(drawn_above, dtype=np.int64), np.asarray(above, dtype=np.int64)
    log_pmf = (
        _log_binomial(log_factorial, above, drawn_above)
        + _log_binomial(log_factorial, negatives - above, draws - drawn_above)
        - (log_factorial[negatives] - log_factorial[draws] - log_factorial[negatives - draws])
    )
    return np.exp(log_pmf)


def sampled_rank_probabilities(
    full_ranks: np.ndarray, num_candidates: np.ndarray, draws: np.ndarray
) -> np.ndarray:
    """P(S_i = s | r_i) for s = 1..max(k_i) + 1, one row per task (zero beyond k_i + 1)."""
    full_ranks = np.asarray(full_ranks, dtype=np.int64)
    num_candidates, draws = np.asarray(num_candidates), np.asarray(draws)
    width = int(draws.max()) + 1
    probabilities = np.zeros((len(full_ranks), width))
    for count, draw, rows in _groups(num_candidates, draws):
        drawn_above = np.arange(draw + 1)[None, :]
        probabilities[rows, : draw + 1] = hypergeometric_pmf(
            drawn_above, count - 1, full_ranks[rows, None] - 1, draw
        )
    return probabilities


def _groups(num_candidates: np.ndarray, draws: np.ndarray) -> Iterator[tuple[int, int, np.ndarray]]:
    """Each distinct (N, k) with the mask of its tasks."""
    for count, draw in np.unique(np.stack([num_candidates, draws], axis=1), axis=0):
        yield int(count), int(draw), (num_candidates == count) & (draws == draw)


# --- estimators --------------------------------------------------------------------------------


def _check_regularisation(regularisation: float) -> float:
    if not 0.0 <= regularisation <= 1.0:
        raise KgrankInputError(f"regularisation {regularisation} is outside [0, 1]; pass gamma in [0, 1]")
    return float(regularisation)


def correction(
    metric: str | Metric,
    num_candidates: int,
    draws: int,
    *,
    regularisation: float = 0.0,
) -> np.ndarray:
    """Krichene & Rendle's corrected values f~(s), s = 1..draws + 1, for tasks with
    ``num_candidates`` candidates ranked against ``draws`` of their negatives: the module
    docstring's system over full ranks r = 1..N, with the uniform prior."""
    metric = mean_metric(metric)
    regularisation = _check_regularisation(regularisation)
    return _uniform_correction(metric.key, int(num_candidates), int(draws), regularisation)


@functools.lru_cache(maxsize=4096)
def _uniform_correction(key: str, num_candidates: int, draws: int, regularisation: float) -> np.ndarray:
    # cached by the metric's key: its transformation is a new closure at every lookup
    weights = np.full(num_candidates, 1.0 / num_candidates)
    function = lookup(key).metric.transform.function
    vector = _solve_correction(function, num_candidates, draws, regularisation, weights)
    vector.setflags(write=False)
    return vector


def _solve_correction(
    function: Callable, num_candidates: int, draws: int, regularisation: float, weights: np.ndarray
) -> np.ndarray:
    # weights: the prior over full ranks 1..N (uniform in :func:`correction`), any scale
    weights = weights / weights.sum()
    negatives = num_candidates - 1
    size = draws + 1
    gram = np.zeros((size, size))
    right = np.zeros(size)
    column_mass = np.zeros(size)
    targets = function(np.arange(1, num_candidates + 1, dtype=float))
    # Row blocks of full ranks: each block's sampled ranks lie in a window of columns (Hoeffding's
    # bound, TAIL_MASS), so the Gram matrix costs N x window^2 rather than N x (k + 1)^2.
    half_width = int(np.ceil(np.sqrt(draws * np.log(2.0 / TAIL_MASS) / 2.0))) + 1
    block = 512
    for start in range(0, num_candidates, block):
        above = np.arange(start, min(start + block, num_candidates))  # r - 1
        centre = above * draws / max(negatives, 1)
        low = max(0, int(np.floor(centre[0])) - half_width)
        high = min(draws, int(np.ceil(centre[-1])) + half_width)
        columns = np.arange(low, high + 1)
        matrix = hypergeometric_pmf(columns[None, :], negatives, above[:, None], draws)
        weighted = matrix * weights[above, None]
        gram[low : high + 1, low : high + 1] += weighted.T @ matrix
        right[low : high + 1] += weighted.T @ targets[above]
        column_mass[low : high + 1] += weighted.sum(axis=0)
    system = (1.0 - regularisation) * gram + regularisation * np.diag(column_mass)
    if regularisation > 0:
        return linalg.solve(system, right, assume_a="pos")
    # minimum-norm least squares through the eigen-decomposition (see GRAM_CUTOFF)
    values, vectors = linalg.eigh(system)
    keep = values > GRAM_CUTOFF * values.max()
    return vectors[:, keep] @ ((vectors[:, keep].T @ right) / values[keep])


def _estimator_values(
    metric: Metric,
    estimator: str,
    num_candidates: int,
    draws: int,
    regularisation: float,
) -> np.ndarray:
    """f~(s) for s = 1..draws + 1 of one (N, k) group."""
    sampled = np.arange(1, draws + 2, dtype=float)
    function = metric.transform.function
    if estimator == "naive":
        return function(sampled)
    if estimator == "rescaled":
        # as estimate() computes it, to the last bit
        scale = (num_candidates - 1) / max(draws, 1)
        return function(1.0 + (sampled - 1.0) * scale)
    if estimator == "posterior-rank":
        return function((num_candidates + 1.0) * sampled / (draws + 2.0))
    return correction(metric, num_candidates, draws, regularisation=regularisation)


def _check_estimator(estimator: str, rank_type: str) -> None:
    if estimator not in SAMPLED_ESTIMATORS:
        raise KgrankInputError(
            f"estimator {estimator!r} is not one of {', '.join(SAMPLED_ESTIMATORS)}; pick one"
        )
    allowed = SAMPLED_RANK_TYPES if estimator in ("naive", "rescaled") else CORRECTABLE_RANK_TYPES
    _check_rank_type(rank_type, allowed)


def estimate(
    metric: str | Metric,
    sampled: SampledRanks,
    estimator: str = "corrected",
    *,
    rank_type: str = "optimistic",
    regularisation: float = 0.0,
) -> np.ndarray:
    """The estimate of the full-ranking ``metric`` from each replicate's sampled ranks: the mean
    over tasks of f~_i(S_i), one value per replicate (see the module docstring)."""
    metric = mean_metric(metric)
    _check_estimator(estimator, rank_type)
    regularisation = _check_regularisation(regularisation)
    ranks = sampled.ranks(rank_type)
    if estimator == "naive":
        return np.asarray(metric.value(ranks), dtype=float).reshape(len(ranks))
    if estimator == "rescaled":
        # a task with one candidate draws nothing: its rank is 1 either way
        scale = (sampled.full_num_candidates - 1) / np.maximum(sampled.draws, 1)
        return np.mean(metric.transform.function(1.0 + (ranks - 1.0) * scale), axis=-1)
    values = np.empty(ranks.shape)
    for count, draw, tasks in _groups(sampled.full_num_candidates, sampled.draws):
        vector = _estimator_values(metric, estimator, count, draw, regularisation)
        values[:, tasks] = vector[ranks[:, tasks].astype(np.int64) - 1]
    return values.mean(axis=-1)


@dataclass(frozen=True)
class ExactMoments:
    """Expectation and variance of an estimate over the sampling of negatives, exact given the
    full ranks (the tasks' sampled ranks are independent), and the full-ranking value."""

    expectation: float
    variance: float
    full_value: float

    @property
    def bias(self) -> float:
        return self.expectation - self.full_value

    @property
    def rmse(self) -> float:
        return float(np.sqrt(self.bias**2 + self.variance))


# Tasks whose moments are summed in one block: bounds the (tasks x (k + 1)) probability
# matrix of estimator_moments to about 80 MB at k = 1000.
TASK_BLOCK = 10_000
# The metrics kgrank evaluate and the protocols study estimate by default
ESTIMATED_METRICS = ("inverse_harmonic_mean_rank", "hits_at_10")


def estimator_moments(
    full: FullRanks | pd.DataFrame,
    num_samples: int,
    estimators: Sequence[str] = SAMPLED_ESTIMATORS,
    metrics: Sequence[str | Metric] = ESTIMATED_METRICS,
    *,
    rank_type: str = "optimistic",
    regularisation: float = 0.0,
) -> dict[tuple[str, str], ExactMoments]:
    """E and Var of :func:`estimate` of every (estimator, metric) over the draw of
    ``num_samples`` negatives per task, summed exactly over every sampled rank with its
    hypergeometric probability (no simulation); keyed by (estimator, metric key).

    The estimate is a mean over independent tasks, so E is the mean of the tasks' E and Var
    the sum of their Var over n^2. The probability matrix, most of the cost (7 s at k = 1000
    on FB15k-237's 41k tasks), is computed once per block of :data:`TASK_BLOCK` tasks for
    every estimator and metric. A task with N_i - 1 <= k keeps all its negatives: every
    estimator returns f(r_i) there with no variance, so it is summed directly."""
    if isinstance(full, pd.DataFrame):
        full = FullRanks.from_table(full)
    chosen = {metric.key: metric for metric in map(mean_metric, metrics)}
    for estimator in estimators:
        _check_estimator(estimator, rank_type)
    _check_rank_type(rank_type, CORRECTABLE_RANK_TYPES)  # one hypergeometric law per task
    regularisation = _check_regularisation(regularisation)
    num_samples = _check_num_samples(num_samples, full.num_candidates)
    ranks = full.ranks(rank_type).astype(np.int64)
    n = len(ranks)
    kept = full.num_candidates - 1 <= num_samples
    keys = [(estimator, key) for estimator in estimators for key in chosen]
    sums = {key: float(np.sum(chosen[key[1]].transform.function(ranks[kept].astype(float)))) for key in keys}
    variances = dict.fromkeys(keys, 0.0)
    drawing = np.flatnonzero(~kept)
    for start in range(0, len(drawing), TASK_BLOCK):
        block = drawing[start : start + TASK_BLOCK]
        counts = full.num_candidates[block]
        draws = np.minimum(num_samples, counts - 1)
        probabilities = sampled_rank_probabilities(ranks[block], counts, draws)
        for estimator, key in keys:
            values = np.zeros_like(probabilities)
            for count, draw, rows in _groups(counts, draws):
                vector = _estimator_values(chosen[key], estimator, count, draw, regularisation)
                values[rows, : draw + 1] = vector
            task_mean = np.sum(probabilities * values, axis=1)
            # about the mean, not E[x^2] - E[x]^2, which cancels to noise where a value is sure
            task_variance = np.sum(probabilities * (values - task_mean[:, None]) ** 2, axis=1)
            sums[(estimator, key)] += float(task_mean.sum())
            variances[(estimator, key)] += float(task_variance.sum())
    return {
        (estimator, key): ExactMoments(
            expectation=sums[(estimator, key)] / n,
            variance=variances[(estimator, key)] / n**2,
            full_value=float(np.mean(chosen[key].transform.function(ranks.astype(float)))),
        )
        for estimator, key in keys
    }


# --- evaluation of the estimators ----------------------------------------------------------------


def order_agreement(full_a: float, full_b: float, estimates_a: np.ndarray, estimates_b: np.ndarray) -> float:
    """Share of replicates in which the estimates order systems a and b as their full-ranking
    values do (paired replicates: the same draw index); a tie between the estimates counts
    one half, as a coin toss would decide it."""
    estimates_a, estimates_b = np.asarray(estimates_a, dtype=float), np.asarray(estimates_b, dtype=float)
    if estimates_a.shape != estimates_b.shape or estimates_a.size == 0:
        raise KgrankInputError(
            f"estimates of a and b have shapes {estimates_a.shape} and {estimates_b.shape}; "
            "pass one estimate per replicate for each system"
        )
    if full_a == full_b:
        raise KgrankInputError(
            f"both systems have the full-ranking value {full_a}: there is no order to agree with"
        )
    sign = np.sign(full_a - full_b)
    agreement = np.where(estimates_a == estimates_b, 0.5, (np.sign(estimates_a - estimates_b) == sign) * 1.0)
    return float(agreement.mean())


@dataclass(frozen=True)
class AdjustedUnderSampling:
    """A metric and its adjusted index (M - E[M])/(optimum - E[M]) on the full ranks (E over
    r_i ~ U{1..N_i}) and on each replicate's sampled ranks (E over U{1..k_i + 1})."""

    full_value: float
    full_index: float
    sampled_values: np.ndarray
    sampled_indices: np.ndarray


def adjusted_index(
    metric: str | Metric, values: np.ndarray | float, num_candidates: np.ndarray
) -> np.ndarray:
    """The adjusted index of metric values, its expectation from the candidate counts."""
    metric = lookup(metric).metric if isinstance(metric, str) else metric
    expectation = metric.moments(np.asarray(num_candidates)).expectation
    return derive(metric, values, expectation)[Variant.INDEX].value


def adjusted_under_sampling(
    metric: str | Metric, full: FullRanks, sampled: SampledRanks, rank_type: str = "optimistic"
) -> AdjustedUnderSampling:
    """The raw metric and its adjusted index, full against sampled (see the class)."""
    metric = lookup(metric).metric if isinstance(metric, str) else metric
    full_value = float(metric.value(full.ranks(rank_type).astype(float)))
    sampled_values = np.asarray(metric.value(sampled.ranks(rank_type).astype(float)), dtype=float)
    return AdjustedUnderSampling(
        full_value=full_value,
        full_index=float(adjusted_index(metric, full_value, full.num_candidates)),
        sampled_values=sampled_values,
        sampled_indices=np.asarray(adjusted_index(metric, sampled_values, sampled.num_candidates)),
    )
