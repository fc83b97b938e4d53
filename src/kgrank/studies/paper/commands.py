"""The `paper-*` commands: argparse and thin handlers that read the inputs, call the
study's analysis and report functions and write the outputs. The study's settings arrive
as one --settings object (kgrank.workflow.settings: the keys of
src/kgrank/schemas/studies/paper.schema.yaml whose x-commands name the command, defaults
filled)."""

from __future__ import annotations

import argparse
from pathlib import Path

from kgrank.cli.config_options import add_config_options
from kgrank.cli.options import add_caption, add_figure_paths, add_table_paths
from kgrank.data.tables import table_kind
from kgrank.workflow.settings import add_settings

# The tables the stages and the moments study write are the core's kinds (kgrank.data.tables:
# METRICS, MOMENTS, MONTECARLO_CHECK); the study's own are declared here.
# What Figure 1 from the published MRRs reads of the audit (`kgrank paper-published`).
AUDIT_COLUMNS = ("model", "dataset", "split", "side", "base_metric", "base_value", "metric", "recomputed")
AUDIT = table_kind(
    "audit of the published values",
    "`kgrank paper-published`",
    AUDIT_COLUMNS,
    strings=("model", "dataset", "split", "side", "base_metric", "metric"),
    floats=("base_value", "recomputed"),
)
PUBLISHED_RESULTS_COLUMNS = ("model", "dataset", "source")
PUBLISHED_RESULTS = table_kind(
    "published test metrics",
    "the reference folder (shared/reference/published_results.tsv)",
    PUBLISHED_RESULTS_COLUMNS,
    strings=PUBLISHED_RESULTS_COLUMNS,
    fix="pass the published test metrics of the reference folder (shared/reference/published_results.tsv)",
)


def _figure1(args: argparse.Namespace) -> None:
    from kgrank.data.io import read_stats
    from kgrank.data.tables import METRICS, read_tables_of
    from kgrank.studies.paper.figure1 import plot_figure1

    plot_figure1(
        read_tables_of(args.metrics, METRICS),
        read_stats(args.stats),
        args.pdf,
        args.png,
        caption=args.caption,
        order=args.settings["figure1_order"],
    )


def _table4(args: argparse.Namespace) -> None:
    from kgrank.data.io import read_stats, write_report_table
    from kgrank.studies.paper import report

    write_report_table(
        report.table4(read_stats(args.stats)),
        args.markdown,
        args.latex,
        caption=report.TABLE4_CAPTION,
        label=report.TABLE4_LABEL,
    )


