"""`kgrank` command line: one subcommand per workflow step, so every rule is one command.

The stage commands (prepare-dataset, train, ranks, metrics, ...) live here; each study
adds its own from ``kgrank.studies.<study>.add_commands``.

Bad input (a file, a key, a name) ends with a single line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from kgrank.cli.compare import add_commands as add_compare_commands
from kgrank.cli.config_options import ConfigOption, add_config_options, config_value
from kgrank.cli.evaluate import add_commands as add_evaluate_commands
from kgrank.cli.options import (
    add_dataset_dir,
    add_model_dir,
    add_quiet,
    add_threads,
    positive_int,
)
from kgrank.cli.scorecard import add_commands as add_scorecard_commands
from kgrank.data.io import command_outputs
from kgrank.errors import KgrankInputError

# The one place where the core meets the studies: the registry finds them by name, so
# no core module names a study (see docs/architecture.md).
from kgrank.studies import load_studies
from kgrank.training.allocator import keep_freed_memory


def _prepare_dataset_source(args: argparse.Namespace) -> dict:
    """The dataset entry that --archive or --folder, --sha256 and --header describe."""
    import re

    from kgrank.data.datasets import HEADER_OPTION, SPLITS

    hex_digest = re.compile("^[0-9a-fA-F]{64}$")
    if not (args.archive or args.folder):
        for option, given in (("--sha256", args.sha256), ("--header", args.header)):
            if given is not None:
                raise KgrankInputError(
                    f"{option} needs --archive or --folder (a PyKEEN dataset has no local file)"
                )
        return {}
    if args.archive:
        source = {"source": "archive", "archive": args.archive, "sha256": None}
        if args.sha256 is not None:
            if len(args.sha256) != 1 or not hex_digest.match(args.sha256[0]):
                raise KgrankInputError(
                    f"--sha256 {' '.join(args.sha256)}: an archive takes one sha256 of 64 hex digits"
                )
            source["sha256"] = args.sha256[0]
    else:
        source = {"source": "folder", "path": args.folder}
        if args.sha256 is not None:
            pairs = {}
            for pair in args.sha256:
                split, _, digest = pair.partition("=")
                if split not in SPLITS or not hex_digest.match(digest) or split in pairs:
                    raise KgrankInputError(
                        f"--sha256 {pair}: a folder takes SPLIT=HEX pairs, one per split (train, valid, "
                        "test; 64 hex digits each), e.g. --sha256 train=HEX valid=HEX test=HEX"
                    )
                pairs[split] = digest
            source["sha256"] = pairs
    if args.header is not None:
        source["header"] = HEADER_OPTION[args.header]
    return source


def _prepare_dataset(args: argparse.Namespace) -> None:
    from kgrank.data.datasets import prepare_dataset

    stats = prepare_dataset(args.name, _prepare_dataset_source(args), args.out_dir)
    print(json.dumps(stats))


def _import_hyperparameters(args: argparse.Namespace) -> None:
    from kgrank.training.hyperparameters import import_published

    for path in args.json_files:
        print(import_published(path, args.out_dir))


def _validate_hyperparameters(args: argparse.Namespace) -> None:
    from kgrank.training.hyperparameters import load_hyperparameters

    for path in args.files:
        load_hyperparameters(path)
    print(f"{len(args.files)} hyperparameter file(s) valid")


def _train(args: argparse.Namespace) -> None:
    from kgrank.training.early_stopping import EarlyStopping
    from kgrank.training.hyperparameters import BUDGET_KEYWORDS, check_value, load_hyperparameters
    from kgrank.training.train import train

    # the budget's options pass the value table of the keyword each replaces, before the
    # data are read (--max-epochs 0 would end in an IndexError after training nothing)
    for key, keyword in BUDGET_KEYWORDS.items():
        value = getattr(args, key)
        if value is not None:
            option = "--" + key.replace("_", "-")
            check_value(keyword, value, option, option)
    hyperparameters = load_hyperparameters(args.hyperparameters)
    model_kwargs = {
        key: value
        for key, value in (("embedding_dim", args.embedding_dim), ("relation_dim", args.relation_dim))
        if value is not None
    }
    early_stopping = (
        None
        if args.early_stopping_frequency is None
        else EarlyStopping(
            frequency=args.early_stopping_frequency,
            patience=args.patience,
            relative_delta=args.relative_delta,
        )
    )
    summary = train(
        args.dataset_dir,
        hyperparameters,
        args.out_dir,
        seed=args.seed,
        max_epochs=args.max_epochs,
        training_loop=args.training_loop,
        num_negs_per_pos=args.num_negs_per_pos,
        model_kwargs=model_kwargs,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        loss=args.loss,
        label_smoothing=args.label_smoothing,
        early_stopping=early_stopping,
        scoring=args.scoring,
        sub_batch_size=args.sub_batch_size,
        device=args.device,
        threads=args.threads,
        progress=not args.quiet,
    )
    print(json.dumps(summary))


def _ranks(args: argparse.Namespace) -> None:
    from kgrank.data.io import write_table
    from kgrank.engine.candidates import known_answers
    from kgrank.engine.ranks import compute_ranks
    from kgrank.engine.threads import use_threads
    from kgrank.systems import load_scoring_model

    use_threads(args.threads)
    model, factories = load_scoring_model(
        args.model_dir, args.dataset_dir, device=args.device, trusted=args.trust_pickle
    )
    if not len(factories.testing.mapped_triples):
        # an empty rank table would pass to every later step as if the model ranked nothing
        raise KgrankInputError(
            f"{Path(args.dataset_dir) / 'test.tsv'}: no test triples to rank; rerun `kgrank prepare-dataset`"
        )
    table = compute_ranks(
        model,
        factories.testing.mapped_triples,
        known_answers(factories, args.filter_splits),
        batch_size=args.batch_size,
        seed=args.seed,
        progress=not args.quiet,
        fast=args.scoring == "fast",
        sampled_candidates=args.sampled_candidates,
        tie_rule=None if args.tie_rule == "auto" else args.tie_rule,
    )
    write_table(args.out, table)


def _metrics(args: argparse.Namespace) -> None:
    from kgrank.data.io import read_json, write_table
    from kgrank.data.tables import read_rank_table
    from kgrank.evaluation.groups import evaluate_groups
    from kgrank.evaluation.metrics import default_metrics, evaluate_rank_table
    from kgrank.workflow.config import budget_columns, external_budget_columns

    if args.groups_out and not args.dataset_dir:
        raise KgrankInputError(
            "--groups-out needs --dataset-dir: the relation categories come from its train.tsv"
        )
    ranks = read_rank_table(args.ranks)
    metrics = default_metrics(args.hits)
    budget = (
        external_budget_columns(args.external)
        if args.external
        else budget_columns(read_json(Path(args.model_dir) / "config.json"))
    )
    tables = [(evaluate_rank_table(ranks, metrics, confidence=args.confidence, seed=args.seed), args.out)]
    if args.groups_out:
        tables.append((evaluate_groups(ranks, args.dataset_dir, metrics), args.groups_out))
    for table, out in tables:
        table.insert(0, "model", args.model)
        table.insert(0, "dataset", args.dataset)
        # The training budget travels with every number it shaped.
        write_table(out, table.assign(**budget))


class OneLineParser(argparse.ArgumentParser):
    """argparse's parser whose usage errors are one line, as kgrank's own are: argparse
    prints its whole usage first (21 lines for kgrank evaluate), which buries the error.
    Subcommands' parsers are of the parent's class."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} ({self.prog} --help lists the options)\n")

    def add_subparsers(self, **kwargs: Any) -> Any:
        self.commands = super().add_subparsers(**kwargs)
        return self.commands

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        """argparse's, but an argument the subcommand does not know is refused by the
        subcommand's parser, whose --help lists the options it does know."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            commands = getattr(self, "commands", None)
            parser = commands.choices.get(parsed.command, self) if commands is not None else self
            parser.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="kgrank", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    command = commands.add_parser("prepare-dataset", help="write a dataset's labelled splits and stats.json")
    command.add_argument(
        "--name",
        required=True,
        help="the dataset's name; without --archive or --folder, a PyKEEN dataset (may download)",
    )
    local = command.add_mutually_exclusive_group()
    local.add_argument("--archive", help="local .tar.gz with train.txt, valid.txt, test.txt (offline use)")
    local.add_argument(
        "--folder",
        help="local folder with train, valid, test as <split>.tsv or <split>.txt (labels, tab-separated)",
    )
    command.add_argument(
        "--sha256",
        nargs="+",
        metavar="HEX|SPLIT=HEX",
        help="optional, checked when given: the sha256 of --archive (one HEX), or of --folder's split "
        "files (train=HEX valid=HEX test=HEX, any of them); stats.json records them either way",
    )
    command.add_argument(
        "--header",
        choices=["auto", "yes", "no"],
        help="header line of each split file of --archive or --folder: auto (the default) skips and "
        "reports a first line of header words (head relation tail, h r t, subject predicate object ...) "
        "or one whose fields occur on no other line, yes always skips the first line, no reads every "
        "line as a triple",
    )
    command.add_argument(
        "--out-dir", required=True, help="where to write {train,valid,test}.tsv and stats.json"
    )
    command.set_defaults(handler=_prepare_dataset)

    command = commands.add_parser("import-hyperparameters", help="convert published configurations to YAML")
    command.add_argument(
        "json_files",
        nargs="+",
        help="published configurations: JSON as archived (model, dataset, pipeline, source), or a "
        "PyKEEN experiment file (pykeen/experiments/<model>/*.json or *.yaml)",
    )
    command.add_argument(
        "--out-dir", required=True, help="hyperparameter folder; writes <out-dir>/<dataset>/<model>.yaml"
    )
    command.set_defaults(handler=_import_hyperparameters)

    command = commands.add_parser("validate-hyperparameters", help="check hyperparameter YAML files")
    command.add_argument(
        "files", nargs="+", help="hyperparameter YAML files (config/hyperparameters/*/*.yaml)"
    )
    command.set_defaults(handler=_validate_hyperparameters)

    command = commands.add_parser("train", help="train one model and save its state dict")
    add_dataset_dir(command)
    command.add_argument("--hyperparameters", required=True, help="the pair's hyperparameter YAML file")
    command.add_argument(
        "--out-dir", required=True, help="the model folder: model.pt, config.json, learning curve, losses"
    )
    add_config_options(command, "seed", "training.scoring", "sub_batch_size", "device")
    command.add_argument("--max-epochs", type=int, default=None, help="budget cap on the published epochs")
    command.add_argument(
        "--training-loop", choices=["lcwa", "slcwa"], help="budget: replace the published training loop"
    )
    command.add_argument(
        "--num-negs-per-pos", type=positive_int, help="budget: negatives per positive (sLCWA)"
    )
    command.add_argument("--embedding-dim", type=positive_int, help="budget: replace the embedding dimension")
    command.add_argument("--relation-dim", type=positive_int, help="budget: replace the relation dimension")
    command.add_argument("--batch-size", type=positive_int, help="budget: replace the batch size")
    command.add_argument("--learning-rate", type=float, help="budget: replace the learning rate")
    command.add_argument(
        "--loss", help="budget: replace the loss (a PyKEEN loss name, with its default parameters)"
    )
    command.add_argument("--label-smoothing", type=float, help="budget: replace the label smoothing")
    command.add_argument(
        "--early-stopping-frequency",
        type=positive_int,
        metavar="EPOCHS",
        help="validate every EPOCHS epochs with kgrank's rank engine, stop when the validation MRR "
        "stops improving, keep the best weights",
    )
    command.add_argument("--patience", type=positive_int, default=2, help="evaluations without improvement")
    command.add_argument(
        "--relative-delta", type=float, default=0.002, help="the smallest relative gain that counts"
    )
    add_threads(command)
    add_quiet(command)
    command.set_defaults(handler=_train)

    command = commands.add_parser("ranks", help="filtered ranks of every test triple, both sides")
    add_dataset_dir(command)
    add_model_dir(command)
    command.add_argument("--out", required=True, help="where to write the rank table (parquet)")
    add_config_options(
        command, "seed", "ranks.batch_size", "ranks.filter_splits", "ranks.scoring", "ranks.tie_rule"
    )
    add_threads(command)
    command.add_argument(
        "--sampled-candidates",
        type=int,
        metavar="K",
        help="rank against K random non-answer candidates (num_candidates = K + 1) instead of all entities",
    )
    add_quiet(command)
    command.set_defaults(handler=_ranks)

    command = commands.add_parser("metrics", help="tidy metric table with moments, adjusted and z values")
    command.add_argument("--ranks", required=True, help="the rank table of `kgrank ranks` (parquet)")
    trained = command.add_mutually_exclusive_group(required=True)
    trained.add_argument(
        "--model-dir", help="a trained model's folder (config.json: its budget goes into every row)"
    )
    trained.add_argument(
        "--external",
        choices=["model", "ranks", "scores"],
        help="instead of --model-dir: the ranks are of a system kgrank did not train, of this kind",
    )
    command.add_argument("--dataset", required=True, help="the dataset's name, written into every row")
    command.add_argument("--model", required=True, help="the model's name, written into every row")
    command.add_argument("--dataset-dir", help="the prepared dataset, for the relation categories")
    add_config_options(command, "metrics.hits", "metrics.confidence", "seed")
    command.add_argument("--out", required=True, help="where to write the tidy metric table (TSV)")
    command.add_argument("--groups-out", help="also write the table per relation and relation category")
    command.set_defaults(handler=_metrics)

    add_evaluate_commands(commands)
    add_compare_commands(commands)
    add_scorecard_commands(commands)

    for study in load_studies():
        study.add_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    # PyKEEN logs every factory it builds at INFO; keep the terminal for progress bars.
    logging.getLogger("pykeen").setLevel(logging.WARNING)
    keep_freed_memory()
    try:
        # a command that fails removes what it wrote before failing: no half set of outputs
        with command_outputs():
            args.handler(args)
    except KgrankInputError as error:
        print(f"kgrank {args.command}: error: {error}", file=sys.stderr)
        return 2
    except FileNotFoundError as error:
        # An input that is not there: name it, and where it comes from.
        print(
            f"kgrank {args.command}: error: {error.filename or error}: no such file or directory; "
            "check the path, or run the step that writes it first",
            file=sys.stderr,
        )
        return 2
    return 0


@functools.cache
def _commands() -> dict[str, argparse.ArgumentParser]:
    return dict(build_parser().commands.choices)


_ABSENT = object()


def config_arguments(config: dict[str, Any], command: str, **values: Any) -> str:
    """The options a rule passes `kgrank <command>`: the values in ``config`` (resolved,
    defaults filled) of the config keys the command takes (``add_config_options``), a key
    given in ``values`` by its option's name (``seed=wildcards.run``) taking that value;
    a null value leaves its option out (the command takes the option's default)."""
    from shlex import quote

    arguments = []
    for action in _commands()[command]._actions:
        if isinstance(action, ConfigOption):
            value = values.pop(action.dest, _ABSENT)
            value = config_value(config, action.key) if value is _ABSENT else value
            if value is not None:
                items = value if isinstance(value, list | tuple) else [value]
                arguments.append(" ".join([action.option_strings[0], *(quote(str(item)) for item in items)]))
    if values:
        raise TypeError(f"kgrank {command} takes no config option {', '.join(values)}")
    return " ".join(arguments)


if __name__ == "__main__":
    raise SystemExit(main())
