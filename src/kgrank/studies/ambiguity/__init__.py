"""Study `ambiguity` (Berrendorf, Faerman, Vermue & Tresp 2020, "On the Ambiguity of
Rank-Based Evaluation of Entity Alignment or Link Prediction Methods"): how far the rank
definitions differ and what each does to the metrics, how MR and Hits@k drift with the
number of candidates while AMRI does not, the paper's Table 1 regenerated, and which
differences between models are real.

Modules: ``variants`` (rank definitions, the constant and random scorers), ``drift``
(sampled candidates, slopes per decade), ``subsets`` (the entity-alignment protocol:
test subsets with their own entities as candidates; the one module that scores),
``table1``, ``pairwise``, ``inputs``, ``figures``; ``published_table1.tsv`` holds the
published values.
"""

from __future__ import annotations

import argparse

from kgrank.cli_options import (
    add_caption,
    add_dataset_dir,
    add_figure_paths,
    add_filter_splits,
    add_model_dir,
    add_quiet,
    add_seed,
    add_table_paths,
    add_threads,
    open_probability,
    positive_int,
    share,
)

SHOWN_IN_VARIANTS = (
    "arithmetic_mean_rank",
    "inverse_harmonic_mean_rank",
    "hits_at_10",
    "adjusted_arithmetic_mean_rank_index",
    "adjusted_inverse_harmonic_mean_rank",
    "adjusted_hits_at_10",
    "z_inverse_harmonic_mean_rank",
)
RANDOM_MARK = "†"


def _candidate_size(text: str) -> int | None:
    """An argparse type: a candidate-set size of at least 2, or `all`."""
    if text == "all":
        return None
    size = positive_int(text)
    if size < 2:
        raise argparse.ArgumentTypeError(
            f"{size} candidates leave nothing to rank against; give 2 or more, or all"
        )
    return size


def _random_like(rank_tables: dict, alpha: float) -> dict[tuple[str, str], bool]:
    from kgrank.studies.ambiguity.table1 import indistinguishable_from_random, model_row

    return {
        pair: indistinguishable_from_random(model_row(table)["z_mrr"], alpha)
        for pair, table in rank_tables.items()
    }


def _marked(model: str, flagged: bool) -> str:
    from kgrank.labels import model_label

    return model_label(model) + (f" {RANDOM_MARK}" if flagged else "")


def _random_note(alpha: float) -> str:
    from scipy import stats

    return (
        f"{RANDOM_MARK}: not distinguishable from random, |z-MRR| < {stats.norm.ppf(1 - alpha / 2):.2f} "
        f"(two-sided, alpha = {alpha:g})."
    )


def _variants(args: argparse.Namespace) -> None:
    from kgrank.io import write_report_table, write_table
    from kgrank.labels import dataset_label
    from kgrank.studies.ambiguity.figures import metric_label, plot_variants, scorer_label
    from kgrank.studies.ambiguity.inputs import read_pair_tables
    from kgrank.studies.ambiguity.variants import study_metrics, variants_table

    tables = read_pair_tables(args.ranks)
    metrics, ties = variants_table(tables, study_metrics(), args.seed)
    write_table(args.out, metrics)
    write_table(args.ties, ties)
    flagged = _random_like(tables, args.alpha)
    trained = ties["scorer"].isin({model for _, model in tables})
    named = ties.assign(
        dataset=ties["dataset"].map(dataset_label),
        scorer=[
            _marked(s, flagged.get((d, s), False)) if t else scorer_label(s)
            for d, s, t in zip(ties["dataset"], ties["scorer"], trained, strict=True)
        ],
    )
    write_report_table(
        named.drop(columns=["share_random_differs_from_realistic"]),
        args.ties_markdown,
        args.ties_latex,
        caption="Ties between the true answer and other candidates (filtered, both sides): share of tasks "
        "where the optimistic, realistic and pessimistic ranks differ (they all differ exactly when the "
        "true answer ties), and the size of the tie block (candidates scoring exactly as the true one, "
        "itself included) over the tied tasks. " + _random_note(args.alpha),
        label="tab:ambiguity-ties",
        floatfmt=".4g",
        markdown_caption=True,
    )
    both = metrics[(metrics["side"] == "both") & metrics["metric"].isin(SHOWN_IN_VARIANTS)]
    wide = both.pivot_table(
        index=["dataset", "scorer", "rank_type"], columns="metric", values="value", sort=False
    )
    wide = wide[[key for key in SHOWN_IN_VARIANTS if key in wide.columns]].reset_index()
    wide["scorer"] = [
        _marked(s, flagged[(d, s)]) if (d, s) in flagged else scorer_label(s)
        for d, s in zip(wide["dataset"], wide["scorer"], strict=True)
    ]
    wide["dataset"] = wide["dataset"].map(dataset_label)
    wide = wide.rename(columns={key: metric_label(key) for key in SHOWN_IN_VARIANTS})
    statement = constant_and_random_statement(metrics)
    write_report_table(
        wide,
        args.markdown,
        args.latex,
        caption=statement + " " + _random_note(args.alpha),
        label="tab:ambiguity-variants",
        floatfmt=".4g",
        markdown_caption=True,
    )
    print(statement)
    plot_variants(
        metrics,
        args.pdf,
        args.png,
        shown=(
            "inverse_harmonic_mean_rank",
            "adjusted_arithmetic_mean_rank_index",
            "adjusted_inverse_harmonic_mean_rank",
            "z_inverse_harmonic_mean_rank",
        ),
        caption=statement,
    )


