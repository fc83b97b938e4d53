"""`kgrank evaluate`: every metric of a system from outside, in one command.

A rank table from any framework (``--ranks``), a PyKEEN pipeline folder (``--model``) or
a score matrix with its query index (``--scores`` and ``--queries``) becomes a rank
table of kgrank's format (:mod:`kgrank.systems`), evaluated by
:func:`kgrank.api.evaluate_system`: printed as one row per metric (value with its
interval, the random model's expectation, adjusted index with its interval, z-score) and
written as kgrank.evaluate's tidy table where asked.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kgrank.cli.config_options import add_config_options
from kgrank.cli.options import add_header, json_object, positive_int
from kgrank.errors import KgrankInputError

DEFAULT_METRICS = ("mrr", "mr", "hits@1", "hits@3", "hits@10")
TABLE_SUFFIXES = (".tsv", ".parquet")


def add_commands(commands: Any) -> None:
    """Add `evaluate` to the `kgrank` subcommands."""
    from kgrank.data.rank_table import RANK_COLUMNS
    from kgrank.defaults import IDENTIFIERS, SAMPLED_ESTIMATORS, SYSTEM_SIDES, WEIGHT_SCHEMES

    command = commands.add_parser(
        "evaluate",
        help="evaluate a system from outside: a rank table, a PyKEEN pipeline folder or a score matrix",
        description="Every metric of a model kgrank did not train, with its interval, the random "
        "model's expectation, its adjusted index and its z-score.",
    )
    command.add_argument(
        "--dataset",
        required=True,
        help="a prepared dataset folder (train/valid/test.tsv + stats.json of `kgrank prepare-dataset`), "
        "a folder of raw train/valid/test files (prepared into a temporary folder), or a PyKEEN dataset "
        "name (nations, kinships ...: prepared once into ~/.cache/kgrank/datasets/<name>)",
    )
    system = command.add_mutually_exclusive_group(required=True)
    system.add_argument(
        "--ranks",
        metavar="FILE",
        help="a rank table (.csv, .tsv/.txt, .parquet) with a header: head, relation, tail (labels or ids), "
        "side (head/tail, also h/t, lhs/rhs, head_batch/tail_batch), rank (or optimistic and pessimistic, "
        "or realistic), optional num_candidates; or one row per triple with head_rank and tail_rank",
    )
    system.add_argument(
        "--model",
        metavar="DIR",
        help="a PyKEEN pipeline folder (save_to_directory: trained_model.pkl, training_triples/); its "
        "pickle runs code when loaded, so it is loaded only with --trust-pickle",
    )
    system.add_argument(
        "--scores",
        metavar="FILE",
        help="a score matrix (.npy or .pt; one row per query, one column per entity; higher is better), "
        "with --queries; its columns are the dataset's entity ids in order (labels sorted, as PyKEEN "
        "numbers them; --id-maps writes them) unless --column-labels names them",
    )
    command.add_argument(
        "--order",
        choices=["test"],
        help="with --ranks FILE.npy or .pt: the ranks as an array in the test split's order, shape (test "
        "triples, 2), the head's rank then the tail's (AmpliGraph's evaluate_performance; TorchKGE's "
        "rank_true_heads and rank_true_tails stacked)",
    )
    command.add_argument(
        "--column-labels",
        metavar="FILE",
        help="with --scores: the entity label of each matrix column, one per line, in column order",
    )
    command.add_argument(
        "--id-maps",
        metavar="DIR",
        help="write the dataset's entity and relation ids as DIR/entity_to_id.tsv and relation_to_id.tsv "
        "(id, label): what the ids of a rank table, --ranks-out and a score matrix's columns mean",
    )
    command.add_argument(
        "--trust-pickle",
        action="store_true",
        help="load the --model folder's trained_model.pkl, which runs code from the file: only for a "
        "folder you trust (written by your own training)",
    )
    command.add_argument(
        "--queries",
        metavar="FILE",
        help="with --scores: the query index (.csv or .tsv with head, relation, tail, side; one row per "
        "matrix row, in order)",
    )
    command.add_argument(
        "--metrics",
        nargs="+",
        help="metrics by any name (mrr, mr, amri, z_mrr, hits@10, gmr ...); each is reported with its "
        f"adjusted index and z-score (default: {' '.join(DEFAULT_METRICS)}; with --weights: wgmr iwgmr)",
    )
    command.add_argument(
        "--tie-tolerance",
        default="exact",
        metavar="TOLERANCE",
        help="when a candidate's score ties the true answer's, for a model or a score matrix: exact "
        "(equality, the default), absolute:<a> or relative:<r> (math.isclose's tolerances, e.g. "
        "relative:1e-6); a tie widens the rank between optimistic and pessimistic",
    )
    command.add_argument(
        "--weights",
        choices=WEIGHT_SCHEMES,
        help="weigh each task for the weighted geometric mean rank (WGMR, IWGMR, with exact random "
        "moments): negatives (its candidates but the true one, Tiwari et al. 2021), relation (every "
        "relation the same total weight) or uniform (the GMR)",
    )
    command.add_argument(
        "--by",
        choices=["relation", "relation_category"],
        help="also each metric per relation (its label) or per relation category (1-1, 1-N, N-1, N-N "
        "by the 1.5 tails-per-head rule on the training triples), with each group's number of ranks",
    )
    command.add_argument(
        "--by-out", metavar="FILE.tsv", help="with --by: write the tidy table per group (.tsv or .parquet)"
    )
    command.add_argument(
        "--sampled",
        nargs="+",
        type=positive_int,
        metavar="K",
        help="also what a sampled protocol (K random negatives per task, as OGB ranks) would report for "
        "MRR and Hits@10, and how well each estimator recovers the full value: exact expectation, bias, "
        "standard deviation and RMSE over the draw of negatives (optimistic ranks)",
    )
    command.add_argument(
        "--estimators",
        nargs="+",
        choices=SAMPLED_ESTIMATORS,
        help="with --sampled: naive (the sampled metric itself), rescaled, posterior-rank, corrected "
        "(Krichene & Rendle's, uniform prior; default: all four)",
    )
    command.add_argument(
        "--sampled-out", metavar="FILE.tsv", help="with --sampled: write its table (.tsv or .parquet)"
    )
    command.add_argument(
        "--rank-type", choices=RANK_COLUMNS, default="realistic", help="the rank variant to evaluate"
    )
    command.add_argument(
        "--side",
        choices=SYSTEM_SIDES,
        default="both",
        help="both: head and tail ranks together; head or tail alone; all: the three",
    )
    add_config_options(command, "metrics.confidence", "ranks.filter_splits")
    add_header(command)
    command.add_argument(
        "--allow-partial",
        action="store_true",
        help="accept a rank table or query index that lacks some test triples (evaluates those given)",
    )
    command.add_argument(
        "--identifiers",
        choices=IDENTIFIERS,
        default="auto",
        help="head, relation, tail as dataset labels or PyKEEN ids; auto: ids when every value is a "
        "whole number in range",
    )
    command.add_argument("--name", help="the system's name in the outputs (default: the file or folder name)")
    command.add_argument("--out", metavar="FILE.tsv", help="write the tidy metric table (.tsv or .parquet)")
    command.add_argument("--markdown", metavar="FILE.md", help="write the printed table as Markdown")
    command.add_argument("--latex", metavar="FILE.tex", help="write the printed table as LaTeX")
    command.add_argument(
        "--ranks-out",
        metavar="FILE.parquet",
        help="write the system's ranks as kgrank's rank table (the workflow's results/ranks format)",
    )
    add_config_options(command, "seed", "ranks.batch_size", "device")
    command.add_argument(
        "--threads",
        type=positive_int,
        help="CPU threads torch may use while a model scores (default: torch's own, every core)",
    )
    command.add_argument("--quiet", action="store_true", help="no progress bar while a model ranks")
    command.set_defaults(handler=_evaluate)
    add_external_systems_command(commands)


def add_external_systems_command(commands: Any) -> None:
    """Add `external-systems`: what the workflow did with each system from outside."""
    command = commands.add_parser(
        "external-systems",
        help="the workflow's external systems: their files and the parts each joined or skipped",
    )
    command.add_argument(
        "--systems",
        required=True,
        help="the config's external_systems as JSON (dataset -> name -> {model|ranks|scores|queries: path})",
    )
    command.add_argument("--studies", nargs="*", default=[], help="the enabled studies")
    command.add_argument(
        "--rescored",
        default="{}",
        help="JSON: each part that rescores models or runs where configured (the comparison) -> the "
        "dataset/name of the external systems it runs on",
    )
    command.add_argument("--root", default=".", help="where relative paths start (the repository)")
    command.add_argument("--out", required=True, metavar="FILE.tsv", help="the table (.tsv)")
    command.add_argument("--markdown", required=True, metavar="FILE.md", help="the table as Markdown")
    command.add_argument("--latex", metavar="FILE.tex", help="the table as LaTeX")
    command.set_defaults(handler=_external_systems)


def _external_systems(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_report_table, write_table
    from kgrank.studies import external_parts, study_names
    from kgrank.workflow.external import participation_table

    unknown = [name for name in args.studies if name not in study_names()]
    if unknown:
        raise KgrankInputError(
            f"--studies: no study {unknown[0]!r}; the studies are {', '.join(study_names())}"
        )
    systems = json_object(args.systems, "--systems", "an object dataset -> name -> {kind: path}")
    if not all(isinstance(entries, dict) for entries in systems.values()):
        raise KgrankInputError("--systems: write an object dataset -> name -> {kind: path}")
    rescored = json_object(args.rescored, "--rescored", "an object part -> [dataset/name, ...]")
    if not all(
        isinstance(names, list) and all(isinstance(name, str) for name in names)
        for names in rescored.values()
    ):
        raise KgrankInputError("--rescored: write an object part -> [dataset/name, ...] (names as strings)")
    table = participation_table(systems, external_parts(args.studies), args.root, rescored)
    write_table(args.out, table)
    caption = (
        "Systems kgrank did not train: the parts of this run each joined, and why it skipped the others "
        "(their training is their own; no budget of this run applies to them)."
    )
    write_report_table(
        table,
        args.markdown,
        args.latex,
        caption=caption,
        label="tab:external-systems",
        markdown_caption=True,
    )


def _source(args: argparse.Namespace) -> tuple[Any, str, str]:
    """(what load_system takes, its kind, the system's default name)."""
    if args.scores is not None:
        if args.queries is None:
            raise KgrankInputError(
                "--scores needs --queries: the query index (head, relation, tail, side) of its rows"
            )
        return (args.scores, args.queries), "scores", Path(args.scores).stem
    if args.queries is not None:
        raise KgrankInputError("--queries goes with --scores (the score matrix whose rows it lists)")
    if args.column_labels is not None:
        raise KgrankInputError("--column-labels goes with --scores (the score matrix whose columns it names)")
    if args.order is not None:
        if args.ranks is None:
            raise KgrankInputError("--order test goes with --ranks FILE.npy (the rank array in test order)")
        return args.ranks, "positional", Path(args.ranks).stem
    if args.ranks is not None:
        return args.ranks, "ranks", Path(args.ranks).stem
    return args.model, None, Path(args.model).resolve().name


def _check_outputs(args: argparse.Namespace) -> None:
    if args.out is not None and Path(args.out).suffix not in TABLE_SUFFIXES:
        raise KgrankInputError(f"--out {args.out}: name it .tsv or .parquet (the tidy table's formats)")
    if args.by_out is not None and Path(args.by_out).suffix not in TABLE_SUFFIXES:
        raise KgrankInputError(f"--by-out {args.by_out}: name it .tsv or .parquet")
    if args.by_out is not None and args.by is None:
        raise KgrankInputError(
            "--by-out goes with --by relation (or relation_category); add it or drop --by-out"
        )
    if args.sampled_out is not None and Path(args.sampled_out).suffix not in TABLE_SUFFIXES:
        raise KgrankInputError(f"--sampled-out {args.sampled_out}: name it .tsv or .parquet")
    if args.sampled is None and (args.sampled_out is not None or args.estimators is not None):
        option = "--sampled-out" if args.sampled_out is not None else "--estimators"
        raise KgrankInputError(
            f"{option} goes with --sampled K (the negatives per task); add it or drop {option}"
        )
    if args.ranks_out is not None and Path(args.ranks_out).suffix != ".parquet":
        raise KgrankInputError(f"--ranks-out {args.ranks_out}: name it .parquet (kgrank's rank table format)")
    outputs = {
        "--out": args.out,
        "--markdown": args.markdown,
        "--latex": args.latex,
        "--ranks-out": args.ranks_out,
        "--sampled-out": args.sampled_out,
        "--by-out": args.by_out,
    }
    if args.id_maps is not None and Path(args.id_maps).exists() and not Path(args.id_maps).is_dir():
        raise KgrankInputError(f"--id-maps {args.id_maps}: a file; give a folder for the two id maps")
    if args.by is not None and args.weights is not None:
        raise KgrankInputError("--by and --weights: the groups take no task weights yet; drop one of them")
    for option, path in outputs.items():
        if path is not None and Path(path).is_dir():
            raise KgrankInputError(f"{option} {path}: a folder; give a file name")


def _metric_keys(names: list[str]) -> list[str]:
    """Each named metric's base key with its derived variants' keys, in the order named."""
    from kgrank.evaluation.metrics import Variant, lookup

    keys: list[str] = []
    for name in names:
        metric = lookup(name).metric
        for key in [metric.key, *(metric.variant_key(variant) for variant in Variant if metric.has_derived)]:
            if key not in keys:
                keys.append(key)
    return keys


def _with_interval(value: float, low: float, high: float) -> str:
    import math

    if not math.isfinite(value):
        return ""
    text = f"{value:#.4g}"
    if math.isfinite(low) and math.isfinite(high):
        text += f" [{low:#.4g}, {high:#.4g}]"
    return text


def summary_table(result: Any) -> Any:
    """One row per base metric: label, value [interval], random expectation, adjusted
    index [interval], z-score (a ``side`` column first when there are several sides)."""
    import pandas as pd

    from kgrank.evaluation.metrics import Variant, lookup

    rows = []
    sides = list(dict.fromkeys(result["side"]))
    for side in sides:
        subset = result[result["side"] == side].set_index("metric")
        for key in subset.index:
            named = lookup(key)
            if named.variant is not None:
                continue
            metric, base = named.metric, subset.loc[key]

            def variant(which: Variant, metric=metric, subset=subset) -> Any:
                key = metric.variant_key(which)
                return subset.loc[key] if metric.has_derived and key in subset.index else None

            index, z_score = variant(Variant.INDEX), variant(Variant.Z_SCORE)
            rows.append(
                {
                    **({"side": side} if len(sides) > 1 else {}),
                    "metric": base["label"],
                    "value [CI]": _with_interval(base["value"], base["ci_low"], base["ci_high"]),
                    "random expectation": f"{base['random_expectation']:#.4g}",
                    "adjusted index [CI]": ""
                    if index is None
                    else _with_interval(index["value"], index["ci_low"], index["ci_high"]),
                    "z-score": "" if z_score is None else f"{z_score['value']:#.4g}",
                }
            )
    return pd.DataFrame(rows)


def _dataset_name(folder: Path, spec: str) -> str:
    from kgrank.data.io import read_json

    try:
        return str(read_json(folder / "stats.json").get("dataset") or Path(spec).name)
    except (KgrankInputError, AttributeError):
        return Path(spec).name


def _evaluate(args: argparse.Namespace) -> None:
    from kgrank.api import evaluate_system
    from kgrank.data.io import write_table, write_text
    from kgrank.engine.ties import parse_tolerance
    from kgrank.evaluation.metrics import lookup
    from kgrank.systems import dataset_folder, load_system

    source, kind, default_name = _source(args)
    _check_outputs(args)
    if args.threads is not None:
        from kgrank.engine.threads import use_threads

        # a model's scores, hence its ties, may depend on the number of threads
        use_threads(args.threads)
    tolerance = parse_tolerance(args.tie_tolerance)  # a misspelt tolerance stops before any ranking
    if kind in ("ranks", "positional") and not tolerance.exact:
        raise KgrankInputError(
            f"--tie-tolerance {tolerance.name}: a rank table holds ranks, not scores, so its ties were "
            "settled where it was made; drop --tie-tolerance, or pass --model or --scores"
        )
    named = args.metrics or (["wgmr", "iwgmr"] if args.weights else list(DEFAULT_METRICS))
    keys = _metric_keys(named)  # a misspelt metric stops before any ranking
    mismatched = [key for key in named if lookup(key).metric.weighted != bool(args.weights)]
    if mismatched and args.weights:
        raise KgrankInputError(
            f"--metrics {mismatched[0]}: takes no weights; with --weights name wgmr or iwgmr (or their "
            "variants: awgmri, z_wgmr ...), or drop --weights"
        )
    if mismatched:
        raise KgrankInputError(
            f"--metrics {mismatched[0]}: needs one weight per task; "
            "add --weights negatives, relation or uniform"
        )
    name = args.name or default_name
    from kgrank.data.datasets import HEADER_OPTION

    with dataset_folder(args.dataset, HEADER_OPTION[args.header]) as folder:
        dataset = _dataset_name(folder, args.dataset)
        ranks = load_system(
            source,
            folder,
            kind=kind,
            filter_splits=args.filter_splits,
            seed=args.seed,
            allow_partial=args.allow_partial,
            identifiers=args.identifiers,
            batch_size=args.batch_size,
            device=args.device,
            progress=not args.quiet,
            tolerance=tolerance,
            trusted=args.trust_pickle,
            column_labels=args.column_labels,
        )
        if args.by is not None:
            by_group = _by_group(ranks, folder, keys, args)
        if args.id_maps is not None:
            from kgrank.systems import id_maps

            for map_kind, id_table in id_maps(folder).items():
                write_table(Path(args.id_maps) / f"{map_kind}_to_id.tsv", id_table)
    if args.ranks_out is not None:
        write_table(args.ranks_out, ranks)
    result = evaluate_system(
        ranks,
        rank_type=args.rank_type,
        side=args.side,
        metrics=keys,
        confidence=args.confidence,
        seed=args.seed,
        weights=args.weights,
    )
    summary = summary_table(result)
    triples = ranks["triple_id"].nunique()
    filtered = ", ".join(args.filter_splits) if args.filter_splits else "nothing (unfiltered)"
    qualifiers = f", tasks weighted by {args.weights}" if args.weights else ""
    qualifiers += "" if tolerance.exact else f", ties within {tolerance.name}"
    print(
        f"{name} on {dataset}: {len(ranks)} ranks of {triples} test triples ({args.side} sides), "
        f"{args.rank_type} ranks, filtered by {filtered}{qualifiers}"
    )
    _print_table(
        summary,
        f"[CI]: {args.confidence:.0%} interval of the value over test sets like this one; random "
        "expectation: under uniformly random ranks; adjusted index: 0 random, 1 perfect; z-score: "
        "standard deviations above random",
    )
    if kind == "scores":
        _warn_if_random(ranks, args)
    if not tolerance.exact or (ranks["pessimistic"] > ranks["optimistic"]).any():
        _report_ties(ranks, args.side)
    if args.by is not None:
        _report_groups(by_group, args, name, dataset)
    if args.sampled is not None:
        _report_sampled(args, ranks, name, dataset)
    _write_tidy(args.out, result, name, dataset)
    if args.markdown is not None:
        write_text(args.markdown, summary.to_markdown(index=False, disable_numparse=True) + "\n")
    if args.latex is not None:
        caption = f"{name} on {dataset}, {args.rank_type} ranks ({args.side} sides)"
        write_text(args.latex, summary.to_latex(index=False, caption=caption, label=f"tab:{name}"))


def _print_table(frame: Any, note: str) -> None:
    """The layout of every printed table: a blank line, the table, a blank line, its note."""
    print()
    print(frame.to_markdown(index=False, tablefmt="simple", disable_numparse=True))
    print()
    print(note)


def _write_tidy(path: str | None, table: Any, name: str, dataset: str) -> None:
    """Write a tidy table where asked, the dataset and the system named in its first columns."""
    from kgrank.data.io import write_table

    if path is not None:
        table.insert(0, "system", name)
        table.insert(0, "dataset", dataset)
        write_table(path, table)


def _report_sampled(args: argparse.Namespace, ranks: Any, name: str, dataset: str) -> None:
    """Print (and write where asked) what a sampled protocol would report, per k."""
    from kgrank.api import evaluate_sampled

    largest = int(ranks["num_candidates"].max())
    too_many = [k for k in args.sampled if k >= largest - 1]
    if too_many:
        raise KgrankInputError(
            f"--sampled {too_many[0]}: the largest task has {largest} candidates, so every task would keep "
            f"all its negatives (the full ranking); pass K below {largest - 1}"
        )
    table = evaluate_sampled(ranks, args.sampled, estimators=args.estimators, side=args.side)
    shown = table.assign(
        **{
            "full value": table["full_value"].map("{:#.4g}".format),
            "estimate (sd)": [
                f"{mean:#.4g} ({sd:#.2g})"
                for mean, sd in zip(table["estimate_expectation"], table["standard_deviation"], strict=True)
            ],
            "bias": table["bias"].map("{:+#.3g}".format),
            "RMSE": table["rmse"].map("{:#.3g}".format),
        }
    )
    columns = ["num_samples", "label", "estimator", "full value", "estimate (sd)", "bias", "RMSE"]
    if args.side == "all":
        columns.insert(0, "side")
    shares = table.drop_duplicates(["side", "num_samples"])
    drawing = ", ".join(
        f"k={k}: {share:.0%}" for k, share in zip(shares["num_samples"], shares["sampled_share"], strict=True)
    )
    _print_table(
        shown[columns].rename(columns={"num_samples": "k", "label": "metric"}),
        "k random negatives per task, optimistic ranks: the estimate's exact expectation (standard "
        "deviation) over the draw of negatives, summed over every sampled rank; naive is the sampled "
        f"metric itself, what a sampled protocol reports. Tasks with more than k negatives: {drawing}",
    )
    _write_tidy(args.sampled_out, table, name, dataset)


def _report_ties(ranks: Any, side: str) -> None:
    """Where a candidate ties the true answer: each metric under every tie rule."""
    from kgrank.engine.ties import tie_neutral_table

    table = tie_neutral_table(ranks, side=side)
    shown = (
        table.assign(
            **{
                column: table[column].map("{:#.4g}".format)
                for column in ("optimistic", "realistic", "pessimistic", "tie_neutral")
            }
        )
        .drop(columns="metric")
        .rename(columns={"label": "metric", "tie_neutral": "tie-neutral"})
    )
    columns = ["metric", "optimistic", "realistic", "pessimistic", "tie-neutral"]
    shares = ", ".join(
        f"{row.side} {row.tied_share:.1%}" for row in table.drop_duplicates("side").itertuples()
    )
    _print_table(
        shown[(["side"] if side == "all" else []) + columns],
        f"Ties: tasks whose true answer ties another candidate: {shares}. Tie-neutral: the expected value "
        "over every order of the tied candidates (McSherry & Najork 2008); the realistic rank is their "
        "mean rank, not their mean value",
    )


# Below this z-score of the MRR a score matrix is taken for one whose columns mean other
# entities than the dataset's ids: a trained model sits tens of standard deviations above
# random, a shuffled column order at about zero.
RANDOM_Z_SCORE = 2.0


def _warn_if_random(ranks: Any, args: argparse.Namespace) -> None:
    """Say loudly, on stderr, where a score matrix ranks the answers no better than random."""
    import sys

    from kgrank.api import evaluate_system

    rows = evaluate_system(ranks, metrics=["mrr", "z_mrr"], confidence=None).set_index("metric")
    mrr, z_score = (
        rows.loc["inverse_harmonic_mean_rank"],
        float(rows.loc["z_inverse_harmonic_mean_rank", "value"]),
    )
    if z_score < RANDOM_Z_SCORE:
        columns = "the --column-labels" if args.column_labels is not None else "its columns"
        print(
            f"warning: {args.scores} ranks the test answers no better than random (MRR {mrr['value']:.4g} "
            f"against {mrr['random_expectation']:.4g} at random, z-score {z_score:.2f}): check that "
            f"{columns} follow the dataset's entity ids (--id-maps DIR writes them), or name each column "
            "with --column-labels FILE",
            file=sys.stderr,
        )


def _by_group(ranks: Any, folder: Path, keys: list[str], args: argparse.Namespace) -> Any:
    """The tidy table per group of --by: each named metric's value and adjusted index, on
    the rank type and sides asked for."""
    from kgrank.evaluation.groups import evaluate_groups
    from kgrank.evaluation.metrics import Variant, lookup

    bases = list({lookup(key).metric.key: lookup(key).metric for key in keys}.values())
    shown = [key for base in bases for key in (base.key, base.variant_key(Variant.INDEX)) if key in keys]
    table = evaluate_groups(ranks, folder, bases, aggregations=[args.by])
    sides = ("both", "head", "tail") if args.side == "all" else (args.side,)
    rows = table[
        (table["rank_type"] == args.rank_type) & table["side"].isin(sides) & table["metric"].isin(shown)
    ]
    return rows.reset_index(drop=True)


def _report_groups(table: Any, args: argparse.Namespace, name: str, dataset: str) -> None:
    """Print each group's values of the named metrics (and write the tidy table)."""
    from kgrank.evaluation.metrics import lookup

    index = ["group", "side", "num_ranks"] if args.side == "all" else ["group", "num_ranks"]
    wide = table.pivot_table(index=index, columns="metric", values="value", sort=False).reset_index()
    shown = wide.rename(columns={key: lookup(key).short_name for key in table["metric"].unique()})
    shown = shown.rename(columns={"group": args.by.replace("_", " "), "num_ranks": "ranks"})
    for column in shown.columns[len(index) :]:
        shown[column] = shown[column].map("{:#.4g}".format)
    _print_table(
        shown,
        f"Per {args.by.replace('_', ' ')}: {args.rank_type} ranks; ranks: the group's (test triple, side) "
        "count",
    )
    _write_tidy(args.by_out, table, name, dataset)
