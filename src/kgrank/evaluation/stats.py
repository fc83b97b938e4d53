"""The statistics every study shares, each with one contract: seeds, paired tests,
Holm's correction, Kendall's tau-b and bootstrap intervals (percentile or BCa).

The computations are scipy's and statsmodels'; this module fixes what they leave open
(what a degenerate input returns, how NaN is treated, how a seed is derived) so that two
studies never answer the same question two ways. Sampling statistics of a model's
metric live here; moments under the random model live in :mod:`kgrank.evaluation.moments`.
"""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from kgrank.garbage import frozen_objects

# scipy.stats and statsmodels (1 s to import) are imported by the functions that test or
# resample: every study takes its seeds from here, and most of its steps need nothing else.

SeedKey = int | str


def seed_sequence(seed: int | Sequence[SeedKey], *keys: SeedKey) -> np.random.SeedSequence:
    """The one way kgrank derives a seed: the config's ``seed`` and the keys that name
    one stream (a dataset, an index, a replicate; names count by their CRC-32).
    ``seed_sequence(7, "nations", 1)`` is ``SeedSequence([7, crc32("nations"), 1])``."""
    # A name becomes its CRC-32: stable across processes and Python versions, unlike hash().
    # A seed may itself be a stream's key list ([seed, side, rank type]), names included.
    parts = [seed] if isinstance(seed, int | np.integer | str) else list(seed)
    return np.random.SeedSequence(
        [zlib.crc32(key.encode()) if isinstance(key, str) else int(key) for key in [*parts, *keys]]
    )


def seed_stream(seed: int | Sequence[SeedKey], *keys: SeedKey) -> np.random.Generator:
    """numpy's default generator on :func:`seed_sequence` (``seed``, ``*keys``)."""
    return np.random.default_rng(seed_sequence(seed, *keys))


@dataclass(frozen=True)
class CrossedVariance:
    """The variance of the grand mean of a tasks x runs table (each run of a system, a
    training seed, scored on every task), split by source (:func:`crossed_variance`)."""

    mean: float
    variance: float  # of the grand mean: seed + task + residual
    seed: float  # sigma_seed^2 / runs
    task: float  # sigma_task^2 / tasks
    residual: float  # sigma_residual^2 / (tasks * runs)
    degrees_of_freedom: float  # Satterthwaite's, of ``variance`` as a sum of mean squares

    @property
    def seed_share(self) -> float:
        """The share of the grand mean's variance that new seeds would move."""
        return self.seed / self.variance if self.variance > 0 else float("nan")


def crossed_variance(values: np.ndarray) -> CrossedVariance:
    """The variance components of a two-way crossed random design without replication
    (tasks x runs: every run scores every task once) by the method of moments, and the
    variance of the grand mean they give:

        MS_run  = T sum_r (mean_r - mean)^2 / (R - 1)
        MS_task = R sum_t (mean_t - mean)^2 / (T - 1)
        MS_res  = sum_tr (y_tr - mean_t - mean_r + mean)^2 / ((T - 1)(R - 1))
        sigma_seed^2 = (MS_run - MS_res) / T,  sigma_task^2 = (MS_task - MS_res) / R,
        sigma_res^2 = MS_res  (a negative estimate is set to 0)
        Var[mean] = sigma_seed^2 / R + sigma_task^2 / T + sigma_res^2 / (T R)

    Var[mean] T R is a linear combination of the three mean squares (MS_run + MS_task -
    MS_res where no component is set to 0); its degrees of freedom are Satterthwaite's
    (sum c_i MS_i)^2 / sum (c_i MS_i)^2 / df_i, for a t quantile in place of the normal
    one, and at most the seeds' R - 1 wherever the seed component is estimated above 0.
    That bound is there because simulation found Satterthwaite's estimate too generous
    with few seeds: its weights come from the same noisy mean squares, and where the seeds
    happen to agree the task term takes over. With two seeds whose spread equals the tasks'
    (and outweighs their mean's), the 95 % interval covered 87 %; with the bound it covers
    94-100 % in every design of tests/test_stats.py (wider than needed where the tasks
    dominate: up to 3.5 times with two seeds).

    Written here because no well-kept library gives it in closed form: statsmodels'
    MixedLM fits crossed effects by iterative REML, which takes minutes on 40,000 tasks;
    the moment estimators are those of any two-way ANOVA text (Searle, Casella and
    McCulloch 1992, ch. 4) and tests/test_stats.py checks them against simulation."""
    values = np.asarray(values, dtype=float)
    if values.ndim != 2 or values.shape[0] < 2 or values.shape[1] < 2:
        raise ValueError(f"a crossed design needs at least two tasks and two runs, got shape {values.shape}")
    if not np.isfinite(values).all():
        raise ValueError("a crossed design needs finite values")
    tasks, runs = values.shape
    mean = float(values.mean())
    task_means, run_means = values.mean(axis=1), values.mean(axis=0)
    residual = values - task_means[:, None] - run_means[None, :] + mean
    ms_run = tasks * float(np.sum((run_means - mean) ** 2)) / (runs - 1)
    ms_task = runs * float(np.sum((task_means - mean) ** 2)) / (tasks - 1)
    ms_residual = float(np.sum(residual**2)) / ((tasks - 1) * (runs - 1))
    seed = max(ms_run - ms_residual, 0.0) / tasks / runs
    task = max(ms_task - ms_residual, 0.0) / runs / tasks
    residual_part = ms_residual / (tasks * runs)
    # the coefficients of MS_run, MS_task, MS_res in Var[mean] T R (a component set to 0 drops out)
    seed_kept, task_kept = float(ms_run > ms_residual), float(ms_task > ms_residual)
    terms = np.array([seed_kept * ms_run, task_kept * ms_task, (1 - seed_kept - task_kept) * ms_residual])
    freedom = np.array([runs - 1, tasks - 1, (tasks - 1) * (runs - 1)], dtype=float)
    spread = float(np.sum(terms**2 / freedom))
    degrees = float(np.sum(terms) ** 2 / spread) if spread > 0 else float("inf")
    if seed > 0:
        degrees = min(degrees, runs - 1.0)
    return CrossedVariance(mean, seed + task + residual_part, seed, task, residual_part, degrees)


