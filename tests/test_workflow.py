"""The DAG end to end on the tiny CI config (Nations, two models, two epochs); the dry
runs that must refuse a config are in test_dry_runs.py."""

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import REPO, markdown_row, planned_jobs, snakemake

pytestmark = pytest.mark.slow


def _copy_of_the_local_run(local_run, parent: Path) -> Path:
    """A copy of the session's run of the tiny config (conftest.local_run) under
    ``parent``, which a test may change: one run of the DAG serves every end-to-end test
    module."""
    workdir = parent / "run"
    # copy2 keeps modification times, so Snakemake sees the copy as up to date
    shutil.copytree(local_run[0], workdir, symlinks=True)
    return workdir


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, local_run) -> Path:
    return _copy_of_the_local_run(local_run, tmp_path_factory.mktemp("workflow"))


def test_outputs_exist(workdir):
    results = workdir / "results"
    for path in [
        "figures/figure1.pdf",
        "figures/figure1.png",
        "figures/learning_curves.pdf",
        "figures/learning_curves.png",
        "tables/table4.md",
        "tables/table4.tex",
        "metrics/nations/transe.tsv",
        "metrics/nations/complex.tsv",
        "metrics/nations/pk-folder.tsv",
        "ranks/nations/transe.parquet",
        "models/nations/transe/model.pt",
        "models/nations/transe/losses.tsv",
        "data/nations/stats.json",
    ]:
        assert (results / path).stat().st_size > 0, path
    row = markdown_row((results / "tables/table4.md").read_text(), "Nations")
    assert row == ["Nations", "14", "55", "1592", "199", "201"]
    for path in [
        "tables/table1.md",
        "tables/table2.md",
        "tables/table3.md",
        "tables/errata.md",
        "moments/nations/moments.tsv",
        "moments/nations/montecarlo.tsv",
        "figures/montecarlo.png",
    ]:
        assert (results / path).stat().st_size > 0, path
    for path in [
        "openworld/simulation.tsv",
        "tables/openworld_approximation.md",
        "tables/openworld_saturation.tex",
        "tables/openworld_inversions.md",
        "figures/openworld_simulation.png",
        "figures/openworld_inconsistency.pdf",
        "figures/openworld_metrics.png",
        "figures/openworld_family_tree.pdf",
    ]:
        assert (results / path).stat().st_size > 0, path
    # the ir study under both filtering protocols, and the runs of the second one only
    # where they differ from the paper protocol's (not on the full test set)
    for path in ["tables/ir_sample_vs_test.md", "tables/ir_tau_by_protocol.tex", "ir/nations/systems.tsv"]:
        assert (results / path).stat().st_size > 0, path
    assert set(pd.read_csv(results / "ir/nations/systems.tsv", sep="\t")["protocol"]) == {
        "paper",
        "all-known",
    }
    runs = results / "ir/nations/runs/transe"
    assert (runs / "sample.all-known.run.gz").is_file() and not (runs / "test.all-known.run.gz").exists()
    checkpoints = pd.read_csv(results / "openworld/family_tree/density-65/complex-d8.tsv", sep="\t")
    assert sorted(set(checkpoints["epoch"])) == [1, 2]
    assert set(checkpoints["evaluation"]) == {"sparse", "full"}
    mrr = checkpoints[checkpoints["metric"] == "inverse_harmonic_mean_rank"]
    assert mrr["value"].between(0, 1).all() and set(mrr["answers"]) == {2778, 7598}
    # the lookup table covers the three splits, like the one the authors archived
    moments = pd.read_csv(results / "moments/nations/moments.tsv", sep="\t")
    assert set(moments["split"]) == {"train", "valid", "test"}
    check = pd.read_csv(results / "moments/nations/montecarlo.tsv", sep="\t")
    assert check["passed"].all(), check.loc[~check["passed"], ["side", "metric", "z_mean", "z_variance"]]
    assert len(pd.read_csv(results / "models/nations/transe/losses.tsv", sep="\t")) == 2
    # the scorecard: every claim of the package judged, the counts first in the Markdown
    from kgrank.scorecard.card import read_claims

    card = pd.read_csv(results / "tables/scorecard.tsv", sep="\t", keep_default_na=False)
    assert card["id"].tolist() == read_claims()["id"].tolist()
    assert (results / "tables/scorecard.md").read_text().startswith(f"{len(card)} claims of 5 documents: ")
    assert (results / "tables/scorecard.tex").stat().st_size > 0
    # Nations' Table 4 row is reproduced; a wn18rr claim is not checkable in the tiny run
    verdicts = card.set_index("id")["verdict"]
    assert verdicts["hoyt2022-table4-nations-entities"] == "reproduced"
    assert verdicts["hoyt2022-table4-wn18rr-entities"] == "not checkable"


