"""The ambiguity study's figures: metrics under each rank definition, the drift of the
metrics with the candidate-set size, and the pairwise model comparisons."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from kgrank.data.rank_table import RANK_COLUMNS
from kgrank.errors import KgrankInputError
from kgrank.evaluation.metrics import lookup
from kgrank.labels import dataset_label, model_label
from kgrank.studies.ambiguity.drift import drift_metric_keys
from kgrank.studies.ambiguity.variants import CONSTANT_SCORER, RANDOM_SCORER

if TYPE_CHECKING:
    import matplotlib.pyplot as plt

SCORER_LABELS = {CONSTANT_SCORER: "constant scorer", RANDOM_SCORER: "random scorer"}
PROTOCOL_LABELS = {
    "sampled": "sampled candidates (true + k − 1 non-answers)",
    "subsets": "test subsets, candidates = their entities",
}


def metric_label(key: str) -> str:
    """The printed name of a metric key: the registry's short name (MRR, AMRI, z-MRR ...),
    else the key."""
    try:
        return lookup(key).short_name
    except KgrankInputError:
        return key


def scorer_label(name: str) -> str:
    return SCORER_LABELS.get(name, model_label(name))


def _finish(
    figure: plt.Figure, title: str, caption: str, pdf: str | Path, png: str | Path, rect: tuple | None = None
) -> None:
    from kgrank.plotting import add_caption, save_figure

    figure.suptitle(title)
    figure.tight_layout(rect=rect)
    add_caption(figure, caption)
    save_figure(figure, pdf, png)


def plot_variants(
    metrics: pd.DataFrame, pdf: str | Path, png: str | Path, *, shown: tuple[str, ...], caption: str = ""
) -> None:
    """Rows: metrics; columns: datasets; x: the scorers; one marker per rank definition."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from kgrank.plotting import PALETTE, log_scale, set_style

    set_style()
    frame = metrics[(metrics["side"] == "both") & metrics["metric"].isin(shown)]
    datasets = list(dict.fromkeys(frame["dataset"]))
    figure, axes = plt.subplots(
        len(shown), len(datasets), figsize=(3.6 * len(datasets), 2.6 * len(shown)), squeeze=False
    )
    colours = dict(zip(RANK_COLUMNS, sns.color_palette(PALETTE, len(RANK_COLUMNS)), strict=True))
    markers = dict(zip(RANK_COLUMNS, ("^", "o", "v", "x"), strict=True))
    offsets = np.linspace(-0.27, 0.27, len(RANK_COLUMNS))  # each definition's markers beside its scorer
    for column, dataset in enumerate(datasets):
        cell = frame[frame["dataset"] == dataset]
        scorers = list(dict.fromkeys(cell["scorer"]))
        for row, metric in enumerate(shown):
            axis = axes[row, column]
            for offset, rank_type in zip(offsets, RANK_COLUMNS, strict=True):
                points = cell[(cell["metric"] == metric) & (cell["rank_type"] == rank_type)]
                axis.scatter(
                    np.arange(len(scorers)) + offset,
                    points.set_index("scorer").loc[scorers, "value"],
                    color=colours[rank_type],
                    marker=markers[rank_type],
                    s=22,
                    label=rank_type,
                )
            if metric.startswith("adjusted_"):
                # an adjusted index: 0 is random, 1 the optimum
                axis.axhline(0.0, color="grey", linewidth=0.8)
                axis.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
            axis.set_xticks(
                range(len(scorers)), [scorer_label(name) for name in scorers], rotation=35, fontsize=7
            )
            log = metric == "arithmetic_mean_rank"
            axis.set_ylabel(metric_label(metric) + (" (log scale)" if log else ""))
            if log:
                log_scale(axis, "y")
            if row == 0:
                axis.set_title(dataset_label(dataset))
    axes[0, 0].legend(title="rank definition", fontsize=7, title_fontsize=7)
    _finish(
        figure, "Rank definitions: optimistic, realistic, pessimistic, non-deterministic", caption, pdf, png
    )


