"""Study `ir`: the Monte Carlo check of the macro moments and the settings the workflow reads.

The evaluation core and the analyses have their own files (test_ir_evaluation.py,
test_ir_analyses.py).
"""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest

from kgrank.errors import KgrankInputError
from kgrank.studies.ir import montecarlo
from kgrank.studies.ir import settings as ir_settings
from kgrank.studies.ir.montecarlo import check_macro_moments, simulate_best_ranks
from kgrank.studies.ir.settings import check_settings, exported_evaluations, stability_evaluations


def _best_rank_law(num_other: int, num_relevant: int) -> np.ndarray:
    """P(K = k), k = 1..M+1, by listing every placement of the relevant items."""
    size = num_other + num_relevant
    counts = np.zeros(num_other + 2)
    for places in itertools.combinations(range(1, size + 1), num_relevant):
        counts[min(places)] += 1
    return counts[1:] / counts.sum()


@pytest.mark.parametrize(("num_other", "num_relevant"), [(0, 1), (3, 1), (4, 2), (6, 3)])
def test_random_keys_draw_the_best_rank_law(num_other, num_relevant):
    """K = 1 + Binomial(M, Beta(1, R)) has the law of the first relevant place in a random order."""
    replicates = 40_000
    draws = simulate_best_ranks(
        np.array([num_other]), np.array([num_relevant]), replicates, np.random.default_rng(3)
    )[:, 0]
    law = _best_rank_law(num_other, num_relevant)
    observed = np.bincount(draws, minlength=num_other + 2)[1:] / replicates
    # every cell within 5 binomial standard errors
    assert np.all(np.abs(observed - law) <= 5 * np.sqrt(law * (1 - law) / replicates) + 1e-12)


def test_the_check_passes_on_a_realistic_query_structure():
    generator = np.random.default_rng(0)
    num_other = generator.integers(50, 3000, size=300)
    num_relevant = generator.integers(1, 12, size=300)
    table = check_macro_moments(num_other, num_relevant, [1, 3, 10], replicates=3000, seed=5, alpha=0.01)
    assert list(table["metric"]) == [
        "macro_arithmetic_mean_rank",
        "macro_inverse_harmonic_mean_rank",
        "macro_hits_at_1",
        "macro_hits_at_3",
        "macro_hits_at_10",
    ]
    assert table["passed"].all(), table


def test_the_check_fails_a_wrong_formula(monkeypatch):
    """Negative control: moments that ignore the other relevant answers (the micro ones,
    uniform on 1..M+1) must be caught."""
    true_moments = montecarlo.best_rank_moments_of
    monkeypatch.setattr(
        montecarlo,
        "best_rank_moments_of",
        lambda transforms, num_other, num_relevant: true_moments(
            transforms, num_other, np.ones_like(num_relevant)
        ),
    )
    generator = np.random.default_rng(1)
    table = check_macro_moments(
        generator.integers(50, 500, size=200), np.full(200, 3), [10], replicates=2000, seed=2, alpha=0.01
    )
    assert not table["passed"].any(), table


def test_a_query_without_other_candidates_is_exact():
    table = check_macro_moments(
        np.zeros(5, dtype=int), np.full(5, 2), [1], replicates=200, seed=0, alpha=0.01
    )
    assert table["passed"].all()
    assert (table["expectation"] == table["simulated_mean"]).all()


def test_settings_name_what_is_wrong(tmp_path):
    kgc = tmp_path / "kgc"
    (kgc / "FB-Test-S-C").mkdir(parents=True)
    good = {"dataset": "fb15k237", "other_datasets": ["wn18rr"], "data_dir": str(kgc)}
    check_settings(good, ["fb15k237", "wn18rr"], kgc, source="c.yaml")
    with pytest.raises(KgrankInputError, match=r"c.yaml: key studies.ir.other_datasets: 'wn18rr'"):
        check_settings(good, ["fb15k237"], kgc, source="c.yaml")
    with pytest.raises(KgrankInputError, match="is the study's dataset already"):
        check_settings({**good, "other_datasets": ["fb15k237"]}, ["fb15k237"], kgc, source="c.yaml")
    with pytest.raises(KgrankInputError, match="holds no FB-Test-S-C folder"):
        check_settings(good, ["fb15k237", "wn18rr"], tmp_path, source="c.yaml")


