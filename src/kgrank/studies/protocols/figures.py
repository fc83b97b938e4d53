"""The study's figures. Part 3: the adjusted index of the weighted geometric mean rank
under each non-uniform weighting against the unweighted one (AGMRI), one point per pair."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from kgrank.errors import KgrankInputError
from kgrank.labels import dataset_label, model_label
from kgrank.plotting import PALETTE, add_caption, log_scale, save_figure, set_style
from kgrank.studies.protocols.report import REPORTED_RANK_TYPE, REPORTED_SIDE, scheme_label
from kgrank.studies.protocols.settings import SCORERS

if TYPE_CHECKING:
    import numpy as np

ADJUSTED_INDEX = "adjusted_weighted_geometric_mean_rank_index"
REFERENCE_SCHEME = "uniform"
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def _model_handles(markers: dict[str, str]) -> list:
    """The legend entries of the models: each one's marker, unfilled."""
    import matplotlib.pyplot as plt

    return [
        plt.Line2D(
            [], [], color="black", marker=marker, linestyle="", fillstyle="none", label=model_label(model)
        )
        for model, marker in markers.items()
    ]


def _finish(
    axes: np.ndarray, handles: list, title: str, caption: str, pdf: str | Path, png: str | Path
) -> None:
    """The legend right of the first row's last panel, the title and the caption; then the
    figure is saved."""
    figure = axes[0, -1].figure
    axes[0, -1].legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    figure.suptitle(title)
    figure.tight_layout()
    add_caption(figure, caption)
    save_figure(figure, pdf, png)


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
    ] + _model_handles(markers)
    handles.append(plt.Line2D([], [], color="grey", linestyle="--", label="no change (y = x)"))
    title = "Weighted geometric mean rank: adjusted index against the unweighted one"
    _finish(axes, handles, title, caption, pdf, png)


# --- part 1: sampled negatives --------------------------------------------------------------

SAMPLED_FIGURE_METRIC = "inverse_harmonic_mean_rank"