def welch_test(first: np.ndarray, second: np.ndarray) -> tuple[float, float]:
    """Welch's two-sample t-test (scipy.stats.ttest_ind with unequal variances) of
    ``first`` against ``second``: (t, two-sided p), t signed like mean(first) -
    mean(second). NaN, not a warning, where either sample has fewer than two values or
    neither varies (equal means: t 0 and p 1)."""
    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if len(first) < 2 or len(second) < 2:
        return float("nan"), float("nan")
    if np.ptp(first) == 0 and np.ptp(second) == 0:
        return (0.0, 1.0) if first[0] == second[0] else (float("nan"), float("nan"))
    from scipy import stats

    result = stats.ttest_ind(first, second, equal_var=False)
    return float(result.statistic), float(result.pvalue)


@dataclass(frozen=True)
class PairedTest:
    """Paired two-sided tests of ``first - second`` over the same tasks."""

    mean_difference: float
    t_statistic: float
    t_p: float
    wilcoxon_p: float


def paired_tests(first: np.ndarray, second: np.ndarray, *, wilcoxon: bool = True) -> PairedTest:
    """Student's paired t-test (scipy.stats.ttest_rel) and Wilcoxon's signed-rank test
    (scipy.stats.wilcoxon) of ``first - second``; ``wilcoxon=False`` skips the latter
    (its p-value is then NaN), for callers that report the t-test only.

    Degenerate inputs have one answer here, where scipy returns NaN or warns:
    identical vectors leave nothing to test (statistic 0, both p-values 1); a constant
    non-zero difference has no variance (t infinite with its sign, t's p-value 0; the
    signed-rank test is still defined). Missing values are refused."""
    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if first.shape != second.shape or first.ndim != 1:
        raise ValueError(f"paired tests need two vectors of one length, got {first.shape} and {second.shape}")
    if not (np.isfinite(first).all() and np.isfinite(second).all()):
        raise ValueError("paired tests need finite values")
    difference = first - second
    if not np.any(difference != 0):
        return PairedTest(0.0, 0.0, 1.0, 1.0 if wilcoxon else float("nan"))
    from scipy import stats

    wilcoxon_p = float(stats.wilcoxon(first, second).pvalue) if wilcoxon else float("nan")
    if np.all(difference == difference[0]):
        return PairedTest(float(difference[0]), float(np.copysign(np.inf, difference[0])), 0.0, wilcoxon_p)
    result = stats.ttest_rel(first, second)
    return PairedTest(float(difference.mean()), float(result.statistic), float(result.pvalue), wilcoxon_p)


