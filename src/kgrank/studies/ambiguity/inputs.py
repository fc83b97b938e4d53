"""What the study reads: rank tables named ``<dataset>/<model>.parquet`` (the rank
stage's layout, and this study's subset ranks), and which models a z-score calls random."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from kgrank.errors import KgrankInputError
from kgrank.rank_table import SIDES, read_rank_table
from kgrank.tables import TableKind, read_table, table_kind


def subset_kind() -> TableKind:
    """The subset rank table of `kgrank ambiguity-subsets` (ranks within the candidates)."""
    from kgrank.studies.ambiguity.subsets import SUBSET_COLUMNS

    return table_kind(
        "subset rank table",
        "`kgrank ambiguity-subsets`",
        SUBSET_COLUMNS,
        floats=("fraction", "optimistic", "pessimistic"),
        ints=("replicate", "triple_id", "num_candidates"),
        strings=("side",),
        choices={"side": SIDES},
        ranges={
            "fraction": (0, 1),
            "optimistic": (1, None),
            "pessimistic": (1, None),
            "num_candidates": (1, None),
        },
        at_most={"optimistic": "pessimistic", "pessimistic": "num_candidates"},
    )


def drift_kind() -> TableKind:
    """The drift table of `kgrank ambiguity-drift`; a value is NaN where a metric is
    undefined at a size (a z-score without variance)."""
    from kgrank.studies.ambiguity.drift import DRIFT_COLUMNS

    return table_kind(
        "drift table",
        "`kgrank ambiguity-drift`",
        DRIFT_COLUMNS,
        strings=("dataset", "model", "protocol", "metric"),
        ints=("replicate",),
        floats=("mean_candidates", "value"),
        nan=("value",),
        ranges={"mean_candidates": (1, None)},
    )


def pair_of(path: str | Path) -> tuple[str, str]:
    """(dataset, model) of a file ``.../<dataset>/<model>.parquet``."""
    path = Path(path)
    if path.suffix != ".parquet" or "." in path.stem or not path.parent.name:
        raise KgrankInputError(
            f"{path}: expected a rank table named <dataset>/<model>.parquet (as results/ranks/ holds them)"
        )
    return path.parent.name, path.stem


def read_pair_tables(
    paths: Sequence[str | Path], kind: TableKind | None = None
) -> dict[tuple[str, str], pd.DataFrame]:
    """Tables keyed by (dataset, model) in the order given, each checked by the core's
    reader: rank tables of the rank stage or, with ``kind``, other tables of that layout."""
    tables = {}
    for path in paths:
        pair = pair_of(path)
        if pair in tables:
            raise KgrankInputError(f"{path}: {pair[0]}/{pair[1]} given twice; pass each pair once")
        tables[pair] = read_rank_table(path) if kind is None else read_table(path, kind)
    return tables
