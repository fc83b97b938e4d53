"""The ir study's figures: Kendall's tau against the pooling depth and the systems' values
against it (label sparsity), mean tau against the subset fraction (stability) and the
sorted p-value curves of the paired t-tests (discriminative power). Each takes the
tables of agreement.py, stability.py or discrimination.py and writes PDF and PNG."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from kgrank.errors import KgrankInputError
from kgrank.evaluation.metrics import MetricKey, Variant, lookup
from kgrank.labels import dataset_label, model_label

# kgrank.plotting (matplotlib, seaborn) is imported where a figure is drawn: report.py
# reads this module's labels for commands that draw nothing (ir-queries, ir-montecarlo)
if TYPE_CHECKING:
    import matplotlib.pyplot as plt

# The trec_eval measures the metric registry does not hold (its metrics print their own label).
METRIC_LABELS = {"ap_at_20": "MAP@20", "ndcg_at_20": "nDCG@20"}
AVERAGING_LABELS = {"micro": "micro", "macro": "macro (best answer)", "macro-pykeen": "macro (PyKEEN)"}
EVALUATION_LABELS = {"test": "full test set", "sample": "FB-Test-S", "pooled": "FB-Test-S-C"}
# The filtering protocols (kgrank.studies.ir.settings.PROTOCOLS) as figures and tables name them
PROTOCOL_LABELS = {
    "paper": "paper filter (train+valid+set's answers)",
    "all-known": "all-known filter (train+valid+test)",
}
AVERAGING_STYLES = {"micro": "-", "macro": "--", "macro-pykeen": ":"}
# the lines of every curve figure
LINE = {"marker": "o", "markersize": 3, "linewidth": 1}
SMALLEST_P = 1e-16  # smaller p-values (and 0) are drawn at this floor of the log axis


def metric_label(key: str) -> str:
    """The printed name of a metric: the registry's short name, or MAP@20 / nDCG@20."""
    if key in METRIC_LABELS:
        return METRIC_LABELS[key]
    try:
        return lookup(key).short_name
    except KgrankInputError:
        return key


def adjusted_label(key: str) -> str:
    """The printed name of a metric's adjusted index: the registry's (AMRR, AMRI, AH@10),
    else spelled out (the trec_eval measures)."""
    try:
        metric = lookup(key).metric
    except KgrankInputError:
        return f"adjusted {metric_label(key)}"
    return MetricKey(metric, Variant.INDEX).short_name


def evaluation_label(dataset: str, evaluation: str) -> str:
    """A printed evaluation name, with its dataset's where there is one."""
    label = EVALUATION_LABELS.get(evaluation, evaluation)
    return f"{dataset_label(dataset)}, {label}" if dataset else label


def protocol_label(protocol: str) -> str:
    return PROTOCOL_LABELS.get(protocol, protocol)


def _protocols(frame: pd.DataFrame) -> list[str]:
    """The protocols of a table in order ('' for a table without a protocol column)."""
    return list(dict.fromkeys(frame["protocol"])) if "protocol" in frame.columns else [""]


def _of_protocol(frame: pd.DataFrame, protocol: str) -> pd.DataFrame:
    return frame[frame["protocol"] == protocol] if "protocol" in frame.columns else frame


def _panels(frame: pd.DataFrame) -> list[tuple[str, str, str]]:
    """The (dataset, evaluation, protocol) of a table, in order; tables without a dataset
    or protocol column have '' there."""
    blank = pd.Series("", index=frame.index)
    datasets = frame["dataset"].fillna("") if "dataset" in frame.columns else blank
    protocols = frame["protocol"] if "protocol" in frame.columns else blank
    return list(dict.fromkeys(zip(datasets, frame["evaluation"], protocols, strict=True)))


def _of_panel(frame: pd.DataFrame, panel: tuple[str, str, str]) -> pd.Series:
    dataset, evaluation, protocol = panel
    mask = frame["evaluation"] == evaluation
    if "dataset" in frame.columns:
        mask &= frame["dataset"].fillna("") == dataset
    if "protocol" in frame.columns:
        mask &= frame["protocol"] == protocol
    return mask


