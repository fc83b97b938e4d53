import itertools
import math
import statistics

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgrank.errors import KgrankInputError
from kgrank.evaluation.metrics import (
    LESS_TOP_HEAVY_POWERS,
    DerivedValue,
    Metric,
    Transform,
    Variant,
    default_metrics,
    derived_values,
    evaluate_rank_table,
    hits_at,
    lookup,
    metric_rows,
)
from kgrank.evaluation.moments import Moments

ALL = default_metrics()
MEAN_RANK = lookup("mr").metric
MEAN_RECIPROCAL_RANK = lookup("mrr").metric
EXACT_METHODS = ("closed form", "exact sum", "exact (order statistics)", "exact (constant)")


def _by_key(ranks, num_candidates, metric):
    return {row["metric"]: row for row in metric_rows(ranks, num_candidates, metric)}


def test_hand_made_ranks_with_ties():
    # realistic ranks of four tasks: two of them in ties (2.5 and 1.5)
    ranks = np.array([1.0, 2.5, 4.0, 1.5])
    num_candidates = np.array([5, 5, 10, 2])
    assert MEAN_RANK.value(ranks) == pytest.approx(9.0 / 4)
    assert MEAN_RECIPROCAL_RANK.value(ranks) == pytest.approx((1 + 0.4 + 0.25 + 1 / 1.5) / 4)
    assert hits_at(1).value(ranks) == pytest.approx(0.25)
    assert hits_at(3).value(ranks) == pytest.approx(0.75)
    rows = _by_key(ranks, num_candidates, MEAN_RANK)
    expected_mr = np.mean([3.0, 3.0, 5.5, 1.5])
    assert rows["arithmetic_mean_rank"]["expectation"] == pytest.approx(expected_mr)
    assert rows["adjusted_arithmetic_mean_rank_index"]["value"] == pytest.approx(
        (9.0 / 4 - expected_mr) / (1 - expected_mr)
    )


# (metric, candidate counts) where the moments are exact; the approximate ones (delta
# method, sampling) are checked against simulation below instead.
EXACT_CASES = [
    pytest.param(metric, counts, id=f"{metric.key}-{counts}")
    for counts in ([2, 3, 5], [4, 4, 4], [1, 6, 3, 2])
    for metric in ALL
    if metric.moments(np.array(counts)).method.startswith(EXACT_METHODS)
]


def test_exact_cases_cover_most_metrics():
    assert len({case.values[0].key for case in EXACT_CASES}) >= 18


