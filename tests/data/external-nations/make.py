"""Writes the three systems from outside that the tiny CI config (.test/config.yaml)
evaluates on Nations, all from one model trained here by PyKEEN's own pipeline:

- pykeen-distmult/: the folder `pipeline(...).save_to_directory` writes;
- ranks.csv: that model's filtered ranks as another framework would export them
  (labels, side, optimistic and pessimistic ranks, no num_candidates);
- scores.npy + queries.tsv: its scores of every entity for every test query, and the
  query index (head, relation, tail, side; one row per matrix row).

Run from the repository root with the workflow's pinned torch and pykeen:
    .venv/bin/python tests/data/external-nations/make.py
The pickle in pykeen-distmult/ needs the same torch and pykeen to load.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from pykeen.pipeline import pipeline

from kgrank.data.datasets import prepare_dataset
from kgrank.systems import rank_pykeen_folder

HERE = Path(__file__).parent


def main() -> None:
    result = pipeline(
        dataset="nations",
        model="DistMult",
        model_kwargs={"embedding_dim": 32},
        training_kwargs={"num_epochs": 20},
        random_seed=0,
    )
    result.save_to_directory(HERE / "pykeen-distmult")
    with tempfile.TemporaryDirectory() as scratch:
        dataset_dir = Path(scratch) / "nations"
        prepare_dataset("nations", {"source": "pykeen"}, dataset_dir)
        ranks = rank_pykeen_folder(HERE / "pykeen-distmult", dataset_dir, seed=0)
        entity_labels = {index: label for label, index in result.training.entity_to_id.items()}
        relation_labels = {index: label for label, index in result.training.relation_to_id.items()}
    labelled = pd.DataFrame(
        {
            "head": ranks["head"].map(entity_labels),
            "relation": ranks["relation"].map(relation_labels),
            "tail": ranks["tail"].map(entity_labels),
            "side": ranks["side"],
            "optimistic": ranks["optimistic"],
            "pessimistic": ranks["pessimistic"],
        }
    )
    labelled.to_csv(HERE / "ranks.csv", index=False)
    queries = labelled[["head", "relation", "tail", "side"]]
    queries.to_csv(HERE / "queries.tsv", sep="\t", index=False)
    model = result.model.eval()
    with torch.no_grad():
        rows = []
        for head, relation, tail, side in ranks[["head", "relation", "tail", "side"]].itertuples(index=False):
            if side == "tail":
                batch = torch.tensor([[head, relation]])
                rows.append(model.predict_t(batch)[0])
            else:
                batch = torch.tensor([[relation, tail]])
                rows.append(model.predict_h(batch)[0])
    np.save(HERE / "scores.npy", torch.stack(rows).numpy().astype(np.float32))


if __name__ == "__main__":
    main()
