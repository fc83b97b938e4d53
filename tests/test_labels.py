"""kgrank.labels: the printed names of models and datasets."""

import yaml
from conftest import REPO

from kgrank.labels import DATASET_LABELS, MODEL_LABELS, dataset_label, model_label


def test_known_names():
    assert model_label("complex") == "ComplEx"
    assert model_label("tucker") == "TuckER"
    assert model_label("rotate") == "RotatE"
    assert dataset_label("fb15k237") == "FB15k-237"
    assert dataset_label("wn18rr") == "WN18RR"


def test_unknown_names_are_kept():
    assert model_label("mure") == "mure"
    assert dataset_label("codexsmall") == "codexsmall"


def test_every_configured_model_and_dataset_has_a_label():
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    shipped = sorted((REPO / "config/hyperparameters").glob("*/*.yaml"))
    assert set(config["models"]) | {path.stem for path in shipped} <= set(MODEL_LABELS)
    assert set(config["datasets"]) | {path.parent.name for path in shipped} <= set(DATASET_LABELS)


def test_labels_are_distinct():
    for labels in (MODEL_LABELS, DATASET_LABELS):
        assert len(set(labels.values())) == len(labels)
        assert all(key == key.lower() for key in labels)
