import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgrank.errors import KgrankInputError
from kgrank.metrics import (
    MEAN_RANK,
    MEAN_RECIPROCAL_RANK,
    default_metrics,
    evaluate_rank_table,
    harmonic_number,
    hits_at,
    metric_rows,
)

ALL = default_metrics()


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


def test_harmonic_numbers_against_sums():
    for n in (1, 2, 7, 100):
        assert harmonic_number(np.array([n]))[0] == pytest.approx(sum(1 / k for k in range(1, n + 1)))
        assert harmonic_number(np.array([n]), 2)[0] == pytest.approx(sum(1 / k**2 for k in range(1, n + 1)))


@pytest.mark.parametrize("metric", ALL, ids=lambda metric: metric.key)
def test_moments_against_exact_enumeration(metric):
    # every joint outcome of three independent uniform ranks with different N_i
    num_candidates = np.array([2, 3, 5])
    outcomes = np.array(list(itertools.product(*(range(1, n + 1) for n in num_candidates))), dtype=float)
    values = np.array([metric.value(outcome) for outcome in outcomes])
    expectation, variance = metric.moments(num_candidates)
    assert expectation == pytest.approx(values.mean(), rel=1e-12)
    assert variance == pytest.approx(values.var(), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("metric", ALL, ids=lambda metric: metric.key)
def test_moments_against_simulation(metric):
    generator = np.random.default_rng(7)
    num_candidates = generator.integers(1, 400, size=300)
    replicates = 4000
    draws = np.floor(generator.random((replicates, len(num_candidates))) * num_candidates) + 1
    values = np.array([metric.value(row) for row in draws])
    expectation, variance = metric.moments(num_candidates)
    # z-test on the mean at 5 standard errors; variance within 10% (4000 replicates)
    assert abs(values.mean() - expectation) < 5 * np.sqrt(variance / replicates)
    assert values.var(ddof=1) == pytest.approx(variance, rel=0.1)


def _pykeen_metric(key):
    from pykeen.metrics import rank_based_metric_resolver

    if "hits_at_" in key:
        prefix, k = key.rsplit("_", 1)
        return rank_based_metric_resolver.make(prefix + "_k", k=int(k))
    return rank_based_metric_resolver.make(key)


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
        for key, row in _by_key(ranks, num_candidates, metric).items():
            if key.startswith("expectation_normalized_"):
                continue  # PyKEEN has no such variant for higher-is-better metrics
            if np.isnan(row["value"]):
                assert np.all(num_candidates == 1), key  # undefined only without any choice
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
