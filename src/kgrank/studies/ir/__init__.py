"""Study `ir` (Zhou, Shi, Li, Liu & Ding 2022, "Re-thinking Knowledge Graph Completion
Evaluation from an Information Retrieval Perspective"): micro vs macro metrics, MAP@20 and
nDCG@20 as trec_eval computes them, label sparsity and TREC pooling (FB-Test-S against its
relabelled version FB-Test-S-C), the stability of system rankings under test subsampling,
discriminative power, and the macro metrics' expectation under the random model, which the
paper does not have.

Modules: ``kgc_sparsity`` (the kgc-sparsity files through the dataset's ids), ``evaluation``
(one scoring pass per system: the item table, run lists and qrels), ``trec`` (TREC files and
ir-measures), ``aggregate``, ``agreement`` (label sparsity), ``stability``,
``discrimination``, ``montecarlo`` (the macro moments against simulation), ``figures``.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from kgrank.cli_options import (
    add_caption,
    add_dataset_dir,
    add_figure_paths,
    add_filter_splits,
    add_hits,
    add_model_dir,
    add_quiet,
    add_seed,
    add_table_paths,
    add_threads,
    int_at_least,
    open_probability,
    positive_int,
    share,
)
from kgrank.errors import KgrankInputError

if TYPE_CHECKING:
    import pandas as pd


def _queries(args: argparse.Namespace) -> None:
    from pathlib import Path

    from kgrank.datasets import load_factories
    from kgrank.io import write_report_table, write_table
    from kgrank.studies.ir.evaluation import entity_labels, plan_items
    from kgrank.studies.ir.kgc_sparsity import read_kgc_sparsity, split_evaluation
    from kgrank.studies.ir.trec import write_qrels

    if args.kgc_dir is not None:
        missing = [
            option
            for option, value in (
                ("--raw-test", args.raw_test),
                ("--counts", args.counts),
                ("--relations", args.relations),
                ("--markdown", args.markdown),
                ("--latex", args.latex),
            )
            if value is None
        ]
        if missing:
            raise KgrankInputError(f"--kgc-dir needs {', '.join(missing)} too; add them")
        read = read_kgc_sparsity(args.kgc_dir, args.dataset_dir, args.raw_test)
        evaluations = read.evaluations
        write_table(args.counts, read.counts)
        write_table(args.relations, read.relations)
        counts = read.counts.pivot_table(
            index="file", columns="quantity", values="value", aggfunc="first", sort=False
        )
        # whole numbers, and blank where a quantity does not apply to a file
        counts = counts.apply(
            lambda column: column.map(lambda value: "" if value != value else f"{value:.0f}")
        )
        write_report_table(
            counts.reset_index(),
            args.markdown,
            args.latex,
            caption="The kgc-sparsity files as read, and after dropping triples whose entities or "
            "relations are unseen in training (rows_kept), with the labels of the judged files and the "
            "queries of each evaluation set against the trec_queries.txt files.",
            label="tab:ir-counts",
            floatfmt=".0f",
            markdown_caption=True,
        )
    else:
        evaluations = split_evaluation(args.dataset_dir)
    write_table(args.out, evaluations)
    labels = entity_labels(load_factories(args.dataset_dir))
    items = plan_items(evaluations)
    out_dir = Path(args.qrels_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for evaluation in args.export:
        chosen = items[items["evaluation"] == evaluation]
        qrels = chosen[["query", "side", "answer"]].rename(columns={"answer": "entity"})
        write_qrels(out_dir / f"{evaluation}.qrels", qrels, labels)


def _evaluate(args: argparse.Namespace) -> None:
    from pathlib import Path

    import pandas as pd
    import torch

    from kgrank.config import budget_columns
    from kgrank.io import read_json, read_parquet_table, write_table
    from kgrank.metrics import default_metrics, evaluate_rank_table
    from kgrank.studies.ir.evaluation import entity_labels, evaluate_model, micro_rank_table
    from kgrank.studies.ir.kgc_sparsity import EVALUATION_COLUMNS
    from kgrank.studies.ir.trec import write_run
    from kgrank.training import load_model

    torch.set_num_threads(args.threads)
    evaluations = read_parquet_table(args.evaluations, EVALUATION_COLUMNS, "kgrank ir-queries")
    model, factories = load_model(args.model_dir, args.dataset_dir)
    result = evaluate_model(
        model,
        factories,
        evaluations,
        filter_splits=args.filter_splits,
        hits=args.hits,
        run_depth=args.run_depth,
        export=args.export,
        batch_size=args.batch_size,
        progress=not args.quiet,
    )
    write_table(args.items, result.items)
    metrics = default_metrics(args.hits)
    frames = []
    for evaluation in args.export:
        table = evaluate_rank_table(micro_rank_table(result.micro, evaluation, args.seed), metrics)
        frames.append(table.assign(evaluation=evaluation))
    micro = pd.concat(frames, ignore_index=True)
    resolved = read_json(Path(args.model_dir) / "config.json")
    micro.insert(0, "evaluation", micro.pop("evaluation"))
    micro.insert(0, "model", args.model)
    micro.insert(0, "dataset", args.dataset)
    # the training budget travels with every number it shaped
    write_table(args.metrics, micro.assign(**budget_columns(resolved)))
    labels = entity_labels(factories)
    runs_dir = Path(args.runs_dir)
    runs_dir.mkdir(parents=True, exist_ok=True)
    for evaluation in args.export:
        run = result.runs[result.runs["evaluation"] == evaluation]
        write_run(runs_dir / f"{evaluation}.run.gz", run, labels, tag=f"kgrank-{args.model}")


def _read_item_tables(paths: list[str], names: list[str], option: str) -> dict[tuple[str, str], pd.DataFrame]:
    """Item tables keyed by (dataset, model): ``names`` are `dataset/model` for --pairs, bare
    model names (dataset '') for --systems, one per path."""
    from kgrank.io import read_parquet_table
    from kgrank.studies.ir.evaluation import ITEM_ID_COLUMNS

    if len(paths) != len(names):
        raise KgrankInputError(f"{len(paths)} item tables but {len(names)} {option}; name one per table")
    tables = {}
    for path, name in zip(paths, names, strict=True):
        dataset, _, model = name.rpartition("/")
        if option == "--pairs" and not dataset:
            raise KgrankInputError(f"--pairs {name}: not dataset/model; write it as fb15k237/transe")
        tables[(dataset, model)] = read_parquet_table(path, list(ITEM_ID_COLUMNS), "kgrank ir-evaluate")
    return tables


def _pair_items(paths: list[str], pairs: list[str]) -> dict[tuple[str, str], pd.DataFrame]:
    """The item tables by (dataset, model), ``pairs`` naming each path's `dataset/model`."""
    return _read_item_tables(paths, pairs, "--pairs")


