"""The protocols study's commands (``kgrank protocols-...``): argparse, and handlers that
read the inputs, call the analysis and report modules and write the outputs. Every option
that is a setting of the study is required: its default lives in the schema
(workflow/schemas/studies/protocols.schema.yaml) and the rule passes it.

One group of commands per part of the study (issue #31): part 3, the weighted geometric
mean rank, is ``protocols-weighted``, ``protocols-weighted-check`` and
``protocols-weighted-figure``; a new part adds its own ``protocols-<part>...`` commands in
:func:`add_commands`."""

from __future__ import annotations

import argparse

from kgrank.cli_options import (
    add_caption,
    add_figure_paths,
    add_seed,
    add_table_paths,
    int_at_least,
    open_probability,
    positive_int,
)
from kgrank.weighted import WEIGHT_SCHEMES


def _replicates(text: str) -> int:
    """An argparse type: a replicate count of at least 2 (a variance needs two draws)."""
    return int_at_least(text, 2, "replicate(s) leave no sample variance")


# --- part 3: weighted geometric mean rank -------------------------------------------------


def _weighted(args: argparse.Namespace) -> None:
    from kgrank.io import write_report_table, write_table
    from kgrank.studies.protocols import report
    from kgrank.studies.protocols.inputs import read_pair_tables
    from kgrank.studies.protocols.weighted import weighted_table

    tables = read_pair_tables(args.ranks)
    table = weighted_table(tables, args.schemes)
    write_table(args.out, table)
    write_report_table(
        report.weighted_report(table),
        args.markdown,
        args.latex,
        caption=report.weighted_caption(len(tables)),
        label="tab:protocols-weighted",
        floatfmt=".4g",
        markdown_caption=True,
    )


def _weighted_check(args: argparse.Namespace) -> None:
    from kgrank.io import write_report_table, write_table
    from kgrank.studies.protocols import report
    from kgrank.studies.protocols.inputs import read_dataset_tables
    from kgrank.studies.protocols.weighted import weighted_check

    check = weighted_check(
        read_dataset_tables(args.ranks),
        args.schemes,
        replicates=args.montecarlo_replicates,
        seed=args.seed,
        alpha=args.alpha,
    )
    write_table(args.out, check)
    write_report_table(
        report.check_report(check),
        args.markdown,
        args.latex,
        caption=report.check_caption(check),
        label="tab:protocols-weighted-montecarlo",
        floatfmt=".4g",
        markdown_caption=True,
    )
    print(report.check_summary(check))


def _weighted_figure(args: argparse.Namespace) -> None:
    from kgrank.studies.protocols.figures import plot_weighted
    from kgrank.studies.protocols.inputs import weighted_kind
    from kgrank.tables import read_table

    plot_weighted(read_table(args.weighted, weighted_kind()), args.pdf, args.png, caption=args.caption)


def _add_schemes(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--schemes",
        nargs="+",
        choices=WEIGHT_SCHEMES,
        required=True,
        help="weight schemes: negatives (N_i - 1, the paper's), relation, uniform (GMR) "
        "(studies.protocols.weighted.schemes)",
    )


