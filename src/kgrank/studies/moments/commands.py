"""The `moments-*` commands: argparse and thin handlers that read the inputs, call the
study's analysis functions and write the outputs."""

from __future__ import annotations

import argparse

from kgrank.cli.config_options import add_config_options
from kgrank.cli.options import add_dataset_dir, add_figure_paths, add_quiet
from kgrank.workflow.settings import add_settings


def _moments_table(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_table
    from kgrank.evaluation.metrics import default_metrics
    from kgrank.studies.moments.montecarlo import dataset_moments_table

    splits = args.settings["splits"]
    table = dataset_moments_table(
        args.dataset_dir, args.dataset, splits, default_metrics(args.hits), args.filter_splits
    )
    write_table(args.out, table)


def _montecarlo(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_table
    from kgrank.engine.candidates import candidate_counts
    from kgrank.evaluation.metrics import default_metrics
    from kgrank.studies.moments.montecarlo import check_dataset

    result = check_dataset(
        candidate_counts(args.dataset_dir, "test", args.filter_splits),
        default_metrics(args.hits),
        replicates=args.settings["montecarlo_replicates"],
        seed=args.seed,
        alpha=args.settings["montecarlo_alpha"],
        progress=not args.quiet,
    )
    result.insert(0, "dataset", args.dataset)
    write_table(args.out, result)


def _montecarlo_figure(args: argparse.Namespace) -> None:
    from kgrank.data.tables import MONTECARLO_CHECK, read_tables_of
    from kgrank.studies.moments.montecarlo import plot_check

    plot_check(read_tables_of(args.checks, MONTECARLO_CHECK), args.pdf, args.png)


def _errata(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_report_table, write_table
    from kgrank.studies.moments.errata import ERRATA_FLOATFMT, check_formulas, errata

    check = check_formulas(replicates=args.settings["formula_montecarlo_replicates"], seed=args.seed)
    write_table(args.check, check)
    found = errata(check)
    write_table(args.errata, found)
    write_report_table(found, args.markdown, floatfmt=ERRATA_FLOATFMT)


def add_commands(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser("moments-table", help="E and Var of every metric per split and side")
    add_dataset_dir(command)
    command.add_argument("--dataset", required=True, help="the dataset's name, written into every row")
    add_settings(command, "moments")
    add_config_options(command, "ranks.filter_splits", "metrics.hits")
    command.add_argument("--out", required=True, help="where to write the moments as TSV")
    command.set_defaults(handler=_moments_table)

    command = commands.add_parser("moments-montecarlo", help="check every analytic moment by simulation")
    add_dataset_dir(command)
    command.add_argument("--dataset", required=True, help="the dataset's name, written into every row")
    add_settings(command, "moments")
    add_config_options(command, "seed", "ranks.filter_splits", "metrics.hits")
    command.add_argument("--out", required=True, help="where to write the checks as TSV")
    add_quiet(command)
    command.set_defaults(handler=_montecarlo)

    command = commands.add_parser("moments-montecarlo-figure", help="figure of the Monte Carlo check")
    command.add_argument("--checks", nargs="+", required=True, help="Monte Carlo check TSVs of the datasets")
    add_figure_paths(command)
    command.set_defaults(handler=_montecarlo_figure)

    command = commands.add_parser("moments-errata", help="published closed forms against simulation")
    add_settings(command, "moments")
    add_config_options(command, "seed")
    command.add_argument("--check", required=True, help="TSV of every formula checked")
    command.add_argument("--errata", required=True, help="TSV of the disagreements")
    command.add_argument("--markdown", required=True, help="the disagreements as Markdown")
    command.set_defaults(handler=_errata)