def _dataset_evaluations(specs: list[str], datasets: set[str]) -> list[tuple[str, str]]:
    """`dataset:evaluation` arguments as pairs, each dataset one of those given tables."""
    parsed = []
    for spec in specs:
        dataset, _, evaluation = spec.partition(":")
        if not evaluation or dataset not in datasets:
            raise KgrankInputError(
                f"--evaluations {spec}: not dataset:evaluation with a dataset of --pairs "
                f"({', '.join(sorted(datasets))}); write it as fb15k237:pooled"
            )
        parsed.append((dataset, evaluation))
    return parsed


def _montecarlo(args: argparse.Namespace) -> None:
    import pandas as pd

    from kgrank.io import write_report_table, write_table
    from kgrank.studies.ir.montecarlo import check_macro_moments

    tables = _pair_items(args.items, args.pairs)
    by_dataset = {dataset: table for (dataset, _), table in tables.items()}
    frames = []
    for offset, (dataset, evaluation) in enumerate(_dataset_evaluations(args.evaluations, set(by_dataset))):
        items = by_dataset[dataset]
        macro = items[(items["evaluation"] == evaluation) & (items["averaging"] == "macro")]
        if macro.empty:
            raise KgrankInputError(
                f"--evaluations {dataset}:{evaluation}: no macro items in its table; name an evaluation "
                f"it holds ({', '.join(dict.fromkeys(items['evaluation']))})"
            )
        num_relevant = macro["num_relevant"].to_numpy()
        table = check_macro_moments(
            macro["num_candidates"].to_numpy() - num_relevant,
            num_relevant,
            args.hits,
            replicates=args.replicates,
            seed=args.seed + offset,
            alpha=args.alpha,
            progress=not args.quiet,
        )
        frames.append(table.assign(dataset=dataset, evaluation=evaluation))
    table = pd.concat(frames, ignore_index=True)
    table = table[
        ["dataset", "evaluation", *[c for c in table.columns if c not in ("dataset", "evaluation")]]
    ]
    write_table(args.out, table)
    shown = table[
        ["dataset", "evaluation", "metric", "queries", "expectation", "simulated_mean", "z_mean"]
        + ["variance_ratio", "passed"]
    ]
    failed = int((~table["passed"]).sum())
    write_report_table(
        shown,
        args.markdown,
        args.latex,
        caption=f"Monte Carlo check of the macro moments (best-ranked relevant answer of each query; "
        f"{args.replicates} replicates drawn by random keys, not by the formula): z of the simulated mean "
        f"against the analytic expectation and the ratio of simulated to analytic variance, family-wise "
        f"alpha {args.alpha} with Bonferroni. {len(table) - failed} of {len(table)} checks pass.",
        label="tab:ir-montecarlo",
        floatfmt=".4g",
        markdown_caption=True,
    )
    print(f"macro moments: {len(table) - failed} of {len(table)} Monte Carlo checks pass")


