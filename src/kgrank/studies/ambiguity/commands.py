"""The ambiguity study's commands (``kgrank ambiguity-...``): argparse, and handlers that
read the inputs, call the analysis and report modules and write the outputs. The study's
settings arrive as one ``--settings`` object (kgrank.workflow.settings): each command reads
the parts of studies.ambiguity whose ``x-commands`` name it in
src/kgrank/schemas/studies/ambiguity.schema.yaml, its defaults filled, and the rule passes
them from the config."""

from __future__ import annotations

import argparse

from kgrank.cli.config_options import add_config_options
from kgrank.cli.options import (
    add_caption,
    add_dataset_dir,
    add_figure_paths,
    add_model_dir,
    add_quiet,
    add_table_paths,
    add_threads,
)
from kgrank.workflow.settings import add_settings


def _interval(settings: dict) -> dict:
    """The bootstrap's level and resamples, as the drift's slopes and the pairwise tests take them."""
    return {"confidence": settings["confidence"], "bootstrap_resamples": settings["bootstrap_resamples"]}


def _report(
    args: argparse.Namespace, name: str, table, caption: str, floatfmt: str = ".4g", prefix: str = ""
) -> None:
    """A report table to ``--{prefix}markdown`` and ``--{prefix}latex``, labelled
    ``tab:ambiguity-<name>``, its caption under the Markdown table too."""
    from kgrank.data.io import write_report_table

    write_report_table(
        table,
        getattr(args, f"{prefix}markdown"),
        getattr(args, f"{prefix}latex"),
        caption=caption,
        label=f"tab:ambiguity-{name}",
        floatfmt=floatfmt,
        markdown_caption=True,
    )


