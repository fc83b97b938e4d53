"""The ir study's report tables and captions: each function shapes one analysis table into
the rows and columns the Markdown/LaTeX table shows, or writes the prose stated under a
table or figure. The analyses are elsewhere (aggregate, agreement, stability,
discrimination, montecarlo); the command handlers only pass their tables through here."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product

import pandas as pd

from kgrank.labels import model_label
from kgrank.studies.ir.figures import (
    AVERAGING_LABELS,
    EVALUATION_LABELS,
    evaluation_label,
    metric_label,
)
from kgrank.studies.ir.settings import MAIN_EVALUATIONS

COUNTS_CAPTION = (
    "The kgc-sparsity files as read, and after dropping triples whose entities or "
    "relations are unseen in training (rows_kept, rows_dropped; the unknown labels counted and, "
    "in the last column, named), with the labels of the judged files and the "
    "queries of each evaluation set against the trec_queries.txt files."
)
SPARSITY_VALUES_CAPTION = (
    "Macro MRR (best-ranked relevant answer) and its adjusted index AMRR of every system "
    "against the pooling depth d (FB-Test-S plus the pooled answers judged relevant at depth <= d). "
    "More relevant answers per query raise the chance that one ranks high; AMRR subtracts what a "
    "random ranking gets with the same answers."
)
# The systems table: column name -> (averaging, metric, value column of aggregate_items)
SYSTEMS_SHOWN = {
    "MRR micro": ("micro", "inverse_harmonic_mean_rank", "value"),
    "MRR macro (PyKEEN)": ("macro-pykeen", "inverse_harmonic_mean_rank", "value"),
    "MRR macro": ("macro", "inverse_harmonic_mean_rank", "value"),
    "AMRR macro": ("macro", "inverse_harmonic_mean_rank", "adjusted_index"),
    "Hits@10 macro": ("macro", "hits_at_10", "value"),
    "MAP@20": ("macro", "ap_at_20", "value"),
    "nDCG@20": ("macro", "ndcg_at_20", "value"),
}
BUDGET_KEYS = ("epochs", "published_epochs", "embedding_dim")
MONTECARLO_SHOWN = (
    "protocol",
    "dataset",
    "evaluation",
    "metric",
    "queries",
    "expectation",
    "simulated_mean",
    "z_mean",
    "variance_ratio",
    "passed",
)


def counts_table(counts: pd.DataFrame) -> pd.DataFrame:
    """The counts of kgc_sparsity's reading (file, quantity, value, names) as a table file x
    quantity: whole numbers, and blank where a quantity does not apply to a file; the last
    column names a file's entities and relations unknown to training (the first few; the
    counts table holds them all)."""
    from kgrank.studies.ir.kgc_sparsity import shown_names

    table = counts.pivot_table(index="file", columns="quantity", values="value", aggfunc="first", sort=False)
    table = table.apply(lambda column: column.map(lambda value: "" if value != value else f"{value:.0f}"))
    if "names" in counts.columns:
        named = counts[counts["quantity"].isin(["unknown_entities", "unknown_relations"])]
        unknown = named.groupby("file", sort=False)["names"].agg(
            lambda names: shown_names(",".join(name for name in names if isinstance(name, str)))
        )
        table["unknown_labels"] = unknown.reindex(table.index).fillna("")
    return table.reset_index()


def montecarlo_table(table: pd.DataFrame) -> pd.DataFrame:
    """The columns of the Monte Carlo check that the report shows."""
    return table[list(MONTECARLO_SHOWN)]


def montecarlo_caption(table: pd.DataFrame, replicates: int, alpha: float) -> str:
    failed = int((~table["passed"]).sum())
    return (
        f"Monte Carlo check of the macro moments (best-ranked relevant answer of each query; "
        f"{replicates} replicates drawn by random keys, not by the formula): z of the simulated mean "
        f"against the analytic expectation and the ratio of simulated to analytic variance, family-wise "
        f"alpha {alpha} with Bonferroni. {len(table) - failed} of {len(table)} checks pass."
    )


def systems_table(table: pd.DataFrame, systems: Sequence[str], budgets: pd.DataFrame) -> pd.DataFrame:
    """One row per main evaluation set and system with the columns of SYSTEMS_SHOWN (from
    aggregate_items' table) and the system's training budget (``budgets`` indexed by model)."""
    budget_keys = [key for key in BUDGET_KEYS if key in budgets.columns]
    # one row per protocol, evaluation, model, averaging and metric
    indexed = table.set_index(["protocol", "evaluation", "model", "averaging", "metric"])
    rows = []
    for protocol, evaluation in product(dict.fromkeys(table["protocol"]), MAIN_EVALUATIONS):
        for system in systems:
            row = {
                "protocol": protocol,
                "evaluation": EVALUATION_LABELS[evaluation],
                "model": model_label(system),
            }
            for name, (averaging, metric, column) in SYSTEMS_SHOWN.items():
                key = (protocol, evaluation, system, averaging, metric)
                row[name] = float(indexed[column].get(key, float("nan")))
            row.update({key: budgets.loc[system, key] for key in budget_keys if system in budgets.index})
            rows.append(row)
    return pd.DataFrame(rows)


def systems_caption(budget: str) -> str:
    """What the systems table and figure show, then ``budget`` (what was trained, how long)."""
    return (
        "Every system on the full test set (FB-Test-O), FB-Test-S and its relabelled version FB-Test-S-C, "
        "under two filtering protocols: paper (Zhou et al.: train and valid triples and the evaluated "
        "set's own answers removed, so test answers a set lacks stay candidates) and all-known (every "
        "known train/valid/test triple removed); both remove the query's other relevant answers from a "
        "micro rank and keep them in the macro run list. On FB-Test-O the two coincide. Micro: one "
        "value per relevant answer; macro: one per query, scored by its best-ranked relevant answer; "
        "macro (PyKEEN): the mean over queries of the per-answer mean, what PyKEEN's "
        "MacroRankBasedEvaluator computes. MAP@20 and nDCG@20 are trec_eval's map_cut_20 and ndcg_cut_20 "
        "(ir-measures, pytrec_eval) on the exported run files. AMRR: macro MRR adjusted for chance with "
        "the best-of-R expectation. " + budget
    )


def sparsity_table(agreement: pd.DataFrame) -> pd.DataFrame:
    """Tau of FB-Test-S vs FB-Test-S-C (raw values, whole sets) per averaging and metric, as
    is and with FB-Test-S-C at FB-Test-S's relation mix."""
    raw = agreement[agreement["variant"] == "raw"]
    whole = raw[(raw["category"].fillna("all") == "all") & (raw["side"].fillna("both") == "both")]
    keys = ["protocol", "averaging", "metric"]
    as_is = whole[whole["comparison"] == "sample vs pooled"].set_index(keys)
    mixed = whole[whole["comparison"] == "sample vs pooled, relation mix of sample"].set_index(keys)
    table = as_is[["tau", "p_value"]].join(
        mixed[["tau"]].rename(columns={"tau": "tau, S-C at the relation mix of S"})
    )
    table = table.reset_index()
    table["averaging"] = table["averaging"].map(AVERAGING_LABELS)
    table["metric"] = table["metric"].map(metric_label)
    return table.rename(columns={"tau": "tau, S vs S-C", "p_value": "p"})


def sparsity_caption(num_systems: int) -> str:
    return (
        f"Label sparsity: Kendall's tau-b between the rankings of {num_systems} systems on "
        "FB-Test-S and "
        "on FB-Test-S-C (the same queries with the TREC-pooled, human-judged answers added), with its "
        "p-value, and with FB-Test-S-C re-weighted per relation to FB-Test-S's relation mix (which "
        "separates the added labels from the changed mix), under the paper protocol (FB-Test-S's "
        "unsampled test answers are candidates) and the all-known protocol (they are filtered). "
        "The adjusted index and z-score give the same "
        "tau as the raw value by construction: within one evaluation set every system has the same "
        "expectation."
    )


def stability_caption(summary: pd.DataFrame) -> str:
    return (
        "Stability: Kendall's tau-b between the system ranking on the whole evaluation set and on "
        f"random subsets of its relevant answers (mean and 5th-95th percentile over "
        f"{int(summary['repetitions'].max())} seeded draws per share, the same draws under both "
        "protocols). Paper protocol: a discarded answer becomes an unlabelled candidate (it is no "
        "longer one of the evaluated set's answers); all-known: it stays filtered."
    )


def discrimination_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The discrimination summary with printed evaluation, averaging and metric names."""
    return summary.assign(
        evaluation=[
            evaluation_label(d, e) for d, e in zip(summary["dataset"], summary["evaluation"], strict=True)
        ],
        averaging=summary["averaging"].map(AVERAGING_LABELS),
        metric=summary["metric"].map(metric_label),
    ).drop(columns=["dataset", "alpha"])


def discrimination_caption(alpha: float) -> str:
    return (
        f"Discriminative power: system pairs whose paired two-sided t-test (scipy) gives p < {alpha}, "
        "before and after Holm's correction over the pairs of each row (statsmodels), per metric and "
        "averaging and filtering protocol; items are relevant answers (micro) or queries (macro)."
    )


def sample_vs_test_table(table: pd.DataFrame) -> pd.DataFrame:
    """protocols.sample_vs_test's table with printed names: one row per system, FB-Test-O,
    FB-Test-S and their difference per protocol side by side."""
    protocols = list(dict.fromkeys(table["protocol"]))
    wide = table.pivot_table(
        index="model", columns="protocol", values=["test", "sample", "sample_minus_test"], sort=False
    )
    columns = {}
    for protocol in protocols:
        columns[f"FB-Test-O ({protocol})"] = wide[("test", protocol)]
        columns[f"FB-Test-S ({protocol})"] = wide[("sample", protocol)]
        columns[f"S - O ({protocol})"] = wide[("sample_minus_test", protocol)]
    shown = pd.DataFrame(columns).reset_index()
    shown["model"] = shown["model"].map(model_label)
    return shown


def sample_vs_test_caption(table: pd.DataFrame) -> str:
    metric = metric_label(str(table["metric"].iloc[0])) if len(table) else "MRR"
    averaging = str(table["averaging"].iloc[0]) if len(table) else "micro"
    return (
        f"{averaging.capitalize()} {metric} of every system on FB-Test-O (the full test set) and FB-Test-S "
        "(its 1,023-triple sample) and the difference S - O, under the paper protocol (FB-Test-S's "
        "unsampled test answers are unlabelled candidates, as in Zhou et al.) and the all-known protocol "
        "(they are filtered). Zhou et al.'s tables give FB-Test-S 0.024 to 0.056 below FB-Test-O for "
        "all 13 of their systems; on FB-Test-O the protocols coincide."
    )


def tau_by_protocol_table(table: pd.DataFrame) -> pd.DataFrame:
    """protocols.tau_by_protocol's table with printed averaging and metric names."""
    return table.assign(
        averaging=table["averaging"].map(AVERAGING_LABELS), metric=table["metric"].map(metric_label)
    )


def tau_by_protocol_caption(num_systems: int) -> str:
    return (
        f"Kendall's tau-b between the rankings of {num_systems} systems on FB-Test-S and on FB-Test-S-C "
        "per averaging and metric (raw values), with its p-value, under the paper protocol (FB-Test-S's "
        "unsampled test answers are candidates; FB-Test-S-C's judged answers are its own) and the "
        "all-known protocol (every test answer filtered). Zhou et al. report -0.23 for micro MRR "
        "(13 systems, pooling depth 10)."
    )
