"""Rank-based metrics, their moments under a random model, and their adjusted variants.

A base metric here is the arithmetic mean of a rank transformation f over n ranks,
M = (1/n) * sum_i f(r_i) (the Hölder mean M_1 of f; MR, MRR and Hits@k are all of this
form). Under the random model the ranks are independent and r_i is uniform on
{1, ..., N_i}, with N_i the candidate count of task i. Then, for any f,

    E[M]   = (1/n)   * sum_i E_i[f],          E_i[f] = (1/N_i) sum_{r=1}^{N_i} f(r)
    Var[M] = (1/n^2) * sum_i (E_i[f^2] - E_i[f]^2)

which each metric supplies in closed form per task; a constant N is the special case
N_i = N and needs no separate formula. Derived metrics are affine maps of the base
value with coefficients from these moments:

    expectation-normalised  M / E[M]                       (AMR)
    adjusted index          (M - E[M]) / (optimum - E[M])  (AMRI, AMRR, AH@k)
    z-score                 ±(M - E[M]) / sqrt(Var[M])     (ZMR, ZMRR, ZH@k)

The z-score's sign follows PyKEEN: flipped for metrics where lower is better, so a
larger z is always better.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import special

from kgrank.errors import KgrankInputError
from kgrank.ranks import RANK_COLUMNS

SIDE_ALL = ("head", "tail", "both")
MomentFunction = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def harmonic_number(n: np.ndarray, order: int = 1) -> np.ndarray:
    """Generalised harmonic number H_n^(order) = sum_{k=1}^{n} k^-order, for arrays of n."""
    n = np.asarray(n, dtype=float)
    if order == 1:
        return special.digamma(n + 1.0) + np.euler_gamma
    # Hurwitz zeta: sum_{k>=1} k^-s minus the tail sum_{k>=n+1} k^-s.
    return special.zeta(order, 1.0) - special.zeta(order, n + 1.0)


def _identity_moments(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = np.asarray(n, dtype=float)
    return (n + 1.0) / 2.0, (n + 1.0) * (2.0 * n + 1.0) / 6.0


def _reciprocal_moments(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = np.asarray(n, dtype=float)
    return harmonic_number(n, 1) / n, harmonic_number(n, 2) / n


def _hits_moments(k: int) -> MomentFunction:
    def moments(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = np.asarray(n, dtype=float)
        probability = np.minimum(k, n) / n
        return probability, probability  # an indicator equals its square

    return moments


@dataclass(frozen=True)
class Metric:
    """A base metric: the arithmetic mean of a rank transformation, with its moments."""

    key: str
    label: str
    transform_text: str
    transform: Callable[[np.ndarray], np.ndarray]
    task_moments: MomentFunction
    increasing: bool
    optimum: float
    value_range: tuple[float, float]
    synonyms: tuple[str, ...] = ()
    moment_method: str = "closed form"
    parameters: dict[str, float] = field(default_factory=dict)

    def value(self, ranks: np.ndarray) -> float:
        return float(np.mean(self.transform(ranks)))

    def moments(self, num_candidates: np.ndarray) -> tuple[float, float]:
        """Expectation and variance of the metric over tasks with these candidate counts."""
        unique_counts, inverse = np.unique(np.asarray(num_candidates), return_inverse=True)
        first, second = self.task_moments(unique_counts)
        task_variance = np.maximum(second - first * first, 0.0)
        n = len(inverse)
        return float(first[inverse].sum() / n), float(task_variance[inverse].sum() / (n * n))

    @property
    def index_key(self) -> str:
        # PyKEEN's naming: for lower-is-better metrics `adjusted_<key>` is already the
        # expectation-normalised variant (AMR), so the index takes an `_index` suffix.
        return f"adjusted_{self.key}" if self.increasing else f"adjusted_{self.key}_index"

    @property
    def normalized_key(self) -> str:
        return f"expectation_normalized_{self.key}" if self.increasing else f"adjusted_{self.key}"

    @property
    def z_key(self) -> str:
        return f"z_{self.key}"


def hits_at(k: int) -> Metric:
    if int(k) != k or k <= 0:
        raise KgrankInputError(f"metric hits_at_{k}: k must be a positive integer, got {k!r}")
    k = int(k)
    return Metric(
        key=f"hits_at_{k}",
        label=f"Hits@{k}",
        transform_text=f"1[r <= {k}]",
        transform=lambda ranks: (ranks <= k).astype(float),
        task_moments=_hits_moments(k),
        increasing=True,
        optimum=1.0,
        value_range=(0.0, 1.0),
        synonyms=(f"h@{k}", f"hits@{k}"),
        parameters={"k": k},
    )


MEAN_RANK = Metric(
    key="arithmetic_mean_rank",
    label="MR",
    transform_text="r",
    transform=lambda ranks: ranks.astype(float),
    task_moments=_identity_moments,
    increasing=False,
    optimum=1.0,
    value_range=(1.0, float("inf")),
    synonyms=("mean_rank", "mr"),
)
MEAN_RECIPROCAL_RANK = Metric(
    key="inverse_harmonic_mean_rank",
    label="MRR",
    transform_text="1/r",
    transform=lambda ranks: 1.0 / ranks,
    task_moments=_reciprocal_moments,
    increasing=True,
    optimum=1.0,
    value_range=(0.0, 1.0),
    synonyms=("mean_reciprocal_rank", "mrr"),
)

DEFAULT_HITS = (1, 3, 5, 10)


def default_metrics(hits: Iterable[int] = DEFAULT_HITS) -> list[Metric]:
    return [MEAN_RANK, MEAN_RECIPROCAL_RANK, *(hits_at(k) for k in hits)]


def check_ranks(metric_key: str, ranks: np.ndarray, num_candidates: np.ndarray) -> None:
    """Ranks must be finite, non-empty and inside [1, N_i]; say which value is not."""
    if len(ranks) == 0:
        raise KgrankInputError(f"metric {metric_key}: empty rank set; nothing to evaluate")
    bad = ~np.isfinite(ranks) | (ranks < 1) | (ranks > num_candidates)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise KgrankInputError(
            f"metric {metric_key}: rank {float(ranks[index])} at position {index} is outside "
            f"[1, {num_candidates[index]}] (its candidate count); recompute the ranks"
        )


def metric_rows(ranks: np.ndarray, num_candidates: np.ndarray, metric: Metric) -> list[dict]:
    """The base value and its three derived variants, each with its own E and Var."""
    ranks = np.asarray(ranks, dtype=float)
    num_candidates = np.asarray(num_candidates)
    check_ranks(metric.key, ranks, num_candidates)
    value = metric.value(ranks)
    expectation, variance = metric.moments(num_candidates)
    sign = 1.0 if metric.increasing else -1.0
    span = metric.optimum - expectation
    std = np.sqrt(variance)
    # With a single candidate everywhere a random model is optimal: the adjusted index
    # and the z-score are undefined (0/0) and reported as NaN rather than as a number.
    defined = span != 0 and std > 0
    return [
        {"metric": metric.key, "value": value, "expectation": expectation, "variance": variance},
        {
            "metric": metric.normalized_key,
            "value": value / expectation,
            "expectation": 1.0,
            "variance": variance / expectation**2,
        },
        {
            "metric": metric.index_key,
            "value": (value - expectation) / span if defined else float("nan"),
            "expectation": 0.0 if defined else float("nan"),
            "variance": variance / span**2 if defined else float("nan"),
        },
        {
            "metric": metric.z_key,
            "value": sign * (value - expectation) / std if defined else float("nan"),
            "expectation": 0.0 if defined else float("nan"),
            "variance": 1.0 if defined else float("nan"),
        },
    ]


def evaluate_rank_table(ranks: pd.DataFrame, metrics: Sequence[Metric] | None = None) -> pd.DataFrame:
    """Every metric for side in {head, tail, both} and every rank type, as a tidy table."""
    metrics = list(metrics) if metrics is not None else default_metrics()
    rows: list[dict] = []
    for side in SIDE_ALL:
        subset = ranks if side == "both" else ranks[ranks["side"] == side]
        num_candidates = subset["num_candidates"].to_numpy()
        for rank_type in RANK_COLUMNS:
            values = subset[rank_type].to_numpy(dtype=float)
            for metric in metrics:
                for row in metric_rows(values, num_candidates, metric):
                    rows.append({"side": side, "rank_type": rank_type, **row})
    return pd.DataFrame(rows, columns=["side", "rank_type", "metric", "value", "expectation", "variance"])
