"""Figure 1 of the unified-framework paper (Hoyt, Berrendorf et al. 2022).

It shows, per dataset and model, the MRR next to its adjusted index and its
z-score. The raw MRR shrinks as datasets grow while the adjusted values stay
comparable; that contrast is the point of the figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kgrank.labels import dataset_label, model_label
from kgrank.plotting import add_caption, save_figure, set_style
from kgrank.studies.paper.settings import FIGURE1_ORDERS


def order_datasets(stats: pd.DataFrame, by: str = "triples") -> pd.DataFrame:
    """The datasets of ``stats`` (a :func:`kgrank.data.io.read_stats` table) in increasing number
    of ``by``: ``triples`` (train + valid + test, the paper's Figure 1) or ``entities``."""
    if by not in FIGURE1_ORDERS:
        raise ValueError(f"order {by!r}: use one of {', '.join(FIGURE1_ORDERS)}")
    size = stats[["train", "valid", "test"]].sum(axis=1) if by == "triples" else stats["entities"]
    return stats.iloc[size.argsort(kind="stable")].reset_index(drop=True)


FIGURE1_PANELS = (
    ("inverse_harmonic_mean_rank", "MRR", "MRR"),
    ("adjusted_inverse_harmonic_mean_rank", "adjusted MRR (AMRR)", "adjusted index"),
    ("z_inverse_harmonic_mean_rank", "z-MRR (ZMRR)", "z-score (standard deviations, symlog scale)"),
)


def figure1_data(metrics: pd.DataFrame, stats: pd.DataFrame) -> pd.DataFrame:
    """The values Figure 1 plots: realistic ranks, both sides, ordered by dataset size."""
    keys = [key for key, _, _ in FIGURE1_PANELS]
    selected = metrics[
        (metrics["side"] == "both") & (metrics["rank_type"] == "realistic") & metrics["metric"].isin(keys)
    ]
    order = {name: position for position, name in enumerate(stats["dataset"])}
    return selected.sort_values(
        ["dataset", "model"], key=lambda column: column.map(order) if column.name == "dataset" else column
    ).reset_index(drop=True)


def draw_figure1_row(
    axes: Sequence, metrics: pd.DataFrame, stats: pd.DataFrame, row_title: str = "", order: str = "triples"
) -> None:
    """The three panels of Figure 1 on ``axes`` (MRR, adjusted MRR, z-MRR per dataset and
    model), datasets in increasing number of ``order`` (:func:`order_datasets`)."""
    import seaborn as sns

    stats = order_datasets(stats, order)
    data = figure1_data(metrics, stats)
    data = data.assign(
        dataset_label=data["dataset"].map(dataset_label),
        model_label=data["model"].map(model_label),
    )
    dataset_order = [dataset_label(name) for name in stats["dataset"] if name in set(data["dataset"])]
    model_order = sorted(data["model_label"].unique())
    for axis, (key, title, y_label) in zip(axes, FIGURE1_PANELS, strict=True):
        sns.barplot(
            data=data[data["metric"] == key],
            x="dataset_label",
            y="value",
            hue="model_label",
            order=dataset_order,
            hue_order=model_order,
            ax=axis,
            errorbar=None,
        )
        _interval_bars(axis, data[data["metric"] == key], dataset_order, model_order)
        axis.set_title(f"{row_title}: {title}" if row_title else title)
        axis.set_xlabel(f"dataset (ordered by number of {order})")
        axis.set_ylabel(y_label)
        axis.axhline(0.0, color="black", linewidth=0.8)
        if key.startswith("z_"):
            # z grows with the number of test ranks (about 5 on Nations, thousands on
            # WN18RR): a linear axis hides the small datasets; symlog keeps the sign.
            axis.set_yscale("symlog", linthresh=1.0)
        if axis is not axes[-1]:
            axis.get_legend().remove()
    axes[-1].legend(title="model", loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)


def _interval_bars(axis: Any, rows: pd.DataFrame, dataset_order: list[str], model_order: list[str]) -> None:
    """Each bar's sampling interval (the metric table's ci_low and ci_high: how far the
    value would move over test sets like this one) as an error bar on it. seaborn draws
    one bar container per model (hue order), its bars in dataset order."""
    if not {"ci_low", "ci_high"} <= set(rows.columns):
        return
    by_cell = rows.set_index(["dataset_label", "model_label"])
    for model, container in zip(model_order, axis.containers, strict=False):
        for dataset, bar in zip(dataset_order, container, strict=False):
            if (dataset, model) not in by_cell.index:
                continue
            row = by_cell.loc[(dataset, model)]
            low, high, value = float(row["ci_low"]), float(row["ci_high"]), float(row["value"])
            if not (np.isfinite(low) and np.isfinite(high)):
                continue
            axis.errorbar(
                bar.get_x() + bar.get_width() / 2,
                value,
                yerr=[[max(value - low, 0.0)], [max(high - value, 0.0)]],
                fmt="none",
                ecolor="black",
                elinewidth=0.7,
                capsize=1.5,
            )


def plot_figure1(
    metrics: pd.DataFrame,
    stats: pd.DataFrame,
    pdf_path: str | Path,
    png_path: str | Path,
    caption: str = "",
    order: str = "triples",
) -> pd.DataFrame:
    import matplotlib.pyplot as plt

    set_style()
    figure, axes = plt.subplots(1, len(FIGURE1_PANELS), figsize=(12, 3.6), constrained_layout=True)
    draw_figure1_row(axes, metrics, stats, order=order)
    add_caption(figure, caption)
    save_figure(figure, pdf_path, png_path)
    return figure1_data(metrics, order_datasets(stats, order))
