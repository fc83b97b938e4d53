"""Part 1: sampled negatives (Krichene & Rendle 2020) on every trained pair's full ranks.

For each rank table, each sample size k and each estimator of :mod:`kgrank.evaluation.sampled`
(``naive``: the sampled metric itself; ``rescaled``; ``posterior-rank``; ``corrected``),
the MRR and Hits@10 on the full ranking next to the estimator's expectation, bias,
standard deviation and RMSE over the draw of k negatives per task. These moments are
exact (:func:`kgrank.evaluation.sampled.estimator_moments`, a sum over every sampled rank with its
hypergeometric probability), not simulated. Beside them the sampled adjusted index
(:func:`kgrank.evaluation.sampled.adjusted_under_sampling`: the sampled metric adjusted by its
expectation under the random model on the k_i + 1 sampled candidates) against the full
adjusted index, over seeded replicate draws (row estimator ``adjusted-index``).

Then, per dataset and k, every pair of systems with different full values: in how many
replicate draws each estimator orders the two as the full ranking does
(:func:`kgrank.evaluation.sampled.order_agreement`), summarised as the mean over system pairs. Each
system draws its own negatives (variant ``independent``: per-task independent draws, a
seed per dataset, system and k). The variant ``fixed-set`` reads the rank engine's
sampled rank tables, where every system ranks against the same k non-answers per
(seed, side, triple) as OGB's protocol fixes them: one draw shared by every system.

Rank type: optimistic throughout. The corrected and posterior-rank estimators need a
hypergeometric law of the sampled rank given the full rank of the same type, which the
optimistic rank has and the realistic one (a mean of two ranks) has not; with continuous
scores a trained model's ties are rare, and optimistic and realistic ranks coincide.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from kgrank.defaults import SAMPLED_ESTIMATORS
from kgrank.errors import KgrankInputError
from kgrank.evaluation.sampled import (
    ESTIMATED_METRICS,
    FullRanks,
    SampledRanks,
    adjusted_index,
    adjusted_under_sampling,
    estimate,
    estimator_moments,
    order_agreement,
    sample_ranks_from_full,
)
from kgrank.evaluation.stats import seed_sequence
from kgrank.studies.protocols.inputs import SAMPLED_AGREEMENT_COLUMNS, SAMPLED_COLUMNS

# The metrics of part 1 (arithmetic means of a rank transformation, as the estimators need)
SAMPLED_METRICS = ESTIMATED_METRICS
RANK_TYPE = "optimistic"
# The pseudo-estimator of the sampled adjusted index, and the two protocols of drawing
ADJUSTED = "adjusted-index"
REPORTED_ESTIMATORS = (*SAMPLED_ESTIMATORS, ADJUSTED)
INDEPENDENT, FIXED_SET = "independent", "fixed-set"
EXACT_NOTE = "exact: summed over the hypergeometric law of every sampled rank"
ADJUSTED_NOTE = "the sampled metric adjusted by its expectation on the k_i + 1 sampled candidates"
FIXED_SET_NOTE = "one draw: every system ranked against the same k non-answers per task (OGB)"


@dataclass(frozen=True)
class SampledSettings:
    """What part 1 computes: sample sizes, estimators, the corrected estimator's gamma and
    largest k, replicate draws for the adjusted index and the order agreement, the seed,
    and the configuration's profile (written into every row)."""

    num_samples: tuple[int, ...]
    estimators: tuple[str, ...]
    regularisation: float
    corrected_max_k: int | None
    replicates: int
    seed: int
    profile: str

    def __post_init__(self) -> None:
        if not self.num_samples or any(int(k) < 1 for k in self.num_samples):
            raise KgrankInputError(
                f"studies.protocols.sampled.num_samples {list(self.num_samples)}: pass positive sample sizes"
            )
        if len(set(self.num_samples)) != len(self.num_samples):
            raise KgrankInputError(
                f"studies.protocols.sampled.num_samples {list(self.num_samples)} names a k twice; once each"
            )
        unknown = [name for name in self.estimators if name not in SAMPLED_ESTIMATORS]
        if unknown or not self.estimators or len(set(self.estimators)) != len(self.estimators):
            raise KgrankInputError(
                f"studies.protocols.sampled.estimators {list(self.estimators)}: name each of "
                f"{', '.join(SAMPLED_ESTIMATORS)} at most once"
            )
        if not 0.0 <= self.regularisation <= 1.0:
            raise KgrankInputError(
                f"studies.protocols.sampled.regularisation {self.regularisation} is outside [0, 1]"
            )
        if self.replicates < 2:
            raise KgrankInputError(
                f"studies.protocols.sampled.replicates {self.replicates}: a variance needs 2 or more"
            )

    def limits(self) -> str:
        """What the profiles set differently, in one phrase (the table's caption names it)."""
        limit = "every k" if self.corrected_max_k is None else f"k <= {self.corrected_max_k}"
        return (
            f"corrected estimator (uniform prior, gamma {self.regularisation:g}) at {limit}; "
            f"{self.replicates} replicate draws per system for the adjusted index and the order agreement"
        )

    def describe(self) -> str:
        """The settings as one cell of the table (the laptop and paper profiles differ here)."""
        return f"{self.profile}; {self.limits()}"


