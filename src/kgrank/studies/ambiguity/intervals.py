"""The study's one kind of confidence interval: scipy's paired percentile bootstrap."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
from scipy import stats


def paired_percentile_interval(
    first: np.ndarray,
    second: np.ndarray,
    statistic: Callable[..., np.ndarray],
    *,
    confidence: float,
    resamples: int,
    seed: int | Sequence[int],
    batch: int | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(first, second, axis)``, resampling
    the pairs (first[i], second[i]) together; ``batch`` bounds the resamples held at once."""
    with warnings.catch_warnings():
        # a resampling that draws one point many times is degenerate; the percentile
        # interval is still what it is
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        interval = stats.bootstrap(
            (first, second),
            statistic,
            paired=True,
            vectorized=True,
            confidence_level=confidence,
            n_resamples=resamples,
            method="percentile",
            batch=batch,
            random_state=np.random.default_rng(seed),
        ).confidence_interval
    return float(interval.low), float(interval.high)
