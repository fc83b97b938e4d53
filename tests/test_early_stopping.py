"""Early stopping on kgrank's rank engine: PyKEEN's rule, the best weights kept."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import REPO

from kgrank.errors import KgrankInputError
from kgrank.training.early_stopping import EarlyStopping, LearningCurve, validation_mrr


class _Loop:
    _should_stop = False


class _Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))


def _curve(rule, mrrs, monkeypatch):
    """A LearningCurve fed epochs whose validation MRRs are ``mrrs`` in turn; the model's
    single weight holds the epoch number, so the weights kept tell which epoch won."""
    import kgrank.training.early_stopping as module

    values = iter(mrrs)
    monkeypatch.setattr(module, "validation_mrr", lambda *args, **kwargs: next(values))
    curve = LearningCurve(factories=None, known=None, rule=rule)
    model, loop = _Model(), _Loop()
    loop.model = model
    curve._training_loop = loop
    epoch = 0
    while not loop._should_stop and epoch < 100:
        epoch += 1
        with torch.no_grad():
            model.weight.fill_(epoch)
        curve.post_epoch(epoch=epoch, epoch_loss=1.0 / epoch)
    return curve, model, epoch


def test_pykeen_rule_patience_and_relative_delta(monkeypatch):
    # evaluated at epochs 2, 4, 6, 8, 10: 0.30 is best; 0.3005 is not better by 0.2 %
    rule = EarlyStopping(frequency=2, patience=2, relative_delta=0.002)
    curve, model, last = _curve(rule, [0.1, 0.3, 0.3005, 0.29, 0.5], monkeypatch)
    assert last == 8 and curve.stopped_epoch == 8
    assert curve.best_epoch == 4 and curve.best_mrr == pytest.approx(0.3)
    curve.restore_best()
    assert float(model.weight.detach()) == 4.0
    rows = pd.DataFrame(curve.rows)
    assert list(rows["epoch"]) == list(range(1, 9))
    assert rows["valid_mrr"].notna().tolist() == [False, True] * 4
    assert (np.diff(rows["seconds"]) >= 0).all()


def test_no_rule_never_stops_or_validates_during_training(monkeypatch):
    import kgrank.training.early_stopping as module

    monkeypatch.setattr(module, "validation_mrr", lambda *args, **kwargs: pytest.fail("validated"))
    curve = LearningCurve(factories=None, known=None, rule=None)
    loop = _Loop()
    loop.model = _Model()
    curve._training_loop = loop
    for epoch in range(1, 4):
        curve.post_epoch(epoch=epoch, epoch_loss=1.0)
    assert not loop._should_stop and curve.best_epoch is None


@pytest.mark.parametrize("settings", [{"frequency": 0}, {"frequency": 1, "patience": -1}])
def test_bad_rule_is_refused(settings):
    with pytest.raises(KgrankInputError, match="early stopping"):
        EarlyStopping(**settings)


def test_validation_mrr_is_the_engine_mrr_of_the_valid_split(nations_dir, tmp_path):
    from kgrank.engine.candidates import known_answers
    from kgrank.engine.ranks import compute_ranks
    from kgrank.training.hyperparameters import load_hyperparameters
    from kgrank.training.train import load_model, train

    hyperparameters = load_hyperparameters(REPO / "config/hyperparameters/nations/complex.yaml")
    train(nations_dir, hyperparameters, tmp_path, seed=0, max_epochs=2, device="cpu", progress=False)
    model, factories = load_model(tmp_path, nations_dir)
    known = known_answers(factories)
    model.train()
    mrr = validation_mrr(model, factories, known)
    assert model.training  # handed back in the mode it came in
    table = compute_ranks(model, factories.validation.mapped_triples, known, progress=False)
    assert mrr == pytest.approx(float((1.0 / table["realistic"]).mean()))
    curve = pd.read_csv(tmp_path / "learning_curve.tsv", sep="\t")
    assert list(curve.columns) == ["epoch", "seconds", "loss", "valid_mrr"]
    # without a rule the last epoch is validated, and it is the model that was saved
    assert curve["valid_mrr"].iloc[-1] == pytest.approx(mrr, abs=1e-6)


def test_training_with_early_stopping_keeps_the_best_epoch(nations_dir, tmp_path):
    import json

    from kgrank.training.hyperparameters import load_hyperparameters
    from kgrank.training.train import train

    hyperparameters = load_hyperparameters(REPO / "config/hyperparameters/nations/transe.yaml")
    rule = EarlyStopping(frequency=1, patience=1, relative_delta=0.0)
    summary = train(
        nations_dir,
        hyperparameters,
        tmp_path,
        seed=0,
        max_epochs=30,
        early_stopping=rule,
        device="cpu",
        progress=False,
    )
    curve = pd.read_csv(tmp_path / "learning_curve.tsv", sep="\t")
    resolved = json.loads((tmp_path / "config.json").read_text())
    best = int(curve.loc[curve["valid_mrr"].idxmax(), "epoch"])
    assert resolved["epochs"] == summary["epochs"] == best
    assert summary["valid_mrr"] == pytest.approx(curve["valid_mrr"].max())
    assert resolved["early_stopping"] == {"frequency": 1, "patience": 1, "relative_delta": 0.0}
    if summary["stopped_early"]:
        assert summary["epochs_trained"] < 30 and best == summary["epochs_trained"] - 1
