"""How datasets and models are named in figures and tables: one place for every study."""

from __future__ import annotations

MODEL_LABELS = {
    "complex": "ComplEx",
    "distmult": "DistMult",
    "rescal": "RESCAL",
    "conve": "ConvE",
    "rotate": "RotatE",
    "transe": "TransE",
    "tucker": "TuckER",
}
DATASET_LABELS = {
    "nations": "Nations",
    "kinships": "Kinships",
    "fb15k237": "FB15k-237",
    "wn18rr": "WN18RR",
}


def model_label(name: str) -> str:
    """The printed name of a model (PyKEEN's capitalisation); unknown names as they are."""
    return MODEL_LABELS.get(name, name)


def dataset_label(name: str) -> str:
    """The printed name of a dataset; unknown names as they are."""
    return DATASET_LABELS.get(name, name)
