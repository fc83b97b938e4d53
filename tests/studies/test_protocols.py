"""The protocols study (issue #31) on small synthetic rank tables, without Snakemake.

Part 3 (weighted geometric mean rank): the study's table against kgrank.evaluation.weighted computed
directly and against brute-force enumeration of the random model on a tiny case; the
uniform scheme equal to the registry's GMR; the Monte Carlo check passing on exact moments
and failing on the authors' plug-in value; the commands end to end on a tmp folder; and the
settings the rule file reads."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from kgrank.cli.main import main
from kgrank.data.tables import read_table
from kgrank.defaults import WEIGHT_SCHEMES
from kgrank.engine.candidates import KnownAnswers
from kgrank.engine.ranks import ranks_from_scores
from kgrank.engine.ties import ranks_with_tolerance, tie_neutral_measures, trec_values
from kgrank.errors import KgrankInputError
from kgrank.evaluation.metrics import lookup, metric_rows
from kgrank.evaluation.moments import Moments
from kgrank.evaluation.weighted import (
    evaluate_weighted_rank_table,
    scheme_weights,
    weighted_geometric_mean_rank,
    wgmr_at_expected_ranks,
)
from kgrank.studies.protocols import settings
from kgrank.studies.protocols.figures import adjusted_index_pairs
from kgrank.studies.protocols.inputs import (
    TIES_COLUMNS,
    WEIGHTED_COLUMNS,
    read_dataset_tables,
    read_ties_tables,
    ties_kind,
    weighted_kind,
)
from kgrank.studies.protocols.report import check_report, ties_report, ties_summary, weighted_report
from kgrank.studies.protocols.ties import (
    TiesSettings,
    pair_ties,
    parse_tolerance,
    top_run,
    width_table,
)
from kgrank.studies.protocols.weighted import check_schemes, weighted_check, weighted_table


def _rank_table(seed: int, tasks: int = 40, relations: int = 3, max_candidates: int = 12) -> pd.DataFrame:
    """A rank table of the rank stage's shape: ``tasks`` triples, both sides, varying N_i,
    ties (optimistic < pessimistic) on some tasks."""
    rng = np.random.default_rng(seed)
    rows = []
    for triple in range(tasks):
        relation = int(rng.integers(relations))
        for side in ("head", "tail"):
            count = int(rng.integers(1, max_candidates + 1))
            optimistic = int(rng.integers(1, count + 1))
            pessimistic = int(rng.integers(optimistic, count + 1))
            rows.append(
                {
                    "triple_id": triple,
                    "head": triple,
                    "relation": relation,
                    "tail": triple + 1,
                    "side": side,
                    "optimistic": float(optimistic),
                    "realistic": (optimistic + pessimistic) / 2,
                    "pessimistic": float(pessimistic),
                    "random": float(rng.integers(optimistic, pessimistic + 1)),
                    "num_candidates": count,
                }
            )
    return pd.DataFrame(rows)


def _write_pair(root: Path, dataset: str, model: str, table: pd.DataFrame) -> str:
    path = root / dataset / f"{model}.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    table.to_parquet(path)
    return str(path)


# --- the analysis ----------------------------------------------------------------------------


def test_weighted_table_is_kgrank_weighted_per_pair_and_scheme():
    tables = {("d1", "m1"): _rank_table(1), ("d1", "m2"): _rank_table(2), ("d2", "m1"): _rank_table(3)}
    table = weighted_table(tables, list(WEIGHT_SCHEMES))
    assert list(table.columns) == list(WEIGHTED_COLUMNS)
    for (dataset, model), ranks in tables.items():
        for scheme in WEIGHT_SCHEMES:
            expected = evaluate_weighted_rank_table(ranks, weights=scheme)
            got = table[
                (table["dataset"] == dataset) & (table["model"] == model) & (table["scheme"] == scheme)
            ]
            pd.testing.assert_frame_equal(
                got[expected.columns].reset_index(drop=True), expected.reset_index(drop=True)
            )
    # the value by hand: the paper's weights N_i - 1 on the realistic ranks of both sides
    ranks = tables[("d2", "m1")]
    weights = ranks["num_candidates"].to_numpy() - 1.0
    by_hand = np.exp(np.sum(weights * np.log(ranks["realistic"])) / weights.sum())
    row = table[
        (table["dataset"] == "d2")
        & (table["scheme"] == "negatives")
        & (table["side"] == "both")
        & (table["rank_type"] == "realistic")
        & (table["metric"] == "weighted_geometric_mean_rank")
    ]
    assert row["value"].item() == pytest.approx(by_hand, rel=1e-12)


def test_uniform_scheme_is_the_registrys_geometric_mean_rank():
    ranks = _rank_table(4)
    table = weighted_table({("d", "m"): ranks}, ["uniform", "negatives"])
    gmr = lookup("gmr").metric
    registry = {
        row["metric"]: row
        for row in metric_rows(ranks["pessimistic"].to_numpy(), ranks["num_candidates"].to_numpy(), gmr)
    }
    ours = table[
        (table["scheme"] == "uniform") & (table["side"] == "both") & (table["rank_type"] == "pessimistic")
    ]
    value = ours.set_index("metric").loc["weighted_geometric_mean_rank"]
    reference = registry[gmr.key]
    assert value["value"] == pytest.approx(reference["value"], rel=1e-12)
    assert value["expectation"] == pytest.approx(reference["expectation"], rel=1e-10)
    assert value["variance"] == pytest.approx(reference["variance"], rel=1e-8)


def test_expectation_and_variance_against_enumeration():
    """Every joint outcome of the random model on three tasks, each weighted N_i - 1."""
    counts = np.array([2, 3, 5])
    ranks = pd.DataFrame(
        {
            "triple_id": [0, 1, 1],
            "head": [0, 1, 1],
            "relation": [0, 0, 1],
            "tail": [1, 2, 2],
            "side": ["head", "head", "tail"],
            **{column: [1.0, 2.0, 4.0] for column in ("optimistic", "realistic", "pessimistic", "random")},
            "num_candidates": counts,
        }
    )
    weights = counts - 1.0
    outcomes = np.array(list(itertools.product(*(range(1, count + 1) for count in counts))), dtype=float)
    values = weighted_geometric_mean_rank(outcomes, weights)
    table = weighted_table({("d", "m"): ranks}, ["negatives", "uniform"])
    row = table[
        (table["scheme"] == "negatives")
        & (table["side"] == "both")
        & (table["rank_type"] == "realistic")
        & (table["metric"] == "weighted_geometric_mean_rank")
    ]
    assert row["expectation"].item() == pytest.approx(values.mean(), rel=1e-12)
    assert row["variance"].item() == pytest.approx(values.var(), rel=1e-10)


def test_check_passes_on_exact_moments_and_records_the_plugin_excess():
    tables = {"d1": _rank_table(5, tasks=60), "d2": _rank_table(6, tasks=30, max_candidates=30)}
    check = weighted_check(tables, ["negatives", "relation", "uniform"], replicates=3000, seed=7, alpha=0.01)
    assert len(check) == 2 * 3 * 2
    assert check["passed"].all(), check
    # one Bonferroni family over the whole table: 2 tests per row
    from scipy import stats

    assert check["critical_z"].iloc[0] == pytest.approx(stats.norm.isf(0.01 / (2 * len(check)) / 2))
    wgmr = check[check["metric"] == "weighted_geometric_mean_rank"]
    for row in wgmr.itertuples():
        table = tables[row.dataset]
        plugin = wgmr_at_expected_ranks(table["num_candidates"], scheme_weights(table, row.scheme))
        assert row.plugin_expectation == pytest.approx(plugin)
        # Jensen: the plug-in value overstates E[WGMR]
        assert row.plugin_excess > 0
    assert check.loc[check["metric"] != "weighted_geometric_mean_rank", "plugin_excess"].isna().all()
    # the same seed gives the same draws
    again = weighted_check(tables, ["negatives", "relation", "uniform"], replicates=3000, seed=7, alpha=0.01)
    pd.testing.assert_frame_equal(check, again)


def test_the_check_rejects_the_plugin_value_as_expectation():
    """The check can fail: with the authors' plug-in value in place of E[WGMR] the simulated
    mean is far off (Jensen's gap, about 20 % here)."""
    from kgrank.evaluation.weighted import WEIGHTED_GEOMETRIC_MEAN_RANK, wgmr_montecarlo

    table = _rank_table(8, tasks=60)
    weights = scheme_weights(table, "negatives")
    exact = WEIGHTED_GEOMETRIC_MEAN_RANK.moments(table["num_candidates"].to_numpy(), weights)
    wrong = Moments(wgmr_at_expected_ranks(table["num_candidates"], weights), exact.variance, exact.method)
    check = wgmr_montecarlo(
        table["num_candidates"], weights, 2000, seed=1, analytic={"weighted_geometric_mean_rank": wrong}
    )
    verdict = check.set_index("metric")["passed"]
    assert not verdict["weighted_geometric_mean_rank"]


def test_schemes_are_checked():
    with pytest.raises(KgrankInputError, match="negative"):
        check_schemes(["negative", "uniform"])
    with pytest.raises(KgrankInputError, match="twice"):
        check_schemes(["uniform", "uniform"])


def test_report_and_figure_points():
    tables = {("d1", "m1"): _rank_table(9), ("d1", "m2"): _rank_table(10)}
    table = weighted_table(tables, ["negatives", "relation", "uniform"])
    report = weighted_report(table)
    assert len(report) == 2 * 3
    assert list(report.columns[:5]) == ["dataset", "model", "weights", "WGMR", "E[WGMR]"]
    points = adjusted_index_pairs(table)
    assert set(points["scheme"]) == {"negatives", "relation"} and len(points) == 4
    reference = table[
        (table["scheme"] == "uniform")
        & (table["model"] == "m2")
        & (table["side"] == "both")
        & (table["rank_type"] == "realistic")
        & (table["metric"] == "adjusted_weighted_geometric_mean_rank_index")
    ]["value"].item()
    assert (points.loc[points["model"] == "m2", "reference"] == reference).all()
    with pytest.raises(KgrankInputError, match="uniform"):
        adjusted_index_pairs(table[table["scheme"] != "uniform"])
    check = weighted_check({"d1": tables[("d1", "m1")]}, ["uniform"], replicates=50, seed=1, alpha=0.01)
    assert list(check_report(check)["metric"]) == ["WGMR", "IWGMR"]


# --- the commands end to end ---------------------------------------------------------------


def test_commands_end_to_end(tmp_path, capsys):
    ranks = [
        _write_pair(tmp_path / "ranks", "d1", "m1", _rank_table(11)),
        _write_pair(tmp_path / "ranks", "d1", "m2", _rank_table(12)),
        _write_pair(tmp_path / "ranks", "d2", "m1", _rank_table(13)),
    ]
    out = tmp_path / "out"
    schemes = ["--settings", json.dumps({"weighted": {"schemes": ["negatives", "relation", "uniform"]}})]
    code = main(
        [
            *("protocols-weighted", "--ranks", *ranks, *schemes),
            *("--out", str(out / "w.tsv"), "--markdown", str(out / "w.md"), "--latex", str(out / "w.tex")),
        ]
    )
    assert code in (0, None)
    weighted = read_table(out / "w.tsv", weighted_kind())
    assert set(zip(weighted["dataset"], weighted["model"], strict=True)) == {
        ("d1", "m1"),
        ("d1", "m2"),
        ("d2", "m1"),
    }
    assert "AWGMRI" in (out / "w.md").read_text() and "\\begin{table}" in (out / "w.tex").read_text()
    code = main(
        [
            *("protocols-weighted-check", "--ranks", ranks[0], ranks[2], "--settings"),
            json.dumps(
                {"weighted": {"schemes": ["negatives", "relation", "uniform"], "montecarlo_replicates": 500}}
            ),
            *("--seed", "3"),
            *("--out", str(out / "c.tsv"), "--markdown", str(out / "c.md"), "--latex", str(out / "c.tex")),
        ]
    )
    assert code in (0, None)
    assert "12 of 12 moment checks pass" in capsys.readouterr().out
    check = pd.read_csv(out / "c.tsv", sep="\t")
    assert set(check["dataset"]) == {"d1", "d2"} and check["passed"].all()
    code = main(
        [
            *("protocols-weighted-figure", "--weighted", str(out / "w.tsv"), "--caption", "synthetic"),
            *("--pdf", str(out / "f.pdf"), "--png", str(out / "f.png")),
        ]
    )
    assert code in (0, None)
    assert (out / "f.pdf").read_bytes().startswith(b"%PDF") and (out / "f.png").stat().st_size > 1000


def test_bad_input_is_one_line(tmp_path, capsys):
    from kgrank.data.io import write_table
    from kgrank.data.tables import read_pair_tables

    ranks = _write_pair(tmp_path, "d1", "m1", _rank_table(14))
    # the settings list uniform, the figure's reference, among the schemes
    with pytest.raises(SystemExit) as refused:
        main(
            [
                *("protocols-weighted", "--ranks", ranks, "--settings"),
                json.dumps({"weighted": {"schemes": ["negatives", "relation"]}}),
                *("--out", str(tmp_path / "w.tsv"), "--markdown", str(tmp_path / "w.md")),
                *("--latex", str(tmp_path / "w.tex")),
            ]
        )
    err = capsys.readouterr().err.strip().splitlines()
    assert refused.value.code == 2 and len(err) == 1 and "key weighted.schemes" in err[0]
    assert not (tmp_path / "w.tsv").exists()
    # a figure without the uniform reference: one line naming the fix, nothing written
    write_table(tmp_path / "w.tsv", weighted_table(read_pair_tables([ranks]), ["negatives", "relation"]))
    code = main(
        [
            *("protocols-weighted-figure", "--weighted", str(tmp_path / "w.tsv")),
            *("--pdf", str(tmp_path / "f.pdf"), "--png", str(tmp_path / "f.png")),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "add uniform to studies.protocols.weighted.schemes" in err[0]
    assert not (tmp_path / "f.pdf").exists()
    # a rank table not named <dataset>/<model>.parquet
    code = main(
        [
            *("protocols-weighted", "--ranks", str(tmp_path / "w.tsv"), "--settings"),
            json.dumps({"weighted": {"schemes": ["uniform", "negatives"]}}),
            *("--out", str(tmp_path / "x.tsv"), "--markdown", str(tmp_path / "x.md")),
            *("--latex", str(tmp_path / "x.tex")),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "<dataset>/<model>.parquet" in err[0]
    assert not (tmp_path / "x.tsv").exists()


def test_read_dataset_tables_keys_by_dataset(tmp_path):
    paths = [
        _write_pair(tmp_path, "d1", "m1", _rank_table(15)),
        _write_pair(tmp_path, "d2", "m1", _rank_table(16)),
    ]
    assert list(read_dataset_tables(paths)) == ["d1", "d2"]


# --- settings (what the rule file reads) -------------------------------------------------


def test_settings():
    assert settings.PARTS == ("sampled", "ties", "weighted")
    assert settings.part_enabled({"enabled": True, "weighted": {"enabled": True}}, "weighted")
    assert not settings.part_enabled({"enabled": True, "weighted": {"enabled": False}}, "weighted")
    assert not settings.part_enabled({"enabled": False, "weighted": {"enabled": True}}, "weighted")
    with pytest.raises(KgrankInputError, match="no part 'bogus'"):
        settings.part_enabled({"weighted": {}}, "bogus")
    assert settings.dataset_representatives(["a", "b"], ["x", "y"]) == [("a", "x"), ("b", "x")]


# --- part 1: sampled negatives ------------------------------------------------------------------

from kgrank.evaluation.sampled import FullRanks, estimator_moments, sample_ranks_from_full  # noqa: E402
from kgrank.studies.protocols import sampled as sampled_part  # noqa: E402
from kgrank.studies.protocols.inputs import (  # noqa: E402
    SAMPLED_AGREEMENT_COLUMNS,
    SAMPLED_COLUMNS,
    fixed_set_of,
    sampled_kind,
)
from kgrank.studies.protocols.sampled import (  # noqa: E402
    SampledSettings,
    fixed_set_ranks,
    sampled_analysis,
)

ALL_ESTIMATORS = ("naive", "rescaled", "posterior-rank", "corrected")


def _settings(**changes) -> SampledSettings:
    values = {
        "num_samples": (3, 6),
        "estimators": ALL_ESTIMATORS,
        "regularisation": 0.1,
        "corrected_max_k": None,
        "replicates": 6,
        "seed": 3,
        "profile": "test",
    }
    return SampledSettings(**(values | changes))


def test_sampled_table_values_skipped_k_and_corrected_limit():
    tables = {("d", "m1"): _rank_table(6, max_candidates=10), ("d", "m2"): _rank_table(7, max_candidates=10)}
    # k = 20 >= N_i - 1 for every task (N_i <= 10): skipped; the corrected estimator above k = 3 skipped
    settings = _settings(num_samples=(3, 6, 20), corrected_max_k=3)
    estimates, agreement = sampled_analysis(tables, settings)
    assert list(estimates.columns) == list(SAMPLED_COLUMNS)
    assert list(agreement.columns) == list(SAMPLED_AGREEMENT_COLUMNS)
    skipped = estimates[estimates["num_samples"] == 20]
    assert (skipped["method"] == "skipped").all() and skipped["note"].str.contains("every task keeps").all()
    assert skipped["bias"].isna().all() and 20 not in set(agreement["num_samples"])
    corrected_6 = estimates[(estimates["num_samples"] == 6) & (estimates["estimator"] == "corrected")]
    assert (corrected_6["method"] == "skipped").all()
    assert corrected_6["note"].str.contains("above k = 3").all()
    full = FullRanks.from_table(tables[("d", "m2")])
    for estimator in ("naive", "rescaled", "posterior-rank"):
        for metric in ("inverse_harmonic_mean_rank", "hits_at_10"):
            moments = estimator_moments(full, 6, [estimator], [metric], rank_type="optimistic")
            direct = moments[(estimator, metric)]
            row = estimates[
                (estimates["model"] == "m2")
                & (estimates["num_samples"] == 6)
                & (estimates["estimator"] == estimator)
                & (estimates["metric"] == metric)
            ].iloc[0]
            assert row["method"] == "exact"
            assert row["bias"] == pytest.approx(direct.bias, rel=1e-10, abs=1e-14)
            assert row["standard_deviation"] == pytest.approx(np.sqrt(direct.variance), rel=1e-8)
            assert row["rmse"] == pytest.approx(direct.rmse, rel=1e-10)
    assert (estimates["settings"].str.startswith("test; corrected estimator")).all()


def _flip_tables(tasks: int = 40) -> dict[tuple[str, str], pd.DataFrame]:
    """Two systems on tasks of 1001 candidates: A ranks every answer 2nd (MRR 0.5), B half
    1st and half 500th (MRR 0.501, better). Against 10 sampled negatives A's answer is
    almost always first (naive MRR ~ 0.99) and B's 500th-ranked answers are not (~0.59):
    the naive estimator orders them the wrong way round in (almost) every draw."""
    rows = {"a": [], "b": []}
    for triple in range(tasks):
        for side in ("head", "tail"):
            base = {"triple_id": triple, "side": side, "num_candidates": 1001}
            rank_b = 1 if (2 * triple + (side == "tail")) % 2 == 0 else 500
            for model, rank in (("a", 2), ("b", rank_b)):
                rows[model].append(
                    base | {"optimistic": rank, "pessimistic": rank, "realistic": rank, "random": rank}
                )
    return {("d", model): pd.DataFrame(rows[model]) for model in rows}


def test_the_naive_estimator_flips_a_constructed_pair():
    tables = _flip_tables()
    settings = _settings(num_samples=(10,), estimators=("naive", "rescaled"), replicates=20)
    _, agreement = sampled_analysis(tables, settings)
    mrr = agreement[agreement["metric"] == "inverse_harmonic_mean_rank"].set_index("estimator")
    assert mrr.loc["naive", "agreement"] == 0.0
    assert mrr.loc["naive", "system_pairs"] == 1 and mrr.loc["naive", "replicates"] == 20
    # the adjusted index is an increasing map of the sampled metric when the candidate
    # counts are the same for both systems: it orders them as the naive estimate does
    assert mrr.loc["adjusted-index", "agreement"] == mrr.loc["naive", "agreement"]
    # the same by hand from kgrank.evaluation.sampled: independent seeds per system
    full = {model: FullRanks.from_table(table) for (_, model), table in tables.items()}
    draws = {
        model: sampled_part.estimate(
            "inverse_harmonic_mean_rank",
            sample_ranks_from_full(full[model], 10, sampled_part.system_seed(3, "d", model), 20),
            "rescaled",
            rank_type="optimistic",
        )
        for model in full
    }
    by_hand = sampled_part.order_agreement(0.5, 0.501, draws["a"], draws["b"])
    assert mrr.loc["rescaled", "agreement"] == pytest.approx(by_hand)


def _fixed_set_table(full_table: pd.DataFrame, num_samples: int, seed: int) -> pd.DataFrame:
    """A rank engine's sampled table of one draw (the law it has), from the full ranks."""
    draw = sample_ranks_from_full(FullRanks.from_table(full_table), num_samples, seed, 1)
    table = full_table.copy()
    table["optimistic"] = draw.optimistic[0].astype(float)
    table["pessimistic"] = draw.pessimistic[0].astype(float)
    table["realistic"] = (table["optimistic"] + table["pessimistic"]) / 2
    table["random"] = table["optimistic"]
    table["num_candidates"] = draw.num_candidates
    return table


def test_fixed_set_rows_and_a_table_of_another_k_refused():
    tables = {("d", "m1"): _rank_table(8), ("d", "m2"): _rank_table(9), ("d", "ext"): _rank_table(10)}
    fixed = {("d", m): (4, _fixed_set_table(tables[("d", m)], 4, seed)) for m, seed in (("m1", 1), ("m2", 2))}
    estimates, agreement = sampled_analysis(tables, _settings(num_samples=(3,)), fixed)
    rows = estimates[estimates["variant"] == "fixed-set"]
    assert set(rows["model"]) == {"m1", "m2"} and set(rows["num_samples"]) == {4}
    assert (rows["method"] == "one draw").all() and rows["standard_deviation"].isna().all()
    naive = rows[(rows["model"] == "m1") & (rows["estimator"] == "naive")]
    naive = naive[naive["metric"] == "inverse_harmonic_mean_rank"].iloc[0]
    assert naive["estimate_mean"] == pytest.approx(np.mean(1.0 / fixed[("d", "m1")][1]["optimistic"]))
    # the independent draws also run at the fixed set's k, over all three systems
    assert {3, 4} <= set(estimates[estimates["variant"] == "independent"]["num_samples"])
    fixed_rows = agreement[agreement["variant"] == "fixed-set"]
    assert (fixed_rows["system_pairs"] <= 1).all() and fixed_rows["independent_agreement"].notna().any()
    with pytest.raises(KgrankInputError, match="candidates on task"):
        fixed_set_ranks(tables[("d", "m1")], fixed[("d", "m1")][1], 5)


def test_settings_and_file_names_of_part_1():
    with pytest.raises(KgrankInputError, match="names a k twice"):
        _settings(num_samples=(3, 3))
    with pytest.raises(KgrankInputError, match="at most once"):
        _settings(estimators=("naive", "naive"))
    assert fixed_set_of("results/ranks/fb15k237/transe.sampled-100.parquet") == ("fb15k237", "transe", 100)
    with pytest.raises(KgrankInputError, match="sampled-<k>.parquet"):
        fixed_set_of("results/ranks/fb15k237/transe.parquet")
    assert "sampled" in settings.PARTS
    # every scored pair of the named dataset: trained models and external PyKEEN folders
    scored = [("nations", "transe"), ("nations", "pk-folder"), ("kinships", "transe")]
    pairs = settings.fixed_set_pairs({"nations": 5}, ["nations", "kinships"], scored, {"nations": 14})
    assert pairs == [("nations", "transe", 5), ("nations", "pk-folder", 5)]
    with pytest.raises(KgrankInputError, match="every task would keep"):
        settings.fixed_set_pairs({"nations": 13}, ["nations"], scored, {"nations": 14})
    with pytest.raises(KgrankInputError, match="not trained here"):
        settings.fixed_set_pairs({"wn18rr": 5}, ["nations"], scored, {"nations": 14})


def test_sampled_commands_end_to_end(tmp_path, capsys):
    full = {m: _rank_table(seed) for m, seed in (("transe", 11), ("complex", 12))}
    ranks = [_write_pair(tmp_path / "ranks", "nations", m, table) for m, table in full.items()]
    fixed = []
    for index, (model, table) in enumerate(full.items()):
        path = tmp_path / "ranks" / "nations" / f"{model}.sampled-4.parquet"
        _fixed_set_table(table, 4, index).to_parquet(path)
        fixed.append(str(path))
    out = tmp_path / "out"
    sampled = dict(num_samples=[3, 20], estimators=ALL_ESTIMATORS, regularisation=0.1, corrected_max_k=3)
    code = main(
        [
            *("protocols-sampled", "--ranks", *ranks, "--fixed-set", *fixed, "--settings"),
            json.dumps({"sampled": {**sampled, "replicates": 4}}),
            *("--seed", "1", "--profile", "laptop (test)"),
            *("--out", str(out / "s.tsv"), "--agreement", str(out / "a.tsv")),
            *("--markdown", str(out / "s.md"), "--latex", str(out / "s.tex")),
        ]
    )
    assert code in (0, None)
    estimates = read_table(out / "s.tsv", sampled_kind())
    assert list(pd.read_csv(out / "a.tsv", sep="\t").columns) == list(SAMPLED_AGREEMENT_COLUMNS)
    assert set(estimates["variant"]) == {"independent", "fixed-set"}
    markdown = (out / "s.md").read_text()
    assert "Profile: laptop (test)" in markdown and "k <= 3" in markdown and "every task keeps" in markdown
    code = main(
        [
            *("protocols-sampled-figure", "--estimates", str(out / "s.tsv"), "--caption", "test"),
            *("--pdf", str(out / "f.pdf"), "--png", str(out / "f.png")),
        ]
    )
    assert code in (0, None) and (out / "f.png").stat().st_size > 0 and (out / "f.pdf").is_file()


def test_sampled_command_bad_inputs_are_one_line(tmp_path, capsys):
    rank = _write_pair(tmp_path, "nations", "transe", _rank_table(13))
    sampled = dict(
        num_samples=[3], estimators=["naive"], regularisation=0.1, corrected_max_k=None, replicates=3
    )
    common = ["--settings", json.dumps({"sampled": sampled}), "--seed", "1", "--profile", "p"]
    common += ["--out", str(tmp_path / "s.tsv"), "--agreement", str(tmp_path / "a.tsv")]
    common += ["--markdown", str(tmp_path / "s.md"), "--latex", str(tmp_path / "s.tex")]
    assert main(["protocols-sampled", "--ranks", rank, "--fixed-set", rank, *common]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "sampled-<k>.parquet" in err
    assert not (tmp_path / "s.tsv").exists()


# --- part 2: ties -----------------------------------------------------------------------------


def _ties_settings(**changes) -> TiesSettings:
    values = dict(
        scorers=("model", "quantised", "constant"),
        decimals=1,
        tolerances=("exact", "relative:0.05"),
        max_test_triples=None,
        depth=5,
        measures=("nDCG@5", "AP@5", "P@3", "RR"),
        renamings=4,
        max_queries=None,
        max_run_rows=100_000,
        seed=3,
        profile="test",
    )
    values.update(changes)
    return TiesSettings(**values)


def _toy_graph(seed: int = 0, entities: int = 12, relations: int = 2, triples: int = 15):
    """Test triples, a filter and a seeded linear scorer over a small random graph."""
    rng = np.random.default_rng(seed)
    test = np.stack(
        [rng.integers(entities, size=triples), rng.integers(relations, size=triples),
         rng.integers(entities, size=triples)], axis=1,
    )  # fmt: skip
    train = np.stack(
        [rng.integers(entities, size=30), rng.integers(relations, size=30), rng.integers(entities, size=30)],
        axis=1,
    )
    known = KnownAnswers([train, test], entities, relations)
    table = torch.as_tensor(rng.normal(size=(entities, relations, entities)), dtype=torch.float32)

    def score(batch: np.ndarray, side: str) -> torch.Tensor:
        batch = torch.as_tensor(batch)
        if side == "tail":
            return table[batch[:, 0], batch[:, 1]].clone()
        return table[:, batch[:, 1], batch[:, 2]].T.clone()

    return test, known, score


def _by_hand(test, known, score, transform, tolerance):
    """Every task's (optimistic, pessimistic, N) straight from kgrank.engine.ties, one task at a time."""
    rows = []
    for side in ("head", "tail"):
        for triple in test:
            batch = triple[None, :]
            block = transform(score(batch, side))
            true = torch.as_tensor(batch[:, 0] if side == "head" else batch[:, 2])
            filter_rows, filter_cols = known.answers(side, batch)
            result = ranks_with_tolerance(
                block,
                true,
                filter_rows,
                filter_cols,
                absolute=tolerance.absolute,
                relative=tolerance.relative,
            )
            rows.append(
                (
                    int(result["optimistic"][0]),
                    int(result["pessimistic"][0]),
                    int(result["num_candidates"][0]),
                )
            )
    return np.array(rows, dtype=float)


def _value(table: pd.DataFrame, **keys) -> float:
    mask = np.ones(len(table), dtype=bool)
    for column, value in keys.items():
        mask &= (table[column] == value).to_numpy()
    assert mask.sum() == 1, keys
    return float(table.loc[mask, "value"].iloc[0])


def test_pair_ties_ranks_match_kgrank_ties_task_by_task():
    test, known, score = _toy_graph()
    settings = _ties_settings()
    table = pair_ties(score, test, known, "toy", "linear", settings, batch_size=4)
    assert list(table.columns) == list(TIES_COLUMNS)
    transforms = {
        "model": lambda block: block.clone(),
        "quantised": lambda block: torch.round(block, decimals=1),
        "constant": lambda block: torch.zeros_like(block),
    }
    for scorer, transform in transforms.items():
        for text in settings.tolerances:
            tolerance = parse_tolerance(text)
            ranks = _by_hand(test, known, score, transform, tolerance)
            width = ranks[:, 1] - ranks[:, 0]
            realistic = (ranks[:, 0] + ranks[:, 1]) / 2
            keys = dict(scorer=scorer, tolerance=tolerance.name)
            assert _value(table, measure="rank_width", statistic="mean", **keys) == pytest.approx(
                width.mean()
            )
            assert _value(table, measure="rank_width", statistic="tied_share", **keys) == pytest.approx(
                (width > 0).mean()
            )
            assert _value(table, measure="MRR", statistic="realistic", **keys) == pytest.approx(
                np.mean(1 / realistic)
            )
            assert _value(table, measure="MRR", statistic="pessimistic", **keys) == pytest.approx(
                np.mean(1 / ranks[:, 1])
            )
            if scorer == "constant":
                # every candidate ties: realistic rank (N + 1) / 2 on every task
                np.testing.assert_array_equal(realistic, (ranks[:, 2] + 1) / 2)
    # exact equality: the rank stage's own ranks
    block = score(test, "tail")
    exact = ranks_from_scores(block, torch.as_tensor(test[:, 2]), *known.answers("tail", test))
    tail = _by_hand(test, known, score, transforms["model"], parse_tolerance("exact"))[len(test) :]
    np.testing.assert_array_equal(tail[:, 0], exact["optimistic"])


def test_renaming_moves_trec_eval_but_not_the_tie_neutral_value():
    test, known, score = _toy_graph(seed=1)
    table = pair_ties(score, test, known, "toy", "linear", _ties_settings(renamings=6), batch_size=8)
    ndcg = table[(table["measure"] == "nDCG@5") & (table["tolerance"] == "exact")]
    # the constant scorer's ties make trec_eval's value depend on the names
    assert _value(ndcg, scorer="constant", statistic="spread") > 0
    assert _value(ndcg, scorer="constant", statistic="changed_share") > 0.5
    # continuous scores: no tie, no change, trec_eval equals the tie-neutral value
    assert _value(ndcg, scorer="model", statistic="spread") == 0
    assert _value(ndcg, scorer="model", statistic="trec_eval") == pytest.approx(
        _value(ndcg, scorer="model", statistic="tie_neutral"), abs=1e-12
    )
    # a constant scorer's tie-neutral nDCG@5 with one relevant of N candidates:
    # sum_{i <= min(5, N)} (1/N) / log2(i + 1), averaged over the queries
    per_query = []
    for side in ("head", "tail"):
        for triple in test:
            rows, cols = known.answers(side, triple[None, :])
            true = triple[0] if side == "head" else triple[2]
            n = 12 - int(np.sum(cols != true))
            per_query.append(sum(1 / n / np.log2(i + 1) for i in range(1, min(5, n) + 1)))
    assert _value(ndcg, scorer="constant", statistic="tie_neutral") == pytest.approx(np.mean(per_query))


def test_top_run_keeps_the_whole_tie_group_at_the_cut_off():
    scores = np.array([0.9, np.nan, 0.5, 0.5, 0.5, 0.1, 0.7])
    assert sorted(top_run(scores, 2)[0].tolist()) == [0, 6]
    # the third place falls in the group of three 0.5s: all of it stays
    entities, values = top_run(scores, 3)
    assert sorted(entities.tolist()) == [0, 2, 3, 4, 6]
    assert sorted(values.tolist()) == [0.5, 0.5, 0.5, 0.7, 0.9]
    assert top_run(scores, 10)[0].tolist() == [0, 2, 3, 4, 5, 6]


def test_run_budget_stops_at_the_first_query_that_does_not_fit():
    test, known, score = _toy_graph(seed=2)
    table = pair_ties(score, test, known, "toy", "linear", _ties_settings(max_run_rows=40), batch_size=8)
    rows = table[(table["measure"] == "run") & (table["statistic"] == "rows")].set_index("scorer")
    assert (rows["value"] <= 40).all()
    # a constant run holds every candidate (<= 12 per query): at most 40 // 1 ... and at least 3 queries
    assert 3 <= rows.loc["constant", "tasks"] < 2 * len(test)
    with pytest.raises(KgrankInputError, match="max_run_rows"):
        pair_ties(score, test, known, "toy", "linear", _ties_settings(max_run_rows=2), batch_size=8)


def test_ties_settings_refuse_bad_values():
    with pytest.raises(KgrankInputError, match="tolerance"):
        parse_tolerance("relative:-1")
    with pytest.raises(KgrankInputError, match="tolerance"):
        parse_tolerance("loose")
    with pytest.raises(KgrankInputError, match="depth"):
        _ties_settings(depth=3)  # nDCG@5 needs depth 5
    with pytest.raises(KgrankInputError, match="scorers"):
        _ties_settings(scorers=("model", "model"))
    assert parse_tolerance("absolute:1e-6").absolute == 1e-6


def test_subsample_is_shared_by_the_models_of_a_dataset():
    test, known, score = _toy_graph(seed=4, triples=30)
    settings = _ties_settings(max_test_triples=7, scorers=("constant",))
    first = pair_ties(score, test, known, "toy", "a", settings)
    second = pair_ties(lambda b, s: 2 * score(b, s), test, known, "toy", "b", settings)
    width = first[first["measure"] == "rank_width"]
    assert (width["tasks"] == 14).all()

    # the constant scorer ignores the model: the same tasks give the same ranks and the same
    # tie-neutral values (trec_eval's renamings are seeded per model, so they may differ)
    def kept(table):
        return table[table["measure"].isin(["rank_width", "MRR"]) | (table["statistic"] == "tie_neutral")]

    np.testing.assert_array_equal(kept(first)["value"].to_numpy(), kept(second)["value"].to_numpy())


def test_ties_commands_end_to_end(tmp_path: Path):
    test, known, score = _toy_graph(seed=5)
    settings_20 = _ties_settings(depth=20, measures=("nDCG@20", "RR"))
    table = pair_ties(score, test, known, "toy", "linear", settings_20, batch_size=8)
    pair = tmp_path / "pair.tsv"
    table.to_csv(pair, sep="\t", index=False)
    ranks = tmp_path / "toy"
    ranks.mkdir()
    _rank_table(1).to_parquet(ranks / "linear.parquet")
    out = tmp_path / "out"
    main(
        [
            "protocols-ties", "--ranks", str(ranks / "linear.parquet"), "--pairs", str(pair),
            "--profile", "test", "--out", str(out / "ties.tsv"), "--widths", str(out / "widths.tsv"),
            "--markdown", str(out / "t.md"), "--latex", str(out / "t.tex"),
        ]
    )  # fmt: skip
    gathered = read_table(out / "ties.tsv", ties_kind())
    assert len(gathered) == len(table)
    markdown = (out / "t.md").read_text()
    assert "rank stage" in markdown and "constant score" in markdown and "renamings" in markdown
    widths = pd.read_csv(out / "widths.tsv", sep="\t")
    both = widths[widths["side"] == "both"].iloc[0]
    source = _rank_table(1)
    assert both["mean_width"] == pytest.approx((source["pessimistic"] - source["optimistic"]).mean())
    main(["protocols-ties-figure", "--ties", str(out / "ties.tsv"), "--caption", "c",
          "--pdf", str(out / "f.pdf"), "--png", str(out / "f.png")])  # fmt: skip
    assert (out / "f.pdf").stat().st_size > 0 and (out / "f.png").stat().st_size > 0
    assert "constant score: 1 of 1 systems" in ties_summary(gathered)
    with pytest.raises(KgrankInputError, match="given twice"):
        read_ties_tables([pair, pair])
    report = ties_report(gathered, width_table({("toy", "linear"): source}), "limits")
    assert (report["settings"] == "limits").all()


def test_tie_neutral_and_trec_values_agree_without_ties():
    run = pd.DataFrame({"query_id": ["q"] * 4, "doc_id": ["a", "b", "c", "d"], "score": [4.0, 3.0, 2.0, 1.0]})
    qrels = pd.DataFrame({"query_id": ["q"], "doc_id": ["c"], "relevance": [1]})
    neutral = tie_neutral_measures(run, qrels, ["nDCG@20"])["value"].iloc[0]
    assert neutral == pytest.approx(trec_values(run, qrels, ["nDCG@20"])["value"].iloc[0])
    assert neutral == pytest.approx(1 / np.log2(4))
