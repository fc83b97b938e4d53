"""Discriminative power: for every pair of systems, per metric and averaging on one
evaluation, a paired two-sided t-test (scipy.stats.ttest_rel) on the per-item values, the
sorted p-values (a discriminative-power curve) and the number of pairs below the
significance level, before and after Holm's correction over the pairs of that metric and
averaging (statsmodels' multipletests). The test and the correction are kgrank.stats'
``paired_tests`` and ``holm`` (their contract for identical vectors and constant
differences).

The paired items: micro, the answers (micro rows); macro, the queries (macro rows, AP@20
and nDCG@20 included); macro-pykeen, also the queries, each scored by the weighted mean
of its answers' values (its macro-pykeen rows), so that the test is on one value per
query as the macro-pykeen average is a mean over queries.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from kgrank.errors import KgrankInputError
from kgrank.stats import holm, paired_tests
from kgrank.studies.ir.aggregate import AVERAGINGS, check_aligned, defined_metrics

DISCRIMINATION_COLUMNS = (
    "protocol",
    "dataset",
    "evaluation",
    "averaging",
    "metric",
    "system_a",
    "system_b",
    "num_items",
    "mean_difference",
    "statistic",
    "p_value",
    "p_holm",
)
DISCRIMINATION_SUMMARY_COLUMNS = (
    "protocol",
    "dataset",
    "evaluation",
    "averaging",
    "metric",
    "num_pairs",
    "alpha",
    "significant",
    "significant_holm",
)


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
    process; kgrank.stats.holm keeps the objects held before the call out of it
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
    frames = []
    for averaging in AVERAGINGS:
        rows_of_averaging = tables[systems[0]]["averaging"] == averaging
        if not rows_of_averaging.any():
            continue
        defined = defined_metrics(tables[systems[0]][rows_of_averaging])
        for metric in [key for key in metrics if key in defined] if metrics is not None else defined:
            vectors = {system: per_item_values(tables[system], averaging, metric) for system in systems}
            rows = []
            for first, second in itertools.combinations(systems, 2):
                test = paired_tests(vectors[first], vectors[second])
                rows.append(
                    {
                        "protocol": protocol,
                        "dataset": dataset,
                        "evaluation": evaluation,
                        "averaging": averaging,
                        "metric": metric,
                        "system_a": first,
                        "system_b": second,
                        "num_items": len(vectors[first]),
                        "mean_difference": test.mean_difference,
                        "statistic": test.t_statistic,
                        "p_value": test.t_p,
                    }
                )
            frame = pd.DataFrame(rows, columns=list(DISCRIMINATION_COLUMNS[:-1]))
            frame["p_holm"] = holm(frame["p_value"].to_numpy(), alpha)[1]
            frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=list(DISCRIMINATION_COLUMNS))
    return pd.concat(frames, ignore_index=True)[list(DISCRIMINATION_COLUMNS)]


def discrimination_summary(pairs: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Per protocol, dataset, evaluation, averaging and metric: the number of pairs and of those
    with p below ``alpha`` before and after Holm (columns DISCRIMINATION_SUMMARY_COLUMNS)."""
    if "protocol" not in pairs.columns:  # a table of one protocol, written without the column
        pairs = pairs.assign(protocol="")
    group = ["protocol", "dataset", "evaluation", "averaging", "metric"]
    summary = (
        pairs.assign(below=pairs["p_value"] < alpha, below_holm=pairs["p_holm"] < alpha)
        .groupby(group, sort=False)
        .agg(
            num_pairs=("p_value", "size"),
            significant=("below", "sum"),
            significant_holm=("below_holm", "sum"),
        )
        .reset_index()
    )
    summary["alpha"] = alpha
    return summary[list(DISCRIMINATION_SUMMARY_COLUMNS)]