@pytest.mark.parametrize(("metric", "num_candidates"), EXACT_CASES)
def test_exact_moments_against_enumeration(metric, num_candidates):
    """Every joint outcome of a few independent uniform ranks, N_i varying or not."""
    num_candidates = np.array(num_candidates)
    moments = metric.moments(num_candidates)
    outcomes = np.array(list(itertools.product(*(range(1, n + 1) for n in num_candidates))), dtype=float)
    values = metric.value(outcomes)
    expectation, variance = moments.expectation, moments.variance
    assert expectation == pytest.approx(values.mean(), rel=1e-12)
    assert variance == pytest.approx(values.var(), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("metric", ALL, ids=lambda metric: metric.key)
def test_moments_against_simulation(metric):
    generator = np.random.default_rng(7)
    num_candidates = generator.integers(1, 400, size=300)
    replicates = 4000
    draws = np.floor(generator.random((replicates, len(num_candidates))) * num_candidates) + 1
    values = metric.value(draws)
    moments = metric.moments(num_candidates)
    if moments.variance == 0:
        assert np.all(values == moments.expectation)
        return
    # z-tests at 5 standard errors: the mean's, and the sample variance's from the
    # fourth central moment (rare-event metrics such as the minimum are far from normal)
    assert abs(values.mean() - moments.expectation) < 5 * np.sqrt(moments.variance / replicates)
    centred = values - values.mean()
    variance_error = np.sqrt(max(np.mean(centred**4) - np.mean(centred**2) ** 2, 0) / replicates)
    tolerance = 5 * variance_error + (1e-3 * moments.variance if "delta" in moments.method else 0)
    assert abs(values.var(ddof=1) - moments.variance) <= tolerance


def _pykeen_metric(key):
    """PyKEEN's implementation of a metric key, or None where PyKEEN has none."""
    from pykeen.metrics import rank_based_metric_resolver

    try:
        if "hits_at_" in key:
            prefix, k = key.rsplit("_", 1)
            return rank_based_metric_resolver.make(prefix + "_k", k=int(k))
        return rank_based_metric_resolver.make(key)
    except (KeyError, ValueError):
        return None


IN_PYKEEN = sorted(
    {row["metric"] for metric in ALL for row in metric_rows(np.array([1.0, 2.0]), np.array([3, 3]), metric)}
    - {
        key
        for key in [
            row["metric"] for metric in ALL for row in metric_rows(np.array([1.0]), np.array([3]), metric)
        ]
        if _pykeen_metric(key) is None
    }
)


def test_pykeen_covers_the_metrics_it_should():
    assert {
        "arithmetic_mean_rank",
        "inverse_harmonic_mean_rank",
        "geometric_mean_rank",
        "median_rank",
        "adjusted_geometric_mean_rank_index",
        "z_geometric_mean_rank",
        "median_absolute_deviation",
        "count",
        "z_hits_at_10",
        "inverse_arithmetic_mean_rank",
        "harmonic_mean_rank",
    } <= set(IN_PYKEEN)


rank_vectors = st.integers(min_value=1, max_value=60).flatmap(
    lambda size: st.tuples(
        st.lists(st.integers(1, 500), min_size=size, max_size=size),
        st.lists(st.floats(0, 1, allow_nan=False), min_size=size, max_size=size),
        st.lists(st.booleans(), min_size=size, max_size=size),
    )
)


@settings(max_examples=60, deadline=None)
@given(rank_vectors)
def test_agrees_with_pykeen(data):
    counts, positions, half = data
    num_candidates = np.array(counts)
    ranks = np.floor(np.array(positions) * (num_candidates - 1)) + 1
    ranks = np.where(np.array(half) & (ranks < num_candidates), ranks + 0.5, ranks)  # realistic ties
    for metric in ALL:
        if not metric.moments(np.array([3, 3])).method.startswith(EXACT_METHODS):
            # approximate moments are checked against simulation; here only the value
            theirs = _pykeen_metric(metric.key)
            if theirs is not None:
                assert metric.value(ranks) == pytest.approx(theirs(ranks, num_candidates), rel=1e-9), (
                    metric.key
                )
            continue
        for key, row in _by_key(ranks, num_candidates, metric).items():
            if key not in IN_PYKEEN:
                continue
            if np.isnan(row["value"]):
                # undefined only where a random model is already optimal
                assert metric.moments(num_candidates).expectation == pytest.approx(metric.optimum), key
                continue
            theirs = _pykeen_metric(key)
            assert row["value"] == pytest.approx(theirs(ranks, num_candidates), rel=1e-9, abs=1e-12), key
            if theirs.closed_expectation:
                assert row["expectation"] == pytest.approx(theirs.expected_value(num_candidates), rel=1e-9)
            if theirs.closed_variance:
                assert row["variance"] == pytest.approx(theirs.variance(num_candidates), rel=1e-9, abs=1e-15)


@pytest.mark.parametrize(
    ("ranks", "message"),
    [
        (np.array([1.0, 0.0]), r"rank 0\.0 at position 1 is outside \[1, 3\]"),
        (np.array([1.0, 4.0]), r"rank 4\.0 at position 1 is outside \[1, 3\]"),
        (np.array([1.0, np.nan]), r"rank nan at position 1"),
        (np.array([]), r"empty rank set"),
    ],
)
def test_bad_ranks_are_named(ranks, message):
    with pytest.raises(KgrankInputError, match=f"metric arithmetic_mean_rank: {message}"):
        metric_rows(ranks, np.array([3, 3])[: len(ranks)], MEAN_RANK)


@pytest.mark.parametrize("k", [0, -1, 2.5])
def test_hits_k_must_be_positive_integer(k):
    with pytest.raises(KgrankInputError, match="k must be a positive integer"):
        hits_at(k)


def test_rank_table_has_every_side_and_rank_type():
    ranks = pd.DataFrame(
        {
            "side": ["head", "head", "tail"],
            "optimistic": [1, 2, 3],
            "realistic": [1.0, 2.5, 3.0],
            "pessimistic": [1, 3, 3],
            "random": [1, 3, 3],
            "num_candidates": [4, 4, 5],
        }
    )
    table = evaluate_rank_table(ranks)
    assert set(table["side"]) == {"head", "tail", "both"}
    assert set(table["rank_type"]) == {"optimistic", "realistic", "pessimistic", "random"}
    both = table[(table["side"] == "both") & (table["rank_type"] == "realistic")].set_index("metric")
    assert both.loc["arithmetic_mean_rank", "value"] == pytest.approx(6.5 / 3)
    assert both.loc["hits_at_1", "value"] == pytest.approx(1 / 3)


def _brute_force(key: str, ranks: list[float]) -> float:
    """Each metric written out with plain Python loops, independently of the registry."""
    n = len(ranks)
    mean = lambda values: sum(values) / len(values)  # noqa: E731
    table = {
        "arithmetic_mean_rank": mean(ranks),
        "inverse_arithmetic_mean_rank": 1 / mean(ranks),
        "harmonic_mean_rank": n / sum(1 / r for r in ranks),
        "inverse_harmonic_mean_rank": mean([1 / r for r in ranks]),
        "geometric_mean_rank": math.prod(ranks) ** (1 / n),
        "inverse_geometric_mean_rank": math.prod(ranks) ** (-1 / n),
        "median_rank": statistics.median(ranks),
        "inverse_median_rank": 1 / statistics.median(ranks),
        "power_mean_rank_2": math.sqrt(mean([r * r for r in ranks])),
        "power_mean_rank_inf": max(ranks),
        "power_mean_rank_minus_inf": min(ranks),
        "mean_log_discount": mean([math.log(2) / math.log(1 + r) for r in ranks]),
        "standard_deviation": statistics.pstdev(ranks),
        "variance": statistics.pvariance(ranks),
        "median_absolute_deviation": 1.482602218505602
        * statistics.median([abs(r - statistics.median(ranks)) for r in ranks]),
        "count": float(n),
    }
    for k in (1, 3, 5, 10):
        table[f"hits_at_{k}"] = mean([1.0 if r <= k else 0.0 for r in ranks])
    for a in LESS_TOP_HEAVY_POWERS:
        table[f"mean_inverse_rank_power_{a.numerator}_{a.denominator}"] = mean(
            [r ** -float(a) for r in ranks]
        )
    return table[key]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(2, 2000).map(lambda twice: twice / 2), min_size=1, max_size=40))