def constant_and_random_statement(metrics) -> str:  # noqa: ANN001 - a pandas frame, imported lazily
    """What the constant and the random scorer get, from the computed table, and why the
    realistic rank is the one to report."""
    from kgrank.studies.ambiguity.variants import CONSTANT_SCORER, RANDOM_SCORER

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


def _subsets(args: argparse.Namespace) -> None:
    import numpy as np
    import torch

    from kgrank.candidates import known_answers
    from kgrank.io import write_table
    from kgrank.scoring import Scorer
    from kgrank.studies.ambiguity.subsets import subset_plan, subset_rank_table
    from kgrank.training import load_model

    torch.set_num_threads(args.threads)
    model, factories = load_model(args.model_dir, args.dataset_dir)
    scorer = Scorer(model)
    test = np.asarray(factories.testing.mapped_triples, dtype=np.int64)
    plan = subset_plan(test, factories.training.num_entities, args.fractions, args.replicates, args.seed)
    table = subset_rank_table(
        lambda batch, side: scorer(torch.as_tensor(batch), side),
        test,
        known_answers(factories, args.filter_splits),
        plan,
        batch_size=args.batch_size,
        progress=not args.quiet,
    )
    write_table(args.out, table)


def _drift(args: argparse.Namespace) -> None:
    import numpy as np
    import pandas as pd

    from kgrank.io import write_report_table, write_table
    from kgrank.labels import dataset_label
    from kgrank.studies.ambiguity.drift import sampled_drift, slope_table, subset_drift
    from kgrank.studies.ambiguity.figures import PROTOCOL_LABELS, metric_label
    from kgrank.studies.ambiguity.inputs import read_pair_tables
    from kgrank.studies.ambiguity.subsets import SUBSET_COLUMNS

    tables = read_pair_tables(args.ranks)
    subsets = read_pair_tables(args.subsets or [], SUBSET_COLUMNS)
    frames = []
    for (dataset, model), table in tables.items():
        frames.append(
            sampled_drift(table, args.sizes, args.replicates, args.seed).assign(dataset=dataset, model=model)
        )
    for (dataset, model), table in subsets.items():
        frames.append(subset_drift(table).assign(dataset=dataset, model=model))
    drift = pd.concat(frames, ignore_index=True)
    drift = drift[["dataset", "model", *[c for c in drift.columns if c not in ("dataset", "model")]]]
    write_table(args.out, drift)
    slopes = slope_table(drift, confidence=args.confidence, resamples=args.resamples, seed=args.seed)
    write_table(args.slopes, slopes)
    flagged = _random_like(tables, args.alpha)
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
        _marked(m, flagged.get((d, m), False)) for d, m in zip(wide["dataset"], wide["model"], strict=True)
    ]
    wide["dataset"] = wide["dataset"].map(dataset_label)
    wide = wide.rename(columns={key: metric_label(key) for key in drift["metric"].unique()})
    defined = slopes.dropna(subset=["slope_per_decade"])
    counts = defined.groupby(["protocol", "metric"], sort=False)["flat"].agg(["sum", "size"])
    summary = "; ".join(
        f"{protocol}: "
        + ", ".join(f"{metric_label(key)} {row['sum']}/{row['size']}" for key, row in group.iterrows())
        for protocol, group in counts.reset_index(level=0).groupby("protocol", sort=False)
    )
    write_report_table(
        wide,
        args.markdown,
        args.latex,
        caption="Drift with the candidate-set size: least-squares slope of each metric (realistic ranks, "
        "both sides) per decade of the mean number of candidates, with a "
        f"{args.confidence:.0%} percentile bootstrap interval over the (size, seed) points "
        f"({args.resamples} resamples); 'flat' where the interval holds 0. Protocols: "
        + "; ".join(f"{key}: {text}" for key, text in PROTOCOL_LABELS.items())
        + f". Flat pairs of those with a slope: {summary}. "
        + _random_note(args.alpha),
        label="tab:ambiguity-drift",
        floatfmt=".3g",
        markdown_caption=True,
    )
    print(summary)


