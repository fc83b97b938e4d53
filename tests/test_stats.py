"""The core statistics layer: one contract per statistic, checked against scipy,
statsmodels and brute force."""

from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests

from kgrank.evaluation import stats
from kgrank.evaluation.metrics import Variant, derive, derived_values, lookup


def test_seed_stream_is_numpy_default_rng_on_the_keys():
    expected = np.random.default_rng([7, zlib.crc32(b"nations"), 3]).random(5)
    np.testing.assert_array_equal(stats.seed_stream(7, "nations", 3).random(5), expected)
    # a sequence seed is flattened in front of the keys
    np.testing.assert_array_equal(
        stats.seed_stream([7, 1], 2).random(3), np.random.default_rng([7, 1, 2]).random(3)
    )
    assert stats.seed_stream(7, 1).random() != stats.seed_stream(7, 2).random()


def test_paired_tests_equal_scipy_on_ordinary_input():
    generator = np.random.default_rng(0)
    first, second = generator.random(50), generator.random(50)
    result = stats.paired_tests(first, second)
    assert result.t_p == pytest.approx(scipy_stats.ttest_rel(first, second).pvalue)
    assert result.t_statistic == pytest.approx(scipy_stats.ttest_rel(first, second).statistic)
    assert result.wilcoxon_p == pytest.approx(scipy_stats.wilcoxon(first, second).pvalue)
    assert result.mean_difference == pytest.approx((first - second).mean())


def test_paired_tests_degenerate_cases_have_one_answer():
    same = np.array([0.5, 0.25, 1.0])
    assert stats.paired_tests(same, same) == stats.PairedTest(0.0, 0.0, 1.0, 1.0)
    shifted = stats.paired_tests(same + 0.5, same)
    assert shifted.t_statistic == np.inf and shifted.t_p == 0.0 and shifted.mean_difference == 0.5
    assert stats.paired_tests(same - 0.5, same).t_statistic == -np.inf
    with pytest.raises(ValueError, match="finite"):
        stats.paired_tests(np.array([np.nan, 1.0]), np.array([1.0, 1.0]))


def test_holm_equals_statsmodels_and_leaves_nan_out_of_the_family():
    p_values = np.array([0.01, 0.04, np.nan, 0.03, 0.5])
    rejected, adjusted = stats.holm(p_values, alpha=0.05)
    made = ~np.isnan(p_values)
    expected_rejected, expected_adjusted, _, _ = multipletests(p_values[made], alpha=0.05, method="holm")
    np.testing.assert_array_equal(adjusted[made], expected_adjusted)
    np.testing.assert_array_equal(rejected[made], expected_rejected)
    assert np.isnan(adjusted[2]) and not rejected[2]
    empty_rejected, empty_adjusted = stats.holm([])
    assert empty_rejected.size == 0 and empty_adjusted.size == 0


def _brute_force_tau_b(first, second):
    concordant = discordant = ties_first = ties_second = 0
    for i, j in itertools.combinations(range(len(first)), 2):
        a, b = np.sign(first[i] - first[j]), np.sign(second[i] - second[j])
        if a == 0 and b == 0:
            continue
        if a == 0:
            ties_first += 1
        elif b == 0:
            ties_second += 1
        elif a == b:
            concordant += 1
        else:
            discordant += 1
    denominator = np.sqrt((concordant + discordant + ties_first) * (concordant + discordant + ties_second))
    return (concordant - discordant) / denominator if denominator else np.nan


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=8))
def test_kendall_tau_equals_brute_force_and_the_row_form(pairs):
    first = np.array([a for a, _ in pairs], dtype=float)
    second = np.array([b for _, b in pairs], dtype=float)
    tau, _ = stats.kendall_tau(first, second)
    expected = _brute_force_tau_b(first, second)
    if np.ptp(first) == 0 or np.ptp(second) == 0:
        assert np.isnan(tau)
    else:
        assert tau == pytest.approx(expected)
    rows = stats.kendall_tau_b_rows(first, second[None, :])
    np.testing.assert_allclose(rows, [tau], equal_nan=True)


def test_kendall_tau_is_nan_on_missing_values():
    assert np.isnan(stats.kendall_tau(np.array([1.0, np.nan, 2.0]), np.array([1.0, 2.0, 3.0]))[0])
    assert np.isnan(stats.kendall_tau_b_rows(np.array([1.0, 2.0]), np.array([[np.nan, 1.0]]))[0])


def test_mean_difference_interval_is_scipys_paired_percentile_bootstrap():
    generator = np.random.default_rng(2)
    first, second = generator.random(80), generator.random(80)
    low, high = stats.mean_difference_interval(first, second, resamples=500, seed=5)
    expected = scipy_stats.bootstrap(
        (first, second),
        lambda a, b, axis: a.mean(axis=axis) - b.mean(axis=axis),
        paired=True,
        n_resamples=500,
        method="percentile",
        random_state=np.random.default_rng(5),
    ).confidence_interval
    assert (low, high) == pytest.approx((expected.low, expected.high))
    assert stats.mean_difference_interval(first, first) == (0.0, 0.0)


def test_derive_on_arrays_equals_derived_values_element_by_element():
    metric = lookup("inverse_harmonic_mean_rank").metric
    values = np.array([0.2, 0.5, 0.9])
    num_candidates = [np.array([10, 20]), np.array([14, 14]), np.array([3, 100])]
    moments = [metric.moments(n) for n in num_candidates]
    arrays = derive(
        metric,
        values,
        np.array([m.expectation for m in moments]),
        np.array([m.variance for m in moments]),
    )
    for index, (value, moment) in enumerate(zip(values, moments, strict=True)):
        scalar = derived_values(metric, value, moment)
        for variant in Variant:
            assert arrays[variant].value[index] == scalar[variant].value
            assert arrays[variant].variance[index] == scalar[variant].variance


