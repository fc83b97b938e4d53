"""Sampled-negative ranks and estimators of the full metrics (kgrank.evaluation.sampled), against brute
force over every k-subset of negatives, the rank engine's own sampler, and simulation."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import optimize, stats

from kgrank.engine.ranks import sampled_ranks
from kgrank.errors import KgrankInputError
from kgrank.evaluation import sampled as sm

DATA = Path(__file__).parent / "data"


def exact_moments(metric, full, num_samples, estimator="corrected", **options) -> sm.ExactMoments:
    """E and Var of one estimator of one metric over the draw: estimator_moments for one pair."""
    (moments,) = sm.estimator_moments(full, num_samples, [estimator], [metric], **options).values()
    return moments


def mixture_ranks(num_tasks: int, low: int, high: int, seed: int) -> sm.FullRanks:
    """Full ranks with MRR about 0.3 and N_i varying in [low, high): a fifth at rank 1, a
    fifth uniform, the rest 1 + geometric(0.15); one tie block of 3 in every tenth task."""
    rng = np.random.default_rng(seed)
    num_candidates = rng.integers(low, high, num_tasks)
    optimistic = np.where(
        rng.random(num_tasks) < 0.2, 1, np.minimum(num_candidates, 1 + rng.geometric(0.15, num_tasks))
    )
    uniform = rng.random(num_tasks) < 0.2
    optimistic = np.where(uniform, rng.integers(1, num_candidates + 1), optimistic)
    tied = np.where(np.arange(num_tasks) % 10 == 0, 2, 0)
    pessimistic = np.minimum(num_candidates, optimistic + tied)
    return sm.FullRanks.of(optimistic, pessimistic, num_candidates)


def estimator_quality(estimates: np.ndarray, full_value: float) -> SimpleNamespace:
    """Mean, bias (with its standard error over replicates) and variance of replicate
    estimates of ``full_value``."""
    estimates = np.asarray(estimates, dtype=float).ravel()
    variance = float(np.var(estimates, ddof=1))
    return SimpleNamespace(
        mean=float(estimates.mean()),
        bias=float(estimates.mean() - full_value),
        bias_standard_error=float(np.sqrt(variance / estimates.size)),
        variance=variance,
    )


def enumerated_law(scores_above: int, scores_tied: int, negatives: int, draws: int) -> dict:
    """P(sampled optimistic, sampled pessimistic) by listing every ``draws``-subset of negatives
    labelled above / tied / below the true answer."""
    labels = ["above"] * scores_above + ["tied"] * scores_tied
    labels += ["below"] * (negatives - len(labels))
    law: dict[tuple[int, int], float] = {}
    subsets = list(itertools.combinations(range(negatives), draws))
    for subset in subsets:
        above = sum(labels[index] == "above" for index in subset)
        tied = sum(labels[index] == "tied" for index in subset)
        key = (1 + above, 1 + above + tied)
        law[key] = law.get(key, 0.0) + 1.0 / len(subsets)
    return law


# --- the law of a sampled rank ---------------------------------------------------------------------


def test_hypergeometric_pmf_equals_scipys():
    negatives, draws = 40, 9
    drawn = np.arange(-1, draws + 2)[None, :]
    above = np.arange(negatives + 1)[:, None]
    np.testing.assert_allclose(
        sm.hypergeometric_pmf(drawn, negatives, above, draws),
        stats.hypergeom.pmf(drawn, negatives, above, draws),
        rtol=1e-11,
        atol=1e-300,
    )


@pytest.mark.parametrize(("optimistic", "pessimistic"), [(1, 1), (3, 3), (2, 5), (4, 8), (8, 8)])
def test_sampled_law_equals_enumeration_of_every_subset(optimistic, pessimistic):
    num_candidates, draws = 8, 3
    law = enumerated_law(optimistic - 1, pessimistic - optimistic, num_candidates - 1, draws)
    for rank_type, position in (("optimistic", 0), ("pessimistic", 1)):
        marginal = np.zeros(draws + 1)
        for key, probability in law.items():
            marginal[key[position] - 1] += probability
        full = optimistic if rank_type == "optimistic" else pessimistic
        exact = sm.sampled_rank_probabilities(np.array([full]), np.array([num_candidates]), np.array([draws]))
        np.testing.assert_allclose(exact[0], marginal, atol=1e-12)
    # the sampler draws the joint law: chi-square over the (optimistic, pessimistic) cells
    full = sm.FullRanks.of([optimistic] * 400, [pessimistic] * 400, [num_candidates] * 400)
    sampled = sm.sample_ranks_from_full(full, draws, seed=3, replicates=10)
    pairs = pd.Series(list(zip(sampled.optimistic.ravel(), sampled.pessimistic.ravel(), strict=True)))
    observed = pairs.value_counts()
    assert set(observed.index) <= set(law)
    cells = sorted(law)
    counts = np.array([observed.get(cell, 0) for cell in cells])
    expected = np.array([law[cell] for cell in cells]) * counts.sum()
    if len(cells) > 1:
        assert stats.chisquare(counts, expected).pvalue > 1e-3


def test_sampler_draws_the_rank_engines_law():
    """kgrank.engine.ranks.sampled_ranks on a score row (ties, filtered candidates) and
    sample_ranks_from_full on that row's full ranks draw the same distribution."""
    num_entities, true_entity, num_samples, rows = 60, 0, 12, 3000
    rng = np.random.default_rng(0)
    scores = torch.tensor(rng.normal(size=num_entities), dtype=torch.float64)
    scores[true_entity] = 0.3
    scores[1:4] = 0.3  # three candidates tied with the true answer
    block = scores.repeat(rows, 1)
    block[:, [50, 51, 52, 53]] = float("nan")  # known answers, filtered
    admissible = ~torch.isnan(block[0])
    full_optimistic = 1 + int((block[0][admissible] > 0.3).sum())
    full_pessimistic = int((block[0][admissible] >= 0.3).sum())
    num_candidates = int(admissible.sum())
    engine = sampled_ranks(
        block, torch.full((rows,), true_entity), np.arange(rows), "tail", num_samples, seed=11
    )
    assert (engine["num_candidates"] == num_samples + 1).all()
    full = sm.FullRanks.of([full_optimistic], [full_pessimistic], [num_candidates])
    ours = sm.sample_ranks_from_full(full, num_samples, seed=11, replicates=rows)
    for rank_type, full_rank in (("optimistic", full_optimistic), ("pessimistic", full_pessimistic)):
        pmf = sm.sampled_rank_probabilities(
            np.array([full_rank]), np.array([num_candidates]), np.array([12])
        )[0]
        for sample in (engine[rank_type], ours.ranks(rank_type)[:, 0]):
            counts = np.bincount(sample - 1, minlength=num_samples + 1)
            kept = pmf * rows >= 5  # pool the sparse tail into one cell
            observed = np.append(counts[kept], counts[~kept].sum())
            expected = np.append(pmf[kept], pmf[~kept].sum()) * rows
            assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_sampling_is_seeded_per_replicate():
    full = mixture_ranks(300, 50, 90, seed=1)
    first = sm.sample_ranks_from_full(full, 20, seed=5, replicates=4)
    again = sm.sample_ranks_from_full(full, 20, seed=5, replicates=2)
    np.testing.assert_array_equal(first.optimistic[:2], again.optimistic)
    np.testing.assert_array_equal(first.pessimistic[:2], again.pessimistic)
    other = sm.sample_ranks_from_full(full, 20, seed=6, replicates=2)
    assert not np.array_equal(other.optimistic, again.optimistic)
    assert not np.array_equal(first.optimistic[0], first.optimistic[1])
    # a task with no more negatives than num_samples keeps them all: its full rank
    small = sm.FullRanks.of([3, 2, 40], [4, 2, 40], [5, 3, 60])
    kept = sm.sample_ranks_from_full(small, 10, seed=0, replicates=3)
    np.testing.assert_array_equal(kept.num_candidates, [5, 3, 11])
    np.testing.assert_array_equal(kept.optimistic[:, :2], [[3, 2]] * 3)
    np.testing.assert_array_equal(kept.pessimistic[:, :2], [[4, 2]] * 3)
    assert (kept.optimistic[:, 2] <= 11).all()


