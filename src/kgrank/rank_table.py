"""The vocabulary of a rank table: its sides, its rank columns and its row layout.

Kept free of torch and pandas-heavy imports, so that the numpy-only metric registry and
every study can name sides and rank types without loading the rank engine.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from kgrank.tables import TableKind

SIDES = ("head", "tail")
# Metrics are reported for each side and for both together.
SIDES_AND_BOTH = (*SIDES, "both")
RANK_COLUMNS = ("optimistic", "realistic", "pessimistic", "random")
RANK_TABLE_COLUMNS = (
    "triple_id",
    "head",
    "relation",
    "tail",
    "side",
    *RANK_COLUMNS,
    "num_candidates",
)


def select_side(table: pd.DataFrame, side: str) -> pd.DataFrame:
    """The rows of one side of a rank (or candidate-count) table; "both" is all of them."""
    return table if side == "both" else table[table["side"] == side]


def check_rank_table(table: pd.DataFrame, source: str) -> None:
    """A rank table's values: candidate counts of at least 1 and ranks in
    [1, num_candidates]; the first violation names ``source``, the triple and the side."""
    import numpy as np

    from kgrank.errors import KgrankInputError

    if table.empty:
        raise KgrankInputError(f"{source}: no rows; rerun `kgrank ranks`")
    num_candidates = table["num_candidates"].to_numpy()
    checks = [("num_candidates", (num_candidates < 1), "at least 1")]
    for column in RANK_COLUMNS:
        ranks = table[column].to_numpy(dtype=float)
        outside = ~np.isfinite(ranks) | (ranks < 1) | (ranks > num_candidates)
        checks.append((column, outside, "in [1, num_candidates]"))
    for column, bad, allowed in checks:
        if bad.any():
            row = table.iloc[int(np.flatnonzero(bad)[0])]
            count = "" if column == "num_candidates" else f" (num_candidates {row['num_candidates']})"
            raise KgrankInputError(
                f"{source}: triple_id {row['triple_id']}, side {row['side']}: {column} {row[column]} is not "
                f"{allowed}{count}; recompute the ranks"
            )


def read_rank_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A rank table as `kgrank ranks` writes it: every column, its values checked
    (:data:`kgrank.tables.RANKS`)."""
    from kgrank.tables import RANKS, read_table

    return read_table(path, RANKS)


def pair_of(path: str | os.PathLike[str]) -> tuple[str, str]:
    """(dataset, model) of a file ``.../<dataset>/<model>.parquet``, as results/ranks/ names them."""
    from kgrank.errors import KgrankInputError

    path = Path(path)
    if path.suffix != ".parquet" or "." in path.stem or not path.parent.name:
        raise KgrankInputError(
            f"{path}: expected a rank table named <dataset>/<model>.parquet (as results/ranks/ holds them)"
        )
    return path.parent.name, path.stem


def read_pair_tables(
    paths: Sequence[str | os.PathLike[str]], kind: TableKind | None = None
) -> dict[tuple[str, str], pd.DataFrame]:
    """Tables keyed by (dataset, model) in the order given, each checked by the core's
    reader: rank tables of the rank stage or, with ``kind``, other tables of that layout."""
    from kgrank.errors import KgrankInputError
    from kgrank.tables import read_table

    tables: dict[tuple[str, str], pd.DataFrame] = {}
    for path in paths:
        pair = pair_of(path)
        if pair in tables:
            raise KgrankInputError(f"{path}: {pair[0]}/{pair[1]} given twice; pass each pair once")
        tables[pair] = read_rank_table(path) if kind is None else read_table(path, kind)
    return tables