def test_which_sets_each_dataset_gets():
    assert exported_evaluations("fb15k237", "fb15k237") == ("test", "sample", "pooled")
    assert exported_evaluations("wn18rr", "fb15k237") == ("test",)
    assert stability_evaluations("fb15k237", "fb15k237") == ("test", "pooled")
    assert stability_evaluations("wn18rr", "fb15k237") == ("test",)


def test_subset_draws_keep_their_seeds():
    """draw_subsets goes through kgrank.evaluation.stats.seed_stream: the same draws as the
    default_rng([seed, fraction in millionths, repetition]) it replaced."""
    from kgrank.studies.ir.stability import draw_subsets

    draws = draw_subsets(50, 0.3, 3, seed=7)
    for repetition in range(3):
        chosen = np.random.default_rng([7, 300_000, repetition]).choice(50, size=15, replace=False)
        assert np.flatnonzero(draws[repetition]).tolist() == sorted(chosen.tolist())


def test_montecarlo_alpha_is_a_setting():
    """The Monte Carlo level is a schema setting (default 0.01) that the command reads
    through --settings, next to its replicates."""
    import yaml
    from conftest import REPO

    from kgrank.workflow.settings import command_keys, parse_settings

    schema = yaml.safe_load((REPO / "src/kgrank/schemas/studies/ir.schema.yaml").read_text())
    assert schema["properties"]["montecarlo_alpha"]["default"] == 0.01
    assert schema["properties"]["alpha"]["default"] == 0.05
    assert command_keys("ir", "ir-montecarlo") == ["montecarlo_replicates", "montecarlo_alpha"]
    assert parse_settings("ir", "ir-montecarlo", "{}")["montecarlo_alpha"] == 0.01
    assert command_keys("ir", "ir-discrimination") == ["alpha"]


def test_the_analyses_import_without_torch():
    """Every command but ir-queries and ir-evaluate (which score or read a dataset through
    PyKEEN) runs without loading torch: the item table's columns, the analyses, the
    figures and the table kinds the commands read."""
    modules = ", ".join(
        f"kgrank.studies.ir.{name}"
        for name in (
            "aggregate",
            "agreement",
            "commands",
            "discrimination",
            "evaluation",
            "figures",
            "kgc_sparsity",
            "montecarlo",
            "protocols",
            "report",
            "stability",
            "trec",
        )
    )
    code = (
        f"import sys, {modules}; from kgrank.studies.ir import commands; "
        "[kind() for kind in (commands.items_kind, commands.evaluations_kind, commands.relations_kind, "
        "commands.stability_summary_kind)]; "
        "print(sorted(name for name in sys.modules if name.split('.')[0] in {'torch', 'pykeen'}))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_the_scheduling_hook_counts_both_protocols_and_the_run_lines():
    from kgrank.workflow import scheduling

    pipeline = {"model": "DistMult", "model_kwargs": {"embedding_dim": 50}, "training_loop": "lcwa"}
    size = scheduling.DatasetSize(1000, 10_000, 500, 500)
    ranks_only = scheduling.ranking_seconds(pipeline, size) - scheduling.STARTUP_SECONDS
    shallow = ir_settings.pass_seconds(pipeline, size, 0) - scheduling.STARTUP_SECONDS
    assert shallow == pytest.approx(len(ir_settings.PROTOCOLS) * ranks_only)
    deeper = ir_settings.pass_seconds(pipeline, size, 100) - scheduling.STARTUP_SECONDS
    lines = len(ir_settings.PROTOCOLS) * 2 * size.test * 100
    assert deeper - shallow == pytest.approx(
        lines * ir_settings.RUN_LINE_COST / scheduling.MULTIPLY_ADDS_PER_SECOND
    )


def test_the_scorecard_hook_knows_which_ir_tables_a_run_writes():
    made = ir_settings.scorecard_made
    assert made("ir/discrimination.tsv", ["fb15k237", "wn18rr"], "fb15k237")
    assert made("ir/wn18rr/stability.tsv", ["fb15k237", "wn18rr"], "fb15k237")
    assert not made("ir/wn18rr/systems.tsv", ["fb15k237", "wn18rr"], "fb15k237")
    assert made("ir/fb15k237/systems.tsv", ["fb15k237", "wn18rr"], "fb15k237")
    assert not made("ir/nations/stability.tsv", ["fb15k237", "wn18rr"], "fb15k237")