def system_seed(seed: int, dataset: str, model: str) -> int:
    """The seed of one system's independent draws: its own stream per (dataset, model), so
    that two systems never share their negatives and a system's draws do not depend on
    which other systems are listed."""
    return int(seed_sequence(seed, "protocols-sampled", dataset, model).generate_state(1)[0])


def sampled_share(num_candidates: np.ndarray, num_samples: int) -> float:
    """Share of tasks that draw fewer than all their negatives (N_i - 1 > k)."""
    return float(np.mean(np.asarray(num_candidates) - 1 > num_samples))


def _row(
    dataset: str,
    model: str,
    num_samples: int,
    variant: str,
    estimator: str,
    metric: str,
    *,
    full_value: float,
    mean: float = np.nan,
    variance: float = np.nan,
    rmse: float = np.nan,
    method: str,
    replicates: int,
    share: float,
    note: str,
    settings: str,
) -> dict:
    return {
        "dataset": dataset,
        "model": model,
        "num_samples": int(num_samples),
        "variant": variant,
        "estimator": estimator,
        "metric": metric,
        "full_value": full_value,
        "estimate_mean": mean,
        "bias": mean - full_value,
        "standard_deviation": float(np.sqrt(variance)) if np.isfinite(variance) else np.nan,
        "rmse": rmse,
        "method": method,
        "replicates": int(replicates),
        "sampled_share": share,
        "note": note,
        "settings": settings,
    }


def _corrected_skipped(estimator: str, num_samples: int, settings: SampledSettings) -> bool:
    return (
        estimator == "corrected"
        and settings.corrected_max_k is not None
        and num_samples > settings.corrected_max_k
    )


def _estimates_of(
    full: FullRanks, sampled: SampledRanks, estimators: Sequence[str], settings: SampledSettings
) -> dict[tuple[str, str], np.ndarray]:
    """Each (estimator, metric)'s estimate in each replicate draw of one system's
    ``sampled`` ranks, plus the sampled adjusted index (key ``adjusted-index``)."""
    estimates = {}
    for metric in SAMPLED_METRICS:
        for estimator in estimators:
            estimates[(estimator, metric)] = estimate(
                metric, sampled, estimator, rank_type=RANK_TYPE, regularisation=settings.regularisation
            )
        with np.errstate(divide="ignore", invalid="ignore"):  # undefined where E = optimum
            adjusted = adjusted_under_sampling(metric, full, sampled, RANK_TYPE)
        estimates[(ADJUSTED, metric)] = adjusted.sampled_indices
    return estimates


def full_values(full: FullRanks) -> dict[tuple[str, str], float]:
    """The full-ranking value each estimate aims at: the metric, or for the adjusted
    index the full adjusted index (its expectation over U{1..N_i})."""
    from kgrank.evaluation.metrics import lookup

    values = {}
    for metric in SAMPLED_METRICS:
        value = float(lookup(metric).metric.value(full.ranks(RANK_TYPE).astype(float)))
        values[metric] = value
        values[(ADJUSTED, metric)] = float(adjusted_index(metric, value, full.num_candidates))
    return values


