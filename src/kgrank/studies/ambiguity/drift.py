"""Candidate-set size: the same ranking tasks evaluated against fewer candidates, and how
far each metric moves when only the number of candidates moves.

Two protocols. *Sampled*: each true answer against k candidates, itself and k - 1 drawn
uniformly without replacement from its filtered non-answers. Given a task's filtered rank
(g candidates above the true one, t tied with it, N_i - 1 others in all), the number of
drawn candidates above it is hypergeometric (g of N_i - 1, k - 1 draws) and the number
tied with it hypergeometric among the rest, so the sampled ranks are drawn exactly from
the rank table, without scoring again, for any k and any number of seeds
(``kgrank.evaluation.sampled.draw_above_and_tied``; ``kgrank.engine.ranks.sampled_ranks`` draws the same law
from the scores, one seed per file).
*Subsets*: the entity-alignment protocol transferred (``subsets.py``): a random share of
the test triples, candidates restricted to the entities occurring in it.

The drift is the least-squares slope of a metric against log10 of the mean candidate
count (per decade of candidates), with a bootstrap interval over the (size, seed) points;
a metric is flat when the interval contains 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from kgrank.errors import KgrankInputError
from kgrank.evaluation.metrics import Variant, lookup, metric_rows
from kgrank.evaluation.sampled import draw_above_and_tied
from kgrank.evaluation.stats import bootstrap_interval, seed_sequence, seed_stream

ALL_CANDIDATES = "all"
# The metrics whose drift is measured: the raw ones, their adjusted indices, their z-scores.
RAW_METRICS = ("arithmetic_mean_rank", "hits_at_10", "inverse_harmonic_mean_rank")
DRIFT_VARIANTS = (None, Variant.INDEX, Variant.Z_SCORE)
DRIFT_COLUMNS = (
    "dataset",
    "model",
    "protocol",
    "size",
    "replicate",
    "mean_candidates",
    "metric",
    "value",
)


def drift_metric_keys() -> list[str]:
    """MR, Hits@10, MRR, then AMRI, AH@10, AMRR, then their z-scores (registry keys)."""
    return [
        key if variant is None else lookup(key).metric.variant_key(variant)
        for variant in DRIFT_VARIANTS
        for key in RAW_METRICS
    ]


def sampled_ranks_from_counts(
    table: pd.DataFrame, candidates: int | None, generator: np.random.Generator
) -> pd.DataFrame:
    """Ranks against ``candidates`` candidates per task (the true one included), drawn
    from a filtered rank table's counts; None keeps every candidate. A task with fewer
    candidates keeps them all."""
    n = table["num_candidates"].to_numpy(dtype=np.int64)
    optimistic = table["optimistic"].to_numpy(dtype=np.int64)
    pessimistic = table["pessimistic"].to_numpy(dtype=np.int64)
    if candidates is None:
        kept = n
        above, tied = optimistic - 1, pessimistic - optimistic
    else:
        kept = np.minimum(n, candidates)
        above, tied = draw_above_and_tied(generator, optimistic, pessimistic, n, kept - 1)
    return pd.DataFrame(
        {
            "side": table["side"].to_numpy(),
            "optimistic": above + 1,
            "realistic": above + 1 + tied / 2.0,
            "pessimistic": above + 1 + tied,
            "num_candidates": kept,
        }
    )


def drift_values(realistic: np.ndarray, num_candidates: np.ndarray) -> dict[str, float]:
    """The drift metrics (``drift_metric_keys``) of one set of realistic ranks, both sides."""
    wanted = set(drift_metric_keys())
    values = {}
    for key in RAW_METRICS:
        for row in metric_rows(realistic, num_candidates, lookup(key).metric):
            if row["metric"] in wanted:
                values[row["metric"]] = row["value"]
    return values


def _drift_rows(protocol: str, size: str, replicate: int, realistic: np.ndarray, n: np.ndarray) -> list[dict]:
    """One row per drift metric of one set of realistic ranks against ``n`` candidates."""
    point = {"protocol": protocol, "size": size, "replicate": replicate, "mean_candidates": float(n.mean())}
    return [
        {**point, "metric": metric, "value": value} for metric, value in drift_values(realistic, n).items()
    ]


def sampled_drift(
    table: pd.DataFrame, sizes: Sequence[int | None], repetitions: int, seed: int | Sequence[int]
) -> pd.DataFrame:
    """Drift metrics of one rank table against each candidate-set size and seed
    (protocol, size, replicate, mean_candidates, metric, value)."""
    rows = []
    all_candidates = table["num_candidates"].to_numpy()
    for size in sizes:
        # k at least every N_i keeps every candidate, as `all` does: the same point again
        # would weigh that end of the slope fit twice over
        saturated = size is not None and bool((all_candidates <= size).all())
        if saturated and None in sizes:
            continue
        # with every candidate kept nothing is drawn: one replicate says it all
        for replicate in range(1 if size is None or saturated else repetitions):
            generator = seed_stream(seed, size or 0, replicate)
            ranks = sampled_ranks_from_counts(table, size, generator)
            label = ALL_CANDIDATES if size is None else str(size)
            n = ranks["num_candidates"].to_numpy()
            rows += _drift_rows("sampled", label, replicate, ranks["realistic"].to_numpy(), n)
    return pd.DataFrame(rows)


def subset_drift(subset_ranks: pd.DataFrame) -> pd.DataFrame:
    """Drift metrics of the subset protocol's ranks (one row per fraction, replicate,
    triple and side, as ``subsets.subset_rank_table`` writes them)."""
    rows = []
    for (fraction, replicate), group in subset_ranks.groupby(["fraction", "replicate"], sort=True):
        n = group["num_candidates"].to_numpy()
        realistic = (group["optimistic"].to_numpy() + group["pessimistic"].to_numpy()) / 2.0
        rows += _drift_rows("subsets", f"{fraction:g}", int(replicate), realistic, n)
    return pd.DataFrame(rows)


def check_sizes_draw(rank_tables: dict[tuple[str, str], pd.DataFrame], sizes: Sequence[int | None]) -> None:
    """A size that keeps every candidate of every task of every table draws nothing: it
    repeats ``all`` (dropped, or standing in for it). Refused where the filtered candidate
    counts are known; the parse-time check (``settings.check_candidate_sizes``) sees only
    the datasets' entity counts."""
    if not rank_tables:
        return
    largest = max(int(table["num_candidates"].max()) for table in rank_tables.values())
    for size in sizes:
        if size is not None and size >= largest:
            raise KgrankInputError(
                f"studies.ambiguity.candidate_sizes: {size} keeps every candidate of every "
                f"task (no task has more than {largest}), as `all` does; use sizes below {largest} "
                "(and `all` for every candidate)"
            )


