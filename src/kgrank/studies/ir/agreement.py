"""Label sparsity: how the systems' ranking changes from FB-Test-S (`sample`, one known
answer per query) to FB-Test-S-C (`pooled`, the pooled and judged answers added).

Per metric and averaging, and for the raw value, the adjusted index and the z-score, the
ranking on one evaluation is compared with the ranking on another by Kendall's tau-b
(kgrank.evaluation.stats.kendall_tau: scipy.stats.kendalltau, with its p-value): `sample` vs
`pooled`; every pooling depth `pooled-d{d}` vs `pooled` and vs `sample`; `sample` vs
`pooled` restricted to one relation category (1-1, 1-N, N-1, N-N) and side; and `sample`
vs `pooled` with the pooled rows re-weighted per relation so that every relation carries
the share it has in `sample` (micro: its share of answers; macro: its share of queries),
which separates the effect of the added labels from that of the changed relation mix.

Within one evaluation (and one restriction and weighting) every system ranks the same
items against the same candidates, so the expectation and the variance of the aggregate
under the random model are the same for every system. The adjusted index
(v - E) / (optimum - E) and the z-score ±(v - E) / sqrt(Var) are then one strictly
monotone map of the raw value v applied to every system alike, with the same direction
on both sides of a comparison (the map's slope has the metric's direction), so each
ranking, and hence Kendall's tau between two of them, is the same for all three variants.
The variants differ in the *values* compared across evaluations (the values table), not
in the rankings; the tau rows of all three are reported so that this is visible.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from kgrank.data.rank_table import SIDES
from kgrank.errors import KgrankInputError
from kgrank.evaluation.stats import kendall_tau
from kgrank.studies.ir.aggregate import (
    AVERAGINGS,
    VALUE_COLUMNS,
    VARIANT_COLUMNS,
    aggregate_arrays,
    check_aligned,
    has_moments,
    higher_is_better,
    metric_arrays,
    metric_columns,
    metric_keys,
)
from kgrank.studies.ir.kgc_sparsity import depth_evaluation

SAMPLE = "sample"
POOLED = "pooled"
DEPTHS = tuple(range(11))
CATEGORIES = ("1-1", "1-N", "N-1", "N-N")
ALL = "all"
BOTH = "both"
AS_IS = "as is"
SAMPLE_MIX = "relation mix of sample"

AGREEMENT_COLUMNS = (
    "comparison",
    "evaluation_a",
    "evaluation_b",
    "depth",
    "category",
    "side",
    "weighting",
    "averaging",
    "metric",
    "variant",
    "tau",
    "p_value",
    "num_systems",
)
SPARSITY_VALUE_COLUMNS = (
    "model",
    "evaluation",
    "depth",
    "category",
    "side",
    "weighting",
    "averaging",
    "metric",
    *VALUE_COLUMNS,
    "rank",
)


@dataclass(frozen=True)
class Selection:
    """Rows of one evaluation (optionally one relation category and side) and their weighting."""

    evaluation: str
    depth: float = float("nan")
    category: str = ALL
    side: str = BOTH
    weighting: str = AS_IS

    @property
    def key(self) -> tuple:
        # the depth is a function of the evaluation, so it does not identify a selection
        return (self.evaluation, self.category, self.side, self.weighting)


def relation_mix_weights(target: pd.DataFrame, source: pd.DataFrame) -> np.ndarray:
    """Weights for the rows of ``target`` (one averaging) under which every relation carries
    the share of the total weight that it has in ``source``; relations absent from
    ``source`` get weight 0. The share is of the weight column: answers for micro rows
    (weight 1 per answer), queries for macro rows (1 per query) and for macro-pykeen rows
    (1/num_relevant per answer, summing to 1 per query). Within a relation the rows keep
    their relative weights."""
    source_weight = source.groupby("relation")["weight"].sum()
    share = source_weight / source_weight.sum()
    target_weight = target.groupby("relation")["weight"].sum()
    factor = (share.reindex(target_weight.index).fillna(0.0) / target_weight).to_dict()
    relation_factor = target["relation"].map(factor).to_numpy(dtype=float)
    return target["weight"].to_numpy(dtype=float) * relation_factor


def _category_of(reference: pd.DataFrame, relations: pd.DataFrame) -> np.ndarray:
    """Each row's relation category from the table ``relation, category``."""
    for column in ("relation", "category"):
        if column not in relations.columns:
            raise KgrankInputError(f"relations table: no column {column}; give columns relation, category")
    duplicated = relations["relation"].duplicated()
    if duplicated.any():
        relation = relations.loc[duplicated, "relation"].iloc[0]
        raise KgrankInputError(f"relations table: relation {relation} listed twice; give one category each")
    category = reference["relation"].map(relations.set_index("relation")["category"])
    if category.isna().any():
        relation = reference.loc[category.isna(), "relation"].iloc[0]
        raise KgrankInputError(
            f"relations table: no category for relation {relation}; add it (one of {', '.join(CATEGORIES)})"
        )
    return category.to_numpy()


