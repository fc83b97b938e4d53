"""Which systems differ, and which differ from random: paired comparisons of any number
of systems on one or more datasets, for any metric that is a power mean of a rank
transform.

Input is long-form: one row per (dataset, system, task) with the task's ``rank`` and
``num_candidates``; every system of a dataset ranks the same tasks against the same
candidates (:func:`rank_frame` builds it from kgrank rank tables).

The methods, each stated in :attr:`Comparison.caption`:

- Per-task values. A metric g(M_p(f(r))) with finite p is a strictly monotone function
  of the arithmetic mean of f(r)^p (of log f(r) for p = 0): MR, MRR and Hits@k are
  that mean, GMR is exp of the mean of log r, HMR 1 / mean(1/r), IMR 1 / mean(r). A test
  that two systems have equal means of those per-task values is therefore a test that
  their metric values are equal. Medians, dispersions, counts and the extreme ranks
  (p = +-inf) have no such form and are refused.
- Paired tests (:func:`kgrank.evaluation.stats.paired_tests`): Student's paired t-test and
  Wilcoxon's signed-rank test, two-sided, on the per-task values of the two systems.
  The t statistic is signed like ``difference`` (first minus second, in the metric's
  units), i.e. flipped where the metric decreases with the mean of the per-task values
  (HMR, IMR).
- Holm's correction (:func:`kgrank.evaluation.stats.holm`) over every comparison made: all
  (dataset, metric, pair) rows, one family per test.
- Intervals: a paired percentile bootstrap of the metric difference, resampling tasks
  (both systems' values of a task together): :func:`kgrank.evaluation.stats.mean_difference_interval`
  where the metric is the mean of its per-task values (p = 1, no reciprocal), else
  :func:`kgrank.evaluation.stats.bootstrap_interval` of g(M_p(first)) - g(M_p(second)) directly.
  Each pair's stream is seeded by (seed, dataset, metric, first, second), so adding a
  system does not move the other pairs' intervals.
- Adjusted differences. Both systems of a dataset share the random model's E[M] and
  the optimum, so the difference of their adjusted indices (M - E) / (optimum - E) is
  the metric difference divided by (optimum - E), its interval scaled alike. It is
  positive where the first system is better for every metric (MR included), and
  comparable across datasets. A derived key (``amrr``, ``z_mrr``, ``amri``) names the
  comparison of its base metric: ``mrr``, ``amrr`` and ``z_mrr`` are one comparison,
  made once.
- Marks against random: the z-score ±(M - E[M]) / sqrt(Var[M]) under uniform ranks on
  each task's candidates (:func:`~kgrank.evaluation.metrics.moments_of`,
  :func:`~kgrank.evaluation.metrics.derive`; larger is better), its two-sided normal
  p-value, Holm at ``alpha`` over all (dataset, system, metric) rows: "worse than random"
  where rejected with z < 0, "not distinguishable from random" where not rejected (or
  where z is undefined: a random model is optimal on those tasks), "" otherwise.
- Summary across datasets, for each pair present on at least two datasets: the
  per-dataset adjusted differences, their mean weighted by tasks, and Stouffer's
  weighted Z (scipy.stats.combine_pvalues, method "stouffer", weights sqrt(tasks)) of
  each dataset's one-sided paired t-test p-value in the direction of the pooled
  difference; the two-sided p is 2 min(p, 1 - p) (that of |Z|). Holm over the summary
  rows. Where a per-dataset p-value underflows (|t| beyond about 40), Z is computed
  from log p instead (:func:`stouffer`), so that it stays finite.
- Several runs (seeds) of a system: an optional ``seed`` column labels the run of each
  row. A system's per-task value is then the mean over its runs, which the paired tests,
  Holm and the summary take as they take one run's: they answer "is this system better
  on this test set", the seeds held fixed. Its value is the metric of that mean; its
  interval is a t interval (Satterthwaite's degrees of freedom) on the variance of a
  crossed tasks x seeds design (:func:`kgrank.evaluation.stats.crossed_variance`), which
  holds both sources: the share that new seeds would move is ``seed_share``, the spread
  of the per-seed values ``seed_sd``. Each pair also gets Welch's t-test of the two systems' per-seed values
  (``seeds_t_*``, Holm over the pairs that have one): "is this system better whatever
  the seed", the test set held fixed. Against random a system of R seeds is compared with
  the mean of R random runs (variance Var[M] / R; exact for MR, MRR and Hits@k, whose
  value is the mean of its per-task values). Tables without several runs keep their
  columns as before.

Tasks are taken in sorted order of their keys, so the result (bootstrap included) does
not depend on the order of the input's rows. Cost: the bootstrap dominates; four systems
on 40,000 tasks with three metrics (18 comparisons, 2,000 resamples) take about 30 s.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import special
from scipy import stats as scipy_stats

from kgrank.data.rank_table import RANK_COLUMNS
from kgrank.defaults import DEFAULT_CONFIDENCE
from kgrank.errors import KgrankInputError
from kgrank.evaluation.intervals import Interval, from_task_mean, metric_interval, task_values
from kgrank.evaluation.metrics import Metric, Variant, comparable_metrics, derive, lookup, moments_of
from kgrank.evaluation.stats import (
    CrossedVariance,
    SeedKey,
    bootstrap_batch,
    bootstrap_interval,
    crossed_variance,
    holm,
    mean_difference_interval,
    paired_tests,
    seed_sequence,
    welch_test,
)
from kgrank.schemas import config_default

# compare's defaults are the config's comparison section's, read from its schema
DEFAULT_METRICS = tuple(config_default("comparison.metrics"))
DEFAULT_ALPHA = config_default("comparison.alpha")
DEFAULT_RESAMPLES = config_default("comparison.bootstrap_resamples")
DEFAULT_RANK_TYPE = config_default("comparison.rank_type")
# The dataset of a frame without a `dataset` column.
DEFAULT_DATASET = "dataset"
INPUT_COLUMNS = ("dataset", "system", "task", "rank", "num_candidates")
REQUIRED_COLUMNS = INPUT_COLUMNS[1:]
# The optional column that labels a system's run (a training seed): several runs of a system
RUN_COLUMN = "seed"
# The run of a frame without that column.
SINGLE_RUN = "0"
# Columns added where a system has several runs.
SEED_PAIR_COLUMNS = (
    "seeds_first",
    "seeds_second",
    "seeds_t_statistic",
    "seeds_t_p",
    "seeds_t_p_holm",
    "seeds_t_significant",
)
SEED_SYSTEM_COLUMNS = ("seeds", "seed_sd", "seed_share")
CROSSED_METHOD = "t (tasks x seeds, crossed; Satterthwaite)"
# The rank table columns rank_frame reads (the rank column is chosen by rank_type).
RANK_TABLE_KEYS = ("triple_id", "side", "num_candidates")

NOT_DISTINGUISHABLE = "not distinguishable from random"
WORSE_THAN_RANDOM = "worse than random"

PAIR_COLUMNS = (
    "dataset",
    "metric",
    "first",
    "second",
    "tasks",
    "value_first",
    "value_second",
    "difference",
    "difference_low",
    "difference_high",
    "random_expectation",
    "adjusted_difference",
    "adjusted_difference_low",
    "adjusted_difference_high",
    "t_statistic",
    "t_p",
    "wilcoxon_p",
    "t_p_holm",
    "wilcoxon_p_holm",
    "t_significant",
    "wilcoxon_significant",
    "better",
)
SYSTEM_COLUMNS = (
    "dataset",
    "system",
    "metric",
    "tasks",
    "value",
    "ci_low",
    "ci_high",
    "ci_method",
    "random_expectation",
    "random_variance",
    "adjusted_index",
    "z_score",
    "z_p",
    "z_p_holm",
    "mark",
)
SUMMARY_COLUMNS = (
    "metric",
    "first",
    "second",
    "datasets",
    "tasks",
    "per_dataset",
    "agreeing",
    "disagreeing",
    "adjusted_difference",
    "stouffer_z",
    "stouffer_p",
    "combined_p",
    "combined_p_holm",
    "significant",
    "better",
    "method",
)
SUMMARY_METHOD = (
    "Stouffer's weighted Z (weights sqrt(tasks)) of the per-dataset one-sided paired t-test p-values "
    "in the direction of the pooled difference; two-sided p = 2 min(p, 1 - p)"
)


# --- metrics -------------------------------------------------------------------------------


def increases_with_task_mean(metric: Metric) -> bool:
    """Whether the metric grows with the mean of its per-task values (MR, MRR, Hits@k,
    GMR) or shrinks (HMR = 1 / mean(1/r), IMR = 1 / mean(r))."""
    return (metric.power >= 0) != (metric.post == "reciprocal")


# --- the input -----------------------------------------------------------------------------


def _where(frame: pd.DataFrame, index: int) -> str:
    row = frame.iloc[index]
    return f"dataset {row['dataset']!r}, system {row['system']!r}, task {row['task']!r}"


def _checked(ranks: pd.DataFrame) -> pd.DataFrame:
    """The long-form frame with its values checked; dataset and system as text."""
    if not isinstance(ranks, pd.DataFrame):
        raise KgrankInputError(
            f"compare: ranks must be a pandas DataFrame with columns {list(INPUT_COLUMNS)} (dataset optional)"
        )
    missing = [column for column in REQUIRED_COLUMNS if column not in ranks.columns]
    if missing:
        raise KgrankInputError(
            f"compare: column(s) {missing} missing; give one row per (dataset, system, task) with columns "
            f"{list(INPUT_COLUMNS)} (dataset optional)"
        )
    if ranks.empty:
        raise KgrankInputError("compare: no rows; give the ranks of at least two systems")
    frame = pd.DataFrame(
        {
            "dataset": ranks["dataset"] if "dataset" in ranks.columns else DEFAULT_DATASET,
            "system": ranks["system"],
            "task": ranks["task"],
            "rank": pd.to_numeric(ranks["rank"], errors="coerce").astype(float),
            "num_candidates": pd.to_numeric(ranks["num_candidates"], errors="coerce").astype(float),
            RUN_COLUMN: ranks[RUN_COLUMN] if RUN_COLUMN in ranks.columns else SINGLE_RUN,
        }
    ).reset_index(drop=True)
    unnamed = frame[["dataset", "system", "task", RUN_COLUMN]].isna().any(axis=1).to_numpy()
    if unnamed.any():
        raise KgrankInputError(
            f"compare: row {int(np.flatnonzero(unnamed)[0])} has no dataset, system, task or seed; name each"
        )
    for column in ("dataset", "system", RUN_COLUMN):
        frame[column] = frame[column].astype(str)
    counts = frame["num_candidates"].to_numpy()
    bad = ~np.isfinite(counts) | (counts < 1) | (counts != np.round(counts))
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise KgrankInputError(
            f"compare: {_where(frame, index)}: num_candidates {ranks['num_candidates'].iloc[index]!r} is not "
            "a whole number of at least 1"
        )
    values = frame["rank"].to_numpy()
    bad = ~np.isfinite(values) | (values < 1) | (values > counts)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise KgrankInputError(
            f"compare: {_where(frame, index)}: rank {ranks['rank'].iloc[index]!r} is not in "
            f"[1, {int(counts[index])}] (its num_candidates); recompute the ranks"
        )
    repeated = frame.duplicated(["dataset", "system", RUN_COLUMN, "task"]).to_numpy()
    if repeated.any():
        index = int(np.flatnonzero(repeated)[0])
        run = f", seed {frame[RUN_COLUMN].iloc[index]!r}" if RUN_COLUMN in ranks.columns else ""
        raise KgrankInputError(
            f"compare: {_where(frame, index)}{run} appears twice; give "
            "one rank per task (and a seed column to tell several runs of a system apart)"
        )
    return frame


@dataclass(frozen=True)
class _Block:
    """One dataset: its systems (in the input's order), tasks and ranks (tasks x systems,
    of a system with one run; read for those only), and each system's runs (tasks x runs)."""

    dataset: str
    systems: list[str]
    ranks: np.ndarray
    num_candidates: np.ndarray
    runs: tuple[np.ndarray, ...]

    @property
    def several_runs(self) -> bool:
        return any(runs.shape[1] > 1 for runs in self.runs)


