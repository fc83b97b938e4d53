"""kgrank.evaluation.weighted: the weighted geometric mean rank, its inverse and their exact moments.

Checked against the direct formula, enumeration of every rank vector, 50-digit arithmetic,
the registry's unweighted GMR, and simulation (which must also reject wrong moments).
"""

import itertools
import math

import mpmath
import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kgrank.errors import KgrankInputError
from kgrank.evaluation.metrics import (
    TIDY_COLUMNS,
    Variant,
    check_weights,
    default_metrics,
    derive,
    evaluate_rank_table,
    evaluate_ranks,
    lookup,
    moments_of,
)
from kgrank.evaluation.moments import Moments, log_expected_power, log_expected_powers
from kgrank.evaluation.weighted import (
    INVERSE_WEIGHTED_GEOMETRIC_MEAN_RANK,
    WEIGHTED_GEOMETRIC_MEAN_RANK,
    WEIGHTED_METRICS,
    evaluate_weighted_rank_table,
    negative_count_weights,
    relation_balanced_weights,
    scheme_weights,
    weighted_geometric_mean_rank,
    wgmr_at_expected_ranks,
    wgmr_montecarlo,
)

WGMR = WEIGHTED_GEOMETRIC_MEAN_RANK.key
IWGMR = INVERSE_WEIGHTED_GEOMETRIC_MEAN_RANK.key


def inverse_weighted_geometric_mean_rank(ranks, weights):
    return INVERSE_WEIGHTED_GEOMETRIC_MEAN_RANK.value(ranks, weights)


def wgmr_moments(num_candidates, weights):
    return WEIGHTED_GEOMETRIC_MEAN_RANK.moments(np.asarray(num_candidates), weights)


def iwgmr_moments(num_candidates, weights):
    return INVERSE_WEIGHTED_GEOMETRIC_MEAN_RANK.moments(np.asarray(num_candidates), weights)


def weighted_metric_rows(ranks, num_candidates, weights):
    """The rows of the weighted metrics as the one evaluator gives them with weights."""
    ranks = np.asarray(ranks, dtype=float)
    return evaluate_ranks(ranks, num_candidates, WEIGHTED_METRICS, weights=check_weights(weights, len(ranks)))


def ranks_and_weights(max_size: int = 30, max_rank: int = 10_000):
    """Rank vectors with nonnegative weights, at least one of them positive."""
    return st.integers(1, max_size).flatmap(
        lambda n: st.tuples(
            st.lists(st.floats(1.0, float(max_rank)), min_size=n, max_size=n),
            st.lists(st.floats(0.0, 100.0), min_size=n, max_size=n).filter(lambda w: sum(w) > 0),
        )
    )


# --- values -------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(ranks_and_weights())
@example(([1.25], [5e-324]))  # a subnormal weight: r * w underflows, r * (w / total) does not
def test_value_is_the_weighted_geometric_mean(case):
    ranks, weights = case
    total = math.fsum(weights)
    direct = math.prod(r ** (w / total) for r, w in zip(ranks, weights, strict=True))
    assert weighted_geometric_mean_rank(ranks, weights) == pytest.approx(direct, rel=1e-12)
    assert inverse_weighted_geometric_mean_rank(ranks, weights) == pytest.approx(1 / direct, rel=1e-12)
    # only relative weights matter
    assert weighted_geometric_mean_rank(ranks, [7.5 * w for w in weights]) == pytest.approx(direct, rel=1e-12)
    # between the smallest and largest weighted rank, and below the weighted arithmetic mean
    weighted = [r for r, w in zip(ranks, weights, strict=True) if w > 0]
    assert min(weighted) * (1 - 1e-12) <= direct <= max(weighted) * (1 + 1e-12)
    arithmetic = math.fsum(r * (w / total) for r, w in zip(ranks, weights, strict=True))
    assert direct <= arithmetic * (1 + 1e-12)