def test_values_against_brute_force(ranks):
    for metric in ALL:
        assert metric.value(np.array(ranks)) == pytest.approx(_brute_force(metric.key, ranks), rel=1e-9), (
            metric.key
        )


def test_registry_is_complete_and_unique():
    keys = [metric.key for metric in ALL]
    assert len(keys) == len(set(keys)) == 25
    assert lookup("MRR").metric.key == "inverse_harmonic_mean_rank"
    assert lookup("hits@7").metric.key == "hits_at_7"
    with pytest.raises(KgrankInputError, match="unknown metric 'mrrr'"):
        lookup("mrrr")


def test_standard_deviation_delta_method_against_simulation():
    # enough ranks for the delta method on the exact rank variance (cv of the variance
    # about 0.016 here); fewer ranks are sampled, which the test above covers
    generator = np.random.default_rng(11)
    num_candidates = generator.integers(2, 5000, size=3000)
    metric = lookup("standard_deviation").metric
    moments = metric.moments(num_candidates)
    assert moments.method.startswith("delta method")
    replicates = 4000
    draws = np.floor(generator.random((replicates, len(num_candidates))) * num_candidates) + 1
    values = metric.value(draws)
    assert abs(values.mean() - moments.expectation) < 5 * np.sqrt(moments.variance / replicates)
    assert values.var(ddof=1) == pytest.approx(moments.variance, rel=0.1)


def test_rank_table_without_a_side_is_refused():
    ranks = pd.DataFrame(
        {
            "side": ["head", "head"],
            "optimistic": [1, 2],
            "realistic": [1.0, 2.0],
            "pessimistic": [1, 2],
            "random": [1, 2],
            "num_candidates": [4, 4],
        }
    )
    with pytest.raises(KgrankInputError, match="side tail: empty rank set"):
        evaluate_rank_table(ranks)


