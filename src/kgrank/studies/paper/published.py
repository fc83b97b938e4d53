"""Re-adjust published raw metrics with kgrank's exact moments, and audit published adjustments.

The adjusted index, the expectation-normalised value and the z-score are affine in the
raw metric, with constants that depend only on the dataset's candidate counts. So a
published raw value (MR, MRR, Hits@k) can be adjusted after the fact from the moments
table of its dataset, split and side, and a published adjusted value can be solved
backwards for the expectation (or standard deviation) it implies:

    index P = (M - E) / (opt - E)   =>  E = (M - P opt) / (1 - P)
    normalised P = M / E            =>  E = M / P
    z-score P = s (M - E) / sd      =>  sd = s (M - E) / P     (s = -1 where lower is better)

Published numbers are rounded (5 significant digits); "agrees" means the difference is
within the rounding of the published raw value carried through the affine map plus the
rounding of the published adjusted value.

A published value that kgrank's exact moments do not reproduce is tested against
hypotheses about how it was made: candidate counts off by one (the published z-MRRs), and
the E[MRR] that PyKEEN's master computed for two weeks in March 2022 (the published AMRRs,
:func:`pykeen814_mrr_expectation`). kgrank's exact values stay the reported ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from kgrank.data.tables import read_table, table_kind
from kgrank.defaults import DEFAULT_FILTER_SPLITS
from kgrank.engine.candidates import candidate_counts, counts_by_side
from kgrank.errors import KgrankInputError
from kgrank.evaluation.metrics import Metric, Variant, default_metrics, derive, derived_values, lookup
from kgrank.evaluation.moments import Moments
from kgrank.plotting import add_caption, save_figure, set_style
from kgrank.studies.paper.figure1 import FIGURE1_PANELS, draw_figure1_row

LONG_COLUMNS = ["model", "dataset", "split", "side", "metric", "value"]
# what every published table has, wide or long
PUBLISHED_ROWS = table_kind(
    "published values",
    "the reference folder (shared/reference/published_figure1.tsv, its layout)",
    ("model", "dataset"),
    strings=("model", "dataset"),
    fix="pass a table of published values: model, dataset and <split>_<metric> columns, or the long layout",
)
SIGNIFICANT_DIGITS = 5
AGREES, DISAGREES = "agrees within rounding", "disagrees"


def _registry_key(name: str) -> str:
    """The registry's key of a published column's metric (mrr, amri, z_mrr, hits_at_10,
    PyKEEN's names ...); a name the registry does not know stays as it is."""
    try:
        return lookup(name).key
    except KgrankInputError:
        return name


def read_published(path: str | Path) -> pd.DataFrame:
    """Published values as a long table (model, dataset, split, side, metric, value).

    Accepts the long layout as it is, or a wide one with columns ``<split>_<metric>``
    (e.g. ``test_mrr``, ``test_hits_at_10``) and no side, taken as both sides.
    """
    path = Path(path)
    # model and dataset on every row, at least one row (kgrank.data.tables), then the layout
    table = read_table(path, PUBLISHED_ROWS)
    if {"metric", "value"} <= set(table.columns):
        missing = set(LONG_COLUMNS) - set(table.columns)
        if missing:
            raise KgrankInputError(f"{path}: missing column(s) {sorted(missing)}; expected {LONG_COLUMNS}")
        long = table[LONG_COLUMNS].copy()
    else:
        value_columns = [column for column in table.columns if column not in {"model", "dataset"}]
        long = table.melt(id_vars=["model", "dataset"], value_vars=value_columns, var_name="column")
        split_metric = long["column"].str.split("_", n=1, expand=True)
        long = long.assign(split=split_metric[0], metric=split_metric[1], side="both")[LONG_COLUMNS]
    # a value a paper did not publish is left empty: not a value to audit
    values = pd.to_numeric(long["value"], errors="coerce")
    text = long["value"].notna() & values.isna()
    if text.any():
        row = long[text].iloc[0]
        raise KgrankInputError(
            f"{path}: {row['model']} on {row['dataset']}, {row['split']} {row['metric']}: "
            f"{row['value']!r} is not a number; write the published value, or leave it empty"
        )
    long = long.assign(value=values).dropna(subset=["value"]).reset_index(drop=True)
    long["metric"] = long["metric"].map(_registry_key)
    if long.empty:
        raise KgrankInputError(f"{path}: no published value in any row; fill in the values to audit")
    return long


def rounding_error(values: np.ndarray | float, digits: int = SIGNIFICANT_DIGITS) -> np.ndarray:
    """Half a unit in the last of ``digits`` significant digits."""
    values = np.abs(np.asarray(values, dtype=float))
    with np.errstate(divide="ignore"):
        exponent = np.floor(np.log10(np.where(values > 0, values, 1.0)))
    return 0.5 * 10.0 ** (exponent - (digits - 1))


def readjust(
    published: pd.DataFrame, moments: pd.DataFrame, metrics: list[Metric] | None = None
) -> pd.DataFrame:
    """Every derived variant of every published raw metric, recomputed from ``moments``.

    ``moments`` is kgrank's lookup table (dataset, split, side, metric, expectation,
    variance, method). Where the published table also has the derived value, the row
    carries it, the difference, the rounding tolerance, the verdict, and what the
    published value implies when solved backwards.
    """
    by_key = {metric.key: metric for metric in metrics or default_metrics()}
    lookup = moments.set_index(["dataset", "split", "side", "metric"])
    given = published.set_index(["model", "dataset", "split", "side", "metric"])["value"]
    rows = []
    for (model, dataset, split, side, key), value in given.items():
        metric = by_key.get(key)
        if metric is None or not metric.has_derived:
            continue
        try:
            moment_row = lookup.loc[(dataset, split, side, key)]
        except KeyError as error:
            raise KgrankInputError(
                f"no moments for dataset {dataset!r}, split {split!r}, side {side!r}; add the dataset to the "
                "config so that its moments table is built"
            ) from error
        exact = Moments(
            float(moment_row["expectation"]), float(moment_row["variance"]), str(moment_row["method"])
        )
        derived = derived_values(metric, float(value), exact)
        shifted = derived_values(metric, float(value) + 1.0, exact)
        for variant, row in derived.items():
            slope = abs(shifted[variant].value - row.value)  # the affine map's slope
            record = {
                "model": model,
                "dataset": dataset,
                "split": split,
                "side": side,
                "base_metric": key,
                "base_value": float(value),
                "metric": row.key,
                "variant": variant.value,
                "recomputed": row.value,
                "exact_expectation": exact.expectation,
                "exact_std": float(np.sqrt(exact.variance)),
                "moment_method": exact.method,
            }
            published_value = given.get((model, dataset, split, side, row.key))
            if published_value is not None:
                tolerance = slope * float(rounding_error(value)) + float(rounding_error(published_value))
                record.update(
                    published=float(published_value),
                    difference=float(published_value) - row.value,
                    tolerance=tolerance,
                    verdict=AGREES if abs(float(published_value) - row.value) <= tolerance else DISAGREES,
                    **_implied(metric, variant, float(value), float(published_value), exact),
                )
            rows.append(record)
    return pd.DataFrame(rows)


def _implied(
    metric: Metric, variant: Variant, value: float, published: float, exact: Moments
) -> dict[str, float]:
    """What a published derived value implies about the moments, solved backwards, with the
    uncertainty that the rounding of both published numbers leaves in it."""
    if variant is Variant.INDEX:
        implied = (value - published * metric.optimum) / (1.0 - published)
        error = float(rounding_error(value)) / abs(1.0 - published) + float(rounding_error(published)) * abs(
            (value - metric.optimum) / (1.0 - published) ** 2
        )
        return {"implied_expectation": implied, "implied_expectation_error": error, "implied_std": np.nan}
    if variant is Variant.NORMALISED:
        return {"implied_expectation": value / published if published else np.nan, "implied_std": np.nan}
    sign = 1.0 if metric.increasing else -1.0
    implied_std = sign * (value - exact.expectation) / published if published else np.nan
    return {"implied_expectation": np.nan, "implied_std": implied_std}


# Hypotheses tried for a published value that kgrank's exact moments do not reproduce.
COUNT_HYPOTHESES = (
    # The cause of the published z-MRRs (shown with PyKEEN in test_paper_published.py).
    (
        -1,
        "moments from candidate counts N_i - 1: PyKEEN 1.11.1's get_candidate_set_size counts the "
        "evaluated answer out, and the authors' post-hoc fix (ranking-metrics-manuscript, "
        "scripts/fix.py) fed it to expected_value/std, which take ranks uniform on 1..num_candidates",
    ),
    (1, "moments from candidate counts N_i + 1"),
)
# The cause of the published AMRRs (shown on the published inputs in test_paper_published.py).
PYKEEN814_HYPOTHESIS = (
    "E[MRR] = log(N̄) / (N̄ - 1) at the mean candidate count N̄ of the head and tail tasks pooled: "
    "PyKEEN's master from bd2b83fc7 (#814, 2022-03-08) to d597efc8a (#835, 2022-03-22), in no release"
)
# Its columns in the audit: the expectation, the derived value recomputed with it, the verdict.
PYKEEN814_COLUMNS = ("pykeen814_expectation", "pykeen814_recomputed", "pykeen814_verdict")


def pykeen814_mrr_expectation(num_candidates: np.ndarray) -> float:
    """E[MRR] as PyKEEN's master computed it from 2022-03-08 to 2022-03-22: log(N̄) / (N̄ - 1)
    at the mean N̄ of all candidate counts.

    ``InverseHarmonicMeanRank.expected_value`` came with commit bd2b83fc7c95 ("Add more
    adjusted metrics (#814)", 2022-03-08; first written in 049fa5190 of that pull request)
    as ``n = mean(num_candidates); log(n) / (n - 1)``: the expectation of 1/X for X
    uniform on the real interval [1, N̄], at a single mean count, where the random model's
    expectation is the mean over tasks of H(N_i) / N_i for ranks uniform on 1..N_i.
    Commit d597efc8a1953 ("Refactor derived metrics (#835)", 2022-03-22) replaced it by
    the exact mean before any release: v1.7.0 has no adjusted MRR, v1.8.0 (12c3da815,
    2022-03-22) the exact one.

    Evaluated on a dataset's pooled filtered test candidate counts it reproduces the
    published adjusted MRRs of the case study of Hoyt, Berrendorf et al. (2022); it is
    the explanation of those numbers, not a moment kgrank reports. Where every count is 1
    it is 1, the limit (PyKEEN's guarded division gave 0 there).
    """
    mean = float(np.mean(num_candidates))
    return float(np.log(mean) / (mean - 1.0)) if mean > 1.0 else 1.0


def with_pykeen814(audit: pd.DataFrame, counts: dict[tuple[str, str, str], np.ndarray]) -> pd.DataFrame:
    """The audit with :data:`PYKEEN814_COLUMNS`: each published variant of MRR that needs only
    its expectation (the adjusted index, the expectation-normalised MRR) recomputed with
    :func:`pykeen814_mrr_expectation` of the row's candidate counts (``counts``, as for
    :func:`explain`), and whether that agrees with the published value within the row's
    tolerance. Empty (NaN) on every other row."""
    mrr = lookup("inverse_harmonic_mean_rank").metric
    records = []
    for row in audit.itertuples():
        num_candidates = counts.get((row.dataset, row.split, row.side))
        if (
            row.base_metric != mrr.key
            or row.variant == Variant.Z_SCORE
            or num_candidates is None
            or pd.isna(getattr(row, "published", np.nan))
        ):
            records.append(dict.fromkeys(PYKEEN814_COLUMNS, np.nan))
            continue
        expectation = pykeen814_mrr_expectation(num_candidates)
        value = float(derive(mrr, row.base_value, expectation)[Variant(row.variant)].value)
        verdict = AGREES if abs(row.published - value) <= row.tolerance else DISAGREES
        records.append(dict(zip(PYKEEN814_COLUMNS, (expectation, value, verdict), strict=True)))
    return audit.assign(**pd.DataFrame(records, index=audit.index, columns=list(PYKEEN814_COLUMNS)))


def explain(audit: pd.DataFrame, counts: dict[tuple[str, str, str], np.ndarray]) -> pd.DataFrame:
    """For each disagreement, the hypothesis (if any) under which the published value holds,
    with the columns of :func:`with_pykeen814`.

    ``counts`` maps (dataset, split, side) to the real candidate counts. A hypothesis
    explains a row when the derived value recomputed under it agrees within rounding.
    """
    audit = with_pykeen814(audit, counts)
    by_key = {metric.key: metric for metric in default_metrics()}
    explanations = []
    for row in audit.itertuples():
        if getattr(row, "verdict", None) != DISAGREES:
            explanations.append("" if pd.isna(getattr(row, "published", np.nan)) else "exact moments")
            continue
        metric = by_key[row.base_metric]
        found = []
        num_candidates = counts.get((row.dataset, row.split, row.side))
        for shift, label in COUNT_HYPOTHESES if num_candidates is not None else ():
            moments = metric.moments(np.maximum(num_candidates + shift, 1))
            value = derived_values(metric, row.base_value, moments)[Variant(row.variant)].value
            if abs(value - row.published) <= row.tolerance:
                found.append(label)
        tried = [label for _, label in COUNT_HYPOTHESES]
        if not pd.isna(row.pykeen814_verdict):
            tried.append(PYKEEN814_HYPOTHESIS)
            if row.pykeen814_verdict == AGREES:
                found.append(PYKEEN814_HYPOTHESIS)
        explanations.append("; ".join(found) if found else "not explained by " + " or ".join(tried))
    return audit.assign(explanation=explanations)


def published_candidate_counts(
    published: pd.DataFrame, data_dir: str | Path, filter_splits: Sequence[str] = DEFAULT_FILTER_SPLITS
) -> dict[tuple[str, str, str], np.ndarray]:
    """The real candidate counts of every (dataset, split, side) a published table names,
    for the datasets prepared under ``data_dir`` (others are skipped: nothing to explain with)."""
    counts = {}
    for dataset, split in published[["dataset", "split"]].drop_duplicates().itertuples(index=False):
        dataset_dir = Path(data_dir) / dataset
        if not dataset_dir.is_dir():
            continue
        for side, num_candidates in counts_by_side(
            candidate_counts(dataset_dir, split, filter_splits)
        ).items():
            counts[dataset, split, side] = num_candidates
    return counts


def audit_published(
    published: pd.DataFrame,
    moments: pd.DataFrame,
    checks: pd.DataFrame,
    data_dir: str | Path,
    filter_splits: Sequence[str] = DEFAULT_FILTER_SPLITS,
) -> pd.DataFrame:
    """The whole audit: re-adjusted values, the explanation of each disagreement, and the
    simulation's verdict between the exact and the implied moments."""
    counts = published_candidate_counts(published, data_dir, filter_splits)
    return attach_simulation(explain(readjust(published, moments), counts), checks)


# The audit's columns a reader needs to judge each published value, in reading order.
AUDIT_SUMMARY_COLUMNS = [
    "model",
    "dataset",
    "metric",
    "published",
    "recomputed",
    "difference",
    "verdict",
    "implied_expectation",
    "exact_expectation",
    "implied_std",
    "exact_std",
    "explanation",
    "pykeen814_recomputed",
    "pykeen814_verdict",
    "z_exact_vs_simulation",
    "z_implied_vs_simulation",
]
AUDIT_CAPTION = (
    "One row per published derived value. `recomputed`: from the published raw value with kgrank's "
    "exact moments of the dataset's filtered test candidate counts N_i (of the row's side; head and "
    "tail pooled for both). "
    "Tolerance: a value agrees within rounding when it differs from the published one by at most "
    "r(published) + |slope| r(raw), r(x) half a unit in the fifth significant digit of x and slope "
    "that of the affine map from the raw to the derived value (for an AMRR between 0.1 and 1, "
    "5e-6 + 5e-6 / (1 - E)). `implied_*`: the expectation or standard deviation the published value "
    "implies, solved backwards. `pykeen814_recomputed`, `pykeen814_verdict`: the AMRR from the "
    "published MRR with E[MRR] = log(N̄) / (N̄ - 1) at the mean candidate count N̄, as PyKEEN's master "
    "computed it between commits bd2b83fc7 (#814, 2022-03-08) and d597efc8a (#835, 2022-03-22), in no "
    "release, judged with the same tolerance: the explanation of the published AMRRs, not a value "
    "kgrank reports. `explanation`: the hypothesis under which a disagreeing published value holds. "
    "`z_*_vs_simulation`: the exact and the implied moment against the Monte Carlo simulation, in its "
    "standard errors."
)


def audit_summary(audit: pd.DataFrame) -> pd.DataFrame:
    """The audited rows (those with a published value) in the summary's columns."""
    return audit.dropna(subset=["published"])[AUDIT_SUMMARY_COLUMNS]


def attach_simulation(audit: pd.DataFrame, checks: pd.DataFrame) -> pd.DataFrame:
    """Side with kgrank or with the published value? The Monte Carlo check decides.

    For each audited row, the simulated mean (or standard deviation) of the base metric
    on the same candidate counts is set against both the exact and the implied value, in
    units of the simulation's standard error.
    """
    simulated = checks.set_index(["dataset", "side", "metric"])
    columns = ("simulated_mean", "simulated_std", "z_exact_vs_simulation", "z_implied_vs_simulation")
    records = []
    for row in audit.itertuples():
        key = (row.dataset, row.side, row.base_metric)
        if row.split != "test" or key not in simulated.index or pd.isna(getattr(row, "published", np.nan)):
            records.append(dict.fromkeys(columns, np.nan))
            continue
        check = simulated.loc[key]
        replicates = float(check["replicates"])
        mean, std = float(check["simulated_mean"]), float(np.sqrt(check["simulated_variance"]))
        # a z-score's moment is the standard deviation: a sample standard deviation's standard
        # error is about sd / sqrt(2R) near normality, a mean's sd / sqrt(R)
        spread = row.variant == Variant.Z_SCORE
        error = std / np.sqrt(2 * replicates if spread else replicates)
        simulated_value = std if spread else mean
        if spread:
            exact, implied = row.exact_std, row.implied_std
        else:
            exact, implied = row.exact_expectation, row.implied_expectation
        z_scores = ((exact - simulated_value) / error, (implied - simulated_value) / error)
        records.append(dict(zip(columns, (mean, std, *z_scores), strict=True)))
    return audit.assign(**pd.DataFrame(records, index=audit.index, columns=list(columns)))


def plot_audit(audit: pd.DataFrame, pdf_path: str | Path, png_path: str | Path) -> None:
    """Published against recomputed AMRI, AMRR and z-MRR, one panel each, y = x dashed."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    set_style()
    audited = audit.dropna(subset=["published"])
    keys = list(dict.fromkeys(audited["metric"]))
    figure, axes = plt.subplots(1, len(keys), figsize=(4.2 * len(keys), 4), constrained_layout=True)
    axes = np.atleast_1d(axes)
    for axis, key in zip(axes, keys, strict=True):
        subset = audited[audited["metric"] == key]
        sns.scatterplot(
            data=subset,
            x="recomputed",
            y="published",
            hue="dataset",
            style="verdict",
            ax=axis,
            s=60,
            hue_order=sorted(audited["dataset"].unique()),
            style_order=[AGREES, DISAGREES],
            markers={AGREES: "o", DISAGREES: "X"},
            legend=axis is axes[-1],
        )
        low = min(subset["recomputed"].min(), subset["published"].min())
        high = max(subset["recomputed"].max(), subset["published"].max())
        axis.plot([low, high], [low, high], linestyle="--", color="0.4", linewidth=1, label="y = x")
        if key.startswith("z_"):
            axis.set_xscale("symlog", linthresh=1.0)
            axis.set_yscale("symlog", linthresh=1.0)
        axis.set_title(key)
        axis.set_xlabel("recomputed with kgrank's exact moments")
        axis.set_ylabel("published (case study)")
    axes[-1].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    save_figure(figure, pdf_path, png_path)


def plot_figure1_comparison(
    audit: pd.DataFrame,
    ours: pd.DataFrame,
    stats: pd.DataFrame,
    pdf_path: str | Path,
    png_path: str | Path,
    caption: str = "",
    order: str = "triples",
) -> None:
    """Figure 1 twice: the published raw MRRs with kgrank's exact adjustments, and kgrank's own models."""
    import matplotlib.pyplot as plt

    set_style()
    keys = {key for key, _, _ in FIGURE1_PANELS}
    mrr = audit[(audit["base_metric"] == "inverse_harmonic_mean_rank") & (audit["split"] == "test")]
    published = pd.concat(
        [
            mrr.drop_duplicates(["model", "dataset", "side"]).assign(
                metric="inverse_harmonic_mean_rank", value=lambda frame: frame["base_value"]
            ),
            mrr[mrr["metric"].isin(keys)].assign(value=lambda frame: frame["recomputed"]),
        ]
    ).assign(rank_type="realistic")[["dataset", "model", "side", "rank_type", "metric", "value"]]
    figure, axes = plt.subplots(2, len(FIGURE1_PANELS), figsize=(12, 7.2), constrained_layout=True)
    draw_figure1_row(axes[0], published, stats, row_title="published", order=order)
    draw_figure1_row(axes[1], ours, stats, row_title="kgrank", order=order)
    figure.suptitle(
        "Top: the case study's published MRRs with kgrank's exact adjustments. Bottom: kgrank's own models.",
        fontsize=10,
    )
    add_caption(figure, caption)
    save_figure(figure, pdf_path, png_path)


# --- our test metrics next to the published ones ------------------------------------------

COMPARED_METRICS = {
    "mrr": "inverse_harmonic_mean_rank",
    "hits_at_1": "hits_at_1",
    "hits_at_3": "hits_at_3",
    "hits_at_10": "hits_at_10",
    "mr": "arithmetic_mean_rank",
}


def compare_with_published(
    metrics: pd.DataFrame, published_results: pd.DataFrame, profile: str
) -> pd.DataFrame:
    """kgrank's test metrics (realistic ranks, both sides) next to every published source.

    ``published_results`` has one row per (model, dataset, source) with columns
    ``test_<metric>`` (the layout of published_results.tsv). ``fraction_of_published`` is
    kgrank's value over the published one (published over kgrank's for MR, where lower is
    better), so that 1 is parity and 0.5 half of the published quality.
    """
    ours = metrics[(metrics["side"] == "both") & (metrics["rank_type"] == "realistic")]
    rows = []
    for (dataset, model), group in ours.groupby(["dataset", "model"], sort=False):
        values = group.set_index("metric")["value"]
        epochs = int(group["epochs"].iloc[0]) if "epochs" in group else None
        training_loop = group["training_loop"].iloc[0] if "training_loop" in group else None
        for source in published_results.itertuples():
            if (source.model, source.dataset) != (model, dataset):
                continue
            for short, key in COMPARED_METRICS.items():
                theirs = float(getattr(source, f"test_{short}", np.nan))
                value = float(values[key])
                fraction = theirs / value if short == "mr" else value / theirs
                rows.append(
                    {
                        "dataset": dataset,
                        "model": model,
                        "metric": short,
                        "kgrank": value,
                        "published": theirs,
                        "difference": value - theirs,
                        "fraction_of_published": fraction,
                        "source": source.source,
                        "profile": profile,
                        "epochs": epochs,
                        "training_loop": training_loop,
                    }
                )
    return pd.DataFrame(rows)


def comparison_wide(table: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, model, source) with kgrank's and the published value of each
    metric, and the fraction of the published MRR that kgrank's reached."""
    wide = table.pivot_table(
        index=["dataset", "model", "source", "epochs", "training_loop"],
        columns="metric",
        values=["kgrank", "published"],
        sort=False,
    )
    wide.columns = [f"{metric} {who}" for who, metric in wide.columns]
    wide = wide.reset_index()
    if "mrr kgrank" in wide:
        wide["mrr fraction of published"] = wide["mrr kgrank"] / wide["mrr published"]
    return wide


