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
    for key in list(WEIGHTED_SHOWN)[1:]:  # IWGMR, AWGMRI, z-WGMR after WGMR and its expectation
        table[WEIGHTED_SHOWN[key]] = wide[key].to_numpy()
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
    return pd.DataFrame(
        {
            "dataset": check["dataset"].map(dataset_label),
            "weights": check["scheme"].map(scheme_label),
            "metric": check["metric"].map(WEIGHTED_SHOWN).fillna(check["metric"]),
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


# --- part 1: sampled negatives --------------------------------------------------------------

SAMPLED_METRIC_LABELS = {"inverse_harmonic_mean_rank": "MRR", "hits_at_10": "Hits@10"}
ESTIMATOR_LABELS = {
    "naive": "naive (sampled metric)",
    "rescaled": "rescaled rank",
    "posterior-rank": "posterior mean rank",
    "corrected": "corrected (Krichene & Rendle)",
    "adjusted-index": "adjusted index (sampled vs full)",
}
VARIANT_LABELS = {"independent": "independent draws", "fixed-set": "fixed set per query"}


def estimator_label(estimator: str) -> str:
    return ESTIMATOR_LABELS.get(estimator, estimator)


def _skip_reason(note: str) -> str:
    if note.startswith("skipped: k ="):
        return "skipped: every task keeps all its negatives"
    if note.startswith("corrected estimator skipped"):
        return note.replace("corrected estimator skipped", "skipped")
    return ""


def sampled_report(estimates: pd.DataFrame, agreement: pd.DataFrame, limits: str) -> pd.DataFrame:
    """One row per (dataset, k, protocol, estimator): per metric the bias and RMSE of the
    estimate (mean over the dataset's systems; for the adjusted index: of the sampled index
    against the full one) and the share of system pairs ordered as the full ranking orders
    them (mean over pairs and draws), the share of tasks that draw, why a row is empty, and
    the profile's ``limits`` (where the laptop and paper configurations differ)."""
    keys = ["dataset", "num_samples", "variant", "estimator"]
    order = list(dict.fromkeys(map(tuple, estimates[keys].itertuples(index=False, name=None))))
    means = estimates.groupby([*keys, "metric"], sort=False)[["bias", "rmse"]].mean()
    shares = estimates.groupby(keys, sort=False)["sampled_share"].mean()
    notes = estimates.groupby(keys, sort=False)["note"].first()
    agreed = agreement.set_index([*keys, "metric"])
    rows = []
    for key in order:
        dataset, num_samples, variant, estimator = key
        row = {
            "dataset": dataset_label(dataset),
            "k": num_samples,
            "protocol": VARIANT_LABELS.get(variant, variant),
            "estimator": estimator_label(estimator),
            "tasks drawing %": 100.0 * shares[key],
        }
        for metric, label in SAMPLED_METRIC_LABELS.items():
            cell = means.loc[(*key, metric)] if (*key, metric) in means.index else None
            row[f"{label} bias"] = cell["bias"] if cell is not None else float("nan")
            row[f"{label} RMSE"] = cell["rmse"] if cell is not None else float("nan")
        for metric, label in SAMPLED_METRIC_LABELS.items():
            index = (*key, metric)
            row[f"{label} pairs ordered"] = (
                agreed.loc[index, "agreement"] if index in agreed.index else float("nan")
            )
        row["system pairs"] = (
            int(agreed.loc[(*key, "inverse_harmonic_mean_rank"), "system_pairs"])
            if (*key, "inverse_harmonic_mean_rank") in agreed.index
            else 0
        )
        row["note"] = _skip_reason(str(notes[key]))
        row["settings"] = limits
        rows.append(row)
    return pd.DataFrame(rows)


def sampled_caption(estimates: pd.DataFrame, profile: str, limits: str) -> str:
    pairs = estimates[["dataset", "model"]].drop_duplicates()
    return (
        f"Sampled negatives (Krichene & Rendle 2020) on {len(pairs)} (dataset, model) pair(s), filtered "
        "optimistic ranks, head and tail tasks together. For each k every task ranks its true answer "
        "against min(k, N_i − 1) of its N_i − 1 negatives drawn without replacement: the number drawn "
        "above it is hypergeometric, so the bias, standard deviation and RMSE of each estimator of the "
        "full MRR and Hits@10 are exact sums over that law (no simulation), as a mean over the dataset's "
        "systems. 'Adjusted index' compares the sampled adjusted index (the sampled metric adjusted by "
        "its expectation on the k_i + 1 sampled candidates, over replicate draws) with the full adjusted "
        "index. 'Pairs ordered': the share of draws in which an estimator orders two systems as the full "
        "ranking does, mean over system pairs; independent draws give each system its own negatives, "
        "the fixed set per query (OGB's protocol) gives every system the same ones (one draw, from the "
        "rank engine). A k with k ≥ N_i − 1 for every task of a dataset is skipped. "
        f"Profile: {profile}; {limits}."
    )


# --- part 2: ties -----------------------------------------------------------------------------

SCORER_LABELS = {
    "stage": "rank stage (every task)",
    "model": "model scores",
    "quantised": "quantised scores",
    "constant": "constant score",
}
TIES_MEASURE = "nDCG@20"


def scorer_label(scorer: str, decimals: str = "") -> str:
    label = SCORER_LABELS.get(scorer, scorer)
    return f"{label} ({decimals})" if scorer == "quantised" and decimals else label


def _value(cell: pd.DataFrame, **keys: str) -> float:
    """The one value of ``cell`` at ``keys`` (NaN where the table has none)."""
    mask = pd.Series(True, index=cell.index)
    for column, value in keys.items():
        mask &= cell[column] == value
    values = cell.loc[mask, "value"]
    return float(values.iloc[0]) if len(values) else float("nan")


def ties_report(ties: pd.DataFrame, widths: pd.DataFrame, limits: str) -> pd.DataFrame:
    """One row per evaluated pair from its rank table (scorer 'rank stage': width and tied
    share of every task), then per trained pair and scorer of the scoring pass: tied share and
    MRR of realistic ranks under exact equality and under the largest tolerance listed,
    the MRR gap optimistic − pessimistic, and nDCG@20: trec_eval's range over the renamings,
    the tie-neutral value and the share of queries whose trec_eval value changed."""
    rows = [
        {
            "dataset": dataset_label(record.dataset),
            "model": model_label(record.model),
            "scorer": scorer_label("stage"),
            "tasks": int(record.num_tasks),
            "mean width": record.mean_width,
            "tied %": 100.0 * record.tied_share,
        }
        for record in widths[widths["side"] == "both"].itertuples(index=False)
    ]
    tolerances = list(dict.fromkeys(ties["tolerance"]))
    loosest = tolerances[-1]
    keys = list(dict.fromkeys(zip(ties["dataset"], ties["model"], ties["scorer"], strict=True)))
    for dataset, model, scorer in keys:
        cell = ties[(ties["dataset"] == dataset) & (ties["model"] == model) & (ties["scorer"] == scorer)]
        exact = cell[cell["tolerance"] == "exact"]
        loose = cell[cell["tolerance"] == loosest]
        width = exact[exact["measure"] == "rank_width"]
        rows.append(
            {
                "dataset": dataset_label(dataset),
                "model": model_label(model),
                "scorer": scorer_label(scorer),
                "tasks": int(width["tasks"].iloc[0]) if len(width) else 0,
                "mean width": _value(exact, measure="rank_width", statistic="mean"),
                "tied %": 100.0 * _value(exact, measure="rank_width", statistic="tied_share"),
                f"tied % ({loosest})": 100.0 * _value(loose, measure="rank_width", statistic="tied_share"),
                "MRR realistic": _value(exact, measure="MRR", statistic="realistic"),
                f"MRR realistic ({loosest})": _value(loose, measure="MRR", statistic="realistic"),
                "MRR opt − pess": _value(exact, measure="MRR", statistic="optimistic")
                - _value(exact, measure="MRR", statistic="pessimistic"),
                "queries": int(exact.loc[exact["measure"] == TIES_MEASURE, "tasks"].iloc[0])
                if (exact["measure"] == TIES_MEASURE).any()
                else 0,
                f"{TIES_MEASURE} trec_eval min": _value(exact, measure=TIES_MEASURE, statistic="minimum"),
                f"{TIES_MEASURE} trec_eval max": _value(exact, measure=TIES_MEASURE, statistic="maximum"),
                f"{TIES_MEASURE} tie-neutral": _value(exact, measure=TIES_MEASURE, statistic="tie_neutral"),
                "queries changed %": 100.0 * _value(exact, measure=TIES_MEASURE, statistic="changed_share"),
            }
        )
    table = pd.DataFrame(rows)
    table["settings"] = limits
    return table


def ties_summary(ties: pd.DataFrame) -> str:
    """The closing note: how often trec_eval's tie order changed a system's nDCG@20."""
    spread = ties[(ties["measure"] == TIES_MEASURE) & (ties["statistic"] == "spread")]
    changed = ties[(ties["measure"] == TIES_MEASURE) & (ties["statistic"] == "changed_share")]
    if spread.empty:
        return f"No {TIES_MEASURE} rows: list it in studies.protocols.ties.measures."
    parts = []
    for scorer in dict.fromkeys(spread["scorer"]):
        systems = spread[spread["scorer"] == scorer]
        shares = changed[changed["scorer"] == scorer]["value"]
        parts.append(
            f"{scorer_label(scorer)}: {int((systems['value'] > 0).sum())} of {len(systems)} systems, "
            f"largest spread {systems['value'].max():.3g}, mean share of queries changed "
            f"{100 * shares.mean():.1f} %"
        )
    return (
        f"Renaming the entities changed trec_eval's system-level {TIES_MEASURE} (its tie order) for "
        + "; ".join(parts)
        + ". The tie-neutral values do not depend on the names."
    )


def ties_caption(ties: pd.DataFrame, profile: str, limits: str) -> str:
    tolerances = ", ".join(dict.fromkeys(ties["tolerance"]))
    return (
        "Tied scores (McSherry & Najork 2008). 'Rank stage' rows: the rank width pessimistic − optimistic "
        "of every test task of every evaluated pair (external systems included) and the share with "
        "width > 0. The other rows rescore the trained pairs' test tasks with the model's scores, the same "
        "scores rounded (quantised) and a constant score, and rank the true answer among its filtered "
        f"candidates with a tie tolerance ({tolerances}; math.isclose semantics: |a − b| ≤ max(abs, "
        "rel·max(|a|, |b|))). Each task is also an IR query whose true answer is its one relevant document: "
        "the run holds the top 20 candidates with their scores, extended to the end of the tie group at the "
        f"cut-off; trec_eval's {TIES_MEASURE} (ir-measures/pytrec_eval, ties broken by document id) over "
        "random renamings of the entities (min and max) against the tie-neutral expectation over random "
        f"orders of each tie group, and the share of queries whose trec_eval value changed. "
        f"{ties_summary(ties)} Profile: {profile}; {limits}."
    )
