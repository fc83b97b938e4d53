"""kgrank.workflow.scheduling: the cost estimates that order the workflow's long jobs."""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import REPO
from scipy.stats import spearmanr

from kgrank.workflow import scheduling
from kgrank.workflow.config import hyperparameter_path, study_pairs

CONFIG = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
HYPERPARAMETERS_DIR = REPO / CONFIG["hyperparameters_dir"]

# Measured training seconds (wall, with start-up and validations) of the default run of
# commit 1b7d054 from a fresh clone on a 2-core machine (results/benchmarks/train/), for the
# 15 pairs whose budget has not changed since; FB15k-237 TuckER and TransE, WN18RR TransE and
# Kinships TransE changed after it.
MEASURED_SECONDS = {
    ("fb15k237", "complex"): 302.5,
    ("fb15k237", "conve"): 591.4,
    ("fb15k237", "distmult"): 159.56,
    ("fb15k237", "rescal"): 425.67,
    ("fb15k237", "rotate"): 307.35,
    ("kinships", "complex"): 42.55,
    ("kinships", "rotate"): 244.34,
    ("kinships", "tucker"): 70.39,
    ("nations", "complex"): 36.22,
    ("nations", "rotate"): 66.96,
    ("nations", "transe"): 29.52,
    ("nations", "tucker"): 49.42,
    ("wn18rr", "complex"): 261.29,
    ("wn18rr", "rotate"): 126.2,
    ("wn18rr", "tucker"): 1131.61,
}


def _default_pairs() -> list[tuple[str, str]]:
    trained = [(dataset, model) for dataset in CONFIG["datasets"] for model in CONFIG["models"]]
    config = {
        **CONFIG,
        "studies": {**CONFIG["studies"], "ir": {"dataset": "fb15k237", **CONFIG["studies"]["ir"]}},
    }
    return trained + study_pairs(config)


def _estimate(dataset: str, model: str, tmp_stats: str = "/nonexistent/stats.json") -> float:
    pair = scheduling.trained_pair(
        hyperparameter_path(HYPERPARAMETERS_DIR, dataset, model), CONFIG["budget"], dataset, model
    )
    size = scheduling.dataset_size(dataset, tmp_stats)
    assert size is not None
    return scheduling.pair_training_seconds(pair, size)


def test_estimated_order_of_the_default_trainings_agrees_with_the_measured_one():
    pairs = list(MEASURED_SECONDS)
    estimated = [_estimate(*pair) for pair in pairs]
    rho = spearmanr(estimated, [MEASURED_SECONDS[pair] for pair in pairs]).statistic
    assert rho > 0.8
    # The scheduler needs the order only. The throughput was fitted to five trainings of an
    # older budget (commit f3cc087); against these 16 the estimates' sum is 0.64 of the
    # measured one (start-up and validations are counted coarsely).
    assert 0.5 < sum(estimated) / sum(MEASURED_SECONDS.values()) < 1.0


@pytest.mark.xfail(
    strict=True,
    reason="known: the estimate counts an LCWA epoch's queries as training triples (twice, with "
    "the inverse ones), while PyKEEN's LCWA loop batches distinct (head, relation) pairs, 0.275 of "
    "them on FB15k-237 and 0.596 on WN18RR; since commit 40f75c6 gave FB15k-237 TuckER 15 epochs "
    "its estimate (1,444 s) passes WN18RR TuckER's (1,325 s), where the default run of 40f75c6 "
    "measured 420 s against 809. Both start first on 2 cores, so that run's order did not change.",
)
def test_wn18rr_tucker_is_the_longest_training_of_the_default_run():
    pairs = _default_pairs()
    assert len(pairs) == 19  # 16 pairs and the IR study's DistMult, RESCAL and ConvE
    estimates = {pair: _estimate(*pair) for pair in pairs}
    # as measured: 1,132 s in the run of commit 1b7d054, the next 846 s (FB15k-237 TuckER,
    # since halved) and 732 s (FB15k-237 TransE)
    assert max(estimates, key=estimates.get) == ("wn18rr", "tucker")
    # Nations and Kinships (at most 104 entities) train in less than any FB15k-237 LCWA pair
    small = max(seconds for (dataset, _), seconds in estimates.items() if dataset in ("nations", "kinships"))
    assert small < min(estimates[("fb15k237", model)] for model in ("complex", "transe", "tucker", "conve"))


def test_epochs_and_pipeline_are_those_kgrank_train_uses():
    from kgrank.training.train import effective_epochs

    for dataset, model in _default_pairs():
        path = hyperparameter_path(HYPERPARAMETERS_DIR, dataset, model)
        pair = scheduling.trained_pair(path, CONFIG["budget"], dataset, model)
        published = yaml.safe_load(path.read_text(encoding="utf-8"))["pipeline"]
        cap = (CONFIG["budget"]["by_dataset"].get(dataset, {}).get(model) or {}).get("max_epochs")
        if cap is None:
            cap = CONFIG["budget"]["max_epochs_by_model"].get(model, CONFIG["budget"]["max_epochs"])
        assert pair.epochs == effective_epochs(published, cap)
    wn18rr_complex = scheduling.trained_pair(
        hyperparameter_path(HYPERPARAMETERS_DIR, "wn18rr", "complex"), CONFIG["budget"], "wn18rr", "complex"
    )
    assert wn18rr_complex.pipeline["training_loop"] == "slcwa"
    assert wn18rr_complex.pipeline["negative_sampler_kwargs"]["num_negs_per_pos"] == 32
    assert wn18rr_complex.pipeline["model_kwargs"]["embedding_dim"] == 64
    assert wn18rr_complex.validation_every == 4