def test_protocols_outputs(workdir):
    """The sixth study's three parts: every table and figure, the WGMR check passing on
    Nations' candidate counts, a constant scorer tied everywhere and a trained one nowhere."""
    results = workdir / "results"
    for part in ("weighted", "weighted_montecarlo", "sampled", "ties"):
        for suffix in ("md", "tex"):
            assert (results / f"tables/protocols_{part}.{suffix}").stat().st_size > 0, part
    for part in ("weighted", "sampled", "ties"):
        for suffix in ("pdf", "png"):
            assert (results / f"figures/protocols_{part}.{suffix}").stat().st_size > 0, part
    check = pd.read_csv(results / "protocols/weighted_montecarlo.tsv", sep="\t")
    assert check["passed"].all(), check.loc[~check["passed"], ["scheme", "metric", "z_mean", "z_variance"]]
    sampled = pd.read_csv(results / "protocols/sampled.tsv", sep="\t")
    assert {"naive", "rescaled", "posterior-rank", "corrected"} <= set(sampled["estimator"])
    ties = pd.read_csv(results / "protocols/ties.tsv", sep="\t")
    shares = ties[(ties["tolerance"] == "exact") & (ties["statistic"] == "tied_share")]
    assert set(shares["model"]) == {"transe", "complex", "pk-folder"}  # and the rescored PyKEEN folder
    assert (shares.loc[shares["scorer"] == "constant", "value"] == 1).all()
    assert (shares.loc[shares["scorer"] == "model", "value"] == 0).all()


def test_ambiguity_outputs(workdir):
    """The ambiguity study in miniature (.test/config.yaml): every table and figure, the
    random scorer near 0 under realistic ranks, the constant scorer's AMRI at 1, 0 and -1."""
    results = workdir / "results"
    for name in ("variants", "ties", "slopes", "table1", "pairwise"):
        assert (results / f"tables/ambiguity_{name}.md").stat().st_size > 0, name
    for name in ("variants", "drift", "pairwise"):
        assert (results / f"figures/ambiguity_{name}.png").stat().st_size > 0, name
    subsets = pd.read_parquet(results / "ambiguity/subsets/nations/transe.parquet")
    assert set(subsets["fraction"]) == {0.25, 1.0} and set(subsets["replicate"]) == {0, 1}
    assert (subsets["pessimistic"] <= subsets["num_candidates"]).all()
    variants = pd.read_csv(results / "ambiguity/variants.tsv", sep="\t")
    both = variants[(variants["side"] == "both")].set_index(["scorer", "rank_type", "metric"])["value"]
    amri = "adjusted_arithmetic_mean_rank_index"
    assert both["constant", "optimistic", amri] == pytest.approx(1.0)
    assert both["constant", "realistic", amri] == pytest.approx(0.0, abs=1e-12)
    assert both["constant", "pessimistic", amri] == pytest.approx(-1.0)
    assert abs(both["random", "realistic", amri]) < 0.1
    assert abs(both["random", "realistic", "z_inverse_harmonic_mean_rank"]) < 3
    drift = pd.read_csv(results / "ambiguity/drift.tsv", sep="\t")
    assert set(drift["protocol"]) == {"sampled", "subsets"}
    assert set(drift[drift["protocol"] == "sampled"]["size"].astype(str)) == {"5", "10", "all"}
    table1 = (results / "tables/ambiguity_table1.md").read_text()
    assert "DistMult" in table1 and "TransE" in table1
    pairwise = pd.read_csv(results / "ambiguity/pairwise.tsv", sep="\t")
    # two trained models and three external systems: every pair once
    assert len(pairwise) == 10 and pairwise["wilcoxon_p_holm"].between(0, 1).all()


EXTERNAL = ("pk-folder", "pk-ranks", "pk-scores")


