"""The vocabulary of a rank table: its sides, its rank columns and its row layout.

Kept free of torch and pandas-heavy imports, so that the numpy-only metric registry and
every study can name sides and rank types without loading the rank engine.
"""

from __future__ import annotations

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