def test_sides_share_one_stream_but_match_separate_evaluation():
    """Head and tail moments from the shared draw equal those of each side alone, within
    the sampling error the method states (median of an even number of ranks: sampled)."""
    from kgrank.evaluation.metrics import moments_of

    generator = np.random.default_rng(3)
    # different ranges per side, so that a mix-up of the positions cannot pass
    num_candidates = np.concatenate([generator.integers(5, 50, 200), generator.integers(200, 300, 200)])
    ranks = pd.DataFrame(
        {
            "side": np.repeat(["head", "tail"], 200),
            **{column: np.ones(400) for column in ("optimistic", "realistic", "pessimistic", "random")},
            "num_candidates": num_candidates,
        }
    )
    table = evaluate_rank_table(ranks, [lookup("median_rank").metric])
    for side, counts in (("head", num_candidates[:200]), ("tail", num_candidates[200:])):
        row = table[(table["side"] == side) & (table["metric"] == "median_rank")].iloc[0]
        alone = moments_of([lookup("median_rank").metric], counts)["median_rank"]
        assert row["method"].startswith("sampling")
        assert abs(row["expectation"] - alone.expectation) < 5 * np.hypot(
            alone.expectation_error, alone.expectation_error
        )


def test_variants_are_named_as_printed():
    assert [variant.value for variant in Variant] == ["expectation-normalised", "adjusted index", "z-score"]
    assert Variant("adjusted index") is Variant.INDEX


@pytest.mark.parametrize(
    ("name", "keys"),
    [
        # lower is better: PyKEEN's adjusted_<key> is the expectation-normalised AMR
        (
            "mr",
            {
                Variant.NORMALISED: "adjusted_arithmetic_mean_rank",
                Variant.INDEX: "adjusted_arithmetic_mean_rank_index",
                Variant.Z_SCORE: "z_arithmetic_mean_rank",
            },
        ),
        (
            "mrr",
            {
                Variant.NORMALISED: "expectation_normalized_inverse_harmonic_mean_rank",
                Variant.INDEX: "adjusted_inverse_harmonic_mean_rank",
                Variant.Z_SCORE: "z_inverse_harmonic_mean_rank",
            },
        ),
        (
            "hits@10",
            {
                Variant.NORMALISED: "expectation_normalized_hits_at_10",
                Variant.INDEX: "adjusted_hits_at_10",
                Variant.Z_SCORE: "z_hits_at_10",
            },
        ),
    ],
)
def test_variant_keys_follow_pykeen(name, keys):
    metric = lookup(name).metric
    assert {variant: metric.variant_key(variant) for variant in Variant} == keys
    ranks, num_candidates = np.array([1.0, 3.0, 12.0, 2.5]), np.array([20, 7, 40, 3])
    derived = derived_values(metric, metric.value(ranks), metric.moments(num_candidates))
    assert {variant: value.key for variant, value in derived.items()} == keys
    # each key means in PyKEEN what it means here (where PyKEEN has it)
    for variant, key in keys.items():
        theirs = _pykeen_metric(key)
        if theirs is None:
            assert variant is Variant.NORMALISED and metric.increasing
            continue
        assert derived[variant].value == pytest.approx(theirs(ranks, num_candidates), rel=1e-9), key


def test_pykeen_amr_is_mr_over_its_expectation():
    ranks, num_candidates = np.array([1.0, 4.0, 9.0]), np.array([10, 10, 30])
    expectation = np.mean((num_candidates + 1) / 2)
    assert _pykeen_metric("adjusted_arithmetic_mean_rank")(ranks, num_candidates) == pytest.approx(
        ranks.mean() / expectation
    )
    assert _pykeen_metric("adjusted_arithmetic_mean_rank_index")(ranks, num_candidates) == pytest.approx(
        (ranks.mean() - expectation) / (1 - expectation)
    )


