"""Which differences between models are real: for every pair of models on a dataset, a
paired test on the per-task reciprocal ranks (Wilcoxon signed-rank and paired t), a
bootstrap interval of the difference in MRR and in AMRR, and Holm's correction over all
comparisons of the study (one family per test).

An adapter of the core's one comparison engine (:func:`kgrank.evaluation.comparison.compare` on the
realistic ranks, metric MRR), in its column names: both models of a pair rank the same
tasks against the same filtered candidates, so E[MRR] under the random model is the same
for both and the AMRR difference (``adjusted_difference``) is the MRR difference divided
by 1 - E[MRR], its interval scaled alike.
"""

from __future__ import annotations

import pandas as pd

from kgrank.evaluation.comparison import PAIR_COLUMNS, compare_rank_tables

# The engine's pair columns (kgrank.evaluation.comparison.PAIR_COLUMNS) the study keeps: its one
# metric is MRR, its models are better or worse by the sign of the difference.
PAIRWISE_COLUMNS = tuple(column for column in PAIR_COLUMNS if column not in {"random_expectation", "better"})

# What the report table prints of each pair (the TSV keeps every column).
REPORTED_COLUMNS = tuple(
    column
    for column in PAIRWISE_COLUMNS
    if column not in {"metric", "tasks", "value_first", "value_second", "wilcoxon_p", "t_statistic", "t_p"}
)
METRIC = "inverse_harmonic_mean_rank"


def pairwise_table(
    rank_tables: dict[tuple[str, str], pd.DataFrame],
    *,
    alpha: float,
    confidence: float,
    bootstrap_resamples: int,
    seed: int,
) -> pd.DataFrame:
    """One row per (dataset, first model, second model), first before second in the run's
    order, with both tests Holm-corrected over every row; each pair's bootstrap seeded by
    (seed, dataset, metric, first, second) as in ``kgrank compare``."""
    by_dataset: dict[str, dict[str, pd.DataFrame]] = {}
    for (dataset, model), table in rank_tables.items():
        by_dataset.setdefault(dataset, {})[model] = table
    compared = {dataset: models for dataset, models in by_dataset.items() if len(models) > 1}
    if not compared:
        # one model per dataset leaves no pair: an empty table with every column
        return pd.DataFrame(columns=list(PAIRWISE_COLUMNS))
    result = compare_rank_tables(
        compared,
        metrics=METRIC,
        alpha=alpha,
        confidence=confidence,
        bootstrap_resamples=bootstrap_resamples,
        seed=seed,
    )
    return result.pairs[list(PAIRWISE_COLUMNS)].reset_index(drop=True)