def _read_systems(paths: list[str], systems: list[str]) -> dict[str, pd.DataFrame]:
    """Item tables by system name, one name per path."""
    return {system: table for (_, system), table in _read_item_tables(paths, systems, "--systems").items()}


def _systems(args: argparse.Namespace) -> None:
    import pandas as pd

    from kgrank.io import read_tables, write_report_table, write_table
    from kgrank.labels import model_label
    from kgrank.studies.ir.aggregate import aggregate_items
    from kgrank.studies.ir.figures import EVALUATION_LABELS, plot_systems
    from kgrank.studies.ir.settings import MAIN_EVALUATIONS

    items = _read_systems(args.items, args.systems)
    table = aggregate_items(items, evaluations=list(MAIN_EVALUATIONS))
    budgets = read_tables(args.micro_metrics, ["model"]).drop_duplicates("model").set_index("model")
    budget_keys = [key for key in ("epochs", "published_epochs", "embedding_dim") if key in budgets.columns]
    write_table(args.out, table)
    shown = {
        "MRR micro": ("micro", "inverse_harmonic_mean_rank", "value"),
        "MRR macro (PyKEEN)": ("macro-pykeen", "inverse_harmonic_mean_rank", "value"),
        "MRR macro": ("macro", "inverse_harmonic_mean_rank", "value"),
        "AMRR macro": ("macro", "inverse_harmonic_mean_rank", "adjusted_index"),
        "Hits@10 macro": ("macro", "hits_at_10", "value"),
        "MAP@20": ("macro", "ap_at_20", "value"),
        "nDCG@20": ("macro", "ndcg_at_20", "value"),
    }
    rows = []
    for evaluation in MAIN_EVALUATIONS:
        for system in args.systems:
            row = {"evaluation": EVALUATION_LABELS[evaluation], "model": model_label(system)}
            for name, (averaging, metric, column) in shown.items():
                chosen = table[
                    (table["evaluation"] == evaluation)
                    & (table["model"] == system)
                    & (table["averaging"] == averaging)
                    & (table["metric"] == metric)
                ]
                row[name] = float(chosen[column].iloc[0]) if len(chosen) else float("nan")
            row.update({key: budgets.loc[system, key] for key in budget_keys if system in budgets.index})
            rows.append(row)
    statement = (
        "Every system on the full test set (FB-Test-O), FB-Test-S and its relabelled version FB-Test-S-C, "
        "filtered (known train/valid/test triples and the other relevant answers removed). Micro: one "
        "value per relevant answer; macro: one per query, scored by its best-ranked relevant answer; "
        "macro (PyKEEN): the mean over queries of the per-answer mean, what PyKEEN's "
        "MacroRankBasedEvaluator computes. MAP@20 and nDCG@20 are trec_eval's map_cut_20 and ndcg_cut_20 "
        "(ir-measures, pytrec_eval) on the exported run files. AMRR: macro MRR adjusted for chance with "
        "the best-of-R expectation. " + args.caption
    )
    write_report_table(
        pd.DataFrame(rows),
        args.markdown,
        args.latex,
        caption=statement,
        label="tab:ir-systems",
        floatfmt=".4g",
        markdown_caption=True,
    )
    plot_systems(table, args.pdf, args.png, caption=statement)


