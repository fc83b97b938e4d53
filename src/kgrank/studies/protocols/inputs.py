"""What the study reads and writes between its steps: rank tables named
``<dataset>/<model>.parquet`` (the rank stage's layout), and the tables of part 3 declared
as checked kinds (:mod:`kgrank.data.tables`), so that the figure command reads them checked."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from kgrank.data.rank_table import RANK_COLUMNS, SIDES_AND_BOTH
from kgrank.data.tables import TableKind, read_pair_tables, read_rank_table, read_table, table_kind
from kgrank.defaults import SAMPLED_ESTIMATORS, WEIGHT_SCHEMES
from kgrank.errors import KgrankInputError
from kgrank.studies.protocols.settings import SCORERS

# results/protocols/weighted.tsv: kgrank.evaluation.metrics' tidy rows with the pair and the scheme
WEIGHTED_COLUMNS = (
    "dataset",
    "model",
    "scheme",
    "side",
    "rank_type",
    "metric",
    "value",
    "expectation",
    "variance",
    "method",
)


def weighted_kind() -> TableKind:
    """The table of `kgrank protocols-weighted`: every weighted metric and derived variant
    of every pair, scheme, side and rank type with its exact E and Var (a z-score's value is
    NaN where the variance is zero: every weighted task has one candidate)."""
    return table_kind(
        "weighted metrics table",
        "`kgrank protocols-weighted`",
        WEIGHTED_COLUMNS,
        strings=("dataset", "model", "scheme", "side", "rank_type", "metric", "method"),
        floats=("value", "expectation", "variance"),
        nan=("value", "expectation", "variance"),
        choices={"scheme": WEIGHT_SCHEMES, "side": SIDES_AND_BOTH, "rank_type": RANK_COLUMNS},
        ranges={"variance": (0, None)},
    )


def read_dataset_tables(paths: Sequence[str | Path]) -> dict[str, pd.DataFrame]:
    """One rank table per dataset (its candidate counts and relations), keyed by dataset."""
    tables: dict[str, pd.DataFrame] = {}
    for (dataset, model), table in read_pair_tables(paths).items():
        if dataset in tables:
            raise KgrankInputError(
                f"--ranks: two rank tables of dataset {dataset} (the second: {model}); pass one per dataset"
            )
        tables[dataset] = table
    return tables


# --- part 1: sampled negatives ------------------------------------------------------------

# results/protocols/sampled.tsv: per pair, k, variant, estimator and metric, the full value
# and the estimate's mean, bias, standard deviation and RMSE over the draw of negatives
SAMPLED_COLUMNS = (
    "dataset",
    "model",
    "num_samples",
    "variant",
    "estimator",
    "metric",
    "full_value",
    "estimate_mean",
    "bias",
    "standard_deviation",
    "rmse",
    "method",
    "replicates",
    "sampled_share",
    "note",
    "settings",
)
# results/protocols/sampled_agreement.tsv: per dataset, k, variant, estimator and metric,
# the share of draws ordering a pair of systems as the full ranking does, over pairs (on
# fixed-set rows also the independent draws' share over the same pairs)
SAMPLED_AGREEMENT_COLUMNS = (
    "dataset",
    "num_samples",
    "variant",
    "estimator",
    "metric",
    "system_pairs",
    "tied_pairs",
    "replicates",
    "agreement",
    "lowest_pair_agreement",
    "independent_agreement",
    "settings",
)


def sampled_kind() -> TableKind:
    """The estimates table of `kgrank protocols-sampled` (NaN moments on skipped rows, a NaN
    standard deviation on one-draw rows)."""
    return table_kind(
        "sampled-negatives estimates table",
        "`kgrank protocols-sampled`",
        SAMPLED_COLUMNS,
        ints=("num_samples", "replicates"),
        floats=("full_value", "estimate_mean", "bias", "standard_deviation", "rmse", "sampled_share"),
        strings=("dataset", "model", "variant", "estimator", "metric", "method", "note", "settings"),
        nan=("estimate_mean", "bias", "standard_deviation", "rmse"),
        choices={
            "variant": ("independent", "fixed-set"),
            "estimator": (*SAMPLED_ESTIMATORS, "adjusted-index"),
            "method": ("exact", "replicates", "one draw", "skipped"),
        },
        ranges={
            "num_samples": (1, None),
            "replicates": (0, None),
            "standard_deviation": (0, None),
            "rmse": (0, None),
            "sampled_share": (0, 1),
        },
    )


def fixed_set_of(path: str | Path) -> tuple[str, str, int]:
    """(dataset, model, k) of a rank engine's sampled table ``.../<dataset>/<model>.sampled-<k>.parquet``."""
    path = Path(path)
    model, _, size = path.stem.partition(".sampled-")
    if path.suffix != ".parquet" or not size.isdigit() or "." in model or not model or not path.parent.name:
        raise KgrankInputError(
            f"{path}: expected sampled ranks named <dataset>/<model>.sampled-<k>.parquet "
            "(as `kgrank ranks --sampled-candidates k` writes them under results/ranks/)"
        )
    return path.parent.name, model, int(size)