# --- estimators: exact moments against brute force and simulation ----------------------------------


def brute_force_moments(full: sm.FullRanks, draws: int, values_of) -> tuple[float, float]:
    """E and Var of mean_i f~_i(S_i) by listing every subset of every task's negatives."""
    means, variances = [], []
    for optimistic, count in zip(full.optimistic, full.num_candidates, strict=True):
        law = enumerated_law(int(optimistic) - 1, 0, int(count) - 1, min(draws, int(count) - 1))
        values = values_of(int(count), min(draws, int(count) - 1))
        mean = sum(probability * values[key[0] - 1] for key, probability in law.items())
        second = sum(probability * values[key[0] - 1] ** 2 for key, probability in law.items())
        means.append(mean)
        variances.append(second - mean**2)
    return float(np.mean(means)), float(np.sum(variances) / len(means) ** 2)


@pytest.mark.parametrize(
    ("estimator", "regularisation"),
    [("naive", 0.0), ("rescaled", 0.0), ("posterior-rank", 0.0), ("corrected", 0.0), ("corrected", 0.3)],
)
@pytest.mark.parametrize("block", [2, sm.TASK_BLOCK])
def test_exact_moments_equal_brute_force(estimator, regularisation, block, monkeypatch):
    # in blocks of 2 tasks and in one; the task with N = 3 keeps all its negatives (summed directly)
    monkeypatch.setattr(sm, "TASK_BLOCK", block)
    full = sm.FullRanks.of([1, 2, 5, 7, 3, 1, 6], None, [6, 7, 7, 8, 5, 3, 6])
    draws = 3

    def values_of(count: int, draw: int) -> np.ndarray:
        sampled = np.arange(1, draw + 2, dtype=float)
        if estimator == "naive":
            return 1.0 / sampled
        if estimator == "rescaled":
            return 1.0 / (1 + (sampled - 1) * (count - 1) / draw)
        if estimator == "posterior-rank":
            return (draw + 2.0) / ((count + 1) * sampled)  # 1 / ((N + 1) s / (k + 2))
        return sm.correction("mrr", count, draw, regularisation=regularisation)

    expectation, variance = brute_force_moments(full, draws, values_of)
    exact = exact_moments("mrr", full, draws, estimator, regularisation=regularisation)
    both = sm.estimator_moments(full, draws, [estimator], ["mrr", "hits@3"], regularisation=regularisation)
    assert both[(estimator, "inverse_harmonic_mean_rank")] == exact
    assert exact.expectation == pytest.approx(expectation, abs=1e-12)
    assert exact.variance == pytest.approx(variance, abs=1e-12)
    assert exact.full_value == pytest.approx(np.mean(1.0 / full.optimistic))


