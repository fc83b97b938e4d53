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
WGMR = prod_i r_i^(a_i), whose exact E and Var are products over the tasks
(:func:`~kgrank.evaluation.moments.product_of_task_powers`, the per-task-exponent form of
:func:`~kgrank.evaluation.moments.product_of_powers`, to which it reduces with equal
weights); IWGMR is the same with a_i -> -a_i.

The authors' code reports as "expected" value the WGMR of the expected ranks (N_i + 1)/2
(``RankCollector.get_expected``), which is not E[WGMR]: x^a is concave for 0 < a <= 1,
so E[r^a] <= E[r]^a (Jensen) and their plug-in value overstates the expectation whenever
some N_i > 1 carries weight (:func:`wgmr_at_expected_ranks`; tests/test_weighted.py shows
the Monte Carlo check rejecting it).

WGMR and IWGMR are registered (:data:`kgrank.evaluation.metrics.WEIGHTED_METRICS`; every
name :func:`~kgrank.evaluation.metrics.lookup` knows: ``wgmr``, ``awgmri``, ``z_iwgmr`` ...)
as metrics whose value and moments take weights, which the one evaluator
(:func:`~kgrank.evaluation.metrics.evaluate_ranks`) hands them; the default table
(:func:`~kgrank.evaluation.metrics.default_metrics`) has no weights and leaves them out.
This module holds the weight schemes, the authors' plug-in expectation and the Monte
Carlo check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from kgrank.defaults import WEIGHT_SCHEMES
from kgrank.errors import KgrankInputError
from kgrank.evaluation import moments as mom
from kgrank.evaluation.metrics import (
    INVERSE_WEIGHTED_GEOMETRIC_MEAN_RANK,
    WEIGHTED_GEOMETRIC_MEAN_RANK,
    WEIGHTED_METRICS,
    WeightedMetric,
    check_weights,
    evaluate_rank_table,
    log_weighted_mean,
)
from kgrank.evaluation.moments import Moments
from kgrank.evaluation.stats import seed_stream

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


def weighted_geometric_mean_rank(
    ranks: np.ndarray | Sequence[float], weights: np.ndarray | Sequence[float]
) -> np.ndarray | float:
    """exp(sum_i w_i ln r_i / sum_i w_i) of a rank vector, or of each row of a
    (replicates, n) array with one weight per column."""
    return WEIGHTED_GEOMETRIC_MEAN_RANK.value(ranks, weights)


# --- moments -------------------------------------------------------------------------------


def wgmr_at_expected_ranks(
    num_candidates: np.ndarray | Sequence[int], weights: np.ndarray | Sequence[float]
) -> float:
    """What the authors' code reports as the expected WGMR: the WGMR of the expected ranks
    (N_i + 1) / 2. Not E[WGMR], which it overstates (Jensen; see the module notes)."""
    expected_ranks = (np.asarray(num_candidates, dtype=float) + 1.0) / 2.0
    return float(weighted_geometric_mean_rank(expected_ranks, weights))


# --- the metrics of a rank table -----------------------------------------------------------


def evaluate_weighted_rank_table(
    table: pd.DataFrame,
    weights: str | np.ndarray | Sequence[float] = "negatives",
    metrics: Sequence[WeightedMetric] = WEIGHTED_METRICS,
) -> pd.DataFrame:
    """The weighted metrics of a rank table for side in {head, tail, both} and every rank
    type (:func:`kgrank.evaluation.metrics.evaluate_rank_table` with weights). ``weights`` is a
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
    at most ``chunk_elements`` ranks), evaluates both metrics on each, and compares and
    judges them as the moments study does (:func:`kgrank.evaluation.moments.compare_with_simulation`,
    :func:`kgrank.evaluation.moments.apply_familywise` at level ``alpha`` over all tests).
    ``analytic`` replaces the exact moments by key, e.g. to show that the check rejects a
    wrong value.
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
        log_means.append(np.atleast_1d(log_weighted_mean(ranks, fractions)))
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
