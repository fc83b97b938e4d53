"""How often the stronger of two simulated models reports the lower metric, and how many
test queries make the comparison consistent; and which metrics saturate least.

Two models are compared on the same test set: each query has the same number of test
answers for both, and each model learns its answers independently with its own strength.
Test sets of Q queries are drawn (with replacement) from a pool of simulated query pairs;
every replicate is a nested sequence, so the first Q queries of one replicate serve
every Q at once. A tie counts as half an inversion: a coin would decide the order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from kgrank.errors import KgrankInputError
from kgrank.metrics import Metric, Variant, macro_mean_moments
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
    """The metric, its adjusted index and its z-score (as :func:`kgrank.metrics.derived_values`
    defines them) for arrays of (mean, E, Var)."""
    sign = 1.0 if metric.increasing else -1.0
    return {
        ("value", metric.key): means,
        (str(Variant.INDEX), metric.variant_key(Variant.INDEX)): (means - expectation)
        / (metric.optimum - expectation),
        (str(Variant.Z_SCORE), metric.variant_key(Variant.Z_SCORE)): sign
        * (means - expectation)
        / np.sqrt(variance),
    }


def inversion_table(
    world: OpenWorld,
    densities: Sequence[float],
    pairs: Sequence[tuple[float, float]],
    query_counts: Sequence[int],
    metrics: Sequence[Metric],
    *,
    pool_queries: int,
    replicates: int,
    seed: int,
    progress: bool = True,
) -> pd.DataFrame:
    """Per density, pair (s2 < s1), metric variant and number of queries Q: the simulated
    probability that model 1 reports the lower value (ties half), the probability of a
    tie, and the normal approximation Phi(-sqrt(Q) mu / sigma) from the pool's mean and
    standard deviation of the per-query difference."""
    from tqdm.auto import tqdm

    query_counts = np.array(sorted(set(int(q) for q in query_counts)))
    if query_counts[0] < 1:
        raise KgrankInputError("open-world inconsistency: query counts must be positive")
    strengths = sorted({s for pair in pairs for s in pair})
    registry = {metric.key: _query_moments(metric, world) for metric in metrics}
    rows: list[dict] = []
    for density_index, density in enumerate(tqdm(densities, desc="inconsistency", disable=not progress)):
        rng = np.random.default_rng([seed, 1_000 + density_index])
        num_test = rng.binomial(world.num_answers, density, size=pool_queries)
        # A query without test answers is not evaluated: redraw it (probability (1-alpha)^A).
        while (num_test == 0).any():
            num_test[num_test == 0] = rng.binomial(world.num_answers, density, size=(num_test == 0).sum())
        values: dict[float, dict[str, np.ndarray]] = {}
        for strength in strengths:
            s_test, s_missing, _ = learning_probabilities(np.full(pool_queries, strength), density, 0.0)
            simulated = simulate_queries(rng, world, s_test, s_missing, density, num_test=num_test)
            values[strength] = {metric.key: simulated.query_values(metric) for metric in metrics}
        draws = rng.integers(0, pool_queries, size=(replicates, int(query_counts[-1])))
        at = query_counts - 1
        for metric in metrics:
            expectation, variance = registry[metric.key]
            mean_expectation = np.cumsum(expectation[num_test][draws], axis=1)[:, at] / query_counts
            mean_variance = np.cumsum(variance[num_test][draws], axis=1)[:, at] / query_counts**2
            for weaker, stronger in pairs:
                per_model = []
                for strength in (stronger, weaker):
                    means = np.cumsum(values[strength][metric.key][draws], axis=1)[:, at] / query_counts
                    per_model.append(_variant_values(metric, means, mean_expectation, mean_variance))
                difference = values[stronger][metric.key] - values[weaker][metric.key]
                mu, sigma = float(difference.mean()), float(difference.std(ddof=1))
                if not metric.increasing:
                    mu = -mu
                normal = (
                    stats.norm.cdf(-np.sqrt(query_counts) * mu / sigma)
                    if sigma > 0
                    else np.full(len(query_counts), float(mu <= 0))
                )
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
                                "sd_difference": sigma,
                                "replicates": replicates,
                                "pool_queries": pool_queries,
                            }
                        )
    return pd.DataFrame(rows)


def queries_needed(inversions: pd.DataFrame, consistency: float = CONSISTENCY) -> pd.DataFrame:
    """Per density, metric and pair: the fewest queries of the grid at which the stronger
    model wins with probability >= ``consistency``, simulated, and the normal
    approximation's (z sigma / mu)^2 (rounded up). The approximation needs mu itself, known
    from the pool only to sigma / sqrt(pool): where mu is not two of those above zero the
    pool cannot tell how many queries it takes (``resolved`` false, NaN)."""
    z = stats.norm.ppf(consistency)
    rows = []
    keys = ["density", "metric", "variant", "strength_weaker", "strength_stronger", "gap"]
    for key, group in inversions.groupby(keys, sort=False):
        group = group.sort_values("queries")
        enough = group[group["inversion_probability"] <= 1 - consistency]
        mu, sigma = group["mean_difference"].iloc[0], group["sd_difference"].iloc[0]
        resolved = bool(mu > 2 * sigma / np.sqrt(group["pool_queries"].iloc[0]))
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                "queries_simulated": int(enough["queries"].iloc[0]) if len(enough) else np.nan,
                "more_than": int(group["queries"].max()) if not len(enough) else np.nan,
                "resolved": resolved,
                "queries_normal": float(np.ceil((z * sigma / mu) ** 2)) if resolved else np.nan,
            }
        )
    return pd.DataFrame(rows)


def local_slope(
    strengths: np.ndarray, means: np.ndarray, at: float, half_width: float
) -> tuple[float, float]:
    """Least-squares slope of the simulated curve over [at - h, at + h] and its standard
    error: a finite difference of two noisy means would be mostly noise."""
    window = np.abs(strengths - at) <= half_width + 1e-9
    if window.sum() < 3:
        raise KgrankInputError(
            f"saturation slope at s = {at}: fewer than 3 grid strengths within {half_width}; "
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