def _selections(evaluations: list[str], depths: Iterable[int], categories: list[str]) -> list[Selection]:
    selections = [Selection(SAMPLE), Selection(POOLED)]
    selections += [
        Selection(depth_evaluation(depth), depth=depth)
        for depth in depths
        if depth_evaluation(depth) in evaluations
    ]
    for evaluation in (SAMPLE, POOLED):
        for category in (ALL, *categories):
            for side in (BOTH, *SIDES):
                if (category, side) != (ALL, BOTH):
                    selections.append(Selection(evaluation, category=category, side=side))
    selections.append(Selection(POOLED, weighting=SAMPLE_MIX))
    return selections


def sparsity_values(
    items_by_system: Mapping[str, pd.DataFrame],
    relations: pd.DataFrame,
    *,
    depths: Iterable[int] = DEPTHS,
) -> pd.DataFrame:
    """Every system's aggregated values on every selection that the label-sparsity
    comparisons need (columns SPARSITY_VALUE_COLUMNS; ``rank`` 1 = the best system of the
    selection, averaging and metric, ties sharing the mean rank)."""
    systems = check_aligned(items_by_system)
    reference = items_by_system[systems[0]]
    evaluations = list(dict.fromkeys(reference["evaluation"]))
    for needed in (SAMPLE, POOLED):
        if needed not in evaluations:
            raise KgrankInputError(
                f"item tables: no evaluation {needed!r} (they hold {', '.join(evaluations)}); "
                "evaluate the systems on FB-Test-S and FB-Test-S-C"
            )
    category = _category_of(reference, relations)
    present = set(category[reference["evaluation"].isin([SAMPLE, POOLED]).to_numpy()])
    categories = [name for name in (*CATEGORIES, *sorted(set(relations["category"]) - set(CATEGORIES)))]
    categories = [name for name in categories if name in present]
    # the rows' columns as arrays, once: a selection takes a few rows of every system
    keys = metric_keys(reference)
    # every system's table must carry the first one's metrics (check_aligned compares rows)
    for system in systems:
        missing = [column for column in metric_columns(keys) if column not in items_by_system[system].columns]
        if missing:
            raise KgrankInputError(
                f"item tables: the one of {system} has no column {', '.join(missing)}, which that of "
                f"{systems[0]} has; evaluate every system with the same ir-evaluate settings"
            )
    arrays = {system: metric_arrays(items_by_system[system], keys) for system in systems}
    weight = reference["weight"].to_numpy(dtype=float)
    evaluation_of, averaging_of, side_of = (
        reference[column].to_numpy() for column in ("evaluation", "averaging", "side")
    )
    rows = []
    for selection in _selections(evaluations, depths, categories):
        for averaging in AVERAGINGS:
            mask = (evaluation_of == selection.evaluation) & (averaging_of == averaging)
            if selection.category != ALL:
                mask &= category == selection.category
            if selection.side != BOTH:
                mask &= side_of == selection.side
            if not mask.any():
                continue
            chosen = np.flatnonzero(mask)
            if selection.weighting == SAMPLE_MIX:
                source = reference[(evaluation_of == SAMPLE) & (averaging_of == averaging)]
                weights = relation_mix_weights(reference[mask], source)
            else:
                weights = weight[chosen]
            selected = asdict(selection)  # evaluation, depth, category, side, weighting
            for system in systems:
                columns = arrays[system]
                for metric in keys:
                    values = columns[metric][chosen]
                    if np.isnan(values).all():  # AP@20 and nDCG@20 only on macro rows
                        continue
                    moments = (
                        (columns[f"{metric}_expectation"][chosen], columns[f"{metric}_variance"][chosen])
                        if has_moments(metric)
                        else (None, None)
                    )
                    rows.append(
                        {
                            "model": system,
                            **selected,
                            "averaging": averaging,
                            "metric": metric,
                            **aggregate_arrays(metric, weights, values, *moments),
                        }
                    )
    values = pd.DataFrame(rows, columns=list(SPARSITY_VALUE_COLUMNS[:-1]))
    # rank 1 = best: negate the value of metrics where higher is better
    direction = values["metric"].map(lambda metric: -1.0 if higher_is_better(metric) else 1.0)
    group = ["evaluation", "category", "side", "weighting", "averaging", "metric"]
    values["rank"] = (values["value"] * direction).groupby([values[c] for c in group]).rank(method="average")
    return values


