"""The ambiguity study's report tables and captions: each function shapes one analysis
table into the rows and columns the Markdown/LaTeX table shows, or writes the prose
stated under a table or figure. The analyses are elsewhere (variants, drift, table1,
pairwise); the command handlers only pass their tables through here."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from kgrank.labels import dataset_label, model_label
from kgrank.studies.ambiguity.figures import PROTOCOL_LABELS, metric_label, scorer_label
from kgrank.studies.ambiguity.pairwise import REPORTED_COLUMNS
from kgrank.studies.ambiguity.table1 import indistinguishable_from_random, model_row
from kgrank.studies.ambiguity.variants import CONSTANT_SCORER, RANDOM_SCORER

# The metrics of the variants table, and those of the variants figure.
SHOWN_IN_VARIANTS = (
    "arithmetic_mean_rank",
    "inverse_harmonic_mean_rank",
    "hits_at_10",
    "adjusted_arithmetic_mean_rank_index",
    "adjusted_inverse_harmonic_mean_rank",
    "adjusted_hits_at_10",
    "z_inverse_harmonic_mean_rank",
)
SHOWN_IN_VARIANTS_FIGURE = (
    "inverse_harmonic_mean_rank",
    "adjusted_arithmetic_mean_rank_index",
    "adjusted_inverse_harmonic_mean_rank",
    "z_inverse_harmonic_mean_rank",
)
RANDOM_MARK = "†"
WORSE_MARK = "‡"


def random_mark(z_mrr: float, alpha: float) -> str:
    """The mark of a model against random: † not distinguishable (|z-MRR| below the
    two-sided quantile), ‡ worse than random (z-MRR below minus it), none above."""
    if indistinguishable_from_random(z_mrr, alpha):
        return RANDOM_MARK
    return WORSE_MARK if z_mrr < 0 else ""


def random_like(rank_tables: dict[tuple[str, str], pd.DataFrame], alpha: float) -> dict[tuple[str, str], str]:
    """Each (dataset, model)'s mark against random from a z-MRR test at ``alpha``."""
    return {pair: random_mark(model_row(table)["z_mrr"], alpha) for pair, table in rank_tables.items()}


def marked(model: str, mark: str) -> str:
    """A model's printed name, with its mark against random (:func:`random_mark`)."""
    return model_label(model) + (f" {mark}" if mark else "")


def random_note(alpha: float) -> str:
    """The caption's sentence on the marks against random."""
    quantile = stats.norm.ppf(1 - alpha / 2)
    return (
        f"{RANDOM_MARK}: not distinguishable from random, |z-MRR| < {quantile:.2f}; {WORSE_MARK}: worse than "
        f"random, z-MRR < -{quantile:.2f} (two-sided, alpha = {alpha:g})."
    )


# --- rank definitions ------------------------------------------------------------------


def ties_report(ties: pd.DataFrame, trained: set[str], flagged: dict[tuple[str, str], str]) -> pd.DataFrame:
    """The ties table as printed: names of datasets and scorers (trained models marked
    where random-like), without the non-deterministic rank's column."""
    is_trained = ties["scorer"].isin(trained)
    named = ties.assign(
        dataset=ties["dataset"].map(dataset_label),
        scorer=[
            marked(s, flagged.get((d, s), "")) if t else scorer_label(s)
            for d, s, t in zip(ties["dataset"], ties["scorer"], is_trained, strict=True)
        ],
    )
    return named.drop(columns=["share_random_differs_from_realistic"])


def ties_caption(alpha: float) -> str:
    return (
        "Ties between the true answer and other candidates (filtered, both sides): share of tasks "
        "where the optimistic, realistic and pessimistic ranks differ (they all differ exactly when the "
        "true answer ties), and the size of the tie block (candidates scoring exactly as the true one, "
        "itself included) over the tied tasks. " + random_note(alpha)
    )


def variants_report(metrics: pd.DataFrame, flagged: dict[tuple[str, str], str]) -> pd.DataFrame:
    """One row per (dataset, scorer, rank definition), the metrics of SHOWN_IN_VARIANTS
    (both sides) as columns."""
    both = metrics[(metrics["side"] == "both") & metrics["metric"].isin(SHOWN_IN_VARIANTS)]
    wide = both.pivot_table(
        index=["dataset", "scorer", "rank_type"], columns="metric", values="value", sort=False
    )
    wide = wide[[key for key in SHOWN_IN_VARIANTS if key in wide.columns]].reset_index()
    wide["scorer"] = [
        marked(s, flagged[(d, s)]) if (d, s) in flagged else scorer_label(s)
        for d, s in zip(wide["dataset"], wide["scorer"], strict=True)
    ]
    wide["dataset"] = wide["dataset"].map(dataset_label)
    return wide.rename(columns={key: metric_label(key) for key in SHOWN_IN_VARIANTS})


