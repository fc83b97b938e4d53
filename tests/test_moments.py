"""kgrank.evaluation.moments: moments of rank statistics under the random model."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from kgrank.evaluation.moments import (
    DELTA_MAX_CV,
    Moments,
    SamplingRequest,
    delta_method,
    harmonic_number,
    log_expected_power,
    median_and_deviation,
    median_moments_iid,
    product_of_powers,
    rank_variance_moments,
    sample_mean_variance,
    sampled_moments_of_subsets,
    task_counts,
)


def test_harmonic_numbers_against_sums():
    for n in (1, 2, 7, 100):
        assert harmonic_number(np.array([n]))[0] == pytest.approx(sum(1 / k for k in range(1, n + 1)))
        assert harmonic_number(np.array([n]), 2)[0] == pytest.approx(sum(1 / k**2 for k in range(1, n + 1)))


def test_task_counts():
    values, counts = task_counts(np.array([5, 3, 5, 5, 1]))
    assert values.tolist() == [1, 3, 5] and counts.tolist() == [1, 1, 3]


@pytest.mark.parametrize("exponent", [-1.0, -0.25, 0.5, 2.0])
def test_log_expected_power_against_sums(exponent):
    values = np.array([1, 2, 9, 40])
    expected = [np.log(np.mean(np.arange(1, n + 1, dtype=float) ** exponent)) for n in values]
    np.testing.assert_allclose(log_expected_power(values, exponent), expected, rtol=1e-12)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 6).flatmap(
        lambda rows: st.lists(
            st.lists(st.integers(1, 60), min_size=rows, max_size=rows), min_size=1, max_size=80
        ).map(lambda columns: np.array(columns, dtype=float).T)
    )
)
def test_sampled_median_and_deviation_equal_numpy_and_scipy(ranks):
    """The integer sort gives numpy's and scipy's values, rows of odd and even length alike."""
    summary = median_and_deviation(ranks)
    np.testing.assert_array_equal(summary[:, 0], np.median(ranks, axis=-1))
    np.testing.assert_array_equal(summary[:, 1], stats.median_abs_deviation(ranks, axis=-1))


@pytest.mark.parametrize(("num_candidates", "n"), [(14, 401), (14_505, 40_876), (40_559, 5_848)])
def test_rank_variance_moments_reduce_to_the_iid_textbook_form(num_candidates, n):
    """With one N the general (per-task N_i) form must give the i.i.d. results for the
    biased sample variance V = (n-1)/n S^2: E[V] = (n-1)/n sigma^2 and
    Var[V] = ((n-1)/n)^2 (mu_4 - (n-3)/(n-1) sigma^4) / n, at the sizes of real datasets."""
    size = float(num_candidates)
    sigma2 = (size**2 - 1) / 12
    mu4 = (size**2 - 1) * (3 * size**2 - 7) / 240
    moments = rank_variance_moments(np.full(n, num_candidates))
    assert moments.expectation == pytest.approx((n - 1) / n * sigma2, rel=1e-12)
    expected_variance = ((n - 1) / n) ** 2 * (mu4 - (n - 3) / (n - 1) * sigma2**2) / n
    assert moments.variance == pytest.approx(expected_variance, rel=1e-9)


def test_median_moments_iid_against_enumeration():
    import itertools

    outcomes = np.array(list(itertools.product(range(1, 6), repeat=3)), dtype=float)
    medians = np.median(outcomes, axis=1)
    moments = median_moments_iid(5, 3)
    assert moments.expectation == pytest.approx(medians.mean(), rel=1e-12)
    assert moments.variance == pytest.approx(medians.var(), rel=1e-12)
    inverse = median_moments_iid(5, 3, lambda x: 1 / x)
    assert inverse.expectation == pytest.approx((1 / medians).mean(), rel=1e-12)
    with pytest.raises(ValueError, match="odd number"):
        median_moments_iid(5, 4)


def test_delta_method_samples_where_the_expansion_is_too_coarse():
    statistic = np.mean
    tight = delta_method(
        Moments(10.0, (0.5 * DELTA_MAX_CV * 10) ** 2, "closed form"),
        lambda x: 1 / x,
        lambda x: -1 / x**2,
        lambda x: 2 / x**3,
        num_candidates=np.array([3]),
        statistic=statistic,
    )
    assert isinstance(tight, Moments) and tight.method == "delta method (2nd order) on closed form"
    variance = (0.5 * DELTA_MAX_CV * 10) ** 2
    assert tight.expectation == pytest.approx(0.1 + variance / 1000)
    assert tight.variance == pytest.approx(variance / 10**4)
    loose = delta_method(
        Moments(10.0, (2 * DELTA_MAX_CV * 10) ** 2, "closed form"),
        lambda x: 1 / x,
        lambda x: -1 / x**2,
        lambda x: 2 / x**3,
        num_candidates=np.array([3]),
        statistic=statistic,
    )
    assert loose == SamplingRequest(statistic)


def test_sample_mean_variance_and_their_errors():
    sample = np.random.default_rng(0).normal(3.0, 2.0, 100_000)
    mean, variance = sample_mean_variance(sample)
    assert mean.estimate == pytest.approx(sample.mean())
    assert variance.estimate == pytest.approx(sample.var(ddof=1))
    assert mean.error == pytest.approx(2.0 / np.sqrt(100_000), rel=0.02)
    # normal: Var of the sample variance is 2 sigma^4 / R
    assert variance.error == pytest.approx(np.sqrt(2 * 16 / 100_000), rel=0.05)


def test_sampled_subsets_are_views_of_one_seeded_draw():
    num_candidates = np.concatenate([np.full(50, 10), np.full(50, 1000)])
    mean_rank = SamplingRequest(lambda ranks: ranks.mean(axis=-1))
    requests = {
        "head": (slice(0, 50), {"mr": mean_rank}),
        "tail": (np.arange(50, 100), {"mr": mean_rank}),
        "both": (None, {"mr": mean_rank}),
    }
    first = sampled_moments_of_subsets(num_candidates, requests, replicates=3000, seed=1)
    again = sampled_moments_of_subsets(num_candidates, requests, replicates=3000, seed=1, chunk_elements=1000)
    assert first == again  # chunking does not change the stream
    for side, size in (("head", 10), ("tail", 1000)):
        moments = first[side]["mr"]
        assert moments.method.startswith("sampling (R=3000")
        expected_variance = (size**2 - 1) / 12 / 50
        assert abs(moments.expectation - (size + 1) / 2) < 5 * np.sqrt(expected_variance / 3000)
        assert moments.expectation_error == pytest.approx(np.sqrt(moments.variance / 3000))
    both = first["both"]["mr"]
    assert abs(both.expectation - (5.5 + 500.5) / 2) < 5 * both.expectation_error


# --- best_rank_moments: the best rank of R relevant among M + R items in random order ---


def _enumerated_best_rank(transform, num_other: int, num_relevant: int) -> tuple[float, float]:
    """E[f(K)], E[f(K)^2] by listing every placement of the relevant items (all equally likely)."""
    from itertools import combinations

    size = num_other + num_relevant
    values = [
        float(transform(np.array([min(places) + 1.0]))[0])
        for places in combinations(range(size), num_relevant)
    ]
    values = np.array(values)
    return float(values.mean()), float((values**2).mean())


@pytest.mark.parametrize("transform", [lambda k: k, lambda k: 1.0 / k, lambda k: (k <= 2).astype(float)])
def test_best_rank_moments_equal_enumeration(transform):
    from kgrank.evaluation.moments import best_rank_moments

    pairs = [(0, 1), (0, 3), (1, 1), (3, 2), (4, 4), (6, 3), (7, 1)]
    num_other = np.array([m for m, _ in pairs])
    num_relevant = np.array([r for _, r in pairs])
    first, second = best_rank_moments(transform, num_other, num_relevant)
    for index, (m, r) in enumerate(pairs):
        expected_first, expected_second = _enumerated_best_rank(transform, m, r)
        assert first[index] == pytest.approx(expected_first, rel=1e-12)
        assert second[index] == pytest.approx(expected_second, rel=1e-12)


def test_best_rank_moments_by_hand():
    from kgrank.evaluation.moments import best_rank_moments

    # M = 3, R = 2: P(K = 1..4) = 2/5, 3/10, 1/5, 1/10
    first, second = best_rank_moments(lambda k: k, np.array([3]), np.array([2]))
    assert first[0] == pytest.approx(0.4 + 0.6 + 0.6 + 0.4)
    assert second[0] == pytest.approx(0.4 + 1.2 + 1.8 + 1.6)


def test_best_rank_moments_with_one_relevant_are_uniform():
    from kgrank.evaluation.moments import best_rank_moments

    num_other = np.array([0, 1, 9, 120, 14_000])
    for transform in (lambda k: k, lambda k: 1.0 / k, lambda k: (k <= 10).astype(float)):
        first, second = best_rank_moments(transform, num_other, np.ones_like(num_other))
        for index, m in enumerate(num_other):
            support = transform(np.arange(1, m + 2, dtype=float))
            assert first[index] == pytest.approx(support.mean(), rel=1e-10)
            assert second[index] == pytest.approx((support**2).mean(), rel=1e-10)


def test_best_rank_moments_agree_with_simulation():
    from kgrank.evaluation.moments import best_rank_moments

    generator = np.random.default_rng(7)
    num_other, num_relevant, replicates = 500, 7, 40_000
    # the best rank is 1 + the smallest of R distinct positions among M + R, minus nothing:
    # draw the positions of the relevant items as a random subset
    keys = generator.random((replicates, num_other + num_relevant))
    positions = np.argsort(keys, axis=1)[:, :num_relevant]
    best = positions.min(axis=1) + 1.0
    values = 1.0 / best
    first, second = best_rank_moments(lambda k: 1.0 / k, np.array([num_other]), np.array([num_relevant]))
    standard_error = values.std(ddof=1) / np.sqrt(replicates)
    assert abs(values.mean() - first[0]) < 4 * standard_error
    assert values.var(ddof=1) == pytest.approx(second[0] - first[0] ** 2, rel=0.05)


def test_best_rank_moments_keep_the_task_shape_and_refuse_bad_counts():
    from kgrank.evaluation.moments import best_rank_moments

    first, second = best_rank_moments(lambda k: k, np.array([[2, 2], [5, 0]]), np.array([[1, 1], [2, 1]]))
    assert first.shape == (2, 2) and first[0, 0] == first[0, 1] == pytest.approx(2.0)
    assert first[1, 1] == second[1, 1] == 1.0
    with pytest.raises(ValueError):
        best_rank_moments(lambda k: k, np.array([3]), np.array([0]))


def test_best_rank_moments_of_several_transforms_equal_one_at_a_time():
    """The distribution is computed once for all transforms; each transform's moments are
    bit for bit those of its own call, chunks included (a support of 3,001 ranks and 2,000
    distinct (M, R) pairs span two chunks)."""
    from kgrank.evaluation.moments import best_rank_moments, best_rank_moments_of

    generator = np.random.default_rng(3)
    num_other = generator.integers(0, 3_000, size=2_000)
    num_relevant = generator.integers(1, 6, size=2_000)
    transforms = [lambda k: 1.0 / k, lambda k: k, lambda k: (k <= 10).astype(float)]
    together = best_rank_moments_of(transforms, num_other, num_relevant)
    assert len(together) == len(transforms)
    for transform, (first, second) in zip(transforms, together, strict=True):
        alone_first, alone_second = best_rank_moments(transform, num_other, num_relevant)
        assert np.array_equal(first, alone_first) and np.array_equal(second, alone_second)


def test_geometric_mean_rank_moments_against_fifty_digit_arithmetic():
    """GMR's per-task exponent 1/n is tiny for thousands of tasks, and its variance is the
    exponential of a sum of tiny per-task differences: a logsumexp-minus-ln N form keeps
    about six digits of it here; the running expm1 sum keeps ten."""
    import mpmath

    mpmath.mp.dps = 50
    distinct, counts = np.array([300, 750, 1200, 2000]), np.array([1500, 1000, 1000, 1500])
    num_ranks = int(counts.sum())
    log_first, excess = mpmath.mpf(0), mpmath.mpf(0)
    for n, count in zip(distinct, counts, strict=True):
        logs = [mpmath.log(k) for k in range(1, int(n) + 1)]
        first = mpmath.log(mpmath.fsum(mpmath.exp(x / num_ranks) for x in logs) / int(n))
        second = mpmath.log(mpmath.fsum(mpmath.exp(2 * x / num_ranks) for x in logs) / int(n))
        log_first += int(count) * first
        excess += int(count) * (second - 2 * first)
    expectation = mpmath.exp(log_first)
    moments = product_of_powers(np.repeat(distinct, counts), 1.0 / num_ranks)
    assert moments.expectation == pytest.approx(float(expectation), rel=1e-13)
    assert moments.variance == pytest.approx(float(expectation**2 * mpmath.expm1(excess)), rel=1e-10)