def test_rows_of_sampled_ranks_have_their_own_value():
    ranks = np.array([[1.0, 4.0, 9.0], [2.0, 2.0, 2.0]])
    weights = np.array([1.0, 0.0, 1.0])
    np.testing.assert_allclose(weighted_geometric_mean_rank(ranks, weights), [3.0, 2.0], rtol=1e-14)


def test_equal_weights_give_the_registry_gmr():
    ranks = np.array([1.0, 3.0, 2.5, 40.0, 7.0])
    for weights in (np.ones(5), np.full(5, 0.2), np.full(5, 13.0)):
        assert weighted_geometric_mean_rank(ranks, weights) == pytest.approx(
            lookup("gmr").metric.value(ranks), rel=1e-13
        )
        assert inverse_weighted_geometric_mean_rank(ranks, weights) == pytest.approx(
            lookup("igmr").metric.value(ranks), rel=1e-13
        )


def test_paper_weights_reproduce_the_authors_code():
    """crrivero/www21 Code/Evaluator.py, metric "mrh": sum of totals * log(rank) over the sum
    of totals, totals being the number of corrupted triples of the side (N_i - 1 here)."""
    ranks = [1.0, 2.5, 7.0, 1.0, 30.0]
    num_candidates = [5, 40, 10, 1, 300]
    value, divisor = 0.0, 0.0
    for rank, total in zip(ranks, [n - 1 for n in num_candidates], strict=True):
        value += total * math.log(rank)
        divisor += total
    authors = math.exp(value / divisor)
    weights = negative_count_weights(num_candidates)
    assert weighted_geometric_mean_rank(ranks, weights) == pytest.approx(authors, rel=1e-13)


def test_relation_balanced_weights_give_each_relation_the_same_total():
    relations = np.array(["a", "b", "a", "c", "a", "b"])
    weights = relation_balanced_weights(relations)
    totals = pd.Series(weights).groupby(relations).sum()
    np.testing.assert_allclose(totals.to_numpy(), 1.0)


# --- moments ------------------------------------------------------------------------------


def enumerated_moments(num_candidates, weights, sign=1.0):
    """Mean and variance over every rank vector of the random model (equally likely)."""
    grid = np.array(list(itertools.product(*(range(1, n + 1) for n in num_candidates))), dtype=float)
    fractions = np.asarray(weights, dtype=float) / np.sum(weights)
    values = np.prod(grid ** (sign * fractions), axis=1)
    return values.mean(), values.var()


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(1, 6), min_size=1, max_size=4).flatmap(
        lambda sizes: st.tuples(
            st.just(sizes),
            st.lists(st.floats(0.0, 10.0), min_size=len(sizes), max_size=len(sizes)).filter(
                lambda w: sum(w) > 1e-3
            ),
        )
    )
)
def test_moments_equal_enumeration(case):
    num_candidates, weights = case
    for moments, sign in (
        (wgmr_moments(num_candidates, weights), 1.0),
        (iwgmr_moments(num_candidates, weights), -1.0),
    ):
        mean, variance = enumerated_moments(num_candidates, weights, sign)
        assert moments.expectation == pytest.approx(mean, rel=1e-12)
        assert moments.variance == pytest.approx(variance, rel=1e-12, abs=1e-13 * mean**2)
        assert moments.method == "closed form"


def test_moments_equal_enumeration_of_two_three_four_candidates():
    """The brief's case, N = (2, 3, 4), with seeded random weights: all 24 rank vectors."""
    generator = np.random.default_rng(31)
    for _ in range(5):
        weights = generator.random(3)
        mean, variance = enumerated_moments((2, 3, 4), weights)
        moments = wgmr_moments(np.array([2, 3, 4]), weights)
        assert moments.expectation == pytest.approx(mean, rel=1e-12)
        assert moments.variance == pytest.approx(variance, rel=1e-12)