def add_commands(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser(
        "protocols-weighted",
        help="weighted geometric mean rank of every pair under each weight scheme, with exact moments",
    )
    command.add_argument(
        "--ranks", nargs="+", required=True, help="rank tables <dataset>/<model>.parquet of the rank stage"
    )
    _add_schemes(command)
    command.add_argument("--out", required=True, help="tidy weighted metrics TSV")
    add_table_paths(command)
    command.set_defaults(handler=_weighted)

    command = commands.add_parser(
        "protocols-weighted-check",
        help="Monte Carlo check of E and Var of WGMR and IWGMR on each dataset's candidate counts",
    )
    command.add_argument(
        "--ranks",
        nargs="+",
        required=True,
        help="one rank table <dataset>/<model>.parquet per dataset (its candidate counts and relations)",
    )
    _add_schemes(command)
    command.add_argument(
        "--montecarlo-replicates",
        type=_replicates,
        required=True,
        help="random-model draws per dataset and scheme (studies.protocols.weighted.montecarlo_replicates)",
    )
    add_seed(command, "the random-model draws")
    command.add_argument(
        "--alpha",
        type=open_probability,
        required=True,
        help="family-wise level of the check, Bonferroni over its tests (studies.protocols.weighted.alpha)",
    )
    command.add_argument("--out", required=True, help="check TSV")
    add_table_paths(command)
    command.set_defaults(handler=_weighted_check)

    command = commands.add_parser(
        "protocols-weighted-figure", help="the adjusted WGMR index against the unweighted one, per pair"
    )
    command.add_argument("--weighted", required=True, help="weighted metrics TSV of protocols-weighted")
    add_caption(command)
    add_figure_paths(command)
    command.set_defaults(handler=_weighted_figure)

    add_sampled_commands(commands)


# --- part 1: sampled negatives ------------------------------------------------------------


def _sampled(args: argparse.Namespace) -> None:
    from kgrank.io import write_report_table, write_table
    from kgrank.studies.protocols import report
    from kgrank.studies.protocols.inputs import read_fixed_set_tables, read_pair_tables
    from kgrank.studies.protocols.sampled import SampledSettings, sampled_analysis

    settings = SampledSettings(
        num_samples=tuple(args.num_samples),
        estimators=tuple(args.estimators),
        regularisation=args.regularisation,
        corrected_max_k=args.corrected_max_k,
        replicates=args.replicates,
        seed=args.seed,
        profile=args.profile,
    )
    # (the rule runs this with one BLAS thread: multithreaded BLAS was 15x slower on the
    # corrected estimator's small systems, measured on FB15k-237's candidate counts)
    estimates, agreement = sampled_analysis(
        read_pair_tables(args.ranks), settings, read_fixed_set_tables(args.fixed_set)
    )
    write_table(args.out, estimates)
    write_table(args.agreement, agreement)
    write_report_table(
        report.sampled_report(estimates, agreement, settings.limits()),
        args.markdown,
        args.latex,
        caption=report.sampled_caption(estimates, args.profile, settings.limits()),
        label="tab:protocols-sampled",
        floatfmt=".4g",
        markdown_caption=True,
    )


def _sampled_figure(args: argparse.Namespace) -> None:
    from kgrank.studies.protocols.figures import plot_sampled
    from kgrank.studies.protocols.inputs import sampled_kind
    from kgrank.tables import read_table

    plot_sampled(read_table(args.estimates, sampled_kind()), args.pdf, args.png, caption=args.caption)


def _largest_k(text: str) -> int | None:
    """An argparse type: a positive k, or ``none`` for no limit."""
    return None if text == "none" else int_at_least(text, 1, "is no sample size")


def _regularisation(text: str) -> float:
    """An argparse type: gamma in [0, 1]."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number in [0, 1]")
    return value


def add_sampled_commands(commands: argparse._SubParsersAction) -> None:
    from kgrank.sampled import ESTIMATORS

    command = commands.add_parser(
        "protocols-sampled",
        help="estimators of the full MRR and Hits@10 from sampled negatives: exact bias, SD, RMSE and "
        "the order agreement of every pair of systems",
    )
    command.add_argument(
        "--ranks", nargs="+", required=True, help="rank tables <dataset>/<model>.parquet of the rank stage"
    )
    command.add_argument(
        "--fixed-set",
        nargs="*",
        default=[],
        help="the rank engine's sampled ranks <dataset>/<model>.sampled-<k>.parquet (one k per dataset, "
        "every system of it): the fixed set per query (studies.protocols.sampled.fixed_set)",
    )
    command.add_argument(
        "--num-samples",
        nargs="+",
        type=positive_int,
        required=True,
        help="sample sizes k, negatives per task (studies.protocols.sampled.num_samples)",
    )
    command.add_argument(
        "--estimators",
        nargs="+",
        choices=ESTIMATORS,
        required=True,
        help="estimators of the full metric (studies.protocols.sampled.estimators)",
    )
    command.add_argument(
        "--regularisation",
        type=_regularisation,
        required=True,
        help="gamma of the corrected estimator (studies.protocols.sampled.regularisation)",
    )
    command.add_argument(
        "--corrected-max-k",
        type=_largest_k,
        required=True,
        help="largest k of the corrected estimator, or none (studies.protocols.sampled.corrected_max_k)",
    )
    command.add_argument(
        "--replicates",
        type=_replicates,
        required=True,
        help="draws per system for the adjusted index and the order agreement "
        "(studies.protocols.sampled.replicates)",
    )
    add_seed(command, "the draws of negatives")
    command.add_argument("--profile", required=True, help="which configuration produced the numbers")
    command.add_argument("--out", required=True, help="estimates TSV")
    command.add_argument("--agreement", required=True, help="order agreement TSV")
    add_table_paths(command)
    command.set_defaults(handler=_sampled)

    command = commands.add_parser(
        "protocols-sampled-figure", help="bias of each estimator of the full MRR against k, per dataset"
    )
    command.add_argument("--estimates", required=True, help="estimates TSV of protocols-sampled")
    add_caption(command)
    add_figure_paths(command)
    command.set_defaults(handler=_sampled_figure)
