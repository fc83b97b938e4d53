"""Part 3: the weighted geometric mean rank (WGMR) of every trained pair, with exact moments.

For each rank table and each weight scheme of :mod:`kgrank.evaluation.weighted` (``negatives``: the
paper's N_i - 1 per task; ``relation``: every relation the same total weight; ``uniform``:
the unweighted GMR, the reference), :func:`kgrank.evaluation.weighted.evaluate_weighted_rank_table`
gives WGMR and IWGMR with their expectation-normalised value, adjusted index and z-score
for every side and rank type. The check runs :func:`kgrank.evaluation.weighted.wgmr_montecarlo` on
each dataset's real candidate counts (both sides, all test tasks) per scheme, and records
next to it what Tiwari et al.'s code reports as the "expected" WGMR (the WGMR of the
expected ranks, :func:`kgrank.evaluation.weighted.wgmr_at_expected_ranks`) and by how much that
overstates E[WGMR] (Jensen's inequality).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from kgrank.defaults import WEIGHT_SCHEMES
from kgrank.errors import KgrankInputError
from kgrank.evaluation.moments import apply_familywise
from kgrank.evaluation.weighted import (
    WEIGHTED_GEOMETRIC_MEAN_RANK,
    evaluate_weighted_rank_table,
    scheme_weights,
    wgmr_at_expected_ranks,
    wgmr_montecarlo,
)
from kgrank.studies.protocols.inputs import WEIGHTED_COLUMNS

# The columns the check adds in front of kgrank.evaluation.weighted.wgmr_montecarlo's, and after them
CHECK_KEYS = ("dataset", "scheme", "tasks")
PLUGIN_COLUMNS = ("plugin_expectation", "plugin_excess")


def check_schemes(schemes: Sequence[str]) -> list[str]:
    """The schemes, each known and named once."""
    schemes = list(schemes)
    unknown = [scheme for scheme in schemes if scheme not in WEIGHT_SCHEMES]
    if unknown or not schemes:
        raise KgrankInputError(
            f"studies.protocols.weighted.schemes: {unknown or 'none'} given; use some of "
            f"{', '.join(WEIGHT_SCHEMES)}"
        )
    if len(set(schemes)) != len(schemes):
        raise KgrankInputError(
            f"studies.protocols.weighted.schemes: {schemes} names a scheme twice; once each"
        )
    return schemes


def weighted_table(tables: Mapping[tuple[str, str], pd.DataFrame], schemes: Sequence[str]) -> pd.DataFrame:
    """The weighted metrics of every (dataset, model) rank table under every scheme, as one
    tidy table with :data:`kgrank.studies.protocols.inputs.WEIGHTED_COLUMNS`."""
    schemes = check_schemes(schemes)
    if not tables:
        raise KgrankInputError("--ranks: no rank table given; pass <dataset>/<model>.parquet files")
    parts = []
    for (dataset, model), table in tables.items():
        for scheme in schemes:
            rows = evaluate_weighted_rank_table(table, weights=scheme)
            parts.append(rows.assign(dataset=dataset, model=model, scheme=scheme))
    return pd.concat(parts, ignore_index=True)[list(WEIGHTED_COLUMNS)]


def weighted_check(
    tables: Mapping[str, pd.DataFrame],
    schemes: Sequence[str],
    *,
    replicates: int,
    seed: int,
    alpha: float,
) -> pd.DataFrame:
    """The Monte Carlo check of E and Var of WGMR and IWGMR on each dataset's candidate
    counts (every task of its table, both sides) per scheme, one Bonferroni family over the
    whole table at level ``alpha``; with the plug-in value of the authors' code and its
    relative excess over E[WGMR] (NaN on the IWGMR rows, which their code does not report).
    Each (dataset, scheme) draws from its own seed, derived from ``seed`` by position."""
    schemes = check_schemes(schemes)
    if not tables:
        raise KgrankInputError("--ranks: no rank table given; pass one <dataset>/<model>.parquet per dataset")
    parts = []
    for dataset_index, (dataset, table) in enumerate(tables.items()):
        num_candidates = table["num_candidates"].to_numpy()
        for scheme_index, scheme in enumerate(schemes):
            weights = scheme_weights(table, scheme)
            # distinct streams per (dataset, scheme): kgrank.evaluation.weighted seeds its sampler
            # through kgrank.evaluation.stats.seed_stream, so different seeds give independent draws
            check = wgmr_montecarlo(
                num_candidates,
                weights,
                replicates,
                seed=seed + 1000 * dataset_index + scheme_index,
                alpha=alpha,
            )
            plugin = wgmr_at_expected_ranks(num_candidates, weights)
            is_wgmr = check["metric"] == WEIGHTED_GEOMETRIC_MEAN_RANK.key
            check = check.assign(
                dataset=dataset,
                scheme=scheme,
                tasks=int(np.count_nonzero(weights)),
                plugin_expectation=np.where(is_wgmr, plugin, np.nan),
                plugin_excess=np.where(is_wgmr, plugin / check["expectation"] - 1.0, np.nan),
            )
            parts.append(check)
    combined = pd.concat(parts, ignore_index=True)
    # one family over every dataset and scheme: the verdicts of the whole table hold jointly
    combined = apply_familywise(combined.drop(columns=["critical_z", "passed", "familywise_alpha"]), alpha)
    others = [name for name in combined.columns if name not in (*CHECK_KEYS, *PLUGIN_COLUMNS)]
    return combined[[*CHECK_KEYS, *others, *PLUGIN_COLUMNS]]