@pytest.mark.parametrize("exponent", [-2.0, -0.25, 1e-4, 0.5, 2.0])
def test_log_expected_powers_against_sums_and_the_single_exponent_form(exponent):
    """50-digit sums as reference: in double precision log(mean k^s) itself loses digits for
    small s (the log of a number near 1), which is why log_expected_powers avoids it."""
    mpmath.mp.dps = 50
    values = np.array([1, 2, 9, 40, 9])
    power = mpmath.mpf(exponent)
    expected = [
        float(mpmath.log(mpmath.fsum(mpmath.mpf(k) ** power for k in range(1, n + 1)) / n)) for n in values
    ]
    result = log_expected_powers(values, np.full(len(values), exponent))
    np.testing.assert_allclose(result, expected, rtol=1e-14)
    # the single-exponent form, up to its own rounding of about eps ln N in absolute terms
    np.testing.assert_allclose(result, log_expected_power(values, exponent), rtol=1e-12, atol=1e-14)


def test_log_expected_powers_in_small_chunks_equal_one_chunk():
    generator = np.random.default_rng(4)
    sizes = generator.integers(1, 300, size=200)
    exponents = generator.uniform(-1, 1, size=200)
    # a chunk's padding changes numpy's pairwise summation order: equal up to the last bits
    np.testing.assert_allclose(
        log_expected_powers(sizes, exponents, chunk_elements=500),
        log_expected_powers(sizes, exponents),
        rtol=1e-14,
    )


@pytest.mark.parametrize(
    ("num_candidates", "variance_tolerance"),
    [
        (np.array([1, 2, 3]), 1e-12),
        (np.arange(1, 40), 1e-12),
        (np.random.default_rng(0).integers(1, 2000, size=50), 1e-12),
    ],
)
def test_equal_weights_give_the_registry_gmr_moments(num_candidates, variance_tolerance):
    """The per-task-exponent form reduces to kgrank.evaluation.moments.product_of_powers (s = ±1/n)."""
    registry = moments_of([lookup("gmr").metric, lookup("igmr").metric], num_candidates)
    for scale in (1.0, 0.01):
        weights = np.full(len(num_candidates), scale)
        for ours, theirs in (
            (wgmr_moments, "geometric_mean_rank"),
            (iwgmr_moments, "inverse_geometric_mean_rank"),
        ):
            moments = ours(num_candidates, weights)
            assert moments.expectation == pytest.approx(registry[theirs].expectation, rel=1e-12)
            assert moments.variance == pytest.approx(registry[theirs].variance, rel=variance_tolerance)


def test_moments_against_fifty_digit_arithmetic_with_many_tasks():
    """Thousands of tasks make each exponent small (~1/n); the variance is then the
    exponential of a sum of tiny per-task differences, which a logsumexp-minus-ln N form
    gets only to ~5e-9 here. 50-digit sums of k^s over the distinct (N, weight) pairs."""
    mpmath.mp.dps = 50
    distinct = np.array([300, 750, 1200, 2000])
    counts = np.array([1500, 1000, 1000, 1500])
    num_candidates = np.repeat(distinct, counts)
    weights = negative_count_weights(num_candidates)
    total = mpmath.fsum(mpmath.mpf(int(n - 1)) * int(c) for n, c in zip(distinct, counts, strict=True))
    log_first, excess = mpmath.mpf(0), mpmath.mpf(0)
    for n, count in zip(distinct, counts, strict=True):
        exponent = mpmath.mpf(int(n - 1)) / total
        logs = [mpmath.log(k) for k in range(1, int(n) + 1)]
        first = mpmath.log(mpmath.fsum(mpmath.exp(exponent * x) for x in logs) / int(n))
        second = mpmath.log(mpmath.fsum(mpmath.exp(2 * exponent * x) for x in logs) / int(n))
        log_first += count * first
        excess += count * (second - 2 * first)
    expectation = mpmath.exp(log_first)
    variance = expectation**2 * mpmath.expm1(excess)
    moments = wgmr_moments(num_candidates, weights)
    assert moments.expectation == pytest.approx(float(expectation), rel=1e-13)
    assert moments.variance == pytest.approx(float(variance), rel=1e-10)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(1, 500), min_size=1, max_size=20).flatmap(
        lambda sizes: st.tuples(
            st.just(sizes),
            st.lists(st.floats(0.0, 10.0), min_size=len(sizes), max_size=len(sizes)).filter(
                lambda w: sum(w) > 1e-3
            ),
        )
    )
)
def test_the_authors_plug_in_expectation_overstates_the_expectation(case):
    """WGMR at the expected ranks (N_i + 1)/2 >= E[WGMR] (Jensen: x^a is concave for
    0 < a <= 1), strictly when a task with several candidates has a weight share strictly
    between 0 and 1 (with share 1, x^1 is linear and the two agree)."""
    num_candidates, weights = case
    plug_in = wgmr_at_expected_ranks(num_candidates, weights)
    expectation = wgmr_moments(num_candidates, weights).expectation
    assert plug_in >= expectation * (1 - 1e-12)
    shares = np.asarray(weights) / sum(weights)
    if any(n > 1 and 0.01 < a < 0.99 for n, a in zip(num_candidates, shares, strict=True)):
        assert plug_in > expectation


