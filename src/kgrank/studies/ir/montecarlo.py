"""The Monte Carlo check of the macro moments, on the study's own query structure.

A macro metric scores each query by its best-ranked relevant answer. Under the random
model the R relevant answers and the M other candidates of a query come in random order,
and ``kgrank.evaluation.moments.best_rank_moments`` gives E and E[f(K)^2] of the best rank K from
the hypergeometric product P(K >= k). The simulation reaches K another way, so that it
checks the formula rather than repeating it: give every candidate an i.i.d. uniform key
and sort by it. The smallest key among the relevant ones is Beta(1, R); given it, each of
the M others falls below it independently, so K = 1 + Binomial(M, Beta(1, R)), which
costs two draws per query instead of sorting M + R keys.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from kgrank.errors import KgrankInputError
from kgrank.evaluation.metrics import lookup
from kgrank.evaluation.moments import apply_familywise, best_rank_moments_of, sample_mean_variance
from kgrank.evaluation.stats import seed_stream
from kgrank.studies.ir.evaluation import metric_keys


def simulate_best_ranks(
    num_other: np.ndarray, num_relevant: np.ndarray, replicates: int, generator: np.random.Generator
) -> np.ndarray:
    """(replicates, queries) best ranks under the random model, by random keys (module docstring)."""
    shape = (replicates, len(num_other))
    smallest_relevant_key = generator.beta(1.0, np.broadcast_to(num_relevant, shape))
    return 1 + generator.binomial(np.broadcast_to(num_other, shape), smallest_relevant_key)


def check_macro_moments(
    num_other: np.ndarray,
    num_relevant: np.ndarray,
    hits: Sequence[int],
    *,
    replicates: int,
    seed: int,
    alpha: float,
    chunk_elements: int = 4_000_000,
    progress: bool = False,
) -> pd.DataFrame:
    """Analytic vs simulated mean and variance of every macro metric over the given
    queries (M others and R relevant answers each), with family-wise verdicts."""
    num_other = np.asarray(num_other, dtype=np.int64)
    num_relevant = np.asarray(num_relevant, dtype=np.int64)
    if num_other.size == 0:
        raise KgrankInputError("macro moments: no query to check; give at least one (M, R) pair")
    keys = metric_keys(hits)  # MR, MRR and Hits@k: the item table's metrics
    metrics = {key: lookup(key).metric for key in keys}
    # a stream of its own, never the draws of another check
    generator = seed_stream(seed, 2)
    chunk = max(1, chunk_elements // len(num_other))
    simulated: dict[str, list[np.ndarray]] = {key: [] for key in keys}
    for start in tqdm(range(0, replicates, chunk), desc="replicates", unit="chunk", disable=not progress):
        best = simulate_best_ranks(num_other, num_relevant, min(chunk, replicates - start), generator)
        for key, metric in metrics.items():
            simulated[key].append(metric.transform.function(best.astype(float)).mean(axis=1))
    rows = []
    moments = best_rank_moments_of(
        [metric.transform.function for metric in metrics.values()], num_other, num_relevant
    )
    for key, (first, second) in zip(metrics, moments, strict=True):
        expectation = float(first.mean())
        variance = float(np.maximum(second - first**2, 0.0).sum() / len(first) ** 2)
        mean, sample_variance = sample_mean_variance(np.concatenate(simulated[key]))
        if variance > 0:
            z_mean = (mean.estimate - expectation) / np.sqrt(variance / replicates)
            ratio = sample_variance.estimate / variance
            ratio_error = sample_variance.error / variance
            z_variance = (ratio - 1.0) / ratio_error if ratio_error > 0 else np.inf
        else:  # every query's best rank is certain (no other candidates): must be reproduced exactly
            exact = sample_variance.estimate == 0 and np.isclose(mean.estimate, expectation)
            z_mean, ratio, ratio_error, z_variance = (0.0 if exact else np.inf), np.nan, np.nan, 0.0
        rows.append(
            {
                "metric": f"macro_{key}",
                "method": "exact sum (best of R relevant)",
                "expectation": expectation,
                "simulated_mean": mean.estimate,
                "z_mean": z_mean,
                "variance": variance,
                "simulated_variance": sample_variance.estimate,
                "variance_ratio": ratio,
                "variance_ratio_error": ratio_error,
                "z_variance": z_variance,
            }
        )
    table = pd.DataFrame(rows)
    table["queries"] = len(num_other)
    table["replicates"] = replicates
    return apply_familywise(table, alpha)


def check_evaluations(
    items_by_dataset: Mapping[str, pd.DataFrame],
    evaluations: Sequence[tuple[str, str]],
    hits: Sequence[int],
    *,
    replicates: int,
    seed: int,
    alpha: float,
    progress: bool = False,
) -> pd.DataFrame:
    """:func:`check_macro_moments` on the macro items of each (dataset, evaluation), the
    i-th with seed ``seed + i``; one table with the dataset and evaluation first."""
    frames = []
    for offset, (dataset, evaluation) in enumerate(evaluations):
        items = items_by_dataset[dataset]
        macro = items[(items["evaluation"] == evaluation) & (items["averaging"] == "macro")]
        if macro.empty:
            raise KgrankInputError(
                f"--evaluations {dataset}:{evaluation}: no macro items in its table; name an evaluation "
                f"it holds ({', '.join(dict.fromkeys(items['evaluation']))})"
            )
        num_relevant = macro["num_relevant"].to_numpy()
        table = check_macro_moments(
            macro["num_candidates"].to_numpy() - num_relevant,
            num_relevant,
            hits,
            replicates=replicates,
            seed=seed + offset,
            alpha=alpha,
            progress=progress,
        )
        frames.append(table.assign(dataset=dataset, evaluation=evaluation))
    table = pd.concat(frames, ignore_index=True)
    return table[["dataset", "evaluation", *[c for c in table.columns if c not in ("dataset", "evaluation")]]]