@pytest.mark.parametrize("regularisation", [0.0, 0.2, 0.7, 1.0])
@pytest.mark.parametrize("metric", ["mrr", "hits_at_2"])
def test_correction_minimises_krichene_rendles_criterion(metric, regularisation):
    """The solver against a generic optimiser of sum_r p(r) [bias_r^2 + gamma Var_r], with
    the matrix P(S = s | r) enumerated over every subset, under a non-uniform prior (the
    uniform one of :func:`correction` is a special case)."""
    num_candidates, draws = 9, 3
    prior_weights = np.linspace(3.0, 1.0, num_candidates)
    transform = sm.mean_metric(metric).transform.function
    target = transform(np.arange(1, num_candidates + 1, dtype=float))
    matrix = np.zeros((num_candidates, draws + 1))
    for rank in range(1, num_candidates + 1):
        for (sampled, _), probability in enumerated_law(rank - 1, 0, num_candidates - 1, draws).items():
            matrix[rank - 1, sampled - 1] += probability
    weights = prior_weights / prior_weights.sum()

    def criterion(values: np.ndarray) -> float:
        mean = matrix @ values
        variance = matrix @ values**2 - mean**2
        return float(weights @ ((mean - target) ** 2 + regularisation * variance))

    best = optimize.minimize(criterion, np.zeros(draws + 1), method="BFGS", options={"gtol": 1e-12})
    solved = sm._solve_correction(transform, num_candidates, draws, regularisation, prior_weights)
    assert criterion(solved) <= best.fun + 1e-10
    np.testing.assert_allclose(solved, best.x, atol=1e-5)