def plot_published_comparison(
    table: pd.DataFrame, pdf_path: str | Path, png_path: str | Path, caption: str = ""
) -> None:
    """kgrank's test metric against each published value, one panel per metric, y = x for reference."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    set_style()
    labels = {short: lookup(key).metric.label for short, key in COMPARED_METRICS.items()}
    metrics = [metric for metric in labels if metric in set(table["metric"])]
    figure, axes = plt.subplots(1, len(metrics), figsize=(3.2 * len(metrics), 3.6), constrained_layout=True)
    for index, (axis, metric) in enumerate(zip(np.atleast_1d(axes), metrics, strict=True)):
        subset = table[table["metric"] == metric].dropna(subset=["published", "kgrank"])
        sns.scatterplot(
            data=subset,
            x="published",
            y="kgrank",
            hue="dataset",
            style="model",
            ax=axis,
            legend=index == len(metrics) - 1,
            s=45,
        )
        low = float(min(subset["published"].min(), subset["kgrank"].min()))
        high = float(max(subset["published"].max(), subset["kgrank"].max()))
        if metric == "mr":  # mean ranks span four orders of magnitude
            axis.set_xscale("log")
            axis.set_yscale("log")
        axis.plot([low, high], [low, high], color="0.5", linewidth=0.8, linestyle="--", zorder=0)
        unit = " (rank, log scale)" if metric == "mr" else " (fraction)" if metric.startswith("hits") else ""
        axis.set_xlabel(f"published {labels[metric]}{unit}")
        axis.set_ylabel(f"kgrank {labels[metric]}{unit}")
        axis.set_title(labels[metric])
    handles_axis = np.atleast_1d(axes)[-1]
    if handles_axis.get_legend() is not None:
        sns.move_legend(handles_axis, "upper left", bbox_to_anchor=(1.02, 1), frameon=False)
    figure.suptitle(
        "Test metrics, realistic ranks, both sides: kgrank (y) against the published value (x)", fontsize=10
    )
    add_caption(figure, caption)
    save_figure(figure, pdf_path, png_path)
