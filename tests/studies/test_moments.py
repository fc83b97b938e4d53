"""The `moments` study: the moments lookup table, its Monte Carlo check and the errata."""

import dataclasses

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import REPO

from kgrank.engine.candidates import candidate_counts, counts_by_side
from kgrank.evaluation.metrics import default_metrics, lookup
from kgrank.evaluation.moments import Moments
from kgrank.studies.moments.errata import Formula, check_formulas, errata, formulas
from kgrank.studies.moments.montecarlo import (
    apply_familywise,
    check_dataset,
    check_moments,
    dataset_moments_table,
    moments_table,
    plot_check,
)


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
    mean_rank = lookup("mr").metric
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


@pytest.fixture(scope="module")
def formula_check():
    return check_formulas(replicates=50_000, seed=3)


def test_errata_finds_the_published_mistakes(formula_check):
    check = formula_check
    assert check["corrected_holds"].dropna().all()
    found = errata(check)
    assert set(found["equation"]) == {"8 (*)", "20 (*)", "ambiguity: Eq. 7", "ambiguity: AMRI"}
    variance_hits = found[found["equation"] == "20 (*)"].iloc[0]
    # the printed constant-N variance of Hits@k is too small by a factor n (= 20 here)
    assert variance_hits["corrected_value"] / variance_hits["published_value"] == pytest.approx(20)
    # Eq. 7 of the ambiguity paper as printed: 1/n (n = 20 tasks) where 1/#S (#S = 50) is meant
    expected_rank = found[found["equation"] == "ambiguity: Eq. 7"].iloc[0]
    assert expected_rank["published_value"] / expected_rank["corrected_value"] == pytest.approx(50 / 20)


def test_a_correction_exactly_where_the_published_form_is_wrong(formula_check):
    check = formula_check
    corrected = {formula.equation for formula in formulas() if formula.corrected is not None}
    wrong = {"8 (*)", "20 (*)", "ambiguity: Eq. 7", "ambiguity: AMRI"}
    assert corrected == set(errata(check)["equation"]) == wrong
    for formula in formulas():
        has_correction = formula.corrected is not None
        assert (formula.corrected_value is not None) == has_correction, formula.equation
        assert has_correction or formula.corrected_statistic is None, formula.equation
        if has_correction:
            assert formula.corrected != formula.published
    with_correction = check["corrected"] != ""
    assert set(check.loc[with_correction, "equation"]) == corrected
    # every row with a correction: the correction holds where the published form fails
    assert check.loc[with_correction, "corrected_holds"].tolist() == [True] * int(with_correction.sum())
    assert not check.loc[with_correction, "published_holds"].any()
    # rows without one: no text, no value, no z and no verdict (not a vacuous "holds")
    without = check[~with_correction]
    assert without["corrected_value"].isna().all() and without["z_corrected"].isna().all()
    assert without["corrected_holds"].isna().all()
    assert without["published_holds"].all()


def test_formula_is_keyword_only():
    with pytest.raises(TypeError):
        Formula("4", "E[r_i]", "(N_i + 1) / 2", lambda n_i, k: 1.0, "mean", lambda r, n_i, k: r)


def test_dataset_moments_table_is_the_table_of_each_split(nations_dir):
    metrics = [
        lookup("mr").metric,
        lookup("mrr").metric,
        lookup("hits@10").metric,
        lookup("median_rank").metric,
    ]
    table = dataset_moments_table(nations_dir, "nations", ["valid", "test"], metrics, ("train", "test"))
    assert list(table.columns[:2]) == ["dataset", "split"] and set(table["dataset"]) == {"nations"}
    for split in ("valid", "test"):
        expected = moments_table(candidate_counts(nations_dir, split, ("train", "test")), metrics)
        got = table[table["split"] == split].drop(columns=["dataset", "split"]).reset_index(drop=True)
        pd.testing.assert_frame_equal(got, expected)
    # the filter changes the counts, hence the table
    default = dataset_moments_table(nations_dir, "nations", ["valid"], metrics)
    assert not np.allclose(default["expectation"], table.loc[table["split"] == "valid", "expectation"])


@pytest.fixture(scope="module")
def small_check(nations_dir):
    metrics = [lookup("mr").metric, lookup("mrr").metric, lookup("hits@1").metric, lookup("count").metric]
    check = check_dataset(candidate_counts(nations_dir, "test"), metrics, replicates=400, seed=1, alpha=0.01)
    return check.assign(dataset="nations")


def test_check_dataset_is_one_family_over_the_sides(small_check, nations_dir):
    assert small_check["side"].tolist() == [side for side in ("head", "tail", "both") for _ in range(4)]
    assert small_check["passed"].all()
    # one Bonferroni family: 2 tests per row, 12 rows
    from scipy import stats

    assert set(small_check["critical_z"]) == {stats.norm.isf(0.01 / (2 * 12) / 2)}
    alone = check_moments(
        counts_by_side(candidate_counts(nations_dir, "test"))["tail"],
        [lookup("mr").metric, lookup("mrr").metric, lookup("hits@1").metric, lookup("count").metric],
        replicates=400,
        seed=2,
        alpha=0.01,
    )
    tail = small_check[small_check["side"] == "tail"].reset_index(drop=True)
    # same draws (the tail side is the second seed), a stricter family
    np.testing.assert_array_equal(tail["simulated_mean"], alone["simulated_mean"])
    assert tail["critical_z"].iloc[0] > alone["critical_z"].iloc[0]
    again = apply_familywise(small_check, 0.01)
    pd.testing.assert_frame_equal(again, small_check)


def test_plot_check_is_deterministic(small_check, tmp_path):
    state = np.random.get_state()  # noqa: NPY002
    for run in ("a", "b"):
        plot_check(small_check, tmp_path / f"{run}.pdf", tmp_path / f"{run}.png")
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()
    assert (tmp_path / "a.pdf").read_bytes() == (tmp_path / "b.pdf").read_bytes()
    # the global generator the figure seeds is handed back as it was
    after = np.random.get_state()  # noqa: NPY002
    assert after[0] == state[0] and np.array_equal(after[1], state[1]) and after[2:] == state[2:]


def _check_moments(section: dict) -> None:
    from kgrank.workflow.config import check_config

    config = yaml.safe_load((REPO / ".test/config.yaml").read_text(encoding="utf-8"))
    config["studies"] = {"moments": section}
    check_config(
        config,
        REPO / "src/kgrank/schemas/config.schema.yaml",
        study_schema_dir=REPO / "src/kgrank/schemas/studies",
    )


@pytest.mark.parametrize(
    ("old", "new", "value"),
    [
        ("replicates", "montecarlo_replicates", 2000),
        ("familywise_alpha", "montecarlo_alpha", 0.01),
        ("formula_replicates", "formula_montecarlo_replicates", 50_000),
    ],
)
def test_config_refuses_the_old_names_of_the_settings(old, new, value):
    from kgrank.errors import KgrankInputError

    _check_moments({new: value})
    with pytest.raises(
        KgrankInputError,
        match=rf"key studies\.moments\.{old}: renamed; write studies\.moments\.{new} instead",
    ):
        _check_moments({old: value})


def test_settings_module_is_light():
    """The rule file imports it at every Snakemake parse."""
    import subprocess
    import sys

    code = (
        "import sys, kgrank.studies.moments.settings, kgrank.studies.paper.settings; "
        "print([m for m in ('torch', 'pandas', 'scipy', 'pykeen', 'matplotlib', 'numpy')"
        " if m in sys.modules])"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