def _block(dataset: str, rows: pd.DataFrame, order: Sequence[str]) -> _Block:
    present = set(rows["system"])
    systems = [system for system in order if system in present]
    tasks = {system: set(group["task"]) for system, group in rows.groupby("system", sort=False)}
    reference = systems[0]
    for system in systems[1:]:
        lacking = tasks[reference] - tasks[system]
        extra = tasks[system] - tasks[reference]
        if lacking or extra:
            raise KgrankInputError(
                f"dataset {dataset!r}: system {system!r} differs from {reference!r} in "
                f"{len(lacking) + len(extra)} task(s) ({len(lacking)} of {reference!r}'s missing, "
                f"{len(extra)} extra); every system of a dataset must rank the same tasks"
            )
    if len(tasks[reference]) < 2:
        raise KgrankInputError(
            f"dataset {dataset!r}: {len(tasks[reference])} task; a paired test needs at least two"
        )
    runs = []
    for system in systems:
        own = rows[rows["system"] == system]
        table = own.pivot(index="task", columns=RUN_COLUMN, values="rank")
        if table.isna().any().any():
            lacking = table.columns[table.isna().any()].tolist()
            raise KgrankInputError(
                f"dataset {dataset!r}: system {system!r}: seed(s) {lacking} do not rank every task the "
                "others do; every run of a system must rank the same tasks"
            )
        runs.append(table.sort_index().to_numpy(dtype=float))
    first_runs = rows.drop_duplicates(["system", "task"])
    ranks = first_runs.pivot(index="task", columns="system", values="rank")[systems]
    counts = first_runs.pivot(index="task", columns="system", values="num_candidates")[systems].to_numpy()
    spread = rows.groupby(["task", "system"])["num_candidates"].nunique().to_numpy()
    if (spread > 1).any():
        raise KgrankInputError(
            f"dataset {dataset!r}: the runs of a system rank a task against different numbers of "
            "candidates; rank every run against the same candidates (the same filter)"
        )
    differ = (counts != counts[:, :1]).any(axis=1)
    if differ.any():
        index = int(np.flatnonzero(differ)[0])
        seen = sorted({int(count) for count in counts[index]})
        raise KgrankInputError(
            f"dataset {dataset!r}: task {ranks.index[index]!r} has num_candidates {seen} across systems; "
            "rank every system against the same candidates (the same filter)"
        )
    return _Block(dataset, systems, ranks.to_numpy(dtype=float), counts[:, 0].astype(np.int64), tuple(runs))


