"""`kgrank compare`: is one system better than another, on this dataset and on others?

Each ``--dataset`` is followed by its ``--systems`` (``NAME=PATH`` or ``PATH``: a rank
table of any framework or a PyKEEN pipeline folder, as `kgrank evaluate` reads them);
the comparison is :func:`kgrank.evaluation.comparison.compare` on their ranks.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kgrank.cli.config_options import add_config_options
from kgrank.cli.options import add_header
from kgrank.errors import KgrankInputError


def add_commands(commands: Any) -> None:
    """Add `compare` to the `kgrank` subcommands."""
    command = commands.add_parser(
        "compare",
        help="paired tests of systems on one or more datasets, and marks against random",
        description="Paired t and Wilcoxon tests with Holm's correction, bootstrap intervals of the "
        "differences and adjusted differences, Stouffer's combination across datasets, and marks for "
        "systems not distinguishable from (or worse than) random.",
    )
    command.add_argument(
        "--dataset",
        action="append",
        required=True,
        help="a dataset as `kgrank evaluate --dataset` takes it; give it once per dataset, each followed "
        "by its --systems",
    )
    command.add_argument(
        "--systems",
        action="append",
        nargs="+",
        required=True,
        metavar="NAME=PATH",
        help="the systems on the dataset named before: NAME=PATH or PATH (the name is then the file or "
        "folder name); PATH is a rank table (.csv, .tsv, .parquet) or a PyKEEN pipeline folder; a NAME "
        "given again adds a run (seed) of that system",
    )
    add_config_options(
        command,
        "comparison.metrics",
        "comparison.rank_type",
        "comparison.alpha",
        "metrics.confidence",
        "comparison.bootstrap_resamples",
        "seed",
        "ranks.filter_splits",
    )
    command.add_argument(
        "--trust-pickle",
        action="store_true",
        help="load the PyKEEN folders' trained_model.pkl, which runs code from the file: only for folders "
        "you trust (written by your own training)",
    )
    command.add_argument(
        "--tie-tolerance",
        default="exact",
        metavar="TOLERANCE",
        help="when a candidate's score ties the true answer's, for the PyKEEN folders: exact (the default), "
        "absolute:<a> or relative:<r> (as kgrank evaluate takes it); a rank table refuses it",
    )
    add_header(command)
    command.add_argument("--out-dir", help="write pairs.tsv, systems.tsv and summary.tsv (every column) here")
    command.add_argument("--markdown", metavar="FILE.md", help="write the report as Markdown")
    command.add_argument("--latex", metavar="FILE.tex", help="write the report as LaTeX")
    command.add_argument("--quiet", action="store_true", help="no progress bar while a model ranks")
    command.set_defaults(handler=_compare)


def _named(entries: list[str]) -> dict[str, list[str]]:
    """NAME=PATH entries (or PATH alone) by name: a NAME given explicitly more than once
    names the runs (seeds) of one system, in the order given. A name taken from a path
    that repeats (two files called ranks.csv) is refused, as is one file given twice."""
    systems: dict[str, list[str]] = {}
    implicit: set[str] = set()
    for entry in entries:
        name, separator, path = entry.partition("=")
        if not separator:
            name, path = Path(entry).resolve().name if Path(entry).is_dir() else Path(entry).stem, entry
        if not name or not path:
            raise KgrankInputError(f"--systems {entry!r}: write NAME=PATH (or PATH alone)")
        if name in systems and (not separator or name in implicit):
            raise KgrankInputError(
                f"--systems {entry!r}: the name {name!r} is given twice, at least once taken from a path "
                "(its file or folder name); name them apart (NAME=PATH), or repeat NAME=PATH for the "
                "seeds of one system"
            )
        if Path(path).resolve() in {Path(given).resolve() for given in systems.get(name, [])}:
            raise KgrankInputError(
                f"--systems {entry!r}: given twice; the runs of a system are different files"
            )
        if not separator:
            implicit.add(name)
        systems.setdefault(name, []).append(path)
    return systems


def _compare(args: argparse.Namespace) -> None:
    from kgrank.engine.ties import parse_tolerance
    from kgrank.evaluation.metrics import comparable_metrics
    from kgrank.systems import notes_held

    tolerance = parse_tolerance(args.tie_tolerance)  # a misspelt tolerance stops before any ranking
    if len(args.dataset) != len(args.systems):
        raise KgrankInputError(
            f"{len(args.dataset)} --dataset but {len(args.systems)} --systems: follow each --dataset "
            "by the --systems ranked on it"
        )
    comparable_metrics(args.metrics)  # a metric that cannot be compared stops before any ranking
    with notes_held():  # a file refused after another was read prints its refusal alone
        comparison = _comparison(args, tolerance)
    print(comparison.report())
    _write(args, comparison)


def _comparison(args: argparse.Namespace, tolerance: Any) -> Any:
    """Every dataset's systems loaded, and their comparison."""
    from kgrank.data.datasets import HEADER_OPTION
    from kgrank.evaluation.comparison import compare_rank_tables
    from kgrank.systems import dataset_folder, load_system

    tables: dict[str, dict[str, Any]] = {}
    for spec, entries in zip(args.dataset, args.systems, strict=True):
        with dataset_folder(spec, HEADER_OPTION[args.header]) as folder:
            name = Path(spec).name
            if name in tables:
                raise KgrankInputError(
                    f"--dataset {spec}: given twice; list all its systems after one --dataset"
                )
            runs = {
                system: [
                    load_system(
                        path,
                        folder,
                        filter_splits=args.filter_splits,
                        seed=args.seed,
                        progress=not args.quiet,
                        tolerance=tolerance,
                        trusted=args.trust_pickle,
                    )
                    for path in paths
                ]
                for system, paths in _named(entries).items()
            }
            # one run stays a table: a comparison without several runs keeps its columns
            tables[name] = {
                system: loaded[0] if len(loaded) == 1 else loaded for system, loaded in runs.items()
            }
    return compare_rank_tables(
        tables,
        rank_type=args.rank_type,
        metrics=args.metrics,
        alpha=args.alpha,
        confidence=args.confidence,
        bootstrap_resamples=args.bootstrap_resamples,
        seed=args.seed,
    )


def _write(args: argparse.Namespace, comparison: Any) -> None:
    from kgrank.data.io import write_table, write_text

    if args.out_dir is not None:
        for table in ("pairs", "systems", "summary"):
            write_table(Path(args.out_dir) / f"{table}.tsv", getattr(comparison, table))
    if args.markdown is not None:
        write_text(args.markdown, comparison.to_markdown())
    if args.latex is not None:
        write_text(args.latex, comparison.to_latex())
