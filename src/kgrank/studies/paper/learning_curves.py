"""Validation MRR against training time for every trained pair: what each budget bought."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from kgrank.data.tables import LEARNING_CURVE, read_table
from kgrank.labels import dataset_label, model_label
from kgrank.plotting import add_caption, save_figure, set_style


def read_curves(paths: Sequence[str | Path]) -> pd.DataFrame:
    """Learning curves from models/<dataset>/<model>/learning_curve.tsv, with dataset and
    model taken from the path."""
    frames = [
        read_table(path, LEARNING_CURVE).assign(dataset=path.parent.parent.name, model=path.parent.name)
        for path in map(Path, paths)
    ]
    return pd.concat(frames, ignore_index=True)


def plot_learning_curves(
    curves: pd.DataFrame, pdf_path: str | Path, png_path: str | Path, caption: str = ""
) -> None:
    """One panel per dataset: validation MRR (filtered, realistic, both sides) at each
    validated epoch against the training seconds spent up to it (validation excluded),
    one line per model."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    set_style()
    validated = curves.dropna(subset=["valid_mrr"]).assign(
        dataset_label=lambda frame: frame["dataset"].map(dataset_label),
        model_label=lambda frame: frame["model"].map(model_label),
    )
    datasets = list(dict.fromkeys(validated["dataset_label"]))
    models = sorted(validated["model_label"].unique())
    figure, axes = plt.subplots(
        1, len(datasets), figsize=(3.4 * len(datasets), 3.4), constrained_layout=True, squeeze=False
    )
    for axis, name in zip(axes[0], datasets, strict=True):
        subset = validated[validated["dataset_label"] == name]
        sns.lineplot(
            data=subset,
            x="seconds",
            y="valid_mrr",
            hue="model_label",
            hue_order=models,
            marker="o",
            ax=axis,
            legend=axis is axes[0][-1],
        )
        axis.set_title(name)
        axis.set_xlabel("training time (s)")
        axis.set_ylabel("validation MRR (filtered, realistic)" if axis is axes[0][0] else "")
        axis.set_ylim(0, max(0.05, float(np.nanmax(subset["valid_mrr"])) * 1.1))
    if axes[0][-1].get_legend() is not None:
        sns.move_legend(axes[0][-1], "upper left", bbox_to_anchor=(1.02, 1), title="model", frameon=False)
    add_caption(figure, caption)
    save_figure(figure, pdf_path, png_path)