def _panel_label(panel: tuple[str, str, str]) -> str:
    dataset, evaluation, protocol = panel
    label = evaluation_label(dataset, evaluation)
    return f"{label},\n{protocol_label(protocol)}" if protocol else label


def _protocol_title(title: str, protocol: str) -> str:
    """A panel's title, its protocol on a second line where the table has one."""
    return f"{title}\n{protocol_label(protocol)}" if protocol else title


def _cells(axes: np.ndarray, rows: list, columns: list) -> list[tuple]:
    """(axis, row key, column key) of every panel of a grid."""
    return [
        (axes[row, column], row_key, column_key)
        for row, row_key in enumerate(rows)
        for column, column_key in enumerate(columns)
    ]


def _integer_ticks(axis: plt.Axes) -> None:
    """Whole-number ticks on the x axis (depths, pair counts), however few values there are."""
    from matplotlib.ticker import MaxNLocator

    axis.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))


def _set_style() -> None:
    from kgrank.plotting import set_style

    set_style()


def _colours(names: list[str]) -> dict[str, tuple]:
    import seaborn as sns

    from kgrank.plotting import PALETTE

    return dict(zip(names, sns.color_palette(PALETTE, max(len(names), 1)), strict=False))


def _averagings(frame: pd.DataFrame) -> list[str]:
    return [name for name in AVERAGING_LABELS if name in set(frame["averaging"])]


def _metrics(frame: pd.DataFrame) -> list[str]:
    present = list(dict.fromkeys(frame["metric"]))
    order = ["inverse_harmonic_mean_rank", "arithmetic_mean_rank"]
    hits = sorted((key for key in present if key.startswith("hits_at_")), key=lambda key: int(key[8:]))
    return [key for key in [*order, *hits, "ap_at_20", "ndcg_at_20"] if key in present] + [
        key for key in present if key not in order and key not in hits and key not in METRIC_LABELS
    ]


def _nothing_to_draw(message: str, pdf: str | Path, png: str | Path, caption: str) -> None:
    """A figure that says on its canvas why it is empty, so the workflow still has a file."""
    import matplotlib.pyplot as plt

    from kgrank.plotting import add_caption, save_figure

    figure, axis = plt.subplots(figsize=(5.0, 2.0))
    axis.axis("off")
    axis.text(0.5, 0.5, message, ha="center", va="center", wrap=True)
    add_caption(figure, caption)
    save_figure(figure, pdf, png)


def _grid(rows: int, columns: int, width: float = 3.0, height: float = 2.6) -> tuple[plt.Figure, np.ndarray]:
    import matplotlib.pyplot as plt

    return plt.subplots(rows, columns, figsize=(width * columns, height * rows + 0.6), squeeze=False)


