import json

import pandas as pd
import pytest
import torch
from conftest import REPO

from kgrank.cli.main import main
from kgrank.errors import KgrankInputError
from kgrank.training.hyperparameters import load_hyperparameters
from kgrank.training.train import apply_budget, effective_epochs, flushed_denormals, make_loss, train
from kgrank.workflow.config import budget_columns


def test_budget_caps_but_never_raises_epochs():
    pipeline = {"training_kwargs": {"num_epochs": 151}}
    assert effective_epochs(pipeline, None) == 151
    assert effective_epochs(pipeline, 40) == 40
    assert effective_epochs(pipeline, 500) == 151


def test_same_seed_same_model_and_outputs(nations_dir, tmp_path):
    hyperparameters = load_hyperparameters(REPO / "config/hyperparameters/nations/tucker.yaml")
    for run in ("a", "b"):
        train(nations_dir, hyperparameters, tmp_path / run, seed=3, max_epochs=2, progress=False)
    first, second = (torch.load(tmp_path / run / "model.pt", weights_only=True) for run in ("a", "b"))
    assert first.keys() == second.keys()
    assert all(torch.equal(first[key], second[key]) for key in first)
    resolved = json.loads((tmp_path / "a" / "config.json").read_text())
    assert (resolved["epochs"], resolved["published_epochs"], resolved["seed"]) == (2, 351, 3)
    published = resolved["hyperparameters"]["pipeline"]
    assert (
        budget_columns(resolved).items()
        >= {
            "epochs": 2,
            "published_epochs": 351,
            "training_loop": "lcwa",
            "published_training_loop": "lcwa",
            "embedding_dim": published["model_kwargs"]["embedding_dim"],
            "published_embedding_dim": published["model_kwargs"]["embedding_dim"],
            "batch_size": published["training_kwargs"]["batch_size"],
            "published_batch_size": published["training_kwargs"]["batch_size"],
            "learning_rate": published["optimizer_kwargs"]["lr"],
            "published_learning_rate": published["optimizer_kwargs"]["lr"],
            "early_stopping": False,
        }.items()
    )
    losses = pd.read_csv(tmp_path / "a" / "losses.tsv", sep="\t")
    assert list(losses["epoch"]) == [1, 2]
    assert sorted(path.name for path in (tmp_path / "a").iterdir()) == [
        "config.json",
        "learning_curve.tsv",
        "losses.tsv",
        "model.pt",
        "training.json",
    ]


def test_cli_reports_bad_input_in_one_line(tmp_path, capsys, nations_dir):
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: transe\n")
    code = main(
        [
            "train",
            "--dataset-dir",
            str(nations_dir),
            "--hyperparameters",
            str(bad),
            "--out-dir",
            str(tmp_path / "out"),
            "--seed",
            "1",
        ]
    )
    error = capsys.readouterr().err.strip()
    assert code == 2
    assert error.count("\n") == 0
    assert error.startswith("kgrank train: error: ") and "bad.yaml: key (top level)" in error
    assert not (tmp_path / "out").exists()


def test_model_must_match_dataset(nations_dir, tmp_path):
    from kgrank.data.datasets import prepare_dataset
    from kgrank.errors import KgrankInputError
    from kgrank.training.train import load_model

    hyperparameters = load_hyperparameters(REPO / "config/hyperparameters/nations/transe.yaml")
    train(nations_dir, hyperparameters, tmp_path / "model", seed=1, max_epochs=1, progress=False)
    kinships = tmp_path / "kinships"
    prepare_dataset("kinships", {"source": "pykeen"}, kinships)
    with pytest.raises(KgrankInputError, match="model trained on 14 entities and 110 relations"):
        load_model(tmp_path / "model", kinships)
    # A state dict from another dataset behind a config that matches: one line, the file named.
    other = load_hyperparameters(REPO / "config/hyperparameters/kinships/transe.yaml")
    train(kinships, other, tmp_path / "kinships-model", seed=1, max_epochs=1, progress=False)
    (tmp_path / "model" / "model.pt").write_bytes((tmp_path / "kinships-model" / "model.pt").read_bytes())
    with pytest.raises(KgrankInputError, match=r"model.pt: does not fit .* size mismatch") as caught:
        load_model(tmp_path / "model", nations_dir)
    assert "\n" not in str(caught.value)


