"""How often the stronger of two simulated models reports the lower metric, and how many
test queries make the comparison consistent; and which metrics saturate least.

Two models are compared on the same test set: each query has the same number of test
answers for both, and each model learns its answers independently with its own strength.
Every replicate is a fresh test set of the largest Q simulated queries (no query is used
twice), and its first Q queries serve every smaller Q at once. Resampling a fixed pool
instead would centre every replicate on the pool's own mean difference, an error that
more replicates cannot remove. A tie counts as half an inversion: a coin would decide
the order. Pairs that share a strength share that model's simulated queries, so their
rows are correlated; each row on its own is an honest paired comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats

from kgrank.errors import KgrankInputError
from kgrank.evaluation.metrics import Metric, Variant, derive, macro_mean_moments
from kgrank.evaluation.stats import kendall_tau, seed_stream
from kgrank.studies.openworld.settings import SLOPE_POINTS, STRENGTH_TOLERANCE
from kgrank.studies.openworld.simulation import (
    MRR_KEY,
    OpenWorld,
    learning_probabilities,
    simulate_queries,
)

CONSISTENCY = 0.95


def pair_strengths(weaker: Sequence[float], gaps: Sequence[float]) -> list[tuple[float, float]]:
    """(s2, s1 = s2 + gap) for every weaker strength and gap with s1 <= 1."""
    pairs = [(round(s2, 10), round(s2 + gap, 10)) for s2 in weaker for gap in gaps if s2 + gap <= 1 + 1e-12]
    if not pairs:
        raise KgrankInputError(
            "open-world inconsistency: no pair of strengths with s2 + gap <= 1; correct "
            "studies.openworld.inconsistency.weaker_strengths or gaps"
        )
    return pairs


def _query_moments(metric: Metric, world: OpenWorld) -> tuple[np.ndarray, np.ndarray]:
    """E and Var under the random model of one query's mean, by its number of test answers
    (index n; each answer has N - n + 1 candidates), from the metric registry."""
    expectation = np.full(world.num_answers + 1, np.nan)
    variance = np.full(world.num_answers + 1, np.nan)
    for count in range(1, world.num_answers + 1):
        moments = macro_mean_moments(
            metric, np.full(count, world.num_entities - count + 1), np.zeros(count, dtype=int)
        )
        expectation[count], variance[count] = moments.expectation, moments.variance
    return expectation, variance


def _variant_values(metric: Metric, means: np.ndarray, expectation: np.ndarray, variance: np.ndarray) -> dict:
    """The metric, its adjusted index and its z-score (:func:`kgrank.evaluation.metrics.derive`) for
    arrays of (mean, E, Var)."""
    derived = derive(metric, means, expectation, variance)
    return {
        ("value", metric.key): means,
        **{
            (str(variant), metric.variant_key(variant)): derived[variant].value
            for variant in (Variant.INDEX, Variant.Z_SCORE)
        },
    }


def _simulated_values(
    rng: np.random.Generator,
    world: OpenWorld,
    density: float,
    strength: float,
    num_test: np.ndarray,
    metrics: Sequence[Metric],
    chunk: int = 50_000,
) -> dict[str, np.ndarray]:
    """Each metric of one model on the queries ``num_test`` describes, simulated in chunks
    so that memory stays bounded."""
    parts: dict[str, list[np.ndarray]] = {metric.key: [] for metric in metrics}
    for start in range(0, len(num_test), chunk):
        counts = num_test[start : start + chunk]
        s_test, s_missing, _ = learning_probabilities(np.full(len(counts), strength), density, 0.0)
        simulated = simulate_queries(rng, world, s_test, s_missing, density, num_test=counts)
        for metric in metrics:
            parts[metric.key].append(simulated.query_values(metric))
    return {key: np.concatenate(values) for key, values in parts.items()}


def inversion_table(
    world: OpenWorld,
    densities: Sequence[float],
    pairs: Sequence[tuple[float, float]],
    query_counts: Sequence[int],
    metrics: Sequence[Metric],
    *,
    replicates: int,
    seed: int,
    progress: bool = True,
) -> pd.DataFrame:
    """Per density, pair (s2 < s1), metric variant and number of queries Q: the simulated
    probability that model 1 reports the lower value (ties half) over ``replicates`` fresh
    test sets, the probability of a tie, and the normal approximation Phi(-sqrt(Q) mu /
    sigma) from the mean and standard deviation of the per-query difference over all
    simulated queries (``mean_difference_error``: the standard error of that mean)."""
    from tqdm.auto import tqdm

    query_counts = np.array(sorted(set(int(q) for q in query_counts)))
    if query_counts[0] < 1:
        raise KgrankInputError("open-world inconsistency: query counts must be positive")
    if any(stronger <= weaker for weaker, stronger in pairs):
        raise KgrankInputError(
            "open-world inconsistency: every pair needs s1 > s2 (a model compared with itself says "
            "nothing); correct studies.openworld.inconsistency.gaps"
        )
    strengths = sorted({s for pair in pairs for s in pair})
    registry = {metric.key: _query_moments(metric, world) for metric in metrics}
    largest = int(query_counts[-1])
    at = query_counts - 1
    rows: list[dict] = []
    for density_index, density in enumerate(tqdm(densities, desc="inconsistency", disable=not progress)):
        rng = seed_stream(seed, 1_000 + density_index)
        num_test = rng.binomial(world.num_answers, density, size=replicates * largest)
        # A query without test answers is not evaluated: redraw it (probability (1-alpha)^A).
        while (num_test == 0).any():
            num_test[num_test == 0] = rng.binomial(world.num_answers, density, size=(num_test == 0).sum())
        values = {
            strength: _simulated_values(rng, world, density, strength, num_test, metrics)
            for strength in strengths
        }

        def prefix_means(per_query: np.ndarray) -> np.ndarray:
            """(replicates, len(query_counts)): each test set's mean over its first Q queries."""
            return np.cumsum(per_query.reshape(replicates, largest), axis=1)[:, at] / query_counts

        for metric in metrics:
            expectation, variance = registry[metric.key]
            mean_expectation = prefix_means(expectation[num_test])
            mean_variance = prefix_means(variance[num_test]) / query_counts
            for weaker, stronger in pairs:
                per_model = [
                    _variant_values(
                        metric, prefix_means(values[strength][metric.key]), mean_expectation, mean_variance
                    )
                    for strength in (stronger, weaker)
                ]
                difference = values[stronger][metric.key] - values[weaker][metric.key]
                mu, sigma = float(difference.mean()), float(difference.std(ddof=1))
                if not metric.increasing:
                    mu = -mu
                if sigma > 0:
                    normal = stats.norm.cdf(-np.sqrt(query_counts) * mu / sigma)
                else:  # no spread: the order is fixed, or a tie (half) when there is no difference
                    normal = np.full(len(query_counts), 0.5 if mu == 0 else float(mu < 0))
                for (variant, key), first in per_model[0].items():
                    second = per_model[1][(variant, key)]
                    better = metric.increasing or variant != "value"
                    worse = (first < second) if better else (first > second)
                    tied = np.isclose(first, second, rtol=0, atol=1e-12)
                    inverted = (worse & ~tied).mean(axis=0) + 0.5 * tied.mean(axis=0)
                    for position, count in enumerate(query_counts):
                        rows.append(
                            {
                                "density": density,
                                "metric": key,
                                "base_metric": metric.key,
                                "variant": variant,
                                "strength_weaker": weaker,
                                "strength_stronger": stronger,
                                "gap": round(stronger - weaker, 10),
                                "queries": int(count),
                                "inversion_probability": float(inverted[position]),
                                "tie_probability": float(tied[:, position].mean()),
                                "normal_approximation": float(normal[position]),
                                "mean_difference": mu,
                                "mean_difference_error": sigma / np.sqrt(len(difference)),
                                "sd_difference": sigma,
                                "replicates": replicates,
                            }
                        )
    return pd.DataFrame(rows)