def fixed_set_ranks(full_table: pd.DataFrame, sampled_table: pd.DataFrame, num_samples: int) -> SampledRanks:
    """The rank engine's sampled ranks of one system as a one-replicate
    :class:`kgrank.evaluation.sampled.SampledRanks`, matched to the full table's tasks by (triple_id,
    side) for N_i. Each task must have drawn min(k, N_i - 1) negatives, as the engine
    draws them among the filtered candidates; anything else is a table of another run."""
    keys = ["triple_id", "side"]
    merged = full_table[[*keys, "num_candidates"]].merge(
        sampled_table[[*keys, "optimistic", "pessimistic", "num_candidates"]],
        on=keys,
        how="left",
        suffixes=("_full", ""),
        validate="one_to_one",
    )
    if merged["num_candidates"].isna().any():
        missing = merged[merged["num_candidates"].isna()].iloc[0]
        raise KgrankInputError(
            f"sampled rank table lacks task (triple {missing['triple_id']}, {missing['side']}) of the full "
            "table; pass the sampled ranks of the same model and run"
        )
    full_counts = merged["num_candidates_full"].to_numpy(dtype=np.int64)
    counts = merged["num_candidates"].to_numpy(dtype=np.int64)
    expected = np.minimum(num_samples, full_counts - 1) + 1
    if (counts != expected).any():
        index = int(np.flatnonzero(counts != expected)[0])
        raise KgrankInputError(
            f"sampled rank table has {counts[index]} candidates on task {index} where k = {num_samples} and "
            f"N_i = {full_counts[index]} give {expected[index]}; pass the table ranked with "
            f"--sampled-candidates {num_samples} on the same filter"
        )
    optimistic = merged["optimistic"].to_numpy(dtype=np.int64)[None, :]
    pessimistic = merged["pessimistic"].to_numpy(dtype=np.int64)[None, :]
    return SampledRanks(optimistic, pessimistic, counts, full_counts, int(num_samples))


def _dataset_sizes(
    num_candidates: np.ndarray, settings: SampledSettings, fixed_k: int | None
) -> tuple[list[int], list[int]]:
    """(sizes sampled, sizes skipped) of a dataset: a k at which every task keeps all its
    negatives is skipped; the fixed-set k joins the sizes so that the two protocols meet."""
    sizes = sorted(set(settings.num_samples) | ({fixed_k} if fixed_k is not None else set()))
    largest = int(num_candidates.max())
    return [k for k in sizes if k < largest - 1], [k for k in sizes if k >= largest - 1]