def constant_and_random_statement(metrics: pd.DataFrame) -> str:
    """What the constant and the random scorer get, from the computed table, and why the
    realistic rank is the one to report."""
    both = metrics[metrics["side"] == "both"]

    def span(scorer: str, rank_type: str, metric: str) -> str:
        values = both[
            (both["scorer"] == scorer) & (both["rank_type"] == rank_type) & (both["metric"] == metric)
        ]["value"]
        # + 0.0 prints a rounded -0 as 0
        low, high = round(values.min(), 3) + 0.0, round(values.max(), 3) + 0.0
        return f"{low:.3f}" if abs(high - low) < 5e-4 else f"{low:.3f} to {high:.3f}"

    amri = "adjusted_arithmetic_mean_rank_index"
    amrr = "adjusted_inverse_harmonic_mean_rank"
    ah10 = "adjusted_hits_at_10"
    z_keys = [key for key in set(both["metric"]) if key.startswith("z_")]
    random_realistic = both[(both["scorer"] == RANDOM_SCORER) & (both["rank_type"] == "realistic")]
    largest_z = random_realistic[random_realistic["metric"].isin(z_keys)]["value"].abs().max()
    return (
        f"Constant scorer (every candidate tied with the true one), AMRI over the datasets: optimistic "
        f"{span(CONSTANT_SCORER, 'optimistic', amri)} (a perfect score for a scorer that knows nothing), "
        f"pessimistic {span(CONSTANT_SCORER, 'pessimistic', amri)}, realistic "
        f"{span(CONSTANT_SCORER, 'realistic', amri)}, non-deterministic "
        f"{span(CONSTANT_SCORER, 'random', amri)}; its realistic AMRR is "
        f"{span(CONSTANT_SCORER, 'realistic', amrr)} and AH@10 {span(CONSTANT_SCORER, 'realistic', ah10)}. "
        f"Uniformly random scorer, realistic ranks: AMRI {span(RANDOM_SCORER, 'realistic', amri)}, AMRR "
        f"{span(RANDOM_SCORER, 'realistic', amrr)}, AH@10 {span(RANDOM_SCORER, 'realistic', ah10)}, "
        f"largest |z| {largest_z:.2f}. The realistic rank is the expected rank under random "
        "tie-breaking: a tie costs what a random order of the tied candidates costs on average, so a "
        "scorer that ties everything gets the random model's mean rank, with no seed; the optimistic "
        "rank rewards ties, the pessimistic rank punishes them, and the non-deterministic rank adds noise."
    )


def variants_caption(statement: str, alpha: float) -> str:
    return statement + " " + random_note(alpha)


# --- drift -------------------------------------------------------------------------------


def slopes_report(
    drift: pd.DataFrame, slopes: pd.DataFrame, flagged: dict[tuple[str, str], str]
) -> pd.DataFrame:
    """One row per (protocol, dataset, model), one cell per metric: the slope per decade
    with its interval and 'flat' where the interval holds 0."""
    cells = slopes.assign(
        cell=[
            "n/a: candidates span < 0.5 decades"
            if np.isnan(s)
            else f"{s:+.3g} [{lo:+.3g}, {hi:+.3g}]" + (" flat" if flat else "")
            for s, lo, hi, flat in zip(
                slopes["slope_per_decade"], slopes["low"], slopes["high"], slopes["flat"], strict=True
            )
        ]
    )
    wide = cells.pivot_table(
        index=["protocol", "dataset", "model"], columns="metric", values="cell", aggfunc="first", sort=False
    )
    wide = wide[[key for key in dict.fromkeys(drift["metric"]) if key in wide.columns]].reset_index()
    wide["model"] = [
        marked(m, flagged.get((d, m), "")) for d, m in zip(wide["dataset"], wide["model"], strict=True)
    ]
    wide["dataset"] = wide["dataset"].map(dataset_label)
    return wide.rename(columns={key: metric_label(key) for key in drift["metric"].unique()})