def _comparisons(values: pd.DataFrame) -> list[tuple[str, Selection, Selection]]:
    """(name, first, second) for every comparison whose selections have values."""
    keys = set(
        map(tuple, values[["evaluation", "category", "side", "weighting"]].drop_duplicates().to_numpy())
    )
    depths = values.loc[values["depth"].notna(), ["evaluation", "depth"]].drop_duplicates()
    sample, pooled = Selection(SAMPLE), Selection(POOLED)
    comparisons = [("sample vs pooled", sample, pooled)]
    for evaluation, depth in sorted(depths.itertuples(index=False), key=lambda pair: pair[1]):
        at_depth = Selection(evaluation, depth=depth)
        comparisons += [("depth vs pooled", at_depth, pooled), ("depth vs sample", at_depth, sample)]
    for _, category, side, weighting in sorted(key for key in keys if key[0] == SAMPLE):
        if (category, side) != (ALL, BOTH) and weighting == AS_IS:
            comparisons.append(
                (
                    "sample vs pooled by category and side",
                    Selection(SAMPLE, category=category, side=side),
                    Selection(POOLED, category=category, side=side),
                )
            )
    comparisons.append(
        ("sample vs pooled, relation mix of sample", sample, Selection(POOLED, weighting=SAMPLE_MIX))
    )
    return [
        (name, first, second)
        for name, first, second in comparisons
        if first.key in keys and second.key in keys
    ]


@dataclass(frozen=True)
class _BySystem:
    """The value columns of a selection's rows as arrays (averaging, metric) x system."""

    keys: list[tuple[str, str]]
    columns: dict[str, np.ndarray]


def _by_system(cell: pd.DataFrame, columns: list[str], systems: list[str]) -> _BySystem:
    """Each value column of a selection's rows as an array with one row per (averaging,
    metric), every averaging with every metric present in order of first appearance (NaN
    where a system, or the pair, has no value), one column per system.

    This is the table of ``cell.pivot_table(index=["averaging", "metric"], columns="model",
    sort=False, dropna=False)`` in its row order (the product of the two levels), filled
    by position: a selection has one value per system, averaging and metric, and pandas'
    pivot costs tens of milliseconds per selection where the comparisons need hundreds."""
    averagings = list(dict.fromkeys(cell["averaging"]))
    metrics = list(dict.fromkeys(cell["metric"]))
    metric_position = {metric: position for position, metric in enumerate(metrics)}
    averaging_position = {averaging: position for position, averaging in enumerate(averagings)}
    system_position = {system: position for position, system in enumerate(systems)}
    rows = [
        averaging_position[averaging] * len(metrics) + metric_position[metric]
        for averaging, metric in zip(cell["averaging"], cell["metric"], strict=True)
    ]
    positions = [system_position[system] for system in cell["model"]]
    arrays = {}
    for column in columns:
        array = np.full((len(averagings) * len(metrics), len(systems)), np.nan)
        array[rows, positions] = cell[column].to_numpy(dtype=float)
        arrays[column] = array
    return _BySystem([(averaging, metric) for averaging in averagings for metric in metrics], arrays)