def test_external_systems_join_like_trained_models(workdir):
    """The tiny config's three systems from outside (one PyKEEN DistMult as a pipeline
    folder, a rank CSV and a score matrix): the same ranks and metrics whatever the kind,
    and a place in Figure 1's data, the ambiguity tables and the participation table."""
    results = workdir / "results"
    columns = ["triple_id", "side", "optimistic", "realistic", "pessimistic", "num_candidates"]
    ranks = {name: pd.read_parquet(results / f"ranks/nations/{name}.parquet") for name in EXTERNAL}
    metrics = {name: pd.read_csv(results / f"metrics/nations/{name}.tsv", sep="\t") for name in EXTERNAL}
    for name in EXTERNAL[1:]:
        pd.testing.assert_frame_equal(ranks[name][columns], ranks["pk-folder"][columns])
        values = ["side", "rank_type", "metric", "value", "ci_low", "ci_high"]
        pd.testing.assert_frame_equal(metrics[name][values], metrics["pk-folder"][values])
    loops = {name: set(table["training_loop"]) for name, table in metrics.items()}
    assert loops == {
        "pk-folder": {"external (PyKEEN pipeline folder)"},
        "pk-ranks": {"external (rank table)"},
        "pk-scores": {"external (score matrix)"},
    }
    mrr = metrics["pk-folder"].query("side == 'both' and rank_type == 'realistic'")
    assert 0 < mrr.set_index("metric").loc["adjusted_inverse_harmonic_mean_rank", "value"] < 1
    pairwise = pd.read_csv(results / "ambiguity/pairwise.tsv", sep="\t")
    assert set(EXTERNAL) <= set(pairwise["first"]) | set(pairwise["second"])
    same = pairwise[pairwise["first"].isin(EXTERNAL) & pairwise["second"].isin(EXTERNAL)]
    assert len(same) == 3 and (same["difference"] == 0).all()
    table1 = pd.read_csv(results / "ambiguity/table1.tsv", sep="\t")
    assert set(EXTERNAL) <= set(table1["model"])
    participation = pd.read_csv(results / "metrics/external_systems.tsv", sep="\t")
    assert set(participation["system"]) == set(EXTERNAL)
    status = participation.set_index(["system", "part"])["status"]
    assert status["pk-ranks", "paper: Figure 1"] == "joined"
    assert (status[:, "comparison (results/comparison, tables/comparison)"] == "joined").all()
    rescoring = [
        part for part in status["pk-folder"].index if status["pk-ranks", part].startswith("skipped: rescores")
    ]
    assert "ambiguity: subset protocol" in rescoring and "ir: every part" in rescoring
    assert (status["pk-folder"][rescoring] == "joined").all()
    assert (
        status["pk-scores"][rescoring] == "skipped: rescores the model, which a score matrix does not hold"
    ).all()
    assert (results / "tables/external_systems.md").stat().st_size > 0
    plan = snakemake(workdir, "-n", "--forcerun", "paper_figure1", "results/figures/figure1.png")
    figure1_inputs = next(line for line in plan.stdout.splitlines() if "metrics/nations/transe.tsv" in line)
    assert all(f"results/metrics/nations/{name}.tsv" in figure1_inputs for name in EXTERNAL)


def test_an_external_pykeen_folder_is_rescored_like_a_trained_model(workdir):
    """pk-folder's model is loaded wherever a trained model is rescored: its sampled ranks
    (k = 5, fixed set), candidate subsets, tie rescoring and IR pass, whose micro MRR (all
    known answers filtered, the full test set) is that of its own rank table."""
    results = workdir / "results"
    sampled = pd.read_parquet(results / "ranks/nations/pk-folder.sampled-5.parquet")
    assert len(sampled) == 2 * 201 and sampled["num_candidates"].between(1, 6).all()
    fixed = pd.read_csv(results / "protocols/sampled.tsv", sep="\t").query("variant == 'fixed-set'")
    assert set(fixed["model"]) == {"transe", "complex", "pk-folder"}
    assert "pk-folder" in set(pd.read_csv(results / "protocols/ties.tsv", sep="\t")["model"])
    drift = pd.read_csv(results / "ambiguity/drift.tsv", sep="\t").query("protocol == 'subsets'")
    assert set(drift["model"]) == {"transe", "pk-folder"}
    assert "pk-folder" in set(pd.read_csv(results / "ir/nations/systems.tsv", sep="\t")["model"])
    for name in ("pk-folder", "transe"):
        micro = pd.read_csv(results / f"ir/nations/micro/{name}.tsv", sep="\t").query(
            "protocol == 'all-known' and evaluation == 'test' and side == 'both' and rank_type == 'realistic'"
        )
        metrics = pd.read_csv(results / f"metrics/nations/{name}.tsv", sep="\t").query(
            "side == 'both' and rank_type == 'realistic'"
        )
        ours, theirs = (
            table.set_index("metric").loc["inverse_harmonic_mean_rank", "value"] for table in (micro, metrics)
        )
        assert ours == pytest.approx(theirs, rel=1e-9), name


