"""Which differences between models are real: for every pair of models on a dataset, a
paired test on the per-task reciprocal ranks (Wilcoxon signed-rank and paired t), a
bootstrap interval of the difference in MRR and in AMRR, and Holm's correction over all
comparisons of the study (one family per test).

Both models of a pair rank the same tasks against the same filtered candidates, so
E[MRR] under the random model is the same for both and the AMRR difference is the MRR
difference divided by 1 - E[MRR]: its interval is the MRR interval scaled alike.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

from kgrank.errors import KgrankInputError
from kgrank.metrics import lookup
from kgrank.studies.ambiguity.intervals import paired_percentile_interval

TASK_KEYS = ["triple_id", "side"]
PAIRWISE_COLUMNS = (
    "dataset",
    "first",
    "second",
    "tasks",
    "mrr_first",
    "mrr_second",
    "mrr_difference",
    "mrr_difference_low",
    "mrr_difference_high",
    "amrr_difference",
    "amrr_difference_low",
    "amrr_difference_high",
    "wilcoxon_p",
    "t_statistic",
    "t_p",
    "wilcoxon_p_holm",
    "t_p_holm",
    "wilcoxon_significant",
    "t_significant",
)


# What the report table prints of each pair (the TSV keeps every column).
REPORTED_COLUMNS = tuple(
    column
    for column in PAIRWISE_COLUMNS
    if column not in {"tasks", "mrr_first", "mrr_second", "wilcoxon_p", "t_statistic", "t_p"}
)


def reciprocal_ranks(
    first: pd.DataFrame, second: pd.DataFrame, names: tuple[str, str] = ("first", "second")
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Realistic reciprocal ranks of two models aligned task by task, and the tasks'
    candidate counts (which must agree: the same dataset and filter); ``names`` name the
    two tables in errors."""
    merged = first[[*TASK_KEYS, "realistic", "num_candidates"]].merge(
        second[[*TASK_KEYS, "realistic", "num_candidates"]],
        on=TASK_KEYS,
        suffixes=("_a", "_b"),
        validate="1:1",
    )
    pair = f"the rank tables of {names[0]} and {names[1]}"
    if len(merged) != len(first) or len(merged) != len(second):
        raise KgrankInputError(f"{pair} do not hold the same tasks; rank both models on the same test set")
    if not np.array_equal(merged["num_candidates_a"], merged["num_candidates_b"]):
        raise KgrankInputError(f"{pair} filter differently; rank both with the same filter splits")
    return (
        1.0 / merged["realistic_a"].to_numpy(dtype=float),
        1.0 / merged["realistic_b"].to_numpy(dtype=float),
        merged["num_candidates_a"].to_numpy(),
    )


def _mean_difference(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    return a.mean(axis=axis) - b.mean(axis=axis)


def compare_pair(
    first: np.ndarray,
    second: np.ndarray,
    num_candidates: np.ndarray,
    *,
    confidence: float,
    resamples: int,
    seed: int | Sequence[int],
) -> dict[str, float]:
    """Tests and intervals for one pair of reciprocal-rank vectors (first minus second)."""
    difference = first - second
    if np.any(difference != 0):
        wilcoxon = stats.wilcoxon(first, second)
        paired_t = stats.ttest_rel(first, second)
        wilcoxon_p, t_p, t_statistic = (
            float(wilcoxon.pvalue),
            float(paired_t.pvalue),
            float(paired_t.statistic),
        )
        low, high = paired_percentile_interval(
            first,
            second,
            _mean_difference,
            confidence=confidence,
            resamples=resamples,
            seed=seed,
            batch=max(1, 20_000_000 // (8 * len(first))),  # about 20 MB of resampled indices a batch
        )
    else:
        # identical reciprocal ranks: nothing to test, the difference is exactly 0
        wilcoxon_p = t_p = 1.0
        t_statistic = low = high = 0.0
    expected_mrr = lookup("inverse_harmonic_mean_rank").moments(num_candidates).expectation
    scale = 1.0 / (1.0 - expected_mrr)
    mrr_difference = float(difference.mean())
    return {
        "mrr_first": float(first.mean()),
        "mrr_second": float(second.mean()),
        "mrr_difference": mrr_difference,
        "mrr_difference_low": low,
        "mrr_difference_high": high,
        "amrr_difference": mrr_difference * scale,
        "amrr_difference_low": low * scale,
        "amrr_difference_high": high * scale,
        "wilcoxon_p": wilcoxon_p,
        "t_statistic": t_statistic,
        "t_p": t_p,
    }


def holm(p_values: Sequence[float], alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Holm's step-down correction: (rejected, adjusted p-values)."""
    rejected, adjusted, _, _ = multipletests(np.asarray(p_values, dtype=float), alpha=alpha, method="holm")
    return rejected, adjusted


def pairwise_table(
    rank_tables: dict[tuple[str, str], pd.DataFrame],
    *,
    alpha: float,
    confidence: float,
    resamples: int,
    seed: int,
) -> pd.DataFrame:
    """One row per (dataset, first model, second model), first < second in the run's
    order, with both tests Holm-corrected over every row."""
    by_dataset: dict[str, list[str]] = {}
    for dataset, model in rank_tables:
        by_dataset.setdefault(dataset, []).append(model)
    rows = []
    for dataset, models in by_dataset.items():
        for index, (first, second) in enumerate(itertools.combinations(models, 2)):
            a, b, n = reciprocal_ranks(
                rank_tables[dataset, first],
                rank_tables[dataset, second],
                (f"{dataset}/{first}", f"{dataset}/{second}"),
            )
            fit = compare_pair(
                a, b, n, confidence=confidence, resamples=resamples, seed=[seed, index, len(rows)]
            )
            rows.append({"dataset": dataset, "first": first, "second": second, "tasks": len(a), **fit})
    table = pd.DataFrame(rows, columns=PAIRWISE_COLUMNS[: len(PAIRWISE_COLUMNS) - 4])
    for test in ("wilcoxon", "t"):
        # one model per dataset leaves no pair: an empty table with every column
        rejected, adjusted = holm(table[f"{test}_p"], alpha) if len(table) else ([], [])
        table[f"{test}_p_holm"] = np.asarray(adjusted, dtype=float)
        table[f"{test}_significant"] = np.asarray(rejected, dtype=bool)
    return table[list(PAIRWISE_COLUMNS)]
