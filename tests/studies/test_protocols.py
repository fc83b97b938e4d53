"""The protocols study (issue #31) on small synthetic rank tables, without Snakemake.

Part 3 (weighted geometric mean rank): the study's table against kgrank.weighted computed
directly and against brute-force enumeration of the random model on a tiny case; the
uniform scheme equal to the registry's GMR; the Monte Carlo check passing on exact moments
and failing on the authors' plug-in value; the commands end to end on a tmp folder; and the
settings the rule file reads."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kgrank.cli import main
from kgrank.errors import KgrankInputError
from kgrank.metrics import lookup, metric_rows
from kgrank.moments import Moments
from kgrank.studies.protocols import settings
from kgrank.studies.protocols.figures import adjusted_index_pairs
from kgrank.studies.protocols.inputs import WEIGHTED_COLUMNS, read_dataset_tables, weighted_kind
from kgrank.studies.protocols.report import check_report, weighted_report
from kgrank.studies.protocols.weighted import check_schemes, weighted_check, weighted_table
from kgrank.tables import read_table
from kgrank.weighted import (
    WEIGHT_SCHEMES,
    evaluate_weighted_rank_table,
    scheme_weights,
    weighted_geometric_mean_rank,
    wgmr_at_expected_ranks,
)


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
    gmr = lookup("gmr")
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
    from kgrank.weighted import wgmr_moments, wgmr_montecarlo

    table = _rank_table(8, tasks=60)
    weights = scheme_weights(table, "negatives")
    exact = wgmr_moments(table["num_candidates"], weights)
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
    schemes = ["--schemes", "negatives", "relation", "uniform"]
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
            *("protocols-weighted-check", "--ranks", ranks[0], ranks[2], *schemes),
            *("--montecarlo-replicates", "500", "--seed", "3", "--alpha", "0.01"),
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
    ranks = _write_pair(tmp_path, "d1", "m1", _rank_table(14))
    # a figure without the uniform reference: one line naming the fix, nothing written
    main(
        [
            *("protocols-weighted", "--ranks", ranks, "--schemes", "negatives", "relation"),
            *("--out", str(tmp_path / "w.tsv"), "--markdown", str(tmp_path / "w.md")),
            *("--latex", str(tmp_path / "w.tex")),
        ]
    )
    capsys.readouterr()
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
            *("protocols-weighted", "--ranks", str(tmp_path / "w.tsv"), "--schemes", "uniform", "negatives"),
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
    assert settings.PARTS == ("weighted",)
    assert settings.part_enabled({"enabled": True, "weighted": {"enabled": True}}, "weighted")
    assert not settings.part_enabled({"enabled": True, "weighted": {"enabled": False}}, "weighted")
    assert not settings.part_enabled({"enabled": False, "weighted": {"enabled": True}}, "weighted")
    with pytest.raises(KgrankInputError, match="no part 'ties'"):
        settings.part_enabled({"weighted": {}}, "ties")
    assert settings.dataset_representatives(["a", "b"], ["x", "y"]) == [("a", "x"), ("b", "x")]
    assert settings.scheme_arguments(["negatives", "uniform"]) == "negatives uniform"
