"""kgrank.evaluation.comparison: paired comparisons of systems, marks against random and the summary
across datasets, on hand-made ranks whose answer is known and against scipy and
statsmodels."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests

import kgrank
from kgrank.errors import KgrankInputError
from kgrank.evaluation import comparison
from kgrank.evaluation.comparison import (
    NOT_DISTINGUISHABLE,
    PAIR_COLUMNS,
    SUMMARY_COLUMNS,
    SYSTEM_COLUMNS,
    WORSE_THAN_RANDOM,
    compare,
    compare_rank_tables,
    rank_frame,
)
from kgrank.evaluation.stats import mean_difference_interval, seed_sequence

FAST = {"bootstrap_resamples": 200}


def long_frame(systems: dict[str, np.ndarray], num_candidates, dataset: str | None = None) -> pd.DataFrame:
    """One row per (system, task) of ``systems`` (name: ranks), tasks "0-head", "1-head" ..."""
    frames = []
    for system, ranks in systems.items():
        ranks = np.asarray(ranks, dtype=float)
        counts = np.broadcast_to(np.asarray(num_candidates), ranks.shape)
        frame = pd.DataFrame(
            {
                "system": system,
                "task": [f"{index}-head" for index in range(len(ranks))],
                "rank": ranks,
                "num_candidates": counts,
            }
        )
        if dataset is not None:
            frame.insert(0, "dataset", dataset)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def row(table: pd.DataFrame, **where) -> pd.Series:
    mask = np.ones(len(table), dtype=bool)
    for column, value in where.items():
        mask &= (table[column] == value).to_numpy()
    assert mask.sum() == 1, where
    return table[mask].iloc[0]


def uniform_ranks(seed: int, tasks: int, num_candidates: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(1, num_candidates + 1, tasks).astype(float)


def test_identical_systems_have_p_one_and_a_difference_of_zero():
    ranks = uniform_ranks(1, 40, 30)
    result = compare(
        long_frame({"a": ranks, "b": ranks.copy()}, 30), metrics=["mrr", "hits@10", "gmr"], **FAST
    )
    assert list(result.pairs.columns) == list(PAIR_COLUMNS)
    assert len(result.pairs) == 3
    for _, pair in result.pairs.iterrows():
        assert pair["t_p"] == 1.0 and pair["wilcoxon_p"] == 1.0 and pair["t_statistic"] == 0.0
        assert pair["t_p_holm"] == 1.0 and not pair["t_significant"] and not pair["wilcoxon_significant"]
        assert pair["difference"] == 0.0
        assert (pair["difference_low"], pair["difference_high"]) == (0.0, 0.0)
        assert pair["adjusted_difference"] == 0.0
        assert (pair["adjusted_difference_low"], pair["adjusted_difference_high"]) == (0.0, 0.0)
        assert pair["better"] == ""
    assert result.summary.empty and list(result.summary.columns) == list(SUMMARY_COLUMNS)


def test_a_system_always_better_is_significantly_better_on_every_metric():
    worse = np.random.default_rng(2).integers(2, 21, 60).astype(float)
    result = compare(
        long_frame({"best": np.ones(60), "worse": worse}, 20),
        metrics=["mrr", "mr", "hmr", "gmr", "hits@1"],
        **FAST,
    )
    for _, pair in result.pairs.iterrows():
        metric = kgrank.lookup(pair["metric"]).metric
        assert pair["better"] == "best"
        assert pair["t_significant"] and pair["wilcoxon_significant"]
        # the difference is in the metric's units: negative for lower-is-better metrics
        assert np.sign(pair["difference"]) == (1 if metric.increasing else -1)
        assert np.sign(pair["t_statistic"]) == np.sign(pair["difference"])
        assert pair["difference_low"] <= pair["difference"] <= pair["difference_high"]
        assert 0 not in (np.sign(pair["difference_low"]), np.sign(pair["difference_high"]))
        # the adjusted difference is positive where the first system is better, MR included
        assert pair["adjusted_difference"] > 0 and pair["adjusted_difference_low"] > 0


def test_marks_against_random():
    tasks, candidates = 300, 50
    random_ranks = uniform_ranks(3, tasks, candidates)
    result = compare(
        long_frame(
            {"perfect": np.ones(tasks), "random": random_ranks, "last": np.full(tasks, float(candidates))},
            candidates,
        ),
        metrics=["mrr", "hits@10"],
        **FAST,
    )
    systems = result.systems
    assert list(systems.columns) == list(SYSTEM_COLUMNS)
    for metric in ("inverse_harmonic_mean_rank", "hits_at_10"):
        assert row(systems, system="perfect", metric=metric)["mark"] == ""
        assert row(systems, system="random", metric=metric)["mark"] == NOT_DISTINGUISHABLE
        last = row(systems, system="last", metric=metric)
        assert last["mark"] == WORSE_THAN_RANDOM and last["z_score"] < -1.96
    # the z-score is the one kgrank.evaluate reports, the mark's p its two-sided normal p
    random_mrr = row(systems, system="random", metric="inverse_harmonic_mean_rank")
    evaluated = kgrank.evaluate(random_ranks, candidates, metrics=["z_mrr", "amrr"], confidence=None)
    assert random_mrr["z_score"] == pytest.approx(evaluated["value"].iloc[1])
    assert random_mrr["adjusted_index"] == pytest.approx(evaluated["value"].iloc[0])
    assert random_mrr["z_p"] == pytest.approx(2 * scipy_stats.norm.sf(abs(random_mrr["z_score"])))
    # Holm over every (dataset, system, metric) row
    _, expected, _, _ = multipletests(systems["z_p"], method="holm")
    np.testing.assert_allclose(systems["z_p_holm"], expected)


def test_marks_use_holm_not_the_bare_threshold():
    # |z| a little above 1.96 alone is distinguishable; among many tests Holm is not convinced
    tasks, candidates = 400, 10
    generator = np.random.default_rng(0)
    systems = {f"s{index}": generator.integers(1, candidates + 1, tasks).astype(float) for index in range(6)}
    result = compare(long_frame(systems, candidates), metrics=["mr"], **FAST)
    marked = result.systems
    rejected, _, _, _ = multipletests(marked["z_p"], alpha=0.05, method="holm")
    np.testing.assert_array_equal(marked["mark"] == NOT_DISTINGUISHABLE, ~rejected)


@pytest.mark.parametrize(
    ("metric", "per_task", "sign"),
    [
        ("mrr", lambda r: 1 / r, 1),
        ("mr", lambda r: r, 1),
        ("gmr", np.log, 1),
        ("hmr", lambda r: 1 / r, -1),  # HMR = 1 / mean(1/r) falls as mean(1/r) grows
        ("imr", lambda r: r, -1),
        ("hits@3", lambda r: (r <= 3).astype(float), 1),
    ],
)
def test_paired_tests_equal_scipy_on_the_per_task_values(metric, per_task, sign):
    first, second = uniform_ranks(4, 80, 12), uniform_ranks(5, 80, 12)
    pair = compare(long_frame({"a": first, "b": second}, 12), metrics=[metric], **FAST).pairs.iloc[0]
    expected_t = scipy_stats.ttest_rel(per_task(first), per_task(second))
    assert pair["t_statistic"] == pytest.approx(sign * expected_t.statistic)
    assert pair["t_p"] == pytest.approx(expected_t.pvalue)
    assert pair["wilcoxon_p"] == pytest.approx(scipy_stats.wilcoxon(per_task(first), per_task(second)).pvalue)
    lookup = kgrank.lookup(metric).metric
    assert pair["difference"] == pytest.approx(lookup.value(first) - lookup.value(second))


def test_holm_columns_equal_statsmodels_over_every_comparison():
    frames = [
        long_frame(
            {name: uniform_ranks(seed + offset, 50, 15) for offset, name in enumerate("abc")}, 15, dataset
        )
        for seed, dataset in ((10, "one"), (20, "two"))
    ]
    result = compare(pd.concat(frames), metrics=["mrr", "hits@5"], alpha=0.1, **FAST)
    pairs = result.pairs
    assert len(pairs) == 2 * 2 * 3  # datasets x metrics x pairs: the family
    for test in ("t", "wilcoxon"):
        rejected, adjusted, _, _ = multipletests(pairs[f"{test}_p"], alpha=0.1, method="holm")
        np.testing.assert_allclose(pairs[f"{test}_p_holm"], adjusted)
        np.testing.assert_array_equal(pairs[f"{test}_significant"], rejected)
    assert "over all 12 (dataset, metric, pair) rows" in result.caption


@pytest.mark.parametrize(
    ("metric", "per_task", "better_is_higher"), [("mrr", lambda r: 1 / r, True), ("mr", lambda r: r, False)]
)
def test_two_datasets_give_a_summary_with_scipy_stouffer(metric, per_task, better_is_higher):
    generator = np.random.default_rng(7)
    data = {}
    frames = []
    for dataset, tasks, candidates in (("small", 60, 14), ("large", 150, 40)):
        a = np.minimum(generator.geometric(0.35, tasks), candidates).astype(float)
        b = np.minimum(generator.geometric(0.30, tasks), candidates).astype(float)
        data[dataset] = (a, b)
        frames.append(long_frame({"a": a, "b": b}, candidates, dataset))
    result = compare(pd.concat(frames), metrics=[metric], **FAST)
    summary = result.summary
    assert len(summary) == 1
    line = summary.iloc[0]
    pairs = result.pairs
    weights = pairs["tasks"].to_numpy(dtype=float)
    pooled = np.sum(weights * pairs["adjusted_difference"]) / weights.sum()
    assert line["adjusted_difference"] == pytest.approx(pooled)
    assert line["datasets"] == 2 and line["tasks"] == 210
    # one-sided tests in the direction of the pooled difference, on the adjusted scale
    first_better = pooled > 0
    alternative = "greater" if first_better == better_is_higher else "less"
    one_sided = [
        scipy_stats.ttest_rel(per_task(a), per_task(b), alternative=alternative).pvalue
        for a, b in data.values()
    ]
    expected = scipy_stats.combine_pvalues(one_sided, method="stouffer", weights=np.sqrt([60, 150]))
    assert line["stouffer_z"] == pytest.approx(expected.statistic)
    assert line["stouffer_p"] == pytest.approx(expected.pvalue)
    assert line["combined_p"] == pytest.approx(2 * min(expected.pvalue, 1 - expected.pvalue))
    assert line["better"] == ("a" if first_better else "b")
    assert "Stouffer" in line["method"]
    assert "small: " in line["per_dataset"] and "large: " in line["per_dataset"]


def test_a_dataset_against_the_combined_result_is_flagged():
    """Issue 47: the across-datasets row called one system significantly better while the
    other was significantly better on one dataset, and nothing said so. Here `a` is far
    better on a large dataset and significantly worse on a small one."""
    generator = np.random.default_rng(3)
    frames = []
    for dataset, tasks, better, worse in (("large", 400, 0.6, 0.2), ("small", 120, 0.2, 0.6)):
        a = np.minimum(generator.geometric(better, tasks), 30).astype(float)
        b = np.minimum(generator.geometric(worse, tasks), 30).astype(float)
        frames.append(long_frame({"a": a, "b": b}, 30, dataset))
    result = compare(pd.concat(frames), metrics=["mrr"], **FAST)
    line = result.summary.iloc[0]
    assert line["better"] == "a" and line["significant"]
    assert line["agreeing"] == "1 of 2"
    small = result.pairs.set_index("dataset").loc["small"]
    assert small["t_significant"] and small["difference"] < 0
    assert line["disagreeing"] == f"small (t {-abs(small['t_statistic']):+.3g})"
    assert "significantly against" in result.report() and "small (t -" in result.report()
    # where every dataset agrees, nothing is flagged
    agreeing = compare(pd.concat([frames[0], frames[0].assign(dataset="again")]), metrics=["mrr"], **FAST)
    assert agreeing.summary.iloc[0]["disagreeing"] == "" and agreeing.summary.iloc[0]["agreeing"] == "2 of 2"


def test_summary_keeps_only_pairs_on_two_datasets():
    frames = [
        long_frame({"a": uniform_ranks(1, 30, 9), "b": uniform_ranks(2, 30, 9)}, 9, "one"),
        long_frame(
            {"a": uniform_ranks(3, 30, 9), "b": uniform_ranks(4, 30, 9), "c": uniform_ranks(5, 30, 9)},
            9,
            "two",
        ),
    ]
    summary = compare(pd.concat(frames), metrics=["mrr"], **FAST).summary
    assert summary[["first", "second"]].values.tolist() == [["a", "b"]]


def test_stouffer_stays_finite_where_p_values_underflow():
    z, p = comparison.stouffer(np.array([60.0, 200.0]), np.array([400, 600]))
    assert np.isfinite(z) and z > 50 and p == 0.0
    negative, _ = comparison.stouffer(np.array([-60.0, -200.0]), np.array([400, 600]))
    assert negative == pytest.approx(-z)
    ordinary = scipy_stats.combine_pvalues(
        scipy_stats.t.sf([1.5, 2.5], [29, 99]), method="stouffer", weights=np.sqrt([30, 100])
    )
    assert comparison.stouffer(np.array([1.5, 2.5]), np.array([30, 100])) == pytest.approx(
        (ordinary.statistic, ordinary.pvalue)
    )


def test_intervals_are_paired_bootstraps_seeded_per_pair():
    a, b = uniform_ranks(8, 70, 25), uniform_ranks(9, 70, 25)
    two = compare(long_frame({"a": a, "b": b}, 25), metrics=["mrr", "gmr"], bootstrap_resamples=300, seed=3)
    mrr = row(two.pairs, metric="inverse_harmonic_mean_rank")
    # tasks are taken in the order of their names, whatever the order of the rows
    order = sorted(range(len(a)), key=lambda index: f"{index}-head")
    expected = mean_difference_interval(
        1 / a[order],
        1 / b[order],
        resamples=300,
        seed=seed_sequence(3, comparison.DEFAULT_DATASET, mrr["metric"], "a", "b"),
    )
    assert (mrr["difference_low"], mrr["difference_high"]) == pytest.approx(expected)
    gmr = row(two.pairs, metric="geometric_mean_rank")
    assert gmr["difference_low"] <= gmr["difference"] <= gmr["difference_high"]
    # the adjusted interval is the difference interval over (optimum - E): MR-like metrics flip it
    span = 1.0 - gmr["random_expectation"]
    assert gmr["adjusted_difference_low"] == pytest.approx(gmr["difference_high"] / span)
    # a third system leaves the intervals of the other pairs where they were
    three = compare(
        long_frame({"a": a, "b": b, "c": uniform_ranks(10, 70, 25)}, 25),
        metrics=["mrr", "gmr"],
        bootstrap_resamples=300,
        seed=3,
    )
    pd.testing.assert_frame_equal(
        three.pairs[(three.pairs["first"] == "a") & (three.pairs["second"] == "b")][
            ["difference_low", "difference_high"]
        ].reset_index(drop=True),
        two.pairs[["difference_low", "difference_high"]],
    )


def test_the_order_of_the_rows_does_not_matter():
    frame = long_frame({"a": uniform_ranks(1, 30, 9), "b": uniform_ranks(2, 30, 9)}, 9)
    shuffled = frame.sample(frac=1.0, random_state=0)
    first, second = compare(frame, **FAST), compare(shuffled, **FAST)
    pd.testing.assert_frame_equal(first.pairs, second.pairs)
    pd.testing.assert_frame_equal(first.systems, second.systems)


def test_derived_keys_compare_their_base_metric_once():
    result = compare(
        long_frame({"a": uniform_ranks(1, 30, 9), "b": uniform_ranks(2, 30, 9)}, 9),
        metrics=["mrr", "amrr", "z_mrr", "amri"],
        **FAST,
    )
    assert result.metrics == ("inverse_harmonic_mean_rank", "arithmetic_mean_rank")
    assert len(result.pairs) == 2


def test_a_random_model_that_is_optimal_is_not_distinguishable():
    # every task has one candidate: every system, random included, is at the optimum
    result = compare(long_frame({"a": np.ones(5), "b": np.ones(5)}, 1), metrics=["mrr"], **FAST)
    assert (result.systems["mark"] == NOT_DISTINGUISHABLE).all()
    assert np.isnan(result.pairs["adjusted_difference"].iloc[0])


def one_line_error(frame: pd.DataFrame, match: str, **options) -> str:
    with pytest.raises(KgrankInputError, match=match) as error:
        compare(frame, **{**FAST, **options})
    assert "\n" not in str(error.value)
    return str(error.value)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("median_rank", "median"),
        ("inverse_median_rank", "median"),
        ("std", "dispersion"),
        ("count", "count"),
        ("maximum_rank", "extreme"),
    ],
)
def test_metrics_without_a_mean_over_tasks_are_refused(name, reason):
    frame = long_frame({"a": uniform_ranks(1, 10, 9), "b": uniform_ranks(2, 10, 9)}, 9)
    one_line_error(frame, reason, metrics=[name])


def test_unequal_task_sets_are_refused_naming_dataset_system_and_count():
    frame = long_frame({"a": uniform_ranks(1, 10, 9), "b": uniform_ranks(2, 10, 9)}, 9, "nations")
    frame = frame.drop(index=frame.index[-1])
    message = one_line_error(frame, "same tasks")
    assert "'nations'" in message and "'b'" in message and "1 task(s)" in message


def test_other_bad_inputs_are_refused_in_one_line():
    good = long_frame({"a": uniform_ranks(1, 10, 9), "b": uniform_ranks(2, 10, 9)}, 9)
    one_line_error(good[good["system"] == "a"], "two systems")
    other = good.copy()
    other.loc[other.index[-1], "num_candidates"] = 10
    one_line_error(other, "same candidates")
    other = good.copy()
    other.loc[other.index[0], "rank"] = 10
    one_line_error(other, r"not in \[1, 9\]")
    one_line_error(pd.concat([good, good.iloc[:1]]), "twice")
    one_line_error(good.drop(columns="task"), "missing")
    one_line_error(good.iloc[[0, 10]], "at least two")


def kgrank_rank_table(realistic: np.ndarray, num_candidates: int) -> pd.DataFrame:
    tasks = len(realistic)
    return pd.DataFrame(
        {
            "triple_id": np.arange(tasks) // 2,
            "head": 0,
            "relation": 0,
            "tail": 1,
            "side": ["head", "tail"] * (tasks // 2),
            "optimistic": np.floor(realistic),
            "realistic": realistic,
            "pessimistic": np.ceil(realistic),
            "random": np.ceil(realistic),
            "num_candidates": num_candidates,
        }
    )


def test_rank_frame_builds_the_long_form_from_rank_tables():
    tables = {
        "a": kgrank_rank_table(np.array([1.0, 2.5, 3.0, 1.5]), 5),
        "b": kgrank_rank_table(np.array([2.0, 1.0, 4.0, 5.0]), 5),
    }
    single = rank_frame(tables)
    assert list(single.columns) == ["system", "task", "rank", "num_candidates"]
    assert single["task"].tolist()[:4] == ["0-head", "0-tail", "1-head", "1-tail"]
    assert single["rank"].tolist()[:4] == [1.0, 2.5, 3.0, 1.5]
    assert rank_frame(tables, rank_type="optimistic")["rank"].tolist()[:4] == [1.0, 2.0, 3.0, 1.0]
    nested = rank_frame({"nations": tables, "kinships": tables})
    assert nested["dataset"].unique().tolist() == ["nations", "kinships"]
    result = compare_rank_tables({"nations": tables, "kinships": tables}, metrics=["mrr"], **FAST)
    assert len(result.pairs) == 2 and len(result.summary) == 1
    with pytest.raises(KgrankInputError, match="realistic"):
        rank_frame({"a": tables["a"].drop(columns="realistic")})


def test_report_states_every_method():
    tasks, candidates = 100, 30
    frames = [
        long_frame(
            {
                "good": np.ones(tasks),
                "random": uniform_ranks(seed, tasks, candidates),
                "last": np.full(tasks, 30.0),
            },
            candidates,
            dataset,
        )
        for seed, dataset in ((1, "d1"), (2, "d2"))
    ]
    result = compare(pd.concat(frames), metrics=["mrr", "hits@10"], **FAST)
    caption = result.caption
    for phrase in (
        "paired t-test",
        "Wilcoxon",
        "Holm",
        "(dataset, metric, pair)",
        "(dataset, system, metric)",
        "percentile bootstrap",
        "Stouffer",
        WORSE_THAN_RANDOM,
        NOT_DISTINGUISHABLE,
    ):
        assert phrase in caption
    text = result.report()
    assert WORSE_THAN_RANDOM in text and "Across datasets" in text and "Stouffer" in text
    markdown = result.to_markdown()
    assert markdown.count("## ") == 4 and "| MRR" in markdown  # the paper table first, then the three
    latex = result.to_latex()
    assert latex.count(r"\begin{table}") == 4 and r"95\%" in latex


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**16),
    systems=st.integers(2, 4),
    # not 9 to 13 tasks: with ties or zeros there, scipy's Wilcoxon test enumerates every
    # one of the 2^n sign patterns (1.5 s a test at 13 tasks, 27 s for four systems'
    # comparison), and how its p-value is found does not bear on the tables' agreement
    tasks=st.one_of(st.integers(3, 8), st.integers(14, 40)),
    candidates=st.integers(2, 30),
)
def test_tables_agree_with_each_other(seed, systems, tasks, candidates):
    generator = np.random.default_rng(seed)
    counts = generator.integers(1, candidates + 1, tasks)
    ranks = {f"s{index}": np.floor(generator.random(tasks) * counts) + 1 for index in range(systems)}
    frame = long_frame(ranks, counts)
    result = compare(frame, metrics=["mrr", "mr", "gmr"], bootstrap_resamples=30)
    pairs, table = result.pairs, result.systems
    assert len(pairs) == 3 * systems * (systems - 1) // 2
    index = table.set_index(["system", "metric"])
    for _, pair in pairs.iterrows():
        first, second = (
            index.loc[(pair["first"], pair["metric"])],
            index.loc[(pair["second"], pair["metric"])],
        )
        assert pair["difference"] == pytest.approx(first["value"] - second["value"], abs=1e-12)
        if np.isfinite(pair["adjusted_difference"]):
            assert pair["adjusted_difference"] == pytest.approx(
                first["adjusted_index"] - second["adjusted_index"], abs=1e-9
            )
        # equal systems give a difference of exactly 0 but a t statistic of rounding noise
        # (1e-16), whose sign means nothing
        assert abs(pair["t_statistic"]) < 1e-9 or np.sign(pair["t_statistic"]) == np.sign(pair["difference"])
        assert pair["t_p_holm"] >= pair["t_p"] - 1e-15
    # reversing the order of the systems swaps first and second: the difference turns sign
    reversed_frame = pd.concat([frame[frame["system"] == name] for name in reversed(list(ranks))])
    swapped = compare(reversed_frame, metrics=["mrr", "mr", "gmr"], bootstrap_resamples=30).pairs
    merged = pairs.merge(
        swapped, left_on=["metric", "first", "second"], right_on=["metric", "second", "first"]
    )
    np.testing.assert_allclose(merged["difference_x"], -merged["difference_y"], atol=1e-12)
    np.testing.assert_allclose(merged["t_p_x"], merged["t_p_y"])


def test_the_paper_table_marks_what_the_tests_found():
    """Issue 47: a system x metric table a paper can take: each value with its interval
    (the registry's interval method, as kgrank evaluate gives it), the best in bold, †
    where the paired t-test (Holm) finds it worse than the best, ° / ‡ where it is not
    distinguishable from / worse than random; the caption names both Holm families."""
    from kgrank.evaluation.intervals import metric_interval

    generator = np.random.default_rng(3)
    systems = {
        "good": np.minimum(generator.geometric(0.6, 200), 20).astype(float),
        "mid": np.minimum(generator.geometric(0.45, 200), 20).astype(float),
        "random": generator.integers(1, 21, 200).astype(float),
        "bad": np.full(200, 20.0) - generator.integers(0, 2, 200),
    }
    result = compare(long_frame(systems, 20, "d"), metrics=["mrr"], **FAST)
    table = result.paper_table().set_index("system")["MRR"]
    assert table["good"].startswith("**") and "†" not in table["good"]
    assert table["mid"].endswith("†") and not table["mid"].startswith("**")
    assert table["random"].endswith("†°") and table["bad"].endswith("†‡")
    row = result.systems.set_index("system").loc["mid"]
    spread = metric_interval(
        kgrank.lookup("mrr").metric,
        systems["mid"],
        confidence=0.95,
        seed=[0, "system", "d", "mid", "inverse_harmonic_mean_rank"],
    )
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((spread.low, spread.high))
    assert table["mid"].startswith(f"{row['value']:.4g} [{row['ci_low']:.4g}, {row['ci_high']:.4g}]")
    caption = result.paper_caption()
    assert f"over all {len(result.pairs)} (dataset, metric, pair) rows" in caption
    assert f"Holm over all {len(result.systems)} (dataset, system, metric) rows" in caption
    latex = result.to_latex()
    assert (
        r"\textbf{" in latex and r"$^{\dagger}$$^{\ddagger}$" in latex and r"$^\dagger$: worse than" in latex
    )
    assert result.to_markdown().startswith("## Systems\n")


def test_the_latex_paper_table_escapes_metric_labels():
    frame = long_frame({"a": uniform_ranks(1, 40, 9), "b": uniform_ranks(2, 40, 9)}, 9, "d")
    latex = compare(frame, metrics=["mean_inverse_rank_power_1_2", "mrr"], **FAST).to_latex()
    header = next(line for line in latex.splitlines() if line.startswith("dataset & system"))
    assert r"r\^{}-1/2" in header and "^-" not in header.replace(r"\^{}-", "")


# --- several runs (seeds) of a system --------------------------------------------------------


def _runs(ranks_by_seed: list[np.ndarray], system: str, num_candidates, dataset: str | None = None):
    return pd.concat(
        [
            long_frame({system: ranks}, num_candidates, dataset).assign(seed=str(seed))
            for seed, ranks in enumerate(ranks_by_seed)
        ],
        ignore_index=True,
    )


def test_several_seeds_separate_the_seed_variance_from_the_test_sets():
    generator = np.random.default_rng(11)
    tasks, candidates = 300, 40
    a = [np.minimum(generator.geometric(p, tasks), candidates).astype(float) for p in (0.30, 0.40, 0.35)]
    b = [np.minimum(generator.geometric(p, tasks), candidates).astype(float) for p in (0.50, 0.52)]
    frame = pd.concat([_runs(a, "a", candidates), _runs(b, "b", candidates)], ignore_index=True)
    result = compare(frame, metrics=["mrr"], **FAST)
    per_seed = {"a": [np.mean(1 / ranks) for ranks in a], "b": [np.mean(1 / ranks) for ranks in b]}
    systems = result.systems.set_index("system")
    for system, values in per_seed.items():
        # the value is the mean over seeds of the per-task values: for MRR, the mean of per-seed MRRs
        assert systems.loc[system, "value"] == pytest.approx(np.mean(values), rel=1e-12)
        assert systems.loc[system, "seed_sd"] == pytest.approx(np.std(values, ddof=1), rel=1e-12)
        assert systems.loc[system, "seeds"] == len(values)
    crossed = kgrank.evaluation.stats.crossed_variance(np.column_stack([1 / ranks for ranks in a]))
    half = scipy_stats.t.ppf(0.975, crossed.degrees_of_freedom) * np.sqrt(crossed.variance)
    assert (systems.loc["a", "ci_low"], systems.loc["a", "ci_high"]) == pytest.approx(
        (crossed.mean - half, crossed.mean + half), rel=1e-12
    )
    assert systems.loc["a", "ci_method"] == comparison.CROSSED_METHOD
    assert systems.loc["a", "seed_share"] == pytest.approx(crossed.seed_share)
    pair = result.pairs.iloc[0]
    # the paired tests take the per-task means over seeds (the seeds held fixed) ...
    expected = scipy_stats.ttest_rel(np.mean([1 / r for r in a], axis=0), np.mean([1 / r for r in b], axis=0))
    assert pair["t_p"] == pytest.approx(expected.pvalue, rel=1e-9)
    # ... and Welch's test the per-seed values (the test set held fixed)
    welch = scipy_stats.ttest_ind(per_seed["a"], per_seed["b"], equal_var=False)
    assert (pair["seeds_t_statistic"], pair["seeds_t_p"]) == pytest.approx((welch.statistic, welch.pvalue))
    assert (pair["seeds_first"], pair["seeds_second"]) == (3, 2)
    # against random: the mean of R random runs
    moments = kgrank.evaluation.metrics.moments_of([kgrank.lookup("mrr").metric], np.full(tasks, candidates))
    expectation = moments["inverse_harmonic_mean_rank"].expectation
    variance = moments["inverse_harmonic_mean_rank"].variance
    z = (systems.loc["b", "value"] - expectation) / np.sqrt(variance / 2)
    assert systems.loc["b", "z_score"] == pytest.approx(z, rel=1e-9)
    assert systems.loc["b", "random_variance"] == pytest.approx(variance / 2, rel=1e-12)
    report = result.report()
    assert "seed share" in report and "Welch" in report and "crossed tasks x seeds" in report


def test_a_seed_interval_stays_within_the_metric_range():
    """Hits@1 of a system right on nearly every task: the interval's upper end would pass 1."""
    ranks = [np.ones(40), np.ones(40), np.r_[np.ones(38), [3.0, 4.0]]]
    frame = pd.concat([_runs(ranks, "a", 10), _runs([np.full(40, 5.0)] * 2, "b", 10)], ignore_index=True)
    systems = compare(frame, metrics=["hits@1"], **FAST).systems.set_index("system")
    assert 0 <= systems.loc["a", "ci_low"] <= systems.loc["a", "value"] <= systems.loc["a", "ci_high"] <= 1


def test_one_run_each_keeps_the_tables_as_they_were():
    generator = np.random.default_rng(2)
    a, b = uniform_ranks(1, 50, 20), np.minimum(generator.geometric(0.4, 50), 20).astype(float)
    plain = compare(long_frame({"a": a, "b": b}, 20), metrics=["mrr"], **FAST)
    labelled = compare(long_frame({"a": a, "b": b}, 20).assign(seed="7"), metrics=["mrr"], **FAST)
    assert list(plain.systems.columns) == list(SYSTEM_COLUMNS) and list(plain.pairs.columns) == list(
        PAIR_COLUMNS
    )
    pd.testing.assert_frame_equal(plain.systems, labelled.systems)
    pd.testing.assert_frame_equal(plain.pairs, labelled.pairs)
    # a system of several runs beside one of one run: no seed test for their pair
    mixed = compare(
        pd.concat([_runs([a, a[::-1]], "a", 20), long_frame({"b": b}, 20).assign(seed="0")]),
        metrics=["mrr"],
        **FAST,
    )
    pair = mixed.pairs.iloc[0]
    assert (pair["seeds_first"], pair["seeds_second"]) == (2, 1) and np.isnan(pair["seeds_t_p"])
    assert not pair["seeds_t_significant"]


def test_runs_that_rank_other_tasks_are_refused():
    a = _runs([uniform_ranks(1, 10, 5), uniform_ranks(2, 10, 5)], "a", 5)
    a = a.drop(index=a.index[-1])
    with pytest.raises(KgrankInputError, match=r"system 'a': seed\(s\) \['1'\] do not rank every task"):
        compare(pd.concat([a, long_frame({"b": uniform_ranks(3, 10, 5)}, 5).assign(seed="0")]), **FAST)
    twice = pd.concat([long_frame({"a": uniform_ranks(1, 10, 5)}, 5)] * 2)
    with pytest.raises(KgrankInputError, match=r"task '0-head' appears twice; give one rank per task"):
        compare(twice, **FAST)
    with pytest.raises(KgrankInputError, match="task '0-head', seed '0' appears twice"):
        compare(twice.assign(seed=0), **FAST)


def test_rank_frame_numbers_the_runs_of_a_list():
    table = pd.DataFrame(
        {"triple_id": [0, 0], "side": ["head", "tail"], "num_candidates": [5, 5], "realistic": [1.0, 2.0]}
    )
    frame = rank_frame({"a": [table, table.assign(realistic=[3.0, 1.0])], "b": table})
    assert frame.groupby("system")["seed"].apply(lambda seeds: sorted(set(seeds))).to_dict() == {
        "a": ["0", "1"],
        "b": ["0"],
    }


def _seeded_rank_files(folder, dataset_dir, quality: dict[str, tuple[float, float]], generator) -> list[str]:
    """NAME=PATH entries of two runs per system: long rank files by label whose ranks are
    geometric with the run's success probability, within each task's candidates."""
    from kgrank.systems import load_system

    test = pd.read_csv(dataset_dir / "test.tsv", sep="\t", header=None, names=["head", "relation", "tail"])
    tasks = pd.concat([test.assign(side="head"), test.assign(side="tail")], ignore_index=True)
    probe = folder / "probe.csv"
    tasks.assign(rank=1).to_csv(probe, index=False)
    counts = load_system(probe, dataset_dir).sort_values(["triple_id", "side"])["num_candidates"].to_numpy()
    ordered = tasks.assign(triple_id=np.tile(np.arange(len(test)), 2)).sort_values(["triple_id", "side"])
    entries = []
    for system, runs in quality.items():
        for run, success in enumerate(runs):
            ranks = np.minimum(generator.geometric(success, len(ordered)), counts)
            path = folder / f"{dataset_dir.name}-{system}-{run}.csv"
            ordered.drop(columns="triple_id").assign(rank=ranks).to_csv(path, index=False)
            entries.append(f"{system}={path}")
    return entries


@pytest.mark.slow
def test_compare_with_two_seeds_on_two_datasets_that_disagree(tmp_path, nations_dir, kinships_dir, capsys):
    """Issue 47's done-when: `kgrank compare` with two seeds per system on two datasets
    that disagree prints the flag and the paper-ready table."""
    from kgrank.cli.main import main

    generator = np.random.default_rng(47)
    large = _seeded_rank_files(tmp_path, kinships_dir, {"a": (0.6, 0.55), "b": (0.15, 0.2)}, generator)
    small = _seeded_rank_files(tmp_path, nations_dir, {"a": (0.15, 0.2), "b": (0.6, 0.55)}, generator)
    argv = ["compare", "--metrics", "mrr", "--bootstrap-resamples", "100"]
    argv += [
        "--dataset",
        str(kinships_dir),
        "--systems",
        *large,
        "--dataset",
        str(nations_dir),
        "--systems",
        *small,
    ]
    main([*argv, "--out-dir", str(tmp_path / "out")])
    report = capsys.readouterr().out
    systems = pd.read_csv(tmp_path / "out" / "systems.tsv", sep="\t")
    assert set(systems["seeds"]) == {2} and systems["seed_share"].between(0, 1).all()
    summary = pd.read_csv(tmp_path / "out" / "summary.tsv", sep="\t").iloc[0]
    assert summary["better"] == "a" and summary["agreeing"] == "1 of 2"
    assert summary["disagreeing"].startswith("nations (t -")
    # the flag, the paper-ready table with its marks, and the seed test
    assert "significantly against" in report and "nations (t -" in report
    assert report.startswith("Systems\n") and "**" in report and "†" in report
    assert "seeds t p (Holm)" in report and "seed share" in report


# --- one run per system: the comparison before seeds existed -----------------------------

GOLDEN = Path(__file__).parent / "data" / "compare_golden"


def _golden_table(generator: np.random.Generator, num_candidates: np.ndarray, strength: float) -> Any:
    tasks = len(num_candidates)
    drawn = generator.geometric(strength, tasks) + generator.integers(0, 3, tasks)
    realistic = np.minimum(num_candidates, drawn)
    optimistic = np.maximum(1, realistic - generator.integers(0, 2, tasks))
    pessimistic = np.minimum(num_candidates, realistic + generator.integers(0, 2, tasks))
    index = np.arange(tasks)
    return pd.DataFrame(
        {
            "triple_id": index // 2,
            "head": index // 2,
            "relation": 0,
            "tail": index // 2 + 1,
            "side": np.where(index % 2, "tail", "head"),
            "optimistic": optimistic.astype(float),
            "realistic": realistic.astype(float),
            "pessimistic": pessimistic.astype(float),
            "random": realistic.astype(float),
            "num_candidates": num_candidates,
        }
    )


def test_a_comparison_of_single_runs_equals_the_one_before_seeds():
    """Seeds changed the comparison of several runs of a system only: on single runs its
    three tables equal those of commit a763d3c (before seeds), written to
    tests/data/compare_golden/ by that commit's compare_rank_tables on these tables."""
    generator = np.random.default_rng(20261128)
    tables = {
        dataset: {
            system: _golden_table(generator, candidates, strength)
            for candidates in [generator.integers(20, 400, tasks)]
            for system, strength in (("a", 0.3), ("b", 0.25), ("c", 0.05))
        }
        for dataset, tasks in (("small", 60), ("large", 200))
    }
    metrics = ["mrr", "hits@10", "mr"]
    comparison = compare_rank_tables(tables, metrics=metrics, seed=5, bootstrap_resamples=300)
    for name in ("pairs", "systems", "summary"):
        golden = pd.read_csv(GOLDEN / f"{name}.tsv", sep="\t", keep_default_na=False, na_values=[""])
        now = pd.read_csv(
            io.StringIO(getattr(comparison, name).to_csv(sep="\t", index=False, float_format="%.10g")),
            sep="\t",
            keep_default_na=False,
            na_values=[""],
        )
        pd.testing.assert_frame_equal(now, golden, rtol=1e-9, obj=name)
