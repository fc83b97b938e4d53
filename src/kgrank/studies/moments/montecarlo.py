"""The `moments` study: the moments lookup table and the Monte Carlo check.

Under the random model every metric's expectation and variance depend only on the
candidate counts (``kgrank.engine.candidates``), so the lookup table is a property of
(dataset, split, side), independent of any model, and a published raw metric can be
adjusted after the fact with it.

The check draws R replicate rank vectors from the real N_i (streamed in chunks, memory
bounded by ``chunk_elements``), and for every metric compares the simulated mean and
variance with the analytic ones: a z-statistic for the mean, and the ratio of variances
with a confidence interval from the standard error of the sample variance (through the
fourth central moment, since many metrics are far from normal). Each comparison is a
test at a family-wise level alpha with a Bonferroni correction over all tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from kgrank.defaults import DEFAULT_FILTER_SPLITS
from kgrank.engine.candidates import candidate_counts, counts_by_side
from kgrank.evaluation.metrics import Metric, default_metrics, moments_of, moments_of_subsets, side_subsets
from kgrank.evaluation.moments import apply_familywise, compare_with_simulation, sample_ranks
from kgrank.evaluation.stats import seed_stream


def moments_table(counts: pd.DataFrame, metrics: Sequence[Metric] | None = None) -> pd.DataFrame:
    """Expectation and variance of every metric under the random model, per side."""
    metrics = list(metrics) if metrics is not None else default_metrics()
    num_candidates = counts["num_candidates"].to_numpy()
    subsets = side_subsets(counts["side"].to_numpy())
    rows = []
    for side, everything in moments_of_subsets(metrics, num_candidates, subsets).items():
        num_ranks = int((counts["side"] == side).sum()) if side != "both" else len(counts)
        for metric in metrics:
            moments = everything[metric.key]
            rows.append(
                {
                    "side": side,
                    "metric": metric.key,
                    "expectation": moments.expectation,
                    "variance": moments.variance,
                    "method": moments.method,
                    "num_ranks": num_ranks,
                }
            )
    return pd.DataFrame(rows)


def dataset_moments_table(
    dataset_dir: str | Path,
    dataset: str,
    splits: Sequence[str],
    metrics: Sequence[Metric],
    filter_splits: Sequence[str] = DEFAULT_FILTER_SPLITS,
) -> pd.DataFrame:
    """The lookup table of one dataset: every metric's moments per split and side."""
    tables = []
    for split in splits:
        table = moments_table(candidate_counts(dataset_dir, split, filter_splits), metrics)
        table.insert(0, "split", split)
        tables.append(table)
    result = pd.concat(tables, ignore_index=True)
    result.insert(0, "dataset", dataset)
    return result


def simulate_metrics(
    num_candidates: np.ndarray,
    metrics: Sequence[Metric],
    *,
    replicates: int,
    seed: int,
    chunk_elements: int = 8_000_000,
    progress: bool = False,
) -> dict[str, np.ndarray]:
    """Each metric's value on R replicate rank vectors, drawn in bounded chunks."""
    num_candidates = np.asarray(num_candidates, dtype=float)
    # A stream of its own: the sampled "analytic" moments (kgrank.evaluation.moments) draw from seed 0
    # alone, and the check must never reuse their draws, whatever the configured seed.
    generator = seed_stream(seed, 1)
    chunk = max(1, chunk_elements // len(num_candidates))
    values: dict[str, list[np.ndarray]] = {metric.key: [] for metric in metrics}
    starts = range(0, replicates, chunk)
    for start in tqdm(starts, desc="replicates", unit="chunk", disable=not progress):
        ranks = sample_ranks(generator, num_candidates, min(chunk, replicates - start))
        for metric in metrics:
            values[metric.key].append(np.atleast_1d(metric.value(ranks)))
    return {key: np.concatenate(parts) for key, parts in values.items()}


def check_moments(
    num_candidates: np.ndarray,
    metrics: Sequence[Metric] | None = None,
    *,
    replicates: int = 10_000,
    seed: int = 0,
    alpha: float = 0.01,
    progress: bool = False,
) -> pd.DataFrame:
    """Analytic vs simulated mean and variance of every metric, with a pass/fail verdict."""
    metrics = list(metrics) if metrics is not None else default_metrics()
    simulated = simulate_metrics(num_candidates, metrics, replicates=replicates, seed=seed, progress=progress)
    tests = 2 * len(metrics)
    everything = moments_of(metrics, num_candidates)
    rows = [
        compare_with_simulation(
            metric.key, everything[metric.key], simulated[metric.key], tests=tests, alpha=alpha
        )
        for metric in metrics
    ]
    return apply_familywise(pd.DataFrame(rows), alpha)


def check_dataset(
    counts: pd.DataFrame,
    metrics: Sequence[Metric],
    *,
    replicates: int,
    seed: int,
    alpha: float,
    progress: bool = False,
) -> pd.DataFrame:
    """The check on head, tail and both sides of one dataset, one Bonferroni family."""
    tables = []
    for offset, (side, num_candidates) in enumerate(counts_by_side(counts).items()):
        # a seed per side, so that the three checks are independent draws
        table = check_moments(
            num_candidates, metrics, replicates=replicates, seed=seed + offset, alpha=alpha, progress=progress
        )
        table.insert(0, "side", side)
        tables.append(table)
    return apply_familywise(pd.concat(tables, ignore_index=True), alpha)


def plot_check(table: pd.DataFrame, pdf_path: str | Path, png_path: str | Path, title: str = "") -> None:
    """Two panels per metric: the mean's z-statistic and the variance ratio with its interval."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from kgrank.plotting import save_figure, set_style

    set_style()
    labels = table["dataset"] + " / " + table["side"] if "dataset" in table else table["side"]
    data = table.assign(setting=labels)
    metrics = list(dict.fromkeys(data["metric"]))
    figure, axes = plt.subplots(
        1, 2, figsize=(12, 0.28 * len(metrics) + 1.8), sharey=True, constrained_layout=True
    )
    critical = float(data["critical_z"].iloc[0])
    panels = (
        ("z_mean", "z of the simulated mean against the analytic expectation"),
        ("z_variance", "z of the simulated / analytic variance ratio against 1"),
    )
    # seaborn jitters strip plots with numpy's global generator: seed it so that the same
    # check draws the same figure, and give the caller its state back afterwards.
    global_state = np.random.get_state()  # noqa: NPY002
    np.random.seed(0)  # noqa: NPY002
    for axis, (column, label) in zip(axes, panels, strict=True):
        finite = data[np.isfinite(data[column])]
        axis.axvspan(-critical, critical, color="0.9", zorder=0, label="acceptance region")
        sns.stripplot(
            data=finite,
            y="metric",
            x=column,
            hue="setting",
            order=metrics,
            ax=axis,
            dodge=False,
            legend=axis is axes[0],
        )
        axis.axvline(0.0, color="black", linewidth=0.8)
        axis.set_xlabel(label)
    np.random.set_state(global_state)  # noqa: NPY002
    axes[0].set_ylabel("metric")
    axes[0].legend(title="dataset / side", loc="upper left", bbox_to_anchor=(0, -0.12), ncol=3, frameon=False)
    replicates = int(data["replicates"].iloc[0])
    alpha = float(data["familywise_alpha"].iloc[0])
    figure.suptitle(
        title
        or f"Monte Carlo check of every analytic moment ({replicates} replicates, family-wise alpha {alpha})"
    )
    save_figure(figure, pdf_path, png_path)