def plot_drift(drift: pd.DataFrame, pdf: str | Path, png: str | Path, caption: str = "") -> None:
    """Rows: protocol; columns: MR, Hits@10, MRR, AMRI, AH@10, AMRR and their z-scores;
    one line per (dataset, model), a band from the lowest to the highest seed: a colour per
    model (the same in every figure), a marker per dataset."""
    import matplotlib.pyplot as plt

    from kgrank.plotting import log_scale, set_style, system_styles

    set_style()
    keys = [key for key in drift_metric_keys() if key in set(drift["metric"])]
    protocols = [name for name in PROTOCOL_LABELS if name in set(drift["protocol"])]
    figure, axes = plt.subplots(
        len(protocols), len(keys), figsize=(2.6 * len(keys), 2.8 * len(protocols) + 0.6), squeeze=False
    )
    datasets = list(dict.fromkeys(drift["dataset"]))
    models = list(dict.fromkeys(drift["model"]))
    styles = system_styles(models)
    markers = dict(zip(datasets, ("o", "s", "^", "D", "v", "P", "X", "*"), strict=False))
    for row, protocol in enumerate(protocols):
        for column, key in enumerate(keys):
            axis = axes[row, column]
            cell = drift[(drift["protocol"] == protocol) & (drift["metric"] == key)]
            for (dataset, model), curve in cell.groupby(["dataset", "model"], sort=False):
                summary = curve.groupby("size", sort=False).agg(
                    x=("mean_candidates", "mean"),
                    low=("value", "min"),
                    high=("value", "max"),
                    mean=("value", "mean"),
                )
                summary = summary.sort_values("x")
                colour, linestyle = styles[model]
                axis.plot(
                    summary["x"],
                    summary["mean"],
                    color=colour,
                    linestyle=linestyle,
                    marker=markers.get(dataset, "o"),
                    markersize=3,
                    linewidth=1,
                    label=f"{dataset_label(dataset)} {model_label(model)}",
                )
                axis.fill_between(
                    summary["x"], summary["low"], summary["high"], color=colour, alpha=0.2, linewidth=0
                )
            log_scale(axis, "x")
            if key == "arithmetic_mean_rank":
                log_scale(axis, "y")
            axis.set_title(metric_label(key), fontsize=9)
            axis.set_xlabel("mean candidates per task (log)", fontsize=7)
            if column == 0:
                axis.set_ylabel(PROTOCOL_LABELS[protocol], fontsize=7)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    figure.legend(
        handles, labels, loc="lower center", ncol=min(8, len(labels)), fontsize=7, bbox_to_anchor=(0.5, 0.0)
    )
    title = "Candidate-set size: raw metrics drift, adjusted ones should not (band: lowest to highest seed)"
    _finish(figure, title, caption, pdf, png, rect=(0, 0.06, 1, 1))


def plot_pairwise(
    pairwise: pd.DataFrame,
    random_like: dict[tuple[str, str], str],
    pdf: str | Path,
    png: str | Path,
    caption: str = "",
) -> None:
    """One matrix per dataset: MRR(row) - MRR(column), '*' where both Holm-corrected
    tests reject equality ('W' or 't' where only one does); models not distinguishable
    from random marked '†', worse than random '‡'."""
    import matplotlib.pyplot as plt

    from kgrank.plotting import add_caption, save_figure, set_style

    set_style()
    datasets = list(dict.fromkeys(pairwise["dataset"]))
    if not datasets:
        # one model per dataset: say so rather than draw an empty matrix
        figure, axis = plt.subplots(figsize=(5.0, 2.0))
        axis.axis("off")
        axis.text(0.5, 0.5, "No dataset has two models: nothing to compare.", ha="center", va="center")
        add_caption(figure, caption)
        save_figure(figure, pdf, png)
        return
    figure, axes = plt.subplots(1, len(datasets), figsize=(5.0 * len(datasets), 4.2), squeeze=False)
    figure.subplots_adjust(wspace=0.55)
    limit = float(np.nanmax(np.abs(pairwise["difference"]))) or 1.0
    image = None
    for axis, dataset in zip(axes.flat, datasets, strict=True):
        cell = pairwise[pairwise["dataset"] == dataset]
        models = list(dict.fromkeys([*cell["first"], *cell["second"]]))
        index = {model: position for position, model in enumerate(models)}
        matrix = np.full((len(models), len(models)), np.nan)
        marks = np.full(matrix.shape, "", dtype=object)
        for row in cell.itertuples(index=False):
            i, j = index[row.first], index[row.second]
            matrix[i, j], matrix[j, i] = row.difference, -row.difference
            # * both tests reject equality after Holm; W or t: only that one does
            star = {(True, True): "*", (True, False): " W", (False, True): " t"}.get(
                (bool(row.wilcoxon_significant), bool(row.t_significant)), ""
            )
            marks[i, j] = f"{row.difference:+.3f}{star}"
            marks[j, i] = f"{-row.difference:+.3f}{star}"
        image = axis.imshow(matrix, cmap="RdBu", vmin=-limit, vmax=limit)
        for i, j in zip(*np.nonzero(marks != ""), strict=True):  # row by row, as the matrix reads
            colour = "white" if abs(matrix[i, j]) > 0.6 * limit else "black"
            axis.text(j, i, marks[i, j], ha="center", va="center", fontsize=7, color=colour)
        names = [
            model_label(model)
            + (f" {random_like[(dataset, model)]}" if random_like.get((dataset, model)) else "")
            for model in models
        ]
        axis.set_xticks(range(len(models)), names, rotation=35, fontsize=8)
        axis.set_yticks(range(len(models)), names, fontsize=8)
        axis.set_title(dataset_label(dataset))
        axis.grid(False)
    if image is not None:
        bar = figure.colorbar(image, ax=list(axes.flat), shrink=0.8)
        bar.set_label("MRR(row) − MRR(column)")
    figure.suptitle(
        "Pairwise MRR differences (Holm-corrected at α: * Wilcoxon and paired t, W or t only one of them; "
        "† z-MRR says random)"
    )
    add_caption(figure, caption)
    save_figure(figure, pdf, png)
