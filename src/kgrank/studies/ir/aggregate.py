"""Item tables to metric values: the weighted mean of the items' per-item values, with the
expectation and variance of that mean under the random model and the adjusted index and
z-score that follow from them.

For rows with weights w, per-item values v, expectations e and variances var:
value = sum(w v) / sum(w), expectation = sum(w e) / sum(w) and variance =
sum(w^2 var) / sum(w)^2 (items independent under the random model). The adjusted index and
z-score come from :func:`kgrank.evaluation.metrics.derive`, so keys and signs match the rest of
kgrank. AP@20 and nDCG@20 have no moments: their expectation, variance, adjusted index and
z-score are NaN.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

import numpy as np
import pandas as pd

from kgrank.errors import KgrankInputError
from kgrank.evaluation.metrics import Variant, derive, lookup

K = TypeVar("K", bound=Hashable)
AVERAGINGS = ("micro", "macro", "macro-pykeen")
# Metrics computed per query by the evaluation (trec_eval's map_cut_20 and ndcg_cut_20).
IR_METRICS = ("ap_at_20", "ndcg_at_20")
# What every system's table of one evaluation must share, row by row: the same items of
# the same queries with the same candidates. Positions and metric values differ.
ALIGNED_COLUMNS = (
    "evaluation",
    "averaging",
    "item",
    "query",
    "side",
    "relation",
    "num_relevant",
    "num_candidates",
    "weight",
)
AGGREGATE_COLUMNS = (
    "model",
    "evaluation",
    "averaging",
    "metric",
    "value",
    "expectation",
    "variance",
    "adjusted_index",
    "z_score",
)
VALUE_COLUMNS = ("value", "expectation", "variance", "adjusted_index", "z_score")
# The per-system value columns a comparison ranks: raw, adjusted index, z-score.
VARIANT_COLUMNS = {"raw": "value", "adjusted index": "adjusted_index", "z-score": "z_score"}


def metric_keys(items: pd.DataFrame) -> list[str]:
    """The metrics an item table carries: every column with an ``_expectation`` partner
    (in table order), then AP@20 and nDCG@20 where present."""
    with_moments = [column for column in items.columns if f"{column}_expectation" in items.columns]
    return [*with_moments, *(key for key in IR_METRICS if key in items.columns)]


def has_moments(metric: str) -> bool:
    return metric not in IR_METRICS


def higher_is_better(metric: str) -> bool:
    """The direction of a metric (AP and nDCG: higher is better)."""
    return True if metric in IR_METRICS else lookup(metric).metric.increasing


def _same_values(first: pd.Series, second: pd.Series) -> bool:
    """np.array_equal of two columns; string columns without missing values are compared
    as they are stored (pyarrow), not first turned into object arrays, which costs a
    tenth of a second per column of an FB15k-237 item table."""
    if isinstance(first.dtype, pd.StringDtype) and first.dtype == second.dtype and not first.hasnans:
        return bool(first.array.equals(second.array))
    return np.array_equal(first.to_numpy(), second.to_numpy())


def check_aligned(items_by_system: Mapping[str, pd.DataFrame]) -> list[str]:
    """Check that every system's table holds the same items in the same order; return the
    systems in the mapping's order. Raises KgrankInputError naming the first system that
    differs from the first one, and the column where it does."""
    systems = list(items_by_system)
    if not systems:
        raise KgrankInputError("item tables: none given; pass one item table per system")
    reference_name = systems[0]
    reference = items_by_system[reference_name]
    for system in systems:
        table = items_by_system[system]
        missing = [column for column in (*ALIGNED_COLUMNS, "position") if column not in table.columns]
        if missing:
            raise KgrankInputError(
                f"item table of {system}: no column {missing[0]}; write it with the ir evaluation"
            )
        if len(table) != len(reference):
            raise KgrankInputError(
                f"item table of {system}: {len(table)} rows, {reference_name} has {len(reference)}; "
                "evaluate every system on the same evaluation sets"
            )
        for column in ALIGNED_COLUMNS:
            if not _same_values(table[column], reference[column]):
                row = int(np.flatnonzero(table[column].to_numpy() != reference[column].to_numpy())[0])
                raise KgrankInputError(
                    f"item table of {system}: column {column} differs from {reference_name}'s at row {row}; "
                    "evaluate every system on the same items in the same order"
                )
    return systems


def split_protocols(items_by_system: Mapping[K, pd.DataFrame]) -> dict[str, dict[K, pd.DataFrame]]:
    """Per filtering protocol (in the order of the first table), every system's rows of
    it, indexed from 0: each analysis runs on one protocol's items at a time, as the
    protocols rank the same items against different candidates."""
    if not items_by_system:
        raise KgrankInputError("item tables: none given; pass one item table per system")
    tables = list(items_by_system.items())
    for system, table in tables:
        if "protocol" not in table.columns:
            raise KgrankInputError(
                f"item table of {system}: no column protocol; rewrite it with `kgrank ir-evaluate`"
            )
    protocols = list(dict.fromkeys(tables[0][1]["protocol"]))
    return {
        protocol: {
            system: table[(table["protocol"] == protocol).to_numpy()].reset_index(drop=True)
            for system, table in tables
        }
        for protocol in protocols
    }


def with_protocol(frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One table from one per protocol, the protocol its first column."""
    tables = [frame.assign(protocol=protocol) for protocol, frame in frames.items()]
    table = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=["protocol"])
    return table[["protocol", *[column for column in table.columns if column != "protocol"]]]