def _drift_figure(args: argparse.Namespace) -> None:
    from kgrank.io import read_tables
    from kgrank.studies.ambiguity.drift import DRIFT_COLUMNS
    from kgrank.studies.ambiguity.figures import plot_drift

    plot_drift(read_tables([args.drift], DRIFT_COLUMNS), args.pdf, args.png, caption=args.caption)


def _table1(args: argparse.Namespace) -> None:
    from kgrank.io import read_stats, write_report_table, write_table
    from kgrank.labels import dataset_label
    from kgrank.studies.ambiguity.inputs import read_pair_tables
    from kgrank.studies.ambiguity.table1 import published_table1_path, read_published, table1

    published_path = args.published or published_table1_path()
    stats = read_stats(args.stats) if args.stats else None
    entities = dict(zip(stats["dataset"], stats["entities"], strict=True)) if stats is not None else {}
    table = table1(read_published(published_path), read_pair_tables(args.ranks), entities, alpha=args.alpha)
    write_table(args.out, table)
    printed = table.assign(
        dataset=table["dataset"].map(dataset_label),
        model=[
            _marked(m, bool(flag)) if source == "kgrank" else m
            for m, flag, source in zip(
                table["model"], table["random_like"].fillna(False), table["source"], strict=True
            )
        ],
        # counts as whole numbers, not in the table's 4-digit float format
        **{
            column: [f"{int(count):,}" if count == count else "" for count in table[column]]
            for column in ("entities_published", "entities")
        },
    ).drop(columns=["random_like"])
    write_report_table(
        printed,
        args.markdown,
        args.latex,
        caption="Table 1 of Berrendorf et al. (2020) regenerated: AMRI = 1 - (MR - 1)/(E[MR] - 1) of the "
        "published filtered mean ranks, with E[MR] from the full entity count N (every task ranks all "
        "N entities: E[MR] = (N + 1)/2) and from the per-task filtered candidate counts N_i of this run's "
        "rank tables (E[MR] = mean (N_i + 1)/2; empty where the dataset is not in this run), and their "
        "difference, the effect of filtering alone: both use the entities of our prepared dataset "
        "(`entities`: those seen in training). `amri_published_count` uses the paper's entity count "
        "(`entities_published`) instead. kgrank's models below (realistic ranks, both sides). "
        + _random_note(args.alpha),
        label="tab:ambiguity-table1",
        floatfmt=".4g",
        markdown_caption=True,
    )


def _pairwise(args: argparse.Namespace) -> None:
    from kgrank.io import write_report_table, write_table
    from kgrank.labels import dataset_label
    from kgrank.studies.ambiguity.figures import plot_pairwise
    from kgrank.studies.ambiguity.inputs import read_pair_tables
    from kgrank.studies.ambiguity.pairwise import REPORTED_COLUMNS, pairwise_table

    tables = read_pair_tables(args.ranks)
    table = pairwise_table(
        tables, alpha=args.alpha, confidence=args.confidence, resamples=args.resamples, seed=args.seed
    )
    write_table(args.out, table)
    flagged = _random_like(tables, args.alpha)
    printed = table.assign(
        dataset=table["dataset"].map(dataset_label),
        first=[_marked(m, flagged[(d, m)]) for d, m in zip(table["dataset"], table["first"], strict=True)],
        second=[_marked(m, flagged[(d, m)]) for d, m in zip(table["dataset"], table["second"], strict=True)],
    )[list(REPORTED_COLUMNS)]
    caption = (
        "Pairwise model comparisons per dataset on per-task reciprocal ranks (realistic, both sides): MRR "
        f"and AMRR difference (first - second) with {args.confidence:.0%} paired percentile bootstrap "
        f"intervals ({args.resamples} resamples), Wilcoxon signed-rank and paired t p-values "
        f"Holm-corrected over all {len(table)} comparisons, significant at alpha = {args.alpha:g}. "
        + _random_note(args.alpha)
    )
    write_report_table(
        printed,
        args.markdown,
        args.latex,
        caption=caption,
        label="tab:ambiguity-pairwise",
        floatfmt=".3g",
        markdown_caption=True,
    )
    significant = int(table["wilcoxon_significant"].sum()) if len(table) else 0
    print(f"{significant} of {len(table)} pairs differ (Holm-corrected Wilcoxon, alpha {args.alpha:g})")
    plot_pairwise(table, flagged, args.pdf, args.png, caption=caption)


