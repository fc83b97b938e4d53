"""Discriminative power: for every pair of systems, per metric and averaging on one
evaluation, a paired two-sided t-test (scipy.stats.ttest_rel) on the per-item values, the
sorted p-values (a discriminative-power curve) and the number of pairs below the
significance level, before and after Holm's correction over the pairs of that metric and
averaging (statsmodels' multipletests). The pairs are the core's one comparison engine
(:func:`kgrank.evaluation.comparison.paired_comparisons`, t-test only, no interval) and its Holm
within a family (:func:`kgrank.evaluation.comparison.holm_within`), in its column names.

The paired items: micro, the answers (micro rows); macro, the queries (macro rows, AP@20
and nDCG@20 included); macro-pykeen, also the queries, each scored by the weighted mean
of its answers' values (its macro-pykeen rows), so that the test is on one value per
query as the macro-pykeen average is a mean over queries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from kgrank.errors import KgrankInputError
from kgrank.evaluation.comparison import holm_within, paired_comparisons
from kgrank.studies.ir.aggregate import AVERAGINGS, check_aligned, defined_metrics

FAMILY = ("averaging", "metric")
# a panel of the figure, a row of the summary: one family on one evaluation
GROUP = ("protocol", "dataset", "evaluation", *FAMILY)
DISCRIMINATION_COLUMNS = (
    *GROUP,
    "first",
    "second",
    "tasks",
    "mean_difference",
    "t_statistic",
    "t_p",
    "t_p_holm",
)
DISCRIMINATION_SUMMARY_COLUMNS = (*GROUP, "num_pairs", "alpha", "significant", "significant_holm")


def per_item_values(items: pd.DataFrame, averaging: str, metric: str) -> np.ndarray:
    """The paired values of one system: one per answer (micro) or per query (macro,
    macro-pykeen: the weighted mean of the query's rows), in query order for the latter."""
    rows = items[items["averaging"] == averaging]
    values = rows[metric].to_numpy(dtype=float)
    if averaging != "macro-pykeen":
        return values
    weight = rows["weight"].to_numpy(dtype=float)
    query = rows["query"].to_numpy()
    _, position = np.unique(query, return_inverse=True)
    return np.bincount(position, weight * values) / np.bincount(position, weight)


def discrimination(
    items_by_system: Mapping[str, pd.DataFrame],
    evaluation: str,
    *,
    alpha: float,
    dataset: str = "",
    metrics: Sequence[str] | None = None,
    protocol: str = "",
) -> pd.DataFrame:
    """One row per (averaging, metric, pair of systems in the mapping's order) on one
    evaluation, columns DISCRIMINATION_COLUMNS; Holm over the pairs of each averaging and
    metric. ``dataset`` and ``protocol`` fill their columns, so that tables of several
    datasets and protocols can be stacked; ``metrics`` restricts the metrics (default:
    every metric of the table).

    statsmodels' Holm calls gc.collect() on every call, a walk over every object of the
    process; kgrank.evaluation.stats.holm keeps the objects held before the call out of it
    (kgrank.garbage)."""
    systems = check_aligned(items_by_system)
    reference = items_by_system[systems[0]]
    present = list(dict.fromkeys(reference["evaluation"]))
    if evaluation not in present:
        raise KgrankInputError(
            f"item tables: no evaluation {evaluation!r} (they hold {', '.join(present)}); "
            "evaluate the systems on it or drop it"
        )
    mask = (reference["evaluation"] == evaluation).to_numpy()
    tables = {system: items_by_system[system][mask] for system in systems}
    rows = []
    for averaging in AVERAGINGS:
        rows_of_averaging = tables[systems[0]]["averaging"] == averaging
        if not rows_of_averaging.any():
            continue
        defined = defined_metrics(tables[systems[0]][rows_of_averaging])
        for metric in [key for key in metrics if key in defined] if metrics is not None else defined:
            values = np.column_stack(
                [per_item_values(tables[system], averaging, metric) for system in systems]
            )
            rows += [
                {"averaging": averaging, "metric": metric, **pair}
                for pair in paired_comparisons(values, systems, tests=("t",))
            ]
    if not rows:
        return pd.DataFrame(columns=list(DISCRIMINATION_COLUMNS))
    table = holm_within(pd.DataFrame(rows), tests=("t",), alpha=alpha, family=FAMILY)
    return table.assign(protocol=protocol, dataset=dataset, evaluation=evaluation)[
        list(DISCRIMINATION_COLUMNS)
    ]


def discrimination_summary(pairs: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Per protocol, dataset, evaluation, averaging and metric: the number of pairs and of those
    with p below ``alpha`` before and after Holm (columns DISCRIMINATION_SUMMARY_COLUMNS)."""
    if "protocol" not in pairs.columns:  # a table of one protocol, written without the column
        pairs = pairs.assign(protocol="")
    summary = (
        pairs.assign(below=pairs["t_p"] < alpha, below_holm=pairs["t_p_holm"] < alpha)
        .groupby(list(GROUP), sort=False)
        .agg(
            num_pairs=("t_p", "size"),
            significant=("below", "sum"),
            significant_holm=("below_holm", "sum"),
        )
        .reset_index()
    )
    summary["alpha"] = alpha
    return summary[list(DISCRIMINATION_SUMMARY_COLUMNS)]
