"""Metrics per relation and per relation category (1-1, 1-N, N-1, N-N).

The category of a relation follows the usual rule (Bordes et al. 2013): with tph the
average number of tails per head and hpt the average number of heads per tail among
its training triples, a side is "many" when its average is at least 1.5.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from kgrank.data.datasets import load_mapped_dataset
from kgrank.evaluation.metrics import Metric, evaluate_rank_table

MANY_THRESHOLD = 1.5


def relation_categories(triples: np.ndarray, threshold: float = MANY_THRESHOLD) -> pd.DataFrame:
    """relation, tails_per_head, heads_per_tail, category for (n, 3) id triples."""
    frame = pd.DataFrame(np.asarray(triples)[:, :3], columns=["head", "relation", "tail"])
    grouped = frame.groupby("relation")
    table = pd.DataFrame(
        {
            "tails_per_head": grouped.size() / grouped["head"].nunique(),
            "heads_per_tail": grouped.size() / grouped["tail"].nunique(),
        }
    )
    many_tails = table["tails_per_head"] >= threshold
    many_heads = table["heads_per_tail"] >= threshold
    table["category"] = np.select(
        [~many_heads & ~many_tails, ~many_heads & many_tails, many_heads & ~many_tails],
        ["1-1", "1-N", "N-1"],
        "N-N",
    )
    return table.reset_index()


AGGREGATIONS = ("relation", "relation_category")


def evaluate_groups(
    ranks: pd.DataFrame,
    dataset_dir: str | Path,
    metrics: Sequence[Metric] | None = None,
    aggregations: Sequence[str] = AGGREGATIONS,
) -> pd.DataFrame:
    """The tidy metric table per relation and per relation category (``aggregations``),
    with each group's size.

    ``group`` is always text: the relation's label for a relation, the category's name
    for a category (one type per column, so the table reads back as it was written).
    """
    training = load_mapped_dataset(dataset_dir, ("train",))
    categories = relation_categories(training.mapped(("train",))[0])
    labelled = ranks.merge(categories[["relation", "category"]], on="relation", how="left")
    labelled["category"] = labelled["category"].fillna("unseen")
    labelled["relation"] = labelled["relation"].map(training.relation_id_to_label)
    frames = []
    for aggregation, column in (("relation", "relation"), ("relation_category", "category")):
        if aggregation not in aggregations:
            continue
        for group, subset in labelled.groupby(column, sort=True):
            table = evaluate_rank_table(subset, metrics)
            sizes = {**subset["side"].value_counts().to_dict(), "both": len(subset)}
            table["num_ranks"] = table["side"].map(sizes).fillna(0).astype(int)
            table.insert(0, "group", group)
            table.insert(0, "aggregation", aggregation)
            frames.append(table)
    return pd.concat(frames, ignore_index=True)