def _sparsity(args: argparse.Namespace) -> None:
    from kgrank.io import read_tables, write_report_table, write_table
    from kgrank.studies.ir.agreement import label_sparsity
    from kgrank.studies.ir.figures import (
        AVERAGING_LABELS,
        metric_label,
        plot_tau_by_depth,
        plot_values_by_depth,
    )

    items = _read_systems(args.items, args.systems)
    relations = read_tables([args.relations], ["relation", "category"])
    agreement, values = label_sparsity(items, relations)
    write_table(args.out, agreement)
    write_table(args.values, values)
    raw = agreement[agreement["variant"] == "raw"]
    whole = raw[(raw["category"].fillna("all") == "all") & (raw["side"].fillna("both") == "both")]
    as_is = whole[whole["comparison"] == "sample vs pooled"].set_index(["averaging", "metric"])
    mixed = whole[whole["comparison"] == "sample vs pooled, relation mix of sample"].set_index(
        ["averaging", "metric"]
    )
    table = as_is[["tau", "p_value"]].join(
        mixed[["tau"]].rename(columns={"tau": "tau, S-C at the relation mix of S"})
    )
    table = table.reset_index()
    table["averaging"] = table["averaging"].map(AVERAGING_LABELS)
    table["metric"] = table["metric"].map(metric_label)
    statement = (
        f"Label sparsity: Kendall's tau-b between the rankings of {len(args.systems)} systems on "
        "FB-Test-S and "
        "on FB-Test-S-C (the same queries with the TREC-pooled, human-judged answers added), with its "
        "p-value, and with FB-Test-S-C re-weighted per relation to FB-Test-S's relation mix (which "
        "separates the added labels from the changed mix). The adjusted index and z-score give the same "
        "tau as the raw value by construction: within one evaluation set every system has the same "
        "expectation."
    )
    write_report_table(
        table.rename(columns={"tau": "tau, S vs S-C", "p_value": "p"}),
        args.markdown,
        args.latex,
        caption=statement,
        label="tab:ir-sparsity",
        floatfmt=".3g",
        markdown_caption=True,
    )
    plot_tau_by_depth(agreement, args.pdf, args.png, caption=statement)
    plot_values_by_depth(
        values,
        args.values_pdf,
        args.values_png,
        caption="Macro MRR (best-ranked relevant answer) and its adjusted index AMRR of every system "
        "against the pooling depth d (FB-Test-S plus the pooled answers judged relevant at depth <= d). "
        "More relevant answers per query raise the chance that one ranks high; AMRR subtracts what a "
        "random ranking gets with the same answers.",
    )


def _stability(args: argparse.Namespace) -> None:
    from kgrank.io import write_table
    from kgrank.studies.ir.stability import stability, stability_summary

    items = _read_systems(args.items, args.systems)
    taus = stability(
        items,
        args.evaluations,
        fractions=args.fractions,
        repetitions=args.repetitions,
        seed=args.seed,
        dataset=args.dataset,
    )
    write_table(args.out, taus)
    write_table(args.summary, stability_summary(taus))


def _stability_figure(args: argparse.Namespace) -> None:
    from kgrank.io import read_tables
    from kgrank.studies.ir.figures import plot_stability
    from kgrank.studies.ir.stability import STABILITY_SUMMARY_COLUMNS

    summary = read_tables(args.summaries, STABILITY_SUMMARY_COLUMNS)
    plot_stability(
        summary,
        args.pdf,
        args.png,
        caption="Stability: Kendall's tau-b between the system ranking on the whole evaluation set and on "
        f"random subsets of its relevant answers (mean and 5th-95th percentile over "
        f"{int(summary['repetitions'].max())} seeded draws per share).",
    )


