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