def drift_table(
    rank_tables: dict[tuple[str, str], pd.DataFrame],
    subset_tables: dict[tuple[str, str], pd.DataFrame],
    sizes: Sequence[int | None],
    repetitions: int,
    seed: int,
) -> pd.DataFrame:
    """The sampled protocol on every rank table, then the subset protocol on every subset
    rank table, each (dataset, model) in the order given (``DRIFT_COLUMNS``)."""
    check_sizes_draw(rank_tables, sizes)
    frames = [
        sampled_drift(table, sizes, repetitions, seed).assign(dataset=dataset, model=model)
        for (dataset, model), table in rank_tables.items()
    ]
    frames += [
        subset_drift(table).assign(dataset=dataset, model=model)
        for (dataset, model), table in subset_tables.items()
    ]
    drift = pd.concat(frames, ignore_index=True)
    return drift[["dataset", "model", *[c for c in drift.columns if c not in ("dataset", "model")]]]


def _slope(log_candidates: np.ndarray, values: np.ndarray, axis: int = -1) -> np.ndarray:
    """Least-squares slope of ``values`` on ``log_candidates`` along ``axis`` (vectorised
    for scipy.stats.bootstrap); 0 where the candidate counts do not vary."""
    x = log_candidates - log_candidates.mean(axis=axis, keepdims=True)
    y = values - values.mean(axis=axis, keepdims=True)
    spread = (x * x).sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = (x * y).sum(axis=axis) / spread
    return np.where(spread > 0, slope, 0.0)


def slope_per_decade(
    mean_candidates: np.ndarray,
    values: np.ndarray,
    *,
    confidence: float = 0.95,
    bootstrap_resamples: int = 2000,
    seed: int | Sequence[int] | np.random.SeedSequence = 0,
    min_decades: float = 0.5,
) -> dict[str, float]:
    """Slope of ``values`` per decade of ``mean_candidates`` with a percentile bootstrap
    interval over the (size, seed) points, resampled in pairs; flat when the interval
    holds 0. Undefined values (an adjusted Hits@10 with at most 10 candidates: every
    rank is a hit, random or not) are left out; with the candidate counts spanning less
    than ``min_decades`` (Nations' 14 entities) the slope would be an extrapolation and
    is not given."""
    x = np.log10(np.asarray(mean_candidates, dtype=float))
    y = np.asarray(values, dtype=float)
    defined = np.isfinite(y)
    x, y = x[defined], y[defined]
    decades = float(np.ptp(x)) if len(x) else 0.0
    if decades < min_decades:
        nan = float("nan")
        return {"slope_per_decade": nan, "low": nan, "high": nan, "flat": False, "decades": decades}
    slope = float(_slope(x, y))
    if np.ptp(y) == 0:
        # one candidate count, or a constant metric: no drift to resample
        low = high = slope
    else:
        low, high = bootstrap_interval(
            (x, y), _slope, confidence=confidence, resamples=bootstrap_resamples, seed=seed
        )
    return {
        "slope_per_decade": slope,
        "low": low,
        "high": high,
        "flat": bool(low <= 0.0 <= high),
        "decades": decades,
    }


def slope_table(
    drift: pd.DataFrame,
    *,
    confidence: float,
    bootstrap_resamples: int,
    seed: int,
    min_decades: float = 0.5,
) -> pd.DataFrame:
    """One slope per (dataset, model, protocol, metric), with its interval and flatness."""
    rows = []
    keys = ["dataset", "model", "protocol", "metric"]
    for index, ((dataset, model, protocol, metric), group) in enumerate(drift.groupby(keys, sort=False)):
        fit = slope_per_decade(
            group["mean_candidates"].to_numpy(),
            group["value"].to_numpy(),
            confidence=confidence,
            bootstrap_resamples=bootstrap_resamples,
            seed=seed_sequence(seed, index),
            min_decades=min_decades,
        )
        rows.append({"dataset": dataset, "model": model, "protocol": protocol, "metric": metric, **fit})
    return pd.DataFrame(rows)