def test_budget_swaps_only_the_training_loop():
    published = load_hyperparameters(REPO / "config/hyperparameters/fb15k237/transe.yaml")["pipeline"]
    trained = apply_budget(published, "slcwa", 16)
    assert trained["training_loop"] == "slcwa" and trained["negative_sampler_kwargs"] == {
        "num_negs_per_pos": 16
    }
    unchanged = ("model", "model_kwargs", "loss", "optimizer", "optimizer_kwargs", "training_kwargs")
    assert all(trained[key] == published[key] for key in unchanged)
    assert published["training_loop"] == "lcwa"  # the published pipeline is not modified
    rotate = load_hyperparameters(REPO / "config/hyperparameters/fb15k237/rotate.yaml")["pipeline"]
    assert apply_budget(rotate, None, 16)["negative_sampler_kwargs"] == {"num_negs_per_pos": 16}
    assert "negative_sampler" not in apply_budget(rotate, "lcwa")
    with pytest.raises(KgrankInputError, match="num_negs_per_pos 4 given for the lcwa training loop"):
        apply_budget(published, "lcwa", 4)


def test_training_under_a_changed_loop_records_it(nations_dir, tmp_path):
    hyperparameters = load_hyperparameters(REPO / "config/hyperparameters/nations/transe.yaml")
    assert hyperparameters["pipeline"]["training_loop"] == "lcwa"
    train(
        nations_dir,
        hyperparameters,
        tmp_path,
        seed=1,
        max_epochs=1,
        training_loop="slcwa",
        num_negs_per_pos=3,
        loss="nssa",
        label_smoothing=0.0,
        sub_batch_size=16,
        progress=False,
    )
    resolved = json.loads((tmp_path / "config.json").read_text())
    assert (resolved["training_loop"], resolved["num_negs_per_pos"], resolved["sub_batch_size"]) == (
        "slcwa",
        3,
        16,
    )
    assert resolved["hyperparameters"]["pipeline"]["training_loop"] == "lcwa"
    assert (
        budget_columns(resolved).items()
        >= {
            "epochs": 1,
            "published_epochs": hyperparameters["pipeline"]["training_kwargs"]["num_epochs"],
            "training_loop": "slcwa",
            "published_training_loop": "lcwa",
            "loss": "nssa",
            "published_loss": hyperparameters["pipeline"]["loss"],
            "label_smoothing": 0.0,
        }.items()
    )


def test_budget_replaces_the_loss_with_its_own_defaults_and_the_label_smoothing():
    published = load_hyperparameters(REPO / "config/hyperparameters/fb15k237/tucker.yaml")["pipeline"]
    assert apply_budget(published) == published
    trained = apply_budget(published, loss="crossentropy")
    assert (published["loss"], trained["loss"]) == ("bceaftersigmoid", "crossentropy")
    assert trained["training_kwargs"] == published["training_kwargs"]
    # the published loss's parameters belong to it: a new loss starts from PyKEEN's defaults
    with_parameters = {**published, "loss": "softplus", "loss_kwargs": {"reduction": "sum"}}
    assert "loss_kwargs" not in apply_budget(with_parameters, loss="nssa")
    assert apply_budget(with_parameters, loss="softplus")["loss_kwargs"] == {"reduction": "sum"}
    smoothing = apply_budget(published, label_smoothing=0.0)["training_kwargs"]["label_smoothing"]
    assert smoothing == 0.0 < published["training_kwargs"]["label_smoothing"]


def test_a_loss_that_cannot_train_is_refused_before_the_data_are_read(tmp_path):
    refusal = r"loss 'nssa' takes no label smoothing \(the pipeline's is 0.1\); set label_smoothing: 0.0"
    with pytest.raises(KgrankInputError, match=refusal) as caught:
        make_loss({"loss": "nssa", "training_kwargs": {"label_smoothing": 0.1}})
    assert "\n" not in str(caught.value)
    for name, smoothing, made in (("nssa", 0.0, "NSSALoss"), ("crossentropy", 0.1, "CrossEntropyLoss")):
        loss = make_loss({"loss": name, "training_kwargs": {"label_smoothing": smoothing}})
        assert type(loss).__name__ == made
    with pytest.raises(KgrankInputError, match=r"loss 'nosuch': not a PyKEEN loss; use one of \[.*'nssa'"):
        make_loss({"loss": "nosuch", "training_kwargs": {}})
    # train refuses it before it reads the data (here: a folder that does not exist)
    smoothed = load_hyperparameters(REPO / "config/hyperparameters/fb15k237/tucker.yaml")
    with pytest.raises(KgrankInputError, match="loss 'nssa' takes no label smoothing"):
        train(tmp_path / "no-data", smoothed, tmp_path / "model", seed=1, loss="nssa", progress=False)
    assert not (tmp_path / "model").exists()


