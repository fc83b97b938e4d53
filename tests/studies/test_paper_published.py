import numpy as np
import pandas as pd
import pytest

from kgrank.metrics import lookup
from kgrank.published import explain, read_published, readjust, rounding_error


def _moments(dataset, num_candidates):
    rows = []
    for key in ("arithmetic_mean_rank", "inverse_harmonic_mean_rank"):
        moments = lookup(key).moments(num_candidates)
        rows.append(
            {
                "dataset": dataset,
                "split": "test",
                "side": "both",
                "metric": key,
                "expectation": moments.expectation,
                "variance": moments.variance,
                "method": moments.method,
            }
        )
    return pd.DataFrame(rows)


def _published(*metrics: str, values: list[float], model: str = "m", dataset: str = "d") -> pd.DataFrame:
    """A long published table: one row per metric, test split, both sides."""
    return pd.DataFrame(
        {
            "model": model,
            "dataset": dataset,
            "split": "test",
            "side": "both",
            "metric": list(metrics),
            "value": values,
        }
    )


def test_wide_and_long_layouts(tmp_path):
    wide = tmp_path / "wide.tsv"
    wide.write_text("model\tdataset\ttest_mrr\ttest_amrr\nm\td\t0.5\t0.4\n")
    table = read_published(wide)
    assert table.to_dict("records") == [
        {
            "model": "m",
            "dataset": "d",
            "split": "test",
            "side": "both",
            "metric": "inverse_harmonic_mean_rank",
            "value": 0.5,
        },
        {
            "model": "m",
            "dataset": "d",
            "split": "test",
            "side": "both",
            "metric": "adjusted_inverse_harmonic_mean_rank",
            "value": 0.4,
        },
    ]
    long = tmp_path / "long.tsv"
    table.to_csv(long, sep="\t", index=False)
    pd.testing.assert_frame_equal(read_published(long), table)


def test_backwards_solved_expectation_by_hand():
    """Kinships, ComplEx, as published: MRR 0.66184 and AMRR 0.64453.

    AMRR = (MRR - E) / (1 - E)  =>  E = (MRR - AMRR) / (1 - AMRR) = 0.01731 / 0.35547 = 0.048696...
    """
    published = _published(
        "inverse_harmonic_mean_rank",
        "adjusted_inverse_harmonic_mean_rank",
        values=[0.66184, 0.64453],
        model="complex",
        dataset="kinships",
    )
    audit = readjust(published, _moments("kinships", np.full(2148, 100)))
    row = audit[audit["metric"] == "adjusted_inverse_harmonic_mean_rank"].iloc[0]
    assert row["implied_expectation"] == pytest.approx(0.01731 / 0.35547, rel=1e-9)
    assert row["implied_expectation"] == pytest.approx(0.0486961, abs=5e-8)
    # E[MRR] for N = 100 is H(100) / 100 = 0.05187...; the published value does not hold
    assert row["exact_expectation"] == pytest.approx(5.187377517639621 / 100)
    assert row["verdict"] == "disagrees"


def test_an_adjustment_made_with_exact_moments_agrees():
    num_candidates = np.full(500, 40)
    moments = _moments("d", num_candidates)
    expectation = moments.set_index("metric").loc["inverse_harmonic_mean_rank", "expectation"]
    mrr = 0.41234
    amrr = float(f"{(mrr - expectation) / (1 - expectation):.5g}")
    published = _published(
        "inverse_harmonic_mean_rank", "adjusted_inverse_harmonic_mean_rank", values=[mrr, amrr]
    )
    row = readjust(published, moments).dropna(subset=["published"]).iloc[0]
    assert row["verdict"] == "agrees within rounding"
    assert abs(row["difference"]) <= row["tolerance"]


def test_off_by_one_candidate_counts_are_recognised():
    num_candidates = np.full(300, 12)
    shifted = lookup("mrr").moments(num_candidates - 1)
    mrr = 0.5
    z = float(f"{(mrr - shifted.expectation) / np.sqrt(shifted.variance):.5g}")
    published = _published("inverse_harmonic_mean_rank", "z_inverse_harmonic_mean_rank", values=[mrr, z])
    audit = explain(
        readjust(published, _moments("d", num_candidates)), {("d", "test", "both"): num_candidates}
    )
    row = audit.dropna(subset=["published"]).iloc[0]
    assert row["verdict"] == "disagrees"
    assert row["explanation"] == "moments from candidate counts N_i - 1 (the true entity not counted)"


def test_rounding_error_is_half_the_last_digit():
    np.testing.assert_allclose(rounding_error(np.array([0.64453, 233.37, 4973.1])), [5e-6, 5e-3, 5e-2])


def test_comparison_with_published_results(tmp_path):
    from kgrank.published import compare_with_published, plot_published_comparison

    metrics = pd.DataFrame(
        {
            "dataset": "nations",
            "model": "tucker",
            "side": "both",
            "rank_type": "realistic",
            "epochs": 50,
            "training_loop": "slcwa",
            "metric": [
                "inverse_harmonic_mean_rank",
                "hits_at_1",
                "hits_at_3",
                "hits_at_10",
                "arithmetic_mean_rank",
            ],
            "value": [0.7, 0.6, 0.8, 0.99, 2.0],
        }
    )
    published = pd.DataFrame(
        {
            "model": ["tucker", "transe"],
            "dataset": "nations",
            "source": "case study",
            "test_mrr": 0.75557,
            "test_hits_at_1": 0.61692,
            "test_hits_at_3": 0.88308,
            "test_hits_at_10": 0.99005,
            "test_mr": 1.9701,
        }
    )
    table = compare_with_published(metrics, published, "laptop").set_index("metric")
    assert len(table) == 5
    assert table.loc["mrr", "difference"] == pytest.approx(0.7 - 0.75557)
    assert table.loc["mr", "published"] == pytest.approx(1.9701)
    assert set(table["profile"]) == {"laptop"} and set(table["epochs"]) == {50}
    assert set(table["training_loop"]) == {"slcwa"}
    plot_published_comparison(table.reset_index(), tmp_path / "c.pdf", tmp_path / "c.png", caption="budget")
    assert (tmp_path / "c.pdf").stat().st_size > 0 and (tmp_path / "c.png").stat().st_size > 0


def test_simulation_sides_with_the_exact_expectation():
    from kgrank.published import attach_simulation

    num_candidates = np.full(400, 30)
    moments = _moments("d", num_candidates)
    published = _published(
        "inverse_harmonic_mean_rank", "adjusted_inverse_harmonic_mean_rank", values=[0.5, 0.47]
    )
    exact = lookup("mrr").moments(num_candidates)
    checks = pd.DataFrame(
        {
            "dataset": ["d"],
            "side": ["both"],
            "metric": ["inverse_harmonic_mean_rank"],
            "simulated_mean": [exact.expectation],
            "simulated_variance": [exact.variance],
            "replicates": [10_000],
        }
    )
    row = attach_simulation(readjust(published, moments), checks).dropna(subset=["published"]).iloc[0]
    assert row["z_exact_vs_simulation"] == pytest.approx(0.0)
    # the published 0.47 implies E = (0.5 - 0.47) / 0.53, far below the simulated mean
    expected_z = ((0.03 / 0.53) - exact.expectation) / np.sqrt(exact.variance / 10_000)
    assert row["z_implied_vs_simulation"] == pytest.approx(expected_z)
    assert row["z_implied_vs_simulation"] < -10
