"""The study's figures. Part 3: the adjusted index of the weighted geometric mean rank
under each non-uniform weighting against the unweighted one (AGMRI), one point per pair."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kgrank.errors import KgrankInputError
from kgrank.labels import dataset_label, model_label
from kgrank.plotting import PALETTE, add_caption, save_figure, set_style
from kgrank.studies.protocols.report import REPORTED_RANK_TYPE, REPORTED_SIDE, scheme_label

ADJUSTED_INDEX = "adjusted_weighted_geometric_mean_rank_index"
REFERENCE_SCHEME = "uniform"
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def adjusted_index_pairs(weighted: pd.DataFrame) -> pd.DataFrame:
    """Per pair and non-uniform scheme: the adjusted index with those weights (``weighted``)
    and with equal weights (``reference``, the AGMRI), realistic ranks, both sides."""
    shown = weighted[
        (weighted["side"] == REPORTED_SIDE)
        & (weighted["rank_type"] == REPORTED_RANK_TYPE)
        & (weighted["metric"] == ADJUSTED_INDEX)
    ]
    if REFERENCE_SCHEME not in set(shown["scheme"]):
        raise KgrankInputError(
            f"--weighted: no rows of scheme {REFERENCE_SCHEME!r} (the unweighted reference of the figure); "
            "add uniform to studies.protocols.weighted.schemes"
        )
    reference = shown[shown["scheme"] == REFERENCE_SCHEME][["dataset", "model", "value"]]
    others = shown[shown["scheme"] != REFERENCE_SCHEME][["dataset", "model", "scheme", "value"]]
    if others.empty:
        raise KgrankInputError(
            "--weighted: only the uniform scheme; add negatives or relation to "
            "studies.protocols.weighted.schemes"
        )
    return others.merge(reference, on=["dataset", "model"], suffixes=("", "_reference")).rename(
        columns={"value": "weighted", "value_reference": "reference"}
    )


def plot_weighted(weighted: pd.DataFrame, pdf: str | Path, png: str | Path, *, caption: str = "") -> None:
    """One panel per non-uniform scheme: AWGMRI against AGMRI per pair (colour: dataset,
    marker: model), with the diagonal where weighting changes nothing."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    points = adjusted_index_pairs(weighted)
    set_style()
    schemes = list(dict.fromkeys(points["scheme"]))
    datasets = list(dict.fromkeys(points["dataset"]))
    models = list(dict.fromkeys(points["model"]))
    colours = dict(zip(datasets, sns.color_palette(PALETTE, len(datasets)), strict=True))
    markers = {model: MARKERS[index % len(MARKERS)] for index, model in enumerate(models)}
    figure, axes = plt.subplots(1, len(schemes), figsize=(4.2 * len(schemes), 4.0), squeeze=False)
    low = min(points["weighted"].min(), points["reference"].min(), 0.0)
    high = max(points["weighted"].max(), points["reference"].max(), 1.0)
    margin = 0.03 * (high - low)
    limits = (low - margin, high + margin)
    for axis, scheme in zip(axes[0], schemes, strict=True):
        cell = points[points["scheme"] == scheme]
        axis.plot(limits, limits, color="grey", linewidth=0.8, linestyle="--", label="no change")
        for row in cell.itertuples():
            axis.scatter(
                row.reference,
                row.weighted,
                color=colours[row.dataset],
                marker=markers[row.model],
                s=40,
                edgecolor="black",
                linewidth=0.4,
            )
        axis.set_xlim(limits)
        axis.set_ylim(limits)
        axis.set_aspect("equal")
        axis.set_xlabel("AGMRI, equal weights (0 random, 1 perfect)")
        axis.set_ylabel("AWGMRI (0 random, 1 perfect)")
        axis.set_title(scheme_label(scheme), fontsize=9)
    handles = [
        plt.Line2D([], [], color=colours[dataset], marker="o", linestyle="", label=dataset_label(dataset))
        for dataset in datasets
    ] + [
        plt.Line2D(
            [],
            [],
            color="black",
            marker=markers[model],
            linestyle="",
            fillstyle="none",
            label=model_label(model),
        )
        for model in models
    ]
    handles.append(plt.Line2D([], [], color="grey", linestyle="--", label="no change (y = x)"))
    axes[0, -1].legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    figure.suptitle("Weighted geometric mean rank: adjusted index against the unweighted one")
    figure.tight_layout()
    add_caption(figure, caption)
    save_figure(figure, pdf, png)
