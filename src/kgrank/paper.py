"""The `paper` study (Hoyt, Berrendorf et al. 2022): Figure 1 and Tables 1-4.

Figure 1 shows, per dataset and model, the MRR next to its adjusted index and its
z-score. The raw MRR shrinks as datasets grow while the adjusted values stay
comparable; that contrast is the point of the figure.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from kgrank.io import write_text
from kgrank.metrics import Metric, default_metrics, derived_rows
from kgrank.plotting import add_caption, save_figure, set_style

FIGURE1_PANELS = (
    ("inverse_harmonic_mean_rank", "MRR", "MRR"),
    ("adjusted_inverse_harmonic_mean_rank", "adjusted MRR (AMRR)", "adjusted index"),
    ("z_inverse_harmonic_mean_rank", "z-MRR (ZMRR)", "z-score (standard deviations, symlog scale)"),
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


def draw_figure1_row(axes: Sequence, metrics: pd.DataFrame, stats: pd.DataFrame, row_title: str = "") -> None:
    """The three panels of Figure 1 on ``axes`` (MRR, adjusted MRR, z-MRR per dataset and model)."""
    import seaborn as sns

    data = figure1_data(metrics, stats)
    data = data.assign(
        dataset_label=data["dataset"].map(lambda name: DATASET_LABELS.get(name, name)),
        model_label=data["model"].map(lambda name: MODEL_LABELS.get(name, name)),
    )
    dataset_order = [
        DATASET_LABELS.get(name, name) for name in stats["dataset"] if name in set(data["dataset"])
    ]
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
        axis.set_title(f"{row_title}: {title}" if row_title else title)
        axis.set_xlabel("dataset (ordered by number of entities)")
        axis.set_ylabel(y_label)
        axis.axhline(0.0, color="black", linewidth=0.8)
        if key.startswith("z_"):
            # z grows with the number of test ranks (about 5 on Nations, thousands on
            # WN18RR): a linear axis hides the small datasets; symlog keeps the sign.
            axis.set_yscale("symlog", linthresh=1.0)
        if axis is not axes[-1]:
            axis.get_legend().remove()
    axes[-1].legend(title="model", loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)


def plot_figure1(
    metrics: pd.DataFrame, stats: pd.DataFrame, pdf_path: str | Path, png_path: str | Path, caption: str = ""
) -> pd.DataFrame:
    import matplotlib.pyplot as plt

    set_style()
    figure, axes = plt.subplots(1, len(FIGURE1_PANELS), figsize=(12, 3.6), constrained_layout=True)
    draw_figure1_row(axes, metrics, stats)
    add_caption(figure, caption)
    save_figure(figure, pdf_path, png_path)
    return figure1_data(metrics, stats)


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


# --- Tables 1-3: generated from the metric registry -----------------------------------

VARIANTS = ("base", "expectation-normalised", "adjusted index", "z-score")


def _variant_value(metric: Metric, variant: str, ranks: np.ndarray, num_candidates: np.ndarray) -> float:
    value = metric.value(ranks)
    if variant == "base":
        return float(value)
    derived = derived_rows(metric, value, metric.moments(num_candidates))
    return float(derived[VARIANTS.index(variant) - 1]["value"])


def _is_better(metric: Metric, variant: str, new: float, old: float) -> bool:
    increasing = metric.increasing or variant in {"adjusted index", "z-score"}
    return new > old if increasing else new < old


def _variant_expectation(metric: Metric, variant: str, num_candidates: np.ndarray) -> float:
    """E of a variant under the random model: the variants are affine in the base metric,
    so E[variant] is the variant evaluated at M = E[M]."""
    moments = metric.moments(num_candidates)
    if variant == "base":
        return moments.expectation
    return float(derived_rows(metric, moments.expectation, moments)[VARIANTS.index(variant) - 1]["value"])


def desiderata(metric: Metric, variant: str, *, num_ranks: int = 31, seed: int = 0) -> dict[str, bool]:
    """The four desiderata of the paper's Table 1, each decided by evaluating the metric.

    - fixed optimum: all ranks 1 give the same value for N = 100, 1,000 and 100,000;
    - asymptotic pessimum: with all ranks N, the value is monotone in N over
      N = 10^2..10^5 and stays bounded (|v(10^5)| <= 2 |v(10^2)| + 1), so it converges;
      this separates a finite limit from growth like N or ln N;
    - strict anti-monotonicity: improving any single rank by one strictly improves it;
    - size-invariant expectation: E under the random model is the same for N = 100 and
      N = 1,000.
    """
    optimum = [
        _variant_value(metric, variant, np.ones(num_ranks), np.full(num_ranks, size))
        for size in (100, 1_000, 100_000)
    ]
    worst = np.array(
        [
            _variant_value(metric, variant, np.full(num_ranks, float(size)), np.full(num_ranks, size))
            for size in (100, 1_000, 10_000, 100_000)
        ]
    )
    steps = np.diff(worst)
    tolerance = 1e-12 * (1 + np.abs(worst).max())
    monotone = bool(np.all(steps >= -tolerance) or np.all(steps <= tolerance))
    bounded = bool(np.all(np.isfinite(worst)) and abs(worst[-1]) <= 2 * abs(worst[0]) + 1)
    generator = np.random.default_rng(seed)
    size = 50
    ranks = generator.integers(2, size + 1, num_ranks).astype(float)
    counts = np.full(num_ranks, size)
    before = _variant_value(metric, variant, ranks, counts)
    strict = True
    for index in range(num_ranks):
        improved = ranks.copy()
        improved[index] -= 1
        strict &= _is_better(metric, variant, _variant_value(metric, variant, improved, counts), before)
    expectations = [_variant_expectation(metric, variant, np.full(num_ranks, size)) for size in (100, 1_000)]
    return {
        "fixed optimum": bool(np.allclose(optimum, optimum[0])),
        "asymptotic pessimum": monotone and bounded,
        "strict anti-monotonicity": bool(strict),
        "size-invariant expectation": bool(np.isclose(expectations[0], expectations[1])),
    }


def table1(metrics: Sequence[Metric]) -> pd.DataFrame:
    rows = []
    for metric in metrics:
        if not metric.has_derived:
            continue
        for variant in VARIANTS:
            rows.append(
                {"metric": metric.label, "key": metric.key, "variant": variant, **desiderata(metric, variant)}
            )
    return pd.DataFrame(rows)


def table2(metrics: Sequence[Metric], reference_candidates: np.ndarray) -> pd.DataFrame:
    """Definitions as f, M_p, g, with direction, optimum, range and how the moments are known."""
    rows = []
    for metric in metrics:
        method = metric.moments(reference_candidates).method
        rows.append(
            {
                "metric": metric.label,
                "key": metric.key,
                "f": metric.transform.text,
                "mean": metric.mean_text,
                "g": {"identity": "x", "reciprocal": "1/x"}[metric.post],
                "better": "higher" if metric.increasing else "lower",
                "optimum": "" if metric.optimum is None else f"{metric.optimum:g}",
                "range": f"[{metric.value_range[0]:g}, {metric.value_range[1]:g}]",
                "moments": method.split(" (R=")[0],
            }
        )
    return pd.DataFrame(rows)


def table3(metrics: Sequence[Metric]) -> pd.DataFrame:
    """The power means M_p and the rank metric each one gives."""
    names = {
        -np.inf: "minimum",
        -1.0: "harmonic",
        0.0: "geometric",
        1.0: "arithmetic",
        2.0: "quadratic",
        np.inf: "maximum",
    }
    rows = []
    for p, name in names.items():
        metric = (
            next(
                m
                for m in metrics
                if m.statistic == "power mean"
                and m.transform.text == "r"
                and m.power == p
                and m.post == "identity"
            )
            if p != -1.0
            else next(m for m in metrics if m.key == "harmonic_mean_rank")
        )
        formula = {-np.inf: "min_i x_i", 0.0: "exp((1/n) sum_i ln x_i)", np.inf: "max_i x_i"}.get(
            p, f"((1/n) sum_i x_i^{p:g})^(1/{p:g})"
        )
        rows.append(
            {"p": f"{p:g}", "mean": name, "M_p(x)": formula, "rank metric": metric.label, "key": metric.key}
        )
    return pd.DataFrame(rows)


def write_tables_1_to_3(out_dir: str | Path, reference_candidates: np.ndarray) -> None:
    metrics = default_metrics()
    captions = {
        "table1": "Desiderata, decided numerically for every metric and its adjusted variants.",
        "table2": "Metric definitions as g(M_p(f(r))), from kgrank's registry.",
        "table3": "Power means and the rank-based metrics they give.",
    }
    tables = {
        "table1": table1(metrics),
        "table2": table2(metrics, reference_candidates),
        "table3": table3(metrics),
    }
    for name, table in tables.items():
        write_text(Path(out_dir) / f"{name}.md", table.to_markdown(index=False) + "\n")
        write_text(
            Path(out_dir) / f"{name}.tex",
            table.to_latex(index=False, caption=captions[name], label=f"tab:{name}"),
        )
