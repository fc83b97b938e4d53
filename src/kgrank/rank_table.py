"""The vocabulary of a rank table: its sides, its rank columns and its row layout.

Kept free of torch and pandas-heavy imports, so that the numpy-only metric registry and
every study can name sides and rank types without loading the rank engine.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

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
    """A rank table must have every column, candidate counts of at least 1 and ranks in
    [1, num_candidates]; the first violation names ``source``, the triple and the side."""
    import numpy as np

    from kgrank.errors import KgrankInputError

    missing = [column for column in RANK_TABLE_COLUMNS if column not in table.columns]
    if missing:
        raise KgrankInputError(
            f"{source}: column(s) {missing} missing; a rank table has {list(RANK_TABLE_COLUMNS)} "
            "(pass the file `kgrank ranks` wrote, or rerun that step)"
        )
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
    """A rank table as `kgrank ranks` writes it, checked (see ``check_rank_table``)."""
    import pandas as pd
    import pyarrow

    from kgrank.errors import KgrankInputError

    if not Path(path).is_file():
        raise KgrankInputError(f"{path}: no such rank table; check the path, or run `kgrank ranks` first")
    try:
        table = pd.read_parquet(path)
    except (pyarrow.ArrowException, OSError) as error:
        reason = str(error).splitlines()[0]
        raise KgrankInputError(
            f"{path}: not a readable parquet file ({reason}); pass the rank table `kgrank ranks` wrote, "
            "or rerun that step"
        ) from None
    check_rank_table(table, str(path))
    return table