def test_rescaled_rank_is_unbiased_and_the_posterior_rank_is_the_posterior_mean():
    # mean rank: f(r) = r lies in the span of the hypergeometric columns (a polynomial of
    # degree 1 in r), so the minimal-bias correction is exact and equals the rescaled rank
    num_candidates, draws = 30, 7
    sampled = np.arange(1, draws + 2)
    rescaled = 1 + (sampled - 1) * (num_candidates - 1) / draws
    np.testing.assert_allclose(
        sm.correction("arithmetic_mean_rank", num_candidates, draws), rescaled, rtol=1e-9
    )
    full = mixture_ranks(200, 20, 40, seed=2)
    assert exact_moments("arithmetic_mean_rank", full, 7, "rescaled").bias == pytest.approx(0, abs=1e-9)
    # gamma = 1 gives E[f(r) | S = s] under the prior: for f(r) = r, uniform prior, the
    # closed form (N + 1) s / (k + 2) of the posterior-rank estimator; checked against scipy
    ranks = np.arange(1, num_candidates + 1)[:, None]
    likelihood = stats.hypergeom.pmf(sampled[None, :] - 1, num_candidates - 1, ranks - 1, draws)
    posterior_mean = (ranks * likelihood).sum(axis=0) / likelihood.sum(axis=0)
    np.testing.assert_allclose(posterior_mean, (num_candidates + 1) * sampled / (draws + 2), rtol=1e-12)
    np.testing.assert_allclose(
        sm.correction("arithmetic_mean_rank", num_candidates, draws, regularisation=1.0), posterior_mean
    )


def test_naive_expectation_exact_versus_simulation():
    full = mixture_ranks(400, 60, 120, seed=3)
    replicates = 400
    sampled = sm.sample_ranks_from_full(full, 25, seed=0, replicates=replicates)
    for estimator, rank_type in (
        ("naive", "optimistic"),
        ("naive", "pessimistic"),
        ("rescaled", "optimistic"),
    ):
        for metric in ("mrr", "hits_at_10"):
            exact = exact_moments(metric, full, 25, estimator, rank_type=rank_type)
            quality = estimator_quality(
                sm.estimate(metric, sampled, estimator, rank_type=rank_type), exact.full_value
            )
            standard_error = np.sqrt(exact.variance / replicates)
            assert abs(quality.mean - exact.expectation) < 4 * standard_error
            # the sample variance of 400 replicates: within 30% of the exact variance (chi-square, 400 df)
            assert quality.variance == pytest.approx(exact.variance, rel=0.3)
    # the naive sampled MRR overstates the full one by far more than its sampling noise
    naive = exact_moments("mrr", full, 25, "naive")
    assert naive.bias > 20 * np.sqrt(naive.variance)


def test_corrected_estimator_is_nearly_unbiased_where_the_theory_says():
    """With k_i >= N_i / 3 the hypergeometric columns span polynomials of degree k_i in r,
    which fit 1/r on 1..N_i closely: the least-squares correction's bias (its residual,
    computed exactly) is negligible, and the simulated mean hits the full MRR."""
    full = mixture_ranks(500, 30, 40, seed=4)
    draws, replicates = 15, 300
    corrected = exact_moments("mrr", full, draws, "corrected")
    naive = exact_moments("mrr", full, draws, "naive")
    assert abs(corrected.bias) < 1e-3 * abs(naive.bias)
    sampled = sm.sample_ranks_from_full(full, draws, seed=9, replicates=replicates)
    quality = estimator_quality(sm.estimate("mrr", sampled, "corrected"), corrected.full_value)
    assert abs(quality.bias) < 4 * quality.bias_standard_error
    naive_quality = estimator_quality(sm.estimate("mrr", sampled, "naive"), naive.full_value)
    assert naive_quality.bias > 30 * naive_quality.bias_standard_error
    # the bias-variance trade-off: gamma buys variance with bias, monotonically
    moments = [exact_moments("mrr", full, draws, "corrected", regularisation=g) for g in (0.0, 0.1, 1.0)]
    assert moments[0].variance > moments[1].variance > moments[2].variance
    assert abs(moments[0].bias) < abs(moments[1].bias) < abs(moments[2].bias) < abs(naive.bias)


