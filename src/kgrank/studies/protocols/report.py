"""The study's report tables and captions: each function shapes an analysis table into
the rows and columns the Markdown/LaTeX table shows, or writes the prose under a table or
figure. The analyses are elsewhere (``weighted``); the handlers pass their tables here."""

from __future__ import annotations

import pandas as pd

from kgrank.labels import dataset_label, model_label

# What the report and the figure show of the weighted table: filtered realistic ranks,
# both sides together (the rank definition the core's tables report by default)
REPORTED_SIDE = "both"
REPORTED_RANK_TYPE = "realistic"
SCHEME_LABELS = {
    "negatives": "weights N_i − 1 (Tiwari et al.)",
    "relation": "relation-balanced weights",
    "uniform": "equal weights (GMR)",
}
# The weighted table's keys shown, and their printed names
WEIGHTED_SHOWN = {
    "weighted_geometric_mean_rank": "WGMR",
    "inverse_weighted_geometric_mean_rank": "IWGMR",
    "adjusted_weighted_geometric_mean_rank_index": "AWGMRI",
    "z_weighted_geometric_mean_rank": "z-WGMR",
}
EXPECTATION_COLUMN = "E[WGMR]"


def scheme_label(scheme: str) -> str:
    return SCHEME_LABELS.get(scheme, scheme)


def weighted_report(weighted: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, model, scheme): WGMR with its expectation under the random
    model, IWGMR, the adjusted index and the z-score (realistic ranks, both sides)."""
    shown = weighted[
        (weighted["side"] == REPORTED_SIDE)
        & (weighted["rank_type"] == REPORTED_RANK_TYPE)
        & weighted["metric"].isin(WEIGHTED_SHOWN)
    ]
    order = list(dict.fromkeys(zip(shown["dataset"], shown["model"], shown["scheme"], strict=True)))
    wide = shown.pivot_table(
        index=["dataset", "model", "scheme"], columns="metric", values="value", sort=False
    )
    expectation = shown[shown["metric"] == "weighted_geometric_mean_rank"].set_index(
        ["dataset", "model", "scheme"]
    )["expectation"]
    wide = wide.reindex(order)
    table = pd.DataFrame(
        {
            "dataset": [dataset_label(dataset) for dataset, _, _ in order],
            "model": [model_label(model) for _, model, _ in order],
            "weights": [scheme_label(scheme) for _, _, scheme in order],
            "WGMR": wide["weighted_geometric_mean_rank"].to_numpy(),
            EXPECTATION_COLUMN: expectation.reindex(order).to_numpy(),
        }
    )
    for key in ("inverse_weighted_geometric_mean_rank", "adjusted_weighted_geometric_mean_rank_index"):
        table[WEIGHTED_SHOWN[key]] = wide[key].to_numpy()
    table["z-WGMR"] = wide["z_weighted_geometric_mean_rank"].to_numpy()
    return table


def weighted_caption(num_pairs: int) -> str:
    return (
        f"Weighted geometric mean rank of {num_pairs} (dataset, model) pair(s), filtered realistic ranks, "
        "head and tail tasks together, under each weighting: N_i − 1 per task (the number of negatives, "
        "as in Tiwari et al.'s code), every relation the same total weight, and equal weights (the GMR). "
        "E[WGMR] is the exact expectation under the random model (ranks uniform on 1..N_i); AWGMRI = "
        "(WGMR − E)/(1 − E) is 0 for random and 1 for perfect, z-WGMR = (WGMR − E)/sqrt(Var)."
    )


def check_report(check: pd.DataFrame) -> pd.DataFrame:
    """The Monte Carlo check as the report shows it, with the authors' plug-in value."""
    metric = check["metric"].map(
        {
            "weighted_geometric_mean_rank": "WGMR",
            "inverse_weighted_geometric_mean_rank": "IWGMR",
        }
    )
    return pd.DataFrame(
        {
            "dataset": check["dataset"].map(dataset_label),
            "weights": check["scheme"].map(scheme_label),
            "metric": metric.fillna(check["metric"]),
            "tasks": check["tasks"],
            "E (exact)": check["expectation"],
            "simulated mean": check["simulated_mean"],
            "z mean": check["z_mean"],
            "Var ratio": check["variance_ratio"],
            "z Var": check["z_variance"],
            "passed": check["passed"].map({True: "yes", False: "NO"}),
            "plug-in E (Tiwari et al.)": check["plugin_expectation"],
            "plug-in excess %": 100.0 * check["plugin_excess"],
        }
    )


def check_summary(check: pd.DataFrame) -> str:
    """One sentence: how many tests pass, and the plug-in value's largest overstatement."""
    passed = int(check["passed"].sum())
    excess = check.dropna(subset=["plugin_excess"])
    worst = excess.loc[excess["plugin_excess"].idxmax()] if len(excess) else None
    sentence = (
        f"{passed} of {len(check)} moment checks pass (Bonferroni, family-wise alpha = "
        f"{check['familywise_alpha'].iloc[0]:g}, {int(check['replicates'].iloc[0])} replicates each)."
    )
    if worst is not None:
        sentence += (
            f" The plug-in 'expected' WGMR (the WGMR of the expected ranks (N_i + 1)/2) overstates E[WGMR] "
            f"by up to {100 * worst['plugin_excess']:.1f} % ({dataset_label(worst['dataset'])}, "
            f"{scheme_label(worst['scheme'])})."
        )
    return sentence


def check_caption(check: pd.DataFrame) -> str:
    return (
        "Monte Carlo check of the exact E and Var of WGMR and IWGMR on each dataset's real candidate "
        "counts (every test task, both sides), per weighting: z of the simulated mean, ratio of the "
        "simulated to the exact variance and its z. " + check_summary(check)
    )
