"""The ir study's analyses on hand-made item tables: aggregation with weights and moments by
hand, Kendall's tau on written-out rankings, the relation-mix re-weighting, AP@20 and
nDCG@20 of a subset by hand, stability at fraction 1, the paired t-test and Holm, and the
figures."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from kgrank.errors import KgrankInputError
from kgrank.evaluation import moments as mom
from kgrank.evaluation.metrics import lookup
from kgrank.evaluation.stats import holm, kendall_tau, kendall_tau_b_rows
from kgrank.studies.ir.aggregate import AGGREGATE_COLUMNS, aggregate_items, aggregate_rows, check_aligned
from kgrank.studies.ir.agreement import (
    AGREEMENT_COLUMNS,
    SAMPLE_MIX,
    SPARSITY_VALUE_COLUMNS,
    label_sparsity,
    relation_mix_weights,
)
from kgrank.studies.ir.discrimination import (
    DISCRIMINATION_COLUMNS,
    DISCRIMINATION_SUMMARY_COLUMNS,
    discrimination,
    discrimination_summary,
)
from kgrank.studies.ir.figures import (
    plot_discrimination,
    plot_stability,
    plot_tau_by_depth,
    plot_values_by_depth,
)
from kgrank.studies.ir.stability import (
    STABILITY_COLUMNS,
    STABILITY_SUMMARY_COLUMNS,
    best_rank_closed_form,
    best_rank_tables,
    draw_subsets,
    micro_rows,
    stability,
    stability_summary,
    subset_ap_ndcg,
    subset_values,
)

HITS = (1, 3, 10)
MOMENT_METRICS = ("arithmetic_mean_rank", "inverse_harmonic_mean_rank", *(f"hits_at_{k}" for k in HITS))
CUTOFF = 20


def _ap_ndcg(positions: list[int]) -> tuple[float, float]:
    """trec_eval's map_cut_20 and ndcg_cut_20 of one query from its relevant answers'
    positions, written as the definitions read (a loop, independent of the code under test)."""
    positions = sorted(positions)
    precision = sum((place + 1) / p for place, p in enumerate(positions) if p <= CUTOFF)
    gain = sum(1 / math.log2(1 + p) for p in positions if p <= CUTOFF)
    ideal = sum(1 / math.log2(1 + i) for i in range(1, min(len(positions), CUTOFF) + 1))
    return precision / len(positions), gain / ideal


def item_table(answers: pd.DataFrame) -> pd.DataFrame:
    """An item table (the spec's format) from one row per relevant answer with columns
    evaluation, query, side, relation, num_other (M) and rank (the answer's filtered
    realistic rank, no ties). An answer's position in the run list is its rank plus the
    relevant answers ranked above it."""
    answers = answers.sort_values(["evaluation", "query", "rank"], kind="stable").reset_index(drop=True)
    group = answers.groupby(["evaluation", "query"], sort=False)
    answers["num_relevant"] = group["rank"].transform("size")
    answers["position"] = answers["rank"] + group.cumcount()
    answers["num_candidates"] = answers["num_other"] + 1
    micro = answers.assign(averaging="micro", weight=1.0)
    pykeen = answers.assign(averaging="macro-pykeen", weight=1.0 / answers["num_relevant"])
    macro = group.agg(
        side=("side", "first"),
        relation=("relation", "first"),
        num_other=("num_other", "first"),
        num_relevant=("num_relevant", "first"),
        rank=("rank", "min"),
        position=("position", "min"),
        positions=("position", list),
    ).reset_index()
    macro = macro.assign(
        averaging="macro", weight=1.0, num_candidates=macro["num_other"] + macro["num_relevant"]
    )
    for frame in (micro, pykeen):
        for metric in MOMENT_METRICS:
            definition = lookup(metric).metric
            frame[metric] = definition.transform.function(frame["rank"].to_numpy(dtype=float))
            first, second = definition.transform.task_moments(frame["num_candidates"].to_numpy())
            frame[f"{metric}_expectation"] = first
            frame[f"{metric}_variance"] = second - first * first
    pykeen[[f"{metric}_variance" for metric in MOMENT_METRICS]] = np.nan
    for metric in MOMENT_METRICS:
        definition = lookup(metric).metric
        macro[metric] = definition.transform.function(macro["rank"].to_numpy(dtype=float))
        first, second = mom.best_rank_moments(
            definition.transform.function, macro["num_other"].to_numpy(), macro["num_relevant"].to_numpy()
        )
        macro[f"{metric}_expectation"] = first
        macro[f"{metric}_variance"] = second - first * first
    scores = [_ap_ndcg(positions) for positions in macro["positions"]]
    macro["ap_at_20"] = [ap for ap, _ in scores]
    macro["ndcg_at_20"] = [ndcg for _, ndcg in scores]
    table = pd.concat([micro, macro.drop(columns="positions"), pykeen], ignore_index=True)
    table["item"] = table.groupby(["evaluation", "averaging"]).cumcount()
    return table.drop(columns=["num_other", "rank"])


def _answers(evaluation: str, queries: list[tuple[str, int, int, list[int]]]) -> pd.DataFrame:
    """Answer rows of one evaluation from (side, relation, M, ranks of its answers) per query."""
    rows = [
        {
            "evaluation": evaluation,
            "query": query,
            "side": side,
            "relation": relation,
            "num_other": m,
            "rank": r,
        }
        for query, (side, relation, m, ranks) in enumerate(queries)
        for r in ranks
    ]
    return pd.DataFrame(rows)


# --- aggregation -------------------------------------------------------------------------


def _two_query_items() -> pd.DataFrame:
    # query 0: two answers ranked 1 and 3 among M = 9 others; query 1: one answer ranked 4, M = 4
    return item_table(_answers("test", [("head", 0, 9, [1, 3]), ("tail", 1, 4, [4])]))


def test_item_table_builder_positions_and_macro_rank() -> None:
    items = _two_query_items()
    micro = items[items["averaging"] == "micro"]
    assert micro["position"].tolist() == [1, 4, 4]  # rank 3 with one relevant answer above: position 4
    macro = items[items["averaging"] == "macro"]
    assert macro["arithmetic_mean_rank"].tolist() == [1, 4]
    assert macro["num_candidates"].tolist() == [11, 5]


def test_aggregation_by_hand() -> None:
    items = _two_query_items()
    table = aggregate_items({"a": items}).set_index(["averaging", "metric"])
    # micro MRR: (1 + 1/3 + 1/4) / 3; candidates 10, 10, 5: E = (H10/10 + H10/10 + H5/5) / 3
    h10, h5 = sum(1 / k for k in range(1, 11)), sum(1 / k for k in range(1, 6))
    h10_2, h5_2 = sum(1 / k**2 for k in range(1, 11)), sum(1 / k**2 for k in range(1, 6))
    mrr = table.loc[("micro", "inverse_harmonic_mean_rank")]
    assert mrr["value"] == pytest.approx((1 + 1 / 3 + 1 / 4) / 3)
    expectation = (2 * h10 / 10 + h5 / 5) / 3
    assert mrr["expectation"] == pytest.approx(expectation)
    variance = (2 * (h10_2 / 10 - (h10 / 10) ** 2) + (h5_2 / 5 - (h5 / 5) ** 2)) / 9
    assert mrr["variance"] == pytest.approx(variance)
    assert mrr["adjusted_index"] == pytest.approx((mrr["value"] - expectation) / (1 - expectation))
    assert mrr["z_score"] == pytest.approx((mrr["value"] - expectation) / math.sqrt(variance))
    # micro MR = (1 + 3 + 4) / 3; E = (5.5 + 5.5 + 3) / 3; lower is better: the z-score's sign flips
    mr = table.loc[("micro", "arithmetic_mean_rank")]
    assert mr["value"] == pytest.approx(8 / 3)
    assert mr["expectation"] == pytest.approx(14 / 3)
    assert mr["adjusted_index"] == pytest.approx((8 / 3 - 14 / 3) / (1 - 14 / 3))
    mr_variance = (2 * (100 - 1) / 12 + (25 - 1) / 12) / 9
    assert mr["z_score"] == pytest.approx(-(8 / 3 - 14 / 3) / math.sqrt(mr_variance))
    # macro-pykeen: weights 1/2, 1/2, 1: MRR = (0.5 + 1/6 + 1/4) / 2; no variance, so no z-score
    pykeen = table.loc[("macro-pykeen", "inverse_harmonic_mean_rank")]
    assert pykeen["value"] == pytest.approx((0.5 + 1 / 6 + 0.25) / 2)
    pykeen_expectation = (h10 / 10 + h5 / 5) / 2
    assert pykeen["expectation"] == pytest.approx(pykeen_expectation)
    assert pykeen["adjusted_index"] == pytest.approx(
        (pykeen["value"] - pykeen_expectation) / (1 - pykeen_expectation)
    )
    assert np.isnan(pykeen["variance"]) and np.isnan(pykeen["z_score"])
    # macro Hits@1: query 0's best answer is at rank 1, query 1's at 4: 1/2.
    # P(best <= 1) = R / (M + R): 2/11 and 1/5; variances p(1 - p), averaged with 1/Q^2
    hits = table.loc[("macro", "hits_at_1")]
    assert hits["value"] == pytest.approx(0.5)
    assert hits["expectation"] == pytest.approx((2 / 11 + 1 / 5) / 2)
    assert hits["variance"] == pytest.approx((2 / 11 * 9 / 11 + 1 / 5 * 4 / 5) / 4)
    # AP@20 of query 0 (positions 1, 4): (1/1 + 2/4) / 2; query 1 (position 4): 1/4
    ap = table.loc[("macro", "ap_at_20")]
    assert ap["value"] == pytest.approx((0.75 + 0.25) / 2)
    assert np.isnan(ap["expectation"]) and np.isnan(ap["adjusted_index"])
    assert ("micro", "ap_at_20") not in table.index
    assert list(aggregate_items({"a": items}).columns) == list(AGGREGATE_COLUMNS)


def test_aggregation_weights_by_hand() -> None:
    rows = pd.DataFrame(
        {
            "weight": [1.0, 3.0],
            "inverse_harmonic_mean_rank": [1.0, 0.2],
            "inverse_harmonic_mean_rank_expectation": [0.1, 0.3],
            "inverse_harmonic_mean_rank_variance": [0.04, 0.01],
        }
    )
    result = aggregate_rows(rows, "inverse_harmonic_mean_rank")
    assert result["value"] == pytest.approx((1.0 + 0.6) / 4)
    assert result["expectation"] == pytest.approx((0.1 + 0.9) / 4)
    assert result["variance"] == pytest.approx((0.04 + 9 * 0.01) / 16)
    assert result["adjusted_index"] == pytest.approx((0.4 - 0.25) / 0.75)
    assert result["z_score"] == pytest.approx(0.15 / math.sqrt(0.13 / 16))
    other = aggregate_rows(rows, "inverse_harmonic_mean_rank", np.array([1.0, 0.0]))
    assert other["value"] == pytest.approx(1.0) and other["variance"] == pytest.approx(0.04)


def test_misaligned_tables_name_the_system() -> None:
    items = _two_query_items()
    other = items.copy()
    other.loc[0, "num_candidates"] = 99
    with pytest.raises(KgrankInputError, match="item table of b: column num_candidates"):
        check_aligned({"a": items, "b": other})
    with pytest.raises(KgrankInputError, match="item table of c: 3 rows"):
        check_aligned({"a": items, "c": items.iloc[:3]})


# --- label sparsity ------------------------------------------------------------------------

# Micro ranks per system: FB-Test-S has query 0 (head, relation 0) and query 1 (tail,
# relation 1) with one answer each; FB-Test-S-C adds a second answer to query 0 and query
# 2 (head, relation 2). Micro MRR on S: a 1, b 0.75, c 0.5; on S-C: a 0.8, b 0.45, c 0.5833.
SAMPLE_RANKS = {"a": [[1], [1]], "b": [[2], [1]], "c": [[2], [2]]}
POOLED_RANKS = {"a": [[1, 5], [1], [1]], "b": [[2, 5], [1], [10]], "c": [[2, 3], [2], [1]]}
QUERIES = [("head", 0), ("tail", 1), ("head", 2)]
RELATIONS = pd.DataFrame({"relation": [0, 1, 2], "category": ["1-N", "N-1", "1-1"]})


def _sparsity_items() -> dict[str, pd.DataFrame]:
    """Per system: sample, pooled, pooled-d0 (= sample) and pooled-d1 (= pooled), M = 9."""
    tables = {}
    for system in SAMPLE_RANKS:
        sample = [(*QUERIES[q], 9, ranks) for q, ranks in enumerate(SAMPLE_RANKS[system])]
        pooled = [(*QUERIES[q], 9, ranks) for q, ranks in enumerate(POOLED_RANKS[system])]
        answers = pd.concat(
            [
                _answers("sample", sample),
                _answers("pooled", pooled),
                _answers("pooled-d0", sample),
                _answers("pooled-d1", pooled),
            ],
            ignore_index=True,
        )
        tables[system] = item_table(answers)
    return tables


def _tau(agreement: pd.DataFrame, **where: object) -> pd.Series:
    mask = np.ones(len(agreement), dtype=bool)
    for column, value in where.items():
        mask &= (agreement[column] == value).to_numpy()
    return agreement[mask]


def test_kendall_tau_by_hand() -> None:
    # S: a > b > c, S-C: a > c > b: two concordant pairs, one discordant: tau = 1/3; of the
    # 3! orders, only the identity and its reverse have |tau| > 1/3: exact p = 1
    tau, p_value = kendall_tau(np.array([1.0, 0.75, 0.5]), np.array([0.8, 0.45, 0.5833]))
    assert tau == pytest.approx(1 / 3)
    assert p_value == pytest.approx(1.0)
    # a tie on one side (b = c): tau-b = (2 - 0) / sqrt((3 - 1) * 3)
    tau, _ = kendall_tau(np.array([1.0, 0.5, 0.5]), np.array([0.6, 0.35, 0.4167]))
    assert tau == pytest.approx(2 / math.sqrt(6))
    assert np.isnan(kendall_tau(np.array([1.0, 1.0]), np.array([0.1, 0.2]))[0])
    assert np.isnan(kendall_tau(np.array([1.0]), np.array([0.1]))[0])


def test_label_sparsity_taus_by_hand() -> None:
    agreement, values = label_sparsity(_sparsity_items(), RELATIONS, depths=(0, 1))
    assert list(agreement.columns) == list(AGREEMENT_COLUMNS)
    assert list(values.columns) == list(SPARSITY_VALUE_COLUMNS)
    mrr = dict(metric="inverse_harmonic_mean_rank", averaging="micro", variant="raw")
    row = _tau(agreement, comparison="sample vs pooled", **mrr)
    assert row["tau"].item() == pytest.approx(1 / 3)
    assert row["num_systems"].item() == 3
    # pooled-d0 is S, pooled-d1 is S-C
    by_depth = _tau(agreement, comparison="depth vs pooled", **mrr).set_index("depth")["tau"]
    assert by_depth.to_dict() == pytest.approx({0.0: 1 / 3, 1.0: 1.0})
    by_depth = _tau(agreement, comparison="depth vs sample", **mrr).set_index("depth")["tau"]
    assert by_depth.to_dict() == pytest.approx({0.0: 1.0, 1.0: 1 / 3})
    # relation 0 (1-N), head side: S gives a 1, b 0.5, c 0.5; S-C a 0.6, b 0.35, c 0.4167
    row = _tau(
        agreement, comparison="sample vs pooled by category and side", category="1-N", side="head", **mrr
    )
    assert row["tau"].item() == pytest.approx(2 / math.sqrt(6))
    # relation 2 is not in S: no 1-1 comparison
    assert not (agreement["category"] == "1-1").any()
    ranks = values[
        (values["evaluation"] == "pooled") & (values["category"] == "all") & (values["side"] == "both")
    ]
    ranks = ranks[(ranks["weighting"] == "as is") & (ranks["averaging"] == "micro")]
    ranks = ranks[ranks["metric"] == "inverse_harmonic_mean_rank"]
    assert ranks.set_index("model")["rank"].to_dict() == {"a": 1.0, "b": 3.0, "c": 2.0}


def test_label_sparsity_refuses_systems_with_other_metrics() -> None:
    items = _sparsity_items()
    last = list(items)[-1]
    items[last] = items[last].drop(columns="inverse_harmonic_mean_rank")
    message = f"the one of {last} has no column inverse_harmonic_mean_rank,"
    with pytest.raises(KgrankInputError, match=message):
        label_sparsity(items, RELATIONS, depths=(0, 1))


def test_adjusted_tau_equals_raw_tau() -> None:
    """Within one evaluation the expectation (and variance) is common to all systems, so the
    adjusted index and the z-score order the systems as the raw value does: same tau."""
    agreement, values = label_sparsity(_sparsity_items(), RELATIONS, depths=(0, 1))
    keys = ["comparison", "depth", "category", "side", "weighting", "averaging", "metric"]
    table = agreement.pivot_table(index=keys, columns="variant", values="tau", dropna=False)
    with_index = table[table["adjusted index"].notna()]
    assert len(with_index) > 20
    assert np.allclose(with_index["adjusted index"], with_index["raw"], equal_nan=True)
    with_z = table[table["z-score"].notna()]
    assert np.allclose(with_z["z-score"], with_z["raw"], equal_nan=True)
    # ... while the adjusted values themselves differ between evaluations of different E
    cell = values[(values["metric"] == "inverse_harmonic_mean_rank") & (values["averaging"] == "macro")]
    cell = cell[(cell["category"] == "all") & (cell["side"] == "both") & (cell["weighting"] == "as is")]
    cell = cell[cell["model"] == "a"]
    expectations = cell.set_index("evaluation")["expectation"]
    assert expectations["sample"] != pytest.approx(expectations["pooled"])


def test_relation_mix_weights_by_hand() -> None:
    target = pd.DataFrame({"relation": [0, 0, 1, 2], "weight": [1.0, 1.0, 1.0, 1.0]})
    source = pd.DataFrame({"relation": [0, 1], "weight": [1.0, 1.0]})
    # relation 0 carries 1/2 of S's weight, spread over its two rows; relation 2 is not in S
    assert relation_mix_weights(target, source).tolist() == pytest.approx([0.25, 0.25, 0.5, 0.0])
    # macro-pykeen rows: weights 1/num_relevant sum to one per query
    target = target.assign(weight=[0.5, 0.5, 1.0, 1.0])
    source = pd.DataFrame({"relation": [0, 1, 1], "weight": [1.0, 0.5, 0.5]})
    assert relation_mix_weights(target, source).tolist() == pytest.approx([0.25, 0.25, 0.5, 0.0])


def test_reweighted_pooled_values_by_hand() -> None:
    agreement, values = label_sparsity(_sparsity_items(), RELATIONS, depths=())
    cell = values[(values["weighting"] == SAMPLE_MIX) & (values["metric"] == "inverse_harmonic_mean_rank")]
    micro = cell[cell["averaging"] == "micro"].set_index("model")["value"]
    # weights 1/4, 1/4 on query 0's answers, 1/2 on query 1's, 0 on query 2's
    assert micro.to_dict() == pytest.approx(
        {"a": 0.25 * 1.2 + 0.5, "b": 0.25 * 0.7 + 0.5, "c": 0.25 * (0.5 + 1 / 3) + 0.25}
    )
    macro = cell[cell["averaging"] == "macro"].set_index("model")["value"]
    # one query per relation: 1/2 query 0 (best rank), 1/2 query 1
    assert macro.to_dict() == pytest.approx({"a": 1.0, "b": 0.75, "c": 0.5})
    # with S's relation mix, S-C ranks micro MRR as S does
    row = _tau(
        agreement,
        comparison="sample vs pooled, relation mix of sample",
        averaging="micro",
        metric="inverse_harmonic_mean_rank",
        variant="raw",
    )
    assert row["tau"].item() == pytest.approx(1.0)


def test_relations_without_category_are_named() -> None:
    with pytest.raises(KgrankInputError, match="no category for relation 2"):
        label_sparsity(_sparsity_items(), RELATIONS.iloc[:2], depths=())


# --- stability -------------------------------------------------------------------------------


def test_tau_b_rows_match_scipy() -> None:
    generator = np.random.default_rng(3)
    reference = np.array([0.3, 0.1, 0.3, 0.5, 0.2])  # with a tie
    rankings = generator.integers(0, 4, size=(40, 5)).astype(float)  # many ties
    taus = kendall_tau_b_rows(reference, rankings)
    for tau, ranking in zip(taus, rankings, strict=True):
        expected = stats.kendalltau(reference, ranking).statistic if np.ptp(ranking) else np.nan
        assert tau == pytest.approx(expected, nan_ok=True)


def test_subset_ap_ndcg_by_hand() -> None:
    # query 0: relevant at positions 1, 3, 4; query 1: at 2; query 2: at 2 and 21
    positions = np.array([1, 3, 4, 2, 2, 21])
    query = np.array([0, 0, 0, 1, 2, 2])
    sampled = np.array([[1, 1, 1, 1, 1, 1], [1, 0, 1, 0, 0, 1]])
    ap, ndcg, counts = subset_ap_ndcg(positions, sampled, query, 3)
    assert counts.tolist() == [[3, 1, 2], [2, 0, 1]]
    log2 = math.log2
    # whole set: AP (1/1 + 2/3 + 3/4) / 3; query 2: only position 2 is within the cut-off
    assert ap[0].tolist() == pytest.approx([(1 + 2 / 3 + 3 / 4) / 3, 1 / 2, (1 / 2) / 2])
    ideal_3 = 1 + 1 / log2(3) + 1 / log2(4)
    assert ndcg[0].tolist() == pytest.approx(
        [(1 + 1 / log2(4) + 1 / log2(5)) / ideal_3, 1 / log2(3), (1 / log2(3)) / (1 + 1 / log2(3))]
    )
    # subset: position 3 left out, 4 moves up to 3; query 1 empty; query 2's 21 moves up to 20
    assert ap[1, 0] == pytest.approx((1 + 2 / 3) / 2)
    assert np.isnan(ap[1, 1]) and np.isnan(ndcg[1, 1])
    assert ap[1, 2] == pytest.approx(1 / 20)
    assert ndcg[1].tolist() == pytest.approx(
        [(1 + 1 / log2(4)) / (1 + 1 / log2(3)), np.nan, 1 / log2(21)], nan_ok=True
    )


def _stability_items() -> dict[str, pd.DataFrame]:
    """Four systems on one evaluation `test`: six queries with one to three answers."""
    queries = [
        ("head", 0, 30),
        ("tail", 0, 25),
        ("head", 1, 30),
        ("tail", 1, 12),
        ("head", 2, 40),
        ("tail", 2, 30),
    ]
    ranks = {
        "a": [[1, 2], [1], [3, 4, 9], [1], [2, 30], [1]],
        "b": [[2, 5], [3], [1, 2, 20], [4], [1, 15], [7]],
        "c": [[10, 12], [6], [5, 22, 25], [2], [8, 9], [2]],
        "d": [[4, 28], [20], [12, 13, 14], [9], [33, 40], [11]],
    }
    return {
        system: item_table(
            _answers("test", [(*query, r) for query, r in zip(queries, per_query, strict=True)])
        )
        for system, per_query in ranks.items()
    }


def test_whole_set_reproduces_the_item_tables() -> None:
    items = _stability_items()
    rows, tables = micro_rows(items, "test")
    best_rank = best_rank_tables(rows, rows.metrics)
    whole = subset_values(rows, tables, np.ones((1, rows.query_order.size)), best_rank)
    aggregated = aggregate_items(items).set_index(["averaging", "metric", "model"])
    for (averaging, metric), variants in whole.items():
        for variant, column in (
            ("raw", "value"),
            ("adjusted index", "adjusted_index"),
            ("z-score", "z_score"),
        ):
            if variant not in variants:
                continue
            expected = [aggregated.loc[(averaging, metric, system), column] for system in items]
            assert variants[variant][0] == pytest.approx(expected), (averaging, metric, variant)
    assert ("macro", "ap_at_20") in whole and "z-score" not in whole["macro-pykeen", "hits_at_1"]


def test_stability_at_the_whole_set_and_its_draws() -> None:
    items = _stability_items()
    taus = stability(items, ["test"], fractions=(1.0, 0.5), repetitions=4, seed=7, dataset="toy")
    assert list(taus.columns) == list(STABILITY_COLUMNS)
    whole = taus[taus["fraction"] == 1.0]
    assert len(whole) == 4 * taus[["averaging", "metric", "variant"]].drop_duplicates().shape[0]
    assert (whole["tau"] == 1.0).all()
    half = taus[taus["fraction"] == 0.5]
    assert half["tau"].between(-1, 1).all() and half["tau"].lt(1).any()
    # the adjusted index and z-score give the raw tau on every subset
    table = half.pivot_table(index=["averaging", "metric", "repetition"], columns="variant", values="tau")
    assert np.allclose(table["adjusted index"].dropna(), table.loc[table["adjusted index"].notna(), "raw"])
    summary = stability_summary(taus)
    assert list(summary.columns) == list(STABILITY_SUMMARY_COLUMNS)
    assert (summary["repetitions"] == 4).all()
    assert (summary.loc[summary["fraction"] == 1.0, ["mean_tau", "tau_p05", "tau_p95"]] == 1.0).all().all()
    # draws: the requested size, reproducible, different per repetition
    draws = draw_subsets(10, 0.3, 3, seed=7)
    assert draws.sum(axis=1).tolist() == [3, 3, 3]
    assert np.array_equal(draws, draw_subsets(10, 0.3, 3, seed=7))
    assert not np.array_equal(draws[0], draws[1]) or not np.array_equal(draws[1], draws[2])
    with pytest.raises(KgrankInputError, match="fraction 1.5"):
        stability(items, ["test"], fractions=(1.5,), repetitions=1, seed=0)


def test_best_rank_closed_forms_match_best_rank_moments() -> None:
    num_other, num_relevant = np.meshgrid(np.arange(0, 30), np.arange(1, 8))
    num_other, num_relevant = num_other.ravel(), num_relevant.ravel()
    for metric in ("arithmetic_mean_rank", "hits_at_1", "hits_at_3", "hits_at_10"):
        first, second = best_rank_closed_form(metric, num_other, num_relevant)
        expected_first, expected_second = mom.best_rank_moments(
            lookup(metric).metric.transform.function, num_other, num_relevant
        )
        assert first == pytest.approx(expected_first, rel=1e-10), metric
        assert second == pytest.approx(expected_second, rel=1e-10), metric
    # M = 3 others, R = 2 relevant: P(K = 1) = 2/5, P(K = 2) = 3/5 * 2/4, ...: E[K] = 6/3
    first, _ = best_rank_closed_form("arithmetic_mean_rank", np.array([3]), np.array([2]))
    assert first[0] == pytest.approx(1 * 2 / 5 + 2 * 3 / 10 + 3 * 2 / 10 + 4 * 1 / 10)
    assert best_rank_closed_form("inverse_harmonic_mean_rank", num_other, num_relevant) is None


def test_subset_ap_and_ndcg_against_the_definition() -> None:
    """Random halves of the answers: AP@20 and nDCG@20 of each system equal the loop over
    each query's sampled answers, whose positions drop by the unsampled answers above."""
    items = _stability_items()
    rows, tables = micro_rows(items, "test")
    sampled = draw_subsets(rows.query_order.size, 0.5, 5, seed=1)
    values = subset_values(rows, tables, sampled, best_rank_tables(rows, rows.metrics))
    for column, system in enumerate(items):
        micro = tables[system]
        for repetition, draw in enumerate(sampled):
            scores = []
            for _, answers in micro.assign(kept=draw).groupby("query"):
                positions = answers["position"].sort_values().to_numpy()
                kept = answers.sort_values("position")["kept"].to_numpy() > 0
                if kept.any():
                    moved = [
                        p - int((~kept[:place]).sum()) for place, p in enumerate(positions) if kept[place]
                    ]
                    scores.append(_ap_ndcg(moved))
            assert values["macro", "ap_at_20"]["raw"][repetition, column] == pytest.approx(
                np.mean([ap for ap, _ in scores])
            )
            assert values["macro", "ndcg_at_20"]["raw"][repetition, column] == pytest.approx(
                np.mean([ndcg for _, ndcg in scores])
            )


# --- discriminative power ----------------------------------------------------------------------

STABILITY_RANKS = {
    "a": [[1, 2], [1], [3, 4, 9], [1], [2, 30], [1]],
    "b": [[2, 5], [3], [1, 2, 20], [4], [1, 15], [7]],
}


def test_paired_t_tests_match_scipy() -> None:
    items = _stability_items()
    pairs = discrimination(items, "test", alpha=0.05, dataset="toy")
    assert list(pairs.columns) == list(DISCRIMINATION_COLUMNS)
    assert len(pairs[(pairs["averaging"] == "micro") & (pairs["metric"] == "hits_at_1")]) == 6  # 4 systems
    row = pairs[
        (pairs["averaging"] == "micro")
        & (pairs["metric"] == "inverse_harmonic_mean_rank")
        & (pairs["first"] == "a")
        & (pairs["second"] == "b")
    ].iloc[0]
    # the answers in query order, as the item table lists them (ranks sorted within a query)
    first = np.array([1 / r for ranks in STABILITY_RANKS["a"] for r in sorted(ranks)])
    second = np.array([1 / r for ranks in STABILITY_RANKS["b"] for r in sorted(ranks)])
    expected = stats.ttest_rel(first, second)
    assert row["t_p"] == pytest.approx(expected.pvalue)
    assert row["t_statistic"] == pytest.approx(expected.statistic)
    assert row["mean_difference"] == pytest.approx((first - second).mean())
    assert row["tasks"] == 10
    # macro-pykeen: one value per query, the mean of its answers' reciprocal ranks
    row = pairs[
        (pairs["averaging"] == "macro-pykeen")
        & (pairs["metric"] == "inverse_harmonic_mean_rank")
        & (pairs["first"] == "a")
        & (pairs["second"] == "b")
    ].iloc[0]
    first = np.array([np.mean([1 / r for r in ranks]) for ranks in STABILITY_RANKS["a"]])
    second = np.array([np.mean([1 / r for r in ranks]) for ranks in STABILITY_RANKS["b"]])
    assert row["t_p"] == pytest.approx(stats.ttest_rel(first, second).pvalue)
    assert row["tasks"] == 6
    # macro: the best answer per query; AP@20 tested too
    macro = pairs[(pairs["averaging"] == "macro") & (pairs["first"] == "a") & (pairs["second"] == "b")]
    assert set(macro["metric"]) >= {"inverse_harmonic_mean_rank", "ap_at_20", "ndcg_at_20"}
    best = macro[macro["metric"] == "inverse_harmonic_mean_rank"].iloc[0]
    first = np.array([1 / min(ranks) for ranks in STABILITY_RANKS["a"]])
    second = np.array([1 / min(ranks) for ranks in STABILITY_RANKS["b"]])
    assert best["t_p"] == pytest.approx(stats.ttest_rel(first, second).pvalue)
    # identical systems: nothing to test
    same = discrimination(
        {"a": items["a"], "copy": items["a"]}, "test", alpha=0.05, metrics=["inverse_harmonic_mean_rank"]
    )
    assert len(same) == 3  # one pair, three averagings
    assert (same["t_p"] == 1.0).all() and (same["t_statistic"] == 0.0).all()


def test_holm_and_the_counts_by_hand() -> None:
    # sorted 0.01, 0.03, 0.04 times 3, 2, 1: 0.03, 0.06, 0.04 -> running maximum 0.03, 0.06, 0.06
    assert holm([0.01, 0.04, 0.03])[1].tolist() == pytest.approx([0.03, 0.06, 0.06])
    pairs = pd.DataFrame(
        {
            "dataset": "toy",
            "evaluation": "test",
            "averaging": ["micro"] * 3 + ["macro"] * 3,
            "metric": "inverse_harmonic_mean_rank",
            "t_p": [0.01, 0.04, 0.03, 0.2, 0.001, 0.5],
        }
    )
    pairs["t_p_holm"] = np.concatenate([holm(pairs["t_p"][:3])[1], holm(pairs["t_p"][3:])[1]])
    summary = discrimination_summary(pairs, 0.05).set_index("averaging")
    assert list(discrimination_summary(pairs, 0.05).columns) == list(DISCRIMINATION_SUMMARY_COLUMNS)
    assert summary.loc["micro", ["num_pairs", "significant", "significant_holm"]].tolist() == [3, 3, 1]
    assert summary.loc["macro", ["num_pairs", "significant", "significant_holm"]].tolist() == [3, 1, 1]


# --- figures -------------------------------------------------------------------------------------


def _written(tmp_path, name: str) -> tuple:
    return tmp_path / f"{name}.pdf", tmp_path / f"{name}.png"


def _check_written(pdf, png) -> None:
    assert pdf.stat().st_size > 1000 and png.stat().st_size > 1000
    assert pdf.read_bytes().startswith(b"%PDF") and png.read_bytes().startswith(b"\x89PNG")


def test_label_sparsity_figures(tmp_path) -> None:
    agreement, values = label_sparsity(_sparsity_items(), RELATIONS, depths=(0, 1))
    plot_tau_by_depth(agreement, *_written(tmp_path, "tau"), caption="τ against the pooling depth")
    _check_written(*_written(tmp_path, "tau"))
    plot_values_by_depth(values, *_written(tmp_path, "values"), caption="macro MRR and AMRR")
    _check_written(*_written(tmp_path, "values"))


def test_stability_figure(tmp_path) -> None:
    summary = stability_summary(
        stability(_stability_items(), ["test"], fractions=(0.5, 1.0), repetitions=3, seed=0, dataset="toy")
    )
    plot_stability(summary, *_written(tmp_path, "stability"), caption="stability")
    _check_written(*_written(tmp_path, "stability"))


def test_discrimination_figure(tmp_path, monkeypatch) -> None:
    pairs = discrimination(
        _stability_items(), "test", alpha=0.05, metrics=["inverse_harmonic_mean_rank", "ap_at_20"]
    )
    figures = _captured_figures(monkeypatch)
    plot_discrimination(pairs, *_written(tmp_path, "p"), caption="p-values")
    _check_written(*_written(tmp_path, "p"))
    # system pairs are counted: every tick of the x axes is a whole number (issue 47)
    for axis in figures[0].axes:
        ticks = [tick for tick in axis.get_xticks() if axis.get_xlim()[0] <= tick <= axis.get_xlim()[1]]
        assert ticks and all(float(tick).is_integer() for tick in ticks), ticks


def _captured_figures(monkeypatch) -> list:
    """The figures the study's save_figure is handed, kept open for inspection."""
    import kgrank.plotting

    captured = []
    original = kgrank.plotting.save_figure

    def keep(figure, pdf, png):
        captured.append(figure)
        original(figure, pdf, png)

    monkeypatch.setattr(kgrank.plotting, "save_figure", keep)
    return captured


def test_the_systems_figure_names_the_dataset_the_run_used(tmp_path, monkeypatch) -> None:
    """Its title said FB15k-237 whatever the run used (issue 47)."""
    from kgrank.studies.ir.figures import plot_systems

    table = pd.DataFrame(
        [
            {"model": model, "evaluation": "test", "averaging": averaging, "metric": metric, "value": value}
            for model, value in (("transe", 0.3), ("complex", 0.5))
            for averaging, metric in (
                ("micro", "inverse_harmonic_mean_rank"),
                ("macro-pykeen", "inverse_harmonic_mean_rank"),
                ("macro", "inverse_harmonic_mean_rank"),
                ("macro", "ap_at_20"),
                ("macro", "ndcg_at_20"),
            )
        ]
    )
    figures = _captured_figures(monkeypatch)
    plot_systems(table, *_written(tmp_path, "systems"), caption="systems", dataset="nations")
    _check_written(*_written(tmp_path, "systems"))
    title = figures[0]._suptitle.get_text()
    assert "Nations" in title and "FB15k-237" not in title


def test_empty_figures_say_so(tmp_path) -> None:
    """Nothing to draw: the canvas says so and both files are still written."""
    empty = pd.DataFrame(
        columns=[*AGREEMENT_COLUMNS, *SPARSITY_VALUE_COLUMNS, *STABILITY_SUMMARY_COLUMNS, "place"]
    ).loc[:, lambda frame: ~frame.columns.duplicated()]
    for name, draw in {
        "depth": plot_tau_by_depth,
        "values": plot_values_by_depth,
        "stability": plot_stability,
        "discrimination": plot_discrimination,
    }.items():
        draw(empty, *_written(tmp_path, name))
        _check_written(*_written(tmp_path, name))