def sampled_bias_lines(estimates: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, k and estimator: the MRR estimate's bias and standard deviation over the
    independent draws, mean over the dataset's systems (rows with moments only)."""
    from kgrank.defaults import SAMPLED_ESTIMATORS

    shown = estimates[
        (estimates["variant"] == "independent")
        & (estimates["metric"] == SAMPLED_FIGURE_METRIC)
        & estimates["estimator"].isin(SAMPLED_ESTIMATORS)
        & (estimates["method"] != "skipped")
    ]
    if shown.empty:
        raise KgrankInputError(
            "--estimates: no MRR estimate with moments (every k skipped?); pass sample sizes below the "
            "datasets' candidate counts in studies.protocols.sampled.num_samples"
        )
    return (
        shown.groupby(["dataset", "estimator", "num_samples"], sort=False)[["bias", "standard_deviation"]]
        .mean()
        .reset_index()
    )


def plot_sampled(estimates: pd.DataFrame, pdf: str | Path, png: str | Path, *, caption: str = "") -> None:
    """One panel per dataset: the bias of each estimator of the full MRR against k (log
    scale), a band of one standard deviation around it, and the fixed-set naive value."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from kgrank.defaults import SAMPLED_ESTIMATORS
    from kgrank.studies.protocols.report import estimator_label

    lines = sampled_bias_lines(estimates)
    set_style()
    datasets = list(dict.fromkeys(lines["dataset"]))
    colours = dict(zip(SAMPLED_ESTIMATORS, sns.color_palette(PALETTE, len(SAMPLED_ESTIMATORS)), strict=True))
    figure, axes = plt.subplots(1, len(datasets), figsize=(4.2 * len(datasets), 3.8), squeeze=False)
    fixed = estimates[
        (estimates["variant"] == "fixed-set")
        & (estimates["metric"] == SAMPLED_FIGURE_METRIC)
        & (estimates["estimator"] == "naive")
    ]
    for axis, dataset in zip(axes[0], datasets, strict=True):
        cell = lines[lines["dataset"] == dataset]
        axis.axhline(0.0, color="grey", linewidth=0.8, linestyle="--")
        for index, estimator in enumerate(SAMPLED_ESTIMATORS):
            line = cell[cell["estimator"] == estimator].sort_values("num_samples")
            if line.empty:
                continue
            axis.plot(
                line["num_samples"],
                line["bias"],
                color=colours[estimator],
                marker=MARKERS[index],
                label=estimator_label(estimator),
            )
            axis.fill_between(
                line["num_samples"],
                line["bias"] - line["standard_deviation"],
                line["bias"] + line["standard_deviation"],
                color=colours[estimator],
                alpha=0.2,
                linewidth=0,
            )
        shared = fixed[fixed["dataset"] == dataset]
        if len(shared):
            points = shared.groupby("num_samples")["bias"].mean()
            axis.scatter(
                points.index,
                points.to_numpy(),
                color=colours["naive"],
                marker="*",
                s=120,
                edgecolor="black",
                linewidth=0.5,
                zorder=5,
                label="naive, fixed set per query (one draw)",
            )
        log_scale(axis, "x")
        axis.set_xlabel("k, sampled negatives per task (log scale)")
        if axis is axes[0, 0]:
            # on two lines: in one it ran past the panel's height into the x labels
            axis.set_ylabel("bias of the MRR estimate\n(estimate − full MRR)")
        axis.set_title(dataset_label(dataset), fontsize=9)
    handles = {}  # each label once, from the first panel that has it
    for axis in axes[0]:
        for handle, label in zip(*axis.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    title = "Sampled negatives: bias of estimators of the full MRR (band: ± 1 SD over draws)"
    _finish(axes, list(handles.values()), title, caption, pdf, png)


# --- part 2: ties -----------------------------------------------------------------------------


def ties_points(ties: pd.DataFrame, measure: str = "nDCG@20") -> pd.DataFrame:
    """Per (dataset, model, scorer): trec_eval's value under the given names, its min and
    max over the renamings, and the tie-neutral value of ``measure``."""
    shown = ties[(ties["measure"] == measure) & (ties["tolerance"] == "exact")]
    if shown.empty:
        raise KgrankInputError(
            f"--ties: no {measure} rows; list {measure} in studies.protocols.ties.measures"
        )
    return shown.pivot_table(
        index=["dataset", "model", "scorer"], columns="statistic", values="value", sort=False
    ).reset_index()


def plot_ties(ties: pd.DataFrame, pdf: str | Path, png: str | Path, *, caption: str = "") -> None:
    """One panel per dataset: trec_eval's nDCG@20 (its range over renamings as a bar, the
    value under the real names as the point) against the tie-neutral value, per pair and
    scorer (colour: scorer, marker: model), with the diagonal where ties change nothing."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from kgrank.studies.protocols.report import TIES_MEASURE, scorer_label

    points = ties_points(ties, TIES_MEASURE)
    set_style()
    datasets = list(dict.fromkeys(points["dataset"]))
    models = list(dict.fromkeys(points["model"]))
    colours = dict(zip(SCORERS, sns.color_palette(PALETTE, len(SCORERS)), strict=True))
    markers = {model: MARKERS[index % len(MARKERS)] for index, model in enumerate(models)}
    # model and quantised scores often sit on one spot: the earlier scorer is drawn larger
    sizes = {scorer: 110 - 35 * index for index, scorer in enumerate(SCORERS)}
    figure, axes = plt.subplots(1, len(datasets), figsize=(4.6 * len(datasets) + 1.5, 4.6), squeeze=False)
    for axis, dataset in zip(axes[0], datasets, strict=True):
        cell = points[points["dataset"] == dataset]
        high = max(float(cell[["maximum", "tie_neutral"]].max().max()), 1e-3) * 1.08
        axis.plot((0, high), (0, high), color="grey", linewidth=0.8, linestyle="--")
        for row in cell.itertuples():
            axis.vlines(row.tie_neutral, row.minimum, row.maximum, color=colours[row.scorer], linewidth=2)
            axis.scatter(
                row.tie_neutral, row.trec_eval, color=colours[row.scorer], marker=markers[row.model],
                s=sizes.get(row.scorer, 40), edgecolor="black", linewidth=0.4, zorder=3,
            )  # fmt: skip
        axis.set_xlim(0, high)
        axis.set_ylim(0, high)
        axis.set_aspect("equal")
        axis.set_xlabel(f"tie-neutral {TIES_MEASURE}", fontsize=9)
        axis.set_ylabel(f"trec_eval {TIES_MEASURE} (bar: renamings)", fontsize=9)
        axis.set_title(dataset_label(dataset), fontsize=9)
    handles = [
        plt.Line2D([], [], color=colours[scorer], linewidth=2, label=scorer_label(scorer))
        for scorer in SCORERS
        if scorer in set(points["scorer"])
    ] + _model_handles(markers)
    handles.append(plt.Line2D([], [], color="grey", linestyle="--", label="no tie effect (y = x)"))
    title = f"Ties: trec_eval's {TIES_MEASURE} under renamed entities against the tie-neutral value"
    _finish(axes, handles, title, caption, pdf, png)
