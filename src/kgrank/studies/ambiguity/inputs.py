"""What the study reads: rank tables named ``<dataset>/<model>.parquet`` (the rank
stage's layout, and this study's subset ranks), and which models a z-score calls random."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from kgrank.errors import KgrankInputError
from kgrank.io import read_parquet_table
from kgrank.rank_table import read_rank_table


def pair_of(path: str | Path) -> tuple[str, str]:
    """(dataset, model) of a file ``.../<dataset>/<model>.parquet``."""
    path = Path(path)
    if path.suffix != ".parquet" or "." in path.stem or not path.parent.name:
        raise KgrankInputError(
            f"{path}: expected a rank table named <dataset>/<model>.parquet (as results/ranks/ holds them)"
        )
    return path.parent.name, path.stem


def read_pair_tables(
    paths: Sequence[str | Path], columns: Sequence[str] | None = None
) -> dict[tuple[str, str], pd.DataFrame]:
    """Tables keyed by (dataset, model) in the order given: rank tables of the rank stage
    (checked by the core's reader) or, with ``columns``, other tables of that layout."""
    tables = {}
    for path in paths:
        pair = pair_of(path)
        if pair in tables:
            raise KgrankInputError(f"{path}: {pair[0]}/{pair[1]} given twice; pass each pair once")
        tables[pair] = (
            read_rank_table(path) if columns is None else read_parquet_table(path, columns, "its step")
        )
    return tables