def read_fixed_set_tables(paths: Sequence[str | Path]) -> dict[tuple[str, str], tuple[int, pd.DataFrame]]:
    """The rank engine's sampled rank tables keyed by (dataset, model), each with its k,
    checked by the core's rank-table reader."""
    tables: dict[tuple[str, str], tuple[int, pd.DataFrame]] = {}
    for path in paths:
        dataset, model, size = fixed_set_of(path)
        if (dataset, model) in tables:
            raise KgrankInputError(
                f"{path}: sampled ranks of {dataset}/{model} given twice; pass one k per dataset"
            )
        tables[(dataset, model)] = (size, read_rank_table(path))
    return tables


# --- part 2: ties ---------------------------------------------------------------------------

# results/protocols/ties/<dataset>/<model>.tsv (one trained pair's scoring pass) and
# results/protocols/ties.tsv (every pair's gathered): per scorer, tolerance, measure and
# statistic one value over ``tasks`` tasks (rank rows) or queries (IR rows)
TIES_COLUMNS = (
    "dataset",
    "model",
    "scorer",
    "tolerance",
    "measure",
    "statistic",
    "value",
    "tasks",
    "settings",
)
# results/protocols/ties_widths.tsv: kgrank.engine.ties.rank_width_summary of every evaluated pair
TIES_WIDTH_COLUMNS = ("dataset", "model", "side", "num_tasks", "mean_width", "tied_share", "max_width")


def ties_kind() -> TableKind:
    """The tidy table of `kgrank protocols-ties-pair` (and its gathering by `kgrank
    protocols-ties`); no NaN: every statistic is defined on the tasks and queries it names."""
    return table_kind(
        "tie analysis table",
        "`kgrank protocols-ties-pair`",
        TIES_COLUMNS,
        ints=("tasks",),
        floats=("value",),
        strings=("dataset", "model", "scorer", "tolerance", "measure", "statistic", "settings"),
        choices={"scorer": SCORERS},
        ranges={"tasks": (1, None)},
    )


def read_ties_tables(paths: Sequence[str | Path]) -> pd.DataFrame:
    """The pair tables of `kgrank protocols-ties-pair`, checked, one pair each, concatenated."""
    if not paths:
        raise KgrankInputError(
            "--pairs: no table given; pass results/protocols/ties/<dataset>/<model>.tsv files"
        )
    frames, seen = [], set()
    for path in paths:
        table = read_table(path, ties_kind())
        for pair in map(tuple, table[["dataset", "model"]].drop_duplicates().itertuples(index=False)):
            if pair in seen:
                raise KgrankInputError(f"{path}: {pair[0]}/{pair[1]} given twice; pass each pair once")
            seen.add(pair)
        frames.append(table)
    return pd.concat(frames, ignore_index=True)