def _discrimination(args: argparse.Namespace) -> None:
    import pandas as pd

    from kgrank.io import write_report_table, write_table
    from kgrank.studies.ir.discrimination import discrimination, discrimination_summary
    from kgrank.studies.ir.figures import (
        AVERAGING_LABELS,
        evaluation_label,
        metric_label,
        plot_discrimination,
    )

    tables = _pair_items(args.items, args.pairs)
    frames = []
    for dataset, evaluation in _dataset_evaluations(args.evaluations, {d for d, _ in tables}):
        systems = {model: table for (name, model), table in tables.items() if name == dataset}
        frames.append(discrimination(systems, evaluation, alpha=args.alpha, dataset=dataset))
    pairs = pd.concat(frames, ignore_index=True)
    write_table(args.out, pairs)
    summary = discrimination_summary(pairs, args.alpha)
    write_table(args.summary, summary)
    shown = summary.assign(
        evaluation=[
            evaluation_label(d, e) for d, e in zip(summary["dataset"], summary["evaluation"], strict=True)
        ],
        averaging=summary["averaging"].map(AVERAGING_LABELS),
        metric=summary["metric"].map(metric_label),
    ).drop(columns=["dataset", "alpha"])
    statement = (
        f"Discriminative power: system pairs whose paired two-sided t-test (scipy) gives p < {args.alpha}, "
        "before and after Holm's correction over the pairs of each row (statsmodels), per metric and "
        "averaging; items are relevant answers (micro) or queries (macro)."
    )
    write_report_table(
        shown,
        args.markdown,
        args.latex,
        caption=statement,
        label="tab:ir-discrimination",
        markdown_caption=True,
    )
    plot_discrimination(pairs, args.pdf, args.png, alpha=args.alpha, caption=statement)


def _run_depth(text: str) -> int:
    from kgrank.studies.ir.trec import MEASURE_DEPTH

    return int_at_least(text, MEASURE_DEPTH, "entities leave MAP@20 and nDCG@20 short")


def _add_systems(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--items", nargs="+", required=True, help="item tables of `kgrank ir-evaluate`, one per system"
    )
    command.add_argument("--systems", nargs="+", required=True, help="the system (model) of each item table")


def _add_pair_items(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--items",
        nargs="+",
        required=True,
        help="item tables of `kgrank ir-evaluate` (results/ir/<dataset>/items/<model>.parquet)",
    )
    command.add_argument(
        "--pairs", nargs="+", required=True, help="the dataset/model of each item table, in the same order"
    )


def _add_dataset_evaluations(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--evaluations",
        nargs="+",
        required=True,
        help="dataset:evaluation sets to analyse (e.g. fb15k237:test fb15k237:pooled wn18rr:test)",
    )


