import dataclasses

import numpy as np
import pytest

from kgrank.errata import check_formulas, errata
from kgrank.metrics import default_metrics, lookup
from kgrank.moments import Moments
from kgrank.montecarlo import candidate_counts, check_moments, moments_table


def test_candidate_counts_match_the_rank_extractor(nations_dir, tmp_path):
    from conftest import REPO

    from kgrank.hyperparameters import load_hyperparameters
    from kgrank.ranks import KnownAnswers, compute_ranks
    from kgrank.training import load_model, train

    train(
        nations_dir,
        load_hyperparameters(REPO / "config/hyperparameters/nations/transe.yaml"),
        tmp_path,
        seed=1,
        max_epochs=1,
        progress=False,
    )
    model, factories = load_model(tmp_path, nations_dir)
    known = KnownAnswers(
        factories.mapped(), factories.training.num_entities, factories.training.num_relations
    )
    ranks = compute_ranks(model, factories.testing.mapped_triples, known, progress=False)
    counts = candidate_counts(nations_dir, "test")
    np.testing.assert_array_equal(counts["num_candidates"].to_numpy(), ranks["num_candidates"].to_numpy())
    assert list(counts["side"]) == list(ranks["side"])
    unfiltered = candidate_counts(nations_dir, "test", filter_splits=())
    assert set(unfiltered["num_candidates"]) == {14}


def test_moments_table_covers_every_metric_and_side(nations_dir):
    table = moments_table(candidate_counts(nations_dir, "valid"))
    assert set(table["side"]) == {"head", "tail", "both"}
    assert len(table) == 3 * len(default_metrics())
    both = table[table["side"] == "both"].set_index("metric")
    head = table[table["side"] == "head"].set_index("metric")
    tail = table[table["side"] == "tail"].set_index("metric")
    # the mean rank's expectation over both sides is the average of the two sides'
    assert both.loc["arithmetic_mean_rank", "expectation"] == pytest.approx(
        (head.loc["arithmetic_mean_rank", "expectation"] + tail.loc["arithmetic_mean_rank", "expectation"])
        / 2
    )
    assert (table["method"].str.len() > 0).all()


def test_every_moment_passes_on_real_counts(nations_dir):
    counts = candidate_counts(nations_dir, "test")["num_candidates"].to_numpy()
    table = check_moments(counts, replicates=3000, seed=2)
    assert table["passed"].all(), table.loc[~table["passed"], ["metric", "z_mean", "z_variance"]]


def test_a_wrong_moment_is_caught():
    """The check can fail: a variance off by 10% and an expectation off by 1% are flagged."""
    mean_rank = lookup("mr")
    wrong_variance = dataclasses.replace(
        mean_rank,
        key="wrong_variance",
        moments_function=lambda n: Moments(
            mean_rank.moments(n).expectation, 1.1 * mean_rank.moments(n).variance, "x"
        ),
    )
    wrong_mean = dataclasses.replace(
        mean_rank,
        key="wrong_mean",
        moments_function=lambda n: Moments(
            1.01 * mean_rank.moments(n).expectation, mean_rank.moments(n).variance, "x"
        ),
    )
    table = check_moments(
        np.full(300, 100), [mean_rank, wrong_variance, wrong_mean], replicates=20_000, seed=0
    )
    assert table.set_index("metric")["passed"].to_dict() == {
        "arithmetic_mean_rank": True,
        "wrong_variance": False,
        "wrong_mean": False,
    }


def test_errata_finds_the_published_mistakes():
    check = check_formulas(replicates=50_000, seed=3)
    assert check["corrected_holds"].all()
    found = errata(check)
    assert set(found["equation"]) == {"8 (*)", "20 (*)", "ambiguity: AMRI"}
    variance_hits = found[found["equation"] == "20 (*)"].iloc[0]
    # the printed constant-N variance of Hits@k is too small by a factor n (= 20 here)
    assert variance_hits["corrected_value"] / variance_hits["published_value"] == pytest.approx(20)