@pytest.mark.parametrize(
    "model, kwargs, per_query, per_candidate",
    [
        ("distmult", {"embedding_dim": 64}, 64, 64),
        ("complex", {"embedding_dim": 64}, 128, 128),
        ("rotate", {"embedding_dim": 32}, 64, 64),
        ("transe", {"embedding_dim": 10, "scoring_fct_norm": 2}, 10, 10),
        ("transe", {"embedding_dim": 10, "scoring_fct_norm": 1}, 10, 10 * scheduling.L1_COST_PER_DIMENSION),
        ("rescal", {"embedding_dim": 8}, 64, 8),
        ("tucker", {"embedding_dim": 4, "relation_dim": 3}, 4 * 3 * 4 + 16, 4),
        # (2 x 10) x 20 image, 3 x 3 kernels: 18 x 18 maps of 32 channels, then back to 200
        ("conve", {"embedding_dim": 200}, 32 * 18 * 18 * 9 + 32 * 18 * 18 * 200, 200),
    ],
)
def test_score_width_per_family(model, kwargs, per_query, per_candidate):
    width = scheduling.score_width({"model": model, "model_kwargs": kwargs})
    assert (width.per_query, width.per_candidate) == (per_query, per_candidate)


def test_costs_grow_with_what_is_computed():
    size = scheduling.DatasetSize(entities=1000, train=5000, valid=100, test=100)
    lcwa = {"model": "distmult", "model_kwargs": {"embedding_dim": 32}, "training_loop": "lcwa"}
    inverse = {**lcwa, "dataset_kwargs": {"create_inverse_triples": True}}
    base = scheduling.training_seconds(lcwa, size, 10) - scheduling.STARTUP_SECONDS
    assert scheduling.training_seconds(lcwa, size, 20) - scheduling.STARTUP_SECONDS == pytest.approx(2 * base)
    assert scheduling.training_seconds(inverse, size, 10) - scheduling.STARTUP_SECONDS == pytest.approx(
        2 * base
    )
    assert scheduling.training_seconds(lcwa, size, 10, validation_every=2) > base + scheduling.STARTUP_SECONDS
    slcwa = {**lcwa, "training_loop": "slcwa", "negative_sampler_kwargs": {"num_negs_per_pos": 4}}
    more = {**slcwa, "negative_sampler_kwargs": {"num_negs_per_pos": 9}}
    assert scheduling.training_seconds(more, size, 10) - scheduling.STARTUP_SECONDS == pytest.approx(
        2 * (scheduling.training_seconds(slcwa, size, 10) - scheduling.STARTUP_SECONDS)
    )
    deeper = scheduling.ranking_seconds(lcwa, size, 2, 1000.0)
    assert deeper > scheduling.ranking_seconds(lcwa, size, 2, 100.0) > scheduling.ranking_seconds(lcwa, size)
    assert scheduling.ranking_seconds(lcwa, size, 2) - scheduling.STARTUP_SECONDS == pytest.approx(
        2 * (scheduling.ranking_seconds(lcwa, size) - scheduling.STARTUP_SECONDS)
    )


def test_sizes_from_stats_json_first(tmp_path):
    stats = tmp_path / "stats.json"
    stats.write_text(
        json.dumps({"entities": 7, "triples": {"train": 30, "valid": 4, "test": 5}}), encoding="utf-8"
    )
    assert scheduling.dataset_size("fb15k237", stats) == scheduling.DatasetSize(7, 30, 4, 5)
    assert scheduling.dataset_size("fb15k237", tmp_path / "none.json").entities == 14505
    assert scheduling.dataset_size("no-such-dataset", tmp_path / "none.json") is None


def test_triples_file_size(tmp_path):
    path = tmp_path / "train.tsv"
    path.write_text("a\tr\tb\nb\tr\tc\na\ts\tc\n", encoding="utf-8")
    assert scheduling.triples_file_size(str(path)) == (3, 3)
    with_header = tmp_path / "answers.tsv"
    with_header.write_text("head\trelation\ttail\n0\t1\t2\n", encoding="utf-8")
    assert scheduling.triples_file_size(str(with_header), header=True) == (1, 2)


def test_triples_file_size_is_kept_until_the_file_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("KGRANK_ANSWERS", str(tmp_path / "answers"))
    path = tmp_path / "train.tsv"
    path.write_text("a\tr\tb\n", encoding="utf-8")
    assert scheduling.triples_file_size(str(path)) == (1, 2)
    count = scheduling._count_triples

    def read_again(*arguments):
        raise AssertionError("the file was read again")

    monkeypatch.setattr(scheduling, "_count_triples", read_again)
    scheduling.triples_file_size.cache_clear()  # as in the next Snakemake call
    assert scheduling.triples_file_size(str(path)) == (1, 2)
    monkeypatch.setattr(scheduling, "_count_triples", count)
    path.write_text("a\tr\tb\nc\tr\td\n", encoding="utf-8")
    scheduling.triples_file_size.cache_clear()
    assert scheduling.triples_file_size(str(path)) == (2, 4)


def test_priority_is_a_positive_integer():
    assert scheduling.priority(0.2) == 1
    assert scheduling.priority([10.5, 3.0]) == 14
