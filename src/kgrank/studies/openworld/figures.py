"""The open-world study's figures: the simulated MRR against its closed form, the
probability of an inverted comparison, which metrics saturate, and the family-tree
checkpoints evaluated on sparse against full answers."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from kgrank.labels import model_label
from kgrank.plotting import add_caption, save_figure, set_style
from kgrank.studies.openworld.simulation import MRR_KEY

if TYPE_CHECKING:
    import matplotlib.pyplot as plt

STRENGTH_LABEL = "model strength s (share of true answers learned)"


def _finish(figure: plt.Figure, title: str, caption: str, pdf: str | Path, png: str | Path) -> None:
    figure.suptitle(title)
    figure.tight_layout()
    add_caption(figure, caption)
    save_figure(figure, pdf, png)


def draw_simulation(axes: np.ndarray, grid: pd.DataFrame) -> None:
    """Per density: simulated mean MRR +- 2 standard errors per correlation, and the closed
    form (rho = 0) or its correlated form (rho != 0), dashed."""
    import seaborn as sns

    mrr = grid[(grid["metric"] == MRR_KEY)]
    correlations = sorted(mrr["correlation"].unique())
    colours = dict(zip(correlations, sns.color_palette("colorblind", len(correlations)), strict=True))
    for axis, (density, cell) in zip(axes.flat, mrr.groupby("density", sort=False), strict=False):
        for correlation, curve in cell.groupby("correlation"):
            curve = curve.sort_values("strength")
            colour = colours[correlation]
            axis.plot(curve["strength"], curve["mean"], color=colour, label=f"simulated, ρ = {correlation:g}")
            axis.fill_between(
                curve["strength"],
                curve["mean"] - 2 * curve["standard_error"],
                curve["mean"] + 2 * curve["standard_error"],
                color=colour,
                alpha=0.2,
                linewidth=0,
            )
            axis.plot(
                curve["strength"],
                curve["approximation_used"],
                color=colour,
                linestyle="--",
                label=f"closed form{'' if correlation == 0 else ' (correlated)'}, ρ = {correlation:g}",
            )
        axis.set_title(f"density α = {density:g} (share of true answers in the test set)", fontsize=9)
        axis.set_xlabel(STRENGTH_LABEL)
        axis.set_ylabel("MRR (mean over queries)")
    axes.flat[0].legend(fontsize=7, ncol=2)


def plot_simulation(grid: pd.DataFrame, pdf: str | Path, png: str | Path, caption: str = "") -> None:
    import matplotlib.pyplot as plt

    set_style()
    densities = grid["density"].nunique()
    columns = min(densities, 2)
    figure, axes = plt.subplots(
        (densities + columns - 1) // columns,
        columns,
        figsize=(6 * columns, 4.2 * ((densities + 1) // 2)),
        squeeze=False,
        sharey=True,
    )
    draw_simulation(axes, grid)
    _finish(
        figure,
        "Open world: simulated MRR saturates with model strength (Yang, Lin & Zhang 2022)",
        caption,
        pdf,
        png,
    )


def plot_inconsistency(
    inversions: pd.DataFrame, needed: pd.DataFrame, pdf: str | Path, png: str | Path, caption: str = ""
) -> None:
    """Left: P(stronger model reports the lower MRR) against the number of test queries,
    simulated (solid) and normal approximation (dotted), at the middle density. Right: the
    queries needed for 95 % consistency against the gap s1 - s2."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    set_style()
    mrr = inversions[inversions["metric"] == MRR_KEY]
    densities = sorted(mrr["density"].unique())
    density = densities[len(densities) // 2]
    weakest = sorted(mrr["strength_weaker"].unique())
    shown = mrr[(mrr["density"] == density) & (mrr["strength_weaker"] == weakest[len(weakest) // 2])]
    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    gaps = sorted(shown["gap"].unique())
    colours = dict(zip(gaps, sns.color_palette("colorblind", len(gaps)), strict=True))
    for gap, curve in shown.groupby("gap"):
        left.plot(
            curve["queries"],
            curve["inversion_probability"],
            marker="o",
            color=colours[gap],
            label=f"s1 − s2 = {gap:g}",
        )
        left.plot(curve["queries"], curve["normal_approximation"], linestyle=":", color=colours[gap])
    left.axhline(0.05, color="grey", linewidth=0.8)
    left.set_xscale("log")
    left.set_xlabel("number of test queries")
    left.set_ylabel("P(stronger model has lower MRR)")
    left.set_title(
        f"α = {density:g}, s2 = {shown['strength_weaker'].iloc[0]:g} "
        "(solid: simulated; dotted: normal approx.)",
        fontsize=9,
    )
    left.legend(fontsize=8)
    frame = needed[(needed["metric"] == MRR_KEY) & (needed["density"] == density)]
    markers = dict(zip(weakest, "osD^v", strict=False))
    for weaker, curve in frame.groupby("strength_weaker"):
        # the interval from the mean difference's standard error (capped where it is open)
        estimate = curve["queries_normal"].to_numpy()
        low = curve["queries_normal_low"].to_numpy()
        high = np.minimum(curve["queries_normal_high"].to_numpy(), 1e7)
        right.errorbar(
            curve["gap"],
            estimate,
            yerr=[np.clip(estimate - low, 0, None), np.clip(high - estimate, 0, None)],
            marker=markers.get(weaker, "o"),
            capsize=3,
            label=f"s2 = {weaker:g}, normal approx. (± 2 s.e. of the mean difference)",
        )
        simulated = curve.dropna(subset=["queries_simulated"])
        right.scatter(
            simulated["gap"],
            simulated["queries_simulated"],
            marker=markers.get(weaker, "o"),
            facecolors="none",
            edgecolors="black",
            zorder=3,
        )
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("strength gap s1 − s2")
    right.set_ylabel("test queries for 95 % consistency")
    right.set_title("open markers: smallest simulated query count of the grid", fontsize=9)
    right.legend(fontsize=8)
    _finish(figure, "How often the stronger model loses on MRR", caption, pdf, png)


def plot_metrics(
    grid: pd.DataFrame, saturation: pd.DataFrame, pdf: str | Path, png: str | Path, caption: str = ""
) -> None:
    """Left: every metric's simulated curve scaled to its value at the strongest model
    (middle density, rho = 0). Right: slope at the high strength over slope at the low one
    (1 = no saturation) per metric and density."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    set_style()
    values = grid[(grid["variant"] == "value") & (grid["correlation"] == 0)]
    densities = sorted(values["density"].unique())
    density = densities[len(densities) // 2]
    shown = values[values["density"] == density]
    figure, (left, right) = plt.subplots(1, 2, figsize=(13, 4.8))
    labels = list(dict.fromkeys(shown["label"]))
    palette = sns.color_palette("colorblind", len(labels))
    styles = ["-", "--", "-.", ":"]
    for position, (label, curve) in enumerate(shown.groupby("label", sort=False)):
        curve = curve.sort_values("strength")
        scale = curve["mean"].iloc[-6:].mean()  # the last few points: one is too noisy
        left.plot(
            curve["strength"],
            curve["mean"] / scale,
            color=palette[labels.index(label)],
            linestyle=styles[position % len(styles)],
            label=label,
        )
    left.set_xlabel(STRENGTH_LABEL)
    left.set_ylabel("metric / its mean over the 6 largest strengths")
    left.set_title(f"α = {density:g}, ρ = 0", fontsize=9)
    left.legend(fontsize=7, ncol=2)
    ratios = saturation[(saturation["variant"] == "value") & saturation["responds_at_low"]].copy()
    ratios["density"] = ratios["density"].map(lambda value: f"α = {value:g}")
    sns.barplot(data=ratios, y="label", x="slope_ratio", hue="density", ax=right, errorbar=None)
    right.axvline(0, color="black", linewidth=0.8)
    right.set_xlabel("slope at high s / slope at low s (1: no saturation; < 0: stronger scores lower)")
    right.set_ylabel("")
    flat = sorted(set(saturation.loc[~saturation["responds_at_low"].astype(bool), "label"]))
    if flat:
        right.set_title(
            f"not shown where flat at low s (slope within 2 SE of 0): {', '.join(flat)}", fontsize=8
        )
    _finish(figure, "Less focus-on-top metrics saturate less", caption, pdf, png)


FAMILY_TREE_PANELS = (
    MRR_KEY,
    "mean_inverse_rank_power_1_4",
    "hits_at_10",
    "z_inverse_harmonic_mean_rank",
)


def plot_family_tree(checkpoints: pd.DataFrame, pdf: str | Path, png: str | Path, caption: str = "") -> None:
    """Sparse against full metric per checkpoint, one row per graph variant, one column per
    metric; colour: model, marker: density; the diagonal is y = x."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    set_style()
    wide = checkpoints.pivot_table(
        index=["graph", "density", "configuration", "model", "epoch", "metric", "label", "variant"],
        columns="evaluation",
        values="value",
    ).reset_index()
    wide["model"] = wide["model"].map(model_label)
    wide["density"] = wide["density"].map(lambda value: f"{value} %")
    graphs = sorted(wide["graph"].unique())
    panels = [key for key in FAMILY_TREE_PANELS if key in set(wide["metric"])]
    figure, axes = plt.subplots(
        len(graphs), len(panels), figsize=(3.6 * len(panels), 3.4 * len(graphs)), squeeze=False
    )
    for row, graph in enumerate(graphs):
        for column, key in enumerate(panels):
            axis = axes[row, column]
            data = wide[(wide["graph"] == graph) & (wide["metric"] == key)]
            sns.scatterplot(
                data=data,
                x="full",
                y="sparse",
                hue="model",
                style="density",
                ax=axis,
                legend=(row == 0 and column == 0),
                s=25,
            )
            low = min(data["full"].min(), data["sparse"].min())
            high = max(data["full"].max(), data["sparse"].max())
            axis.plot([low, high], [low, high], color="grey", linewidth=0.8)
            label = data["label"].iloc[0] if len(data) else key
            variant = data["variant"].iloc[0] if len(data) else ""
            name = label if variant == "value" else f"{label} ({variant})"
            axis.set_title(f"{graph}: {name}", fontsize=9)
            axis.set_xlabel(f"{name}, full answers")
            axis.set_ylabel(f"{name}, sparse answers")
    _finish(
        figure, "Family tree: the sparse test set against the full one, per checkpoint", caption, pdf, png
    )