@pytest.mark.parametrize("name", ["mr", "mrr", "hits@3", "gmr"])
def test_derived_values_by_hand(name):
    metric = lookup(name).metric
    moments = Moments(expectation=0.3 if metric.increasing else 7.0, variance=0.04, method="given")
    value = 0.45 if metric.increasing else 4.0
    derived = derived_values(metric, value, moments)
    assert list(derived) == list(Variant)
    assert all(isinstance(row, DerivedValue) for row in derived.values())
    expectation, std = moments.expectation, 0.2
    sign = 1.0 if metric.increasing else -1.0
    normalised, index, z = derived[Variant.NORMALISED], derived[Variant.INDEX], derived[Variant.Z_SCORE]
    assert normalised.value == pytest.approx(value / expectation)
    assert index.value == pytest.approx((value - expectation) / (1.0 - expectation))
    assert z.value == pytest.approx(sign * (value - expectation) / std)
    assert z.value > 0  # better than random is a positive z whatever the direction
    assert (normalised.variance, index.variance, z.variance) == pytest.approx(
        (0.04 / expectation**2, 0.04 / (1.0 - expectation) ** 2, 1.0)
    )
    # the variants are affine in the value: each one's expectation is the variant of E[M]
    at_expectation = derived_values(metric, expectation, moments)
    for variant in Variant:
        assert at_expectation[variant].value == pytest.approx(derived[variant].expectation, abs=1e-15)


def test_derived_values_are_undefined_where_random_is_optimal():
    metric = lookup("mr").metric
    derived = derived_values(metric, 1.0, metric.moments(np.ones(5, dtype=int)))
    assert derived[Variant.NORMALISED].value == 1.0
    for variant in (Variant.INDEX, Variant.Z_SCORE):
        assert np.isnan(derived[variant].value) and np.isnan(derived[variant].variance)


def test_rows_list_the_base_then_each_variant():
    rows = metric_rows(np.array([1.0, 2.0]), np.array([5, 5]), MEAN_RECIPROCAL_RANK)
    assert [row["metric"] for row in rows] == [
        "inverse_harmonic_mean_rank",
        *(MEAN_RECIPROCAL_RANK.variant_key(variant) for variant in Variant),
    ]
    assert len({row["method"] for row in rows}) == 1
    # dispersion and count have no optimum, hence no derived variants
    assert [
        row["metric"] for row in metric_rows(np.array([1.0, 2.0]), np.array([5, 5]), lookup("std").metric)
    ] == ["standard_deviation"]


def test_metric_and_transform_are_keyword_only():
    with pytest.raises(TypeError):
        Transform("r", lambda ranks: ranks, lambda n: (n, n), "closed form")
    fields = dict(
        key="k",
        label="K",
        transform=MEAN_RANK.transform,
        statistic="power mean",
        increasing=False,
        optimum=1.0,
        value_range=(1.0, np.inf),
        moments_function=None,
    )
    with pytest.raises(TypeError):
        Metric(*fields.values())
    assert Metric(**fields, power=1.0).value(np.array([1.0, 3.0])) == 2.0


@pytest.mark.parametrize("key", ["mrr", "mr", "hits_at_2", "mean_log_discount"])
def test_macro_mean_moments_equal_enumeration(key):
    """The mean over queries of each query's mean, every rank combination enumerated."""
    from kgrank.evaluation.metrics import macro_mean_moments

    metric = lookup(key).metric
    num_candidates = np.array([3, 3, 4, 2])
    query_index = np.array([0, 0, 1, 2])
    values = []
    for ranks in itertools.product(*(range(1, n + 1) for n in num_candidates)):
        transformed = metric.transform.function(np.array(ranks, dtype=float))
        values.append(np.mean([transformed[query_index == query].mean() for query in range(3)]))
    moments = macro_mean_moments(metric, num_candidates, query_index)
    assert moments.expectation == pytest.approx(np.mean(values), rel=1e-12)
    assert moments.variance == pytest.approx(np.var(values), rel=1e-12)


def test_macro_mean_moments_need_an_arithmetic_mean_and_one_query_per_task():
    from kgrank.evaluation.metrics import macro_mean_moments

    with pytest.raises(KgrankInputError, match="arithmetic means of a rank transform only"):
        macro_mean_moments(lookup("gmr").metric, np.array([3]), np.array([0]))
    with pytest.raises(KgrankInputError, match="one query id per task"):
        macro_mean_moments(MEAN_RECIPROCAL_RANK, np.array([3, 3]), np.array([0]))


