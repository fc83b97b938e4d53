"""The ambiguity study's commands (``kgrank ambiguity-...``): argparse, and handlers that
read the inputs, call the analysis and report modules and write the outputs. Every
option that is a setting of the study is required: its default lives in the schema
(src/kgrank/schemas/studies/ambiguity.schema.yaml) and the rule passes it."""

from __future__ import annotations

import argparse

from kgrank.cli.options import (
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


def _variants(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_report_table, write_table
    from kgrank.data.tables import read_pair_tables
    from kgrank.studies.ambiguity import report
    from kgrank.studies.ambiguity.figures import plot_variants
    from kgrank.studies.ambiguity.variants import study_metrics, variants_table

    tables = read_pair_tables(args.ranks)
    metrics, ties = variants_table(tables, study_metrics(), args.seed)
    write_table(args.out, metrics)
    write_table(args.ties, ties)
    flagged = report.random_like(tables, args.alpha)
    write_report_table(
        report.ties_report(ties, {model for _, model in tables}, flagged),
        args.ties_markdown,
        args.ties_latex,
        caption=report.ties_caption(args.alpha),
        label="tab:ambiguity-ties",
        floatfmt=".4g",
        markdown_caption=True,
    )
    statement = report.constant_and_random_statement(metrics)
    write_report_table(
        report.variants_report(metrics, flagged),
        args.markdown,
        args.latex,
        caption=report.variants_caption(statement, args.alpha),
        label="tab:ambiguity-variants",
        floatfmt=".4g",
        markdown_caption=True,
    )
    print(statement)
    plot_variants(metrics, args.pdf, args.png, shown=report.SHOWN_IN_VARIANTS_FIGURE, caption=statement)


def _subsets(args: argparse.Namespace) -> None:
    import numpy as np
    import torch

    from kgrank.data.io import write_table
    from kgrank.engine.candidates import known_answers
    from kgrank.studies.ambiguity.subsets import subset_plan, subset_rank_table
    from kgrank.training.train import load_model

    torch.set_num_threads(args.threads)
    model, factories = load_model(args.model_dir, args.dataset_dir, device=args.device)
    test = np.asarray(factories.testing.mapped_triples, dtype=np.int64)
    plan = subset_plan(test, factories.training.num_entities, args.fractions, args.repetitions, args.seed)
    table = subset_rank_table(
        model,
        test,
        known_answers(factories, args.filter_splits),
        plan,
        batch_size=args.batch_size,
        progress=not args.quiet,
    )
    write_table(args.out, table)


def _drift(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_report_table, write_table
    from kgrank.data.tables import read_pair_tables
    from kgrank.studies.ambiguity import report
    from kgrank.studies.ambiguity.drift import drift_table, slope_table
    from kgrank.studies.ambiguity.inputs import subset_kind

    tables = read_pair_tables(args.ranks)
    subsets = read_pair_tables(args.subsets or [], subset_kind())
    drift = drift_table(tables, subsets, args.sizes, args.repetitions, args.seed)
    write_table(args.out, drift)
    slopes = slope_table(
        drift, confidence=args.confidence, bootstrap_resamples=args.bootstrap_resamples, seed=args.seed
    )
    write_table(args.slopes, slopes)
    summary = report.flat_summary(slopes)
    write_report_table(
        report.slopes_report(drift, slopes, report.random_like(tables, args.alpha)),
        args.markdown,
        args.latex,
        caption=report.slopes_caption(
            summary,
            confidence=args.confidence,
            bootstrap_resamples=args.bootstrap_resamples,
            alpha=args.alpha,
        ),
        label="tab:ambiguity-drift",
        floatfmt=".3g",
        markdown_caption=True,
    )
    print(summary)


def _drift_figure(args: argparse.Namespace) -> None:
    from kgrank.data.tables import read_table
    from kgrank.studies.ambiguity.figures import plot_drift
    from kgrank.studies.ambiguity.inputs import drift_kind

    plot_drift(read_table(args.drift, drift_kind()), args.pdf, args.png, caption=args.caption)


def _table1(args: argparse.Namespace) -> None:
    from kgrank.data.io import read_stats, write_report_table, write_table
    from kgrank.data.tables import read_pair_tables
    from kgrank.studies.ambiguity import report
    from kgrank.studies.ambiguity.table1 import published_table1_path, read_published, table1

    published_path = args.published or published_table1_path()
    stats = read_stats(args.stats) if args.stats else None
    entities = dict(zip(stats["dataset"], stats["entities"], strict=True)) if stats is not None else {}
    table = table1(read_published(published_path), read_pair_tables(args.ranks), entities, alpha=args.alpha)
    write_table(args.out, table)
    write_report_table(
        report.table1_report(table, args.alpha),
        args.markdown,
        args.latex,
        caption=report.table1_caption(args.alpha),
        label="tab:ambiguity-table1",
        floatfmt=".4g",
        markdown_caption=True,
    )


def _pairwise(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_report_table, write_table
    from kgrank.data.tables import read_pair_tables
    from kgrank.studies.ambiguity import report
    from kgrank.studies.ambiguity.figures import plot_pairwise
    from kgrank.studies.ambiguity.pairwise import pairwise_table

    tables = read_pair_tables(args.ranks)
    table = pairwise_table(
        tables,
        alpha=args.alpha,
        confidence=args.confidence,
        bootstrap_resamples=args.bootstrap_resamples,
        seed=args.seed,
    )
    write_table(args.out, table)
    flagged = report.random_like(tables, args.alpha)
    caption = report.pairwise_caption(
        len(table), confidence=args.confidence, bootstrap_resamples=args.bootstrap_resamples, alpha=args.alpha
    )
    write_report_table(
        report.pairwise_report(table, flagged),
        args.markdown,
        args.latex,
        caption=caption,
        label="tab:ambiguity-pairwise",
        floatfmt=".3g",
        markdown_caption=True,
    )
    print(report.pairwise_summary(table, args.alpha))
    plot_pairwise(table, flagged, args.pdf, args.png, caption=caption)


def _add_ranks(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--ranks", nargs="+", required=True, help="rank tables <dataset>/<model>.parquet of the rank stage"
    )


def _add_alpha(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--alpha",
        type=open_probability,
        required=True,
        help="level of the tests and of the random-model check (studies.ambiguity.alpha)",
    )


def _add_interval_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--confidence",
        type=open_probability,
        required=True,
        help="bootstrap confidence level (studies.ambiguity.confidence)",
    )
    command.add_argument(
        "--bootstrap-resamples",
        type=positive_int,
        required=True,
        help="bootstrap resamples (studies.ambiguity.bootstrap_resamples)",
    )


def _add_repetitions(command: argparse.ArgumentParser, what: str) -> None:
    command.add_argument(
        "--repetitions", type=positive_int, required=True, help=f"{what} (studies.ambiguity.repetitions)"
    )


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
        required=True,
        help="shares of the test triples (studies.ambiguity.subsets.fractions)",
    )
    _add_repetitions(command, "random subsets per fraction")
    add_seed(command, "the subsets")
    command.add_argument(
        "--batch-size",
        type=positive_int,
        required=True,
        help="test triples scored at once (ranks.batch_size)",
    )
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
        required=True,
        help="candidates per task (the true one included), or all (studies.ambiguity.candidate_sizes)",
    )
    _add_repetitions(command, "seeds per sampled size")
    add_seed(command, "the sampled candidates and the bootstrap")
    _add_interval_options(command)
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
    _add_interval_options(command)
    command.add_argument("--out", required=True, help="result TSV")
    add_table_paths(command)
    add_figure_paths(command)
    command.set_defaults(handler=_pairwise)
