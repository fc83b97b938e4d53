"""The protocols study's commands (``kgrank protocols-...``): argparse, and handlers that
read the inputs, call the analysis and report modules and write the outputs. The study's
settings arrive as one ``--settings`` object (kgrank.workflow.settings): each command reads
the parts of studies.protocols whose ``x-commands`` name it in
src/kgrank/schemas/studies/protocols.schema.yaml, its defaults filled, and the rule passes
them from the config.

One group of ``protocols-<part>...`` commands per part of the study (issue #31), each
ending in ``protocols-<part>-figure``; a new part adds its own in :func:`add_commands`."""

from __future__ import annotations

import argparse
from functools import partial
from typing import TYPE_CHECKING

from kgrank.cli.config_options import add_config_options
from kgrank.cli.options import (
    add_caption,
    add_dataset_dir,
    add_figure_paths,
    add_model_dir,
    add_table_paths,
    add_threads,
)
from kgrank.workflow.settings import add_settings

if TYPE_CHECKING:
    import pandas as pd

RANKS_HELP = "rank tables <dataset>/<model>.parquet of the rank stage"
PROFILE_HELP = "which configuration produced the numbers"


def _report_table(frame: pd.DataFrame, args: argparse.Namespace, caption: str, label: str) -> None:
    """A command's report table: Markdown with the caption under it, and LaTeX."""
    from kgrank.data.io import write_report_table

    write_report_table(
        frame, args.markdown, args.latex, caption=caption, label=label, floatfmt=".4g", markdown_caption=True
    )


def _figure(part: str, option: str, args: argparse.Namespace) -> None:
    from kgrank.data.tables import read_table
    from kgrank.studies.protocols import figures, inputs

    kind, plot = {
        "weighted": (inputs.weighted_kind, figures.plot_weighted),
        "sampled": (inputs.sampled_kind, figures.plot_sampled),
        "ties": (inputs.ties_kind, figures.plot_ties),
    }[part]
    plot(read_table(getattr(args, option), kind()), args.pdf, args.png, caption=args.caption)


def _add_figure(
    commands: argparse._SubParsersAction, part: str, summary: str, option: str, what: str
) -> None:
    """``protocols-<part>-figure``: the table ``--<option>`` checked and drawn (:func:`_figure`)."""
    command = commands.add_parser(f"protocols-{part}-figure", help=summary)
    command.add_argument(f"--{option}", required=True, help=what)
    add_caption(command)
    add_figure_paths(command)
    command.set_defaults(handler=partial(_figure, part, option))


def _add_ranks(command: argparse.ArgumentParser, what: str = RANKS_HELP) -> None:
    command.add_argument("--ranks", nargs="+", required=True, help=what)


# --- part 3: weighted geometric mean rank -------------------------------------------------


