"""The open-world simulation of Yang, Lin & Zhang 2022 (NeurIPS), Section 4.

A query has ``num_answers`` true answers among ``num_entities`` entities; each is in the
test set with probability ``density`` (alpha), the others are true but missing from it.
Each answer is "learned" with a probability that depends on the model's strength s and
on the correlation rho between being learned and being missing; learned answers are
ranked on top in random order, everything else below in random order. A test answer's
rank counts only the non-test entities above it: the other test answers are filtered,
the missing ones are not (they are not known to be true), which is what makes the
metric saturate as the model gets stronger.

The simulation is exact without materialising a permutation of all entities: in a
uniformly random order of k special items among m others, the numbers of others between
consecutive specials are a multinomial draw of m over the k + 1 spacings of k sorted
uniform keys (the keys of all items i.i.d. uniform give a uniform permutation).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product

import numpy as np
import pandas as pd

from kgrank.errors import KgrankInputError
from kgrank.evaluation.metrics import (
    LESS_TOP_HEAVY_POWERS,
    Metric,
    Variant,
    derived_values,
    hits_at,
    lookup,
    macro_mean_moments,
    mean_inverse_rank_power,
)
from kgrank.evaluation.stats import seed_stream
from kgrank.studies.openworld.settings import strength_count

MRR_KEY = "inverse_harmonic_mean_rank"
STUDY_HITS = (1, 3, 10)


def study_metrics(hits: Sequence[int] = STUDY_HITS) -> list[Metric]:
    """MRR and the less focus-on-top metrics the study compares: mean r^-a, the mean
    log discount ln 2 / ln(1 + r) (nDCG's gain of a single answer) and Hits@k."""
    return [
        lookup(MRR_KEY).metric,
        *(mean_inverse_rank_power(power) for power in LESS_TOP_HEAVY_POWERS),
        lookup("mean_log_discount").metric,
        *(hits_at(k) for k in hits),
    ]


@dataclass(frozen=True, kw_only=True)
class OpenWorld:
    """The simulated graph: N entities, A true answers per query."""

    num_entities: int = 14_505
    num_answers: int = 43

    def __post_init__(self) -> None:
        if not 1 <= self.num_answers < self.num_entities:
            raise KgrankInputError(
                f"open world with {self.num_entities} entities and {self.num_answers} answers per "
                "query: need 1 <= answers < entities; correct studies.openworld.simulation"
            )


def learning_probabilities(
    strength: np.ndarray | float, density: float, correlation: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(s_test, s_missing, clipped): the probabilities that a test and a missing answer
    are learned, s -/+ rho * sqrt(s (1 - s) (1 - alpha) / alpha) and
    sqrt(s (1 - s) alpha / (1 - alpha)), so that the share learned stays s overall and
    rho is the correlation of "learned" and "missing". Where they leave [0, 1] they are
    clipped, and ``clipped`` says where."""
    strength = np.asarray(strength, dtype=float)
    if not 0 < density <= 1:
        raise KgrankInputError(f"density {density}: must lie in (0, 1]; correct studies.openworld")
    spread = np.sqrt(strength * (1.0 - strength))
    if density == 1:  # no missing answers: s_missing is never used
        s_test, s_missing = strength.copy(), strength.copy()
    else:
        s_test = strength - correlation * spread * np.sqrt((1.0 - density) / density)
        s_missing = strength + correlation * spread * np.sqrt(density / (1.0 - density))
    clipped = (s_test < 0) | (s_test > 1) | (s_missing < 0) | (s_missing > 1)
    return np.clip(s_test, 0.0, 1.0), np.clip(s_missing, 0.0, 1.0), clipped


def others_above(
    rng: np.random.Generator, num_special: np.ndarray, num_others: np.ndarray, width: int
) -> np.ndarray:
    """For each row, a uniformly random order of ``num_special`` special items among
    ``num_others`` others: the number of others before the j-th special (columns j <
    num_special; the rest are padding)."""
    keys = rng.random((len(num_special), width))
    keys[np.arange(width)[None, :] >= num_special[:, None]] = 1.0
    keys.sort(axis=1)
    edges = np.concatenate([np.zeros((len(keys), 1)), keys, np.ones((len(keys), 1))], axis=1)
    between = rng.multinomial(num_others, np.diff(edges, axis=1))
    return np.cumsum(between[:, :width], axis=1)


@dataclass(frozen=True)
class SimulatedQueries:
    """Ranks of the test answers of simulated queries: ``ranks`` (queries, A) with NaN
    beyond each query's ``num_test`` answers; every test answer of a query has
    ``num_entities - num_test + 1`` candidates (the other test answers are filtered)."""

    ranks: np.ndarray
    num_test: np.ndarray
    num_entities: int

    @property
    def num_candidates(self) -> np.ndarray:
        return self.num_entities - self.num_test + 1

    def query_values(self, metric: Metric) -> np.ndarray:
        """The metric of each query: the mean of f(rank) over its test answers (NaN for a
        query without test answers)."""
        present = ~np.isnan(self.ranks)
        transformed = metric.transform.function(np.where(present, self.ranks, 1.0))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(present, transformed, 0.0).sum(axis=1) / self.num_test


def simulate_queries(
    rng: np.random.Generator,
    world: OpenWorld,
    s_test: np.ndarray,
    s_missing: np.ndarray,
    density: float,
    *,
    num_test: np.ndarray | None = None,
) -> SimulatedQueries:
    """One query per entry of ``s_test``/``s_missing``. ``num_test`` (the test answers of
    each query) is drawn from Binomial(A, density) unless given: two models evaluated on
    the same test set share it."""
    s_test = np.asarray(s_test, dtype=float)
    s_missing = np.broadcast_to(np.asarray(s_missing, dtype=float), s_test.shape)
    answers, entities = world.num_answers, world.num_entities
    if num_test is None:
        num_test = rng.binomial(answers, density, size=s_test.shape)
    num_test = np.asarray(num_test, dtype=np.int64)
    num_missing = answers - num_test
    learned_test = rng.binomial(num_test, s_test)
    learned_missing = rng.binomial(num_missing, s_missing)
    # Learned test answers: only the learned missing answers can be above them.
    top = 1 + others_above(rng, learned_test, learned_missing, answers)
    # The others: below every learned missing answer, among the unlearned missing answers
    # and the N - A entities that are no answer.
    others_below = entities - num_test - learned_missing
    bottom = 1 + learned_missing[:, None] + others_above(rng, num_test - learned_test, others_below, answers)
    column = np.arange(answers)[None, :]
    shifted = np.take_along_axis(bottom, np.clip(column - learned_test[:, None], 0, answers - 1), axis=1)
    ranks = np.where(column < learned_test[:, None], top, shifted).astype(float)
    ranks[column >= num_test[:, None]] = np.nan
    return SimulatedQueries(ranks=ranks, num_test=num_test, num_entities=entities)


def approximate_mrr(strength: np.ndarray, density: float, num_answers: int) -> np.ndarray:
    """The paper's closed form E[MRR] ~ (ln(s (1 - alpha) (A + 2)) + gamma) / ((A + 1)(1 - alpha))."""
    strength = np.asarray(strength, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.log(strength * (1 - density) * (num_answers + 2)) + np.euler_gamma) / (
            (num_answers + 1) * (1 - density)
        )


def approximate_correlated_mrr(
    s_test: np.ndarray, s_missing: np.ndarray, density: float, num_answers: int
) -> np.ndarray:
    """Its correlated form: (s_test / s_missing) times the closed form at s_missing."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(s_test) / np.asarray(s_missing) * approximate_mrr(s_missing, density, num_answers)


def aggregate_rows(
    metric: Metric, values: np.ndarray, num_candidates: np.ndarray, num_test: np.ndarray
) -> list[dict]:
    """The macro mean of per-query values with its standard error, then its adjusted index
    and z-score (E and Var under the random model from the metric registry, on these
    queries' candidate counts), each with the standard error scaled alike."""
    keep = num_test > 0
    values, num_candidates, num_test = values[keep], num_candidates[keep], num_test[keep]
    mean = float(values.mean())
    error = float(values.std(ddof=1) / np.sqrt(len(values))) if len(values) > 1 else float("nan")
    rows = [{"metric": metric.key, "variant": "value", "mean": mean, "standard_error": error}]
    query_index = np.repeat(np.arange(len(num_test)), num_test)
    moments = macro_mean_moments(metric, np.repeat(num_candidates, num_test), query_index)
    at_mean = derived_values(metric, mean, moments)
    one_error_up = derived_values(metric, mean + error, moments)
    for variant in (Variant.INDEX, Variant.Z_SCORE):
        rows.append(
            {
                "metric": at_mean[variant].key,
                "variant": str(variant),
                "mean": at_mean[variant].value,
                "standard_error": abs(one_error_up[variant].value - at_mean[variant].value),
            }
        )
    for row in rows:
        row.update(
            base_metric=metric.key,
            label=metric.label,
            queries=int(keep.sum()),
            random_expectation=moments.expectation,
            random_variance=moments.variance,
        )
    return rows


def strength_grid(start: float, stop: float, step: float) -> np.ndarray:
    """start, start + step, ..., stop (inclusive), rounded to the step's decimals."""
    count = strength_count(start, stop, step) if step > 0 else 0
    if count < 1:
        raise KgrankInputError(
            f"strengths from {start} to {stop} in steps of {step}: need step > 0 and stop >= start; "
            "correct studies.openworld.simulation.strength"
        )
    return np.round(start + step * np.arange(count), 10)


def simulate_grid(
    world: OpenWorld,
    densities: Sequence[float],
    strengths: np.ndarray,
    correlations: Sequence[float],
    num_queries: int,
    metrics: Sequence[Metric],
    seed: int,
    progress: bool = True,
) -> pd.DataFrame:
    """Every (density, correlation, strength) point: num_queries simulated queries, each
    metric's mean over queries with its standard error, its adjusted index and z-score,
    and for MRR the closed-form approximation and whether it lies within 3 standard
    errors. Each (density, correlation) cell has its own seeded stream, so a cell's
    numbers do not depend on which other cells are run; within a cell the strengths
    share the queries' test-answer counts (their learned answers are drawn anew)."""
    from tqdm.auto import tqdm

    strengths = np.asarray(strengths, dtype=float)
    cells = list(product(enumerate(densities), enumerate(correlations)))
    rows: list[dict] = []
    for (density_index, density), (correlation_index, correlation) in tqdm(
        cells, desc="open-world grid", unit="cell", disable=not progress
    ):
        rng = seed_stream(seed, density_index, correlation_index)
        s_test, s_missing, clipped = learning_probabilities(strengths, density, correlation)
        # Common random numbers: every strength sees the same test-answer counts, so the
        # curve's slope is not blurred by redrawing the test set at each point, and the
        # random-model moments (which depend on those counts only) are the same along it.
        num_test = np.tile(rng.binomial(world.num_answers, density, size=num_queries), len(strengths))
        simulated = simulate_queries(
            rng,
            world,
            np.repeat(s_test, num_queries),
            np.repeat(s_missing, num_queries),
            density,
            num_test=num_test,
        )
        per_query = {metric.key: simulated.query_values(metric) for metric in metrics}
        for index, strength in enumerate(strengths):
            block = slice(index * num_queries, (index + 1) * num_queries)
            point = {
                "density": density,
                "correlation": correlation,
                "strength": strength,
                "s_test": s_test[index],
                "s_missing": s_missing[index],
                "clipped": bool(clipped[index]),
            }
            for metric in metrics:
                for row in aggregate_rows(
                    metric,
                    per_query[metric.key][block],
                    simulated.num_candidates[block],
                    simulated.num_test[block],
                ):
                    rows.append({**point, **row})
    table = pd.DataFrame(rows)
    return add_approximation(table, world.num_answers)


def add_approximation(table: pd.DataFrame, num_answers: int) -> pd.DataFrame:
    """For the MRR rows: the closed form, its correlated form (equal to it at rho = 0),
    the one that applies, and the distance from the simulated mean in standard errors."""
    table = table.copy()
    is_mrr = (table["metric"] == MRR_KEY).to_numpy()
    closed = np.full(len(table), np.nan)
    correlated = np.full(len(table), np.nan)
    for density, rows in table[is_mrr].groupby("density").groups.items():
        subset = table.loc[rows]
        closed[table.index.get_indexer(rows)] = approximate_mrr(subset["strength"], density, num_answers)
        correlated[table.index.get_indexer(rows)] = approximate_correlated_mrr(
            subset["s_test"], subset["s_missing"], density, num_answers
        )
    table["approximation"] = closed
    table["approximation_correlated"] = correlated
    table["approximation_used"] = np.where(table["correlation"] == 0, closed, correlated)
    table["deviation_in_se"] = (table["mean"] - table["approximation_used"]) / table["standard_error"]
    table["within_3se"] = np.where(is_mrr, table["deviation_in_se"].abs() <= 3, np.nan)
    return table


def _ranges(strengths: np.ndarray, holds: np.ndarray, step: float) -> str:
    """Runs of consecutive grid strengths where ``holds``, as "0.30-0.52, 0.60-1.00"."""
    runs: list[str] = []
    start = previous = None
    for strength, ok in zip(strengths, holds, strict=True):
        if ok and start is not None and strength - previous <= step * 1.5:
            previous = strength
            continue
        if start is not None:
            runs.append(f"{start:.2f}-{previous:.2f}" if previous > start else f"{start:.2f}")
        start, previous = (strength, strength) if ok else (None, None)
    if start is not None:
        runs.append(f"{start:.2f}-{previous:.2f}" if previous > start else f"{start:.2f}")
    return ", ".join(runs) or "nowhere"


def approximation_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per (density, correlation): where the closed form lies within 3 standard errors of
    the simulated mean MRR, and how far it is elsewhere."""
    mrr = table[table["metric"] == MRR_KEY].sort_values("strength")
    step = float(np.diff(np.unique(mrr["strength"])).min()) if mrr["strength"].nunique() > 1 else 1.0
    rows = []
    for (density, correlation), cell in mrr.groupby(["density", "correlation"]):
        holds = cell["within_3se"].astype(bool).to_numpy()
        deviation = cell["deviation_in_se"].to_numpy()
        rows.append(
            {
                "density": density,
                "correlation": correlation,
                "queries_per_point": int(cell["queries"].iloc[0]),
                "form": "closed" if correlation == 0 else "correlated",
                "points_within_3se": f"{holds.sum()}/{len(holds)}",
                "holds_for_strength": _ranges(cell["strength"].to_numpy(), holds, step),
                "largest_deviation_in_se": float(deviation[np.argmax(np.abs(deviation))]),
                "largest_relative_error": float(
                    np.max(np.abs(cell["approximation_used"] / cell["mean"] - 1.0))
                ),
                "clipped_points": int(cell["clipped"].sum()),
            }
        )
    return pd.DataFrame(rows)