@pytest.mark.parametrize(
    "num_candidates",
    [np.full(31, 100), np.array([3, 9, 40, 40, 1000, 7]), np.full(400, 14_505)],
    ids=["constant", "mixed", "large"],
)
def test_moments_method_names_the_method_without_sampling(num_candidates):
    for metric in ALL:
        assert metric.moments_method(num_candidates) == metric.moments(num_candidates).method.split(" (R=")[0]


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 5).flatmap(
        lambda rows: st.lists(
            st.lists(
                st.one_of(
                    st.integers(1, 40).map(float),
                    st.integers(2, 80).map(lambda twice: twice / 2),
                    st.sampled_from([np.nan, np.inf, -np.inf, 1e300]),
                ),
                min_size=rows,
                max_size=rows,
            ),
            min_size=1,
            max_size=60,
        ).map(lambda columns: np.array(columns, dtype=float).T)
    )
)
def test_median_and_mad_equal_numpy_and_scipy(values):
    """The sorted median and the MAD give np.median's and scipy's values to the bit,
    NaN and infinities included, on rows and on a single vector."""
    from scipy import stats

    from kgrank.evaluation.metrics import _mad, sorted_median

    with np.errstate(invalid="ignore"):
        for sample in (values, values[0]):
            np.testing.assert_array_equal(sorted_median(sample), np.median(sample, axis=-1))
            np.testing.assert_array_equal(
                _mad(sample), stats.median_abs_deviation(sample, axis=-1, scale="normal")
            )


def test_one_side_and_rank_type_gets_one_interval_from_every_entry_point():
    # `kgrank metrics` (evaluate_rank_table) and `kgrank evaluate` / kgrank.evaluate
    # (evaluate_system) name a resampled interval's stream by the seed, the side and the
    # rank type: the same ranks get the same interval from each
    from test_weighted import rank_table

    from kgrank.api import evaluate_system

    table = rank_table()
    tidy = (
        evaluate_rank_table(table, confidence=0.9, seed=11)
        .set_index(["side", "rank_type", "metric"])
        .sort_index()
    )
    for side, rank_type in [("both", "realistic"), ("head", "optimistic"), ("tail", "pessimistic")]:
        api = evaluate_system(table, side=side, rank_type=rank_type, confidence=0.9, seed=11).set_index(
            "metric"
        )
        ours = tidy.loc[(side, rank_type)].loc[api.index]
        assert ours["ci_method"].str.contains("bootstrap").any()
        # a derived variant's interval is the base interval's image under the random
        # model's moments, and the sampled moments (a side's median, MAD, ...) of a whole
        # table share one stream of replicates: derived rows compare where those are exact
        base = np.isin(api.index, [metric.key for metric in ALL])
        compared = base | ours["method"].str.startswith(EXACT_METHODS).to_numpy()
        assert (compared & ~base & ours["ci_method"].str.contains("bootstrap").to_numpy()).any()
        np.testing.assert_array_equal(ours["ci_low"][compared], api["ci_low"][compared])
        np.testing.assert_array_equal(ours["ci_high"][compared], api["ci_high"][compared])


def test_the_seed_reaches_every_resampled_interval():
    from test_weighted import rank_table

    # 12 head and 12 tail rows: below the 30 tasks of the normal interval, so every
    # interval but Hits@k's and the median's is a seeded bootstrap
    table = rank_table()
    first, again, other = (evaluate_rank_table(table, confidence=0.9, seed=seed) for seed in (1, 1, 2))
    pd.testing.assert_frame_equal(first, again)
    resampled = first["ci_method"].str.contains("bootstrap")
    assert resampled.sum() > 0
    # a new seed moves the resampled ends and leaves the analytic ones alone
    assert (first.loc[resampled, "ci_low"] != other.loc[resampled, "ci_low"]).any()
    pd.testing.assert_frame_equal(first[~resampled], other[~resampled])
    # each (side, rank type) draws its own stream: the tail's interval is not the head's
    heads = first[(first["side"] == "head") & resampled & (first["rank_type"] == "optimistic")]
    tails = first[(first["side"] == "tail") & resampled & (first["rank_type"] == "optimistic")]
    assert not np.array_equal(heads["ci_low"].to_numpy(), tails["ci_low"].to_numpy())


def test_weights_go_only_to_the_metrics_that_take_them():
    from kgrank.evaluation.metrics import evaluate_ranks

    with pytest.raises(KgrankInputError, match="metric inverse_harmonic_mean_rank: takes no weights"):
        evaluate_ranks([1.0, 2.0], [3, 3], [MEAN_RECIPROCAL_RANK], weights=np.array([1.0, 2.0]))