# --- the engine: paired tests of per-query values, Holm within a family -------------------

TESTS = ("t", "wilcoxon")
DifferenceInterval = Callable[[np.ndarray, np.ndarray, np.random.SeedSequence], tuple[float, float]]


def paired_comparisons(
    values: np.ndarray,
    systems: Sequence[str],
    *,
    tests: Sequence[str] = TESTS,
    interval: DifferenceInterval | None = None,
    seed: int = 0,
    stream: Sequence[SeedKey] = (),
) -> list[dict]:
    """The one engine of paired comparisons: for every pair of ``systems`` (first before
    second in their order), the paired ``tests`` (``t``, ``wilcoxon``;
    :func:`kgrank.evaluation.stats.paired_tests`) of their per-query ``values`` (queries x systems,
    aligned), the mean difference (first minus second) and, with ``interval``, its ends
    from ``interval(first, second, seed)``, each pair's stream seeded by ``seed``, the
    ``stream`` names and the two systems' names (so adding a system moves no other
    pair's interval). Holm's correction is the caller's family: :func:`holm_within`.

    Each row: ``first``, ``second``, ``tasks``, ``mean_difference``, then
    ``difference_low``/``difference_high`` with an interval, ``t_statistic``/``t_p`` with
    the t-test, ``wilcoxon_p`` with Wilcoxon's: the names every table that compares
    systems uses (``kgrank compare``, the ambiguity study's pairs, the IR study's
    discriminative power)."""
    unknown = sorted(set(tests) - set(TESTS))
    if unknown or not tests:
        raise KgrankInputError(f"tests: {unknown or 'none'}; choose among {', '.join(TESTS)}")
    values = np.asarray(values, dtype=float)
    rows = []
    for first, second in itertools.combinations(range(len(systems)), 2):
        a, b = values[:, first], values[:, second]
        result = paired_tests(a, b, wilcoxon="wilcoxon" in tests)
        row = {
            "first": systems[first],
            "second": systems[second],
            "tasks": len(a),
            "mean_difference": result.mean_difference,
        }
        if interval is not None:
            names = (systems[first], systems[second])
            row["difference_low"], row["difference_high"] = interval(
                a, b, seed_sequence(seed, *stream, *names)
            )
        if "t" in tests:
            row.update(t_statistic=result.t_statistic, t_p=result.t_p)
        if "wilcoxon" in tests:
            row["wilcoxon_p"] = result.wilcoxon_p
        rows.append(row)
    return rows


def holm_within(
    table: pd.DataFrame, *, tests: Sequence[str], alpha: float, family: Sequence[str] = ()
) -> pd.DataFrame:
    """``table`` with ``<test>_p_holm`` and ``<test>_significant`` for each test: Holm's
    correction (:func:`kgrank.evaluation.stats.holm`) of ``<test>_p`` within each group of the
    ``family`` columns (none: one family, every row)."""
    table = table.copy()
    groups = (
        [np.arange(len(table))]
        if not family
        else list(table.groupby(list(family), sort=False).indices.values())
    )
    for test in tests:
        adjusted = np.full(len(table), np.nan)
        rejected = np.zeros(len(table), dtype=bool)
        p_values = table[f"{test}_p"].to_numpy(dtype=float)
        for rows in groups:
            rejected[rows], adjusted[rows] = holm(p_values[rows], alpha)
        table[f"{test}_p_holm"] = adjusted
        table[f"{test}_significant"] = rejected
    return table


# --- one pair, one dataset -----------------------------------------------------------------


