"""The study's report tables (Markdown and LaTeX) and their captions: the shape of each
table from the analysis modules' long tables, and the prose stated under it. The
family-tree caption that the rule file builds at parse time lives in ``settings``."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from kgrank.evaluation.metrics import Metric
from kgrank.studies.openworld.simulation import approximation_summary

VARIANT_ORDER = ("value", "adjusted index", "z-score")


def approximation_table(grid: pd.DataFrame, precise: pd.DataFrame) -> pd.DataFrame:
    """Where the closed form holds: the grid's summary, then the precision check's."""
    return pd.concat([approximation_summary(grid), approximation_summary(precise)], ignore_index=True)


def approximation_caption(queries: int, precision_queries: int, precision_step: float) -> str:
    return (
        "Where the closed-form E[MRR] of Yang, Lin and Zhang (2022) (its correlated form for "
        f"rho != 0) lies within 3 standard errors of the simulated mean: on the grid "
        f"({queries} queries per point) and in the precision check ({precision_queries} "
        f"queries per point, strengths in steps of {precision_step})."
    )


def saturation_wide(table: pd.DataFrame) -> pd.DataFrame:
    """One row per metric variant; slope ratio and inversion probability per density."""
    wide = table.pivot_table(
        index=["label", "variant"],
        columns="density",
        values=["slope_ratio", "inversion_probability"],
        sort=False,
    )
    wide.columns = [f"{name} (α={density:g})" for name, density in wide.columns]
    return wide.reset_index()


def saturation_caption(low: float, high: float, comparison_queries: int) -> str:
    return (
        f"Saturation: slope of the simulated metric at s = {high} over its slope at "
        f"s = {low} (1: none), and the mean probability that the stronger model reports the lower "
        f"value with {comparison_queries} test queries."
    )


def inversions_wide(counts: pd.DataFrame, metrics: Sequence[Metric]) -> pd.DataFrame:
    """Inverted pairs per metric variant (rows in the order of ``metrics``, each metric
    followed by its adjusted index and z-score) and per graph and density (columns)."""
    wide = counts.pivot_table(index=["label", "variant"], columns=["graph", "density"], values="inverted")
    labels = [metric.label for metric in metrics]
    wide = wide.reindex(
        sorted(wide.index, key=lambda row: (labels.index(row[0]), VARIANT_ORDER.index(row[1])))
    )
    pairs = counts.groupby(["graph", "density"])["pairs"].first()
    wide.columns = [
        f"{graph} {density} % ({pairs[(graph, density)]} pairs)" for graph, density in wide.columns
    ]
    return wide.reset_index()


def inversions_caption(training: str) -> str:
    """``training``: what was trained (the family-tree caption of ``settings``)."""
    return (
        "Family tree: pairs of checkpoints that the sparse test set orders against the full one. " + training
    )