# --- comparing systems, and the adjusted index ----------------------------------------------------


def test_order_agreement_and_a_reversal_of_two_systems():
    assert (
        sm.order_agreement(0.5, 0.4, np.array([0.6, 0.3, 0.2, 0.1]), np.array([0.5, 0.4, 0.2, 0.0])) == 0.625
    )
    # Krichene & Rendle's inconsistency: a (30% at rank 1, the rest last) beats b (every
    # answer at rank 20) on the full MRR; with 10 sampled negatives b wins almost always
    num_candidates = np.full(400, 1000)
    system_a = sm.FullRanks.of(np.where(np.arange(400) < 120, 1, 1000), None, num_candidates)
    system_b = sm.FullRanks.of(np.full(400, 20), None, num_candidates)
    full_a = exact_moments("mrr", system_a, 10, "naive")
    full_b = exact_moments("mrr", system_b, 10, "naive")
    assert full_a.full_value > full_b.full_value and full_a.expectation < full_b.expectation
    estimates = [
        sm.estimate("mrr", sm.sample_ranks_from_full(system, 10, seed=1, replicates=50), "naive")
        for system in (system_a, system_b)
    ]
    assert sm.order_agreement(full_a.full_value, full_b.full_value, *estimates) == 0.0


def test_adjusted_index_under_sampling_at_both_ends_exactly():
    """A random system (r_i uniform on 1..N_i) has sampled ranks uniform on 1..k_i + 1, so its
    expected sampled adjusted index is 0, as its full one is; a perfect system has 1 and 1.
    The raw MRR moves from H_N/N to H_(k+1)/(k+1) instead."""
    num_candidates = np.repeat(np.arange(40, 60), 20)
    random_ranks = np.concatenate([np.arange(1, n + 1) for n in range(40, 60)])
    random_counts = np.repeat(np.arange(40, 60), np.arange(40, 60))
    random_system = sm.FullRanks.of(random_ranks, None, random_counts)
    naive = exact_moments("mrr", random_system, 9, "naive")
    sampled_counts = np.full(len(random_ranks), 10)
    assert float(sm.adjusted_index("mrr", naive.expectation, sampled_counts)) == pytest.approx(0, abs=1e-12)
    assert float(sm.adjusted_index("mrr", naive.full_value, random_counts)) == pytest.approx(0, abs=1e-12)
    assert naive.expectation - naive.full_value > 0.2  # the raw MRR drifts upwards
    perfect = sm.FullRanks.of(np.ones(len(num_candidates), dtype=int), None, num_candidates)
    comparison = sm.adjusted_under_sampling("mrr", perfect, sm.sample_ranks_from_full(perfect, 9, 0, 3))
    assert comparison.full_index == 1.0 and (comparison.sampled_indices == 1.0).all()


def nations_rank_table() -> pd.DataFrame:
    """tests/data's DistMult ranks on Nations with each task's filtered candidate count, from
    the splits inside the pykeen wheel (train, valid and test answers filtered)."""
    package = Path(importlib.util.find_spec("pykeen").submodule_search_locations[0])
    splits = [
        pd.read_csv(
            package / "datasets" / "nations" / f"{name}.txt", sep="\t", names=["head", "relation", "tail"]
        )
        for name in ("train", "valid", "test")
    ]
    known = pd.concat(splits).drop_duplicates()
    num_entities = len(pd.unique(pd.concat([known["head"], known["tail"]])))
    ranks = pd.read_csv(DATA / "external-nations" / "ranks.csv")
    tail_answers = known.groupby(["head", "relation"]).size().rename("tail_answers")
    head_answers = known.groupby(["relation", "tail"]).size().rename("head_answers")
    ranks = ranks.join(tail_answers, on=["head", "relation"]).join(head_answers, on=["relation", "tail"])
    answers = np.where(ranks["side"] == "head", ranks["head_answers"], ranks["tail_answers"])
    return ranks.assign(num_candidates=num_entities - answers + 1)