def _finish(
    figure: plt.Figure, axes: np.ndarray, title: str, caption: str, pdf: str | Path, png: str | Path
) -> None:
    """One legend for the whole figure under the panels, the title, the caption, both files."""
    from kgrank.plotting import add_caption, save_figure

    handles, labels = [], []
    for axis in axes.flat:
        for handle, label in zip(*axis.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    if handles:
        figure.legend(
            handles,
            labels,
            loc="lower center",
            ncol=min(4, len(labels)),
            fontsize=8,
            bbox_to_anchor=(0.5, -0.01),
        )
    figure.suptitle(title)
    rows = axes.shape[0]
    figure.tight_layout(rect=(0, 0.12 / rows + 0.04 * ((len(labels) - 1) // 4), 1, 1))
    add_caption(figure, caption)
    save_figure(figure, pdf, png)


def plot_tau_by_depth(agreement: pd.DataFrame, pdf: str | Path, png: str | Path, caption: str = "") -> None:
    """One panel per metric: Kendall's tau between the ranking at pooling depth d and the
    ranking on FB-Test-S-C (solid) and on FB-Test-S (dashed), against d, one colour per
    averaging. Raw values only: the adjusted index and z-score give the same tau."""
    _set_style()
    frame = agreement[
        agreement["comparison"].isin(["depth vs pooled", "depth vs sample"]) & (agreement["variant"] == "raw")
    ]
    if frame.empty:
        _nothing_to_draw("No pooling depths evaluated: no tau to draw.", pdf, png, caption)
        return
    metrics, averagings = _metrics(frame), _averagings(frame)
    protocols = _protocols(frame)
    colours = _colours(list(AVERAGING_LABELS))
    figure, axes = _grid(len(protocols), len(metrics))
    styles = {"depth vs pooled": ("-", "o", "vs FB-Test-S-C"), "depth vs sample": ("--", "s", "vs FB-Test-S")}
    for axis, protocol, metric in _cells(axes, protocols, metrics):
        shown = _of_protocol(frame, protocol)
        for averaging in averagings:
            for comparison, (line, marker, text) in styles.items():
                curve = shown[
                    (shown["metric"] == metric)
                    & (shown["averaging"] == averaging)
                    & (shown["comparison"] == comparison)
                ].sort_values("depth")
                if curve.empty:
                    continue
                axis.plot(
                    curve["depth"],
                    curve["tau"],
                    linestyle=line,
                    marker=marker,
                    markersize=3,
                    linewidth=1,
                    color=colours[averaging],
                    label=f"{AVERAGING_LABELS[averaging]}, {text}",
                )
        axis.set_ylim(-1.05, 1.05)
        _integer_ticks(axis)
        axis.set_title(_protocol_title(metric_label(metric), protocol), fontsize=8)
        axis.set_xlabel("pooling depth d (rank cut-off)")
        axis.set_ylabel("Kendall's τ (systems)")
    _finish(
        figure,
        axes,
        "Label sparsity: agreement of the system ranking at pooling depth d with FB-Test-S-C and FB-Test-S"
        + (f" (rows: {', '.join(protocol_label(p) for p in protocols)})" if protocols != [""] else ""),
        caption,
        pdf,
        png,
    )


def plot_values_by_depth(
    values: pd.DataFrame,
    pdf: str | Path,
    png: str | Path,
    *,
    metric: str = "inverse_harmonic_mean_rank",
    averaging: str = "macro",
    caption: str = "",
) -> None:
    """Two panels, the raw value and the adjusted index of one metric and averaging (default
    macro MRR and AMRR) on every pooling depth, one line per system."""
    _set_style()
    frame = values[
        values["depth"].notna()
        & (values["category"] == "all")
        & (values["side"] == "both")
        & (values["weighting"] == "as is")
        & (values["metric"] == metric)
        & (values["averaging"] == averaging)
    ]
    if frame.empty:
        _nothing_to_draw(
            f"No pooling depths with {averaging} {metric_label(metric)}: nothing to draw.", pdf, png, caption
        )
        return
    systems = list(dict.fromkeys(frame["model"]))
    colours = _colours(systems)
    protocols = _protocols(frame)
    figure, axes = _grid(len(protocols), 2, width=3.8)
    panels = (
        ("value", metric_label(metric), "raw value"),
        ("adjusted_index", adjusted_label(metric), "adjusted index (0: random, 1: optimum)"),
    )
    for axis, protocol, (column, label, title) in _cells(axes, protocols, panels):
        axis.set_title(_protocol_title(title, protocol), fontsize=8)
        shown = _of_protocol(frame, protocol)
        for system in systems:
            curve = shown[shown["model"] == system].sort_values("depth")
            axis.plot(curve["depth"], curve[column], **LINE, color=colours[system], label=model_label(system))
        if column == "adjusted_index":
            axis.axhline(0.0, color="grey", linewidth=0.8)  # 0: the random model
        _integer_ticks(axis)
        axis.set_xlabel("pooling depth d (rank cut-off)")
        axis.set_ylabel(f"{label} (unitless)")
    _finish(
        figure,
        axes,
        f"{AVERAGING_LABELS.get(averaging, averaging)} {metric_label(metric)} and {adjusted_label(metric)} "
        "against the pooling depth",
        caption,
        pdf,
        png,
    )


def plot_stability(summary: pd.DataFrame, pdf: str | Path, png: str | Path, caption: str = "") -> None:
    """Rows: evaluations; columns: metrics; mean tau between the whole-set ranking and the
    subset rankings against the subset fraction (log x), a band from the 5th to the 95th
    percentile, one colour per averaging. Raw values (the adjusted ones give the same tau)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    _set_style()
    frame = summary[summary["variant"] == "raw"]
    if frame.empty:
        _nothing_to_draw("No stability results: nothing to draw.", pdf, png, caption)
        return
    metrics, averagings = _metrics(frame), _averagings(frame)
    panels = _panels(frame)
    colours = _colours(list(AVERAGING_LABELS))
    fractions = sorted(set(frame["fraction"]))
    # a common y range from the lowest 5th percentile to 1, so panels compare at a glance
    lowest = float(np.nanmin(frame["tau_p05"])) if frame["tau_p05"].notna().any() else 0.0
    bottom = min(0.0, lowest) - 0.05
    figure, axes = _grid(len(panels), len(metrics), width=2.7, height=2.4)
    for row, panel in enumerate(panels):
        for column, metric in enumerate(metrics):
            axis = axes[row, column]
            for averaging in averagings:
                curve = frame[
                    (frame["metric"] == metric) & _of_panel(frame, panel) & (frame["averaging"] == averaging)
                ].sort_values("fraction")
                if curve.empty:
                    continue
                colour = colours[averaging]
                axis.plot(
                    curve["fraction"],
                    curve["mean_tau"],
                    **LINE,
                    linestyle=AVERAGING_STYLES[averaging],
                    color=colour,
                    label=AVERAGING_LABELS[averaging],
                )
                axis.fill_between(
                    curve["fraction"],
                    curve["tau_p05"],
                    curve["tau_p95"],
                    color=colour,
                    alpha=0.15,
                    linewidth=0,
                )
            axis.set_xscale("log")
            # ticks at the fractions drawn (every other one when there are many)
            axis.xaxis.set_major_locator(FixedLocator(fractions[:: 2 if len(fractions) > 5 else 1]))
            axis.xaxis.set_minor_locator(NullLocator())
            axis.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
            axis.tick_params(axis="x", labelsize=7)
            axis.set_ylim(bottom, 1.05)
            if row == 0:
                axis.set_title(metric_label(metric), fontsize=9)
            if row == len(panels) - 1:
                axis.set_xlabel("subset fraction (log)", fontsize=8)
            if column == 0:
                axis.set_ylabel(f"{_panel_label(panel)}\nKendall's τ", fontsize=7)
    _finish(
        figure,
        axes,
        "Stability: Kendall's τ, whole-set vs subset ranking (mean, band: 5th–95th percentile)",
        caption,
        pdf,
        png,
    )


def plot_discrimination(
    pairs: pd.DataFrame, pdf: str | Path, png: str | Path, *, alpha: float = 0.05, caption: str = ""
) -> None:
    """Rows: evaluations; columns: metrics; the p-values of all system pairs sorted
    increasingly (log y), one colour per averaging, the significance level as a line."""
    _set_style()
    if pairs.empty:
        _nothing_to_draw("Fewer than two systems: no pair to test.", pdf, png, caption)
        return
    metrics, averagings = _metrics(pairs), _averagings(pairs)
    panels = _panels(pairs)
    colours = _colours(list(AVERAGING_LABELS))
    figure, axes = _grid(len(panels), len(metrics), width=2.8, height=2.5)
    # the x range: the most pairs any cell plots
    most_pairs = int(
        pairs.groupby(
            [*pairs.columns.intersection(["dataset", "protocol"]), "evaluation", "metric", "averaging"],
            dropna=False,
        )
        .size()
        .max()
    )
    for row, panel in enumerate(panels):
        for column, metric in enumerate(metrics):
            axis = axes[row, column]
            for averaging in averagings:
                cell = pairs[
                    _of_panel(pairs, panel) & (pairs["metric"] == metric) & (pairs["averaging"] == averaging)
                ]
                if cell.empty:
                    continue
                p_values = np.sort(np.maximum(cell["t_p"].to_numpy(dtype=float), SMALLEST_P))
                axis.plot(
                    np.arange(1, len(p_values) + 1),
                    p_values,
                    **LINE,
                    linestyle=AVERAGING_STYLES[averaging],
                    color=colours[averaging],
                    label=AVERAGING_LABELS[averaging],
                )
            axis.axhline(alpha, color="grey", linewidth=0.8, linestyle="--", label=f"p = {alpha:g}")
            axis.set_yscale("log")
            axis.set_ylim(SMALLEST_P / 3, 3.0)
            if row == 0:
                axis.set_title(metric_label(metric), fontsize=9)
            if row == len(panels) - 1:
                axis.set_xlabel("system pairs, sorted by p")
            _integer_ticks(axis)  # pairs are counted
            axis.set_xlim(0.5, most_pairs + 0.5)
            if column == 0:
                axis.set_ylabel(f"{_panel_label(panel)}\np-value (paired t, log)", fontsize=7)
    _finish(
        figure,
        axes,
        f"Discriminative power: sorted p-values of paired t-tests over all system pairs (p < {SMALLEST_P:g} "
        "drawn at it)",
        caption,
        pdf,
        png,
    )


# The bars of the systems figure: (averaging, metric) with the label each gets.
SYSTEM_BARS = (
    ("micro", "inverse_harmonic_mean_rank", "MRR, micro"),
    ("macro-pykeen", "inverse_harmonic_mean_rank", "MRR, macro (PyKEEN)"),
    ("macro", "inverse_harmonic_mean_rank", "MRR, macro (best answer)"),
    ("macro", "ap_at_20", "MAP@20"),
    ("macro", "ndcg_at_20", "nDCG@20"),
)


def plot_systems(
    table: pd.DataFrame, pdf: str | Path, png: str | Path, caption: str = "", dataset: str = "fb15k237"
) -> None:
    """One panel per evaluation set: each system's MRR (micro, PyKEEN's macro, the best-answer
    macro), MAP@20 and nDCG@20 as grouped bars (the aggregate table of aggregate.py)."""
    _set_style()
    evaluations = [name for name in EVALUATION_LABELS if name in set(table["evaluation"])]
    if not evaluations:
        _nothing_to_draw("No evaluation set of the study in this table.", pdf, png, caption)
        return
    systems = list(dict.fromkeys(table["model"]))
    protocols = _protocols(table)
    colours = _colours([label for _, _, label in SYSTEM_BARS])
    figure, axes = _grid(
        len(protocols), len(evaluations), width=max(3.2, 0.55 * len(systems) + 1.0), height=3.2
    )
    width = 0.8 / len(SYSTEM_BARS)
    positions = np.arange(len(systems))
    for axis, protocol, evaluation in _cells(axes, protocols, evaluations):
        shown = _of_protocol(table, protocol)
        shown = shown[shown["evaluation"] == evaluation]
        for offset, (averaging, metric, label) in enumerate(SYSTEM_BARS):
            values = (
                shown[(shown["averaging"] == averaging) & (shown["metric"] == metric)]
                .set_index("model")["value"]
                .reindex(systems)
            )
            axis.bar(
                positions + (offset - (len(SYSTEM_BARS) - 1) / 2) * width,
                values.to_numpy(),
                width,
                color=colours[label],
                label=label,
            )
        axis.set_xticks(positions, [model_label(system) for system in systems], rotation=45, ha="right")
        axis.set_title(_protocol_title(EVALUATION_LABELS[evaluation], protocol), fontsize=8)
        axis.set_ylim(0, 1)
        axis.set_ylabel("value (higher is better)")
    # the dataset the run used, not the paper's
    title = f"Micro vs macro metrics of every system ({dataset_label(dataset)}"
    title += (
        f"; rows: {', '.join(protocol_label(p) for p in protocols)})" if protocols != [""] else ", filtered)"
    )
    _finish(figure, axes, title, caption, pdf, png)
