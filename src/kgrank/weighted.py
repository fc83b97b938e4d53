"""The weighted geometric mean rank (WGMR) and its inverse, with exact moments under the random model.

Definition. Tiwari, Bansal and Rivero (WWW 2021, "Revisiting the Evaluation Protocol of
Knowledge Graph Completion Methods for Link Prediction") weight each ranking task by
the number of negatives it is ranked against:

    WGMR = exp( sum_i w_i ln r_i / sum_i w_i ),    w_i = |C_S| or |C_O|,

where a task i is one side of one test triple (s, p, o), r_i its (fractional) rank and
C_S, C_O the sets of corrupted triples of the subject and object side (PyKEEN issue
#478 shows the printed formula; the authors' code, crrivero/www21 Code/Evaluator.py,
metric "mrh", sums ``totals[i] * log(ranks[i])`` and divides by the sum of ``totals``,
with ``totals[i] = len(get_corrupted(...))`` per side). The corrupted set is the
candidate set minus every known true answer, so in kgrank's terms the paper's weight is
per task, not per relation: w_i = N_i - 1 (:func:`negative_count_weights`), N_i being
``num_candidates`` (the true answer included). Harder tasks (more candidates) weigh more.
IWGMR = 1 / WGMR. Equal weights give the geometric mean rank (GMR) and its inverse.

Weights are relative importances: only w_i / sum_j w_j matters, and a zero weight drops a
task. They are not repeat counts: an integer weight 2 equals listing the rank twice in
the value, but under the random model a listed-twice task would draw two independent
ranks, so the moments differ (PyKEEN makes the same distinction for its weighted GMR,
PR #1558). A user supplies one nonnegative weight per rank (same order as ``ranks`` and
``num_candidates``), or names a scheme in :func:`scheme_weights`: ``negatives`` (the
paper's), ``relation`` (every relation the same total weight, a macro average over
relations; not from the paper, the macro weighting PyKEEN's weights were added for,
PR #837) or ``uniform`` (GMR).

Moments. With a_i = w_i / sum_j w_j and r_i independent and uniform on 1..N_i,
WGMR = prod_i r_i^(a_i), so by independence

    E[WGMR]   = prod_i E[r_i^(a_i)],    E[WGMR^2] = prod_i E[r_i^(2 a_i)],
    log E[r^s] = logsumexp_{k=1..N}(s ln k) - ln N,
    Var[WGMR] = E[WGMR]^2 (exp(sum_i [log E[r_i^(2 a_i)] - 2 log E[r_i^(a_i)]]) - 1),

all in log space (:func:`product_of_task_powers`); IWGMR is the same with a_i -> -a_i.
This is the per-task-exponent form of :func:`kgrank.moments.product_of_powers`
(one exponent 1/n for all tasks), to which it reduces with equal weights.

The authors' code reports as "expected" value the WGMR of the expected ranks (N_i + 1)/2
(``RankCollector.get_expected``), which is not E[WGMR]: x^a is concave for 0 < a <= 1,
so E[r^a] <= E[r]^a (Jensen) and their plug-in value overstates the expectation whenever
some N_i > 1 carries weight (:func:`wgmr_at_expected_ranks`; tests/test_weighted.py shows
the Monte Carlo check rejecting it).

Registry. WGMR is not in :func:`kgrank.metrics.default_metrics`: the registry's
``Metric.value(ranks)`` and ``moments_function(num_candidates)`` carry no weights, so
``evaluate_rank_table``, the moments lookup table and the sampling intervals would
compute it unweighted. The two :class:`WeightedMetric` objects here require weights
(without them they raise), keep the registry's naming of derived variants (via
:func:`kgrank.metrics.derive`), and are found by name with
``lookup_key("awgmri", WEIGHTED_METRICS)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kgrank import moments as mom
from kgrank.defaults import WEIGHT_SCHEMES
from kgrank.errors import KgrankInputError
from kgrank.metrics import IDENTITY, Metric, check_weights, evaluate_rank_table, evaluate_ranks
from kgrank.moments import Moments
from kgrank.stats import seed_stream

# --- weights -------------------------------------------------------------------------------


def negative_count_weights(num_candidates: np.ndarray | Sequence[int]) -> np.ndarray:
    """The paper's weights: per task the number of negatives (corrupted triples) its true
    answer is ranked against, |C_S| or |C_O| = N_i - 1 after filtering."""
    counts = np.asarray(num_candidates)
    if counts.size and (not np.all(np.isfinite(counts)) or counts.min() < 1):
        raise KgrankInputError(
            f"num_candidates: {counts.min()} is not a count of at least 1; recompute the candidate counts"
        )
    return counts.astype(float) - 1.0


def relation_balanced_weights(relations: np.ndarray | Sequence) -> np.ndarray:
    """1 / (number of tasks of the task's relation): every relation gets the same total
    weight, a macro average over relations (not the paper's scheme; see the module notes)."""
    relations = np.asarray(relations)
    if relations.size == 0:
        raise KgrankInputError("relations: no tasks; give one relation per rank")
    _, inverse, counts = np.unique(relations, return_inverse=True, return_counts=True)
    return 1.0 / counts[inverse.reshape(-1)].astype(float)


def scheme_weights(table: pd.DataFrame, scheme: str) -> np.ndarray:
    """One weight per row of a rank (or candidate-count) table by scheme name:
    ``negatives`` (num_candidates - 1, the paper's), ``relation`` (relation-balanced, from
    the ``relation`` column) or ``uniform`` (all 1: the unweighted GMR)."""
    if scheme == "negatives":
        return negative_count_weights(table["num_candidates"].to_numpy())
    if scheme == "relation":
        if "relation" not in table:
            raise KgrankInputError("weights 'relation': the table has no relation column; use a rank table")
        return relation_balanced_weights(table["relation"].to_numpy())
    if scheme == "uniform":
        return np.ones(len(table))
    raise KgrankInputError(f"unknown weight scheme {scheme!r}; use one of {', '.join(WEIGHT_SCHEMES)}")


# --- values --------------------------------------------------------------------------------


def _log_weighted_mean(ranks: np.ndarray, fractions: np.ndarray) -> np.ndarray | float:
    """sum_i a_i ln r_i along the last axis, for normalised weights a (no checks: the
    Monte Carlo loop calls it on millions of sampled ranks)."""
    result = np.log(ranks) @ fractions
    return float(result) if np.ndim(result) == 0 else result


def _checked(ranks: np.ndarray | Sequence[float], weights: np.ndarray | Sequence[float]) -> tuple:
    ranks = np.asarray(ranks, dtype=float)
    if ranks.ndim == 0:
        raise KgrankInputError(f"ranks: got the single number {float(ranks)}; give a vector of ranks")
    fractions = check_weights(weights, ranks.shape[-1])
    bad = ~np.isfinite(ranks) | (ranks < 1)
    if bad.any():
        raise KgrankInputError(
            f"ranks: {ranks[bad].flat[0]} is not a rank of at least 1; recompute the ranks"
        )
    return ranks, fractions / fractions.sum()


def weighted_geometric_mean_rank(
    ranks: np.ndarray | Sequence[float], weights: np.ndarray | Sequence[float]
) -> np.ndarray | float:
    """exp(sum_i w_i ln r_i / sum_i w_i) of a rank vector, or of each row of a
    (replicates, n) array with one weight per column."""
    ranks, fractions = _checked(ranks, weights)
    return np.exp(_log_weighted_mean(ranks, fractions))


def inverse_weighted_geometric_mean_rank(
    ranks: np.ndarray | Sequence[float], weights: np.ndarray | Sequence[float]
) -> np.ndarray | float:
    """1 / WGMR = exp(-sum_i w_i ln r_i / sum_i w_i)."""
    ranks, fractions = _checked(ranks, weights)
    return np.exp(-_log_weighted_mean(ranks, fractions))


# --- moments -------------------------------------------------------------------------------


def log_expected_powers(
    num_candidates: np.ndarray | Sequence[int],
    exponents: np.ndarray | Sequence[float],
    *,
    chunk_elements: int = 4_000_000,
) -> np.ndarray:
    """log E[r_i^(s_i)] for r_i uniform on 1..N_i, element-wise over tasks (exact sums).

    Computed as log1p(mean_{k<=N} expm1(s ln k)) rather than logsumexp_k(s ln k) - ln N:
    for the small per-task exponents of a weighted mean (s ~ 1/n) the result is ~ s E[ln r],
    and the logsumexp form gets it as the difference of two numbers near ln N, losing about
    log10(ln N / (s E[ln r])) digits; the variance needs the difference of two such results
    per task and kept only ~6 correct digits that way at FB15k-237's size (relative error
    6.5e-7 against 50-digit arithmetic; this form: 1.4e-11; tests/test_weighted.py checks
    it on a smaller case). Every expm1(s ln k) has the sign of s, so the mean has no
    cancellation, and |s| <= 2 keeps it far from overflow (E[r^2] <= N^2).
    Each distinct (N, s) pair is one row; the pairs are sorted by N and summed in chunks
    of at most ``chunk_elements`` terms. With one exponent for all tasks
    :func:`kgrank.moments.log_expected_power` is cheaper (a running sum serves every N).
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
    return Moments(expectation, max(variance, 0.0), mom.CLOSED_FORM)


def _moments(num_candidates: np.ndarray | Sequence[int], weights: np.ndarray | Sequence[float], sign: float):
    num_candidates = np.asarray(num_candidates)
    fractions = check_weights(weights, len(num_candidates))
    return product_of_task_powers(num_candidates, sign * fractions / fractions.sum())


def wgmr_moments(
    num_candidates: np.ndarray | Sequence[int], weights: np.ndarray | Sequence[float]
) -> Moments:
    """Exact E and Var of the weighted geometric mean rank under the random model."""
    return _moments(num_candidates, weights, 1.0)


def iwgmr_moments(
    num_candidates: np.ndarray | Sequence[int], weights: np.ndarray | Sequence[float]
) -> Moments:
    """Exact E and Var of the inverse weighted geometric mean rank under the random model."""
    return _moments(num_candidates, weights, -1.0)


def wgmr_at_expected_ranks(
    num_candidates: np.ndarray | Sequence[int], weights: np.ndarray | Sequence[float]
) -> float:
    """What the authors' code reports as the expected WGMR: the WGMR of the expected ranks
    (N_i + 1) / 2. Not E[WGMR], which it overstates (Jensen; see the module notes)."""
    expected_ranks = (np.asarray(num_candidates, dtype=float) + 1.0) / 2.0
    return float(weighted_geometric_mean_rank(expected_ranks, weights))


# --- the metrics, their rows and tables ---------------------------------------------------


def _needs_weights(key: str):
    def refuse(num_candidates: np.ndarray) -> Moments:
        raise KgrankInputError(
            f"metric {key}: needs one weight per rank; use kgrank.weighted.weighted_metric_rows"
        )

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
            raise KgrankInputError(
                f"metric {self.key}: needs one weight per rank; use kgrank.weighted.weighted_metric_rows"
            )
        ranks, fractions = _checked(ranks, weights)
        return np.exp(self.sign * _log_weighted_mean(ranks, fractions))

    def moments(
        self, num_candidates: np.ndarray, weights: np.ndarray | Sequence[float] | None = None
    ) -> Moments:
        if weights is None:
            _needs_weights(self.key)(num_candidates)
        return _moments(num_candidates, weights, self.sign)


WEIGHTED_GEOMETRIC_MEAN_RANK = WeightedMetric(
    key="weighted_geometric_mean_rank",
    label="WGMR",
    transform=IDENTITY,
    statistic="power mean",
    power=0.0,
    increasing=False,
    optimum=1.0,
    value_range=(1.0, np.inf),
    moments_function=_needs_weights("weighted_geometric_mean_rank"),
    synonyms=("wgmr",),
    sign=1.0,
)
INVERSE_WEIGHTED_GEOMETRIC_MEAN_RANK = WeightedMetric(
    key="inverse_weighted_geometric_mean_rank",
    label="IWGMR",
    transform=IDENTITY,
    statistic="power mean",
    power=0.0,
    post="reciprocal",
    increasing=True,
    optimum=1.0,
    value_range=(0.0, 1.0),
    moments_function=_needs_weights("inverse_weighted_geometric_mean_rank"),
    synonyms=("iwgmr",),
    sign=-1.0,
)
WEIGHTED_METRICS = (WEIGHTED_GEOMETRIC_MEAN_RANK, INVERSE_WEIGHTED_GEOMETRIC_MEAN_RANK)


def weighted_metric_rows(
    ranks: np.ndarray | Sequence[float],
    num_candidates: np.ndarray | Sequence[int],
    weights: np.ndarray | Sequence[float],
    metrics: Sequence[WeightedMetric] = WEIGHTED_METRICS,
) -> list[dict]:
    """Rows like :func:`kgrank.metrics.rows_for` for each weighted metric
    (:func:`kgrank.metrics.evaluate_ranks` with weights): the base value with its exact E,
    Var and method, then the expectation-normalised value, the adjusted index and the
    z-score with theirs (keys ``weighted_geometric_mean_rank``,
    ``adjusted_weighted_geometric_mean_rank_index``, ``z_inverse_weighted_geometric_mean_rank`` ...)."""
    ranks = np.asarray(ranks, dtype=float)
    return evaluate_ranks(ranks, num_candidates, metrics, weights=check_weights(weights, len(ranks)))


def evaluate_weighted_rank_table(
    table: pd.DataFrame,
    weights: str | np.ndarray | Sequence[float] = "negatives",
    metrics: Sequence[WeightedMetric] = WEIGHTED_METRICS,
) -> pd.DataFrame:
    """The weighted metrics of a rank table for side in {head, tail, both} and every rank
    type (:func:`kgrank.metrics.evaluate_rank_table` with weights). ``weights`` is a
    scheme name (:func:`scheme_weights`) or one weight per row of ``table``; a side uses
    its own rows' weights, renormalised."""
    given = scheme_weights(table, weights) if isinstance(weights, str) else weights
    return evaluate_rank_table(table, metrics, weights=check_weights(given, len(table)))


# --- Monte Carlo check ---------------------------------------------------------------------


def wgmr_montecarlo(
    num_candidates: np.ndarray | Sequence[int],
    weights: np.ndarray | Sequence[float],
    replicates: int = 10_000,
    seed: int = 0,
    *,
    alpha: float = 0.01,
    analytic: Mapping[str, Moments] | None = None,
    chunk_elements: int = 8_000_000,
) -> pd.DataFrame:
    """Simulated against exact mean and variance of WGMR and IWGMR, with verdicts.

    Draws ``replicates`` rank vectors of the random model on the given N_i (in chunks of
    at most ``chunk_elements`` ranks), evaluates both metrics on each, and compares as the
    moments study does (:func:`kgrank.moments.compare_with_simulation`): a z statistic of the
    simulated mean, the ratio of simulated to analytic variance with its standard error
    (from the fourth central moment, :func:`kgrank.moments.sample_mean_variance`), and a
    Bonferroni family-wise verdict at level ``alpha`` over all tests
    (:func:`kgrank.moments.apply_familywise`). ``analytic`` replaces the exact moments by
    key, e.g. to show that the check rejects a wrong value.
    """
    num_candidates = np.asarray(num_candidates)
    fractions = check_weights(weights, len(num_candidates))
    fractions = fractions / fractions.sum()
    if isinstance(replicates, bool) or int(replicates) != replicates or replicates < 2:
        raise KgrankInputError(f"replicates: {replicates!r} is not an integer of at least 2; give more")
    replicates = int(replicates)
    exact = {metric.key: metric.moments(num_candidates, fractions) for metric in WEIGHTED_METRICS}
    exact.update(analytic or {})
    # the stream of the moments study's check (seed_stream(seed, 1)), for the same reason:
    # a check must never reuse draws that produced what it checks
    generator = seed_stream(seed, 1)
    chunk = max(1, chunk_elements // len(num_candidates))
    log_means = []
    for start in range(0, replicates, chunk):
        ranks = mom.sample_ranks(generator, num_candidates.astype(float), min(chunk, replicates - start))
        log_means.append(np.atleast_1d(_log_weighted_mean(ranks, fractions)))
    log_mean = np.concatenate(log_means)
    simulated = {
        WEIGHTED_GEOMETRIC_MEAN_RANK.key: np.exp(log_mean),
        INVERSE_WEIGHTED_GEOMETRIC_MEAN_RANK.key: np.exp(-log_mean),
    }
    tests = 2 * len(simulated)
    rows = [
        mom.compare_with_simulation(key, exact[key], sample, tests=tests, alpha=alpha)
        for key, sample in simulated.items()
    ]
    return mom.apply_familywise(pd.DataFrame(rows), alpha)