# --- Monte Carlo ---------------------------------------------------------------------------

# Forty tasks with candidate counts spread over two orders of magnitude.
MC_CANDIDATES = np.random.default_rng(7).integers(2, 500, size=40)
MC_RELATIONS = np.random.default_rng(8).integers(0, 5, size=40)


@pytest.mark.parametrize(
    "weights",
    [negative_count_weights(MC_CANDIDATES), relation_balanced_weights(MC_RELATIONS), np.ones(40)],
    ids=["negatives", "relation", "uniform"],
)
def test_montecarlo_agrees_with_the_exact_moments(weights):
    table = wgmr_montecarlo(MC_CANDIDATES, weights, replicates=200_000, seed=3)
    assert table["metric"].tolist() == [WGMR, IWGMR]
    assert table["passed"].all(), table.to_string()
    # the check has power: the variance ratio is pinned to well under 2 %
    assert (table["ratio_ci_high"] - table["ratio_ci_low"]).max() < 0.04


def test_montecarlo_rejects_a_wrong_variance():
    weights = negative_count_weights(MC_CANDIDATES)
    exact = wgmr_moments(MC_CANDIDATES, weights)
    wrong = Moments(exact.expectation, 1.2 * exact.variance, "variance x 1.2")
    table = wgmr_montecarlo(MC_CANDIDATES, weights, replicates=200_000, seed=3, analytic={WGMR: wrong})
    row = table.set_index("metric").loc[WGMR]
    assert not row["passed"]
    assert row["z_variance"] < -row["critical_z"]
    assert abs(row["z_mean"]) < row["critical_z"]  # the expectation was right
    assert table.set_index("metric").loc[IWGMR, "passed"]


def test_montecarlo_rejects_the_authors_plug_in_expectation():
    weights = negative_count_weights(MC_CANDIDATES)
    exact = wgmr_moments(MC_CANDIDATES, weights)
    plug_in = Moments(
        wgmr_at_expected_ranks(MC_CANDIDATES, weights), exact.variance, "WGMR of expected ranks"
    )
    table = wgmr_montecarlo(MC_CANDIDATES, weights, replicates=20_000, seed=5, analytic={WGMR: plug_in})
    row = table.set_index("metric").loc[WGMR]
    assert not row["passed"] and row["z_mean"] < -row["critical_z"]


def test_montecarlo_of_a_constant_metric():
    """Every weighted task has one candidate: WGMR is 1 in every replicate."""
    table = wgmr_montecarlo([1, 1, 50], [2.0, 1.0, 0.0], replicates=100, seed=0)
    assert table["passed"].all()
    assert table["expectation"].tolist() == [1.0, 1.0] and table["variance"].tolist() == [0.0, 0.0]