def _needed(z: float, sigma: float, difference: float) -> float:
    """Queries for P(mean difference > 0) = Phi(z) under the normal approximation."""
    return float(np.ceil((z * sigma / difference) ** 2)) if difference > 0 else np.inf


def queries_needed(inversions: pd.DataFrame, consistency: float = CONSISTENCY) -> pd.DataFrame:
    """Per density, metric and pair: the fewest queries at which the stronger model wins
    with probability >= ``consistency``. ``queries_simulated`` is the smallest value of the
    simulated grid that reaches it (an upper bound; NaN beyond the grid, whose end is
    ``more_than``); ``queries_normal`` is the normal approximation's (z sigma / mu)^2, with
    ``queries_normal_low``/``_high`` from mu +- 2 standard errors. Where mu is not two
    standard errors above zero the simulation cannot say how many queries it takes
    (``resolved`` false; the estimate NaN, the upper end infinite)."""
    z = stats.norm.ppf(consistency)
    rows = []
    keys = ["density", "metric", "variant", "strength_weaker", "strength_stronger", "gap"]
    for key, group in inversions.groupby(keys, sort=False):
        group = group.sort_values("queries")
        enough = group[group["inversion_probability"] <= 1 - consistency]
        first = group.iloc[0]
        mu, error, sigma = first["mean_difference"], first["mean_difference_error"], first["sd_difference"]
        resolved = bool(mu > 2 * error)

        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                "queries_simulated": int(enough["queries"].iloc[0]) if len(enough) else np.nan,
                "more_than": int(group["queries"].max()) if not len(enough) else np.nan,
                "resolved": resolved,
                "queries_normal": _needed(z, sigma, mu) if resolved else np.nan,
                "queries_normal_low": _needed(z, sigma, mu + 2 * error),
                "queries_normal_high": _needed(z, sigma, mu - 2 * error),
            }
        )
    return pd.DataFrame(rows)


