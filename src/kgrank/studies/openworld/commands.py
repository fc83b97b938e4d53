"""The `kgrank openworld-*` commands: argparse and thin handlers that read the inputs,
call the analysis modules and write what they return. The study's settings arrive as one
``--settings`` object, the keys of studies.openworld each command reads
(kgrank.workflow.settings); their defaults live in
src/kgrank/schemas/studies/openworld.schema.yaml."""

from __future__ import annotations

import argparse

from kgrank.cli.config_options import add_config_options
from kgrank.cli.options import (
    add_caption,
    add_figure_paths,
    add_quiet,
    add_table_paths,
    add_threads,
)
from kgrank.data.tables import table_kind
from kgrank.workflow.settings import add_settings

# The tables, as each command reads them (kgrank.data.tables checks them where they are read):
# the columns each command needs of them.
GRID = table_kind(
    "simulation grid",
    "`kgrank openworld-simulate`",
    ("density", "correlation", "strength", "metric", "label", "variant", "mean", "standard_error"),
    floats=("density", "correlation", "strength", "mean", "standard_error"),
    strings=("metric", "label", "variant"),
    ranges={"density": (0, 1), "standard_error": (0, None)},
)
INVERSIONS = table_kind(
    "inversion table",
    "`kgrank openworld-inconsistency`",
    ("density", "metric", "variant", "strength_weaker", "gap", "queries", "inversion_probability"),
    floats=("density", "strength_weaker", "gap", "inversion_probability"),
    ints=("queries",),
    strings=("metric", "variant"),
    ranges={"density": (0, 1), "queries": (1, None), "inversion_probability": (0, 1)},
)
# what the figure reads of the other two: queries_simulated is NaN where no simulated size
# reached 95 %; queries_normal where the mean difference is not resolved; the normal bounds
# are infinite where it may be zero
NEEDED_NUMBERS = (
    "strength_weaker",
    "gap",
    "queries_simulated",
    "queries_normal",
    "queries_normal_low",
    "queries_normal_high",
)
NEEDED = table_kind(
    "queries-needed table",
    "`kgrank openworld-inconsistency`",
    ("density", "metric", *NEEDED_NUMBERS),
    floats=("density", *NEEDED_NUMBERS),
    strings=("metric",),
    nan=("queries_simulated", "queries_normal"),
    infinite=("queries_normal_low", "queries_normal_high"),
    ranges={"density": (0, 1)},
)
# a slope ratio is NaN where the slope at low strength is undefined
SATURATION = table_kind(
    "saturation table",
    "`kgrank openworld-saturation`",
    ("density", "label", "variant", "responds_at_low", "slope_ratio"),
    floats=("density", "slope_ratio"),
    strings=("label", "variant"),
    bools=("responds_at_low",),
    nan=("slope_ratio",),
)
CHECKPOINTS = table_kind(
    "checkpoint table",
    "`kgrank openworld-family-tree`",
    (
        "graph",
        "density",
        "configuration",
        "model",
        "epoch",
        "evaluation",
        "metric",
        "label",
        "variant",
        "value",
    ),
    ints=("density", "epoch"),
    floats=("value",),
    strings=("graph", "configuration", "model", "evaluation", "metric", "label", "variant"),
    choices={"evaluation": ("sparse", "full")},
    ranges={"epoch": (0, None)},
)


def _world(args: argparse.Namespace):  # noqa: ANN202 - the dataclass is imported lazily
    from kgrank.studies.openworld.simulation import OpenWorld

    simulation = args.settings["simulation"]
    return OpenWorld(num_entities=simulation["entities"], num_answers=simulation["answers"])


