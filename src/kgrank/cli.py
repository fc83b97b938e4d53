"""`kgrank` command line: one subcommand per workflow step, so every rule is one command.

Bad input (a file, a key, a name) ends with a single line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from kgrank.errors import KgrankInputError


def _prepare_dataset(args: argparse.Namespace) -> None:
    from kgrank.datasets import prepare_dataset

    source = {"source": "archive", "archive": args.archive, "sha256": args.sha256} if args.archive else {}
    stats = prepare_dataset(args.name, source, args.out_dir)
    print(json.dumps(stats))


def _import_hyperparameters(args: argparse.Namespace) -> None:
    from kgrank.hyperparameters import import_published

    for path in args.json_files:
        print(import_published(path, args.out_dir))


def _validate_hyperparameters(args: argparse.Namespace) -> None:
    from kgrank.hyperparameters import load_hyperparameters

    for path in args.files:
        load_hyperparameters(path)
    print(f"{len(args.files)} hyperparameter file(s) valid")


def _train(args: argparse.Namespace) -> None:
    from kgrank.hyperparameters import load_hyperparameters
    from kgrank.training import train

    hyperparameters = load_hyperparameters(args.hyperparameters)
    summary = train(
        args.dataset_dir,
        hyperparameters,
        args.out_dir,
        seed=args.seed,
        max_epochs=args.max_epochs,
        training_loop=args.training_loop,
        num_negs_per_pos=args.num_negs_per_pos,
        sub_batch_size=args.sub_batch_size,
        device=args.device,
        threads=args.threads,
        progress=not args.quiet,
    )
    print(json.dumps(summary))


def _ranks(args: argparse.Namespace) -> None:
    import torch

    from kgrank.io import write_table
    from kgrank.ranks import KnownAnswers, compute_ranks
    from kgrank.training import load_model

    torch.set_num_threads(args.threads)
    model, factories = load_model(args.model_dir, args.dataset_dir, device=args.device)
    known = KnownAnswers(
        factories.mapped(tuple(args.filter_splits)),
        factories.training.num_entities,
        factories.training.num_relations,
    )
    table = compute_ranks(
        model,
        factories.testing.mapped_triples,
        known,
        batch_size=args.batch_size,
        seed=args.seed,
        progress=not args.quiet,
        fast=args.scoring == "fast",
        sampled_candidates=args.sampled_candidates,
    )
    write_table(args.out, table)


def _metrics(args: argparse.Namespace) -> None:
    import pandas as pd

    from kgrank.groups import evaluate_groups
    from kgrank.io import write_table
    from kgrank.metrics import default_metrics, evaluate_rank_table

    ranks = pd.read_parquet(args.ranks)
    metrics = default_metrics(args.hits)
    resolved = json.loads((Path(args.model_dir) / "config.json").read_text(encoding="utf-8"))
    tables = [(evaluate_rank_table(ranks, metrics), args.out)]
    if args.groups_out and not args.dataset_dir:
        raise KgrankInputError(
            "--groups-out needs --dataset-dir: the relation categories come from its train.tsv"
        )
    if args.groups_out:
        tables.append((evaluate_groups(ranks, args.dataset_dir, metrics), args.groups_out))
    for table, out in tables:
        table.insert(0, "model", args.model)
        table.insert(0, "dataset", args.dataset)
        # The training budget travels with every number it shaped.
        table["epochs"] = resolved["epochs"]
        table["published_epochs"] = resolved["published_epochs"]
        table["training_loop"] = resolved.get(
            "training_loop", resolved["hyperparameters"]["pipeline"]["training_loop"]
        )
        table["published_training_loop"] = resolved["hyperparameters"]["pipeline"]["training_loop"]
        write_table(out, table)


def _figure1(args: argparse.Namespace) -> None:
    from kgrank.paper import plot_figure1, read_metrics, read_stats

    plot_figure1(read_metrics(args.metrics), read_stats(args.stats), args.pdf, args.png, caption=args.caption)


def _table4(args: argparse.Namespace) -> None:
    from kgrank.paper import read_stats, write_table4

    write_table4(read_stats(args.stats), args.markdown, args.latex)


def _moments_table(args: argparse.Namespace) -> None:
    import pandas as pd

    from kgrank.io import write_table
    from kgrank.metrics import default_metrics
    from kgrank.montecarlo import candidate_counts, moments_table

    tables = []
    for split in args.splits:
        counts = candidate_counts(args.dataset_dir, split, args.filter_splits)
        table = moments_table(counts, default_metrics(args.hits))
        table.insert(0, "split", split)
        tables.append(table)
    result = pd.concat(tables, ignore_index=True)
    result.insert(0, "dataset", args.dataset)
    write_table(args.out, result)


def _montecarlo(args: argparse.Namespace) -> None:
    from kgrank.io import write_table
    from kgrank.metrics import default_metrics
    from kgrank.montecarlo import candidate_counts, check_dataset

    result = check_dataset(
        candidate_counts(args.dataset_dir, "test", args.filter_splits),
        default_metrics(args.hits),
        replicates=args.replicates,
        seed=args.seed,
        alpha=args.alpha,
        progress=not args.quiet,
    )
    result.insert(0, "dataset", args.dataset)
    write_table(args.out, result)


def _montecarlo_figure(args: argparse.Namespace) -> None:
    import pandas as pd

    from kgrank.montecarlo import plot_check

    table = pd.concat([pd.read_csv(path, sep="\t") for path in args.checks], ignore_index=True)
    plot_check(table, args.pdf, args.png)


def _errata(args: argparse.Namespace) -> None:
    from kgrank.errata import check_formulas, errata
    from kgrank.io import write_table, write_text

    check = check_formulas(replicates=args.replicates, seed=args.seed)
    write_table(args.check, check)
    found = errata(check)
    write_table(args.errata, found)
    write_text(args.markdown, found.to_markdown(index=False, floatfmt=".6g") + "\n")


def _published(args: argparse.Namespace) -> None:
    from pathlib import Path

    import pandas as pd

    from kgrank.io import write_table, write_text
    from kgrank.montecarlo import candidate_counts, counts_by_side
    from kgrank.published import attach_simulation, explain, plot_audit, read_published, readjust

    published = read_published(args.published)
    moments = pd.concat([pd.read_csv(path, sep="\t") for path in args.moments], ignore_index=True)
    counts = {}
    for dataset, split in published[["dataset", "split"]].drop_duplicates().itertuples(index=False):
        dataset_dir = Path(args.data_dir) / dataset
        if not dataset_dir.is_dir():
            continue
        for side, num_candidates in counts_by_side(
            candidate_counts(dataset_dir, split, args.filter_splits)
        ).items():
            counts[dataset, split, side] = num_candidates
    audit = explain(readjust(published, moments), counts)
    checks = pd.concat([pd.read_csv(path, sep="\t") for path in args.checks], ignore_index=True)
    audit = attach_simulation(audit, checks)
    write_table(args.audit, audit)
    compared = audit.dropna(subset=["published"])
    columns = [
        "model",
        "dataset",
        "metric",
        "published",
        "recomputed",
        "difference",
        "verdict",
        "implied_expectation",
        "exact_expectation",
        "implied_std",
        "exact_std",
        "explanation",
        "z_exact_vs_simulation",
        "z_implied_vs_simulation",
    ]
    write_text(args.markdown, compared[columns].to_markdown(index=False, floatfmt=".6g") + "\n")
    plot_audit(audit, args.pdf, args.png)


def _figure1_published(args: argparse.Namespace) -> None:
    import pandas as pd

    from kgrank.paper import read_metrics, read_stats
    from kgrank.published import plot_figure1_comparison

    audit = pd.read_csv(args.audit, sep="\t")
    plot_figure1_comparison(
        audit, read_metrics(args.metrics), read_stats(args.stats), args.pdf, args.png, caption=args.caption
    )


def _compare_published(args: argparse.Namespace) -> None:
    import pandas as pd

    from kgrank.io import write_table, write_text
    from kgrank.paper import read_metrics
    from kgrank.published import compare_with_published, plot_published_comparison

    table = compare_with_published(
        read_metrics(args.metrics), pd.read_csv(args.published_results, sep="\t"), args.profile
    )
    write_table(args.out, table)
    if args.pdf:
        plot_published_comparison(table, args.pdf, args.png, caption=args.caption)
    wide = table.pivot_table(
        index=["dataset", "model", "source", "epochs", "training_loop"],
        columns="metric",
        values=["kgrank", "published"],
        sort=False,
    )
    wide.columns = [f"{metric} {who}" for who, metric in wide.columns]
    write_text(args.markdown, wide.reset_index().to_markdown(index=False, floatfmt=".4g") + "\n")


def _tables_1_to_3(args: argparse.Namespace) -> None:
    import numpy as np

    from kgrank.paper import write_tables_1_to_3

    write_tables_1_to_3(args.out_dir, np.full(args.reference_ranks, args.reference_candidates))


def _add_figure_paths(command: argparse.ArgumentParser) -> None:
    """Every figure is written twice: PDF for papers, PNG for the README and the report."""
    command.add_argument("--pdf", required=True)
    command.add_argument("--png", required=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kgrank", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    command = commands.add_parser("prepare-dataset", help="write a dataset's labelled splits and stats.json")
    command.add_argument("--name", required=True)
    command.add_argument("--archive", help="local archive with train/valid/test.txt (offline use)")
    command.add_argument("--sha256", help="expected sha256 of --archive")
    command.add_argument("--out-dir", required=True)
    command.set_defaults(handler=_prepare_dataset)

    command = commands.add_parser(
        "import-hyperparameters", help="convert published JSON configurations to YAML"
    )
    command.add_argument("json_files", nargs="+")
    command.add_argument("--out-dir", required=True)
    command.set_defaults(handler=_import_hyperparameters)

    command = commands.add_parser("validate-hyperparameters", help="check hyperparameter YAML files")
    command.add_argument("files", nargs="+")
    command.set_defaults(handler=_validate_hyperparameters)

    command = commands.add_parser("train", help="train one model and save its state dict")
    command.add_argument("--dataset-dir", required=True)
    command.add_argument("--hyperparameters", required=True)
    command.add_argument("--out-dir", required=True)
    command.add_argument("--seed", type=int, required=True)
    command.add_argument("--max-epochs", type=int, default=None, help="budget cap on the published epochs")
    command.add_argument(
        "--training-loop", choices=["lcwa", "slcwa"], help="budget: replace the published training loop"
    )
    command.add_argument("--num-negs-per-pos", type=int, help="budget: negatives per positive (sLCWA)")
    command.add_argument(
        "--sub-batch-size", type=int, help="slice each training batch (bounds memory; same gradients)"
    )
    command.add_argument("--device", default="auto", help="auto (GPU if present), cpu, cuda, cuda:1 ...")
    command.add_argument("--threads", type=int, default=1)
    command.add_argument("--quiet", action="store_true")
    command.set_defaults(handler=_train)

    command = commands.add_parser("ranks", help="filtered ranks of every test triple, both sides")
    command.add_argument("--dataset-dir", required=True)
    command.add_argument("--model-dir", required=True)
    command.add_argument("--out", required=True)
    command.add_argument("--seed", type=int, required=True, help="seed of the non-deterministic rank")
    command.add_argument("--batch-size", type=int, default=256)
    command.add_argument("--filter-splits", nargs="*", default=["train", "valid", "test"])
    command.add_argument("--device", default="cpu")
    command.add_argument("--threads", type=int, default=1)
    command.add_argument(
        "--scoring",
        choices=["fast", "pykeen"],
        default="fast",
        help="fast: product-form scores where the model family has one; pykeen: model.predict always",
    )
    command.add_argument(
        "--sampled-candidates",
        type=int,
        metavar="K",
        help="rank against K random non-answer candidates (num_candidates = K + 1) instead of all entities",
    )
    command.add_argument("--quiet", action="store_true")
    command.set_defaults(handler=_ranks)

    command = commands.add_parser("metrics", help="tidy metric table with moments, adjusted and z values")
    command.add_argument("--ranks", required=True)
    command.add_argument("--model-dir", required=True)
    command.add_argument("--dataset", required=True)
    command.add_argument("--model", required=True)
    command.add_argument("--dataset-dir", help="the prepared dataset, for the relation categories")
    command.add_argument("--hits", type=int, nargs="+", default=[1, 3, 5, 10])
    command.add_argument("--out", required=True)
    command.add_argument("--groups-out", help="also write the table per relation and relation category")
    command.set_defaults(handler=_metrics)

    command = commands.add_parser("figure1", help="Figure 1 of the unified-framework paper")
    command.add_argument("--metrics", nargs="+", required=True)
    command.add_argument("--stats", nargs="+", required=True)
    _add_figure_paths(command)
    command.add_argument("--caption", default="")
    command.set_defaults(handler=_figure1)

    command = commands.add_parser("table4", help="dataset statistics (Table 4)")
    command.add_argument("--stats", nargs="+", required=True)
    command.add_argument("--markdown", required=True)
    command.add_argument("--latex", required=True)
    command.set_defaults(handler=_table4)

    command = commands.add_parser("published", help="re-adjust published raw metrics with exact moments")
    command.add_argument("--published", required=True, help="TSV, wide (test_mrr ...) or long")
    command.add_argument("--moments", nargs="+", required=True, help="moments tables of the datasets")
    command.add_argument("--checks", nargs="+", required=True, help="Monte Carlo checks of the datasets")
    command.add_argument("--data-dir", required=True, help="folder of prepared datasets (results/data)")
    command.add_argument("--filter-splits", nargs="*", default=["train", "valid", "test"])
    command.add_argument("--audit", required=True)
    command.add_argument("--markdown", required=True)
    _add_figure_paths(command)
    command.set_defaults(handler=_published)

    command = commands.add_parser("figure1-published", help="Figure 1 from published MRRs next to ours")
    command.add_argument("--audit", required=True)
    command.add_argument("--metrics", nargs="+", required=True)
    command.add_argument("--stats", nargs="+", required=True)
    _add_figure_paths(command)
    command.add_argument("--caption", default="")
    command.set_defaults(handler=_figure1_published)

    command = commands.add_parser("compare-published", help="our test metrics next to the published ones")
    command.add_argument("--metrics", nargs="+", required=True)
    command.add_argument("--published-results", required=True)
    command.add_argument("--profile", required=True, help="which configuration produced our numbers")
    command.add_argument("--out", required=True)
    command.add_argument("--markdown", required=True)
    command.add_argument("--pdf", help="also draw the comparison figure (with --png)")
    command.add_argument("--png")
    command.add_argument("--caption", default="")
    command.set_defaults(handler=_compare_published)

    command = commands.add_parser("tables-1-3", help="Tables 1-3 of the paper, from the metric registry")
    command.add_argument("--out-dir", required=True)
    command.add_argument(
        "--reference-candidates",
        type=int,
        default=14_505,
        help="N at which Table 2 states how each metric's moments are known",
    )
    command.add_argument("--reference-ranks", type=int, default=40_876)
    command.set_defaults(handler=_tables_1_to_3)

    command = commands.add_parser("moments-table", help="E and Var of every metric per split and side")
    command.add_argument("--dataset-dir", required=True)
    command.add_argument("--dataset", required=True)
    command.add_argument("--splits", nargs="+", default=["valid", "test"])
    command.add_argument("--filter-splits", nargs="*", default=["train", "valid", "test"])
    command.add_argument("--hits", type=int, nargs="+", default=[1, 3, 5, 10])
    command.add_argument("--out", required=True)
    command.set_defaults(handler=_moments_table)

    command = commands.add_parser("montecarlo", help="check every analytic moment by simulation")
    command.add_argument("--dataset-dir", required=True)
    command.add_argument("--dataset", required=True)
    command.add_argument("--replicates", type=int, default=10_000)
    command.add_argument("--seed", type=int, required=True)
    command.add_argument("--alpha", type=float, default=0.01, help="family-wise level (Bonferroni)")
    command.add_argument("--filter-splits", nargs="*", default=["train", "valid", "test"])
    command.add_argument("--hits", type=int, nargs="+", default=[1, 3, 5, 10])
    command.add_argument("--out", required=True)
    command.add_argument("--quiet", action="store_true")
    command.set_defaults(handler=_montecarlo)

    command = commands.add_parser("montecarlo-figure", help="figure of the Monte Carlo check")
    command.add_argument("--checks", nargs="+", required=True)
    _add_figure_paths(command)
    command.set_defaults(handler=_montecarlo_figure)

    command = commands.add_parser("errata", help="published closed forms against simulation")
    command.add_argument("--replicates", type=int, default=200_000)
    command.add_argument("--seed", type=int, required=True)
    command.add_argument("--check", required=True, help="TSV of every formula checked")
    command.add_argument("--errata", required=True, help="TSV of the disagreements")
    command.add_argument("--markdown", required=True, help="the disagreements as Markdown")
    command.set_defaults(handler=_errata)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    # PyKEEN logs every factory it builds at INFO; keep the terminal for progress bars.
    logging.getLogger("pykeen").setLevel(logging.WARNING)
    try:
        args.handler(args)
    except KgrankInputError as error:
        print(f"kgrank {args.command}: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