def flat_summary(slopes: pd.DataFrame) -> str:
    """Per protocol and metric: how many of the pairs with a slope are flat."""
    defined = slopes.dropna(subset=["slope_per_decade"])
    counts = defined.groupby(["protocol", "metric"], sort=False)["flat"].agg(["sum", "size"])
    return "; ".join(
        f"{protocol}: "
        + ", ".join(f"{metric_label(key)} {row['sum']}/{row['size']}" for key, row in group.iterrows())
        for protocol, group in counts.reset_index(level=0).groupby("protocol", sort=False)
    )


def slopes_caption(summary: str, *, confidence: float, bootstrap_resamples: int, alpha: float) -> str:
    return (
        "Drift with the candidate-set size: least-squares slope of each metric (realistic ranks, "
        "both sides) per decade of the mean number of candidates, with a "
        f"{confidence:.0%} percentile bootstrap interval over the (size, seed) points "
        f"({bootstrap_resamples} resamples); 'flat' where the interval holds 0. Protocols: "
        + "; ".join(f"{key}: {text}" for key, text in PROTOCOL_LABELS.items())
        + f". Flat pairs of those with a slope: {summary}. "
        + random_note(alpha)
    )


# --- Table 1 -----------------------------------------------------------------------------


def table1_report(table: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Table 1 as printed: names, kgrank's models marked against random, counts as whole numbers."""
    return table.assign(
        dataset=table["dataset"].map(dataset_label),
        model=[
            marked(m, random_mark(z, alpha)) if source == "kgrank" else m
            for m, z, source in zip(table["model"], table["z_mrr"], table["source"], strict=True)
        ],
        # counts as whole numbers, not in the table's 4-digit float format
        **{
            column: [f"{int(count):,}" if count == count else "" for count in table[column]]
            for column in ("entities_published", "entities")
        },
    ).drop(columns=["random_like"])


def table1_caption(alpha: float) -> str:
    return (
        "Table 1 of Berrendorf et al. (2020) regenerated: AMRI = 1 - (MR - 1)/(E[MR] - 1) of the "
        "published filtered mean ranks, with E[MR] from the full entity count N (every task ranks all "
        "N entities: E[MR] = (N + 1)/2) and from the per-task filtered candidate counts N_i of this run's "
        "rank tables (E[MR] = mean (N_i + 1)/2; empty where the dataset is not in this run), and their "
        "difference, the effect of filtering alone: both use the entities of our prepared dataset "
        "(`entities`: those seen in training). `amri_published_count` uses the paper's entity count "
        "(`entities_published`) instead, `amri_filtered_published_entities` the per-task counts on the "
        "paper's entity set (N_i plus the entities our preparation dropped). `amri_published`: the printed "
        "AMRI; `reproduced_by`: the counts whose AMRI rounds to it (half a printed unit, plus the integer "
        "mean rank's rounding). kgrank's models below (realistic ranks, both sides). " + random_note(alpha)
    )


# --- pairwise ----------------------------------------------------------------------------


def pairwise_report(table: pd.DataFrame, flagged: dict[tuple[str, str], str]) -> pd.DataFrame:
    """The pairwise table as printed: REPORTED_COLUMNS, models named and marked."""
    return table.assign(
        dataset=table["dataset"].map(dataset_label),
        first=[marked(m, flagged[(d, m)]) for d, m in zip(table["dataset"], table["first"], strict=True)],
        second=[marked(m, flagged[(d, m)]) for d, m in zip(table["dataset"], table["second"], strict=True)],
    )[list(REPORTED_COLUMNS)]


def pairwise_caption(comparisons: int, *, confidence: float, bootstrap_resamples: int, alpha: float) -> str:
    return (
        "Pairwise model comparisons per dataset on per-task reciprocal ranks (realistic, both sides): MRR "
        "difference (`difference`) and AMRR difference (`adjusted_difference`), first - second, with "
        f"{confidence:.0%} paired percentile bootstrap "
        f"intervals ({bootstrap_resamples} resamples), Wilcoxon signed-rank and paired t p-values "
        f"Holm-corrected over all {comparisons} comparisons, significant at alpha = {alpha:g}. "
        + random_note(alpha)
    )


def pairwise_summary(table: pd.DataFrame, alpha: float) -> str:
    """The line the command prints: how many pairs differ."""
    significant = int(table["wilcoxon_significant"].sum()) if len(table) else 0
    return f"{significant} of {len(table)} pairs differ (Holm-corrected Wilcoxon, alpha {alpha:g})"