def _difference_interval(
    metric: Metric,
    first: np.ndarray,
    second: np.ndarray,
    *,
    confidence: float,
    resamples: int,
    seed: np.random.SeedSequence,
) -> tuple[float, float]:
    """Paired percentile bootstrap of the metric difference (module docstring)."""
    if metric.power == 1 and metric.post == "identity":
        return mean_difference_interval(first, second, confidence=confidence, resamples=resamples, seed=seed)
    if np.array_equal(first, second):
        return 0.0, 0.0

    def statistic(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        return from_task_mean(metric, a.mean(axis=axis)) - from_task_mean(metric, b.mean(axis=axis))

    return bootstrap_interval(
        (first, second),
        statistic,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        batch=bootstrap_batch(len(first)),
    )


def _scaled(values: Sequence[float], span: float) -> list[float]:
    """``values`` / span, NaN where the span is 0 (a random model is optimal)."""
    if span == 0 or not np.isfinite(span):
        return [float("nan")] * len(values)
    return [float(value) / span for value in values]


def _pair_row(metric: Metric, dataset: str, row: dict, values: dict[str, float], expectation: float) -> dict:
    """An engine row (:func:`paired_comparisons` of the per-task values) as a pair of
    :func:`compare`: the metric's own values and difference, its adjusted difference and
    the t statistic signed like the metric difference."""
    first, second = row["first"], row["second"]
    orientation = 1.0 if increases_with_task_mean(metric) else -1.0
    difference = float(values[first] - values[second])
    low, high = row["difference_low"], row["difference_high"]
    adjusted, *adjusted_ends = _scaled([difference, low, high], metric.optimum - expectation)
    better = "" if difference == 0 else first if (difference > 0) == metric.increasing else second
    return {
        "dataset": dataset,
        "metric": metric.key,
        "first": first,
        "second": second,
        "tasks": row["tasks"],
        "value_first": values[first],
        "value_second": values[second],
        "difference": difference,
        "difference_low": low,
        "difference_high": high,
        "random_expectation": expectation,
        "adjusted_difference": adjusted,
        "adjusted_difference_low": min(adjusted_ends),
        "adjusted_difference_high": max(adjusted_ends),
        "t_statistic": orientation * row["t_statistic"],
        "t_p": row["t_p"],
        "wilcoxon_p": row["wilcoxon_p"],
        "better": better,
    }


def _dataset_rows(
    block: _Block,
    metrics: Sequence[Metric],
    *,
    confidence: float,
    resamples: int,
    seed: int,
) -> tuple[list[dict], list[dict]]:
    """The system rows and the pair rows of one dataset (before Holm)."""
    moments = moments_of(metrics, block.num_candidates)
    system_rows, pair_rows = [], []
    tasks = len(block.num_candidates)
    seeds = np.array([runs.shape[1] for runs in block.runs])
    for metric in metrics:
        expectation, variance = moments[metric.key].expectation, moments[metric.key].variance
        if block.several_runs:
            per_run = [task_values(metric, runs) for runs in block.runs]
            per_task = np.column_stack([values.mean(axis=1) for values in per_run])
            values = np.asarray(from_task_mean(metric, per_task.mean(axis=0)), dtype=float)
            run_values = {
                system: np.asarray(from_task_mean(metric, values.mean(axis=0)), dtype=float).reshape(-1)
                for system, values in zip(block.systems, per_run, strict=True)
            }
        else:
            values = np.asarray(metric.value(block.ranks.T), dtype=float).reshape(-1)
            per_task = task_values(metric, block.ranks)
        # a system of R runs against the mean of R random runs
        derived = derive(metric, values, expectation, variance / seeds)
        for index, system in enumerate(block.systems):
            z = float(derived[Variant.Z_SCORE].value[index])
            if seeds[index] > 1:
                spread, crossed = _crossed_interval(metric, per_run[index], confidence)
            else:
                spread = metric_interval(
                    metric,
                    block.ranks[:, index],
                    confidence=confidence,
                    resamples=resamples,
                    seed=[seed, "system", block.dataset, system, metric.key],
                )
            if block.several_runs:
                several = {
                    "seeds": int(seeds[index]),
                    "seed_sd": float(np.std(run_values[system], ddof=1)) if seeds[index] > 1 else np.nan,
                    "seed_share": crossed.seed_share if seeds[index] > 1 else np.nan,
                }
            else:
                several = {}
            system_rows.append(
                several
                | {
                    "dataset": block.dataset,
                    "system": system,
                    "metric": metric.key,
                    "tasks": tasks,
                    "value": float(values[index]),
                    "ci_low": spread.low,
                    "ci_high": spread.high,
                    "ci_method": spread.method,
                    "random_expectation": expectation,
                    # of the mean of as many random runs as the system has seeds (what z uses)
                    "random_variance": variance / seeds[index],
                    "adjusted_index": float(derived[Variant.INDEX].value[index]),
                    "z_score": z,
                    "z_p": float(2.0 * scipy_stats.norm.sf(abs(z))) if np.isfinite(z) else float("nan"),
                }
            )

        def interval(
            a: np.ndarray, b: np.ndarray, stream: np.random.SeedSequence, metric: Metric = metric
        ) -> tuple:
            return _difference_interval(metric, a, b, confidence=confidence, resamples=resamples, seed=stream)

        by_system = {system: float(value) for system, value in zip(block.systems, values, strict=True)}
        rows = [
            _pair_row(metric, block.dataset, row, by_system, expectation)
            for row in paired_comparisons(
                per_task, block.systems, interval=interval, seed=seed, stream=(block.dataset, metric.key)
            )
        ]
        if block.several_runs:
            for row in rows:
                # per-seed values of the metric itself: t is signed like the difference
                first, second = run_values[row["first"]], run_values[row["second"]]
                t_statistic, t_p = welch_test(first, second)
                row |= {
                    "seeds_first": len(first),
                    "seeds_second": len(second),
                    "seeds_t_statistic": t_statistic,
                    "seeds_t_p": t_p,
                }
        pair_rows += rows
    return system_rows, pair_rows


def _crossed_interval(
    metric: Metric, values: np.ndarray, confidence: float
) -> tuple[Interval, CrossedVariance]:
    """The interval of a system's value over its runs (``values``: per-task values, tasks x
    runs) from the crossed design's variance of the grand mean, with a t quantile on its
    Satterthwaite degrees of freedom (a normal one covered 70 % with two seeds where seeds
    dominate), its ends kept within the per-task values (as the single-run normal interval
    keeps them) and mapped to the metric's scale (a monotone map of the mean)."""
    crossed = crossed_variance(values)
    half = scipy_stats.t.ppf(0.5 + confidence / 2, crossed.degrees_of_freedom) * np.sqrt(crossed.variance)
    ends = np.clip([crossed.mean - half, crossed.mean + half], values.min(), values.max())
    ends = np.asarray(from_task_mean(metric, ends), dtype=float)
    return Interval(float(ends.min()), float(ends.max()), CROSSED_METHOD), crossed


# --- across datasets -----------------------------------------------------------------------


def stouffer(t_statistics: np.ndarray, tasks: np.ndarray) -> tuple[float, float]:
    """Stouffer's weighted Z of one-sided paired t-tests (``t_statistics`` on ``tasks - 1``
    degrees of freedom, p = P(T > t)) with weights sqrt(tasks), and its one-sided p:
    scipy.stats.combine_pvalues(method="stouffer"). Where a p-value rounds to 0 or 1
    (|t| beyond about 40) scipy's Z is infinite; the same Z is then taken from log p
    (scipy.special.ndtri_exp), finite unless a t is. NaN where a t is NaN."""
    t_statistics = np.asarray(t_statistics, dtype=float)
    tasks = np.asarray(tasks, dtype=float)
    if np.isnan(t_statistics).any():
        return float("nan"), float("nan")
    weights = np.sqrt(tasks)
    degrees = tasks - 1
    with np.errstate(invalid="ignore", divide="ignore"):
        combined = scipy_stats.combine_pvalues(
            scipy_stats.t.sf(t_statistics, df=degrees), method="stouffer", weights=weights
        )
        z, p = float(combined.statistic), float(combined.pvalue)
        if not np.isfinite(z):
            # isf(p) from log P(T > |t|), on the side where it keeps its precision
            log_tail = _t_log_sf(np.abs(t_statistics), degrees)
            per_dataset = -np.sign(t_statistics) * special.ndtri_exp(log_tail)
            z = float(np.dot(weights, per_dataset) / np.linalg.norm(weights))
            p = float(scipy_stats.norm.sf(z))
    return z, p


def _t_log_sf(t: np.ndarray, degrees: np.ndarray) -> np.ndarray:
    """log P(T > t) for t >= 0: scipy's, and beyond its underflow (about -745) the
    incomplete beta form P(T > t) = I_x(d/2, 1/2) / 2 with x = d / (d + t^2), I_x taken
    as x^a (1 - x)^b / (a B(a, b)) 2F1(a + b, 1; a + 1; x); -inf where that is NaN too
    (over about 10^6 tasks, where 2F1 fails)."""
    log_tail = scipy_stats.t.logsf(t, df=degrees)
    far = ~np.isfinite(log_tail) & np.isfinite(t)
    if far.any():
        d, u = degrees[far], t[far]
        x, a, b = d / (d + u * u), d / 2.0, 0.5
        beta_form = (
            np.log(0.5)
            + a * np.log(x)
            + b * np.log1p(-x)
            - np.log(a)
            - special.betaln(a, b)
            + np.log(special.hyp2f1(a + b, 1.0, a + 1.0, x))
        )
        log_tail[far] = np.where(np.isnan(beta_form), -np.inf, beta_form)
    return log_tail


def _summary(pairs: pd.DataFrame, metrics: Sequence[Metric], alpha: float) -> pd.DataFrame:
    by_key = {metric.key: metric for metric in metrics}
    rows = []
    for (key, first, second), group in pairs.groupby(["metric", "first", "second"], sort=False):
        if len(group) < 2:
            continue
        metric = by_key[key]
        tasks = group["tasks"].to_numpy(dtype=float)
        adjusted = group["adjusted_difference"].to_numpy(dtype=float)
        pooled = float(np.sum(tasks * adjusted) / np.sum(tasks))
        direction = -1.0 if pooled < 0 else 1.0
        # each dataset's t on the adjusted scale (positive: first better; flipped where the
        # optimum lies below E, as MR's does; NaN where the span is 0), then one-sided in the
        # direction of the pooled difference
        span = metric.optimum - group["random_expectation"].to_numpy(dtype=float)
        orientation = np.where(span != 0, np.sign(span), np.nan)
        t_adjusted = group["t_statistic"].to_numpy(dtype=float) * orientation
        z, p = stouffer(direction * t_adjusted, tasks)
        two_sided = float(min(1.0, 2.0 * min(p, 1.0 - p))) if np.isfinite(p) else float("nan")
        # a combined test can hide a dataset on which the other system is significantly
        # better: count the datasets whose difference has the pooled sign, and name those
        # whose paired t-test (Holm) finds the opposite
        same_sign = int(np.sum(np.sign(adjusted) == direction)) if pooled != 0 else 0
        against = [
            f"{dataset} (t {t:+.3g})"
            for dataset, t, significant in zip(
                group["dataset"], t_adjusted, group["t_significant"].to_numpy(dtype=bool), strict=True
            )
            if significant and np.sign(t) == -direction
        ]
        rows.append(
            {
                "metric": key,
                "first": first,
                "second": second,
                "datasets": len(group),
                "tasks": int(tasks.sum()),
                "per_dataset": "; ".join(
                    f"{dataset}: {value:+.4g}"
                    for dataset, value in zip(group["dataset"], adjusted, strict=True)
                ),
                "agreeing": f"{same_sign} of {len(group)}",
                "disagreeing": "; ".join(against),
                "adjusted_difference": pooled,
                "stouffer_z": z,
                "stouffer_p": p,
                "combined_p": two_sided,
                "better": "" if pooled == 0 or not np.isfinite(pooled) else first if pooled > 0 else second,
                "method": SUMMARY_METHOD,
            }
        )
    table = pd.DataFrame(
        rows, columns=[c for c in SUMMARY_COLUMNS if c not in {"combined_p_holm", "significant"}]
    )
    rejected, adjusted_p = holm(table["combined_p"].to_numpy(dtype=float), alpha)
    table["combined_p_holm"] = adjusted_p
    table["significant"] = rejected
    return table[list(SUMMARY_COLUMNS)]


# --- the result ----------------------------------------------------------------------------


def _latex_text(text: str) -> str:
    for character, escaped in (
        ("\\", r"\textbackslash{}"),
        ("%", r"\%"),
        ("_", r"\_"),
        ("&", r"\&"),
        ("#", r"\#"),
        ("$", r"\$"),
    ):
        text = text.replace(character, escaped)
    return text


def _number(value: float, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    return f"{value:.{digits}g}"


def _interval(low: float, high: float) -> str:
    if np.isnan(low) or np.isnan(high):
        return ""
    return f"[{_number(low)}, {_number(high)}]"


def _numbers(values: Iterable[float], digits: int = 4) -> list[str]:
    return [_number(value, digits) for value in values]


def _intervals(table: pd.DataFrame, column: str) -> list[str]:
    """The interval text of ``column``'s ends, ``<column>_low`` and ``<column>_high``."""
    return [_interval(*ends) for ends in zip(table[f"{column}_low"], table[f"{column}_high"], strict=True)]


def _holm_ps(table: pd.DataFrame, p_column: str, significant_column: str) -> list[str]:
    """Holm-adjusted p-values to two digits, ``*`` where rejected."""
    return [
        _number(p, 2) + ("*" if significant else "")
        for p, significant in zip(table[p_column], table[significant_column], strict=True)
    ]


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`compare`: three tables and the settings that made them.

    ``pairs``: one row per (dataset, metric, system pair), ``first`` before ``second`` in
    the input's order of systems; ``systems``: one row per (dataset, system, metric) with
    the marks against random; ``summary``: one row per (metric, pair) present on at
    least two datasets (empty with one dataset). Metric columns hold registry keys."""

    pairs: pd.DataFrame
    systems: pd.DataFrame
    summary: pd.DataFrame
    metrics: tuple[str, ...]
    alpha: float
    confidence: float
    bootstrap_resamples: int
    seed: int

    def captions(self) -> dict[str, str]:
        """One caption per table, each stating the methods behind its columns."""
        comparisons = len(self.pairs)
        labels = ", ".join(lookup(key).label for key in self.metrics)
        pairs = (
            f"Paired comparisons ({labels}) of the systems of each dataset. Tests: Student's paired t-test "
            "and Wilcoxon's signed-rank test (two-sided) on the per-task values f(r)^p of each metric "
            "g(M_p(f(r))) (log f(r) for p = 0), whose mean is a monotone function of the metric; t is "
            "signed like the difference, first minus second. Holm's correction at "
            f"alpha = {self.alpha:g} over all {comparisons} (dataset, metric, pair) rows, one family per "
            "test (* : rejected). Intervals: "
            f"{self.confidence:.0%} paired percentile bootstrap of the metric difference "
            f"({self.bootstrap_resamples} resamples of the tasks, seed {self.seed}). Adjusted difference: "
            "the difference of adjusted indices, (first - second) / (optimum - E[M]) with E[M] the random "
            "model's expectation on the dataset's candidates (shared by both systems), its interval "
            "scaled alike; positive where the first system is better. Better: the system with the better "
            "value, significant or not."
        )
        systems = (
            "Each system against the random model (ranks uniform on each task's candidates): value, "
            "E[M], adjusted index (M - E[M]) / (optimum - E[M]) and z-score (M - E[M]) / sqrt(Var[M]), "
            "signed so that larger is better. Marks: two-sided normal p-value of z, Holm's correction at "
            f"alpha = {self.alpha:g} over all {len(self.systems)} (dataset, system, metric) rows; "
            f"'{WORSE_THAN_RANDOM}' where rejected with z < 0, '{NOT_DISTINGUISHABLE}' where not rejected "
            "(or where z is undefined: every task has one candidate)."
        )
        summary = (
            "Across datasets (pairs on at least two datasets): the per-dataset adjusted differences, their "
            f"mean weighted by tasks, and a combined test: {SUMMARY_METHOD} (scipy.stats.combine_pvalues); "
            f"Holm's correction at alpha = {self.alpha:g} over the {len(self.summary)} summary rows "
            "(* : rejected). Same sign: the datasets whose difference has the weighted mean's sign; "
            "significantly against: those whose paired t-test (Holm, as in the pairs table) finds the "
            "other system better, which a combined test can outweigh."
        )
        if "seeds" in self.systems.columns:
            runs = (
                " Several runs (seeds) of a system: its per-task value is the mean over its runs, which "
                "the tests above take (the seeds held fixed)"
            )
            pairs += (
                f"{runs}; seeds t: Welch's t-test of the two systems' per-seed values (the test set held "
                f"fixed), Holm at alpha = {self.alpha:g} over the pairs that have one."
            )
            systems += (
                f"{runs}; its interval is a t interval on the variance of a crossed tasks x seeds design "
                "(method of moments, Satterthwaite's degrees of freedom), seed share: the part of that "
                "variance new seeds would move, seed SD: the spread of the per-seed values; a system of R "
                "seeds is compared with the mean of R random runs (Var[M] / R, the variance column)."
            )
        return {"pairs": pairs, "systems": systems, "summary": summary}

    @property
    def caption(self) -> str:
        """Every method, in one text."""
        return " ".join(self.captions().values())

    def report_frames(self) -> dict[str, pd.DataFrame]:
        """The tables as a report prints them (text cells, metric labels; the DataFrames
        keep every column), for :func:`kgrank.data.io.write_report_table` with :meth:`captions`."""
        label = {key: lookup(key).label for key in self.metrics}
        pairs = pd.DataFrame(
            {
                "dataset": self.pairs["dataset"],
                "metric": self.pairs["metric"].map(label),
                "first": self.pairs["first"],
                "second": self.pairs["second"],
                "difference": _numbers(self.pairs["difference"]),
                "interval": _intervals(self.pairs, "difference"),
                "adjusted difference": _numbers(self.pairs["adjusted_difference"]),
                "adjusted interval": _intervals(self.pairs, "adjusted_difference"),
                "t p (Holm)": _holm_ps(self.pairs, "t_p_holm", "t_significant"),
                "Wilcoxon p (Holm)": _holm_ps(self.pairs, "wilcoxon_p_holm", "wilcoxon_significant"),
                "better": self.pairs["better"],
            }
        )
        systems = pd.DataFrame(
            {
                "dataset": self.systems["dataset"],
                "system": self.systems["system"],
                "metric": self.systems["metric"].map(label),
                "value": _numbers(self.systems["value"]),
                "E[M]": _numbers(self.systems["random_expectation"]),
                "adjusted index": _numbers(self.systems["adjusted_index"]),
                "z": _numbers(self.systems["z_score"], 3),
                "p (Holm)": _numbers(self.systems["z_p_holm"], 2),
                "mark": self.systems["mark"],
            }
        )
        summary = pd.DataFrame(
            {
                "metric": self.summary["metric"].map(label),
                "first": self.summary["first"],
                "second": self.summary["second"],
                "adjusted differences": self.summary["per_dataset"],
                "same sign": self.summary["agreeing"],
                "significantly against": self.summary["disagreeing"],
                "weighted mean": _numbers(self.summary["adjusted_difference"]),
                "Stouffer Z": _numbers(self.summary["stouffer_z"], 3),
                "p (Holm)": _holm_ps(self.summary, "combined_p_holm", "significant"),
                "better": self.summary["better"],
            }
        )
        if "seeds" in self.systems.columns:
            seeds = zip(self.pairs["seeds_first"], self.pairs["seeds_second"], strict=True)
            # each before the last column, better or mark
            for frame, column, values in (
                (pairs, "seeds", [f"{int(first)}/{int(second)}" for first, second in seeds]),
                (pairs, "seeds t p (Holm)", _holm_ps(self.pairs, "seeds_t_p_holm", "seeds_t_significant")),
                (systems, "seeds", self.systems["seeds"].astype(int).to_numpy()),
                (systems, "seed SD", _numbers(self.systems["seed_sd"])),
                (systems, "seed share", _numbers(self.systems["seed_share"], 2)),
            ):
                frame.insert(len(frame.columns) - 1, column, values)
        return {"pairs": pairs, "systems": systems, "summary": summary}

    def paper_table(self, latex: bool = False) -> pd.DataFrame:
        """One row per (dataset, system), one column per metric: the value with its
        interval, the best of the dataset in bold, and marks (:meth:`paper_caption`): †
        worse than the best by the paired t-test, ° not distinguishable from random, ‡
        worse than random. ``latex``: the marks and bold in LaTeX."""
        bold = (lambda text: rf"\textbf{{{text}}}") if latex else (lambda text: f"**{text}**")
        mark = (lambda symbol: rf"$^{{{symbol}}}$") if latex else (lambda symbol: symbol)
        symbols = {"worse": r"\dagger" if latex else "†", "random": r"\circ" if latex else "°"}
        symbols["worse than random"] = r"\ddagger" if latex else "‡"
        significant = self.pairs[self.pairs["t_significant"]]
        rows: dict[tuple[str, str], dict[str, str]] = {}
        for (dataset, key), group in self.systems.groupby(["dataset", "metric"], sort=False):
            metric = lookup(key).metric
            best = group["value"].max() if metric.increasing else group["value"].min()
            for row in group.itertuples(index=False):
                text = _number(row.value) + (
                    f" {_interval(row.ci_low, row.ci_high)}" if row.ci_high == row.ci_high else ""
                )
                text = bold(text) if row.value == best else text
                against = significant[
                    (significant["dataset"] == dataset)
                    & (significant["metric"] == key)
                    & (significant[["first", "second"]] == row.system).any(axis=1)
                ]
                best_systems = set(group.loc[group["value"] == best, "system"])
                if row.value != best and any(
                    {pair.first, pair.second} & best_systems for pair in against.itertuples(index=False)
                ):
                    text += mark(symbols["worse"])
                if row.mark == NOT_DISTINGUISHABLE:
                    text += mark(symbols["random"])
                elif row.mark == WORSE_THAN_RANDOM:
                    text += mark(symbols["worse than random"])
                rows.setdefault((dataset, row.system), {})[lookup(key).label] = text
        return pd.DataFrame(
            [{"dataset": dataset, "system": system, **cells} for (dataset, system), cells in rows.items()]
        )

    def paper_caption(self) -> str:
        """What :meth:`paper_table` shows and which families its tests correct over."""
        methods = "; ".join(sorted(set(self.systems["ci_method"])))
        return (
            f"Each system's value with its {self.confidence:.0%} interval over test sets like this one"
            f"{' (and over seeds, where a system has several)' if 'seeds' in self.systems.columns else ''} "
            f"({methods}); bold: the best of the dataset; †: worse than that best by a paired t-test, "
            f"Holm's correction at alpha = {self.alpha:g} over all {len(self.pairs)} (dataset, metric, pair) "
            f"rows; °: not distinguishable from random, ‡: worse than random (z-test, Holm over all "
            f"{len(self.systems)} (dataset, system, metric) rows)."
        )

    def _sections(self) -> list[tuple[str, str, pd.DataFrame, str]]:
        """(name, title, frame, caption) of each non-empty table."""
        frames, captions = self.report_frames(), self.captions()
        titles = {"pairs": "Pairs", "systems": "Systems against random", "summary": "Across datasets"}
        sections = [("table", "Systems", self.paper_table(), self.paper_caption())]
        return sections + [
            (name, titles[name], frame, captions[name]) for name, frame in frames.items() if not frame.empty
        ]

    def report(self) -> str:
        """A readable text report: each table with its caption."""
        sections = self._sections()
        return "\n\n".join(
            f"{title}\n{frame.to_string(index=False)}\n{caption}" for _, title, frame, caption in sections
        )

    def to_markdown(self) -> str:
        """The report as Markdown: a heading, the table and its caption per table."""
        sections = self._sections()
        return "\n".join(
            f"## {title}\n\n{frame.to_markdown(index=False)}\n\n{caption}\n"
            for _, title, frame, caption in sections
        )

    def to_latex(self) -> str:
        """The report as LaTeX: one table environment with its caption per table (the
        systems table with LaTeX's bold and marks)."""
        tables = []
        for name, _, frame, caption in self._sections():
            escape = name != "table"
            text = _latex_text(caption)
            if not escape:
                frame = self.paper_table(latex=True)
                # the metric labels head columns unescaped (M_2(r), mean r^-1/2)
                frame.columns = [_latex_text(str(column)).replace("^", r"\^{}") for column in frame.columns]
                for symbol, command in (("†", r"$^\dagger$"), ("°", r"$^\circ$"), ("‡", r"$^\ddagger$")):
                    text = text.replace(symbol, command)
                frame = frame.assign(
                    **{column: frame[column].map(_latex_text) for column in ("dataset", "system")}
                )
            tables.append(
                frame.to_latex(
                    index=False,
                    escape=escape,
                    caption=text,
                    label=f"tab:compare-{name}",
                )
            )
        return "\n".join(tables)


# --- the entry points ----------------------------------------------------------------------


def compare(
    ranks: pd.DataFrame | Mapping[str, Mapping[str, Any]],
    *,
    metrics: Iterable[str] | str = DEFAULT_METRICS,
    alpha: float = DEFAULT_ALPHA,
    confidence: float = DEFAULT_CONFIDENCE,
    bootstrap_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    rank_type: str = DEFAULT_RANK_TYPE,
    **system_options: Any,
) -> Comparison:
    """Compare every pair of systems of each dataset on ``metrics`` (module docstring).

    ``ranks``: long-form, one row per (dataset, system, task): ``dataset`` (optional: one
    dataset if absent), ``system``, ``task`` (a key of the test task, e.g.
    "<triple_id>-<side>", the same across the systems of a dataset), ``rank`` (in
    [1, num_candidates]) and ``num_candidates`` (the same for a task across systems).
    Every system of a dataset must rank the same tasks; at least two systems must share
    a dataset. An optional ``seed`` column labels several runs of a system (module
    docstring: several runs). ``metrics``: names :func:`kgrank.evaluation.metrics.lookup`
    takes whose base is a power mean with finite p; a derived key compares its base metric.

    Or, as `kgrank compare` takes them, ``{dataset: {system: source}}``: each dataset as
    `kgrank evaluate --dataset` names it, each source a PyKEEN folder, a rank file, a pair
    (score matrix, query index) or a rank table of kgrank's format, compared on its
    ``rank_type`` ranks; ``system_options`` go to :func:`kgrank.systems.load_system`
    (``trusted=True`` for PyKEEN folders you trust, ``tolerance``, ``filter_splits`` ...).
    A list of sources is several runs (seeds) of one system.

    >>> compare({"nations": {"a": "a_folder", "b": ["b1.csv", "b2.csv"]}}, trusted=True)  # doctest: +SKIP
    """
    if isinstance(ranks, Mapping):
        ranks = rank_frame(_system_tables(ranks, seed, system_options), rank_type=rank_type)
    elif system_options:
        raise KgrankInputError(
            f"compare: {', '.join(system_options)} go with systems ({{dataset: {{system: source}}}}), "
            "not a long table of ranks"
        )
    if not 0 < alpha < 1 or not 0 < confidence < 1:
        raise KgrankInputError(f"compare: alpha {alpha} and confidence {confidence} must lie in (0, 1)")
    if int(bootstrap_resamples) < 1:
        raise KgrankInputError(f"compare: bootstrap_resamples {bootstrap_resamples} must be at least 1")
    chosen = comparable_metrics(metrics)
    frame = _checked(ranks)
    order = list(dict.fromkeys(frame["system"]))
    groups = frame.groupby("dataset", sort=False)
    if max(group["system"].nunique() for _, group in groups) < 2:
        raise KgrankInputError(
            f"compare: no dataset has two systems ({len(order)} system(s): {', '.join(order)}); "
            "give the ranks of at least two systems on one dataset"
        )
    system_rows, pair_rows = [], []
    for dataset, rows in groups:
        block = _block(str(dataset), rows, order)
        systems, pairs = _dataset_rows(
            block, chosen, confidence=confidence, resamples=int(bootstrap_resamples), seed=seed
        )
        system_rows += systems
        pair_rows += pairs
    # one family per test: every (dataset, metric, pair) row; and every (dataset, system,
    # metric) row for the marks against random
    pairs = holm_within(pd.DataFrame(pair_rows), tests=TESTS, alpha=alpha)
    several_runs = "seeds_t_p" in pairs.columns
    if several_runs:
        # datasets whose systems have one run each left NaN: not in the family
        pairs = holm_within(pairs, tests=("seeds_t",), alpha=alpha)
    systems = holm_within(pd.DataFrame(system_rows), tests=("z",), alpha=alpha)
    systems["mark"] = np.where(
        ~systems["z_significant"],
        NOT_DISTINGUISHABLE,
        np.where(systems["z_score"].to_numpy() < 0, WORSE_THAN_RANDOM, ""),
    )
    pairs = pairs.reindex(columns=[*PAIR_COLUMNS, *(SEED_PAIR_COLUMNS if several_runs else ())])
    systems = systems.reindex(columns=[*SYSTEM_COLUMNS, *(SEED_SYSTEM_COLUMNS if several_runs else ())])
    if several_runs:
        # the systems of a dataset without several runs have one each
        pairs = pairs.fillna({"seeds_first": 1, "seeds_second": 1, "seeds_t_significant": False})
        systems = systems.fillna({"seeds": 1})
    return Comparison(
        pairs=pairs,
        systems=systems,
        summary=_summary(pairs, chosen, alpha),
        metrics=tuple(metric.key for metric in chosen),
        alpha=alpha,
        confidence=confidence,
        bootstrap_resamples=int(bootstrap_resamples),
        seed=seed,
    )


def rank_frame(
    tables: Mapping[str, Mapping[str, pd.DataFrame]] | Mapping[str, pd.DataFrame],
    *,
    rank_type: str = "realistic",
) -> pd.DataFrame:
    """The long-form frame :func:`compare` takes, from kgrank rank tables: either
    ``{dataset: {system: table}}`` or ``{system: table}`` (one dataset, no ``dataset``
    column). Each table needs ``triple_id``, ``side``, ``num_candidates`` and the
    ``rank_type`` column (default: the realistic rank); task = "<triple_id>-<side>". A
    list of tables is several runs (seeds) of one system: the ``seed`` column numbers them
    from 0."""
    if rank_type not in RANK_COLUMNS:
        raise KgrankInputError(f"rank type {rank_type!r} is not one of {list(RANK_COLUMNS)}")
    single = not any(isinstance(entry, Mapping) for entry in tables.values())
    nested = {None: tables} if single else tables
    frames = []
    for dataset, systems in nested.items():
        for system, table, run in _runs_of(systems):
            where = f"system {system!r}" if dataset is None else f"dataset {dataset!r}, system {system!r}"
            if not isinstance(table, pd.DataFrame):
                raise KgrankInputError(f"{where}: not a rank table; give {{dataset: {{system: table}}}}")
            missing = [column for column in (*RANK_TABLE_KEYS, rank_type) if column not in table.columns]
            if missing:
                raise KgrankInputError(
                    f"{where}: rank table column(s) {missing} missing; pass the table `kgrank ranks` writes"
                )
            frame = pd.DataFrame(
                {
                    "system": str(system),
                    "task": table["triple_id"].astype(str) + "-" + table["side"].astype(str),
                    "rank": table[rank_type].to_numpy(dtype=float),
                    "num_candidates": table["num_candidates"].to_numpy(),
                }
            )
            if dataset is not None:
                frame.insert(0, "dataset", str(dataset))
            if run is not None:
                frame[RUN_COLUMN] = str(run)
            frames.append(frame)
    if not frames:
        raise KgrankInputError("compare: no rank table given")
    frame = pd.concat(frames, ignore_index=True)
    if RUN_COLUMN in frame.columns:
        frame[RUN_COLUMN] = frame[RUN_COLUMN].fillna(SINGLE_RUN)
    return frame


def _runs_of(systems: Mapping[str, Any]) -> list[tuple[str, Any, int | None]]:
    """(system, table, run) of every run: a list is one run per entry, numbered from 0
    (a tuple stays one source: a score matrix with its queries); anything else is the
    system's one run (None)."""
    return [
        (system, entry, run)
        for system, entries in systems.items()
        for run, entry in (enumerate(entries) if isinstance(entries, list) else [(None, entries)])
    ]


def _system_tables(
    systems: Mapping[str, Mapping[str, Any]], seed: int, options: dict
) -> dict[str, dict[str, pd.DataFrame]]:
    """Each dataset's systems as rank tables, loaded as `kgrank compare` loads them."""
    from kgrank.systems import dataset_folder, load_system

    tables: dict[str, dict[str, pd.DataFrame]] = {}
    for dataset, entries in systems.items():
        if not isinstance(entries, Mapping):
            raise KgrankInputError(f"compare: dataset {dataset!r}: give {{system: source}}, got {entries!r}")
        if all(isinstance(table, pd.DataFrame) for _, table, _ in _runs_of(entries)):
            tables[str(dataset)] = dict(entries)
            continue

        def loaded(name: str, entry: Any, folder: Path, dataset: str = dataset) -> pd.DataFrame:
            if isinstance(entry, pd.DataFrame):
                return entry
            if not isinstance(entry, str | os.PathLike | tuple):
                raise KgrankInputError(
                    f"compare: dataset {dataset!r}, system {name!r}: {entry!r} is not a source; give a path, "
                    "a (scores, queries) pair, a rank table, or a list of them (its seeds)"
                )
            return load_system(entry, folder, seed=seed, **options)

        with dataset_folder(dataset) as folder:
            tables[Path(str(dataset)).name] = {
                str(name): [loaded(name, run, folder) for run in entry]
                if isinstance(entry, list)
                else loaded(name, entry, folder)
                for name, entry in entries.items()
            }
    return tables


def compare_rank_tables(
    tables: Mapping[str, Mapping[str, pd.DataFrame]] | Mapping[str, pd.DataFrame],
    *,
    rank_type: str = "realistic",
    **options: object,
) -> Comparison:
    """:func:`compare` of :func:`rank_frame` (``options``: compare's keywords)."""
    return compare(rank_frame(tables, rank_type=rank_type), **options)