def _add_ranks(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--ranks", nargs="+", required=True, help="rank tables <dataset>/<model>.parquet of the rank stage"
    )


def _add_alpha(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--alpha",
        type=open_probability,
        default=0.05,
        help="level of the tests and of the random-model check",
    )


def _add_bootstrap(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--confidence", type=open_probability, default=0.95, help="bootstrap confidence level"
    )
    command.add_argument("--resamples", type=positive_int, default=2000, help="bootstrap resamples")


def add_commands(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser(
        "ambiguity-variants", help="rank definitions: ties, and every metric under each definition"
    )
    _add_ranks(command)
    add_seed(command, "the baseline scorers")
    _add_alpha(command)
    command.add_argument("--out", required=True, help="tidy metrics TSV")
    command.add_argument("--ties", required=True, help="tie statistics TSV")
    add_table_paths(command)
    add_table_paths(command, prefix="ties-")
    add_figure_paths(command)
    command.set_defaults(handler=_variants)

    command = commands.add_parser(
        "ambiguity-subsets", help="ranks on random test subsets, candidates restricted to their entities"
    )
    add_dataset_dir(command)
    add_model_dir(command)
    command.add_argument("--out", required=True, help="subset rank table (.parquet)")
    command.add_argument(
        "--fractions",
        type=share,
        nargs="+",
        default=[0.1, 0.25, 0.5, 1.0],
        help="shares of the test triples",
    )
    command.add_argument("--replicates", type=positive_int, default=5, help="random subsets per fraction")
    add_seed(command, "the subsets")
    command.add_argument("--batch-size", type=positive_int, default=256, help="test triples scored at once")
    add_threads(command)
    add_filter_splits(command)
    add_quiet(command)
    command.set_defaults(handler=_subsets)

    command = commands.add_parser(
        "ambiguity-drift", help="metrics against the candidate-set size, and their slopes per decade"
    )
    _add_ranks(command)
    command.add_argument("--subsets", nargs="*", default=[], help="tables of ambiguity-subsets")
    command.add_argument(
        "--sizes",
        type=_candidate_size,
        nargs="+",
        default=[10, 30, 100, 300, 1000, None],
        help="candidates per task (the true one included), or all",
    )
    command.add_argument("--replicates", type=positive_int, default=5, help="seeds per sampled size")
    add_seed(command, "the sampled candidates and the bootstrap")
    _add_bootstrap(command)
    _add_alpha(command)
    command.add_argument("--out", required=True, help="drift TSV")
    command.add_argument("--slopes", required=True, help="slopes TSV")
    add_table_paths(command)
    command.set_defaults(handler=_drift)

    command = commands.add_parser("ambiguity-drift-figure", help="the drift figure")
    command.add_argument("--drift", required=True, help="drift TSV of ambiguity-drift")
    add_caption(command)
    add_figure_paths(command)
    command.set_defaults(handler=_drift_figure)

    command = commands.add_parser("ambiguity-table1", help="Table 1 of Berrendorf et al. (2020) regenerated")
    command.add_argument("--published", help="published mean ranks (default: the study's own TSV)")
    _add_ranks(command)
    command.add_argument("--stats", nargs="*", default=[], help="stats.json of the datasets (entity counts)")
    _add_alpha(command)
    command.add_argument("--out", required=True, help="result TSV")
    add_table_paths(command)
    command.set_defaults(handler=_table1)

    command = commands.add_parser("ambiguity-pairwise", help="which differences between models are real")
    _add_ranks(command)
    add_seed(command, "the bootstrap")
    _add_alpha(command)
    _add_bootstrap(command)
    command.add_argument("--out", required=True, help="result TSV")
    add_table_paths(command)
    add_figure_paths(command)
    command.set_defaults(handler=_pairwise)