def sampled_analysis(
    tables: Mapping[tuple[str, str], pd.DataFrame],
    settings: SampledSettings,
    fixed_sets: Mapping[tuple[str, str], tuple[int, pd.DataFrame]] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Part 1 on every (dataset, model) rank table: (estimates table, agreement table).

    ``fixed_sets`` maps (dataset, model) to (k, the rank engine's sampled rank table at k),
    one k per dataset; the fixed-set variant compares the systems that have one, and its
    agreement rows carry the independent draws' agreement over the same pairs."""
    if not tables:
        raise KgrankInputError("--ranks: no rank table given; pass <dataset>/<model>.parquet files")
    fixed_sets = dict(fixed_sets or {})
    fixed_k = _fixed_k_per_dataset(tables, fixed_sets)
    described = settings.describe()
    rows: list[dict] = []
    agreement_rows: list[dict] = []
    datasets = list(dict.fromkeys(dataset for dataset, _ in tables))
    for dataset in datasets:
        models = [model for d, model in tables if d == dataset]
        fulls = {model: FullRanks.from_table(tables[(dataset, model)]) for model in models}
        counts = fulls[models[0]].num_candidates
        sizes, skipped = _dataset_sizes(counts, settings, fixed_k.get(dataset))
        for num_samples in sorted([*sizes, *skipped]):
            if num_samples in skipped:
                rows += _skipped_rows(dataset, models, fulls, num_samples, described)
                continue
            rows += _moment_rows(dataset, models, fulls, num_samples, settings, described)
            estimators = [e for e in settings.estimators if not _corrected_skipped(e, num_samples, settings)]
            draws = {
                model: _estimates_of(
                    fulls[model],
                    sample_ranks_from_full(
                        fulls[model],
                        num_samples,
                        system_seed(settings.seed, dataset, model),
                        settings.replicates,
                    ),
                    estimators,
                    settings,
                )
                for model in models
            }
            adjusted = {
                model: {key: v for key, v in draws[model].items() if key[0] == ADJUSTED} for model in models
            }
            rows += _draw_rows(
                dataset, models, fulls, adjusted, num_samples, INDEPENDENT, described, ADJUSTED_NOTE
            )
            agreement_rows += _agreement_rows(dataset, num_samples, INDEPENDENT, fulls, draws, described)
            if fixed_k.get(dataset) == num_samples:
                # the systems the rank engine ranked on the fixed set (the trained ones; an
                # external system has no scores to draw from)
                fixed_models = [model for model in models if (dataset, model) in fixed_sets]
                shared = {
                    model: _estimates_of(
                        fulls[model],
                        fixed_set_ranks(
                            tables[(dataset, model)], fixed_sets[(dataset, model)][1], num_samples
                        ),
                        estimators,
                        settings,
                    )
                    for model in fixed_models
                }
                rows += _draw_rows(
                    dataset, fixed_models, fulls, shared, num_samples, FIXED_SET, described, FIXED_SET_NOTE
                )
                independent = {model: draws[model] for model in fixed_models}
                agreement_rows += _agreement_rows(
                    dataset,
                    num_samples,
                    FIXED_SET,
                    {model: fulls[model] for model in fixed_models},
                    shared,
                    described,
                    independent,
                )
    return (
        pd.DataFrame(rows, columns=list(SAMPLED_COLUMNS)),
        pd.DataFrame(agreement_rows, columns=list(SAMPLED_AGREEMENT_COLUMNS)),
    )


def _skipped_rows(
    dataset: str, models: Sequence[str], fulls: Mapping[str, FullRanks], num_samples: int, described: str
) -> list[dict]:
    """Rows of a k at which every task of the dataset keeps all its negatives."""
    rows = []
    for model in models:
        targets = full_values(fulls[model])
        note = (
            f"skipped: k = {num_samples} >= N_i - 1 for every task (largest N_i "
            f"{int(fulls[model].num_candidates.max())}): every task keeps all its negatives, the full ranking"
        )
        for estimator in REPORTED_ESTIMATORS:
            for metric in SAMPLED_METRICS:
                target = targets[(ADJUSTED, metric)] if estimator == ADJUSTED else targets[metric]
                rows.append(
                    _row(
                        dataset, model, num_samples, INDEPENDENT, estimator, metric, full_value=target,
                        method="skipped", replicates=0, share=0.0, note=note, settings=described,
                    )
                )  # fmt: skip
    return rows


def _fixed_k_per_dataset(
    tables: Mapping[tuple[str, str], pd.DataFrame],
    fixed_sets: Mapping[tuple[str, str], tuple[int, pd.DataFrame]],
) -> dict[str, int]:
    fixed_k: dict[str, int] = {}
    for (dataset, model), (num_samples, _) in fixed_sets.items():
        if (dataset, model) not in tables:
            raise KgrankInputError(
                f"--fixed-set: sampled ranks of {dataset}/{model} but no full rank table of that pair; "
                "pass its <dataset>/<model>.parquet in --ranks"
            )
        if fixed_k.setdefault(dataset, num_samples) != num_samples:
            raise KgrankInputError(
                f"--fixed-set: {dataset} at k = {fixed_k[dataset]} and {num_samples}; pass one k per dataset"
            )
    return fixed_k


def _moment_rows(
    dataset: str,
    models: Sequence[str],
    fulls: Mapping[str, FullRanks],
    num_samples: int,
    settings: SampledSettings,
    described: str,
) -> list[dict]:
    """Exact moments of every estimator (a skipped row for the corrected one above its k)."""
    rows = []
    computed = [e for e in settings.estimators if not _corrected_skipped(e, num_samples, settings)]
    skipped_note = (
        f"corrected estimator skipped above k = {settings.corrected_max_k} "
        f"(studies.protocols.sampled.corrected_max_k, {settings.profile})"
    )
    for model in models:
        full = fulls[model]
        share = sampled_share(full.num_candidates, num_samples)
        moments = estimator_moments(
            full,
            num_samples,
            computed,
            SAMPLED_METRICS,
            rank_type=RANK_TYPE,
            regularisation=settings.regularisation,
        )
        targets = full_values(full)
        for estimator in settings.estimators:
            for metric in SAMPLED_METRICS:
                if estimator not in computed:
                    rows.append(
                        _row(
                            dataset, model, num_samples, INDEPENDENT, estimator, metric,
                            full_value=targets[metric], method="skipped", replicates=0, share=share,
                            note=skipped_note, settings=described,
                        )
                    )  # fmt: skip
                    continue
                exact = moments[(estimator, metric)]
                mean, variance, value = exact.expectation, exact.variance, exact.full_value
                rows.append(
                    _row(
                        dataset, model, num_samples, INDEPENDENT, estimator, metric, full_value=value,
                        mean=mean, variance=variance, rmse=float(np.sqrt((mean - value) ** 2 + variance)),
                        method="exact", replicates=0, share=share, note=EXACT_NOTE, settings=described,
                    )
                )  # fmt: skip
    return rows


def _draw_rows(
    dataset: str,
    models: Sequence[str],
    fulls: Mapping[str, FullRanks],
    estimates: Mapping[str, Mapping[tuple[str, str], np.ndarray]],
    num_samples: int,
    variant: str,
    described: str,
    note: str,
) -> list[dict]:
    """One row per (model, estimator, metric) of the estimates of drawn ranks."""
    rows = []
    for model in models:
        targets = full_values(fulls[model])
        share = sampled_share(fulls[model].num_candidates, num_samples)
        for (estimator, metric), values in estimates[model].items():
            target = targets[(ADJUSTED, metric)] if estimator == ADJUSTED else targets[metric]
            rows.append(
                _row(
                    dataset, model, num_samples, variant, estimator, metric, full_value=target,
                    mean=float(np.mean(values)),
                    variance=float(np.var(values, ddof=1)) if len(values) > 1 else np.nan,
                    rmse=float(np.sqrt(np.mean((values - target) ** 2))),
                    method="one draw" if len(values) == 1 else "replicates", replicates=len(values),
                    share=share, note=note,
                    settings=described,
                )
            )  # fmt: skip
    return rows


def pair_agreements(
    fulls: Mapping[str, FullRanks], estimates: Mapping[str, Mapping[tuple[str, str], np.ndarray]]
) -> pd.DataFrame:
    """Per pair of systems and (estimator, metric): the share of paired replicate draws in
    which the estimates order the two as their full-ranking values do
    (:func:`kgrank.evaluation.sampled.order_agreement`). A pair with equal full values has no order
    to agree with, and a pair whose estimates are undefined (``defined`` False) none to
    offer: the agreement of either is NaN."""
    rows = []
    models = list(fulls)
    targets = {model: full_values(fulls[model]) for model in models}
    for first, second in combinations(models, 2):
        for key in estimates[first]:
            estimator, metric = key
            target = (ADJUSTED, metric) if estimator == ADJUSTED else metric
            full_a, full_b = targets[first][target], targets[second][target]
            tied = full_a == full_b
            first_estimates, second_estimates = estimates[first][key], estimates[second][key]
            # an estimate that is undefined (the adjusted Hits@10 where no sampled task has
            # more than 10 candidates: its expectation is 1) orders nothing
            defined = bool(np.isfinite(first_estimates).all() and np.isfinite(second_estimates).all())
            rows.append(
                {
                    "first": first,
                    "second": second,
                    "estimator": estimator,
                    "metric": metric,
                    "tied": tied,
                    "defined": defined,
                    "agreement": order_agreement(full_a, full_b, first_estimates, second_estimates)
                    if defined and not tied
                    else np.nan,
                }
            )
    return pd.DataFrame(
        rows, columns=["first", "second", "estimator", "metric", "tied", "defined", "agreement"]
    )


def _same_pairs_mean(reference: pd.DataFrame, cell: pd.DataFrame) -> float:
    """Mean agreement of ``reference`` over the pairs, estimator and metric that ``cell``
    has an agreement for."""
    keys = ["first", "second", "estimator", "metric"]
    matched = cell.dropna(subset=["agreement"])[keys].merge(reference, on=keys)["agreement"].dropna()
    return float(matched.mean()) if len(matched) else np.nan


def _agreement_rows(
    dataset: str,
    num_samples: int,
    variant: str,
    fulls: Mapping[str, FullRanks],
    estimates: Mapping[str, Mapping[tuple[str, str], np.ndarray]],
    described: str,
    independent: Mapping[str, Mapping[tuple[str, str], np.ndarray]] | None = None,
) -> list[dict]:
    """The agreement summary of one (dataset, k, variant): per (estimator, metric), the
    mean over system pairs (untied, with defined estimates) of each pair's share of
    correctly ordered draws; NaN where no pair is left. With ``independent`` (the fixed-set
    rows), ``independent_agreement`` is that of the independent draws over the same pairs."""
    pairs = pair_agreements(fulls, estimates)
    reference = pair_agreements(fulls, independent) if independent is not None else None
    replicates = len(next(iter(next(iter(estimates.values())).values())))
    rows = []
    keys = list(next(iter(estimates.values())))
    for estimator, metric in keys:
        cell = pairs[(pairs["estimator"] == estimator) & (pairs["metric"] == metric)]
        ordered = cell["agreement"].dropna()
        rows.append(
            {
                "dataset": dataset,
                "num_samples": int(num_samples),
                "variant": variant,
                "estimator": estimator,
                "metric": metric,
                "system_pairs": int(len(ordered)),
                "tied_pairs": int(cell["tied"].sum()),
                "replicates": int(replicates),
                "agreement": float(ordered.mean()) if len(ordered) else np.nan,
                "lowest_pair_agreement": float(ordered.min()) if len(ordered) else np.nan,
                "independent_agreement": _same_pairs_mean(reference, cell)
                if reference is not None
                else np.nan,
                "settings": described,
            }
        )
    return rows
