"""The `paper` study (Hoyt, Berrendorf et al. 2022): Figure 1 and Table 4.

Figure 1 shows, per dataset and model, the MRR next to its adjusted index and its
z-score. The raw MRR shrinks as datasets grow while the adjusted values stay
comparable; that contrast is the point of the figure.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from kgrank.io import write_text
from kgrank.plotting import save_figure, set_style

FIGURE1_PANELS = (
    ("inverse_harmonic_mean_rank", "MRR", "MRR"),
    ("adjusted_inverse_harmonic_mean_rank", "adjusted MRR (AMRR)", "adjusted index"),
    ("z_inverse_harmonic_mean_rank", "z-MRR (ZMRR)", "z-score (standard deviations)"),
)
MODEL_LABELS = {"complex": "ComplEx", "rotate": "RotatE", "transe": "TransE", "tucker": "TuckER"}
DATASET_LABELS = {"nations": "Nations", "kinships": "Kinships", "fb15k237": "FB15k-237", "wn18rr": "WN18RR"}


def read_stats(paths: Sequence[str | Path]) -> pd.DataFrame:
    records = [json.loads(Path(path).read_text(encoding="utf-8")) for path in paths]
    frame = pd.DataFrame(
        {
            "dataset": [record["dataset"] for record in records],
            "entities": [record["entities"] for record in records],
            "relations": [record["relations"] for record in records],
            "train": [record["triples"]["train"] for record in records],
            "valid": [record["triples"]["valid"] for record in records],
            "test": [record["triples"]["test"] for record in records],
        }
    )
    return frame.sort_values("entities", kind="stable").reset_index(drop=True)


def read_metrics(paths: Sequence[str | Path]) -> pd.DataFrame:
    return pd.concat([pd.read_csv(path, sep="\t") for path in paths], ignore_index=True)


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


def plot_figure1(
    metrics: pd.DataFrame, stats: pd.DataFrame, pdf_path: str | Path, png_path: str | Path, caption: str = ""
) -> pd.DataFrame:
    import matplotlib.pyplot as plt
    import seaborn as sns

    set_style()
    data = figure1_data(metrics, stats)
    data = data.assign(
        dataset_label=data["dataset"].map(lambda name: DATASET_LABELS.get(name, name)),
        model_label=data["model"].map(lambda name: MODEL_LABELS.get(name, name)),
    )
    dataset_order = [
        DATASET_LABELS.get(name, name) for name in stats["dataset"] if name in set(data["dataset"])
    ]
    model_order = sorted(data["model_label"].unique())
    figure, axes = plt.subplots(1, len(FIGURE1_PANELS), figsize=(12, 3.6), constrained_layout=True)
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
        axis.set_title(title)
        axis.set_xlabel("dataset (ordered by number of entities)")
        axis.set_ylabel(y_label)
        axis.axhline(0.0, color="black", linewidth=0.8)
        if axis is not axes[-1]:
            axis.get_legend().remove()
    axes[-1].legend(title="model", loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    if caption:
        figure.suptitle(caption, fontsize=9, y=-0.02, va="top")
    save_figure(figure, pdf_path, png_path)
    return data


def write_table4(stats: pd.DataFrame, markdown_path: str | Path, latex_path: str | Path) -> pd.DataFrame:
    """Dataset statistics, computed from the prepared splits (Table 4 of the paper)."""
    table = stats.assign(dataset=stats["dataset"].map(lambda name: DATASET_LABELS.get(name, name)))
    table = table.rename(
        columns={
            "dataset": "Dataset",
            "entities": "Entities",
            "relations": "Relations",
            "train": "Train",
            "valid": "Validation",
            "test": "Test",
        }
    )
    write_text(markdown_path, table.to_markdown(index=False) + "\n")
    write_text(
        latex_path,
        table.to_latex(
            index=False,
            caption="Dataset statistics, computed from the prepared splits.",
            label="tab:dataset-statistics",
        ),
    )
    return table
