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

from kgrank.errors import KgrankInputError
from kgrank.metrics import lookup
from kgrank.stats import holm, mean_difference_interval, paired_tests, seed_sequence

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


def compare_pair(
    first: np.ndarray,
    second: np.ndarray,
    num_candidates: np.ndarray,
    *,
    confidence: float,
    bootstrap_resamples: int,
    seed: int | Sequence[int] | np.random.SeedSequence,
) -> dict[str, float]:
    """Tests and intervals for one pair of reciprocal-rank vectors (first minus second);
    degenerate pairs as :func:`kgrank.stats.paired_tests` and
    :func:`kgrank.stats.mean_difference_interval` answer them (identical vectors: p = 1 and
    an interval of exactly 0; a constant difference: that constant at both ends)."""
    difference = first - second
    tests = paired_tests(first, second)
    low, high = mean_difference_interval(
        first, second, confidence=confidence, resamples=bootstrap_resamples, seed=seed
    )
    expected_mrr = lookup("inverse_harmonic_mean_rank").metric.moments(num_candidates).expectation
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
        "wilcoxon_p": tests.wilcoxon_p,
        "t_statistic": tests.t_statistic,
        "t_p": tests.t_p,
    }


def pairwise_table(
    rank_tables: dict[tuple[str, str], pd.DataFrame],
    *,
    alpha: float,
    confidence: float,
    bootstrap_resamples: int,
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
                a,
                b,
                n,
                confidence=confidence,
                bootstrap_resamples=bootstrap_resamples,
                seed=seed_sequence(seed, index, len(rows)),
            )
            rows.append({"dataset": dataset, "first": first, "second": second, "tasks": len(a), **fit})
    table = pd.DataFrame(rows, columns=PAIRWISE_COLUMNS[: len(PAIRWISE_COLUMNS) - 4])
    for test in ("wilcoxon", "t"):
        # one model per dataset leaves no pair: an empty table with every column
        rejected, adjusted = holm(table[f"{test}_p"].to_numpy(dtype=float), alpha)
        table[f"{test}_p_holm"] = adjusted
        table[f"{test}_significant"] = rejected
    return table[list(PAIRWISE_COLUMNS)]