def test_metrics_agree_with_ranks(workdir):
    ranks = pd.read_parquet(workdir / "results/ranks/nations/transe.parquet")
    assert len(ranks) == 2 * 201
    assert np.all((ranks["optimistic"] <= ranks["random"]) & (ranks["random"] <= ranks["pessimistic"]))
    metrics = pd.read_csv(workdir / "results/metrics/nations/transe.tsv", sep="\t")
    realistic = metrics[(metrics["side"] == "both") & (metrics["rank_type"] == "realistic")].set_index(
        "metric"
    )
    assert realistic.loc["hits_at_10", "value"] == pytest.approx((ranks["realistic"] <= 10).mean())
    assert realistic.loc["inverse_harmonic_mean_rank", "value"] == pytest.approx(
        (1 / ranks["realistic"]).mean()
    )
    # early stopping (every epoch, patience 5) keeps the best of the two epochs
    curve = pd.read_csv(workdir / "results/models/nations/transe/learning_curve.tsv", sep="\t")
    assert list(curve["epoch"]) == [1, 2] and curve["valid_mrr"].notna().all()
    assert set(metrics["epochs"]) == {int(curve.loc[curve["valid_mrr"].idxmax(), "epoch"])}
    assert set(metrics["early_stopping"]) == {True}
    assert set(metrics["training_loop"]) == set(metrics["published_training_loop"]) == {"lcwa"}
    # ranks.sampled_candidates: [5] in the tiny config; a query keeps fewer candidates only
    # when fewer than 5 of Nations' 14 entities are not known answers.
    sampled = pd.read_parquet(workdir / "results/ranks/nations/transe.sampled-5.parquet")
    assert len(sampled) == len(ranks) and sampled["num_candidates"].max() == 6
    assert (sampled["pessimistic"] <= sampled["num_candidates"]).all()
    # the groups partition the ranks: count-weighted group MRRs give the overall MRR
    groups = pd.read_parquet(workdir / "results/metrics/nations/transe.groups.parquet")
    for aggregation in ("relation", "relation_category"):
        mrr = groups[
            (groups["aggregation"] == aggregation)
            & (groups["side"] == "both")
            & (groups["rank_type"] == "realistic")
            & (groups["metric"] == "inverse_harmonic_mean_rank")
        ]
        assert mrr["num_ranks"].sum() == len(ranks)
        assert (mrr["value"] * mrr["num_ranks"]).sum() / len(ranks) == pytest.approx(
            realistic.loc["inverse_harmonic_mean_rank", "value"]
        )


def test_several_seeds_enter_the_comparison(workdir):
    """comparison.seeds_by_pair trains TransE on Nations with seeds 7 (the config's) and 8:
    the comparison's TransE is the mean of the two runs, its seed spread their spread."""
    results = workdir / "results"
    assert '"seed": 8' in (results / "seeds/8/models/nations/transe/config.json").read_text()
    runs = [
        pd.read_parquet(results / path)
        for path in ("ranks/nations/transe.parquet", "seeds/8/ranks/nations/transe.parquet")
    ]
    assert [len(run) for run in runs] == [2 * 201] * 2
    assert not runs[0]["realistic"].equals(runs[1]["realistic"])  # another seed, another model
    per_run = [float((1 / run["realistic"]).mean()) for run in runs]
    run_metrics = pd.read_csv(results / "seeds/8/metrics/nations/transe.tsv", sep="\t")
    realistic = run_metrics[(run_metrics["side"] == "both") & (run_metrics["rank_type"] == "realistic")]
    assert realistic.set_index("metric").loc["inverse_harmonic_mean_rank", "value"] == pytest.approx(
        per_run[1]
    )
    systems = pd.read_csv(results / "comparison/systems.tsv", sep="\t").set_index(["system", "metric"])
    transe = systems.loc[("transe", "inverse_harmonic_mean_rank")]
    assert transe["seeds"] == 2 and transe["value"] == pytest.approx(np.mean(per_run), rel=1e-9)
    assert transe["seed_sd"] == pytest.approx(np.std(per_run, ddof=1), rel=1e-9)
    assert transe["ci_method"].startswith("t (tasks x seeds")
    # every evaluated system of the dataset is compared: the trained ones and the three external
    assert set(systems.index.get_level_values("system")) == {
        "transe",
        "complex",
        "pk-folder",
        "pk-ranks",
        "pk-scores",
    }
    assert systems.loc[("complex", "inverse_harmonic_mean_rank"), "seeds"] == 1
    pairs = pd.read_csv(results / "comparison/pairs.tsv", sep="\t")
    assert len(pairs) == 2 * 10  # two metrics, 5 choose 2 pairs
    table = (results / "tables/comparison.md").read_text()
    assert "over seeds, where a system has several" in table and "Holm" in table
    assert (results / "tables/comparison.tex").stat().st_size > 0