def _variants(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_table
    from kgrank.data.tables import read_pair_tables
    from kgrank.studies.ambiguity import report
    from kgrank.studies.ambiguity.figures import plot_variants
    from kgrank.studies.ambiguity.variants import study_metrics, variants_table

    alpha = args.settings["alpha"]
    tables = read_pair_tables(args.ranks)
    metrics, ties = variants_table(tables, study_metrics(), args.seed)
    write_table(args.out, metrics)
    write_table(args.ties, ties)
    flagged = report.random_like(tables, alpha)
    ties_table = report.ties_report(ties, {model for _, model in tables}, flagged)
    _report(args, "ties", ties_table, report.ties_caption(alpha), prefix="ties_")
    statement = report.constant_and_random_statement(metrics)
    caption = report.variants_caption(statement, alpha)
    _report(args, "variants", report.variants_report(metrics, flagged), caption)
    print(statement)
    plot_variants(metrics, args.pdf, args.png, shown=report.SHOWN_IN_VARIANTS_FIGURE, caption=statement)


def _subsets(args: argparse.Namespace) -> None:
    import numpy as np

    from kgrank.data.io import write_table
    from kgrank.engine.candidates import known_answers
    from kgrank.engine.threads import use_threads
    from kgrank.studies.ambiguity.subsets import subset_plan, subset_rank_table
    from kgrank.systems import load_scoring_model

    use_threads(args.threads)
    model, factories = load_scoring_model(
        args.model_dir, args.dataset_dir, device=args.device, trusted=args.trust_pickle
    )
    test = np.asarray(factories.testing.mapped_triples, dtype=np.int64)
    fractions = args.settings["subsets"]["fractions"]
    repetitions = args.settings["repetitions"]
    plan = subset_plan(test, factories.training.num_entities, fractions, repetitions, args.seed)
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
    from kgrank.data.io import write_table
    from kgrank.data.tables import read_pair_tables
    from kgrank.studies.ambiguity import report
    from kgrank.studies.ambiguity.drift import ALL_CANDIDATES, drift_table, slope_table
    from kgrank.studies.ambiguity.inputs import subset_kind

    settings = args.settings
    # `all` keeps every candidate: None to the drift
    sizes = [None if size == ALL_CANDIDATES else size for size in settings["candidate_sizes"]]
    interval = _interval(settings)
    tables = read_pair_tables(args.ranks)
    subsets = read_pair_tables(args.subsets or [], subset_kind())
    drift = drift_table(tables, subsets, sizes, settings["repetitions"], args.seed)
    write_table(args.out, drift)
    slopes = slope_table(drift, **interval, seed=args.seed)
    write_table(args.slopes, slopes)
    summary = report.flat_summary(slopes)
    flagged = report.random_like(tables, settings["alpha"])
    caption = report.slopes_caption(summary, **interval, alpha=settings["alpha"])
    _report(args, "drift", report.slopes_report(drift, slopes, flagged), caption, floatfmt=".3g")
    print(summary)


def _drift_figure(args: argparse.Namespace) -> None:
    from kgrank.data.tables import read_table
    from kgrank.studies.ambiguity.figures import plot_drift
    from kgrank.studies.ambiguity.inputs import drift_kind

    plot_drift(read_table(args.drift, drift_kind()), args.pdf, args.png, caption=args.caption)


def _table1(args: argparse.Namespace) -> None:
    from kgrank.data.io import read_stats, write_table
    from kgrank.data.tables import read_pair_tables
    from kgrank.studies.ambiguity import report
    from kgrank.studies.ambiguity.table1 import published_table1_path, read_published, table1

    published_path = args.published or published_table1_path()
    stats = read_stats(args.stats) if args.stats else None
    entities = dict(zip(stats["dataset"], stats["entities"], strict=True)) if stats is not None else {}
    alpha = args.settings["alpha"]
    table = table1(read_published(published_path), read_pair_tables(args.ranks), entities, alpha=alpha)
    write_table(args.out, table)
    _report(args, "table1", report.table1_report(table, alpha), report.table1_caption(alpha))


def _pairwise(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_table
    from kgrank.data.tables import read_pair_tables
    from kgrank.studies.ambiguity import report
    from kgrank.studies.ambiguity.figures import plot_pairwise
    from kgrank.studies.ambiguity.pairwise import pairwise_table

    settings = args.settings
    alpha = settings["alpha"]
    interval = _interval(settings)
    tables = read_pair_tables(args.ranks)
    table = pairwise_table(tables, alpha=alpha, **interval, seed=args.seed)
    write_table(args.out, table)
    flagged = report.random_like(tables, alpha)
    caption = report.pairwise_caption(len(table), **interval, alpha=alpha)
    _report(args, "pairwise", report.pairwise_report(table, flagged), caption, floatfmt=".3g")
    print(report.pairwise_summary(table, alpha))
    plot_pairwise(table, flagged, args.pdf, args.png, caption=caption)


def _add_ranks(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--ranks", nargs="+", required=True, help="rank tables <dataset>/<model>.parquet of the rank stage"
    )


def add_commands(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser(
        "ambiguity-variants", help="rank definitions: ties, and every metric under each definition"
    )
    _add_ranks(command)
    add_settings(command, "ambiguity")
    add_config_options(command, "seed")
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
    add_settings(command, "ambiguity")
    add_config_options(command, "seed", "ranks.batch_size", "ranks.filter_splits")
    add_threads(command)
    add_quiet(command)
    command.set_defaults(handler=_subsets)

    command = commands.add_parser(
        "ambiguity-drift", help="metrics against the candidate-set size, and their slopes per decade"
    )
    _add_ranks(command)
    command.add_argument("--subsets", nargs="*", default=[], help="tables of ambiguity-subsets")
    add_settings(command, "ambiguity")
    add_config_options(command, "seed")
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
    add_settings(command, "ambiguity")
    command.add_argument("--out", required=True, help="result TSV")
    add_table_paths(command)
    command.set_defaults(handler=_table1)

    command = commands.add_parser("ambiguity-pairwise", help="which differences between models are real")
    _add_ranks(command)
    add_settings(command, "ambiguity")
    add_config_options(command, "seed")
    command.add_argument("--out", required=True, help="result TSV")
    add_table_paths(command)
    add_figure_paths(command)
    command.set_defaults(handler=_pairwise)