def test_budget_columns_of_a_resolved_config():
    """The columns that carry the budget into every metric table (kgrank.workflow.config.budget_columns)."""
    resolved = {
        "hyperparameters": {"pipeline": {"training_loop": "lcwa", "training_kwargs": {"num_epochs": 151}}},
        "epochs": 4,
        "published_epochs": 151,
        "training_loop": "slcwa",
        "seed": 1,
    }
    assert (
        budget_columns(resolved).items()
        >= {
            "epochs": 4,
            "published_epochs": 151,
            "training_loop": "slcwa",
            "published_training_loop": "lcwa",
        }.items()
    )
    # a config written before the loop was recorded trained with the published loop
    older = {key: value for key, value in resolved.items() if key != "training_loop"}
    assert budget_columns(older)["training_loop"] == "lcwa"


def test_training_takes_the_fast_step(nations_dir, tmp_path, monkeypatch):
    """The loop binds model.score_t when it is built: the fast step must be in place by then."""
    import kgrank.training.step as training_step

    calls = []
    original = training_step._scores_against_all

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(training_step, "_scores_against_all", counted)
    hyperparameters = load_hyperparameters(REPO / "config/hyperparameters/nations/transe.yaml")
    train(nations_dir, hyperparameters, tmp_path / "fast", seed=0, max_epochs=1, device="cpu", progress=False)
    assert calls, "the LCWA loop scored through PyKEEN's broadcast, not the 1-N step"
    calls.clear()
    train(
        nations_dir,
        hyperparameters,
        tmp_path / "pykeen",
        seed=0,
        max_epochs=1,
        device="cpu",
        progress=False,
        scoring="pykeen",
    )
    assert not calls


def test_training_flushes_subnormals_and_restores_the_setting():
    subnormal = torch.tensor([1e-39], dtype=torch.float32)
    assert float(subnormal * 1.0) > 0.0
    with flushed_denormals():
        assert float(subnormal * 1.0) == 0.0
    assert float(subnormal * 1.0) > 0.0


def test_optimisers_take_torchs_fused_or_for_each_form():
    from kgrank.training.train import fast_optimizer_kwargs

    cpu, other = torch.device("cpu"), torch.device("meta")
    assert fast_optimizer_kwargs(torch.optim.Adam, {"lr": 0.1}, cpu) == {"lr": 0.1, "fused": True}
    # no fused Adadelta; no fused kernel off the CPU and CUDA
    assert fast_optimizer_kwargs(torch.optim.Adadelta, None, cpu) == {"foreach": True}
    assert fast_optimizer_kwargs(torch.optim.Adam, None, other) == {"foreach": True}
    # the configuration's own choice stays
    assert fast_optimizer_kwargs(torch.optim.Adam, {"foreach": False}, cpu) == {"foreach": False}


@pytest.mark.parametrize("name", ["Adadelta", "Adagrad", "Adam"])
def test_the_for_each_form_steps_as_the_loop_to_the_bit(name):
    # what fast_optimizer_kwargs's docstring says of the for-each form: weights of
    # several shapes, gradients of several magnitudes with zero rows
    weights = {}
    for foreach in (False, True):
        torch.manual_seed(0)
        parameters = [torch.nn.Parameter(torch.randn(300, 16)), torch.nn.Parameter(torch.randn(7, 3, 5))]
        optimizer = getattr(torch.optim, name)(parameters, lr=0.05, foreach=foreach)
        generator = torch.Generator().manual_seed(1)
        for step in range(12):
            for parameter in parameters:
                parameter.grad = torch.randn(parameter.shape, generator=generator) * 10.0 ** (step % 5 - 2)
                parameter.grad[::3] = 0.0
            optimizer.step()
        weights[foreach] = [parameter.detach().clone() for parameter in parameters]
    assert all(torch.equal(a, b) for a, b in zip(weights[False], weights[True], strict=True))