# --- derived variants, rows and tables -----------------------------------------------------


def test_rows_follow_the_registry_naming():
    rows = weighted_metric_rows([1.0, 2.0, 3.0], [5, 5, 9], [4.0, 4.0, 8.0])
    assert [row["metric"] for row in rows] == [
        "weighted_geometric_mean_rank",
        "adjusted_weighted_geometric_mean_rank",
        "adjusted_weighted_geometric_mean_rank_index",
        "z_weighted_geometric_mean_rank",
        "inverse_weighted_geometric_mean_rank",
        "expectation_normalized_inverse_weighted_geometric_mean_rank",
        "adjusted_inverse_weighted_geometric_mean_rank",
        "z_inverse_weighted_geometric_mean_rank",
    ]
    assert {row["method"] for row in rows} == {"closed form"}


def test_perfect_and_worst_rankings():
    num_candidates = np.array([10, 200, 35, 2])
    weights = negative_count_weights(num_candidates)
    best = {row["metric"]: row for row in weighted_metric_rows(np.ones(4), num_candidates, weights)}
    worst = {row["metric"]: row for row in weighted_metric_rows(num_candidates, num_candidates, weights)}
    for index in (
        "adjusted_weighted_geometric_mean_rank_index",
        "adjusted_inverse_weighted_geometric_mean_rank",
    ):
        assert best[index]["value"] == pytest.approx(1.0, abs=1e-12)
        assert best[index]["expectation"] == 0.0
        assert worst[index]["value"] < 0
    # a larger z-score is better for both, whichever direction the base metric has
    for z in ("z_weighted_geometric_mean_rank", "z_inverse_weighted_geometric_mean_rank"):
        assert best[z]["value"] > 0 > worst[z]["value"]


def test_derived_variants_under_the_random_model():
    """On simulated random rankings the adjusted index averages 0 and the z-score has
    mean 0 and variance 1, within the simulation's standard errors."""
    num_candidates = MC_CANDIDATES
    weights = relation_balanced_weights(MC_RELATIONS)
    replicates = 50_000
    generator = np.random.default_rng(11)
    ranks = np.floor(generator.random((replicates, len(num_candidates))) * num_candidates) + 1.0
    for metric in WEIGHTED_METRICS:
        moments = metric.moments(num_candidates, weights)
        variants = derive(metric, metric.value(ranks, weights), moments.expectation, moments.variance)
        for variant in variants.values():
            sample = variant.value
            assert abs(sample.mean() - variant.expectation.item()) < 4.5 * sample.std() / np.sqrt(replicates)
        z = next(v.value for k, v in variants.items() if k.column == "z_score")
        assert z.var() == pytest.approx(1.0, abs=4.5 * np.sqrt(2 / replicates))


def test_the_one_resolver_finds_the_weighted_metrics():
    # registered: found by every name, printed by their short names, but not in the
    # default table, whose evaluation has no weights to give them
    assert lookup("wgmr").key == "weighted_geometric_mean_rank"
    assert lookup("AWGMRI").key == "adjusted_weighted_geometric_mean_rank_index"
    assert lookup("AWGMRI").short_name == "AWGMRI"
    assert lookup("z_iwgmr").key == "z_inverse_weighted_geometric_mean_rank"
    assert lookup("z_iwgmr").short_name == "z-IWGMR"
    assert lookup("aiwgmr").key == "adjusted_inverse_weighted_geometric_mean_rank"
    assert lookup("wgmr").metric is WEIGHTED_GEOMETRIC_MEAN_RANK
    assert not {metric.key for metric in WEIGHTED_METRICS} & {metric.key for metric in default_metrics()}


