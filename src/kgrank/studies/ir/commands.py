"""The ir study's subcommands (`kgrank ir-*`): argparse, and handlers that read the
inputs, call the analyses and write what they return. Report tables and captions come
from :mod:`kgrank.studies.ir.report`; the study's settings arrive as one --settings
object (kgrank.workflow.settings: the keys of src/kgrank/schemas/studies/ir.schema.yaml
whose x-commands name the command, defaults filled)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

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
from kgrank.errors import KgrankInputError
from kgrank.workflow.settings import add_settings

if TYPE_CHECKING:
    import pandas as pd

    from kgrank.data.tables import TableKind


# The tables the study's commands read, declared from the columns the study's modules name
# (so that a column added there is required here too) and checked by kgrank.data.tables where
# they are read. Functions, not constants: the modules that name the columns load pandas
# and scipy, which the CLI's other commands need not pay for.
def evaluations_kind() -> TableKind:
    """The evaluation sets of `kgrank ir-queries`."""
    from kgrank.data.tables import table_kind
    from kgrank.studies.ir.kgc_sparsity import EVALUATION_COLUMNS

    return table_kind(
        "evaluation sets",
        "`kgrank ir-queries`",
        EVALUATION_COLUMNS,
        strings=("evaluation",),
        ints=("head", "relation", "tail"),
        ranges={"head": (0, None), "relation": (0, None), "tail": (0, None)},
    )


def _no_infinite_value(table: pd.DataFrame, source: str) -> None:
    """No infinite value in any numeric column of an item table (the measured ones are NaN
    where undefined, never infinite)."""
    import numpy as np

    for column in table.columns:
        values = table[column]
        if values.dtype.kind == "f" and np.isinf(values.to_numpy()).any():
            row = int(np.flatnonzero(np.isinf(values.to_numpy()))[0])
            raise KgrankInputError(
                f"{source}: column {column}, row {row + 1}: {values.iloc[row]} is not a finite number; "
                "rerun `kgrank ir-evaluate` (or pass the file it writes)"
            )


def items_kind() -> TableKind:
    """The item table of `kgrank ir-evaluate` (one row per micro answer or macro query)."""
    from kgrank.data.rank_table import SIDES
    from kgrank.data.tables import table_kind
    from kgrank.studies.ir.evaluation import ITEM_ID_COLUMNS
    from kgrank.studies.ir.settings import PROTOCOLS

    return table_kind(
        "item table",
        "`kgrank ir-evaluate`",
        ITEM_ID_COLUMNS,
        strings=("protocol", "evaluation", "averaging", "side"),
        ints=("item", "query", "relation", "num_relevant", "num_candidates", "position", "relevant_above"),
        floats=("weight",),
        choices={"side": SIDES, "protocol": PROTOCOLS},
        ranges={
            "num_relevant": (1, None),
            "num_candidates": (1, None),
            "relevant_above": (0, None),
            "weight": (0, 1),
        },
        check=_no_infinite_value,
    )


def relations_kind() -> TableKind:
    """The relation categories of `kgrank ir-queries --relations`."""
    from kgrank.data.tables import table_kind

    return table_kind(
        "relation categories",
        "`kgrank ir-queries --kgc-dir`",
        ("relation", "category"),
        ints=("relation",),
        strings=("category",),
        choices={"category": ("1-1", "1-N", "N-1", "N-N")},
        ranges={"relation": (0, None)},
    )


def stability_summary_kind() -> TableKind:
    """The stability summary of `kgrank ir-stability`; the taus are NaN where no subset
    defines them."""
    from kgrank.data.tables import table_kind
    from kgrank.studies.ir.stability import STABILITY_SUMMARY_COLUMNS

    return table_kind(
        "stability summary",
        "`kgrank ir-stability`",
        STABILITY_SUMMARY_COLUMNS,
        strings=("dataset", "evaluation", "averaging", "metric", "variant"),
        floats=("fraction", "mean_tau", "tau_p05", "tau_p95"),
        ints=("repetitions", "defined"),
        nan=("mean_tau", "tau_p05", "tau_p95"),
        ranges={"fraction": (0, 1), "mean_tau": (-1, 1), "tau_p05": (-1, 1), "tau_p95": (-1, 1)},
    )


def _write_report(
    args: argparse.Namespace, prefix: str, table: pd.DataFrame, caption: str, label: str, floatfmt: str = "g"
) -> None:
    """A report table at --<prefix>markdown (its caption under it) and --<prefix>latex."""
    from kgrank.data.io import write_report_table

    markdown, latex = getattr(args, f"{prefix}markdown"), getattr(args, f"{prefix}latex")
    write_report_table(
        table, markdown, latex, caption=caption, label=label, floatfmt=floatfmt, markdown_caption=True
    )


def _queries(args: argparse.Namespace) -> None:
    from pathlib import Path

    from kgrank.data.datasets import load_factories
    from kgrank.data.io import write_table
    from kgrank.studies.ir.evaluation import entity_labels, plan_items
    from kgrank.studies.ir.kgc_sparsity import read_kgc_sparsity, split_evaluation
    from kgrank.studies.ir.report import COUNTS_CAPTION, counts_table
    from kgrank.studies.ir.trec import write_qrels

    if args.kgc_dir is not None:
        missing = [
            option
            for option, value in (
                ("--raw-test", args.raw_test),
                ("--counts", args.counts),
                ("--relations", args.relations),
                ("--divergences", args.divergences),
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
        write_table(args.divergences, read.divergences)
        _write_report(args, "", counts_table(read.counts), COUNTS_CAPTION, "tab:ir-counts", ".0f")
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

    from kgrank.data.io import read_json, write_table
    from kgrank.data.tables import read_table
    from kgrank.engine.threads import use_threads
    from kgrank.studies.ir.evaluation import entity_labels, evaluate_model, micro_metrics
    from kgrank.studies.ir.trec import run_file_name, run_files, write_run
    from kgrank.systems import is_pykeen_folder, load_scoring_model
    from kgrank.workflow.config import budget_columns, external_budget_columns

    use_threads(args.threads)
    evaluations = read_table(args.evaluations, evaluations_kind())
    model, factories = load_scoring_model(
        args.model_dir, args.dataset_dir, device=args.device, trusted=args.trust_pickle
    )
    _check_ids(evaluations, factories.training, args.evaluations, args.dataset_dir)
    result = evaluate_model(
        model,
        factories,
        evaluations,
        filter_splits=args.filter_splits,
        hits=args.hits,
        run_depth=args.settings["run_depth"],
        export=args.export,
        batch_size=args.batch_size,
        progress=not args.quiet,
    )
    write_table(args.items, result.items)
    micro = micro_metrics(
        result.micro, args.export, args.hits, args.seed, dataset=args.dataset, model=args.model
    )
    # the training budget travels with every number it shaped (a PyKEEN folder's is its own)
    budget = (
        external_budget_columns("model")
        if is_pykeen_folder(args.model_dir)
        else budget_columns(read_json(Path(args.model_dir) / "config.json"))
    )
    write_table(args.metrics, micro.assign(**budget))
    labels = entity_labels(factories)
    runs_dir = Path(args.runs_dir)
    runs_dir.mkdir(parents=True, exist_ok=True)
    for evaluation, protocol, run in run_files(result.runs, args.export):
        write_run(runs_dir / run_file_name(evaluation, protocol), run, labels, tag=f"kgrank-{args.model}")


def _check_ids(evaluations: pd.DataFrame, training: object, path: str, dataset_dir: str) -> None:
    """Every id of the evaluation sets one of the dataset's: sets of another dataset would
    otherwise end in an index error deep in the scoring."""
    import numpy as np

    for column, count in (
        ("head", training.num_entities),
        ("relation", training.num_relations),
        ("tail", training.num_entities),
    ):
        values = evaluations[column].to_numpy()
        outside = np.flatnonzero(values >= count)
        if outside.size:
            raise KgrankInputError(
                f"{path}: column {column}, row {outside[0] + 1}: {values[outside[0]]} is not an id of "
                f"{dataset_dir} (0 to {count - 1}); rerun `kgrank ir-queries` on this dataset"
            )


def _read_item_tables(paths: list[str], names: list[str], option: str) -> dict[tuple[str, str], pd.DataFrame]:
    """Item tables keyed by (dataset, model): ``names`` are `dataset/model` for --pairs, bare
    model names (dataset '') for --systems, one per path."""
    from kgrank.data.tables import read_table

    kind = items_kind()
    if len(paths) != len(names):
        raise KgrankInputError(f"{len(paths)} item tables but {len(names)} {option}; name one per table")
    tables = {}
    for path, name in zip(paths, names, strict=True):
        dataset, _, model = name.rpartition("/")
        if option == "--pairs" and not dataset:
            raise KgrankInputError(f"--pairs {name}: not dataset/model; write it as fb15k237/transe")
        tables[(dataset, model)] = read_table(path, kind)
    return tables


def _read_systems(paths: list[str], systems: list[str]) -> dict[str, pd.DataFrame]:
    """Item tables by system name, one name per path."""
    return {system: table for (_, system), table in _read_item_tables(paths, systems, "--systems").items()}


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
    from kgrank.data.io import write_table
    from kgrank.studies.ir.aggregate import split_protocols
    from kgrank.studies.ir.montecarlo import check_evaluations
    from kgrank.studies.ir.report import montecarlo_caption, montecarlo_table
    from kgrank.studies.ir.settings import PAPER

    # the macro moments are checked on the paper protocol's query structures (the default
    # protocol; on FB-Test-O the two coincide, and the formula does not depend on the filter)
    by_protocol = split_protocols(_read_item_tables(args.items, args.pairs, "--pairs"))
    if PAPER not in by_protocol:
        raise KgrankInputError(
            f"{args.items[0]}: no rows of protocol {PAPER!r} (it has {', '.join(by_protocol)}); "
            "rerun `kgrank ir-evaluate`, which ranks under every protocol"
        )
    tables = by_protocol[PAPER]
    by_dataset = {dataset: table for (dataset, _), table in tables.items()}
    replicates = args.settings["montecarlo_replicates"]
    alpha = args.settings["montecarlo_alpha"]
    table = check_evaluations(
        by_dataset,
        _dataset_evaluations(args.evaluations, set(by_dataset)),
        args.hits,
        replicates=replicates,
        seed=args.seed,
        alpha=alpha,
        progress=not args.quiet,
    )
    table.insert(0, "protocol", PAPER)
    write_table(args.out, table)
    caption = montecarlo_caption(table, replicates, alpha)
    _write_report(args, "", montecarlo_table(table), caption, "tab:ir-montecarlo", ".4g")
    failed = int((~table["passed"]).sum())
    print(f"macro moments: {len(table) - failed} of {len(table)} Monte Carlo checks pass")


def _systems(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_table
    from kgrank.data.tables import METRICS, read_tables_of
    from kgrank.studies.ir.aggregate import aggregate_items, split_protocols, with_protocol
    from kgrank.studies.ir.figures import plot_systems
    from kgrank.studies.ir.protocols import sample_vs_test
    from kgrank.studies.ir.report import (
        sample_vs_test_caption,
        sample_vs_test_table,
        systems_caption,
        systems_table,
    )
    from kgrank.studies.ir.settings import MAIN_EVALUATIONS

    items = _read_systems(args.items, args.systems)
    micro_metrics = read_tables_of(args.micro_metrics, METRICS)
    budgets = micro_metrics.drop_duplicates("model").set_index("model")
    table = with_protocol(
        {
            protocol: aggregate_items(tables, evaluations=list(MAIN_EVALUATIONS))
            for protocol, tables in split_protocols(items).items()
        }
    )
    gap = sample_vs_test(table)
    write_table(args.gap, gap)
    caption = sample_vs_test_caption(gap)
    _write_report(args, "gap_", sample_vs_test_table(gap), caption, "tab:ir-sample-vs-test", ".4f")
    write_table(args.out, table)
    statement = systems_caption(args.caption)
    _write_report(args, "", systems_table(table, args.systems, budgets), statement, "tab:ir-systems", ".4g")
    # the run's dataset, as the systems' metric tables name it
    dataset = str(micro_metrics["dataset"].iloc[0])
    plot_systems(table, args.pdf, args.png, caption=statement, dataset=dataset)


def _sparsity(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_table
    from kgrank.data.tables import read_table
    from kgrank.studies.ir.aggregate import split_protocols, with_protocol
    from kgrank.studies.ir.agreement import label_sparsity
    from kgrank.studies.ir.figures import plot_tau_by_depth, plot_values_by_depth
    from kgrank.studies.ir.protocols import tau_by_protocol
    from kgrank.studies.ir.report import (
        SPARSITY_VALUES_CAPTION,
        sparsity_caption,
        sparsity_table,
        tau_by_protocol_caption,
        tau_by_protocol_table,
    )

    items = _read_systems(args.items, args.systems)
    relations = read_table(args.relations, relations_kind())
    results = {
        protocol: label_sparsity(tables, relations) for protocol, tables in split_protocols(items).items()
    }
    agreement = with_protocol({protocol: taus for protocol, (taus, _) in results.items()})
    values = with_protocol({protocol: values for protocol, (_, values) in results.items()})
    write_table(args.out, agreement)
    write_table(args.values, values)
    taus = tau_by_protocol(agreement)
    write_table(args.tau, taus)
    caption = tau_by_protocol_caption(len(args.systems))
    _write_report(args, "tau_", tau_by_protocol_table(taus), caption, "tab:ir-tau-by-protocol", ".3g")
    statement = sparsity_caption(len(args.systems))
    _write_report(args, "", sparsity_table(agreement), statement, "tab:ir-sparsity", ".3g")
    plot_tau_by_depth(agreement, args.pdf, args.png, caption=statement)
    plot_values_by_depth(values, args.values_pdf, args.values_png, caption=SPARSITY_VALUES_CAPTION)


def _stability(args: argparse.Namespace) -> None:
    import pandas as pd

    from kgrank.data.io import write_table
    from kgrank.studies.ir.aggregate import split_protocols
    from kgrank.studies.ir.stability import stability, stability_summary

    items = _read_systems(args.items, args.systems)
    settings = args.settings["stability"]
    fractions = settings["fractions"]
    taus = pd.concat(
        [
            stability(
                tables,
                args.evaluations,
                fractions=fractions,
                repetitions=settings["repetitions"],
                seed=args.seed,
                dataset=args.dataset,
                protocol=protocol,
            )
            for protocol, tables in split_protocols(items).items()
        ],
        ignore_index=True,
    )
    write_table(args.out, taus)
    write_table(args.summary, stability_summary(taus))


def _stability_figure(args: argparse.Namespace) -> None:
    from kgrank.data.tables import read_tables_of
    from kgrank.studies.ir.figures import plot_stability
    from kgrank.studies.ir.report import stability_caption

    summary = read_tables_of(args.summaries, stability_summary_kind())
    plot_stability(summary, args.pdf, args.png, caption=stability_caption(summary))


def _discrimination(args: argparse.Namespace) -> None:
    import pandas as pd

    from kgrank.data.io import write_table
    from kgrank.studies.ir.aggregate import split_protocols
    from kgrank.studies.ir.discrimination import discrimination, discrimination_summary
    from kgrank.studies.ir.figures import plot_discrimination
    from kgrank.studies.ir.report import discrimination_caption, discrimination_table

    alpha = args.settings["alpha"]
    tables = _read_item_tables(args.items, args.pairs, "--pairs")
    frames = []
    specs = _dataset_evaluations(args.evaluations, {d for d, _ in tables})
    for protocol, of_protocol in split_protocols(tables).items():
        for dataset, evaluation in specs:
            systems = {model: table for (name, model), table in of_protocol.items() if name == dataset}
            frames.append(
                discrimination(systems, evaluation, alpha=alpha, dataset=dataset, protocol=protocol)
            )
    pairs = pd.concat(frames, ignore_index=True)
    write_table(args.out, pairs)
    summary = discrimination_summary(pairs, alpha)
    write_table(args.summary, summary)
    statement = discrimination_caption(alpha)
    _write_report(args, "", discrimination_table(summary), statement, "tab:ir-discrimination")
    plot_discrimination(pairs, args.pdf, args.png, alpha=alpha, caption=statement)


def _add_systems(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--items", nargs="+", required=True, help="item tables of `kgrank ir-evaluate`, one per system"
    )
    command.add_argument("--systems", nargs="+", required=True, help="the system (model) of each item table")


def _add_pair_items(command: argparse.ArgumentParser) -> None:
    """Item tables of several datasets, each named dataset/model, and the sets to analyse."""
    command.add_argument(
        "--items",
        nargs="+",
        required=True,
        help="item tables of `kgrank ir-evaluate` (results/ir/<dataset>/items/<model>.parquet)",
    )
    command.add_argument(
        "--pairs", nargs="+", required=True, help="the dataset/model of each item table, in the same order"
    )
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
        "--divergences",
        help="where to write the KL divergences of the sets' relation distributions (TSV; with --kgc-dir)",
    )
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
    add_config_options(command, "ranks.filter_splits", "metrics.hits")
    add_settings(command, "ir")
    command.add_argument(
        "--export", nargs="+", default=["test"], help="evaluation sets that get run files and micro metrics"
    )
    add_config_options(command, "ranks.batch_size", "seed")
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
    add_config_options(command, "metrics.hits")
    add_settings(command, "ir")
    add_config_options(command, "seed")
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
    command.add_argument(
        "--gap", required=True, help="where to write FB-Test-S vs FB-Test-O micro MRR per protocol (TSV)"
    )
    add_table_paths(command, prefix="gap-")
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
    command.add_argument(
        "--tau", required=True, help="where to write the S vs S-C tau per metric and protocol (TSV)"
    )
    add_table_paths(command, prefix="tau-")
    command.set_defaults(handler=_sparsity)

    command = commands.add_parser(
        "ir-stability", help="Kendall tau of the system ranking on random test subsets against the whole set"
    )
    _add_systems(command)
    command.add_argument("--dataset", required=True, help="the dataset's name, written into the tables")
    command.add_argument("--evaluations", nargs="+", required=True, help="evaluation sets to subsample")
    add_settings(command, "ir")
    add_config_options(command, "seed")
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
    add_settings(command, "ir")
    command.add_argument("--out", required=True, help="where to write every pair's test (TSV)")
    command.add_argument("--summary", required=True, help="where to write the counts per metric (TSV)")
    add_table_paths(command)
    add_figure_paths(command)
    command.set_defaults(handler=_discrimination)