def add_commands(commands: argparse._SubParsersAction) -> None:
    """The study's subcommands (`kgrank ir-*`)."""
    command = commands.add_parser(
        "ir-queries",
        help="the evaluation sets through the dataset ids (kgc-sparsity files, or the test split alone)",
    )
    add_dataset_dir(command)
    command.add_argument(
        "--kgc-dir",
        help="the kgc-sparsity folder (FB-Test-O, FB-Test-S, FB-Test-S-C); without it the evaluation is "
        "the dataset's test split alone",
    )
    command.add_argument(
        "--raw-test",
        help="the dataset archive (with test.txt) or raw test file FB-Test-S was sampled from, or "
        "pykeen:<name> for a PyKEEN dataset's own file; needed where preparing dropped test triples",
    )
    command.add_argument("--out", required=True, help="where to write the evaluation sets (parquet)")
    command.add_argument(
        "--counts", help="where to write the counts of every file read (TSV; with --kgc-dir)"
    )
    command.add_argument("--relations", help="where to write the relation categories (TSV; with --kgc-dir)")
    command.add_argument(
        "--qrels-dir", required=True, help="folder for one TREC qrels file per exported evaluation"
    )
    command.add_argument(
        "--export",
        nargs="+",
        default=["test"],
        help="evaluation sets that get TREC files (test, sample, pooled)",
    )
    command.add_argument("--markdown", help="where to write the counts table as Markdown (with --kgc-dir)")
    command.add_argument("--latex", help="where to write the counts table as LaTeX (with --kgc-dir)")
    command.set_defaults(handler=_queries)

    command = commands.add_parser(
        "ir-evaluate",
        help="one scoring pass of a trained model over the study's queries: items, micro metrics, TREC runs",
    )
    add_model_dir(command)
    add_dataset_dir(command)
    command.add_argument("--dataset", required=True, help="the dataset's name, written into the tables")
    command.add_argument("--model", required=True, help="the model's name, written into the tables")
    command.add_argument("--evaluations", required=True, help="the evaluation sets of `kgrank ir-queries`")
    add_filter_splits(command)
    add_hits(command)
    command.add_argument(
        "--run-depth",
        type=_run_depth,
        default=1000,
        help="entities per query in the exported run files (at least 20: MAP@20 and nDCG@20 read 20)",
    )
    command.add_argument(
        "--export", nargs="+", default=["test"], help="evaluation sets that get run files and micro metrics"
    )
    command.add_argument("--batch-size", type=positive_int, default=256, help="queries scored at once")
    add_seed(command, "the non-deterministic (random tie-breaking) rank of the micro metrics")
    add_threads(command)
    add_quiet(command)
    command.add_argument("--items", required=True, help="where to write the item table (parquet)")
    command.add_argument(
        "--metrics",
        required=True,
        help="where to write every registry metric, micro, per exported evaluation (TSV)",
    )
    command.add_argument(
        "--runs-dir", required=True, help="folder for one gzipped TREC run per exported evaluation"
    )
    command.set_defaults(handler=_evaluate)

    command = commands.add_parser(
        "ir-montecarlo", help="the macro moments (best of R relevant answers) against simulation"
    )
    _add_pair_items(command)
    _add_dataset_evaluations(command)
    add_hits(command)
    command.add_argument("--replicates", type=positive_int, default=2000, help="simulated replicates")
    command.add_argument(
        "--alpha", type=open_probability, default=0.01, help="family-wise level of the checks (Bonferroni)"
    )
    add_seed(command, "the simulation")
    add_quiet(command)
    command.add_argument("--out", required=True, help="where to write the check (TSV)")
    add_table_paths(command)
    command.set_defaults(handler=_montecarlo)

    command = commands.add_parser(
        "ir-systems", help="micro and macro metrics of every system on the main sets"
    )
    _add_systems(command)
    command.add_argument(
        "--micro-metrics",
        nargs="+",
        required=True,
        help="the micro metric tables of `kgrank ir-evaluate` (budget columns)",
    )
    command.add_argument("--out", required=True, help="where to write every aggregate (TSV)")
    add_table_paths(command)
    add_figure_paths(command)
    add_caption(command)
    command.set_defaults(handler=_systems)

    command = commands.add_parser(
        "ir-sparsity", help="label sparsity: system rankings on FB-Test-S vs FB-Test-S-C and vs pooling depth"
    )
    _add_systems(command)
    command.add_argument("--relations", required=True, help="the relation categories of `kgrank ir-queries`")
    command.add_argument("--out", required=True, help="where to write every Kendall tau (TSV)")
    command.add_argument(
        "--values", required=True, help="where to write the per-system values behind them (TSV)"
    )
    add_table_paths(command)
    add_figure_paths(command)
    command.add_argument(
        "--values-pdf", required=True, help="where to write the values-vs-depth figure as PDF"
    )
    command.add_argument(
        "--values-png", required=True, help="where to write the values-vs-depth figure as PNG"
    )
    command.set_defaults(handler=_sparsity)

    command = commands.add_parser(
        "ir-stability", help="Kendall tau of the system ranking on random test subsets against the whole set"
    )
    _add_systems(command)
    command.add_argument("--dataset", required=True, help="the dataset's name, written into the tables")
    command.add_argument("--evaluations", nargs="+", required=True, help="evaluation sets to subsample")
    command.add_argument(
        "--fractions", type=share, nargs="+", required=True, help="shares of the test answers kept"
    )
    command.add_argument("--repetitions", type=positive_int, default=50, help="random subsets per share")
    add_seed(command, "the subsets")
    command.add_argument("--out", required=True, help="where to write every tau (TSV)")
    command.add_argument(
        "--summary", required=True, help="where to write mean and percentiles per share (TSV)"
    )
    command.set_defaults(handler=_stability)

    command = commands.add_parser("ir-stability-figure", help="the stability curves of every dataset")
    command.add_argument(
        "--summaries", nargs="+", required=True, help="stability summaries of `kgrank ir-stability`"
    )
    add_figure_paths(command)
    command.set_defaults(handler=_stability_figure)

    command = commands.add_parser(
        "ir-discrimination", help="paired t-tests of every system pair per metric: discriminative power"
    )
    _add_pair_items(command)
    _add_dataset_evaluations(command)
    command.add_argument(
        "--alpha",
        type=open_probability,
        default=0.05,
        help="level below which a pair counts as discriminated",
    )
    command.add_argument("--out", required=True, help="where to write every pair's test (TSV)")
    command.add_argument("--summary", required=True, help="where to write the counts per metric (TSV)")
    add_table_paths(command)
    add_figure_paths(command)
    command.set_defaults(handler=_discrimination)