@pytest.mark.parametrize("source", ["synthetic", "nations"])
def test_adjusted_index_under_sampling_measured(source):
    """The sampled adjusted index against the full one, and the sampled raw MRR against the
    full one, on a synthetic system and on a trained model's ranks: the distances are
    computed exactly (per-task expectations) and by simulation, which must agree."""
    if source == "synthetic":
        full, draws = mixture_ranks(1000, 500, 2000, seed=5), 50
    else:
        full, draws = sm.FullRanks.from_table(nations_rank_table()), 3
    sampled = sm.sample_ranks_from_full(full, draws, seed=2, replicates=200)
    comparison = sm.adjusted_under_sampling("mrr", full, sampled)
    naive = exact_moments("mrr", full, draws, "naive")
    assert comparison.full_value == pytest.approx(naive.full_value)
    assert comparison.sampled_values.mean() == pytest.approx(
        naive.expectation, abs=4 * np.sqrt(naive.variance / 200)
    )
    # the index is an affine map of the sampled MRR with the sampled counts' expectation
    expectation = sm.mean_metric("mrr").moments(sampled.num_candidates).expectation
    np.testing.assert_allclose(
        comparison.sampled_indices, (comparison.sampled_values - expectation) / (1 - expectation)
    )
    # an affine map: the mean index is the index of the mean, and that of the exact expectation
    # lies within the simulation's error
    mean_index = float(sm.adjusted_index("mrr", comparison.sampled_values.mean(), sampled.num_candidates))
    assert comparison.sampled_indices.mean() == pytest.approx(mean_index, abs=1e-12)
    exact_index = float(sm.adjusted_index("mrr", naive.expectation, sampled.num_candidates))
    assert mean_index == pytest.approx(exact_index, abs=4 * np.sqrt(naive.variance / 200) / (1 - expectation))


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: sm.FullRanks.of([1, 5], None, [4, 4]), r"^optimistic rank 5 of task 1 is outside \[1, 4\]"),
        (lambda: sm.FullRanks.of([0], None, [4]), r"^optimistic rank 0 of task 0 is outside \[1, 4\]"),
        (lambda: sm.FullRanks.of([2], [1], [4]), r"^pessimistic rank 1 of task 0 is outside \[2, 4\]"),
        (lambda: sm.FullRanks.of([1.5], None, [4]), r"^optimistic rank 1.5 at position 0 is not an integer"),
        (
            lambda: sm.sample_ranks_from_full(sm.FullRanks.of([1, 2], None, [5, 9]), 8, 0),
            r"^num_samples 8: the larg",
        ),
        (
            lambda: sm.sample_ranks_from_full(sm.FullRanks.of([1], None, [9]), 0, 0),
            r"^num_samples 0 must be a positive",
        ),
        (
            lambda: sm.sample_ranks_from_full(sm.FullRanks.of([1], None, [9]), 2, 0, 0),
            r"^replicates 0 must be",
        ),
        (
            lambda: exact_moments("mrr", sm.FullRanks.of([1], None, [9]), 2, "wrong"),
            r"^estimator 'wrong' is not",
        ),
        (
            lambda: exact_moments("mrr", sm.FullRanks.of([1], None, [9]), 2, rank_type="realistic"),
            r"^rank type 'realistic' is not one of optimistic, pessimistic",
        ),
        (lambda: sm.correction("mrr", 9, 2, regularisation=1.5), r"^regularisation 1.5 is outside \[0, 1\]"),
        (lambda: sm.correction("median_rank", 9, 2), r"^metric median_rank is not an arithmetic mean"),
        (lambda: sm.FullRanks.from_table(pd.DataFrame({"optimistic": [1]})), r"^rank table lacks column"),
        (
            lambda: sm.order_agreement(0.3, 0.3, np.ones(2), np.ones(2)),
            r"^both systems have the full-ranking",
        ),
    ],
)
def test_bad_input_is_refused_in_one_line(call, message):
    with pytest.raises(KgrankInputError, match=message) as error:
        call()
    assert "\n" not in str(error.value)