def test_a_seed_added_to_a_finished_run_trains_only_that_seed(tmp_path, workdir):
    """comparison.seeds_by_pair given another seed on a finished results/: the new run and
    the comparison are planned, nothing of the runs before or of any study."""
    config = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
    config["comparison"]["seeds_by_pair"]["nations"]["transe"] = [7, 8, 9]
    path = tmp_path / "more-seeds.yaml"
    # the keys in their order: external_systems passes its entries as JSON, in the config's order
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    plan = planned_jobs(snakemake(workdir, "-n", "--cores", "2", "--configfile", str(path)))
    assert plan == {"train_run": 1, "ranks_run": 1, "metrics_run": 1, "compare": 1, "all": 1}


def test_second_run_does_nothing(workdir):
    result = snakemake(workdir, "-n", "--cores", "2")
    assert planned_jobs(result) == {}, result.stdout[-2000:]
    assert "Nothing to be done" in result.stdout + result.stderr


def test_deleted_ranks_plan_their_dependants_and_remake_the_same(tmp_path, local_run):
    """The plan names every dependant; the rerun makes the ranks alone, on a copy of the
    run of its own: the dependants' rules ran on these ranks in the session's run (and
    metrics and Figure 1 again in the crash test's), and remaking them here (16 jobs, a
    quarter of the DAG) would assert nothing more than their exit code."""
    workdir = _copy_of_the_local_run(local_run, tmp_path)
    path = workdir / "results/ranks/nations/transe.parquet"
    before = pd.read_parquet(path)
    path.unlink()
    plan = planned_jobs(snakemake(workdir, "-n", "--cores", "2"))
    # the ambiguity study reads every rank table; its subset protocol reads the model, not the ranks
    ambiguity = ("variants", "drift", "drift_figure", "table1", "pairwise")
    assert plan == {
        "ranks": 1,
        "metrics": 1,
        "paper_figure1": 1,
        "all": 1,
        # it judges claims on the metric and ambiguity tables
        "scorecard": 1,
        # the comparison of every system's ranks
        "compare": 1,
        **{f"ambiguity_{rule}": 1 for rule in ambiguity},
        # the protocols study reads every rank table (and transe's for Nations' candidate
        # counts); its tie scoring pass reads the model, not the ranks
        **{f"protocols_{rule}": 1 for rule in ("weighted", "weighted_check", "sampled", "ties")},
        **{f"protocols_{rule}_figure": 1 for rule in ("weighted", "sampled", "ties")},
    }
    remade = snakemake(workdir, "--cores", "2", str(path.relative_to(workdir)))
    assert remade.returncode == 0, remade.stderr[-3000:]
    assert "1 of 1 steps (100%) done" in remade.stderr, remade.stderr[-3000:]
    pd.testing.assert_frame_equal(pd.read_parquet(path), before)  # same seed, same ranks


def test_one_figure_by_name(workdir):
    (workdir / "results/figures/figure1.png").unlink()
    result = snakemake(workdir, "--cores", "1", "results/figures/figure1.png")
    assert result.returncode == 0
    assert (workdir / "results/figures/figure1.png").is_file()


@pytest.mark.parametrize("notebook", sorted(path.name for path in (REPO / "notebooks").glob("*.ipynb")))
def test_every_notebook_runs_on_the_results(workdir, notebook):
    import os

    result = subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--stdout", notebook],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "KGRANK_RESULTS": str(workdir / "results")},
        cwd=REPO / "notebooks",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    # each notebook shows numbers read from the results, not only a figure
    assert "inverse_harmonic_mean_rank" in result.stdout


def test_report_has_every_figure_and_table(workdir):
    report = workdir / "report.html"
    result = snakemake(workdir, "--report", str(report))
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert report.stat().st_size > 10_000