def _weighted(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_table
    from kgrank.data.tables import read_pair_tables
    from kgrank.studies.protocols import report
    from kgrank.studies.protocols.weighted import weighted_table

    tables = read_pair_tables(args.ranks)
    table = weighted_table(tables, args.settings["weighted"]["schemes"])
    write_table(args.out, table)
    _report_table(
        report.weighted_report(table), args, report.weighted_caption(len(tables)), "tab:protocols-weighted"
    )


def _weighted_check(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_table
    from kgrank.studies.protocols import report
    from kgrank.studies.protocols.inputs import read_dataset_tables
    from kgrank.studies.protocols.weighted import weighted_check

    weighted = args.settings["weighted"]
    check = weighted_check(
        read_dataset_tables(args.ranks),
        weighted["schemes"],
        replicates=weighted["montecarlo_replicates"],
        seed=args.seed,
        alpha=weighted["alpha"],
    )
    write_table(args.out, check)
    _report_table(
        report.check_report(check), args, report.check_caption(check), "tab:protocols-weighted-montecarlo"
    )
    print(report.check_summary(check))


def add_commands(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser(
        "protocols-weighted",
        help="weighted geometric mean rank of every pair under each weight scheme, with exact moments",
    )
    _add_ranks(command)
    add_settings(command, "protocols")
    command.add_argument("--out", required=True, help="tidy weighted metrics TSV")
    add_table_paths(command)
    command.set_defaults(handler=_weighted)

    command = commands.add_parser(
        "protocols-weighted-check",
        help="Monte Carlo check of E and Var of WGMR and IWGMR on each dataset's candidate counts",
    )
    _add_ranks(
        command, "one rank table <dataset>/<model>.parquet per dataset (its candidate counts and relations)"
    )
    add_settings(command, "protocols")
    add_config_options(command, "seed")
    command.add_argument("--out", required=True, help="check TSV")
    add_table_paths(command)
    command.set_defaults(handler=_weighted_check)

    _add_figure(
        commands,
        "weighted",
        "the adjusted WGMR index against the unweighted one, per pair",
        "weighted",
        "weighted metrics TSV of protocols-weighted",
    )

    add_sampled_commands(commands)
    add_ties_commands(commands)


# --- part 1: sampled negatives ------------------------------------------------------------


def _sampled(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_table
    from kgrank.data.tables import read_pair_tables
    from kgrank.studies.protocols import report
    from kgrank.studies.protocols.inputs import read_fixed_set_tables
    from kgrank.studies.protocols.sampled import SampledSettings, sampled_analysis

    sampled = args.settings["sampled"]
    settings = SampledSettings(
        num_samples=tuple(sampled["num_samples"]),
        estimators=tuple(sampled["estimators"]),
        regularisation=sampled["regularisation"],
        corrected_max_k=sampled["corrected_max_k"],
        replicates=sampled["replicates"],
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
    _report_table(
        report.sampled_report(estimates, agreement, settings.limits()),
        args,
        report.sampled_caption(estimates, args.profile, settings.limits()),
        "tab:protocols-sampled",
    )


def add_sampled_commands(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser(
        "protocols-sampled",
        help="estimators of the full MRR and Hits@10 from sampled negatives: exact bias, SD, RMSE and "
        "the order agreement of every pair of systems",
    )
    _add_ranks(command)
    command.add_argument(
        "--fixed-set",
        nargs="*",
        default=[],
        help="the rank engine's sampled ranks <dataset>/<model>.sampled-<k>.parquet (one k per dataset, "
        "every system of it): the fixed set per query (studies.protocols.sampled.fixed_set)",
    )
    add_settings(command, "protocols")
    add_config_options(command, "seed")
    command.add_argument("--profile", required=True, help=PROFILE_HELP)
    command.add_argument("--out", required=True, help="estimates TSV")
    command.add_argument("--agreement", required=True, help="order agreement TSV")
    add_table_paths(command)
    command.set_defaults(handler=_sampled)

    _add_figure(
        commands,
        "sampled",
        "bias of each estimator of the full MRR against k, per dataset",
        "estimates",
        "estimates TSV of protocols-sampled",
    )


# --- part 2: ties -----------------------------------------------------------------------------


def _ties_pair(args: argparse.Namespace) -> None:
    import numpy as np

    from kgrank.data.io import write_table
    from kgrank.engine.candidates import known_answers
    from kgrank.engine.threads import use_threads
    from kgrank.engine.ties import parse_tolerance
    from kgrank.studies.protocols.ties import TiesSettings, pair_ties
    from kgrank.systems import load_scoring_model

    ties = args.settings["ties"]
    settings = TiesSettings(
        scorers=tuple(ties["scorers"]),
        decimals=ties["decimals"],
        # each tolerance by its canonical name (relative:1e-6 and relative:0.000001 are one)
        tolerances=tuple(parse_tolerance(text).name for text in ties["tolerances"]),
        max_test_triples=ties["max_test_triples"],
        depth=ties["depth"],
        measures=tuple(ties["measures"]),
        renamings=ties["renamings"],
        max_queries=ties["max_queries"],
        max_run_rows=ties["max_run_rows"],
        seed=args.seed,
        profile=args.profile,
    )
    use_threads(args.threads)
    model, factories = load_scoring_model(
        args.model_dir, args.dataset_dir, device=args.device, trusted=args.trust_pickle
    )
    table = pair_ties(
        model,
        np.asarray(factories.testing.mapped_triples, dtype=np.int64),
        known_answers(factories, args.filter_splits),
        args.dataset,
        args.model,
        settings,
        batch_size=args.batch_size,
    )
    write_table(args.out, table)


def _ties(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_table
    from kgrank.data.tables import read_pair_tables
    from kgrank.studies.protocols import report
    from kgrank.studies.protocols.inputs import read_ties_tables
    from kgrank.studies.protocols.ties import width_table

    widths = width_table(read_pair_tables(args.ranks))
    ties = read_ties_tables(args.pairs)
    write_table(args.out, ties)
    write_table(args.widths, widths)
    limits = str(ties["settings"].iloc[0]).partition("; ")[2]
    _report_table(
        report.ties_report(ties, widths, limits),
        args,
        report.ties_caption(ties, args.profile, limits),
        "tab:protocols-ties",
    )
    print(report.ties_summary(ties))


def add_ties_commands(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser(
        "protocols-ties-pair",
        help="one trained pair's test tasks under the model, quantised and constant scorers: ranks under "
        "each tie tolerance, and trec_eval against tie-neutral IR measures under renamed entities",
    )
    command.add_argument("--dataset", required=True, help="the dataset's name (written into every row)")
    command.add_argument("--model", required=True, help="the model's name (written into every row)")
    add_dataset_dir(command)
    add_model_dir(command)
    add_settings(command, "protocols")
    add_config_options(command, "seed", "ranks.batch_size", "ranks.filter_splits")
    command.add_argument("--profile", required=True, help=PROFILE_HELP)
    add_threads(command)
    command.add_argument("--out", required=True, help="tidy TSV of the pair")
    command.set_defaults(handler=_ties_pair)

    command = commands.add_parser(
        "protocols-ties",
        help="rank widths of every evaluated pair and the tie analysis of the trained ones, as one table",
    )
    _add_ranks(command)
    command.add_argument("--pairs", nargs="+", required=True, help="TSVs of protocols-ties-pair")
    command.add_argument("--profile", required=True, help=PROFILE_HELP)
    command.add_argument("--out", required=True, help="gathered tie analysis TSV")
    command.add_argument("--widths", required=True, help="rank width TSV")
    add_table_paths(command)
    command.set_defaults(handler=_ties)

    _add_figure(
        commands,
        "ties",
        "trec_eval's nDCG@20 under renamings against the tie-neutral value",
        "ties",
        "gathered tie analysis TSV of protocols-ties",
    )