class _RankPatternTaus:
    """kendall_tau memoised on the rank pattern of its two vectors.

    scipy.stats.kendalltau reads its vectors only through their dense ranks (tau and p
    from counts of concordant, discordant and tied pairs), so two comparisons with the
    same pair of dense rankings get the same result, bit for bit. A handful of systems
    give few patterns, while the comparisons number thousands (three variants with the
    same ranking each, module docstring), and scipy's call costs about a millisecond."""

    def __init__(self) -> None:
        self._known: dict[tuple, tuple[float, float]] = {}

    def __call__(self, first: np.ndarray, second: np.ndarray) -> tuple[float, float]:
        if not (np.isfinite(first).all() and np.isfinite(second).all()):
            return kendall_tau(first, second)  # NaN, without scipy
        key = (
            tuple(np.unique(first, return_inverse=True)[1].tolist()),
            tuple(np.unique(second, return_inverse=True)[1].tolist()),
        )
        if key not in self._known:
            self._known[key] = kendall_tau(first, second)
        return self._known[key]


def agreement_table(values: pd.DataFrame) -> pd.DataFrame:
    """Kendall's tau-b (and p-value) of every comparison, averaging, metric and variant
    (raw, adjusted index, z-score) from the values of :func:`sparsity_values`, as a tidy
    table with the columns AGREEMENT_COLUMNS. Variants without values (AP@20 and nDCG@20
    have no adjusted index) are left out."""
    systems = list(dict.fromkeys(values["model"]))
    columns = list(VARIANT_COLUMNS.values())
    # a selection takes part in many comparisons: its rows are found, and its value columns
    # laid out by system, once
    cells = dict(list(values.groupby(["evaluation", "category", "side", "weighting"], sort=False)))
    tables: dict[tuple, _BySystem] = {}

    def by_system(selection: Selection) -> _BySystem:
        if selection.key not in tables:
            tables[selection.key] = _by_system(cells[selection.key], columns, systems)
        return tables[selection.key]

    tau_of = _RankPatternTaus()
    rows = []
    for name, first, second in _comparisons(values):
        table_a, table_b = by_system(first), by_system(second)
        rows_b = {key: row for row, key in enumerate(table_b.keys)}
        shared = [(row_a, rows_b[key], key) for row_a, key in enumerate(table_a.keys) if key in rows_b]
        for variant, column in VARIANT_COLUMNS.items():
            for row_a, row_b, (averaging, metric) in shared:
                vector_a, vector_b = table_a.columns[column][row_a], table_b.columns[column][row_b]
                if np.isnan(vector_a).all() or np.isnan(vector_b).all():
                    continue
                tau, p_value = tau_of(vector_a, vector_b)
                rows.append(
                    {
                        "comparison": name,
                        "evaluation_a": first.evaluation,
                        "evaluation_b": second.evaluation,
                        "depth": first.depth,
                        "category": first.category,
                        "side": first.side,
                        "weighting": second.weighting,
                        "averaging": averaging,
                        "metric": metric,
                        "variant": variant,
                        "tau": tau,
                        "p_value": p_value,
                        "num_systems": int(np.count_nonzero(~np.isnan(vector_a))),
                    }
                )
    return pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))


def label_sparsity(
    items_by_system: Mapping[str, pd.DataFrame],
    relations: pd.DataFrame,
    *,
    depths: Iterable[int] = DEPTHS,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The label-sparsity comparisons: (tau table, per-system values table); see
    :func:`agreement_table` and :func:`sparsity_values` for their columns."""
    values = sparsity_values(items_by_system, relations, depths=depths)
    return agreement_table(values), values