def test_weighted_metrics_refuse_to_run_without_weights():
    with pytest.raises(KgrankInputError, match="needs one weight per rank"):
        WEIGHTED_GEOMETRIC_MEAN_RANK.value(np.array([1.0, 2.0]))
    with pytest.raises(KgrankInputError, match="needs one weight per rank"):
        moments_of([INVERSE_WEIGHTED_GEOMETRIC_MEAN_RANK], np.array([3, 4]))


def rank_table() -> pd.DataFrame:
    generator = np.random.default_rng(2)
    rows = 24
    num_candidates = generator.integers(1, 60, size=rows)
    optimistic = np.floor(generator.random(rows) * num_candidates) + 1
    pessimistic = np.minimum(optimistic + generator.integers(0, 3, size=rows), num_candidates)
    return pd.DataFrame(
        {
            "triple_id": np.tile(np.arange(rows // 2), 2),
            "head": 0,
            "relation": np.tile(generator.integers(0, 4, size=rows // 2), 2),
            "tail": 1,
            "side": ["head"] * (rows // 2) + ["tail"] * (rows // 2),
            "optimistic": optimistic,
            "realistic": (optimistic + pessimistic) / 2,
            "pessimistic": pessimistic,
            "random": optimistic,
            "num_candidates": num_candidates,
        }
    )


def test_rank_table_evaluation():
    table = rank_table()
    result = evaluate_weighted_rank_table(table, "negatives")
    assert list(result.columns) == TIDY_COLUMNS
    assert len(result) == 3 * 4 * 8
    head = table[table["side"] == "head"]
    expected = weighted_metric_rows(
        head["realistic"].to_numpy(),
        head["num_candidates"].to_numpy(),
        negative_count_weights(head["num_candidates"]),
    )
    got = result[(result["side"] == "head") & (result["rank_type"] == "realistic")]
    np.testing.assert_allclose(got["value"], [row["value"] for row in expected], rtol=1e-14)
    np.testing.assert_allclose(got["variance"], [row["variance"] for row in expected], rtol=1e-14)


def test_uniform_scheme_equals_the_registry_evaluation():
    table = rank_table()
    ours = evaluate_weighted_rank_table(table, "uniform")
    registry = evaluate_rank_table(table, [lookup("gmr").metric, lookup("igmr").metric])
    renamed = ours.assign(metric=ours["metric"].str.replace("weighted_geometric", "geometric"))
    merged = renamed.merge(registry, on=["side", "rank_type", "metric"], suffixes=("", "_registry"))
    assert len(merged) == len(registry) == len(ours)
    for column in ("value", "expectation", "variance"):
        np.testing.assert_allclose(merged[column], merged[f"{column}_registry"], rtol=1e-11, atol=1e-14)


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ([1.0, -0.5, 2.0], "not a finite nonnegative number"),
        ([1.0, float("nan"), 2.0], "not a finite nonnegative number"),
        ([1.0, float("inf"), 2.0], "not a finite nonnegative number"),
        ([0.0, 0.0, 0.0], "every weight is zero"),
        ([1.0, 2.0], "give one weight per rank"),
        ([[1.0, 2.0, 3.0]], "give one weight per rank"),
    ],
)
def test_bad_weights(weights, message):
    for call in (
        lambda: weighted_geometric_mean_rank([1.0, 2.0, 3.0], weights),
        lambda: wgmr_moments([3, 4, 5], weights),
        lambda: weighted_metric_rows([1.0, 2.0, 3.0], [3, 4, 5], weights),
        lambda: wgmr_montecarlo([3, 4, 5], weights, replicates=10),
    ):
        with pytest.raises(KgrankInputError, match=message) as caught:
            call()
        assert "\n" not in str(caught.value)


def test_other_bad_input():
    with pytest.raises(KgrankInputError, match="outside"):
        weighted_metric_rows([1.0, 6.0], [3, 4], [1.0, 1.0])
    with pytest.raises(KgrankInputError, match="not a rank of at least 1"):
        weighted_geometric_mean_rank([0.5, 2.0], [1.0, 1.0])
    with pytest.raises(KgrankInputError, match="give a vector of ranks"):
        weighted_geometric_mean_rank(3.0, [1.0])
    with pytest.raises(KgrankInputError, match="at least 1"):
        negative_count_weights([3, 0])
    with pytest.raises(KgrankInputError, match="unknown weight scheme"):
        scheme_weights(rank_table(), "frequency")
    with pytest.raises(KgrankInputError, match="no relation column"):
        scheme_weights(rank_table().drop(columns="relation"), "relation")
    with pytest.raises(KgrankInputError, match="replicates"):
        wgmr_montecarlo([3, 4], [1.0, 1.0], replicates=1)
    # every task of one side has a single candidate: nothing weighs there
    table = rank_table().assign(num_candidates=lambda t: np.where(t["side"] == "head", 1, 9))
    table[list(("optimistic", "realistic", "pessimistic", "random"))] = 1.0
    with pytest.raises(KgrankInputError, match="weights of side head: every weight is zero"):
        evaluate_weighted_rank_table(table, "negatives")


def test_the_api_weighs_tasks_side_by_side():
    # kgrank.evaluate(..., weights=): WGMR and IWGMR by default, each side with its own
    # tasks' weights, equal to the definition written out, with the exact moments
    import kgrank

    ranks = np.array([1.0, 3.0, 2.0, 7.0, 1.5, 4.0])
    num_candidates = np.array([5, 9, 4, 12, 3, 8])
    weights = num_candidates - 1.0
    sides = ["head", "tail", "head", "tail", "head", "tail"]
    table = kgrank.evaluate(ranks, num_candidates, sides=sides, weights=weights, confidence=None)
    assert set(table["metric"]) == {
        key for metric in WEIGHTED_METRICS for key in [metric.key, *(metric.variant_key(v) for v in Variant)]
    }
    wgmr = table[table["metric"] == WGMR].set_index("side")
    for side, rows in (("both", slice(None)), ("head", slice(0, None, 2)), ("tail", slice(1, None, 2))):
        by_hand = math.exp(np.sum(weights[rows] * np.log(ranks[rows])) / np.sum(weights[rows]))
        assert wgmr.loc[side, "value"] == pytest.approx(by_hand, rel=1e-13)
        assert wgmr.loc[side, "random_expectation"] == pytest.approx(
            wgmr_moments(num_candidates[rows], weights[rows]).expectation, rel=1e-13
        )
    with pytest.raises(KgrankInputError, match="takes no weights"):
        kgrank.evaluate(ranks, num_candidates, weights=weights, metrics="mrr")


def test_weighted_metrics_where_no_weights_can_come_are_refused_in_one_line():
    import pandas as pd

    import kgrank
    from kgrank.evaluation.comparison import compare

    frame = pd.DataFrame(
        {
            "system": ["a"] * 3 + ["b"] * 3,
            "task": ["x", "y", "z"] * 2,
            "rank": [1.0, 2.0, 3.0, 2.0, 2.0, 1.0],
            "num_candidates": [5, 5, 5, 5, 5, 5],
        }
    )
    with pytest.raises(KgrankInputError, match="a weighted metric needs one weight per task"):
        compare(frame, metrics="wgmr")
    with pytest.raises(KgrankInputError, match="a scheme needs a rank table"):
        kgrank.evaluate([1.0, 2.0], [3, 3], weights="negatives")
    with pytest.raises(KgrankInputError, match="give a metric's name as text"):
        lookup(["mrr"])
    with pytest.raises(KgrankInputError, match="metric inverse_harmonic_mean_rank: takes no weights"):
        evaluate_rank_table(
            pd.DataFrame(
                {
                    "side": ["head", "tail"],
                    **{column: [1.0, 2.0] for column in ("optimistic", "realistic", "pessimistic", "random")},
                    "num_candidates": [3, 3],
                }
            ),
            [lookup("mrr").metric],
            weights=np.array([1.0, 1.0]),
        )
