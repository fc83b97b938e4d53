"""What the study reads and writes between its steps: rank tables named
``<dataset>/<model>.parquet`` (the rank stage's layout), and the tables of part 3 declared
as checked kinds (:mod:`kgrank.tables`), so that the figure command reads them checked."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from kgrank.errors import KgrankInputError
from kgrank.rank_table import RANK_COLUMNS, SIDES_AND_BOTH, read_rank_table
from kgrank.tables import TableKind, table_kind
from kgrank.weighted import WEIGHT_SCHEMES

# results/protocols/weighted.tsv: kgrank.metrics' tidy rows with the pair and the scheme
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


def pair_of(path: str | Path) -> tuple[str, str]:
    """(dataset, model) of a file ``.../<dataset>/<model>.parquet``."""
    path = Path(path)
    if path.suffix != ".parquet" or "." in path.stem or not path.parent.name:
        raise KgrankInputError(
            f"{path}: expected a rank table named <dataset>/<model>.parquet (as results/ranks/ holds them)"
        )
    return path.parent.name, path.stem


def read_pair_tables(paths: Sequence[str | Path]) -> dict[tuple[str, str], pd.DataFrame]:
    """Rank tables keyed by (dataset, model) in the order given, each checked by the core's
    reader (kgrank.rank_table.read_rank_table reads through kgrank.tables.read_table)."""
    tables: dict[tuple[str, str], pd.DataFrame] = {}
    for path in paths:
        pair = pair_of(path)
        if pair in tables:
            raise KgrankInputError(f"{path}: {pair[0]}/{pair[1]} given twice; pass each pair once")
        tables[pair] = read_rank_table(path)
    return tables


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