def test_derive_without_variance_gives_no_z_score_but_the_adjusted_index():
    metric = lookup("arithmetic_mean_rank").metric
    arrays = derive(metric, np.array([2.0]), np.array([7.5]))
    assert arrays[Variant.INDEX].value[0] == pytest.approx((2.0 - 7.5) / (1.0 - 7.5))
    assert np.isnan(arrays[Variant.Z_SCORE].value[0])
    assert np.isnan(arrays[Variant.INDEX].variance[0])


def test_variant_names():
    assert Variant.INDEX.label == "adjusted index"
    assert [variant.column for variant in Variant] == ["expectation_normalised", "adjusted_index", "z_score"]


def test_a_name_is_one_key_of_a_seed_as_of_its_streams():
    from kgrank.evaluation.stats import seed_sequence

    assert seed_sequence("ab").entropy == seed_sequence(["ab"]).entropy
    assert (
        seed_sequence([7, "head", "realistic"], "mrr").entropy
        == seed_sequence(7, "head", "realistic", "mrr").entropy
    )


# --- several runs of a system: the crossed tasks x seeds design --------------------------


def test_crossed_variance_components_match_simulation():
    """The moment estimators are unbiased for the components, and the variance of the
    grand mean they give equals the grand mean's variance over simulated designs."""
    generator = np.random.default_rng(5)
    tasks, runs, replications = 60, 4, 3000
    sigma_seed, sigma_task, sigma_residual = 0.3, 1.0, 0.5
    grand_means, estimates = [], []
    for _ in range(replications):
        values = (
            generator.normal(0, sigma_seed, runs)[None, :]
            + generator.normal(0, sigma_task, tasks)[:, None]
            + generator.normal(0, sigma_residual, (tasks, runs))
        )
        crossed = stats.crossed_variance(values)
        grand_means.append(crossed.mean)
        estimates.append(
            (crossed.seed * runs, crossed.task * tasks, crossed.residual * tasks * runs, crossed.variance)
        )
    estimates = np.asarray(estimates)
    truth = sigma_seed**2 / runs + sigma_task**2 / tasks + sigma_residual**2 / (tasks * runs)
    # the seed component's estimate is clipped at 0 now and then: a small upward bias
    assert estimates[:, 0].mean() == pytest.approx(sigma_seed**2, rel=0.08)
    assert estimates[:, 1].mean() == pytest.approx(sigma_task**2, rel=0.03)
    assert estimates[:, 2].mean() == pytest.approx(sigma_residual**2, rel=0.02)
    assert estimates[:, 3].mean() == pytest.approx(truth, rel=0.08)
    assert np.var(grand_means, ddof=1) == pytest.approx(truth, rel=0.08)
    # with seeds that do not matter, their share is small; with tasks alike, it is all
    alike = stats.crossed_variance(np.tile(generator.normal(0, 1, 4), (30, 1)))
    assert alike.seed_share == pytest.approx(1.0)
    assert stats.crossed_variance(
        np.tile(generator.normal(0, 1, (30, 1)), (1, 4))
    ).seed_share == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="two runs"):
        stats.crossed_variance(np.ones((5, 1)))


@pytest.mark.parametrize(
    ("seed_sd", "task_sd", "residual_sd"),
    [(1.0, 0.0, 0.3), (1.0, 1.0, 0.3), (0.3, 1.0, 0.3), (0.1, 1.0, 1.0), (0.0, 1.0, 1.0)],
)
def test_the_seed_interval_covers_at_its_level_with_few_seeds(seed_sd, task_sd, residual_sd):
    """mean +- t sqrt(Var), t on Satterthwaite's degrees of freedom bounded by the seeds'
    R - 1, covers at least near its level with two, three and five seeds, whether seeds,
    tasks or neither dominate (Satterthwaite's alone covered 87 % with two seeds of the
    tasks' spread; a normal quantile about 70 % where the seeds dominate)."""
    from scipy import stats as scipy_stats

    generator = np.random.default_rng(8)
    for runs in (2, 3, 5):
        covered = normal_covered = 0
        replications = 2000
        for _ in range(replications):
            values = (
                generator.normal(0, seed_sd, runs)[None, :]
                + generator.normal(0, task_sd, 50)[:, None]
                + generator.normal(0, residual_sd, (50, runs))
            )
            crossed = stats.crossed_variance(values)
            spread = np.sqrt(crossed.variance)
            covered += abs(crossed.mean) <= scipy_stats.t.ppf(0.975, crossed.degrees_of_freedom) * spread
            normal_covered += abs(crossed.mean) <= 1.96 * spread
        assert covered / replications >= 0.93, (runs, covered / replications)
        if seed_sd == 1.0 and task_sd == 0.0 and runs == 2:
            assert normal_covered / replications < 0.85


def test_welch_test_equals_scipy_and_has_one_answer_where_degenerate():
    first, second = np.array([0.31, 0.33, 0.30]), np.array([0.36, 0.35, 0.39, 0.37])
    expected = scipy_stats.ttest_ind(first, second, equal_var=False)
    assert stats.welch_test(first, second) == pytest.approx((expected.statistic, expected.pvalue), rel=1e-12)
    assert np.isnan(stats.welch_test(first[:1], second)).all()
    assert stats.welch_test(np.ones(3), np.ones(2)) == (0.0, 1.0)