def derived(metric: str, value: float, expectation: float, variance: float) -> tuple[float, float]:
    """Adjusted index and z-score of an aggregated value (NaN for AP@20 and nDCG@20).

    macro-pykeen has no variance (answers of a query are not independent): its adjusted
    index needs the expectation only, and kgrank.evaluation.metrics.derive's no-variance case leaves
    its z-score NaN.
    """
    if not has_moments(metric) or not np.isfinite(expectation):
        return float("nan"), float("nan")
    values = derive(lookup(metric).metric, value, expectation, variance if np.isfinite(variance) else None)
    return float(values[Variant.INDEX].value), float(values[Variant.Z_SCORE].value)


def aggregate_arrays(
    metric: str,
    weight: np.ndarray,
    values: np.ndarray,
    expectations: np.ndarray | None = None,
    variances: np.ndarray | None = None,
) -> dict[str, float]:
    """Value, expectation, variance, adjusted index and z-score of one metric from its
    per-row ``values`` (and, for a metric with moments, their ``expectations`` and
    ``variances``) with ``weight``: the arithmetic of :func:`aggregate_rows` on arrays."""
    total = weight.sum()
    if total <= 0:
        raise KgrankInputError(f"metric {metric}: rows with no positive weight; nothing to aggregate")
    value = float(weight @ values / total)
    if has_moments(metric):
        expectation = float(weight @ expectations / total)
        variance = float((weight * weight) @ variances / total**2)
    else:
        expectation = variance = float("nan")
    adjusted_index, z_score = derived(metric, value, expectation, variance)
    return {
        "value": value,
        "expectation": expectation,
        "variance": variance,
        "adjusted_index": adjusted_index,
        "z_score": z_score,
    }


def metric_columns(metrics: Sequence[str]) -> list[str]:
    """The columns of ``metrics`` with their expectation and variance columns where the
    metric has moments."""
    moments = ("", "_expectation", "_variance")
    return [
        f"{metric}{suffix}" for metric in metrics for suffix in (moments if has_moments(metric) else ("",))
    ]


def metric_arrays(items: pd.DataFrame, metrics: Sequence[str]) -> dict[str, np.ndarray]:
    """The :func:`metric_columns` of ``metrics`` as float arrays, by column name."""
    return {name: items[name].to_numpy(dtype=float) for name in metric_columns(metrics)}


def aggregate_rows(items: pd.DataFrame, metric: str, weights: np.ndarray | None = None) -> dict[str, float]:
    """Value, expectation, variance, adjusted index and z-score of one metric over the rows
    of ``items`` (one evaluation, one averaging) with ``weights`` (default: the weight column)."""
    weight = items["weight"].to_numpy(dtype=float) if weights is None else np.asarray(weights, dtype=float)
    columns = metric_arrays(items, [metric])
    return aggregate_arrays(
        metric,
        weight,
        columns[metric],
        columns.get(f"{metric}_expectation"),
        columns.get(f"{metric}_variance"),
    )


def defined_metrics(items: pd.DataFrame) -> list[str]:
    """The metrics with values on these rows (AP@20 and nDCG@20 only on macro rows)."""
    keys = metric_keys(items)
    defined = items[keys].notna().any().to_numpy()
    return [metric for metric, has_value in zip(keys, defined, strict=True) if has_value]


def aggregate_items(
    items_by_system: Mapping[str, pd.DataFrame],
    *,
    evaluations: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Every metric of every system per (evaluation, averaging), as a tidy table with the
    columns of AGGREGATE_COLUMNS. ``evaluations`` and ``metrics`` restrict it (default: all)."""
    systems = check_aligned(items_by_system)
    rows = []
    reference = items_by_system[systems[0]]
    present = list(dict.fromkeys(reference["evaluation"]))
    wanted = present if evaluations is None else list(evaluations)
    for evaluation in wanted:
        if evaluation not in present:
            raise KgrankInputError(
                f"item tables: no evaluation {evaluation!r} (they hold {', '.join(present)}); "
                "evaluate the systems on it or drop it"
            )
        for averaging in AVERAGINGS:
            mask = (
                (reference["evaluation"] == evaluation) & (reference["averaging"] == averaging)
            ).to_numpy()
            if not mask.any():
                continue
            for system in systems:
                subset = items_by_system[system][mask]
                for metric in metrics or defined_metrics(subset):
                    rows.append(
                        {
                            "model": system,
                            "evaluation": evaluation,
                            "averaging": averaging,
                            "metric": metric,
                            **aggregate_rows(subset, metric),
                        }
                    )
    return pd.DataFrame(rows, columns=list(AGGREGATE_COLUMNS))