def holm(p_values: Sequence[float] | np.ndarray, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Holm's step-down correction (statsmodels' multipletests, method ``holm``) over the
    given family: (rejected at ``alpha``, adjusted p-values). A NaN p-value (a test that
    could not be made) is not part of the family: its adjusted value is NaN, never
    rejected."""
    p_values = np.asarray(p_values, dtype=float)
    rejected = np.zeros(p_values.shape, dtype=bool)
    adjusted = np.full(p_values.shape, np.nan)
    made = np.isfinite(p_values)
    if made.any():
        from statsmodels.stats.multitest import multipletests

        # statsmodels' holm branch ends in gc.collect(): 12 of the 22 s of the tiny config's
        # ir-discrimination job before the objects were frozen (kgrank.garbage)
        with frozen_objects():
            rejected[made], adjusted[made], _, _ = multipletests(p_values[made], alpha=alpha, method="holm")
    return rejected, adjusted


def kendall_tau(first: np.ndarray, second: np.ndarray) -> tuple[float, float]:
    """Kendall's tau-b of two value vectors over the same systems with its two-sided
    p-value (scipy.stats.kendalltau); NaN for fewer than two systems, a missing value or
    a constant vector (no ranking to compare)."""
    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if len(first) < 2 or not (np.isfinite(first).all() and np.isfinite(second).all()):
        return float("nan"), float("nan")
    if np.ptp(first) == 0 or np.ptp(second) == 0:
        return float("nan"), float("nan")
    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.kendalltau(first, second)
    return float(result.statistic), float(result.pvalue)


def kendall_tau_b_rows(reference: np.ndarray, rankings: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between one value vector over the systems and each row of
    ``rankings`` (rows: e.g. subsets, columns: systems); NaN where either side is constant
    or has a missing value. The value of :func:`kendall_tau` row by row.

    Written out because a stability analysis compares tens of thousands of rankings of a
    handful of systems, where scipy's per-call overhead dominates: with s the sign over
    all system pairs, tau_b = sum(s_ref s_row) / sqrt(#{s_ref != 0} #{s_row != 0})."""
    reference = np.asarray(reference, dtype=float)
    rankings = np.atleast_2d(np.asarray(rankings, dtype=float))
    first, second = np.triu_indices(len(reference), k=1)
    sign_reference = np.sign(reference[first] - reference[second])
    sign_rankings = np.sign(rankings[:, first] - rankings[:, second])
    numerator = (sign_rankings * sign_reference).sum(axis=1)
    denominator = np.sqrt(np.count_nonzero(sign_reference) * np.count_nonzero(sign_rankings, axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = numerator / denominator
    missing = ~np.isfinite(reference).all() | ~np.isfinite(rankings).all(axis=1)
    return np.where((denominator > 0) & ~missing, tau, np.nan)


def bootstrap_interval(
    samples: Sequence[np.ndarray],
    statistic: Callable[..., np.ndarray],
    *,
    method: str = "percentile",
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int | Sequence[int] | np.random.SeedSequence = 0,
    paired: bool = True,
    batch: int | None = None,
) -> tuple[float, float]:
    """Bootstrap interval (scipy.stats.bootstrap, ``method`` "percentile" or "BCa") of
    ``statistic(*samples, axis)`` (vectorised), resampling the samples' rows together
    when ``paired``; ``batch`` bounds the resamples held at once."""
    from scipy import stats

    with warnings.catch_warnings():
        # a resample that draws one point many times is degenerate; the interval is
        # still what it is
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        interval = stats.bootstrap(
            tuple(samples),
            statistic,
            paired=paired,
            vectorized=True,
            confidence_level=confidence,
            n_resamples=resamples,
            method=method,
            batch=batch,
            random_state=np.random.default_rng(seed),
        ).confidence_interval
    return float(interval.low), float(interval.high)


def bootstrap_batch(tasks: int) -> int:
    """The resamples of ``tasks`` values each that one batch of :func:`bootstrap_interval`
    holds: about 20 MB of resampled values at once."""
    return max(1, 20_000_000 // (8 * tasks))


def _mean_difference(first: np.ndarray, second: np.ndarray, axis: int = -1) -> np.ndarray:
    return first.mean(axis=axis) - second.mean(axis=axis)


def mean_difference_interval(
    first: np.ndarray,
    second: np.ndarray,
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int | Sequence[int] | np.random.SeedSequence = 0,
) -> tuple[float, float]:
    """Paired percentile bootstrap interval of mean(first) - mean(second) over the same
    tasks; exactly 0 at both ends for identical vectors."""
    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    difference = first - second
    if np.ptp(difference) == 0:
        return float(difference[0]), float(difference[0])
    return bootstrap_interval(
        (first, second),
        _mean_difference,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        batch=bootstrap_batch(len(first)),
    )
