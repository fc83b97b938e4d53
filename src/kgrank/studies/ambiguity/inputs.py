"""What the study reads: rank tables named ``<dataset>/<model>.parquet`` (the rank
stage's layout, and this study's subset ranks), and which models a z-score calls random."""

from __future__ import annotations

from kgrank.data.rank_table import SIDES
from kgrank.data.tables import TableKind, table_kind

# The columns of a subset rank table (kgrank.studies.ambiguity.subsets writes it; named
# here so that reading one needs no torch).
SUBSET_COLUMNS = ("fraction", "replicate", "triple_id", "side", "optimistic", "pessimistic", "num_candidates")


def subset_kind() -> TableKind:
    """The subset rank table of `kgrank ambiguity-subsets` (ranks within the candidates)."""
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