def _tables_1_to_3(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_report_table
    from kgrank.studies.paper import report

    reference = args.settings["table2_reference"]
    tables = report.tables_1_to_3(reference["num_candidates"], reference["num_ranks"])
    for name, table in tables.items():
        write_report_table(
            table.table,
            Path(args.out_dir) / f"{name}.md",
            Path(args.out_dir) / f"{name}.tex",
            caption=table.caption,
            label=table.label,
            markdown_caption=table.markdown_caption,
        )


def _published(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_report_table, write_table
    from kgrank.data.tables import MOMENTS, MONTECARLO_CHECK, read_tables_of
    from kgrank.studies.paper.published import (
        AUDIT_CAPTION,
        audit_published,
        audit_summary,
        plot_audit,
        read_published,
    )
    from kgrank.studies.paper.report import AUDIT_FLOATFMT

    audit = audit_published(
        read_published(args.published),
        read_tables_of(args.moments, MOMENTS),
        read_tables_of(args.checks, MONTECARLO_CHECK),
        args.data_dir,
        args.filter_splits,
    )
    write_table(args.audit, audit)
    write_report_table(
        audit_summary(audit),
        args.markdown,
        caption=AUDIT_CAPTION,
        floatfmt=AUDIT_FLOATFMT,
        markdown_caption=True,
    )
    plot_audit(audit, args.pdf, args.png)


def _figure1_published(args: argparse.Namespace) -> None:
    from kgrank.data.io import read_stats
    from kgrank.data.tables import METRICS, read_table, read_tables_of
    from kgrank.studies.paper.published import plot_figure1_comparison

    plot_figure1_comparison(
        read_table(args.audit, AUDIT),
        read_tables_of(args.metrics, METRICS),
        read_stats(args.stats),
        args.pdf,
        args.png,
        caption=args.caption,
        order=args.settings["figure1_order"],
    )


def _compare_published(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_report_table, write_table
    from kgrank.data.tables import METRICS, read_table, read_tables_of
    from kgrank.studies.paper.published import (
        compare_with_published,
        comparison_wide,
        plot_published_comparison,
    )
    from kgrank.studies.paper.report import COMPARISON_FLOATFMT

    table = compare_with_published(
        read_tables_of(args.metrics, METRICS),
        read_table(args.published_results, PUBLISHED_RESULTS),
        args.profile,
    )
    write_table(args.out, table)
    plot_published_comparison(table, args.pdf, args.png, caption=args.caption)
    write_report_table(comparison_wide(table), args.markdown, floatfmt=COMPARISON_FLOATFMT)


def _learning_curves(args: argparse.Namespace) -> None:
    from kgrank.studies.paper.learning_curves import plot_learning_curves, read_curves

    plot_learning_curves(read_curves(args.curves), args.pdf, args.png, caption=args.caption)


def add_commands(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser("paper-figure1", help="Figure 1 of the unified-framework paper")
    command.add_argument("--metrics", nargs="+", required=True, help="metric tables of the pairs")
    command.add_argument("--stats", nargs="+", required=True, help="stats.json of the datasets")
    add_figure_paths(command)
    add_caption(command)
    add_settings(command, "paper")
    command.set_defaults(handler=_figure1)

    command = commands.add_parser(
        "paper-learning-curves", help="validation MRR against training time, every pair"
    )
    command.add_argument(
        "--curves", nargs="+", required=True, help="models/<dataset>/<model>/learning_curve.tsv files"
    )
    add_figure_paths(command)
    add_caption(command)
    command.set_defaults(handler=_learning_curves)

    command = commands.add_parser("paper-table4", help="dataset statistics (Table 4)")
    command.add_argument("--stats", nargs="+", required=True, help="stats.json of the datasets")
    add_table_paths(command)
    command.set_defaults(handler=_table4)

    command = commands.add_parser(
        "paper-tables-1-3", help="Tables 1-3 of the paper, from the metric registry"
    )
    command.add_argument("--out-dir", required=True, help="folder for table{1,2,3}.{md,tex}")
    add_settings(command, "paper")
    command.set_defaults(handler=_tables_1_to_3)

    command = commands.add_parser(
        "paper-published", help="re-adjust published raw metrics with exact moments"
    )
    command.add_argument("--published", required=True, help="TSV, wide (test_mrr ...) or long")
    command.add_argument("--moments", nargs="+", required=True, help="moments tables of the datasets")
    command.add_argument("--checks", nargs="+", required=True, help="Monte Carlo checks of the datasets")
    command.add_argument("--data-dir", required=True, help="folder of prepared datasets (results/data)")
    add_config_options(command, "ranks.filter_splits")
    command.add_argument("--audit", required=True, help="where to write the audit TSV (one row per value)")
    add_table_paths(command, latex=False)
    add_figure_paths(command)
    command.set_defaults(handler=_published)

    command = commands.add_parser("paper-figure1-published", help="Figure 1 from published MRRs next to ours")
    command.add_argument("--audit", required=True, help="the audit TSV of `kgrank paper-published`")
    command.add_argument("--metrics", nargs="+", required=True, help="our metric tables of the pairs")
    command.add_argument("--stats", nargs="+", required=True, help="stats.json of the datasets")
    add_figure_paths(command)
    add_caption(command)
    add_settings(command, "paper")
    command.set_defaults(handler=_figure1_published)

    command = commands.add_parser(
        "paper-compare-published", help="our test metrics next to the published ones"
    )
    command.add_argument("--metrics", nargs="+", required=True, help="our metric tables of the pairs")
    command.add_argument(
        "--published-results", required=True, help="TSV of the published test metrics (reference/)"
    )
    command.add_argument("--profile", required=True, help="which configuration produced our numbers")
    command.add_argument("--out", required=True, help="where to write the comparison as TSV")
    add_table_paths(command, latex=False)
    add_figure_paths(command)
    add_caption(command)
    command.set_defaults(handler=_compare_published)
