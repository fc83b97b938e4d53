"""kgrank's Python API: evaluate ranks from any model, without Snakemake or training.

>>> import kgrank
>>> table = kgrank.evaluate([1, 3, 2, 10, 1], num_candidates=14, metrics=["mrr", "amrr", "z_mrr"])
>>> columns = ["metric", "value", "ci_low", "ci_high", "random_expectation"]
>>> print(table[columns].round(3).to_string(index=False))
                             metric  value  ci_low  ci_high  random_expectation
         inverse_harmonic_mean_rank  0.587   0.273    0.900               0.232
adjusted_inverse_harmonic_mean_rank  0.462   0.054    0.870               0.000
       z_inverse_harmonic_mean_rank  3.273   0.379    6.167               0.000
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from kgrank.data.rank_table import RANK_COLUMNS, SIDES
from kgrank.defaults import DEFAULT_CONFIDENCE, SYSTEM_SIDES
from kgrank.errors import KgrankInputError
from kgrank.evaluation.metrics import (
    DEFAULT_HITS,
    INTERVAL_COLUMNS,
    WEIGHTED_METRICS,
    Metric,
    MetricKey,
    Variant,
    check_weights,
    default_metrics,
    evaluate_ranks,
    lookup,
)

# evaluate()'s table names the two variances apart: `random_expectation` and
# `random_variance` are the metric's moments under the random model (uniform ranks on
# each task's candidates; the z-score divides by the root of that variance), `ci_low` and
# `ci_high` the sampling interval of the model's own value over its test tasks.
RENAMED_COLUMNS = {
    "expectation": "random_expectation",
    "variance": "random_variance",
    "method": "random_method",
}
EVALUATION_COLUMNS = [
    "metric",
    "label",
    "value",
    *INTERVAL_COLUMNS[:2],
    "random_expectation",
    "random_variance",
    INTERVAL_COLUMNS[2],
    "random_method",
]


def _as_vector(values: object, name: str) -> np.ndarray:
    vector = np.asarray(values, dtype=float).reshape(-1)
    if vector.size == 0:
        raise KgrankInputError(f"{name}: empty; give one value per test task")
    return vector


def _selection(
    metrics: Iterable[str] | None, hits: Sequence[int], weighted: bool = False
) -> tuple[list[Metric], set[str] | None]:
    """The base metrics to compute and the keys to keep (None: every row); with weights,
    every metric that takes them by default."""
    if metrics is None:
        return (list(WEIGHTED_METRICS) if weighted else default_metrics(hits)), None
    keys = [lookup(name) for name in ([metrics] if isinstance(metrics, str) else metrics)]
    bases: dict[str, Metric] = {}
    for key in keys:
        bases.setdefault(key.metric.key, key.metric)
    return list(bases.values()), {key.key for key in keys}


def evaluate(
    ranks: Sequence[float] | np.ndarray | pd.Series | pd.DataFrame | str | os.PathLike[str] | tuple,
    num_candidates: int | Sequence[int] | np.ndarray | pd.Series | None = None,
    *,
    sides: Sequence[str] | np.ndarray | pd.Series | None = None,
    metrics: Iterable[str] | str | None = None,
    hits: Sequence[int] = DEFAULT_HITS,
    confidence: float | None = DEFAULT_CONFIDENCE,
    seed: int = 0,
    rank_type: str = "realistic",
    weights: Sequence[float] | np.ndarray | pd.Series | str | None = None,
    dataset: str | os.PathLike[str] | None = None,
    side: str = "both",
    **system_options: Any,
) -> pd.DataFrame:
    """Every metric of one model's ranks with its sampling interval and the random
    model's expectation, variance, adjusted index and z-score.

    ``ranks`` is a vector of ranks (with ``num_candidates``), or a system as `kgrank
    evaluate` takes it, with ``dataset`` (a PyKEEN name, a prepared folder or a folder of
    raw splits): a PyKEEN pipeline folder, a rank file of any framework, a pair (score
    matrix, query index), or a rank table of kgrank's format (a DataFrame, which needs no
    dataset). A system gives :func:`evaluate_system`'s table for ``side`` (both, head,
    tail, all); ``system_options`` go to :func:`kgrank.systems.load_system`
    (``trusted=True`` for a PyKEEN folder you trust, ``tolerance``, ``filter_splits``,
    ``allow_partial``, ``identifiers``, ``column_labels``, ``batch_size``, ``device``).
    >>> table = evaluate("pk_distmult", dataset="nations", trusted=True)  # doctest: +SKIP

    ``ranks``: one rank per test task (the realistic rank where scores tie), in
    [1, num_candidates]; ``num_candidates``: the number of candidates of each task, the
    true answer included (one number for all, or one per task); ``sides`` (optional):
    ``head``/``tail`` per task, which adds the rows of each side; ``metrics``: names to
    keep (any name :func:`lookup` takes; default: every registered metric and variant);
    ``confidence``: the level of the sampling interval (None: no interval); ``seed`` and
    ``rank_type`` (which rank the vector holds, among optimistic, realistic, pessimistic
    and random) name the stream of a resampled interval, so that the same ranks get the
    same interval here, from ``kgrank evaluate`` and in ``kgrank metrics``' table;
    ``weights`` (one nonnegative weight per task, e.g. its number of negatives, N - 1, as
    Tiwari et al. weigh) evaluates the metrics that take weights (WGMR and IWGMR, the
    default then) with their exact moments under the random model; each side uses its own
    tasks' weights.

    Returns a tidy table: ``metric`` (key), ``label``, ``value``, ``ci_low``/``ci_high``
    (how far the value would move over test sets like this one; ``ci_method`` says how),
    ``random_expectation``/``random_variance`` (the metric under the random model) and
    ``random_method`` (how those moments were obtained); with ``sides``, a ``side``
    column first (``both``, ``head``, ``tail``).

    >>> table = evaluate([1, 2, 1, 5], 14, sides=["head", "tail", "head", "tail"], metrics="hits@1")
    >>> print(table[["side", "metric", "value"]].to_string(index=False))
    side    metric  value
    both hits_at_1    0.5
    head hits_at_1    1.0
    tail hits_at_1    0.0
    """
    options = {"metrics": metrics, "hits": hits, "confidence": confidence, "seed": seed, "weights": weights}
    is_pair = (
        isinstance(ranks, tuple)
        and len(ranks) == 2
        and all(isinstance(part, (str, os.PathLike)) for part in ranks)
    )
    if isinstance(ranks, (str, os.PathLike, pd.DataFrame)) or is_pair:
        table = (
            ranks if isinstance(ranks, pd.DataFrame) else _system_ranks(ranks, dataset, seed, system_options)
        )
        return evaluate_system(table, rank_type=rank_type, side=side, **options)
    if dataset is not None or system_options:
        given = ", ".join(["dataset"] * (dataset is not None) + list(system_options))
        raise KgrankInputError(
            f"evaluate: {given} go with a system (a path or a rank table), not a rank vector"
        )
    if num_candidates is None:
        raise KgrankInputError("evaluate: a rank vector needs num_candidates (one per rank, or one for all)")
    rank_vector, candidates = _checked_vectors(ranks, num_candidates)
    groups: list[tuple[str, np.ndarray]] = [("both", np.ones(rank_vector.shape, dtype=bool))]
    if sides is not None:
        side_vector = np.asarray(sides).reshape(-1)
        if side_vector.shape != rank_vector.shape:
            raise KgrankInputError(f"sides: {side_vector.size} values for {rank_vector.size} ranks")
        unknown = sorted(set(side_vector.tolist()) - set(SIDES))
        if unknown:
            raise KgrankInputError(f"sides: {unknown[0]!r} is not a side; use head or tail")
        groups += [(side, side_vector == side) for side in SIDES if np.any(side_vector == side)]
    if isinstance(weights, str):
        raise KgrankInputError(
            f"weights {weights!r}: a scheme needs a rank table (its candidate counts or relations); give one "
            "weight per rank, or call kgrank.api.evaluate_system(table, weights=...)"
        )
    if weights is not None:
        options["weights"] = check_weights(np.asarray(weights, dtype=float).reshape(-1), rank_vector.size)
    table = _evaluation_table(rank_vector, candidates, groups, rank_type=rank_type, **options)
    return table if sides is not None else table.drop(columns="side")


def _system_ranks(
    source: str | os.PathLike[str] | tuple, dataset: str | os.PathLike[str] | None, seed: int, options: dict
) -> pd.DataFrame:
    """The rank table of a system from outside, as `kgrank evaluate` loads it."""
    from kgrank.systems import dataset_folder, load_system

    if dataset is None:
        raise KgrankInputError(
            f"evaluate: {source!r} is a system; name its dataset (dataset='nations', a prepared folder or a "
            "folder of raw splits)"
        )
    with dataset_folder(dataset) as folder:
        return load_system(source, folder, seed=seed, **options)


def _checked_vectors(ranks: object, num_candidates: object) -> tuple[np.ndarray, np.ndarray]:
    """The ranks as floats and the candidate counts as integers, one per rank."""
    rank_vector = _as_vector(ranks, "ranks")
    candidates = _as_vector(num_candidates, "num_candidates")
    if candidates.size == 1:
        candidates = np.full(rank_vector.shape, candidates[0])
    if candidates.shape != rank_vector.shape:
        raise KgrankInputError(
            f"num_candidates: {candidates.size} values for {rank_vector.size} ranks; "
            "give one per task or one for all"
        )
    if not np.all(candidates == np.round(candidates)) or candidates.min() < 1:
        raise KgrankInputError("num_candidates: every count must be a whole number of at least 1")
    return rank_vector, candidates.astype(np.int64)


def _evaluation_table(
    rank_vector: np.ndarray,
    candidates: np.ndarray,
    groups: Sequence[tuple[str, np.ndarray]],
    *,
    metrics: Iterable[str] | str | None,
    hits: Sequence[int],
    confidence: float | None,
    seed: int,
    rank_type: str,
    weights: np.ndarray | None,
) -> pd.DataFrame:
    """:func:`evaluate`'s table, a ``side`` column first, for each (side, rows) group:
    :func:`kgrank.evaluation.metrics.evaluate_ranks` seeded by the side and the rank type."""
    if rank_type not in RANK_COLUMNS:
        raise KgrankInputError(f"rank type {rank_type!r} is not one of {', '.join(RANK_COLUMNS)}")
    chosen, keep = _selection(metrics, hits, weighted=weights is not None)
    rows = []
    for side, mask in groups:
        for row in evaluate_ranks(
            rank_vector[mask],
            candidates[mask],
            chosen,
            weights=None if weights is None else weights[mask],
            confidence=confidence,
            seed=seed,
            stream=(side, rank_type),
        ):
            if keep is None or row["metric"] in keep:
                rows.append({"side": side, **row})
    labels = {
        name.key: name.label
        for metric in chosen
        for name in [MetricKey(metric), *(MetricKey(metric, variant) for variant in Variant)]
    }
    table = pd.DataFrame(rows).rename(columns=RENAMED_COLUMNS)
    table.insert(table.columns.get_loc("metric") + 1, "label", table["metric"].map(labels))
    return table[["side"] + [column for column in EVALUATION_COLUMNS if column in table.columns]]


def evaluate_system(
    table: pd.DataFrame,
    *,
    rank_type: str = "realistic",
    side: str = "both",
    metrics: Iterable[str] | str | None = None,
    hits: Sequence[int] = DEFAULT_HITS,
    confidence: float | None = DEFAULT_CONFIDENCE,
    seed: int = 0,
    weights: str | Sequence[float] | np.ndarray | None = None,
) -> pd.DataFrame:
    """:func:`evaluate` on a rank table of kgrank's format (`kgrank ranks`, or
    :func:`kgrank.systems.load_system` for a system from outside).

    ``rank_type``: the rank column to evaluate (optimistic, realistic, pessimistic,
    random); ``side``: ``both`` (every row), ``head``, ``tail``, or ``all`` (the three);
    ``weights``: one per row, or a scheme of :func:`kgrank.evaluation.weighted.scheme_weights`
    (``negatives``, ``relation``, ``uniform``); the other arguments as in :func:`evaluate`.
    Returns :func:`evaluate`'s table with ``side`` and ``rank_type`` columns first.
    """
    if rank_type not in RANK_COLUMNS:
        raise KgrankInputError(f"rank type {rank_type!r} is not one of {', '.join(RANK_COLUMNS)}")
    if side not in SYSTEM_SIDES:
        raise KgrankInputError(f"side {side!r} is not one of {', '.join(SYSTEM_SIDES)}")
    missing = [column for column in ("side", rank_type, "num_candidates") if column not in table.columns]
    if missing:
        raise KgrankInputError(f"rank table: column(s) {missing} missing; pass a table of kgrank's format")
    if isinstance(weights, str):
        from kgrank.evaluation.weighted import scheme_weights

        weights = scheme_weights(table, weights)
    if weights is not None:
        weights = check_weights(np.asarray(weights, dtype=float).reshape(-1), len(table))
    options = {
        "metrics": metrics,
        "hits": hits,
        "confidence": confidence,
        "seed": seed,
        "rank_type": rank_type,
    }
    if side == "all":
        sides = table["side"]
        result = evaluate(table[rank_type], table["num_candidates"], sides=sides, weights=weights, **options)
    else:
        rows = (table["side"] == side).to_numpy() if side != "both" else np.ones(len(table), dtype=bool)
        if not rows.any():
            raise KgrankInputError(f"side {side}: the rank table has no row of this side; pick another side")
        subset = table[rows]
        rank_vector, candidates = _checked_vectors(subset[rank_type], subset["num_candidates"])
        every_row = np.ones(rank_vector.shape, dtype=bool)
        side_weights = None if weights is None else weights[rows]
        result = _evaluation_table(
            rank_vector, candidates, [(side, every_row)], weights=side_weights, **options
        )
    result.insert(1, "rank_type", rank_type)
    return result


SAMPLED_EVALUATION_COLUMNS = [
    "side",
    "rank_type",
    "num_samples",
    "metric",
    "label",
    "estimator",
    "full_value",
    "estimate_expectation",
    "bias",
    "standard_deviation",
    "rmse",
    "sampled_share",
]


def evaluate_sampled(
    table: pd.DataFrame,
    num_samples: int | Sequence[int],
    *,
    estimators: Sequence[str] | None = None,
    metrics: Iterable[str] | str = ("mrr", "hits@10"),
    side: str = "both",
    rank_type: str = "optimistic",
    regularisation: float = 0.0,
) -> pd.DataFrame:
    """What a sampled protocol (each task ranked against ``num_samples`` random negatives,
    as OGB and DGL-KE rank) would report for a system, and how well each estimator of the
    full-ranking metric recovers it (:mod:`kgrank.evaluation.sampled`; Krichene & Rendle 2020).

    ``table``: a rank table of kgrank's format with the full optimistic and pessimistic
    ranks (`kgrank ranks`, :func:`kgrank.systems.load_system`); ``num_samples``: one k or
    several; ``estimators``: among naive (the sampled metric itself, what sampled
    protocols report), rescaled, posterior-rank and corrected (default: all four);
    ``metrics``: arithmetic means of a rank transformation (MRR, Hits@k, MR, ...);
    ``rank_type``: optimistic or pessimistic (each has a hypergeometric law given its full
    rank); ``regularisation``: the corrected estimator's gamma in [0, 1].

    Returns one row per side, k, metric and estimator: the full-ranking value, the
    estimate's expectation and standard deviation over the draw of negatives, its bias and
    RMSE, all exact (summed over every sampled rank with its hypergeometric probability,
    not simulated), and the share of tasks with more than k negatives (the rest keep all
    of theirs and rank as in the full ranking).
    """
    from kgrank.defaults import SAMPLED_ESTIMATORS
    from kgrank.evaluation.sampled import FullRanks, estimator_moments

    if side not in SYSTEM_SIDES:
        raise KgrankInputError(f"side {side!r} is not one of {', '.join(SYSTEM_SIDES)}")
    sizes = [num_samples] if isinstance(num_samples, (int, np.integer)) else list(num_samples)
    chosen = list(SAMPLED_ESTIMATORS if estimators is None else estimators)
    keys = [lookup(name) for name in ([metrics] if isinstance(metrics, str) else metrics)]
    derived = [key for key in keys if key.variant is not None]
    if derived:
        raise KgrankInputError(
            f"metric {derived[0].key}: the estimators estimate a base metric; name {derived[0].metric.key}"
        )
    rows = []
    for which in ("both", *SIDES) if side == "all" else [side]:
        subset = table if which == "both" else table[table["side"] == which]
        if subset.empty:
            raise KgrankInputError(f"side {which}: the rank table has no row of this side; pick another side")
        full = FullRanks.from_table(subset)
        for size in sizes:
            moments = estimator_moments(
                full,
                size,
                chosen,
                [key.metric for key in keys],
                rank_type=rank_type,
                regularisation=regularisation,
            )
            share = float(np.mean(full.num_candidates - 1 > size))
            for key in keys:
                for estimator in chosen:
                    exact = moments[(estimator, key.metric.key)]
                    rows.append(
                        {
                            "side": which,
                            "rank_type": rank_type,
                            "num_samples": int(size),
                            "metric": key.metric.key,
                            "label": key.label,
                            "estimator": estimator,
                            "full_value": exact.full_value,
                            "estimate_expectation": exact.expectation,
                            "bias": exact.bias,
                            "standard_deviation": float(np.sqrt(exact.variance)),
                            "rmse": exact.rmse,
                            "sampled_share": share,
                        }
                    )
    return pd.DataFrame(rows, columns=SAMPLED_EVALUATION_COLUMNS)