def _simulate(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_report_table, write_table
    from kgrank.evaluation.metrics import lookup
    from kgrank.studies.openworld import report
    from kgrank.studies.openworld.simulation import MRR_KEY, simulate_grid, strength_grid, study_metrics

    simulation = args.settings["simulation"]
    densities, correlations = simulation["densities"], simulation["correlations"]
    start, stop, step = (simulation["strength"][key] for key in ("start", "stop", "step"))
    queries, precision_queries = simulation["queries"], simulation["precision_queries"]
    precision_step = simulation["precision_step"]
    world = _world(args)
    grid = simulate_grid(
        world,
        densities,
        strength_grid(start, stop, step),
        correlations,
        queries,
        study_metrics(),
        args.seed,
        progress=not args.quiet,
    )
    write_table(args.out, grid)
    # The grid's 500 queries per point resolve the closed form to a few per cent; the
    # precision check, MRR only on a coarser grid with many more queries (its own seed),
    # shows where it actually breaks.
    precise = simulate_grid(
        world,
        densities,
        strength_grid(start, stop, precision_step),
        correlations,
        precision_queries,
        [lookup(MRR_KEY).metric],
        args.seed + 1,
        progress=not args.quiet,
    )
    write_table(args.precision_out, precise)
    write_report_table(
        report.approximation_table(grid, precise),
        args.markdown,
        args.latex,
        caption=report.approximation_caption(queries, precision_queries, precision_step),
        label="tab:openworld-approximation",
        floatfmt=".4g",
        markdown_caption=True,
    )


def _inconsistency(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_table
    from kgrank.studies.openworld.consistency import inversion_table, pair_strengths, queries_needed
    from kgrank.studies.openworld.simulation import study_metrics

    inconsistency = args.settings["inconsistency"]
    inversions = inversion_table(
        _world(args),
        args.settings["simulation"]["densities"],
        pair_strengths(inconsistency["weaker_strengths"], inconsistency["gaps"]),
        inconsistency["query_counts"],
        study_metrics(),
        replicates=inconsistency["montecarlo_replicates"],
        seed=args.seed,
        progress=not args.quiet,
    )
    write_table(args.out, inversions)
    write_table(args.needed, queries_needed(inversions))


def _saturation(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_report_table, write_table
    from kgrank.data.tables import read_table
    from kgrank.studies.openworld import report
    from kgrank.studies.openworld.consistency import saturation_table

    saturation = args.settings["saturation"]
    low, high = saturation["low"], saturation["high"]
    comparison_queries = saturation["comparison_queries"]
    table = saturation_table(
        read_table(args.grid, GRID),
        read_table(args.inversions, INVERSIONS),
        low=low,
        high=high,
        half_width=saturation["half_width"],
        comparison_queries=comparison_queries,
    )
    write_table(args.out, table)
    write_report_table(
        report.saturation_wide(table),
        args.markdown,
        args.latex,
        markdown_caption=True,
        caption=report.saturation_caption(low, high, comparison_queries),
        label="tab:openworld-saturation",
        floatfmt=".3g",
    )


def _family_tree(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_table
    from kgrank.errors import KgrankInputError
    from kgrank.studies.openworld.familytree import train_and_evaluate
    from kgrank.studies.openworld.simulation import study_metrics
    from kgrank.training.hyperparameters import validate_pipeline

    family_tree = args.settings["family_tree"]
    configurations = family_tree["configurations"]
    if args.configuration not in configurations:
        raise KgrankInputError(
            f"--configuration {args.configuration!r}: no key of family_tree.configurations in --settings "
            f"(it has: {', '.join(configurations) or 'none'}); name one of them"
        )
    pipeline = configurations[args.configuration]
    validate_pipeline(pipeline, "--settings", f"family_tree.configurations.{args.configuration}")
    folders = {}
    for entry in args.graph_folders:
        graph, separator, folder = entry.partition("=")
        if not separator or not graph or not folder:
            raise KgrankInputError(
                f"--graph-folders {entry!r}: write GRAPH=FOLDER, e.g. independent=data/density-65"
            )
        folders[graph] = folder
    table = train_and_evaluate(
        folders,
        pipeline,
        study_metrics(),
        evaluate_every=family_tree["evaluate_every"],
        seed=args.seed,
        threads=args.threads,
        progress=not args.quiet,
        device=args.device,
    )
    table.insert(1, "model", pipeline["model"])
    table.insert(1, "configuration", args.configuration)
    table.insert(1, "density", args.density)
    write_table(args.out, table)


def _inversions(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_report_table, write_table
    from kgrank.data.tables import read_tables_of
    from kgrank.studies.openworld import report
    from kgrank.studies.openworld.consistency import inversion_counts
    from kgrank.studies.openworld.simulation import study_metrics

    counts = inversion_counts(read_tables_of(args.checkpoints, CHECKPOINTS))
    write_table(args.out, counts)
    write_report_table(
        report.inversions_wide(counts, study_metrics()),
        args.markdown,
        args.latex,
        caption=report.inversions_caption(args.caption),
        label="tab:openworld-inversions",
        floatfmt=".0f",
        markdown_caption=True,
    )


# The inputs each figure reads, in the order its plotting function takes them, with their
# table kinds
FIGURE_INPUTS = {
    "simulation": {"grid": GRID},
    "inconsistency": {"inversions": INVERSIONS, "needed": NEEDED},
    "metrics": {"grid": GRID, "saturation": SATURATION},
    "family-tree": {"checkpoints": CHECKPOINTS},
}


def _figure(args: argparse.Namespace) -> None:
    from kgrank.data.tables import read_table, read_tables_of
    from kgrank.errors import KgrankInputError
    from kgrank.studies.openworld import figures

    inputs = FIGURE_INPUTS[args.kind]
    missing = [name for name in inputs if not getattr(args, name)]
    if missing:
        raise KgrankInputError(
            f"openworld-figure --kind {args.kind}: give {' '.join('--' + name for name in missing)}"
        )
    # an option that takes several files (--checkpoints) gives a list
    tables = [
        (read_tables_of if isinstance(paths, list) else read_table)(paths, kind)
        for name, kind in inputs.items()
        for paths in [getattr(args, name)]
    ]
    plot = {
        "simulation": figures.plot_simulation,
        "inconsistency": figures.plot_inconsistency,
        "metrics": figures.plot_metrics,
        "family-tree": figures.plot_family_tree,
    }[args.kind]
    plot(*tables, args.pdf, args.png, args.caption)


def _add_world(command: argparse.ArgumentParser) -> None:
    add_settings(command, "openworld")
    add_config_options(command, "seed")
    add_quiet(command)


def add_commands(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser("openworld-simulate", help="open-world simulation grid and its closed form")
    _add_world(command)
    command.add_argument("--out", required=True, help="TSV of every grid point and metric")
    command.add_argument("--precision-out", required=True, help="TSV of the precision check")
    add_table_paths(command)  # where the closed form holds
    command.set_defaults(handler=_simulate)

    command = commands.add_parser(
        "openworld-inconsistency", help="P(the stronger model reports the lower metric)"
    )
    _add_world(command)
    command.add_argument("--out", required=True, help="TSV of the inversion probabilities")
    command.add_argument("--needed", required=True, help="TSV of the queries needed for 95 %% consistency")
    command.set_defaults(handler=_inconsistency)

    command = commands.add_parser("openworld-saturation", help="which metrics saturate and invert least")
    command.add_argument("--grid", required=True, help="the grid TSV of `kgrank openworld-simulate`")
    command.add_argument("--inversions", required=True, help="the TSV of `kgrank openworld-inconsistency`")
    add_settings(command, "openworld")
    command.add_argument("--out", required=True, help="where to write the saturation table as TSV")
    add_table_paths(command)
    command.set_defaults(handler=_saturation)

    command = commands.add_parser(
        "openworld-family-tree", help="train on the family tree, evaluate sparse/full"
    )
    command.add_argument(
        "--graph-folders",
        nargs="+",
        required=True,
        metavar="GRAPH=FOLDER",
        help="the graph variants of one density (they share training triples and queries)",
    )
    command.add_argument(
        "--density",
        type=int,
        required=True,
        help="percentage of the training triples kept (a folder's density)",
    )
    command.add_argument(
        "--configuration",
        required=True,
        help="the configuration trained, a key of the settings' family_tree.configurations, written "
        "into every row",
    )
    add_settings(command, "openworld")
    add_config_options(command, "seed", "device")
    add_threads(command)
    command.add_argument("--out", required=True, help="where to write the checkpoints' metrics as TSV")
    add_quiet(command)
    command.set_defaults(handler=_family_tree)

    command = commands.add_parser("openworld-inversions", help="checkpoint pairs the sparse test set inverts")
    command.add_argument(
        "--checkpoints", nargs="+", required=True, help="checkpoint TSVs of `kgrank openworld-family-tree`"
    )
    command.add_argument("--out", required=True, help="where to write the inversion counts as TSV")
    add_table_paths(command)
    add_caption(command)
    command.set_defaults(handler=_inversions)

    command = commands.add_parser("openworld-figure", help="one figure of the open-world study")
    command.add_argument(
        "--kind",
        choices=tuple(FIGURE_INPUTS),
        required=True,
        help="which figure; each needs some of the inputs below",
    )
    command.add_argument("--grid", help="simulation, metrics: the grid TSV")
    command.add_argument("--inversions", help="inconsistency, metrics: the inversion TSV")
    command.add_argument("--needed", help="inconsistency: the queries-needed TSV")
    command.add_argument("--saturation", help="metrics: the saturation TSV")
    command.add_argument("--checkpoints", nargs="+", help="family-tree: the checkpoint TSVs")
    add_caption(command)
    add_figure_paths(command)
    command.set_defaults(handler=_figure)