def local_slope(
    strengths: np.ndarray, means: np.ndarray, at: float, half_width: float
) -> tuple[float, float]:
    """Least-squares slope of the simulated curve over [at - h, at + h] and its standard
    error: a finite difference of two noisy means would be mostly noise."""
    window = np.abs(strengths - at) <= half_width + STRENGTH_TOLERANCE
    if window.sum() < SLOPE_POINTS:
        raise KgrankInputError(
            f"saturation slope at s = {at}: fewer than {SLOPE_POINTS} grid strengths within {half_width}; "
            "widen studies.openworld.saturation.half_width or the strength grid"
        )
    fit = stats.linregress(strengths[window], means[window])
    return float(fit.slope), float(fit.stderr)


def saturation_table(
    grid: pd.DataFrame,
    inversions: pd.DataFrame,
    *,
    low: float,
    high: float,
    half_width: float,
    comparison_queries: int,
) -> pd.DataFrame:
    """Per metric variant and density (no correlation): the slope of the simulated curve
    at s = high relative to s = low (1 = no saturation; the closed form of MRR gives
    low / high), and the mean inversion probability over the simulated pairs at
    ``comparison_queries`` queries. Where the slope at s = low is within two standard
    errors of zero the metric does not respond to strength there at all, and a ratio
    would divide noise by noise: it is reported as NaN with ``responds_at_low`` false."""
    rows = []
    uncorrelated = grid[grid["correlation"] == 0]
    compared = inversions[inversions["queries"] == comparison_queries]
    if compared.empty:
        raise KgrankInputError(
            f"saturation table: no inversions simulated at {comparison_queries} queries; add it to "
            "studies.openworld.inconsistency.query_counts"
        )
    for (metric, density), curve in uncorrelated.groupby(["metric", "density"], sort=False):
        curve = curve.sort_values("strength")
        strengths, means = curve["strength"].to_numpy(), curve["mean"].to_numpy()
        slope_low, error_low = local_slope(strengths, means, low, half_width)
        slope_high, _ = local_slope(strengths, means, high, half_width)
        responds = abs(slope_low) > 2 * error_low
        inverted = compared[(compared["metric"] == metric) & (compared["density"] == density)]
        rows.append(
            {
                "metric": metric,
                "label": curve["label"].iloc[0],
                "variant": curve["variant"].iloc[0],
                "density": density,
                "slope_low": slope_low,
                "slope_high": slope_high,
                "responds_at_low": bool(responds),
                "slope_ratio": slope_high / slope_low if responds else np.nan,
                "inversion_probability": float(inverted["inversion_probability"].mean()),
                "pairs": len(inverted),
            }
        )
    table = pd.DataFrame(rows)
    closed = pd.DataFrame(
        [
            {
                "metric": f"closed form of {MRR_KEY}",
                "label": "MRR (closed form)",
                "variant": "value",
                "density": density,
                "slope_low": np.nan,
                "slope_high": np.nan,
                "responds_at_low": True,
                "slope_ratio": low / high,
                "inversion_probability": np.nan,
                "pairs": 0,
            }
            for density in table["density"].unique()
        ]
    )
    return pd.concat([table, closed], ignore_index=True)


def inversion_counts(checkpoints: pd.DataFrame) -> pd.DataFrame:
    """The family-tree experiment's inversions (``kgrank.studies.openworld.familytree``'s
    checkpoints): per (variant of the graph, density, metric), over all pairs of checkpoints
    (every configuration and epoch), how many the sparse metric orders against the full one
    (ties in either count apart), and Kendall's tau between the two."""
    keys = ["graph", "density", "metric", "label", "variant"]
    wide = checkpoints.pivot_table(
        index=[*keys, "configuration", "epoch"], columns="evaluation", values="value"
    ).reset_index()
    rows = []
    for key, group in wide.groupby(keys, sort=False):
        sparse, full = group["sparse"].to_numpy(), group["full"].to_numpy()
        pairs = list(combinations(range(len(group)), 2))
        sparse_sign = np.sign([sparse[j] - sparse[i] for i, j in pairs])
        full_sign = np.sign([full[j] - full[i] for i, j in pairs])
        tau, _ = kendall_tau(sparse, full)
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                "checkpoints": len(group),
                "pairs": len(pairs),
                "inverted": int((sparse_sign * full_sign < 0).sum()),
                "tied": int(((sparse_sign == 0) | (full_sign == 0)).sum()),
                "kendall_tau": float(tau),
            }
        )
    return pd.DataFrame(rows)
